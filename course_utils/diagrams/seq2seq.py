"""Lesson 04: encoder-decoders and how they are pretrained.

* ``encoder_decoder`` — the decoder reads the encoder through cross-attention (Vaswani et al., 2017).
* ``span_corruption`` — T5's objective: spans dropped for sentinels, the target lists them (Raffel et al., 2020).
* ``bart_noising`` — BART's five noisings; the decoder rebuilds the original (Lewis et al., 2020).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from numbers import Integral

from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from .drawing import COLOURS, EMPHASIS, arrow, box, canvas, note

_MAX_WIDTH = 11.0  # inches: the course's widest figure
_GAP = 0.08  # inches between two token boxes
_BOX_H = 0.4  # inches: the height of a token box
_MIN_SIZE = 6.0  # points: below this a row is unreadable, and the diagram refuses the text instead


def encoder_decoder(
    source: Sequence[str] = ("summarize:", "the", "meeting", "moved"), target: Sequence[str] = ("meeting", "moved")
):
    """Lesson 04. The encoder reads the whole source (bidirectional self-attention); each decoder layer attends
    causally to the summary so far, then to the encoder's output through cross-attention (queries from the decoder,
    keys and values from the encoder), and predicts the next token."""
    fig, ax = canvas(10.5, 5.2, (0, 10.5), (0, 6.4))
    # encoder
    ax.add_patch(
        FancyBboxPatch(
            (0.3, 1.6), 3.7, 3.0, boxstyle="round,pad=0.05", facecolor="none", edgecolor="#888888", linestyle="--"
        )
    )
    ax.text(2.15, 4.85, "encoder  (x N layers)", ha="center", fontsize=10)
    box(ax, 2.15, 2.3, 3.2, 0.8, "self-attention:\nevery token sees every token", COLOURS["block"], size=8)
    box(ax, 2.15, 3.6, 3.2, 0.7, "feed-forward", COLOURS["block"], size=8)
    arrow(ax, (2.15, 2.7), (2.15, 3.25))
    for i, word in enumerate(source):
        x = 0.8 + i * 2.7 / max(1, len(source) - 1)
        ax.text(x, 0.9, word, ha="center", fontsize=9, family="monospace")
        arrow(ax, (x, 1.15), (x, 1.9))
    ax.text(2.15, 0.35, "source (all of it at once)", ha="center", fontsize=9)
    # decoder
    ax.add_patch(
        FancyBboxPatch(
            (6.3, 1.6), 3.9, 4.0, boxstyle="round,pad=0.05", facecolor="none", edgecolor="#888888", linestyle="--"
        )
    )
    ax.text(8.25, 5.85, "decoder  (x N layers)", ha="center", fontsize=10)
    box(ax, 8.25, 2.3, 3.4, 0.8, "causal self-attention:\nearlier tokens only", COLOURS["block"], size=8)
    box(
        ax,
        8.25,
        3.5,
        3.4,
        0.8,
        "cross-attention: queries here,\nkeys and values from the encoder",
        COLOURS["cross"],
        size=8,
    )
    box(ax, 8.25, 4.7, 3.4, 0.7, "feed-forward -> next-token logits", COLOURS["block"], size=8)
    arrow(ax, (8.25, 2.7), (8.25, 3.1))
    arrow(ax, (8.25, 3.9), (8.25, 4.35))
    arrow(ax, (3.75, 3.6), (6.55, 3.5), colour=EMPHASIS)
    ax.text(
        5.15, 3.0, "encoder output:\nevery decoder\nlayer reads it", ha="center", va="top", fontsize=8, color=EMPHASIS
    )
    shifted = ["<start>", *target[:-1]]
    for i, word in enumerate(shifted):
        x = 7.0 + i * 2.5 / max(1, len(shifted) - 1)
        ax.text(x, 0.9, word, ha="center", fontsize=9, family="monospace")
        arrow(ax, (x, 1.15), (x, 1.9))
    ax.text(8.25, 0.35, "summary so far (shifted right); predicts: " + " ".join(target), ha="center", fontsize=9)
    ax.set_title("An encoder-decoder (T5, BART): the decoder reads the source through cross-attention", fontsize=11)
    return fig


def _inch_canvas(width: float, height: float):
    """``_canvas`` with the axes filling the figure below a 0.45-inch title band, so one data unit is one inch."""
    fig, ax = canvas(width, height + 0.45, (0, width), (0, height))
    ax.set_position([0, 0, 1, height / (height + 0.45)])
    return fig, ax


def _token_width(token: str, size: float) -> float:
    """Inches a box needs for ``token`` in monospace type of ``size`` points (an advance of 0.6 em, plus padding)."""
    return len(token) * 0.6 * size / 72 + 0.2 * size / 9


def _row_width(tokens: Sequence[str], size: float) -> float:
    return sum(_token_width(t, size) for t in tokens) + _GAP * max(0, len(tokens) - 1)


def _font_size(rows: Sequence[Sequence[str]], room: float, what: str) -> float:
    """The largest size up to 9 points at which every row fits ``room`` inches; a ValueError when under 6."""

    def fitting(row: Sequence[str]) -> float:  # the size at which the row is exactly ``room`` wide
        per_point = sum(len(t) * 0.6 / 72 + 0.2 / 9 for t in row)
        return (room - _GAP * max(0, len(row) - 1)) / per_point

    longest = min(rows, key=fitting)
    size = min(9.0, fitting(longest))
    if size < _MIN_SIZE:
        raise ValueError(
            f"{what} is too long to draw legibly: its longest row ({len(longest)} tokens, "
            f"{sum(map(len, longest))} characters) needs {_row_width(longest, _MIN_SIZE):.1f} inches even at "
            f"{_MIN_SIZE:g} pt, and {room:.1f} are available; use fewer or shorter words."
        )
    return size


def _token_row(ax, x0: float, y: float, tokens: Sequence[str], colours: Sequence[str], size: float, gid: str):
    """Draw ``tokens`` as boxes from ``x0`` along ``y``; returns each box's (left, right) edges."""
    edges = []
    x = x0
    for token, colour in zip(tokens, colours):
        w = _token_width(token, size)
        box(ax, x + w / 2, y, w, _BOX_H, token, colour, size=size, family="monospace", gid=gid)
        edges.append((x, x + w))
        x += w + _GAP
    return edges


