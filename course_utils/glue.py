"""The nine GLUE tasks (Wang et al., 2018) as data: inputs, labels, split sizes, metric; and a loader by task name.

    GLUE_TASKS["mrpc"].metrics        # ('f1', 'accuracy')
    glue_table()                      # all nine as a pandas DataFrame
    load_glue("rte", "validation")    # hub nyu-mll/glue when reachable, else the mirror; an error when neither has it

Lesson 03a introduces the tasks; 03b, 04, 07 and 08 load them from here.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .resources import load_dataset

GLUE_HUB = "nyu-mll/glue"


@dataclass(frozen=True)
class GlueTask:
    """One GLUE task. ``labels`` is empty for the regression task (STS-B: a similarity score from 0 to 5)."""

    name: str
    description: str
    inputs: tuple[str, ...]  # text columns: one sentence, or a pair joined by [SEP] with segment ids 0 / 1
    labels: tuple[str, ...]  # class names in label-id order
    sizes: dict[str, int]  # rows per split (hub version)
    metrics: tuple[str, ...]  # what the GLUE leaderboard reports, main metric first
    validation_split: str = "validation"

    @property
    def is_regression(self) -> bool:
        return not self.labels

    @property
    def num_labels(self) -> int:
        """What ``AutoModelForSequenceClassification`` needs: classes, or 1 output for regression."""
        return len(self.labels) or 1

    @property
    def metric(self) -> str:
        return self.metrics[0]


def _task(name, description, inputs, labels, train, validation, test, metrics, validation_split="validation"):
    sizes = {"train": train, validation_split: validation, "test": test}
    return GlueTask(name, description, inputs, labels, sizes, metrics, validation_split)


# fmt: off
GLUE_TASKS: dict[str, GlueTask] = {t.name: t for t in [
    _task("cola", "grammatical acceptability", ("sentence",), ("unacceptable", "acceptable"),
          8551, 1043, 1063, ("matthews_correlation",)),
    _task("sst2", "movie-review sentiment", ("sentence",), ("negative", "positive"), 67349, 872, 1821, ("accuracy",)),
    _task("mrpc", "paraphrase (news)", ("sentence1", "sentence2"), ("not_equivalent", "equivalent"),
          3668, 408, 1725, ("f1", "accuracy")),
    _task("stsb", "semantic similarity, 0-5", ("sentence1", "sentence2"), (), 5749, 1500, 1379,
          ("pearsonr", "spearmanr")),
    _task("qqp", "paraphrase (Quora questions)", ("question1", "question2"), ("not_duplicate", "duplicate"),
          363846, 40430, 390965, ("f1", "accuracy")),
    _task("mnli", "entailment, 3 classes", ("premise", "hypothesis"), ("entailment", "neutral", "contradiction"),
          392702, 9815, 9796, ("accuracy",), validation_split="validation_matched"),
    _task("qnli", "does the sentence answer the question", ("question", "sentence"), ("entailment", "not_entailment"),
          104743, 5463, 5463, ("accuracy",)),
    _task("rte", "entailment, 2 classes", ("sentence1", "sentence2"), ("entailment", "not_entailment"),
          2490, 277, 3000, ("accuracy",)),
    _task("wnli", "pronoun resolution as entailment", ("sentence1", "sentence2"), ("not_entailment", "entailment"),
          635, 71, 146, ("accuracy",)),
]}
# fmt: on


def glue_task(name: str) -> GlueTask:
    """The task called ``name`` (case-insensitive), or an error listing the nine."""
    key = name.strip().lower().replace("-", "") if isinstance(name, str) else name
    if key not in GLUE_TASKS:
        raise ValueError(f"Unknown GLUE task {name!r}. Accepted: {', '.join(GLUE_TASKS)}.")
    return GLUE_TASKS[key]


def glue_table():
    """All nine tasks in one DataFrame: inputs, labels, sizes, metrics."""
    return pd.DataFrame(
        [
            {
                "task": t.name,
                "what": t.description,
                "inputs": " + ".join(t.inputs),
                "labels": ", ".join(t.labels) if t.labels else "score 0-5 (regression)",
                "train": t.sizes["train"],
                "validation": t.sizes[t.validation_split],
                "metric": ", ".join(t.metrics),
            }
            for t in GLUE_TASKS.values()
        ]
    ).set_index("task")


def load_glue(task: str, split: str | None = None):
    """A GLUE task by name through the course resolver (hub ``nyu-mll/glue``, else the offline mirror).

    Checks that the label column is there; a task or split that is not available offline fails with a message that
    names it and says how to get it.
    """
    t = glue_task(task)
    if split is not None and split not in t.sizes and split not in ("validation_mismatched", "test_mismatched"):
        raise ValueError(f"GLUE {t.name} has no split {split!r}. Accepted: {', '.join(t.sizes)}.")
    try:
        ds = load_dataset(GLUE_HUB, t.name, split=split)
    except (ValueError, FileNotFoundError) as err:
        raise FileNotFoundError(
            f"GLUE task {t.name!r}{f' (split {split!r})' if split else ''} is not available here: {err} "
            f"It is on the hub as {GLUE_HUB} config {t.name!r}: run online (unset HF_HUB_OFFLINE), or add it to the "
            f"mirror in hub layout. Offline, the mirror has: cola, sst2, mrpc, stsb, rte, wnli (train and "
            "validation) and the qnli validation set."
        ) from err
    for part in [ds] if split is not None else ds.values():
        missing = [c for c in (*t.inputs, "label") if c not in part.column_names]
        if missing:
            raise ValueError(f"GLUE {t.name}: column(s) {missing} missing; found {part.column_names}.")
    return ds


def check_num_labels(model, task: str) -> None:
    """Refuse a sequence-classification model whose output size does not fit the task."""
    t = glue_task(task)
    got = getattr(getattr(model, "config", None), "num_labels", None)
    if got != t.num_labels:
        kind = "1 output (regression)" if t.is_regression else f"{t.num_labels} labels ({', '.join(t.labels)})"
        raise ValueError(
            f"The model has num_labels={got}, but GLUE {t.name} needs {kind}. Load it with "
            f"AutoModelForSequenceClassification.from_pretrained(..., num_labels={t.num_labels})."
        )
