"""Fine-tuning a sequence classifier on a GLUE task: encode, batch efficiently, train, predict, score.

Batches are padded only to their own longest sequence (``DataCollatorWithPadding``) and, when asked, drawn by
transformers' ``LengthGroupedSampler`` so that sequences of similar length share a batch. The model is any
``AutoModelForSequenceClassification`` (it returns ``.loss`` when given ``labels``; regression when num_labels=1).
"""
from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import torch

from .glue import check_num_labels, glue_task
from .quiet import is_quiet


def check_fits(model, encoded: list[dict]) -> None:
    """Every encoded example must fit the model's position embeddings."""
    longest = max((len(e["input_ids"]) for e in encoded), default=0)
    positions = model.config.max_position_embeddings
    if longest > positions:
        raise ValueError(
            f"An example has {longest} tokens but the model has only {positions} position embeddings: encode with "
            f"encode_task(..., max_length={positions}) or less."
        )


def check_max_length(model, max_length: int) -> None:
    """Sequences may not be longer than the model's position embeddings."""
    positions = model.config.max_position_embeddings
    if not isinstance(max_length, int) or not 2 < max_length <= positions:
        raise ValueError(
            f"max_length={max_length!r} does not fit the model: it has {positions} position embeddings. "
            f"Accepted: an int from 3 to {positions}."
        )


def encode_task(tokenizer, dataset, task: str, max_length: int) -> list[dict]:
    """Tokenize a GLUE split -> one dict per example with input_ids, token_type_ids (pairs: 0 then 1) and labels.

    Sentence pairs become ``[CLS] first [SEP] second [SEP]``; pairs too long are cut from the longer side.
    """
    t = glue_task(task)
    texts = [list(dataset[column]) for column in t.inputs]
    enc = tokenizer(*texts, truncation=True, max_length=max_length)
    labels = [float(x) for x in dataset["label"]] if t.is_regression else [int(x) for x in dataset["label"]]
    keys = [k for k in ("input_ids", "token_type_ids") if k in enc]
    return [{**{k: enc[k][i] for k in keys}, "labels": labels[i]} for i in range(len(labels))]


def batches(encoded: list[dict], tokenizer, batch_size: int, *, shuffle: bool = False, group_by_length: bool = False,
            seed: int = 0) -> Iterator[dict]:
    """Dynamically padded batches (dicts of tensors [B, T_batch]); optionally shuffled and grouped by length."""
    from transformers import DataCollatorWithPadding
    from transformers.trainer_pt_utils import LengthGroupedSampler

    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int; got {batch_size!r}.")
    g = torch.Generator().manual_seed(seed)
    if group_by_length:
        order = list(LengthGroupedSampler(batch_size, lengths=[len(e["input_ids"]) for e in encoded], generator=g))
    elif shuffle:
        order = torch.randperm(len(encoded), generator=g).tolist()
    else:
        order = list(range(len(encoded)))
    collate = DataCollatorWithPadding(tokenizer)
    for start in range(0, len(order), batch_size):
        yield collate([encoded[i] for i in order[start:start + batch_size]])


def train_classifier(model, tokenizer, train: list[dict], task: str, *, epochs: float = 1, lr: float = 5e-5,
                     batch_size: int = 32, warmup_ratio: float = 0.1, weight_decay: float = 0.01, seed: int = 0,
                     progress: bool | None = None) -> list[float]:
    """AdamW with linear warmup and decay over ``epochs`` passes (fractions allowed); returns the loss of every step.

    Only parameters with ``requires_grad`` are trained, so a frozen encoder trains just its head.
    """
    from tqdm.auto import tqdm
    from transformers import get_linear_schedule_with_warmup

    check_num_labels(model, task)
    check_fits(model, train)
    if not 0 <= warmup_ratio < 1:
        raise ValueError(f"warmup_ratio must be in [0, 1); got {warmup_ratio}.")
    if epochs <= 0:
        raise ValueError(f"epochs must be positive; got {epochs}.")
    device = next(model.parameters()).device
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=lr, weight_decay=weight_decay)
    steps_per_epoch = math.ceil(len(train) / batch_size)
    total = max(1, round(epochs * steps_per_epoch))
    schedule = get_linear_schedule_with_warmup(optimizer, round(warmup_ratio * total), total)
    losses: list[float] = []
    bar = tqdm(total=total, desc=f"fine-tuning on {task}", disable=is_quiet() if progress is None else not progress,
               leave=False)
    model.train()
    epoch = 0
    while len(losses) < total:
        for batch in batches(train, tokenizer, batch_size, group_by_length=True, seed=seed + epoch):
            loss = model(**{k: v.to(device) for k, v in batch.items()}).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(trainable, 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad(set_to_none=True)
            losses.append(float(loss.detach()))
            bar.update(1)
            if len(losses) == total:
                break
        epoch += 1
    bar.close()
    model.eval()
    return losses


@torch.no_grad()
def predict(model, tokenizer, encoded: list[dict], batch_size: int = 128) -> np.ndarray:
    """Logits [N, num_labels] (regression: [N, 1]) in the order of ``encoded``.

    Examples are run shortest first, so each batch pads little, and the rows are put back in their order.
    """
    check_fits(model, encoded)
    model.eval()
    device = next(model.parameters()).device
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]["input_ids"]))
    out = [model(**{k: v.to(device) for k, v in batch.items() if k != "labels"}).logits.float().cpu()
           for batch in batches([encoded[i] for i in order], tokenizer, batch_size)]
    logits = torch.cat(out).numpy()
    restored = np.empty_like(logits)
    restored[order] = logits
    return restored


def score(logits: np.ndarray, encoded: list[dict], task: str) -> dict[str, float]:
    """The task's GLUE metrics (through evaluate's API) for ``logits`` from ``predict``."""
    from transformers import EvalPrediction

    labels = np.array([e["labels"] for e in encoded])
    return trainer_metrics(task)(EvalPrediction(predictions=logits, label_ids=labels))


def trainer_metrics(task: str):
    """A ``compute_metrics`` for ``transformers.Trainer``: EvalPrediction -> the task's GLUE metrics."""
    from .metrics import load_metric

    t = glue_task(task)
    metric = load_metric("glue", t.name)

    def compute(prediction) -> dict[str, float]:
        logits = prediction.predictions[0] if isinstance(prediction.predictions, tuple) else prediction.predictions
        predictions = logits[:, 0] if t.is_regression else logits.argmax(axis=-1)
        return metric.compute(predictions=predictions, references=prediction.label_ids)

    return compute
