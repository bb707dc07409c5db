"""Stop strings: end a row of greedy decoding or sampling once its text holds one (both twins).

    stop = StopStrings(["\\n\\n", "END"], tokenizer.decode)
    out = greedy_decode(model, prompts, stop=stop)         # or sample(..., stop=stop)
    text = cut_at_stop(tokenizer.decode(out.tokens[0][: out.lengths[0]]), stop.stops)

A row ends at the first step after which cutting its text at the earliest stop string can no longer
change: a stop string occurs, and no stop string could still begin earlier and end in tokens not yet
generated (with stops "abcd" and "c", the text "abc" is not final: a "d" next would move the cut to
"abcd"'s start). Text that ends in U+FFFD (a UTF-8 character cut between tokens) counts as unknown
from its first trailing U+FFFD. So the cut text of a stopped run equals the cut text of the run to
max_new_tokens, token for token (greedy, and sampling: each step draws for every row, finished or
not, so the draws do not shift); only the model calls after the last row's stop are saved.

The check decodes each candidate row's generated ids with the tokenizer, a Python call per row and
step (tokenizers are Python); rows end independently. Beam search takes the same `stop=`: a
candidate whose text is final ends as an EOS candidate does (npformer.decoding.beam).
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

__all__ = ["StopStrings", "cut_at_stop", "stop_is_final", "check_stop"]


def cut_at_stop(text: str, stops) -> str:
    """`text` up to (not including) the earliest occurrence of any of `stops`; all of it if none."""
    ends = [i for i in (text.find(s) for s in stops or ()) if i >= 0]
    return text[: min(ends)] if ends else text


def stop_is_final(text: str, stops: Sequence[str]) -> bool:
    """True when `text` holds a stop string and more text after it cannot move the cut."""
    known = text.rstrip("\ufffd")                     # a character cut between tokens: unknown
    found = [i for i in (known.find(s) for s in stops) if i >= 0]
    if not found:
        return False
    cut = min(found)
    for s in stops:                                   # a stop that may begin before the cut
        for i in range(max(0, len(known) - len(s) + 1), cut):
            if s.startswith(known[i:]):
                return False
    return True


def check_stop(stops) -> list[str]:
    """`stops` as a list of non-empty strings, or a TypeError / ValueError naming `stop`."""
    if isinstance(stops, str) or not isinstance(stops, (list, tuple)):
        raise TypeError(f"stop: expected a list of strings, got {type(stops).__name__}")
    if not stops:
        raise ValueError("stop: expected at least one stop string, got an empty list (pass None for none)")
    for i, s in enumerate(stops):
        if isinstance(s, (bytes, bytearray)):
            raise TypeError(f"stop: expected strings, got bytes {bytes(s)!r} at position {i} (decode it "
                            f"to text first: {bytes(s)!r}.decode('utf-8'))")
        if not isinstance(s, str):
            raise TypeError(f"stop: expected strings, got {type(s).__name__} {s!r} at position {i}")
        if not s:
            raise ValueError(f"stop: expected non-empty strings, got '' at position {i} (an empty stop "
                             f"string would end every row before its first token)")
    return list(stops)


class StopStrings:
    """The `stop=` of greedy_decode / sample / beam_search: called after each step with the generated tokens
    (B, N), lengths (B,) and the rows that just generated one (B,) bool; returns the rows whose
    text is now final (see the module docstring)."""

    def __init__(self, stops: Sequence[str], decode: Callable[[list[int]], str]):
        self.stops = check_stop(stops)
        if not callable(decode):
            raise TypeError(f"decode: expected a function of token ids to text, got "
                            f"{type(decode).__name__}")
        self.decode = decode

    def __call__(self, tokens: np.ndarray, lengths: np.ndarray, rows: np.ndarray) -> np.ndarray:
        done = np.zeros(len(lengths), dtype=bool)
        for r in np.flatnonzero(rows):                 # a tokenizer call per candidate row
            done[r] = stop_is_final(self.decode([int(i) for i in tokens[r, : lengths[r]]]),
                                    self.stops)
        return done
