"""Tiny Hugging Face folders built offline for the tests: random transformers weights (scaled up so
that the logits are sharp) and tokenizer files trained here with the `tokenizers` library."""
from __future__ import annotations

import random

CORPUS = ("The capital of France is Paris. Paris is the capital of France. Berlin is the capital "
          "of Germany. The quick brown fox jumps over the lazy dog! Rome is in Italy; Madrid is in "
          "Spain. Alan Turing theorized that machines could think; they're learning. ") * 20


def text_file(path, lines: int = 300, seed: int = 0):
    """A generated corpus: short lines of a small vocabulary (what a fine-tune learns quickly)."""
    rng = random.Random(seed)
    words = "the cat sat on a mat and ran to big red house dog saw it".split()
    path.write_text("\n".join(" ".join(rng.choice(words) for _ in range(8)) for _ in range(lines))
                    + "\n", encoding="utf-8")
    return path


def _sharpen(torch, model, factor: float):
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(factor)


def gpt2_folder(path, dropout: float = 0.1, scale: float = 4.0, n_positions: int = 64):
    """config.json, model.safetensors (GPT2LMHeadModel), vocab.json, merges.txt."""
    import tokenizers
    import torch
    import transformers
    path.mkdir(parents=True, exist_ok=True)
    bpe = tokenizers.ByteLevelBPETokenizer()
    bpe.train_from_iterator([CORPUS], vocab_size=300, min_frequency=2,
                            special_tokens=["<|endoftext|>"])
    bpe.save_model(str(path))
    cfg = transformers.GPT2Config(vocab_size=bpe.get_vocab_size(), n_positions=n_positions,
                                  n_embd=32, n_layer=2, n_head=4, bos_token_id=0, eos_token_id=0,
                                  resid_pdrop=dropout, embd_pdrop=dropout, attn_pdrop=dropout)
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(cfg).eval()
    _sharpen(torch, model, scale)
    model.save_pretrained(str(path), safe_serialization=True)
    return path


def bert_folder(path, head: str = "BertForMaskedLM", lowercase: bool = True, dropout: float = 0.1,
                scale: float = 4.0, num_labels: int = 2):
    """config.json, model.safetensors (`head`: BertForMaskedLM, BertForPreTraining, BertModel or
    BertForSequenceClassification), vocab.txt (+ tokenizer_config.json when cased)."""
    import json

    import tokenizers
    import torch
    import transformers
    path.mkdir(parents=True, exist_ok=True)
    wp = tokenizers.BertWordPieceTokenizer(lowercase=lowercase)
    wp.train_from_iterator([CORPUS], vocab_size=160, min_frequency=1,
                           special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    wp.save_model(str(path))                                        # vocab.txt
    if not lowercase:
        (path / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": False}))
    cfg = transformers.BertConfig(vocab_size=wp.get_vocab_size(), hidden_size=32,
                                  num_hidden_layers=2, num_attention_heads=4,
                                  intermediate_size=64, max_position_embeddings=64,
                                  hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout,
                                  num_labels=num_labels)
    torch.manual_seed(1)
    model = getattr(transformers, head)(cfg).eval()
    _sharpen(torch, model, scale)
    model.save_pretrained(str(path), safe_serialization=True)
    return path


def padded_gpt2_folder(path, pad_ids: int = 16, text: str = "the quick brown fox jumps over the lazy "
                                                                "dog. " * 40):
    """A GPT-2 folder whose weights hold `pad_ids` ids past its vocab.json (a vocabulary padded in
    the weights), their tied embedding rows pointed along the model's mean final hidden state, so
    that greedy decoding picks them; returns (path, the tokenizer's vocabulary size)."""
    import tokenizers
    import torch
    import transformers
    path.mkdir(parents=True, exist_ok=True)
    bpe = tokenizers.ByteLevelBPETokenizer()
    bpe.train_from_iterator([text], vocab_size=280, min_frequency=2,
                            special_tokens=["<|endoftext|>"])
    bpe.save_model(str(path))
    vocab = bpe.get_vocab_size()
    cfg = transformers.GPT2Config(vocab_size=vocab + pad_ids, n_positions=32, n_embd=16, n_layer=1,
                                  n_head=2, bos_token_id=0, eos_token_id=0)
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(cfg).eval()
    with torch.no_grad():
        ids = torch.tensor([bpe.encode("the quick brown fox").ids])
        h = model(ids, output_hidden_states=True).hidden_states[-1][0].mean(0)      # (d,)
        model.transformer.wte.weight[vocab:] = 50 * h / h.norm()
    model.save_pretrained(str(path), safe_serialization=True)
    return path, vocab
