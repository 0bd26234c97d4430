"""Baselines that train nothing, for scores that mean something only beside one (lesson 03b; reused in 08).

A sentence-pair similarity model must beat the plainest similarity there is: how many words the two sentences share.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> set[str]:
    """The set of lower-cased words (runs of letters and digits) in ``text``; punctuation is not a word."""
    if not isinstance(text, str):
        raise TypeError(f"words() takes a string, not {type(text).__name__}")
    return set(_WORD.findall(text.lower()))


def word_overlap(a: str, b: str) -> float:
    """Jaccard overlap of two sentences' word sets (shared words over all words), in [0, 1]; 0 if neither has any."""
    x, y = words(a), words(b)
    return len(x & y) / max(1, len(x | y))


def word_overlaps(first: Sequence[str], second: Sequence[str]) -> list[float]:
    """``word_overlap`` of each pair ``(first[i], second[i])``: one score per pair, shape ``(len(first),)``."""
    if len(first) != len(second):
        raise ValueError(
            f"word_overlaps needs as many first sentences as second ones, got {len(first)} and {len(second)}"
        )
    return [word_overlap(a, b) for a, b in zip(first, second)]
