"""Metrics through evaluate's API, offline: ``load_metric("accuracy").compute(predictions=..., references=...)``.

``evaluate.load("accuracy")`` downloads its script from the hub, which fails offline. The course ships its own metric
modules (this folder), backed by maintained libraries (scikit-learn, scipy), and loads them with ``evaluate.load``
from a local path, so students use exactly evaluate's ``load`` / ``compute`` / ``add_batch``.
"""
from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
SCORES = ("accuracy", "f1", "matthews_correlation", "pearsonr", "spearmanr")


def load_metric(name: str, config_name: str | None = None):
    """An ``evaluate.EvaluationModule``: ``load_metric("f1")``, or ``load_metric("glue", "mrpc")`` for a GLUE task's
    official scores (like evaluate's own ``glue`` metric)."""
    import evaluate

    from .. import quiet
    from ..glue import GLUE_TASKS

    quiet.quiet_if_asked()
    if name == "glue":
        if config_name not in GLUE_TASKS:
            raise ValueError(f"load_metric('glue', ...) needs a GLUE task; got {config_name!r}. Accepted: {', '.join(GLUE_TASKS)}.")
        config = f"glue-{config_name}"
    elif name in SCORES and config_name is None:
        config = name
    else:
        raise ValueError(
            f"No course metric {name!r}{f' ({config_name!r})' if config_name else ''}. Accepted: "
            f"{', '.join(SCORES)}, and 'glue' with a task name ({', '.join(GLUE_TASKS)})."
        )
    return evaluate.load(str(HERE / "course_scores"), config)
