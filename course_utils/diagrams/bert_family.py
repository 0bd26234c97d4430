"""Lesson 07: three members of the BERT family drawn.

* ``electra`` — replaced-token detection: a generator fills masks, a discriminator labels every token (Clark et al.,
  2020).
* ``distillation`` — a student matches a teacher's softened probabilities (Hinton et al., 2015; Sanh et al., 2019).
* ``albert_factorisation`` — factorised embeddings and cross-layer sharing (Lan et al., 2020).
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Rectangle

from .drawing import COLOURS, EMPHASIS, arrow, box, canvas

_FIGURE_1 = ["the", "chef", "cooked", "the", "meal"]  # Clark et al. (2020), Figure 1
_FIGURE_1_SAMPLES = {0: "the", 2: "ate"}  # its generator's samples: "the" equals the original, "ate" does not


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _count(n: int) -> str:
    """A weight count as the lesson writes it: ``23.0 M``, ``98.3 k``, ``800``."""
    if n >= 1_000_000:
        return f"{n / 1e6:.1f} M"
    if n >= 1_000:
        return f"{n / 1e3:.1f} k"
    return str(n)


def _equals(n: int) -> str:
    """A count in full, then rounded where that reads shorter: ``23,040,000 = 23.0 M``, ``164``."""
    return f"{n:,}" if n < 1_000 else f"{n:,} = {_count(n)}"


def electra(
    tokens: str | Sequence[str] = "the chef cooked the meal",
    masked: Sequence[int] = (0, 2),
    replacements: Mapping[int, str] | None = None,
) -> Figure:
    """Lesson 07. ELECTRA's replaced-token detection (Clark et al., 2020), on the paper's Figure 1: some positions of
    the sentence are masked; a small generator (a masked LM) samples a token at each [MASK]; the discriminator reads
    the corrupted sentence and labels every token "original" or "replaced". A sample equal to the original token
    counts as original. The generator learns by MLM, the discriminator by binary cross-entropy over all tokens, in one
    combined loss (discriminator weighted 50); the generator is not trained adversarially, and only the discriminator
    is kept for fine-tuning.

    ``tokens``: a sentence (split on spaces) or its tokens; ``masked``: the masked positions (0-based);
    ``replacements``: the generator's sample at each masked position, ``{position: token}``."""
    tokens = tokens.split() if isinstance(tokens, str) else list(tokens)
    if not tokens or not all(isinstance(t, str) and t.strip() for t in tokens):
        raise ValueError(f"electra needs a non-empty sentence of non-empty string tokens; got {tokens!r}.")
    n = len(tokens)
    masked = list(masked)
    if not masked or not all(_is_int(p) and 0 <= p < n for p in masked) or len(set(masked)) != len(masked):
        raise ValueError(
            f"masked must be at least one distinct position from 0 to {n - 1} (the sentence has {n} tokens); "
            f"got {masked!r}."
        )
    if replacements is None:
        if tokens != _FIGURE_1:
            raise ValueError(
                "replacements (the generator's sample at each masked position, {position: token}) are needed for a "
                f"sentence other than the paper's {' '.join(_FIGURE_1)!r}."
            )
        replacements = {p: _FIGURE_1_SAMPLES.get(p, tokens[p]) for p in masked}
    replacements = dict(replacements)
    if set(replacements) != set(masked) or not all(isinstance(t, str) and t.strip() for t in replacements.values()):
        raise ValueError(
            "replacements must give one non-empty token for each masked position and no other, "
            f"i.e. for positions {sorted(masked)}; got {replacements!r}."
        )
    longest = max(len(t) for t in [*tokens, *replacements.values(), "replaced"])
    step = max(1.05, 0.075 * longest + 0.5, 6.6 / n)  # a column per token; the model boxes' text needs 6.6 inches
    left = 1.45  # room for the row labels
    width = left + n * step + 0.2
    if width > 11:
        raise ValueError(
            f"{n} tokens this long need {width:.1f} inches, more than the 11 a page allows; "
            "use fewer or shorter tokens."
        )
    fig, ax = canvas(width, 6.6, (0, width), (-1.35, 7.0))
    xs = [left + step * (i + 0.5) for i in range(n)]
    mid = (xs[0] + xs[-1]) / 2
    span = xs[-1] - xs[0] + step * 0.9
    box_w = step - 0.15
    corrupted = [replacements.get(i, t) for i, t in enumerate(tokens)]
    replaced = [i in replacements and replacements[i] != tokens[i] for i in range(n)]
    rows = {
        6.4: "original",
        5.1: "masked input",
        4.05: "generator",
        2.95: "corrupted input",
        1.85: "discriminator",
        0.7: "per-token label",
    }
    for y, label in rows.items():
        ax.text(0.1, y, label, ha="left", va="center", fontsize=9, weight="bold" if y in (4.05, 1.85) else None)
    for i, x in enumerate(xs):
        box(ax, x, 6.4, box_w, 0.5, tokens[i], COLOURS["token"], size=9, family="monospace")
        arrow(ax, (x, 6.12), (x, 5.38))
        if i in replacements:
            box(ax, x, 5.1, box_w, 0.5, "[MASK]", COLOURS["mask"], size=9, family="monospace")
            arrow(ax, (x, 4.82), (x, 4.42))
            arrow(ax, (x, 3.68), (x, 3.23))
        else:
            box(ax, x, 5.1, box_w, 0.5, tokens[i], COLOURS["token"], size=9, family="monospace")
            # unmasked tokens pass by the generator unchanged
            ax.plot([x, x], [4.82, 4.42], color="#888888", linewidth=1, linestyle=":")
            arrow(ax, (x, 3.68), (x, 3.23), colour="#888888", linestyle=":")
        box(
            ax,
            x,
            2.95,
            box_w,
            0.5,
            corrupted[i],
            COLOURS["token"],
            size=9,
            family="monospace",
            color=EMPHASIS if replaced[i] else "black",
            weight="bold" if replaced[i] else "normal",
        )
        arrow(ax, (x, 2.67), (x, 2.22))
        arrow(ax, (x, 1.48), (x, 1.0))
        box(
            ax,
            x,
            0.7,
            box_w,
            0.5,
            "replaced" if replaced[i] else "original",
            COLOURS["output"],
            size=9,
            color=EMPHASIS if replaced[i] else "black",
            weight="bold" if replaced[i] else "normal",
        )
        if i in replacements and not replaced[i]:
            ax.text(x + 0.07, 2.45, "sample =\noriginal", ha="left", va="center", fontsize=6.5, style="italic")
    box(
        ax,
        mid,
        4.05,
        span,
        0.62,
        "generator: a small masked LM; samples a token at each [MASK]\ntrained with MLM on the masked positions only",
        COLOURS["block"],
        size=8.5,
    )
    box(
        ax,
        mid,
        1.85,
        span,
        0.62,
        "discriminator (ELECTRA, kept for fine-tuning): original or replaced?\n"
        "binary cross-entropy on EVERY token, not only the masked ones",
        COLOURS["block"],
        size=8.5,
    )
    notes = (
        "A masked LM learns from the masked positions only (15 % of tokens in BERT); the discriminator learns from all "
        f"{n} here. A sample equal to the original counts as original. Trained together: loss = MLM loss + λ x "
        "discriminator loss, λ\u00a0=\u00a050. Not a GAN: the generator is trained by maximum likelihood, and the "
        "discriminator's loss does not flow back through the sampling into it. After pre-training the generator "
        "is thrown away."
    )
    ax.text(
        width / 2, -0.2, textwrap.fill(notes, int(width * 13.5)), ha="center", va="top", fontsize=8.5, linespacing=1.4
    )
    ax.set_title("ELECTRA: replaced-token detection (Clark et al., 2020)", fontsize=11)
    return fig


