"""Lessons 01 and 02: what BERT is pretrained on, and what its input is.

* ``mlm_and_nsp`` — lesson 01: masked language modelling and next-sentence prediction (Devlin et al., 2019).
* ``bert_input`` — lesson 02: the input is the sum of token, segment and position embeddings (Devlin et al., 2019).
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from .drawing import COLOURS, EMPHASIS, arrow, box, canvas, row_labels

SPECIAL = ("[CLS]", "[SEP]", "[MASK]", "[PAD]")
# what a chosen position becomes, in the order the chosen positions are drawn: one of each kind first
KINDS = ("mask", "random", "kept")
KIND_TAGS = {"mask": "[MASK]\n(80 %)", "random": "random\n(10 %)", "kept": "kept\n(10 %)"}
RANDOM_WORDS = ("piano", "river", "blue", "ran")  # illustrative vocabulary words for the random replacement


def _pieces(tokens: Sequence[str] | str, name: str) -> list[str]:
    """Word pieces from a list (or a string split on spaces); refused when empty or holding special tokens."""
    pieces = tokens.split() if isinstance(tokens, str) else [str(t) for t in tokens]
    if not pieces:
        raise ValueError(f"{name} needs at least one word piece; got {tokens!r}.")
    special = [p for p in pieces if p in SPECIAL]
    if special:
        raise ValueError(
            f"{name} holds ordinary word pieces only; the diagram adds [CLS] and [SEP] itself and chooses where "
            f"[MASK] goes (from `masked`). Got {special} in {pieces}."
        )
    return pieces


def mlm_and_nsp(
    tokens_a: Sequence[str] | str = ("the", "cat", "sat", "on", "the", "mat"),
    tokens_b: Sequence[str] | str = ("it", "was", "very", "happy"),
    masked: Sequence[int] = (2, 6, 11),
) -> Figure:
    """Lesson 01. BERT's two pretraining objectives (Devlin et al., 2019), on one input pair
    "[CLS] A [SEP] B [SEP]". (a) Masked language modelling: 15 % of the word pieces are chosen; a chosen one becomes
    [MASK] 80 % of the time, a random token 10 % and stays unchanged 10 %; the encoder reads the corrupted input and
    the MLM head predicts the original word piece at the chosen positions only (the loss is computed only there).
    (b) Next-sentence prediction: the final [CLS] vector C goes to a 2-way classifier, IsNext or NotNext; B is the
    real next sentence half of the time and a random sentence from the corpus the other half.

    ``masked``: the chosen positions, counted in the whole input with [CLS] at 0 (so A's first piece is 1); they
    must lie inside A or B. In the order given, the first becomes [MASK], the second a random word piece, the third
    stays unchanged, and any further ones become [MASK]."""
    a, b = _pieces(tokens_a, "tokens_a"), _pieces(tokens_b, "tokens_b")
    tokens = ["[CLS]", *a, "[SEP]", *b, "[SEP]"]
    n = len(tokens)
    if n > 16:
        raise ValueError(
            f"A and B together may hold at most 13 word pieces (16 positions with [CLS] and the two [SEP]) so that "
            f"the picture stays readable; got {len(a)} + {len(b)}."
        )
    ordinary = [i for i in range(n) if tokens[i] not in ("[CLS]", "[SEP]")]
    masked = list(masked)
    if not masked:
        raise ValueError(f"masked needs at least one position to predict; choose among {ordinary}.")
    for i in masked:
        if isinstance(i, bool) or not isinstance(i, int) or i not in ordinary:
            raise ValueError(
                f"masked positions must lie inside A or B (not [CLS] at 0, nor a [SEP]): choose among {ordinary} "
                f"for {tokens}; got {i!r}."
            )
    if len(set(masked)) != len(masked):
        raise ValueError(f"masked names a position twice; got {masked}.")
    kind = {pos: KINDS[k] if k < len(KINDS) else "mask" for k, pos in enumerate(masked)}
    shown = list(tokens)
    for pos, what in kind.items():
        if what == "mask":
            shown[pos] = "[MASK]"
        elif what == "random":
            shown[pos] = next(w for w in RANDOM_WORDS if w != tokens[pos])

    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(10.8, 8.6), gridspec_kw={"height_ratios": [7.0, 4.4], "hspace": 0.12}
    )
    right = max(n, 13) - 0.4  # short inputs keep the width that (b)'s classifier and labels need
    middle = (right - 2.3) / 2
    top.set(xlim=(-2.3, right), ylim=(-1.3, 5.7))
    bottom.set(xlim=(-2.3, right), ylim=(-0.9, 3.5))
    for ax in (top, bottom):
        ax.axis("off")

    # (a) masked language modelling, read from the bottom up
    labels = {
        -0.05: "original",
        1.2: "input",
        2.15: "encoder",
        3.1: "final vectors",
        4.0: "MLM head: a\nsoftmax over\nthe vocabulary",
        5.0: "predict the\noriginal",
    }
    row_labels(top, -2.2, labels)
    for i, token in enumerate(tokens):
        chosen = i in kind
        top.text(
            i,
            -0.05,
            token,
            ha="center",
            va="center",
            fontsize=9,
            family="monospace",
            color="black" if chosen else "#777777",
            weight="bold" if chosen else "normal",
        )
        if chosen:
            top.text(i, 0.55, KIND_TAGS[kind[i]], ha="center", va="center", fontsize=7, color="#333333")
        else:
            arrow(top, (i, 0.2), (i, 0.9), colour="#aaaaaa")
        box(top, i, 1.2, 0.84, 0.45, shown[i], COLOURS["mask"] if chosen else COLOURS["token"], size=7)
        arrow(top, (i, 1.45), (i, 1.8))
        vector = "C" if i == 0 else f"T{i}"
        arrow(top, (i, 2.5), (i, 2.85))
        if chosen:
            box(top, i, 3.1, 0.6, 0.4, vector, COLOURS["output"], size=8, style="italic")
            arrow(top, (i, 3.32), (i, 3.72))
            box(top, i, 4.0, 0.84, 0.45, "MLM\nhead", COLOURS["block"], size=7)
            arrow(top, (i, 4.25), (i, 4.62), colour=EMPHASIS)
            top.text(i, 4.8, tokens[i], ha="center", va="center", fontsize=9, family="monospace", weight="bold")
            top.text(i, 5.2, "loss", ha="center", va="center", fontsize=8, color=EMPHASIS)
        else:
            box(top, i, 3.1, 0.6, 0.4, vector, "white", size=8, style="italic", color="#999999")
    box(
        top,
        (n - 1) / 2,
        2.15,
        n - 0.2,
        0.6,
        "encoder: every position attends to every position (both directions)"
        if n >= 10
        else "encoder: every position\nattends to every position",
        COLOURS["block"],
        size=9,
    )
    here = f"Chosen here: {len(kind)} of {len(ordinary)}"
    if len(kind) >= len(KINDS):
        here += ", more than 15 %, so that each kind shows"
    top.text(
        middle,
        -0.75,
        "15 % of the word pieces are chosen at random ([CLS] and [SEP] never); each chosen one becomes [MASK] 80 % "
        "of the time,\na random word piece 10 %, and stays unchanged 10 %. The loss (cross-entropy) counts the chosen "
        f"positions only.\n{here}; the unchosen vectors (grey) get no MLM loss.",
        ha="center",
        va="center",
        fontsize=8.5,
    )
    top.set_title("(a) masked language modelling (MLM): predict the chosen word pieces", fontsize=10, loc="left")

    # (b) next-sentence prediction: the same input, only C is read
    sep = len(a) + 1
    a_text, b_text = " ".join(shown[1:sep]), " ".join(shown[sep + 1 : n - 1])
    for i in (0, sep, n - 1):
        box(bottom, i, 0.3, 0.84, 0.45, tokens[i], COLOURS["token"], size=7)
    for first, last, label, text in ((1, sep - 1, "A", a_text), (sep + 1, n - 2, "B", b_text)):
        width = last - first + 0.84
        body = f"{label}: {text}" if len(text) * 0.085 + 0.4 < width else label
        box(bottom, (first + last) / 2, 0.3, width, 0.45, body, COLOURS["segment"], size=8, family="monospace")
    for i in range(n):
        arrow(bottom, (i, 0.55), (i, 0.9))
    box(bottom, (n - 1) / 2, 1.2, n - 0.2, 0.6, "the same encoder, the same pass", COLOURS["block"], size=9)
    arrow(bottom, (0, 1.5), (0, 1.85))
    box(bottom, 0, 2.1, 0.6, 0.4, "C", COLOURS["output"], size=9, style="italic")
    arrow(bottom, (0.32, 2.1), (1.0, 2.1))
    box(bottom, 2.35, 2.1, 2.6, 0.6, "2-way classifier\n(softmax)", COLOURS["block"], size=8)
    for y, label in ((2.75, "IsNext"), (1.85, "NotNext")):
        arrow(bottom, (3.65, 2.1), (4.45, y))
        box(bottom, 5.2, y, 1.4, 0.45, label, COLOURS["output"], size=9)
    bottom.text(
        6.2,
        2.3,
        "training labels, made from the corpus:\n"
        "  IsNext: B is the sentence that really follows A (50 % of pairs)\n"
        "  NotNext: B is a random sentence from the corpus (50 %)",
        ha="left",
        va="center",
        fontsize=8.5,
    )
    bottom.text(
        middle,
        -0.55,
        "C: the final vector of [CLS]. Pretraining loss = MLM loss + NSP loss, both from this one masked input.",
        ha="center",
        va="center",
        fontsize=8.5,
    )
    bottom.set_title("(b) next-sentence prediction (NSP): does B follow A?", fontsize=10, loc="left")
    fig.suptitle("BERT's two pretraining objectives (Devlin et al., 2019)", fontsize=11, y=0.95)
    return fig


def bert_input(tokens: Sequence[str] = ("[CLS]", "the", "cat", "sat", "[SEP]", "it", "purr", "##ed", "[SEP]")):
    """Lesson 02. The embedding layer's three lookups for one sentence pair, summed position by position: token
    (which word piece), segment (A up to the first [SEP], B after it) and position (0, 1, 2, ...)."""
    tokens = list(tokens)
    if "[SEP]" not in tokens:
        raise ValueError(f"bert_input needs a [SEP] to split the segments; got {tokens}.")
    first_sep = tokens.index("[SEP]")
    n = len(tokens)
    fig, ax = canvas(max(8.0, 0.95 * n + 1.5), 4.2, (-1.6, n), (-0.6, 5.2))
    rows = {
        4.3: "word pieces",
        3.3: "token\nembedding",
        2.3: "segment\nembedding",
        1.3: "position\nembedding",
        0.1: "input to\nlayer 1",
    }
    row_labels(ax, -1.5, rows)
    for i, token in enumerate(tokens):
        segment = "A" if i <= first_sep else "B"
        ax.text(i, 4.3, token, ha="center", va="center", fontsize=10, family="monospace")
        box(ax, i, 3.3, 0.8, 0.6, f"E[{token}]", COLOURS["token"], size=7)
        box(ax, i, 2.3, 0.8, 0.6, f"E_{segment}", COLOURS["segment"], size=8)
        box(ax, i, 1.3, 0.8, 0.6, f"E_{i}", COLOURS["position"], size=8)
        for y in (2.8, 1.8):
            ax.text(i, y, "+", ha="center", va="center", fontsize=10)
        arrow(ax, (i, 0.95), (i, 0.45))
        box(ax, i, 0.1, 0.8, 0.6, "x", COLOURS["sum"], size=9, style="italic")
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
