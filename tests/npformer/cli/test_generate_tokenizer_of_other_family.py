"""`npformer generate FOLDER` where the folder's tokenizer files belong to the other model family
(GPT-2 weights beside BERT's vocab.txt, BERT weights beside GPT-2's vocab.json + merges.txt) is one
line naming the model config.json describes and the files it found. The mode used to follow the
tokenizer files alone: a GPT-2 folder with a vocab.txt was taken for a BERT folder ("holds a
CausalLM; filling [MASK] needs a masked-LM head", or "--max-new-tokens: a BERT model fills
[MASK] in one pass")."""
import json

import pytest

from tests.npformer.conftest import run_cli

GPT2 = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"]}
BERT = {"model_type": "bert", "architectures": ["BertForMaskedLM"]}


def folder(tmp_path, config, files):
    path = tmp_path / "model"
    path.mkdir()
    (path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    for name in files:
        (path / name).write_text("[PAD]\n[UNK]\nhello\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("extra", [[], ["--max-new-tokens", "3"]], ids=["plain", "max-new-tokens"])
def test_gpt2_weights_beside_a_bert_vocabulary(tmp_path, capsys, extra):
    path = folder(tmp_path, GPT2, ["vocab.txt"])
    code, out, err = run_cli(["generate", str(path), "hello", *extra], capsys)
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        f"npformer generate: error: CHECKPOINT {path}: config.json describes a GPT-2 model, whose "
        f"tokenizer is vocab.json + merges.txt, but the folder holds vocab.txt (a BERT WordPiece "
        f"vocabulary) instead; put the model's own tokenizer files beside it"], err


def test_bert_weights_beside_gpt2_tokenizer_files(tmp_path, capsys):
    path = folder(tmp_path, BERT, ["vocab.json", "merges.txt"])
    code, out, err = run_cli(["generate", str(path), "hello [MASK]"], capsys)
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        f"npformer generate: error: CHECKPOINT {path}: config.json describes a BERT model, whose "
        f"tokenizer is vocab.txt, but the folder holds GPT-2's vocab.json / merges.txt instead; "
        f"put the model's own tokenizer file beside it"], err
