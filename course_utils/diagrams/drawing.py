"""What every course diagram is drawn with: one colour per kind of thing, rounded boxes, arrows and a blank canvas.
Introduced with the first diagram (lesson 02); the diagrams of every lesson use it."""

from __future__ import annotations

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
EMPHASIS = "#cc0000"  # text and arrows the eye should catch: a loss, its gradient, a replaced token


def box(ax, x: float, y: float, w: float, h: float, text: str, colour: str, size: int = 9, **kw) -> None:
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


def arrow(ax, start: tuple[float, float], end: tuple[float, float], colour: str = "#555555", **kw) -> None:
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=10, color=colour, linewidth=1, **kw))


def canvas(width: float, height: float, xlim: tuple[float, float], ylim: tuple[float, float]):
    fig, ax = plt.subplots(figsize=(width, height))
    ax.set(xlim=xlim, ylim=ylim)
    ax.axis("off")
    return fig, ax


def row_labels(ax, x: float, labels: dict[float, str], size: float = 9) -> None:
    """Name the rows of a diagram at the left edge: ``labels`` maps each row's height to its name."""
    for y, label in labels.items():
        ax.text(x, y, label, ha="left", va="center", fontsize=size)


def note(ax, x: float, y: float, text: str, ha: str = "left", size: float = 8) -> None:
    """A grey italic aside: what a reader should notice, not a part of the model."""
    ax.text(x, y, text, ha=ha, va="center", fontsize=size, color="#555555", style="italic")