def _softmax(logits: Sequence[float], temperature: float) -> list[float]:
    scaled = [z / temperature for z in logits]
    top = max(scaled)
    exps = [math.exp(z - top) for z in scaled]
    return [e / sum(exps) for e in exps]


def distillation(temperature: float = 2.0, gold_labels: bool = True) -> Figure:
    """Lesson 07. Knowledge distillation (Hinton et al., 2015), as DistilBERT uses it (Sanh et al., 2019): one input
    goes to a large trained teacher and to a smaller student; both logits are divided by the temperature T and turned
    into probabilities; the student is trained on the cross-entropy between the teacher's softened probabilities and
    its own, multiplied by T² so the gradients keep their size as T changes. The bars show an example: fixed teacher
    logits whose softmax is 0.85 / 0.15 at T = 1, and what the same logits give at ``temperature``.
    ``gold_labels``: also draw the alternative the lesson compares against, the same student trained on the gold
    labels."""
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)):
        raise ValueError(f"temperature must be a number greater than 0; got {temperature!r}.")
    if not (math.isfinite(temperature) and temperature > 0):
        raise ValueError(f"temperature must be a finite number greater than 0; got {temperature!r}.")
    t = f"{temperature:g}"
    logits = (2.10, 0.37)  # softmax: 0.85 / 0.15 at T = 1
    classes = ("positive", "negative")
    hard, soft = _softmax(logits, 1.0), _softmax(logits, temperature)
    fig, ax = canvas(10.8, 6.4, (0, 10.8), (-1.3, 7.2))
    # input and the two models
    ax.text(1.2, 3.6, 'input\n"a gorgeous,\nwitty movie."', ha="center", va="center", fontsize=9)
    arrow(ax, (1.75, 3.95), (2.55, 5.4))
    arrow(ax, (1.75, 3.25), (2.55, 1.8))
    box(ax, 3.5, 5.7, 1.9, 1.0, "teacher\nlarge, already trained\n(frozen)", COLOURS["block"], size=8.5)
    box(ax, 3.5, 1.5, 1.9, 0.8, "student\nsmaller (fewer layers)", COLOURS["block"], size=8.5)
    # logits divided by T
    arrow(ax, (4.45, 5.7), (4.95, 5.7))
    box(ax, 5.85, 5.7, 1.7, 0.8, f"softmax(z_t / T)\nT = {t}", COLOURS["output"], size=8.5)
    arrow(ax, (4.45, 1.5), (4.95, 1.5))
    box(ax, 5.85, 1.5, 1.7, 0.8, f"softmax(z_s / T)\nT = {t}", COLOURS["output"], size=8.5)
    # example bars: the teacher's probabilities at T = 1 and at T
    ax.text(
        8.85,
        6.95,
        f"example: teacher's logits z_t = ({logits[0]:.2f}, {logits[1]:.2f})",
        ha="center",
        va="center",
        fontsize=8,
    )
    base, full = 4.75, 1.5  # bar baseline and the height of probability 1
    for k, (label, probs) in enumerate((("T = 1", hard), (f"T = {t}", soft))):
        centre = 7.85 + 2.0 * k
        for j, p in enumerate(probs):
            x = centre - 0.45 + 0.55 * j
            ax.add_patch(
                Rectangle((x, base), 0.35, full * p, facecolor=COLOURS["output"], edgecolor="#555555", linewidth=0.8)
            )
            ax.text(x + 0.175, base + full * p + 0.08, f"{p:.2f}", ha="center", va="bottom", fontsize=8)
            ax.text(x + 0.175, base - 0.08, classes[j][:3] + ".", ha="center", va="top", fontsize=7)
        ax.text(centre, base - 0.45, label, ha="center", va="center", fontsize=9)
    ax.plot([7.3, 10.6], [base, base], color="#555555", linewidth=0.8)
    if temperature > 1:
        change = f"T = {t} > 1: softer;\nthe other class shows"
    elif temperature < 1:
        change = f"T = {t} < 1: sharper\n(distillation uses T > 1)"
    else:
        change = "T = 1: unchanged\n(distillation uses T > 1)"
    ax.text(9.0, base - 0.95, change, ha="center", va="center", fontsize=8, style="italic")
    arrow(ax, (6.75, 5.7), (7.3, 5.45))
    # the distillation loss
    arrow(ax, (5.85, 5.3), (5.85, 4.0))
    arrow(ax, (5.85, 1.9), (5.85, 2.95))
    box(
        ax,
        5.85,
        3.48,
        3.7,
        0.95,
        "distillation loss = T² x CE(teacher's soft\nprobabilities, student's soft probabilities)"
        f"\nT² = {temperature**2:g} keeps the gradients' size as T changes",
        COLOURS["sum"],
        size=8,
    )
    arrow(ax, (4.0, 3.48), (3.5, 1.95), colour=EMPHASIS, connectionstyle="arc3,rad=0.3")
    ax.text(2.45, 2.75, "trains the\nstudent only", ha="center", va="center", fontsize=8, color=EMPHASIS)
    if gold_labels:
        ax.text(
            3.5,
            0.15,
            "the alternative the lesson compares: the same\nstudent trained on the gold labels instead,\n"
            "CE(gold label, softmax(z_s)) at T = 1",
            ha="center",
            va="center",
            fontsize=8,
            bbox={"boxstyle": "round", "facecolor": "none", "edgecolor": "#888888", "linestyle": "--"},
        )
        arrow(ax, (3.5, 0.6), (3.5, 1.08), colour="#888888", linestyle="--")
    notes = (
        "Hinton et al. (2015) add a gold-label loss at T = 1; DistilBERT (Sanh et al., 2019) distils BERT-base into "
        "6 layers during pre-training, keeping 97 % of its GLUE score, 40 % smaller and 60 % faster. At inference "
        "the student runs at T = 1."
    )
    ax.text(5.4, -0.55, textwrap.fill(notes, 150), ha="center", va="top", fontsize=8.5, linespacing=1.4)
    ax.set_title(
        f"Knowledge distillation: a student matches the teacher's softened probabilities (T = {t})", fontsize=11
    )
    return fig


