"""Domain- and task-adaptive pretraining (DAPT / TAPT; Gururangan et al., 2020): keep training a pretrained masked
language model on text of the target domain (DAPT) or of the task itself (TAPT), then fine-tune it as usual.

The pieces lesson 05 reuses: the SciBERT classification tasks with their label sets checked, corpora shuffled or cut
to a number of sentences, continued MLM training on a copy of a model, and a classifier on an MLM's encoder (cutting
two corpora to the same number of tokens is the lesson's Exercise 1, so it is not here).
Corpora become MLM blocks with ``packing.corpus_blocks``; selective fine-tuning is ``training.train_only``. Lesson 06
reuses ``continue_pretraining`` to teach a model facts, and lesson 08 ``classifier`` for its [CLS] head.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Sequence

import torch

from .heads import PooledClassifier
from .pretraining import History, pretrain_mlm
from .resources import load_dataset
from .training import train_only

# shipped with the course: SciBERT's tasks, chemprot (13 relations) and acl_arc (6 intents)
TASKS = "scibert_text_classification"


def check_label_sets(splits, task: str = "the task") -> list[str]:
    """The training split's label names, sorted; raises when another split has a label the training split lacks
    (a model cannot predict a class it never saw, and its score would be silently wrong)."""
    if "train" not in splits:
        raise ValueError(f"{task} has no 'train' split; it has {', '.join(splits)}.")
    names = sorted(set(splits["train"]["label"]))
    for split in splits:
        unseen = sorted(set(splits[split]["label"]) - set(names))
        if unseen:
            raise ValueError(
                f"The {split} split of {task} has label(s) {unseen} that its training split lacks "
                f"(training labels: {names}). Use splits that share one label set."
            )
    return names


def load_task(config: str):
    """A SciBERT classification task by config (``chemprot`` or ``acl_arc``) -> (DatasetDict with an int
    ``label_id`` column added, label names)."""
    splits = load_dataset(TASKS, config)
    names = check_label_sets(splits, f"{TASKS}/{config}")
    index = {name: i for i, name in enumerate(names)}
    return splits.map(lambda row: {"label_id": index[row["label"]]}), names


def sample_texts(texts: Sequence[str], n: int, seed: int = 0) -> list[str]:
    """``n`` texts drawn without replacement (the same ones for the same seed): corpora cut to one size, so that a
    comparison between domains is not a comparison between amounts of text."""
    texts = list(texts)
    if not isinstance(n, int) or not 1 <= n <= len(texts):
        raise ValueError(f"Cannot draw n={n!r} texts from a corpus of {len(texts)}. Accepted: 1 to {len(texts)}.")
    return random.Random(seed).sample(texts, n)


def continue_pretraining(
    model,
    tokenizer,
    blocks: torch.Tensor,
    eval_blocks: torch.Tensor,
    *,
    steps: int,
    batch_size: int,
    lr: float,
    warmup_ratio: float = 0.1,
    eval_every: int | None = None,
    seed: int = 0,
    mixed_precision: bool | None = None,
    progress: bool | None = None,
    top_layers: int | None = None,
):
    """MLM training of a *copy* of ``model`` (a ``BertForMaskedLM``) on ``blocks`` [N, T] -> (adapted model in eval
    mode, ``History`` with the loss on ``eval_blocks`` at the start, every ``eval_every`` steps and at the end).
    The original model is left as it was, so one general model can be adapted several ways. ``mixed_precision``:
    as in ``pretrain_mlm`` (None follows the running profile). ``top_layers``: train only the MLM head and the top
    layers (``training.train_only``; lesson 06 on the course's English MLM), None trains every weight."""
    adapted = copy.deepcopy(model)
    if top_layers is not None:
        train_only(adapted, top_layers)
    history: History = pretrain_mlm(
        adapted,
        tokenizer,
        blocks,
        eval_blocks,
        steps=steps,
        batch_size=batch_size,
        lr=lr,
        warmup_steps=round(warmup_ratio * steps),
        eval_every=eval_every or steps,
        seed=seed,
        mixed_precision=mixed_precision,
        progress=progress,
    )
    return adapted.eval(), history


def classifier(mlm_model, num_labels: int, pooling: str = "mean", dropout: float = 0.1) -> PooledClassifier:
    """A sentence classifier on a copy of an MLM's encoder (``mlm_model.base_model``); the MLM head is left out."""
    return PooledClassifier(copy.deepcopy(mlm_model.base_model), num_labels, pooling, dropout)
