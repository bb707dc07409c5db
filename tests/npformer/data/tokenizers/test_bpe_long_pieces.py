"""This project's BPE cuts a piece longer than MAX_PIECE characters (a line of letters with no space:
a minified file, a base64 blob) into runs of MAX_PIECE, in training and in encoding alike. One huge
piece used to be a single word that every merge rewrote whole: `npformer train --tokenizer bpe` on
a 5 MB line ran for minutes before the first step, and its merges made ever longer tokens."""
from npformer.data.tokenizers.bpe import BPETokenizer
from npformer.data.tokenizers.pretokenize import gpt2_pieces

RUN = 64                                                  # bpe.MAX_PIECE


def test_long_pieces_are_cut_into_runs_and_join_back():
    from npformer.data.tokenizers.bpe import MAX_PIECE, bpe_pieces
    long_word = " " + "ab" * 100                          # GPT-2's piece: 201 characters
    text = "hello" + long_word + " world!"
    runs = [long_word[i:i + MAX_PIECE] for i in range(0, len(long_word), MAX_PIECE)]
    assert list(gpt2_pieces(text)) == ["hello", long_word, " world", "!"]
    assert list(bpe_pieces(text)) == ["hello", *runs, " world", "!"]
    assert [len(r) for r in runs] == [MAX_PIECE, MAX_PIECE, MAX_PIECE, 201 - 3 * MAX_PIECE]


def test_no_token_is_longer_than_a_run_and_text_round_trips():
    text = "ab" * 5000                                    # one piece of 10 000 characters
    tok = BPETokenizer.train(text, 300)
    assert max(len(b) for b in tok.token_bytes) <= RUN
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    assert len(ids) == -(-len(text) // RUN)               # one token per run of "abab..."


def test_short_pieces_encode_as_before():
    from npformer.data.tokenizers.bpe import bpe_pieces
    text = "the cat sat on the mat, the cat ran; " * 20
    tok = BPETokenizer.train(text, 280)
    assert list(bpe_pieces(text)) == list(gpt2_pieces(text))
    assert tok.decode(tok.encode(text)) == text
