"""Lesson 08: prompting a masked LM.

* ``pet_pattern`` — a pattern turns an example into a cloze; a verbalizer maps label words to labels (Schick &
  Schütze, 2021).
"""

from __future__ import annotations

from collections.abc import Mapping

from .drawing import COLOURS, arrow, box, canvas


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
    fig, ax = canvas(10, 4.4, (0, 10), (0, 6))
    ax.text(5.0, 5.6, f'example: "{text}"  (label unknown to the model)', ha="center", fontsize=9)
    arrow(ax, (5.0, 5.35), (5.0, 4.95))
    before, after = pattern.replace("{text}", text).split("[MASK]")
    ax.text(5.0, 4.6, f"pattern:  {pattern}", ha="center", fontsize=9, family="monospace", color="#555555")
    ax.text(5.0, 4.05, before, ha="right", va="center", fontsize=10, family="monospace")
    box(ax, 5.55, 4.05, 1.1, 0.5, "[MASK]", COLOURS["mask"], size=10, family="monospace")
    ax.text(6.15, 4.05, after, ha="left", va="center", fontsize=10, family="monospace")
    arrow(ax, (5.55, 3.75), (5.55, 3.25))
    box(ax, 5.55, 2.85, 5.0, 0.7, "masked LM: a score for every vocabulary word at [MASK]", COLOURS["block"], size=9)
    for i, (label, word) in enumerate(verbalizer.items()):
        x = 3.3 + 4.5 * i
        arrow(ax, (5.55, 2.45), (x, 1.75))
        score = f"  logit {scores[label]:.2f}" if label in scores else ""
        box(ax, x, 1.4, 2.6, 0.6, f'"{word}"{score}', COLOURS["output"], size=9)
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
