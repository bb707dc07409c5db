"""`npformer generate BERT_FOLDER "... [MASK] ..."` prints what transformers' fill-mask pipeline
finds for the same folder (a tiny random BERT and a WordPiece vocabulary trained offline): the same
candidates in the same order, the same token strings and filled sequences, the same probabilities."""
from __future__ import annotations

import pytest

from npformer.cli.fill_mask import fill_mask, load_bert_folder
from npformer.cli.main import main
from tests.npformer.io.tiny_folders import bert_folder

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers", reason="the [hf] extra is not installed")
pytest.importorskip("tokenizers", reason="the [hf] extra is not installed")

TEXTS = ["The capital of France is [MASK].", "[MASK] is the capital of Germany!",
         "The [MASK] brown fox jumps over the [MASK] dog.", "Café RÉSUMÉ [MASK] naïve"]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    return {name: bert_folder(tmp_path_factory.mktemp(name), head=head, lowercase=lower)
            for name, head, lower in [("mlm", "BertForMaskedLM", True),
                                      ("pretraining", "BertForPreTraining", True),
                                      ("cased", "BertForMaskedLM", False),
                                      ("bare", "BertModel", True)]}


def pipeline_fills(folder, text: str, k: int):
    """transformers' answer, as a list per mask (the pipeline returns a flat list for one mask)."""
    tok = transformers.BertTokenizerFast.from_pretrained(str(folder))
    model = transformers.AutoModelForMaskedLM.from_pretrained(str(folder), dtype=torch.float64)
    out = transformers.pipeline("fill-mask", model=model.eval(), tokenizer=tok)(text, top_k=k)
    return out if isinstance(out[0], list) else [out]


@pytest.mark.parametrize("name", ["mlm", "pretraining", "cased"])
@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_fills_equal_the_fill_mask_pipeline(folders, name, backend):
    model, tok = load_bert_folder(str(folders[name]), backend, "float64")
    for text in TEXTS:
        ours, ref = fill_mask(model, tok, text, 6, backend), pipeline_fills(folders[name], text, 6)
        assert len(ours) == len(ref) == text.count("[MASK]")
        for o_row, r_row in zip(ours, ref):
            assert [c["token"] for c in o_row] == [c["token"] for c in r_row], text
            assert [c["token_str"] for c in o_row] == [c["token_str"] for c in r_row], text
            assert [c["sequence"] for c in o_row] == [c["sequence"] for c in r_row], text
            for o, r in zip(o_row, r_row):
                assert o["score"] == pytest.approx(r["score"], rel=1e-12, abs=1e-15)


def test_command_prints_each_candidate_with_its_probability(folders, capsys):
    folder = folders["mlm"]
    assert main(["generate", str(folder), TEXTS[0], TEXTS[2], "--top-k", "3",
                 "--dtype", "float64"]) == 0
    want = []
    for text in (TEXTS[0], TEXTS[2]):
        want.append(text)
        rows = pipeline_fills(folder, text, 3)
        for m, row in enumerate(rows):
            if len(rows) > 1:
                want.append(f"  [MASK] {m + 1} of {len(rows)}:")
            want += [f"  {c['score']:.4f}  {c['token_str']:<12} {c['sequence']}" for c in row]
    assert capsys.readouterr().out == "\n".join(want) + "\n"


@pytest.mark.parametrize("argv, needle", [
    (["no mask here"], "INPUT 'no mask here': has no [MASK]"),
    (["a [MASK]", "--beam", "2", "--temperature", "0.5"], "--beam, --temperature: a BERT model"),
    (["a [MASK] " + "word " * 80], "the model reads 64 at most"),
])
def test_bad_requests_are_one_line(folders, capsys, argv, needle):
    assert main(["generate", str(folders["mlm"]), *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0]


def test_a_folder_without_a_masked_lm_head_is_one_line(folders, capsys):
    assert main(["generate", str(folders["bare"]), "a [MASK]"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "holds a BertModel" in err[0] and "masked-LM head" in err[0]