def _wrap(tokens: Sequence[str], size: float, room: float) -> list[list[str]]:
    """Cut a row of tokens into lines of at most ``room`` inches (greedy; a token is never split)."""
    lines: list[list[str]] = [[]]
    for token in tokens:
        if lines[-1] and _row_width([*lines[-1], token], size) > room:
            lines.append([])
        lines[-1].append(token)
    return lines


def _words(value, name: str) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ValueError(f"{name} must be a list of strings (e.g. 'Thank you for ...'.split()); got {value!r}.")
    value = list(value)
    if not value or not all(isinstance(w, str) and w.strip() for w in value):
        raise ValueError(f"{name} must be a non-empty list of non-empty strings; got {value!r}.")
    return value


# ------------------------------------------------------------------------------------------------------ T5
def span_corruption(
    words: Sequence[str] = tuple("Thank you for inviting me to your party last week .".split()),
    spans: Sequence[tuple[int, int]] = ((2, 4), (8, 9)),
) -> Figure:
    """Lesson 04. T5's pretraining objective, span corruption (Raffel et al., 2020), on the paper's Figure 2: the
    dropped spans are highlighted in the original text; in the encoder's input each span is replaced by one sentinel
    (<extra_id_0>, <extra_id_1>, ... in the Hugging Face tokenizer; <X>, <Y>, <Z> in the paper), and the decoder's
    target is each sentinel followed by the words it replaced, ended by one more sentinel. In pretraining 15 % of the
    tokens are dropped, in spans of mean length 3. ``spans``: (start, end) word indices, end excluded as in a slice,
    sorted, each at least one word, with at least one word kept between two spans."""
    words = _words(words, "words")
    if any(w.startswith("<extra_id_") for w in words):
        raise ValueError("words must not contain a sentinel (<extra_id_N>): sentinels are tokens that text never has.")
    if isinstance(spans, str) or not isinstance(spans, Sequence) or not spans:
        raise ValueError(f"spans must be a non-empty list of (start, end) word-index pairs; got {spans!r}.")
    spans = list(spans)
    previous_end = None
    for span in spans:
        ok = (
            isinstance(span, Sequence)
            and not isinstance(span, str)
            and len(span) == 2
            and all(isinstance(i, Integral) and not isinstance(i, bool) for i in span)
        )
        if not ok:
            raise ValueError(f"Each span must be a (start, end) pair of word indices; got {span!r}.")
        start, end = int(span[0]), int(span[1])
        if not 0 <= start < end <= len(words):
            raise ValueError(
                f"Span {tuple(span)} must satisfy 0 <= start < end <= {len(words)} (the number of words; end is "
                f"excluded, so a span holds at least one word)."
            )
        if previous_end is not None and start <= previous_end:
            raise ValueError(
                f"Spans must be sorted and separated by at least one kept word (touching spans would be one span, "
                f"one sentinel); span {tuple(span)} starts at or before the previous span's end {previous_end}."
            )
        previous_end = end
    spans = [(int(start), int(end)) for start, end in spans]
    dropped = {i for start, end in spans for i in range(start, end)}
    if len(dropped) == len(words):
        raise ValueError("The spans drop every word; at least one word must be kept in the encoder's input.")

    sentinel = "<extra_id_{}>".format
    inputs, targets = [], []  # (token, highlighted?)
    for n, (start, end) in enumerate(spans):
        kept_from = spans[n - 1][1] if n else 0
        inputs += [(w, False) for w in words[kept_from:start]] + [(sentinel(n), True)]
        targets += [(sentinel(n), True)] + [(w, True) for w in words[start:end]]
    inputs += [(w, False) for w in words[spans[-1][1] :]]
    targets.append((sentinel(len(spans)), True))

    label_w, margin = 1.55, 0.15
    rows = [words, [t for t, _ in inputs], [t for t, _ in targets]]
    size = _font_size(rows, _MAX_WIDTH - label_w - 2 * margin, "The text")
    width = max(8.5, label_w + max(_row_width(r, size) for r in rows) + 2 * margin)
    fig, ax = _inch_canvas(width, 4.0)
    x0 = label_w + margin
    y_text, y_in, y_out = 3.35, 2.0, 0.95
    colour = {False: COLOURS["token"], True: COLOURS["mask"]}
    for y, label in ((y_text, "original text"), (y_in, "encoder input"), (y_out, "decoder target")):
        ax.text(0.1, y, label, ha="left", va="center", fontsize=10)
    text_edges = _token_row(
        ax, x0, y_text, words, [colour[i in dropped] for i in range(len(words))], size, "original text"
    )
    in_edges = _token_row(ax, x0, y_in, *zip(*[(t, colour[h]) for t, h in inputs]), size, "encoder input")
    _token_row(ax, x0, y_out, *zip(*[(t, colour[h]) for t, h in targets]), size, "decoder target")
    # each dropped span points at the sentinel that replaces it
    sentinel_edges = [edge for edge, (token, _) in zip(in_edges, inputs) if token.startswith("<extra_id_")]
    for (start, end), (left, right) in zip(spans, sentinel_edges):
        span_centre = (text_edges[start][0] + text_edges[end - 1][1]) / 2
        arrow(ax, (span_centre, y_text - _BOX_H / 2 - 0.03), ((left + right) / 2, y_in + _BOX_H / 2 + 0.03))
    note(ax, 0.1, (y_text + y_in) / 2, "each dropped span\nbecomes one sentinel")
    note(
        ax,
        x0,
        (y_in + y_out) / 2,
        "the decoder writes each sentinel, then the words it hid; one more sentinel ends the target",
    )
    ax.text(
        0.1,
        0.3,
        "In pretraining: 15 % of the tokens dropped, in spans of mean length 3 "
        f"(here {len(dropped)} of {len(words)} words, in {len(spans)} span{'s' if len(spans) > 1 else ''}).\n"
        "Sentinels: <extra_id_0>, <extra_id_1>, ... in Hugging Face's T5 tokenizer; <X>, <Y>, <Z> in the paper.",
        ha="left",
        va="center",
        fontsize=8,
    )
    ax.set_title(
        "T5's span corruption: short targets, one sentinel per dropped span (Raffel et al., 2020)", fontsize=11
    )
    return fig


