"""Fine-tuning an encoder: encode a GLUE task, batch efficiently, train, predict, score.

Batches are padded only to their own longest sequence (``DataCollatorWithPadding``) and, when asked, drawn by
transformers' ``LengthGroupedSampler`` so that sequences of similar length share a batch. The steps are the course's
one training loop (``course_utils.training_loop``). ``fine_tune`` trains any
transformers head that returns ``.loss`` (sequence or token classification, question answering);
``train_classifier`` / ``predict`` / ``score`` are its GLUE versions (regression when num_labels=1), and
``forward_rows`` gives per-token outputs for token classification and QA.

Lesson 03a introduces this loop (its steps are shown in the open there); 03b, 03c, 03d, 05, 07 and 08 reuse it.
"""

from __future__ import annotations

import numpy as np
import torch
from transformers import DataCollatorWithPadding, EvalPrediction, get_linear_schedule_with_warmup
from transformers.trainer_pt_utils import LengthGroupedSampler

from .glue import check_num_labels, glue_task
from .metrics import load_metric
from .training import adamw, check_fits, shortest_first
from .training_loop import EpochBatches, accelerator_for, check_divides, floats, loader, progress_bar, train_steps


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


def fine_tune(
    model,
    tokenizer,
    train: list[dict],
    *,
    epochs: float = 1,
    lr: float = 5e-5,
    batch_size: int = 32,
    warmup_ratio: float = 0.1,
    weight_decay: float = 0.01,
    seed: int = 0,
    collate=None,
    mixed_precision: bool | None = None,
    progress: bool | None = None,
    desc: str = "fine-tuning",
) -> list[float]:
    """The fine-tuning loop for any transformers head that returns ``.loss`` (sequence or token classification,
    question answering): AdamW, linear warmup then decay over ``epochs`` passes (fractions allowed), gradient
    clipping at 1.0, length-grouped dynamically padded batches from a ``DataLoader``. Returns the loss of every step.

    Only parameters with ``requires_grad`` are trained, so a frozen encoder trains just its head. The loop runs on
    accelerate (``course_utils.training_loop``): one CPU or GPU, or several processes under ``accelerate launch``, where
    ``batch_size`` is the global batch, split evenly (there, an epoch's last, shorter batch is left out).
    ``mixed_precision``: autocast to bf16 (fp16 with loss scaling on GPUs without bf16); None follows the running
    profile (on in ``full``, so bert-base fine-tunes in 16-bit on a GPU).
    """
    check_fits(model, train)
    if not 0 <= warmup_ratio < 1:
        raise ValueError(f"warmup_ratio must be in [0, 1); got {warmup_ratio}.")
    if epochs <= 0:
        raise ValueError(f"epochs must be positive; got {epochs}.")
    if not train:
        raise ValueError("No training examples: pass a non-empty list of encoded examples.")
    accelerator = accelerator_for(next(model.parameters()).device, mixed_precision)
    check_divides(batch_size, accelerator)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = adamw(trainable, lr=lr, weight_decay=weight_decay)
    lengths = [len(e["input_ids"]) for e in train]
    sampler = EpochBatches(
        len(train),
        batch_size,
        drop_last=accelerator.num_processes > 1,
        order=lambda epoch: list(
            LengthGroupedSampler(batch_size, lengths=lengths, generator=torch.Generator().manual_seed(seed + epoch))
        ),
    )
    total = max(1, round(epochs * len(sampler)))
    schedule = get_linear_schedule_with_warmup(optimizer, round(warmup_ratio * total), total)
    rows = loader(train, sampler, collate or DataCollatorWithPadding(tokenizer))
    bar = progress_bar(total, desc, accelerator, progress)
    run = train_steps(
        model,
        optimizer,
        schedule,
        rows,
        total,
        accelerator=accelerator,
        loss=lambda prepared, batch: prepared(**batch).loss,
        bar=bar,
    )
    losses = [step.loss for step in run]  # left on the device until the end: one wait, not one per step
    bar.close()
    model.eval()
    return floats(losses)


def train_classifier(
    model,
    tokenizer,
    train: list[dict],
    task: str,
    *,
    epochs: float = 1,
    lr: float = 5e-5,
    batch_size: int = 32,
    warmup_ratio: float = 0.1,
    weight_decay: float = 0.01,
    seed: int = 0,
    mixed_precision: bool | None = None,
    progress: bool | None = None,
) -> list[float]:
    """``fine_tune`` for a GLUE task's ``AutoModelForSequenceClassification`` (its num_labels is checked first)."""
    check_num_labels(model, task)
    return fine_tune(
        model,
        tokenizer,
        train,
        epochs=epochs,
        lr=lr,
        batch_size=batch_size,
        warmup_ratio=warmup_ratio,
        weight_decay=weight_decay,
        seed=seed,
        mixed_precision=mixed_precision,
        progress=progress,
        desc=f"fine-tuning on {task}",
    )


@torch.no_grad()
def forward_rows(
    model, tokenizer, encoded: list[dict], outputs: tuple[str, ...] = ("logits",), batch_size: int = 64, collate=None
) -> dict[str, list[np.ndarray]]:
    """Per-token model outputs, one array per example, unpadded: ``{"logits": [array [T_i, C], ...]}`` for token
    classification, ``{"start_logits": [[T_i], ...], "end_logits": ...}`` for question answering; in the order of
    ``encoded``."""
    rows: dict[str, list] = {name: [None] * len(encoded) for name in outputs}
    left = getattr(tokenizer, "padding_side", "right") == "left"
    for indices, result in shortest_first(model, tokenizer, encoded, batch_size, collate):
        for name in outputs:
            values = getattr(result, name).float().cpu().numpy()
            for row, i in zip(values, indices):
                n = len(encoded[i]["input_ids"])
                rows[name][i] = row[-n:] if left else row[:n]
    return rows


@torch.no_grad()
def predict(model, tokenizer, encoded: list[dict], batch_size: int = 128) -> np.ndarray:
    """Logits [N, num_labels] (regression: [N, 1]) in the order of ``encoded``."""
    logits = None
    for indices, result in shortest_first(model, tokenizer, encoded, batch_size):
        values = result.logits.float().cpu().numpy()
        if logits is None:
            logits = np.empty((len(encoded), values.shape[1]), dtype=values.dtype)
        logits[indices] = values
    return logits if logits is not None else np.empty((0, 0), dtype=np.float32)


def score(logits: np.ndarray, encoded: list[dict], task: str) -> dict[str, float]:
    """The task's GLUE metrics (through evaluate's API) for ``logits`` from ``predict``."""
    labels = np.array([e["labels"] for e in encoded])
    return trainer_metrics(task)(EvalPrediction(predictions=logits, label_ids=labels))


def trainer_metrics(task: str):
    """A ``compute_metrics`` for ``transformers.Trainer``: EvalPrediction -> the task's GLUE metrics."""
    t = glue_task(task)
    metric = load_metric("glue", t.name)

    def compute(prediction) -> dict[str, float]:
        logits = prediction.predictions[0] if isinstance(prediction.predictions, tuple) else prediction.predictions
        predictions = logits[:, 0] if t.is_regression else logits.argmax(axis=-1)
        return metric.compute(predictions=predictions, references=prediction.label_ids)

    return compute
