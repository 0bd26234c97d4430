"""Lesson 03: heads on a pretrained encoder.

* ``classification_head`` — lesson 03a: pooling, dropout and one new linear layer, every weight fine-tuned.
* ``bi_vs_cross_encoder`` — lesson 03b: two sentences encoded apart and compared, or read together in one pass
  (Reimers & Gurevych, 2019).
* ``label_alignment`` — lesson 03c: word labels on word pieces, the first piece labelled and the rest ignored.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from .drawing import COLOURS, EMPHASIS, arrow, box, canvas

IGNORE = "-100"
# positions whose training label is -100 are drawn as empty boxes: "ignored" is the absence of a label, not a colour
IGNORED_FACE = "white"


def classification_head(pooling: str = "cls", num_labels: int = 2) -> Figure:
    """Lesson 03a. Fine-tuning for sentence classification (Devlin et al., 2019): "[CLS] a gorgeous , witty movie .
    [SEP]" goes through the pretrained encoder, whose weights are all trained too (at a small learning rate);
    pooling makes one sentence vector ("cls": the [CLS] token's final vector, as BERT does; "mean": the average of
    the token vectors, as sentence encoders do, Reimers & Gurevych, 2019); then dropout and one new linear layer
    (hidden size H -> ``num_labels``, the only weights that start random) and a softmax give the label
    probabilities. The loss is the cross-entropy with the gold label; its gradient flows back through the head into
    every encoder layer."""
    if pooling not in ("cls", "mean"):
        raise ValueError(f"pooling must be 'cls' or 'mean'; got {pooling!r}.")
    if isinstance(num_labels, bool) or not isinstance(num_labels, int) or num_labels < 2:
        raise ValueError(
            f"num_labels must be an integer >= 2 (a label distribution needs two labels or more); got {num_labels!r}. "
            "Regression with one output (e.g. STS-B's similarity score) is lesson 03b's business, not this picture's."
        )
    tokens = ["[CLS]", "a", "gorgeous", ",", "witty", "movie", ".", "[SEP]"]
    n = len(tokens)
    if num_labels == 2:
        names, gold = ["negative", "positive"], "positive"
    else:
        names, gold = [f"label {k}" for k in range(num_labels)], "y"
    if len(names) > 5:
        names = [*names[:3], "...", names[-1]]

    fig, ax = canvas(10.8, 7.6, (-2.4, 12.9), (-0.7, 9.6))
    head_x, head_w = 3.5, 5.0
    # input and encoder
    ax.text(-2.3, 0.0, "input", ha="left", va="center", fontsize=9)
    for i, token in enumerate(tokens):
        box(ax, i, 0.0, 0.9, 0.5, token, COLOURS["token"], size=7.5, family="monospace")
        arrow(ax, (i, 0.27), (i, 0.75))
    ax.add_patch(
        FancyBboxPatch(
            (-0.5, 0.8), n, 2.15, boxstyle="round,pad=0.05", facecolor="none", edgecolor="#888888", linestyle="--"
        )
    )
    ax.text(
        -2.3,
        1.85,
        "pretrained\nencoder:\nall weights\ntrained too,\nat a small\nlearning rate",
        ha="left",
        va="center",
        fontsize=8,
    )
    layers = ((1.1, "embeddings (token + segment + position)"), (1.75, "layer 1"), (2.55, "layer N"))
    for y, text in layers:
        box(ax, (n - 1) / 2, y, n - 0.3, 0.42, text, COLOURS["block"], size=8)
    ax.text((n - 1) / 2, 2.17, "...", ha="center", va="center", fontsize=10)
    # final vectors and pooling
    ax.text(-2.3, 3.55, "final vectors\n(H numbers each)", ha="left", va="center", fontsize=8)
    used = range(n) if pooling == "mean" else (0,)
    for i in range(n):
        vector = "C" if i == 0 else f"T{i}"
        arrow(ax, (i, 3.0), (i, 3.33))
        if i in used:
            box(ax, i, 3.55, 0.6, 0.4, vector, COLOURS["output"], size=8, style="italic")
            arrow(ax, (i, 3.77), (head_x + (i - head_x) * 0.45, 4.3))
        else:
            box(ax, i, 3.55, 0.6, 0.4, vector, "white", size=8, style="italic", color="#999999")
    if pooling == "cls":
        pool_text = "pooling: take C, the final vector of [CLS] (as BERT does)"
        pool_note = (
            "the other vectors are not read\n(grey); BERT's code first passes\nC through its pretrained pooler\n"
            "(dense + tanh)"
        )
    else:
        pool_text = "pooling: the mean of the token vectors (padding left out)"
        pool_note = "as sentence encoders do\n(Reimers & Gurevych, 2019)"
    box(ax, head_x, 4.55, head_w + 1.2, 0.5, pool_text, COLOURS["sum"], size=8)
    ax.text(head_x + head_w / 2 + 0.85, 4.55, pool_note, ha="left", va="center", fontsize=7.5, color="#333333")
    # the head
    head = (
        (5.45, "dropout (p = 0.1, while training)", COLOURS["block"], None),
        (
            6.35,
            f"linear layer: H -> {num_labels} logits\nnew: the only weights that start random",
            COLOURS["output"],
            None,
        ),
        (7.25, "softmax -> label probabilities", COLOURS["block"], None),
    )
    ax.text(-2.3, 6.35, "the head", ha="left", va="center", fontsize=9)
    arrow(ax, (head_x, 4.8), (head_x, 5.22))
    for y, text, colour, note in head:
        box(ax, head_x, y, head_w, 0.6 if "\n" in text else 0.45, text, colour, size=8.5)
        if note:
            ax.text(head_x + head_w / 2 + 0.25, y, note, ha="left", va="center", fontsize=7.5, color="#333333")
    arrow(ax, (head_x, 5.68), (head_x, 6.12))
    arrow(ax, (head_x, 6.58), (head_x, 7.02))
    # probabilities and the loss
    k = len(names)
    spacing = min(1.3, 6.0 / k)
    for j, name in enumerate(names):
        x = head_x + (j - (k - 1) / 2) * spacing
        if name == "...":
            ax.text(x, 8.05, "...", ha="center", va="center", fontsize=10)
            continue
        arrow(ax, (head_x + (x - head_x) * 0.3, 7.48), (x, 7.82))
        box(ax, x, 8.05, spacing - 0.15, 0.42, f"p({name})", COLOURS["output"], size=7.5)
    ax.text(-2.3, 8.05, "probabilities\n(sum to 1)", ha="left", va="center", fontsize=8)
    loss_text = (
        f"cross-entropy with the gold label (here: {gold}): loss = -log p({gold})"
        if gold != "y"
        else "cross-entropy with the gold label y: loss = -log p(y)"
    )
    box(ax, head_x, 9.05, head_w + 1.2, 0.45, loss_text, "white", size=8.5)
    arrow(ax, (head_x, 8.3), (head_x, 8.8))
    # the gradient, back down through the head into every layer
    gx = 10.0
    ax.plot([head_x + head_w / 2 + 0.6, gx], [9.05, 9.05], color=EMPHASIS, linewidth=1)
    arrow(ax, (gx, 9.05), (gx, 1.1), colour=EMPHASIS, linestyle="--")
    for y, _ in layers:
        arrow(ax, (gx, y), ((n - 1) / 2 + (n - 0.3) / 2 + 0.05, y), colour=EMPHASIS)
    for y, *_ in head:
        arrow(ax, (gx, y), (head_x + head_w / 2 + 0.05, y), colour=EMPHASIS)
    ax.text(
        gx + 0.2,
        4.9,
        textwrap.fill(
            "the gradient of the loss flows back through the head into every encoder layer and the embeddings: "
            "the new layer and the whole encoder are trained together (BERT: learning rates of 2e-5 to 5e-5)",
            24,
        ),
        ha="left",
        va="center",
        fontsize=8,
        color=EMPHASIS,
    )
    title = "CLS" if pooling == "cls" else "mean"
    ax.set_title(
        f"Fine-tuning for sentence classification: {title} pooling, dropout, one new linear layer", fontsize=11
    )
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
        arrow(left, (x, 0.95), (x, 1.55))
        box(left, x, 2.2, 3.6, 1.2, "encoder\n(the same weights)", COLOURS["block"], size=9)
        arrow(left, (x, 2.85), (x, 3.45))
        box(left, x, 3.85, 2.4, 0.7, "mean pooling", COLOURS["sum"], size=9)
        arrow(left, (x, 4.25), (x, 4.85))
        box(left, x, 5.15, 1.0, 0.55, vec, COLOURS["output"], size=10, style="italic")
    arrow(left, (3.15, 5.5), (4.5, 6.2))
    arrow(left, (6.85, 5.5), (5.5, 6.2))
    left.text(5.0, 6.45, "similarity = cos(u, v)", ha="center", fontsize=10)
    left.set_title("bi-encoder: one pass per sentence, vectors reusable", fontsize=10)
    right.text(5.0, 0.6, f"[CLS] {first} [SEP] {second} [SEP]", ha="center", fontsize=8)
    arrow(right, (5.0, 0.95), (5.0, 1.55))
    box(
        right,
        5.0,
        2.7,
        8.0,
        2.2,
        "encoder: attention across both sentences\n(each word of one sees every word of the other)",
        COLOURS["cross"],
        size=9,
    )
    arrow(right, (5.0, 3.85), (5.0, 4.45))
    head = "[CLS] vector -> head" if pooling == "cls" else "mean of the vectors -> head"
    box(right, 5.0, 4.85, 3.6, 0.7, head, COLOURS["sum"], size=9)
    arrow(right, (5.0, 5.25), (5.0, 5.85))
    right.text(5.0, 6.2, "similarity score (one number)", ha="center", fontsize=10)
    right.set_title("cross-encoder: one pass per pair, attention across it", fontsize=10)
    fig.suptitle("Comparing two sentences: encode apart, or read together", fontsize=11)
    fig.tight_layout()
    return fig


def _check_alignment(words, labels, pieces) -> tuple[list[str], list[str], list[list[str]]]:
    words, labels = list(words), list(labels)
    if isinstance(pieces, str):
        raise ValueError("pieces must be one list of word pieces per word, e.g. [['johan', '##son'], ['visited']].")
    pieces = list(pieces)
    if not words:
        raise ValueError("label_alignment needs at least one word; got none.")
    if not len(words) == len(labels) == len(pieces):
        raise ValueError(
            f"words, labels and pieces must have one entry per word; got {len(words)} words, {len(labels)} labels "
            f"and {len(pieces)} lists of pieces."
        )
    for i, (word, label, word_pieces) in enumerate(zip(words, labels, pieces)):
        if not isinstance(word, str) or not word:
            raise ValueError(f"Every word must be a non-empty string; word {i} is {word!r}.")
        if not isinstance(label, str) or not label:
            raise ValueError(
                f"Every label must be a non-empty string such as 'B-PER', 'I-LOC' or 'O'; the label of word {i} "
                f"({word!r}) is {label!r}."
            )
        if isinstance(word_pieces, str):
            raise ValueError(
                f"pieces[{i}] must be a list of the word's pieces, e.g. ['johan', '##son']; got the string "
                f"{word_pieces!r}."
            )
        word_pieces = list(word_pieces)
        if not word_pieces:
            raise ValueError(f"Every word needs at least one piece; word {i} ({word!r}) has none.")
        if not all(isinstance(p, str) and p for p in word_pieces):
            raise ValueError(f"Word pieces must be non-empty strings; pieces[{i}] for {word!r} is {word_pieces!r}.")
        pieces[i] = word_pieces
    return words, labels, pieces


def label_alignment(
    words: Sequence[str] = ("Johanson", "visited", "Leicestershire", "."),
    labels: Sequence[str] = ("B-PER", "O", "B-LOC", "O"),
    pieces: Sequence[Sequence[str]] = (("johan", "##son"), ("visited",), ("leicester", "##shire"), (".",)),
) -> Figure:
    """Lesson 03c. Word-level BIO labels on WordPiece tokens, the "first sub-token" scheme of BERT's NER experiment
    (Devlin et al., 2019, section 5.3): each word's label goes on its first piece; its later pieces and [CLS] /
    [SEP] get -100, PyTorch cross-entropy's ``ignore_index``, so the loss skips them. At prediction time each word
    takes the prediction at its first piece. ``pieces``: one list of word pieces per word."""
    words, labels, pieces = _check_alignment(words, labels, pieces)
    # one column per piece, [CLS] and [SEP] included
    columns: list[tuple[str, int | None, bool]] = [("[CLS]", None, False)]
    for w, word_pieces in enumerate(pieces):
        columns += [(piece, w, j == 0) for j, piece in enumerate(word_pieces)]
    columns.append(("[SEP]", None, False))
    n = len(columns)
    step = 1.25
    xs = [i * step for i in range(n)]
    word_x = [sum(xs[i] for i, c in enumerate(columns) if c[1] == w) / len(pieces[w]) for w in range(len(words))]
    left = -2.7
    width = min(11.0, max(8.0, 0.95 * (n * step - left) + 0.4))
    size = 9 if n <= 10 else 8 if n <= 12 else 7
    box_w = 1.1
    fig, ax = canvas(width, 6.6, (left, xs[-1] + 0.8), (-0.9, 9.0))

    rows = {
        8.5: "word label",
        7.7: "word",
        5.7: "word pieces",
        4.6: "training label",
        2.15: "prediction\nat each piece",
        0.5: "prediction\nper word",
    }
    for y, text in rows.items():
        ax.text(left + 0.1, y, text, ha="left", va="center", fontsize=9)

    # words and their labels, lines from each word to its pieces
    for w, (word, label) in enumerate(zip(words, labels)):
        x = word_x[w]
        box(ax, x, 8.5, box_w, 0.5, label, COLOURS["output"], size=size)
        ax.text(x, 7.7, word, ha="center", va="center", fontsize=size + 1)
        for i, column in enumerate(columns):
            if column[1] == w:
                ax.plot([x, xs[i]], [7.4, 6.05], color="#777777", linewidth=0.8)

    # pieces and their training labels (the targets the loss compares the predictions with)
    for i, (piece, w, first) in enumerate(columns):
        x = xs[i]
        box(ax, x, 5.7, box_w, 0.55, piece, COLOURS["token"], size=size, family="monospace")
        arrow(ax, (x, 5.4), (x, 4.9))
        if first:
            box(ax, x, 4.6, box_w, 0.5, labels[w], COLOURS["output"], size=size)
        else:
            box(ax, x, 4.6, box_w, 0.5, IGNORE, IGNORED_FACE, size=size, color="#777777")
    middle = (xs[0] + xs[-1]) / 2
    ax.text(
        middle,
        3.95,
        "label on the first piece of each word;  -100 = no label: the cross-entropy loss skips these positions "
        "(PyTorch's ignore_index)",
        ha="center",
        va="center",
        fontsize=8.5,
        color="#444444",
    )
    # after fine-tuning: the model predicts at every piece; each word reads its first piece
    span = xs[-1] - xs[0] + box_w
    model = (
        "after fine-tuning, the encoder + a classifier predicts a label at every piece (drawn: every one right)"
        if span >= 7
        else "fine-tuned BERT + a classifier:\na label at every piece"
    )
    box(ax, middle, 3.15, span, 0.6, model, COLOURS["block"], size=9 if span >= 7 else 8)
    for i, (_piece, w, first) in enumerate(columns):
        x = xs[i]
        arrow(ax, (x, 2.85), (x, 2.42))
        if first:
            box(ax, x, 2.15, box_w, 0.5, labels[w], COLOURS["output"], size=size)
            ax.plot([x, word_x[w]], [1.88, 1.05], color="#555555", linewidth=0.8)
        else:
            box(ax, x, 2.15, box_w, 0.5, "not read", IGNORED_FACE, size=size - 1, color="#777777")
    for w, (word, label) in enumerate(zip(words, labels)):
        arrow(ax, (word_x[w], 1.1), (word_x[w], 0.92))
        box(
            ax, word_x[w], 0.5, max(box_w, 0.1 * len(word) + 0.3), 0.8, f"{word}\n{label}", COLOURS["output"], size=size
        )
    ax.text(
        middle,
        -0.55,
        "reading back: each word takes the prediction at its first piece; later pieces and [CLS] / [SEP] are not "
        "read (Devlin et al., 2019, section 5.3)",
        ha="center",
        va="center",
        fontsize=8.5,
    )
    ax.set_title("Word labels on word pieces: label the first piece, -100 on the rest", fontsize=11)
    return fig