def albert_factorisation(vocab: int = 30000, hidden: int = 768, embedding: int = 128, layers: int = 12) -> Figure:
    """Lesson 07. ALBERT's two cuts in weights (Lan et al., 2020). (a) Factorised embeddings: BERT looks each token
    up in a V x H table; ALBERT in a V x E table with E < H, then projects to H with an E x H matrix (the counts
    printed are computed from the arguments). (b) Cross-layer sharing: BERT's layers each have their own weights;
    ALBERT applies one layer's weights ``layers`` times: the same compute per token, a twelfth of the layer weights
    for 12 layers. Layer weights count attention, a feed-forward of width 4H (as in both papers), their biases and
    two LayerNorms."""
    sizes = {"vocab": vocab, "hidden": hidden, "embedding": embedding, "layers": layers}
    for name, value in sizes.items():
        if not _is_int(value) or value <= 0:
            raise ValueError(f"{name} must be a positive int; got {value!r}.")
    if embedding >= hidden:
        raise ValueError(
            f"embedding (E) must be smaller than hidden (H), or factorising saves nothing; got E = {embedding}, "
            f"H = {hidden}."
        )
    v, h, e = vocab, hidden, embedding
    bert_emb, albert_emb = v * h, v * e + e * h
    per_layer = 12 * h * h + 13 * h  # Q, K, V, output (4 H² + 4 H), feed-forward (8 H² + 5 H), two LayerNorms (4 H)
    fig, (left, right) = _split(11, 5.0)
    # (a) factorised embeddings: matrix widths to scale with H and E; the V side is not
    tall, wide = 3.0, 1.6
    narrow = max(0.08, wide * e / h)
    left.add_patch(Rectangle((1.0, 1.6), wide, tall, facecolor=COLOURS["token"], edgecolor="#555555"))
    left.text(1.0 + wide / 2, 1.6 + tall / 2, "V x H", ha="center", va="center", fontsize=10)
    left.text(1.0 + wide / 2, 4.85, f"H = {h:,}", ha="center", fontsize=8)
    left.text(0.85, 1.6 + tall / 2, f"V = {v:,}", ha="right", va="center", fontsize=8, rotation=90)
    left.text(
        1.0 + wide / 2,
        1.05,
        f"BERT\n{v:,} x {h:,}\n= {_equals(bert_emb)}",
        ha="center",
        va="center",
        fontsize=8.5,
    )
    x0 = 5.2
    left.add_patch(Rectangle((x0, 1.6), narrow, tall, facecolor=COLOURS["token"], edgecolor="#555555"))
    left.text(x0 - 0.15, 1.6 + tall / 2, f"V = {v:,}", ha="right", va="center", fontsize=8, rotation=90)
    left.text(x0 + narrow + 0.1, 4.35, "V x E", ha="left", va="center", fontsize=10)
    left.text(x0 + narrow / 2, 4.85, f"E = {e:,}", ha="center", fontsize=8)
    arrow(left, (x0 + narrow + 0.15, 3.1), (x0 + narrow + 0.75, 3.1))
    px = x0 + narrow + 0.85
    proj_h = max(0.08, narrow)
    left.add_patch(Rectangle((px, 3.1 - proj_h / 2), wide, proj_h, facecolor=COLOURS["block"], edgecolor="#555555"))
    left.text(px + wide / 2, 3.1 + proj_h / 2 + 0.15, "E x H", ha="center", va="bottom", fontsize=10)
    left.text(px + wide / 2, 3.1 - proj_h / 2 - 0.15, f"H = {h:,}", ha="center", va="top", fontsize=8)
    left.text(
        (x0 + px + wide) / 2,
        1.05,
        f"ALBERT\n{v:,} x {e:,} + {e:,} x {h:,}\n= {_equals(albert_emb)}",
        ha="center",
        va="center",
        fontsize=8.5,
    )
    left.text(
        5.0,
        0.3,
        f"the embedding weights: {bert_emb / albert_emb:.1f} times fewer (widths to scale; V is not)",
        ha="center",
        va="center",
        fontsize=8,
        style="italic",
    )
    left.set_title("(a) factorised embeddings: V x E, then E x H", fontsize=10)
    # (b) cross-layer sharing
    shown = list(range(1, layers + 1)) if layers <= 12 else [1, 2, 3, 4, None, layers - 1, layers]
    slot = 3.6 / len(shown)
    for k, layer in enumerate(shown):
        y = 1.6 + slot * (k + 0.5)
        if layer is None:
            right.text(2.3, y, "...", ha="center", va="center", fontsize=10, rotation=90)
        else:
            box(right, 2.3, y, 2.6, slot * 0.72, f"layer {layer}: its own weights", COLOURS["block"], size=7)
    right.text(
        2.3,
        1.05,
        f"BERT: {layers} x {_count(per_layer)} = {_count(layers * per_layer)}",
        ha="center",
        va="center",
        fontsize=8.5,
    )
    box(right, 7.3, 3.4, 3.2, 1.0, "one layer's weights,\nshared by every layer", COLOURS["block"], size=8.5)
    right.add_patch(
        FancyArrowPatch(
            (8.9, 3.75),
            (8.9, 3.05),
            arrowstyle="-|>",
            mutation_scale=10,
            color=EMPHASIS,
            linewidth=1,
            connectionstyle="arc3,rad=-1.0",
        )
    )
    right.text(9.5, 3.4, f"applied\n{layers} times", ha="left", va="center", fontsize=8, color=EMPHASIS)
    arrow(right, (7.3, 2.2), (7.3, 2.85))
    arrow(right, (7.3, 3.95), (7.3, 4.6))
    right.text(7.3, 2.0, "input", ha="center", va="center", fontsize=8)
    right.text(7.3, 4.8, f"output after {layers} passes", ha="center", va="center", fontsize=8)
    right.text(7.3, 1.05, f"ALBERT: {_count(per_layer)}", ha="center", va="center", fontsize=8.5)
    right.text(
        5.0,
        0.3,
        "the same compute per token; the layer weights stored once",
        ha="center",
        va="center",
        fontsize=8,
        style="italic",
    )
    right.set_title("(b) cross-layer sharing: one set of weights, shared", fontsize=10)
    fig.suptitle(
        f"ALBERT's two cuts in weights (Lan et al., 2020): V = {v:,}, H = {h:,}, E = {e:,}, {layers} layers",
        fontsize=11,
    )
    fig.text(
        0.5,
        0.0,
        "layer weights: attention and a feed-forward of width 4H with their biases, and two LayerNorms",
        ha="center",
        fontsize=8,
    )
    fig.tight_layout()
    return fig


def _split(width: float, height: float):
    """A figure of two blank panels side by side, each 10.6 x 5.4 in data units."""
    fig, axes = plt.subplots(1, 2, figsize=(width, height))
    for ax in axes:
        ax.set(xlim=(0, 10.6), ylim=(-0.2, 5.2))
        ax.axis("off")
    return fig, axes
