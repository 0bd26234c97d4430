"""Reference versions of exercises that the course's own tools and tests need, kept out of ``course_utils``.

A function in ``course_utils`` that *is* an exercise's solution lets a student call it instead of writing it (REVIEW.md
§2, "the exercise skipped"; issue 54). A lesson that needs the result after its exercise defines its own copy in a
cell after the exercise (so a student stuck on it can go on); what an instructor's tool or a unit test needs lives
here, in the instructor-only package.

- :func:`equal_tokens`: lesson 05, Exercise 1 (``tools/course_tools/regime_search.py`` rebuilds the lesson's DAPT
  model with it).
- :func:`control_task`: lesson 06, Exercise 1 (its unit test pins the control task's definition).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from course_utils.adaptation import sample_texts


def equal_tokens(
    a: Sequence[str], b: Sequence[str], count_tokens: Callable[[str], int], seed: int = 0
) -> tuple[list[str], list[str]]:
    """Two corpora cut to the same amount of text *in tokens*, whole sentences only (lesson 05, Exercise 1).

    Each corpus is shuffled with :func:`course_utils.adaptation.sample_texts`; the one with more tokens in all
    (``count_tokens`` per text, e.g. ``lambda t: len(tokenizer.tokenize(t))``) is cut to the shortest prefix that holds
    at least as many tokens as the other, which comes back whole. The totals then differ by less than one sentence.
    """
    shuffled = [sample_texts(texts, len(texts), seed) for texts in (a, b)]
    lengths = [[count_tokens(text) for text in texts] for texts in shuffled]
    if any(n <= 0 for counts in lengths for n in counts):
        raise ValueError("count_tokens gave a text no tokens; remove empty texts first (every text must count >= 1)")
    budget = min(sum(counts) for counts in lengths)
    cut = []
    for texts, counts in zip(shuffled, lengths):
        running = itertools.accumulate(counts)
        keep = next(i + 1 for i, total in enumerate(running) if total >= budget)
        cut.append(texts[:keep])
    return cut[0], cut[1]


def control_task(words: Iterable[str], labels: Sequence[int], seed: int = 0) -> dict[str, int]:
    """Hewitt & Liang's control task (lesson 06, Exercise 1): each word type in ``words`` gets a label drawn at random
    from the empirical distribution of ``labels`` (the real task's training labels), the same label every time the
    type occurs. Pass the words of every split, so held-out words get a label too. Deterministic for a ``seed``."""
    counts = Counter(int(x) for x in labels)
    if not counts:
        raise ValueError("control_task needs the task's labels to copy their distribution.")
    values = np.array(sorted(counts))
    p = np.array([counts[v] for v in values], dtype=float)
    types = sorted(set(words))
    drawn = np.random.default_rng(seed).choice(values, size=len(types), p=p / p.sum())
    return dict(zip(types, drawn.tolist()))
