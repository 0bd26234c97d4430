"""Concept diagrams, drawn with matplotlib (offline, no image files): what a lesson explains with a picture.

* ``bert_input`` — lesson 02: BERT's input is the sum of token, segment and position embeddings (Devlin et al., 2019).
* ``encoder_decoder`` — lesson 04: the decoder reads the encoder through cross-attention (Vaswani et al., 2017).
* ``bi_vs_cross_encoder`` — lesson 03b: two sentences encoded apart and compared, or read together in one pass
  (Reimers & Gurevych, 2019).
* ``pet_pattern`` — lesson 08: a pattern turns an example into a cloze; a verbalizer maps label words to labels
  (Schick & Schütze, 2021).

Each returns the ``matplotlib.figure.Figure`` it drew (the notebook shows it); nothing is computed from a model.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

# one colour per kind of thing, the same in every diagram
COLOURS = {
    "token": "#cfe2f3",
    "segment": "#d9ead3",
    "position": "#fff2cc",
    "sum": "#ead1dc",
    "block": "#e6e6e6",
    "cross": "#f4cccc",
    "output": "#d0e0e3",
    "mask": "#f9cb9c",
}


def _box(ax, x: float, y: float, w: float, h: float, text: str, colour: str, size: int = 9, **kw) -> None:
    """A rounded box centred at (x, y), ``w`` wide and ``h`` high, with ``text`` in it."""
    ax.add_patch(
        FancyBboxPatch(
            (x - w / 2, y - h / 2),
            w,
            h,
            boxstyle="round,pad=0.02,rounding_size=0.08",
            facecolor=colour,
            edgecolor="#555555",
            linewidth=0.8,
        )
    )
    ax.text(x, y, text, ha="center", va="center", fontsize=size, **kw)


def _arrow(ax, start: tuple[float, float], end: tuple[float, float], colour: str = "#555555", **kw) -> None:
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=10, color=colour, linewidth=1, **kw))


def _canvas(width: float, height: float, xlim: tuple[float, float], ylim: tuple[float, float]):
    fig, ax = plt.subplots(figsize=(width, height))
    ax.set(xlim=xlim, ylim=ylim)
    ax.axis("off")
    return fig, ax


def bert_input(tokens: Sequence[str] = ("[CLS]", "the", "cat", "sat", "[SEP]", "it", "purr", "##ed", "[SEP]")):
    """Lesson 02. The embedding layer's three lookups for one sentence pair, summed position by position: token
    (which word piece), segment (A up to the first [SEP], B after it) and position (0, 1, 2, ...)."""
    tokens = list(tokens)
    if "[SEP]" not in tokens:
        raise ValueError(f"bert_input needs a [SEP] to split the segments; got {tokens}.")
    first_sep = tokens.index("[SEP]")
    n = len(tokens)
    fig, ax = _canvas(max(8.0, 0.95 * n + 1.5), 4.2, (-1.6, n), (-0.6, 5.2))
    row_labels = {
        4.3: "word pieces",
        3.3: "token\nembedding",
        2.3: "segment\nembedding",
        1.3: "position\nembedding",
        0.1: "input to\nlayer 1",
    }
    for y, label in row_labels.items():
        ax.text(-1.5, y, label, ha="left", va="center", fontsize=9)
    for i, token in enumerate(tokens):
        segment = "A" if i <= first_sep else "B"
        ax.text(i, 4.3, token, ha="center", va="center", fontsize=10, family="monospace")
        _box(ax, i, 3.3, 0.8, 0.6, f"E[{token}]", COLOURS["token"], size=7)
        _box(ax, i, 2.3, 0.8, 0.6, f"E_{segment}", COLOURS["segment"], size=8)
        _box(ax, i, 1.3, 0.8, 0.6, f"E_{i}", COLOURS["position"], size=8)
        for y in (2.8, 1.8):
            ax.text(i, y, "+", ha="center", va="center", fontsize=10)
        _arrow(ax, (i, 0.95), (i, 0.45))
        _box(ax, i, 0.1, 0.8, 0.6, "x", COLOURS["sum"], size=9, style="italic")
    ax.text(
        n / 2 - 0.5,
        -0.5,
        "each x: the three vectors added, then LayerNorm and dropout (hidden size H each)",
        ha="center",
        va="center",
        fontsize=9,
    )
    ax.set_title("BERT's input: token + segment + position embeddings", fontsize=11)
    return fig


def encoder_decoder(
    source: Sequence[str] = ("summarize:", "the", "meeting", "moved"), target: Sequence[str] = ("meeting", "moved")
):
    """Lesson 04. The encoder reads the whole source (bidirectional self-attention); each decoder layer attends
    causally to the summary so far, then to the encoder's output through cross-attention (queries from the decoder,
    keys and values from the encoder), and predicts the next token."""
    fig, ax = _canvas(10.5, 5.2, (0, 10.5), (0, 6.4))
    # encoder
    ax.add_patch(
        FancyBboxPatch(
            (0.3, 1.6), 3.7, 3.0, boxstyle="round,pad=0.05", facecolor="none", edgecolor="#888888", linestyle="--"
        )
    )
    ax.text(2.15, 4.85, "encoder  (x N layers)", ha="center", fontsize=10)
    _box(ax, 2.15, 2.3, 3.2, 0.8, "self-attention:\nevery token sees every token", COLOURS["block"], size=8)
    _box(ax, 2.15, 3.6, 3.2, 0.7, "feed-forward", COLOURS["block"], size=8)
    _arrow(ax, (2.15, 2.7), (2.15, 3.25))
    for i, word in enumerate(source):
        x = 0.8 + i * 2.7 / max(1, len(source) - 1)
        ax.text(x, 0.9, word, ha="center", fontsize=9, family="monospace")
        _arrow(ax, (x, 1.15), (x, 1.9))
    ax.text(2.15, 0.35, "source (all of it at once)", ha="center", fontsize=9)
    # decoder
    ax.add_patch(
        FancyBboxPatch(
            (6.3, 1.6), 3.9, 4.0, boxstyle="round,pad=0.05", facecolor="none", edgecolor="#888888", linestyle="--"
        )
    )
    ax.text(8.25, 5.85, "decoder  (x N layers)", ha="center", fontsize=10)
    _box(ax, 8.25, 2.3, 3.4, 0.8, "causal self-attention:\nearlier tokens only", COLOURS["block"], size=8)
    _box(
        ax,
        8.25,
        3.5,
        3.4,
        0.8,
        "cross-attention: queries here,\nkeys and values from the encoder",
        COLOURS["cross"],
        size=8,
    )
    _box(ax, 8.25, 4.7, 3.4, 0.7, "feed-forward -> next-token logits", COLOURS["block"], size=8)
    _arrow(ax, (8.25, 2.7), (8.25, 3.1))
    _arrow(ax, (8.25, 3.9), (8.25, 4.35))
    _arrow(ax, (3.75, 3.6), (6.55, 3.5), colour="#cc0000")
    ax.text(
        5.15, 3.0, "encoder output:\nevery decoder\nlayer reads it", ha="center", va="top", fontsize=8, color="#cc0000"
    )
    shifted = ["<start>", *target[:-1]]
    for i, word in enumerate(shifted):
        x = 7.0 + i * 2.5 / max(1, len(shifted) - 1)
        ax.text(x, 0.9, word, ha="center", fontsize=9, family="monospace")
        _arrow(ax, (x, 1.15), (x, 1.9))
    ax.text(8.25, 0.35, "summary so far (shifted right); predicts: " + " ".join(target), ha="center", fontsize=9)
    ax.set_title("An encoder-decoder (T5, BART): the decoder reads the source through cross-attention", fontsize=11)
    return fig


def bi_vs_cross_encoder(
    first: str = "A man plays a guitar.", second: str = "Someone is playing music.", pooling: str = "cls"
):
    """Lesson 03b. A bi-encoder encodes each sentence alone (one shared encoder), pools each to a vector and compares
    the vectors (cosine): n sentences cost n passes and the vectors can be stored. A cross-encoder reads the pair
    as one input, so attention runs across both sentences; every pair costs its own pass. ``pooling``: how the
    cross-encoder's head reads the encoder ("cls" or "mean", as the lesson's profile does)."""
    if pooling not in ("cls", "mean"):
        raise ValueError(f"pooling must be 'cls' or 'mean'; got {pooling!r}.")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax in axes:
        ax.set(xlim=(0, 10), ylim=(0, 7))
        ax.axis("off")
    left, right = axes
    for x, text, vec in ((2.6, first, "u"), (7.4, second, "v")):
        left.text(x, 0.45, textwrap.fill(f'"{text}"', 30), ha="center", fontsize=8)
        _arrow(left, (x, 0.95), (x, 1.55))
        _box(left, x, 2.2, 3.6, 1.2, "encoder\n(the same weights)", COLOURS["block"], size=9)
        _arrow(left, (x, 2.85), (x, 3.45))
        _box(left, x, 3.85, 2.4, 0.7, "mean pooling", COLOURS["sum"], size=9)
        _arrow(left, (x, 4.25), (x, 4.85))
        _box(left, x, 5.15, 1.0, 0.55, vec, COLOURS["output"], size=10, style="italic")
    _arrow(left, (3.15, 5.5), (4.5, 6.2))
    _arrow(left, (6.85, 5.5), (5.5, 6.2))
    left.text(5.0, 6.45, "similarity = cos(u, v)", ha="center", fontsize=10)
    left.set_title("bi-encoder: one pass per sentence, vectors reusable", fontsize=10)
    right.text(5.0, 0.6, f"[CLS] {first} [SEP] {second} [SEP]", ha="center", fontsize=8)
    _arrow(right, (5.0, 0.95), (5.0, 1.55))
    _box(
        right,
        5.0,
        2.7,
        8.0,
        2.2,
        "encoder: attention across both sentences\n(each word of one sees every word of the other)",
        COLOURS["cross"],
        size=9,
    )
    _arrow(right, (5.0, 3.85), (5.0, 4.45))
    head = "[CLS] vector -> head" if pooling == "cls" else "mean of the vectors -> head"
    _box(right, 5.0, 4.85, 3.6, 0.7, head, COLOURS["sum"], size=9)
    _arrow(right, (5.0, 5.25), (5.0, 5.85))
    right.text(5.0, 6.2, "similarity score (one number)", ha="center", fontsize=10)
    right.set_title("cross-encoder: one pass per pair, attention across it", fontsize=10)
    fig.suptitle("Comparing two sentences: encode apart, or read together", fontsize=11)
    fig.tight_layout()
    return fig


def pet_pattern(
    text: str = "a gorgeous, witty movie.",
    pattern: str = "{text} It was [MASK].",
    verbalizer: Mapping[str, str] | None = None,
    scores: Mapping[str, float] | None = None,
):
    """Lesson 08. The pattern wraps the example around one [MASK]; the masked LM scores every vocabulary word there;
    the verbalizer keeps one word per label, and the label whose word scores higher wins. ``scores``: the label
    words' logits to print (illustrative when not given)."""
    verbalizer = dict(verbalizer or {"positive": "great", "negative": "terrible"})
    if "{text}" not in pattern or pattern.count("[MASK]") != 1:
        raise ValueError(f"A pattern needs '{{text}}' and exactly one [MASK]; got {pattern!r}.")
    scores = dict(scores or {})
    fig, ax = _canvas(10, 4.4, (0, 10), (0, 6))
    ax.text(5.0, 5.6, f'example: "{text}"  (label unknown to the model)', ha="center", fontsize=9)
    _arrow(ax, (5.0, 5.35), (5.0, 4.95))
    before, after = pattern.replace("{text}", text).split("[MASK]")
    ax.text(5.0, 4.6, f"pattern:  {pattern}", ha="center", fontsize=9, family="monospace", color="#555555")
    ax.text(5.0, 4.05, before, ha="right", va="center", fontsize=10, family="monospace")
    _box(ax, 5.55, 4.05, 1.1, 0.5, "[MASK]", COLOURS["mask"], size=10, family="monospace")
    ax.text(6.15, 4.05, after, ha="left", va="center", fontsize=10, family="monospace")
    _arrow(ax, (5.55, 3.75), (5.55, 3.25))
    _box(ax, 5.55, 2.85, 5.0, 0.7, "masked LM: a score for every vocabulary word at [MASK]", COLOURS["block"], size=9)
    for i, (label, word) in enumerate(verbalizer.items()):
        x = 3.3 + 4.5 * i
        _arrow(ax, (5.55, 2.45), (x, 1.75))
        score = f"  logit {scores[label]:.2f}" if label in scores else ""
        _box(ax, x, 1.4, 2.6, 0.6, f'"{word}"{score}', COLOURS["output"], size=9)
        ax.text(x, 0.7, f"verbalizer: {word} -> {label}", ha="center", fontsize=9)
    ax.text(
        5.55,
        0.15,
        "predicted label: the one whose word scores higher; PET then fine-tunes on that comparison",
        ha="center",
        fontsize=9,
    )
    ax.set_title("A cloze pattern and its verbalizer (PET)", fontsize=11)
    return fig
