"""Metrics through evaluate's API, offline: ``load_metric("accuracy").compute(predictions=..., references=...)``.

``evaluate.load("accuracy")`` downloads its script from the hub, which fails offline. The course ships its own metric
modules (this folder), backed by maintained libraries (scikit-learn, scipy, seqeval, rouge_score), and loads them with
``evaluate.load`` from a local path, so students use exactly evaluate's ``load`` / ``compute`` / ``add_batch``.
Lesson 03a introduces them; 03b, 03c (seqeval), 03d (SQuAD), 04 (ROUGE) and 05 use them.
"""

from __future__ import annotations

from pathlib import Path

import evaluate

from .. import quiet
from ..glue import GLUE_TASKS

HERE = Path(__file__).resolve().parent
SCORES = ("accuracy", "f1", "matthews_correlation", "pearsonr", "spearmanr")
# name -> folder; each is one metric, no config
MODULES = {"seqeval": "course_seqeval", "squad": "course_squad", "rouge": "course_rouge"}


def load_metric(name: str, config_name: str | None = None):
    """An ``evaluate.EvaluationModule``: ``load_metric("f1")``, ``load_metric("glue", "mrpc")`` for a GLUE task's
    official scores (like evaluate's own ``glue`` metric), ``load_metric("seqeval")`` for entity-level NER scores or
    ``load_metric("squad")`` for SQuAD v1.1 exact match / F1, ``load_metric("rouge")`` for ROUGE-1/2/L/Lsum
    (inputs and outputs as evaluate's metrics of those names)."""
    quiet.quiet_if_asked()
    if name == "glue":
        if config_name not in GLUE_TASKS:
            raise ValueError(
                f"load_metric('glue', ...) needs a GLUE task; got {config_name!r}. Accepted: {', '.join(GLUE_TASKS)}."
            )
        config = f"glue-{config_name}"
    elif name in SCORES and config_name is None:
        config = name
    elif name in MODULES and config_name is None:
        return evaluate.load(str(HERE / MODULES[name]))
    else:
        raise ValueError(
            f"No course metric {name!r}{f' ({config_name!r})' if config_name else ''}. Accepted: "
            f"{', '.join(SCORES)}, {', '.join(MODULES)} (none of these takes a config), and 'glue' with a task name "
            f"({', '.join(GLUE_TASKS)})."
        )
    return evaluate.load(str(HERE / "course_scores"), config)