# ------------------------------------------------------------------------------------------------------ BART
def bart_noising(sentences: Sequence[str] = ("A B C .", "D E .")) -> Figure:
    """Lesson 04. BART's five noising transformations (Lewis et al., 2020, Figure 2) on one short document, one row
    each: token masking (random tokens become [MASK]), token deletion (random tokens removed: the model must find
    where), text infilling (each span, its length drawn from Poisson(3) and possibly 0, becomes ONE [MASK]), sentence
    permutation (the sentences shuffled) and document rotation (the document starts at a random token). Whatever the
    noise, the decoder writes the original. The picks are fixed so that the default reproduces the paper's figure:
    the 2nd, 5th, 8th, ... tokens masked or deleted; the 2nd and 3rd infilled, and an empty span before the
    second-to-last token;
    the sentences in reverse order; a rotation to start a third of the way in (inside a sentence where it can).
    ``sentences``: at least two, each a string whose words are split at spaces."""
    if isinstance(sentences, str) or not isinstance(sentences, Sequence):
        raise ValueError(f"sentences must be a list of strings, e.g. ['A B C .', 'D E .']; got {sentences!r}.")
    sentences = list(sentences)
    if not sentences or not all(isinstance(s, str) and s.strip() for s in sentences):
        raise ValueError(f"sentences must be a non-empty list of non-empty strings; got {sentences!r}.")
    if len(sentences) < 2:
        raise ValueError(f"Sentence permutation needs at least two sentences to shuffle; got {len(sentences)}.")
    split = [s.split() for s in sentences]
    tokens = [t for s in split for t in s]
    n, mask = len(tokens), "[MASK]"
    sentence_starts = {sum(map(len, split[:k])) for k in range(len(split))}

    chosen = set(range(1, n, 3))
    masked = [mask if i in chosen else t for i, t in enumerate(tokens)]
    deleted = [t for i, t in enumerate(tokens) if i not in chosen]
    span_end = 1 + min(2, n - 1)
    infilled = tokens[:1] + [mask] + tokens[span_end:]
    insert_before = n - 2
    infill_note = f"'{' '.join(tokens[1:span_end])}' -> one [MASK]"
    if insert_before > span_end:  # an empty span: a [MASK] inserted where nothing was removed
        at = insert_before - span_end + 2
        infilled = infilled[:at] + [mask] + infilled[at:]
        infill_note += f"; an empty span inserts one before '{tokens[insert_before]}'"
    permuted = [t for s in reversed(split) for t in s]
    start = max(1, n // 3)
    while (start in sentence_starts or start + 1 in sentence_starts) and start + 1 < n:
        start += 1  # a start inside a sentence, so that the rotation does not look like a permutation
    rotated = tokens[start:] + tokens[:start]

    rows = [
        ("original document", "what the decoder must write back", tokens),
        ("token masking", "random tokens -> [MASK], as in BERT", masked),
        (
            "token deletion",
            f"random tokens removed (here {', '.join(repr(tokens[i]) for i in sorted(chosen))}): the model must "
            "find where",
            deleted,
        ),
        ("text infilling", f"span lengths ~ Poisson(λ = 3), 0 included: {infill_note}", infilled),
        ("sentence permutation", "the sentences (split at full stops) shuffled", permuted),
        ("document rotation", f"starts at a random token (here '{tokens[start]}'): where did the text begin?", rotated),
    ]
    label_w, target_w, margin, min_arrow = 2.25, 2.0, 0.15, 0.6
    room = _MAX_WIDTH - label_w - target_w - 3 * margin - min_arrow
    size = _font_size([[t] for t in tokens], room, "A word of the document")
    token_w = min(room, max(_row_width(r, size) for _, _, r in rows))
    lines = [_wrap(row, size, token_w) for _, _, row in rows]
    if max(map(len, lines)) > 3:
        raise ValueError(
            f"The document is too long to draw: a row would need {max(map(len, lines))} lines of "
            f"{token_w:.1f} inches (at most 3); use fewer or shorter words ({len(tokens)} tokens now)."
        )
    line_step = _BOX_H + 0.12
    blocks = [max(0.95, len(row_lines) * line_step + 0.43) for row_lines in lines]
    separator_gap, foot = 0.25, 0.75
    height = sum(blocks) + separator_gap + foot + 0.1
    width = max(9.0, label_w + token_w + min_arrow + target_w + 3 * margin)
    fig, ax = _inch_canvas(width, height)
    x0, box_left = label_w + margin, width - margin - target_w
    y = height - 0.35  # the first line of the row being drawn
    row_tops, row_ends = [], []
    for k, ((name, explained, _), row_lines) in enumerate(zip(rows, lines)):
        ax.text(0.1, y + 0.13, name, ha="left", va="center", fontsize=10, weight="bold" if k else "normal")
        ax.text(0.1, y - 0.06, textwrap.fill(explained, 40), ha="left", va="top", fontsize=7, color="#555555")
        for j, line in enumerate(row_lines):
            colours = [COLOURS["mask"] if t == mask else COLOURS["token"] for t in line]
            edges = _token_row(ax, x0, y - j * line_step, line, colours, size, name)
        row_tops.append(y + _BOX_H / 2)
        row_ends.append((edges[-1][1], y - (len(row_lines) - 1) * line_step))
        y -= blocks[k]
        if k == 0:
            separator = y + blocks[0] - max(0.5, len(row_lines) * line_step) - 0.12
            ax.plot([0.1, width - 0.1], [separator, separator], color="#bbbbbb", linewidth=0.8)
            y -= separator_gap
    # the one target every noised input is trained to give back
    box_top, box_bottom = row_tops[1] + 0.15, row_ends[-1][1] - _BOX_H / 2 - 0.15
    for right, line_y in row_ends[1:]:
        arrow(ax, (right + 0.08, line_y), (box_left, line_y))
    box(
        ax,
        box_left + target_w / 2,
        (box_top + box_bottom) / 2,
        target_w,
        box_top - box_bottom,
        "BART\nbidirectional encoder\nreads the noised text;\nautoregressive decoder\nwrites the original:\n\n"
        + textwrap.fill(" ".join(tokens), 24),
        COLOURS["output"],
        size=9,
    )
    ax.text(
        width / 2,
        0.35,
        "BART-large was pretrained with text infilling + sentence permutation (30 % of tokens masked, all sentences\n"
        "permuted); of the single noisings compared at base size, text infilling was the most consistently strong.",
        ha="center",
        va="center",
        fontsize=8,
    )
    ax.set_title("BART's five noisings: the decoder always rebuilds the original (Lewis et al., 2020)", fontsize=11)
    return fig
