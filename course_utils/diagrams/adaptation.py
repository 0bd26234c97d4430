"""Lesson 05: continued pretraining before fine-tuning.

* ``dapt_tapt_pipeline`` — domain- and task-adaptive pretraining, and the wrong-domain control (Gururangan et al.,
  2020).
"""

from __future__ import annotations

import textwrap

from matplotlib.figure import Figure

from .drawing import COLOURS, arrow, box, canvas


def _check_name(name: str, value) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name} must be a non-empty string, e.g. 'biomedical papers' or 'ChemProt'; got {value!r}.")
    return value.strip()


def dapt_tapt_pipeline(domain: str = "biomedical papers", task: str = "ChemProt") -> Figure:
    """Lesson 05. Gururangan et al. (2020), "Don't Stop Pretraining": a general pretrained masked LM (RoBERTa in the
    paper; the course's own small BERT, or bert-base-uncased in the full profile) keeps training with the masked-LM
    objective on a large unlabelled corpus of the task's domain (DAPT), then on the task's own training inputs with
    their labels dropped (TAPT), and is then fine-tuned on the labelled task. DAPT and TAPT each work alone too; when
    both run, DAPT comes first. The wrong-domain control (the paper's ¬DAPT) runs the same continued pretraining on
    another domain's corpus, so a gain from the domain can be told from a gain from extra pretraining. ``domain``
    and ``task`` set the labels."""
    domain, task = _check_name("domain", domain), _check_name("task", task)
    fig, ax = canvas(11, 5.8, (0, 11.2), (-0.6, 7.0))
    y, h, w = 3.9, 2.0, 2.55
    xs = {"general": 1.35, "dapt": 4.2, "tapt": 7.05, "fine": 9.9}

    def stage(x: float, heading: str, body: str, colour: str, top: float = y + h / 2, height: float = h) -> None:
        box(ax, x, top - height / 2, w if height == h else 6.0, height, "", colour)
        ax.text(x, top - 0.25, heading, ha="center", va="center", fontsize=10, weight="bold")
        body = "\n".join(textwrap.fill(line, 32 if height == h else 80) for line in body.split("\n"))
        ax.text(x, top - 0.45, body, ha="center", va="top", fontsize=8)

    stage(
        xs["general"],
        "general masked LM",
        "RoBERTa in the paper; the course: its own small BERT (full profile: bert-base-uncased)\n"
        "already pretrained on broad text\nlabels: none",
        COLOURS["block"],
    )
    stage(
        xs["dapt"],
        "DAPT",
        f"continue masked-LM pretraining\nreads: an unlabelled corpus of {domain}\n"
        "(the paper: billions of tokens)\nlabels: none",
        COLOURS["mask"],
    )
    stage(
        xs["tapt"],
        "TAPT",
        f"continue masked-LM pretraining\nreads: {task}'s own training inputs as unlabelled text\n"
        "labels: none (dropped)\n100 epochs in the paper",
        COLOURS["mask"],
    )
    stage(
        xs["fine"],
        "fine-tune",
        f"train on the labelled task\nreads: {task}'s training examples with their labels\n"
        "labels: yes (a new classifier\nhead on the encoder)",
        COLOURS["output"],
    )
    # the full pipeline: general -> DAPT -> TAPT -> fine-tune
    for a, b in (("general", "dapt"), ("dapt", "tapt"), ("tapt", "fine")):
        arrow(ax, (xs[a] + w / 2, y), (xs[b] - w / 2, y))
    # TAPT alone: over the top, skipping DAPT
    arrow(
        ax,
        (xs["general"] + 0.3, y + h / 2),
        (xs["tapt"] - 0.3, y + h / 2),
        connectionstyle="arc3,rad=-0.25",
        linestyle="--",
    )
    ax.text(xs["dapt"], 5.75, "TAPT alone (skip DAPT)", ha="center", va="bottom", fontsize=8.5)
    # DAPT alone: underneath, skipping TAPT
    arrow(
        ax,
        (xs["dapt"] + 0.3, y - h / 2),
        (xs["fine"] - 0.3, y - h / 2),
        connectionstyle="arc3,rad=0.25",
        linestyle="--",
    )
    ax.text(xs["tapt"], 2.05, "DAPT alone (skip TAPT)", ha="center", va="top", fontsize=8.5)
    # the wrong-domain control: a side branch, same procedure, another domain's text
    cx, cy, ch = 5.6, 0.4, 1.2
    stage(
        cx,
        "control: the wrong domain",
        "the same continued masked-LM pretraining, with the same number of steps,\n"
        "on an unlabelled corpus of another domain; labels: none\n"
        "if it helps as much as DAPT, extra pretraining did it, not the domain",
        COLOURS["mask"],
        top=cy + ch / 2,
        height=ch,
    )
    arrow(ax, (xs["general"] - 0.3, y - h / 2), (cx - 3.0, cy), connectionstyle="arc3,rad=0.25", linestyle=":")
    arrow(ax, (cx + 3.0, cy), (xs["fine"] + 0.6, y - h / 2), connectionstyle="arc3,rad=0.25", linestyle=":")
    ax.text(
        5.6,
        6.75,
        "every route ends in the same fine-tuning; lesson 05 compares: general (no continued pretraining), DAPT, "
        "TAPT, DAPT then TAPT, wrong domain",
        ha="center",
        va="center",
        fontsize=8.5,
    )
    ax.set_title("Don't stop pretraining (Gururangan et al., 2020): DAPT, TAPT, then fine-tune", fontsize=11)
    return fig
