"""Extractive question answering, SQuAD v1.1 style: the answer is a span of the context, found by a start and an
end token. Everything here works on token ids and numpy arrays, never on a model.

A context longer than the model's window is cut into overlapping windows ("features"): ``[CLS] question [SEP]
context piece [SEP]``, consecutive pieces sharing ``stride`` tokens. Training labels each window with the answer's
start / end token, or with [CLS] (index 0) when the answer is not wholly inside it. At evaluation the best span over
all windows of a question wins, and its text is cut from the context through the tokens' character offsets::

    train, heldout = split_by_article(squad, n_heldout=8, seed=0)          # no article on both sides
    features = encode_for_training(tokenizer, train)                        # input_ids, start/end_positions
    eval_features, windows = encode_for_eval(tokenizer, heldout)
    answers = best_spans(start_logits, end_logits, windows, heldout)        # {question id: answer text}
    load_metric("squad").compute(**squad_inputs(answers, heldout))

Lesson 03d introduces it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

COLUMNS = ("id", "context", "question", "answers")


def _column(examples, name: str) -> list:
    """One column of a ``datasets.Dataset``, a dict of lists, or a list of row dicts."""
    if isinstance(examples, (list, tuple)):
        if examples and name not in examples[0]:
            raise ValueError(
                f"The examples have no {name!r} field; they have {sorted(examples[0])}. SQuAD rows have "
                f"{', '.join(COLUMNS)}."
            )
        return [row[name] for row in examples]
    names = list(getattr(examples, "column_names", None) or examples.keys())
    if name not in names:
        raise ValueError(
            f"The examples have no {name!r} column; they have {names}. SQuAD rows have {', '.join(COLUMNS)}."
        )
    return list(examples[name])


# ------------------------------------------------------------------------------------------------------------ split
def split_by_article(dataset, n_heldout: int | None = None, heldout_fraction: float | None = None, seed: int = 0):
    """(train, heldout) ``datasets.Dataset`` halves with disjoint articles (``title``): questions about one paragraph
    never land on both sides. Give either ``n_heldout`` articles or a ``heldout_fraction`` of the articles (rounded,
    at least one)."""
    titles = _column(dataset, "title")
    unique = list(dict.fromkeys(titles))  # first-appearance order, so the split depends only on the data and seed
    if (n_heldout is None) == (heldout_fraction is None):
        raise ValueError("Give exactly one of n_heldout (a number of articles) or heldout_fraction (0 < f < 1).")
    if heldout_fraction is not None:
        if not 0 < heldout_fraction < 1:
            raise ValueError(f"heldout_fraction must be between 0 and 1 (exclusive); got {heldout_fraction}.")
        n_heldout = max(1, round(heldout_fraction * len(unique)))
    if not isinstance(n_heldout, int) or not 1 <= n_heldout < len(unique):
        raise ValueError(
            f"n_heldout must be an int from 1 to {len(unique) - 1} (there are {len(unique)} articles); "
            f"got {n_heldout!r}."
        )
    order = np.random.default_rng(seed).permutation(len(unique))
    heldout = {unique[i] for i in order[:n_heldout]}
    train_rows = [i for i, t in enumerate(titles) if t not in heldout]
    heldout_rows = [i for i, t in enumerate(titles) if t in heldout]
    return dataset.select(train_rows), dataset.select(heldout_rows)


# --------------------------------------------------------------------------------------------------------- encoding
@dataclass(frozen=True)
class Window:
    """Where one feature came from: the example's index and, per token [T], its (start, end) characters in the
    context, or None for question and special tokens (so no answer is ever taken from them)."""

    example_index: int
    offsets: list[tuple[int, int] | None]


def _windows(tokenizer, examples, max_length: int, stride: int):
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(
            f"{type(tokenizer).__name__} is a slow tokenizer: windows need offset mappings, which only "
            "fast tokenizers give. Load a fast one (AutoTokenizer.from_pretrained(..., use_fast=True))."
        )
    if not isinstance(max_length, int) or not isinstance(stride, int) or not 0 <= stride < max_length // 2:
        raise ValueError(
            f"Need ints with 0 <= stride < max_length / 2 (room for the question and new context); got "
            f"max_length={max_length!r}, stride={stride!r}."
        )
    questions = [q.lstrip() for q in _column(examples, "question")]  # some SQuAD questions start with spaces
    contexts = _column(examples, "context")
    enc = tokenizer(
        questions,
        contexts,
        truncation="only_second",
        max_length=max_length,
        stride=stride,
        return_overflowing_tokens=True,
        return_offsets_mapping=True,
    )
    keys = [k for k in ("input_ids", "token_type_ids") if k in enc]
    for i, example in enumerate(enc["overflow_to_sample_mapping"]):
        sequence = enc.sequence_ids(i)
        offsets = [tuple(o) if s == 1 else None for o, s in zip(enc["offset_mapping"][i], sequence)]
        yield {k: enc[k][i] for k in keys}, Window(int(example), offsets)


def encode_for_training(tokenizer, examples, max_length: int = 384, stride: int = 128) -> list[dict]:
    """Windows labelled with the first gold answer: one dict per window with input_ids [T], token_type_ids [T] (if
    the tokenizer makes them), start_positions and end_positions (token indices; 0 = [CLS] when the answer is not
    wholly inside the window, or the question has no answer). Pads with ``DataCollatorWithPadding``.

    Note for the offline mirror: its answer_start is the first occurrence of the answer text in the context, which
    for about 12% of answers may not be the occurrence the annotator marked; the span still holds the right text.
    """
    answers, contexts = _column(examples, "answers"), _column(examples, "context")
    features = []
    for feature, window in _windows(tokenizer, examples, max_length, stride):
        gold, context = answers[window.example_index], contexts[window.example_index]
        start, end = 0, 0
        if gold["text"]:
            text, start_char = gold["text"][0], int(gold["answer_start"][0])
            found = context[start_char : start_char + len(text)]
            if found != text:
                raise ValueError(
                    f"Example {window.example_index}: answer_start {start_char} does not point at the "
                    f"answer {text!r} in its context (found {found!r})."
                )
            end_char = start_char + len(text)
            # the answer's tokens: the last context token starting at or before its first character, the first one
            # ending at or after its last; [CLS] (0, 0) unless the window's context holds all of it. Written out here,
            # not as a function of offsets: that function is lesson 03d's exercise 1.
            tokens = [t for t, o in enumerate(window.offsets) if o is not None]  # the window's context tokens
            if tokens and window.offsets[tokens[0]][0] <= start_char and window.offsets[tokens[-1]][1] >= end_char:
                start = max(t for t in tokens if window.offsets[t][0] <= start_char)
                end = min(t for t in tokens if window.offsets[t][1] >= end_char)
        features.append({**feature, "start_positions": start, "end_positions": end})
    return features


def encode_for_eval(tokenizer, examples, max_length: int = 384, stride: int = 128) -> tuple[list[dict], list[Window]]:
    """(features, windows), two parallel lists with one entry per window.

    ``features[i]``: input_ids [T_i] and token_type_ids [T_i], ready for ``DataCollatorWithPadding`` and the model.
    ``windows[i]``: the example it came from and the context offsets of its tokens, for ``best_spans``; it stays out
    of the features because the collator and the model do not take it.
    """
    pairs = list(_windows(tokenizer, examples, max_length, stride))
    return [f for f, _ in pairs], [w for _, w in pairs]


# ------------------------------------------------------------------------------------------------------- prediction
def best_spans(
    start_logits, end_logits, windows: Sequence[Window], examples, n_best: int = 20, max_answer_tokens: int = 30
) -> dict[str, str]:
    """The answer text for every example, by question id.

    ``start_logits`` / ``end_logits``: [F, T] (or F rows of different lengths), one row per window in the order of
    ``windows``; rows padded on the right are fine. For each window, the ``n_best`` highest start and end logits
    among context tokens are paired; a pair is a candidate when start <= end and it spans at most
    ``max_answer_tokens`` tokens. The candidate with the highest start + end logit over all windows of the example
    wins; its text is cut from the context by character offsets. An example without any candidate gets "".
    """
    if not len(start_logits) == len(end_logits) == len(windows):
        raise ValueError(
            f"Need one row of start and end logits per window: got {len(start_logits)} start rows, "
            f"{len(end_logits)} end rows, {len(windows)} windows."
        )
    if n_best < 1 or max_answer_tokens < 1:
        raise ValueError(f"n_best and max_answer_tokens must be at least 1; got {n_best} and {max_answer_tokens}.")
    ids, contexts = _column(examples, "id"), _column(examples, "context")
    best: dict[int, tuple[float, int, int]] = {}  # example -> (score, start char, end char)
    for s_row, e_row, window in zip(start_logits, end_logits, windows):
        if not 0 <= window.example_index < len(ids):
            raise ValueError(
                f"A window points at example {window.example_index}, but there are {len(ids)} examples: "
                "pass the examples the windows were encoded from."
            )
        s_row, e_row = np.asarray(s_row, dtype=float), np.asarray(e_row, dtype=float)
        if len(s_row) < len(window.offsets) or len(e_row) < len(window.offsets):
            raise ValueError(
                f"A window has {len(window.offsets)} tokens but only {len(s_row)} start / {len(e_row)} "
                "end logits: give each window's full row."
            )
        context = np.array([t for t, o in enumerate(window.offsets) if o is not None])
        if context.size == 0:
            continue
        starts = context[np.argsort(-s_row[context], kind="stable")[:n_best]]
        ends = context[np.argsort(-e_row[context], kind="stable")[:n_best]]
        for s in starts:
            for e in ends:
                if s <= e < s + max_answer_tokens:
                    score = s_row[s] + e_row[e]
                    if window.example_index not in best or score > best[window.example_index][0]:
                        best[window.example_index] = (score, window.offsets[s][0], window.offsets[e][1])
    out = {}
    for i, question_id in enumerate(ids):
        if i in best:
            _, a, b = best[i]
            out[question_id] = contexts[i][a:b]
        else:
            out[question_id] = ""
    return out


def answer_lengths(examples) -> list[int]:
    """Word counts of every gold answer, e.g. of the training articles, to draw baseline span lengths from."""
    return [len(text.split()) for gold in _column(examples, "answers") for text in gold["text"]]


def random_span_baseline(examples, seed: int = 0, lengths: Sequence[int] | None = None) -> dict[str, str]:
    """A random span of each context, by question id: the score a model must beat to show it read the question.

    The span's length in words is drawn from ``lengths`` (default: uniform 1 to 5 words; for a realistic
    distribution pass ``answer_lengths(train)`` - of other articles, so no gold answer of the scored set leaks in),
    its start uniformly among the context's words. Deterministic for a given seed.
    """
    pool = np.asarray(list(range(1, 6)) if lengths is None else list(lengths))
    if pool.size == 0 or pool.min() < 1:
        raise ValueError("lengths must be a non-empty list of positive word counts, e.g. answer_lengths(train).")
    rng = np.random.default_rng(seed)
    out = {}
    for question_id, context in zip(_column(examples, "id"), _column(examples, "context")):
        words = [m.span() for m in re.finditer(r"\S+", context)]
        if not words:
            out[question_id] = ""
            continue
        n = min(int(rng.choice(pool)), len(words))
        first = int(rng.integers(0, len(words) - n + 1))
        out[question_id] = context[words[first][0] : words[first + n - 1][1]]
    return out


def squad_inputs(answers: dict[str, str], examples) -> dict[str, list[dict]]:
    """``answers`` ({id: text}) and the gold examples in the squad metric's format:
    ``load_metric("squad").compute(**squad_inputs(answers, examples))``."""
    ids, gold = _column(examples, "id"), _column(examples, "answers")
    missing = [i for i in ids if i not in answers]
    if missing:
        raise ValueError(
            f"{len(missing)} of {len(ids)} questions have no predicted answer (first: {missing[0]!r}). "
            "Predict every question; an unanswered one can be given ''."
        )
    return {
        "predictions": [{"id": i, "prediction_text": answers[i]} for i in ids],
        "references": [
            {"id": i, "answers": {"text": list(g["text"]), "answer_start": [int(a) for a in g["answer_start"]]}}
            for i, g in zip(ids, gold)
        ],
    }
