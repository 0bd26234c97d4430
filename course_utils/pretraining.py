"""Masked-language-model pretraining written for speed: packed blocks, dynamic masking, masked-only logits.

The loop is short on purpose. What makes it fast on a CPU:

* blocks are packed to full length (``packing.pack_blocks``), so no compute is spent on padding;
* masking is redone for every batch (dynamic masking, RoBERTa), with ``masking.mask_tokens``;
* the vocabulary projection runs only on the ~15 % masked positions (``masked_lm_loss``): for a small model
  the [hidden x vocab] output layer costs more than all transformer layers together.

Lesson 02 introduces this loop, writing its step by hand first; 05 and 07 reuse it.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from transformers import BertConfig, get_linear_schedule_with_warmup

from .masking import mask_tokens
from .profiles import BertSize
from .training import IGNORE_INDEX, adamw, mlm_parts
from .training_loop import (
    EpochBatches,
    accelerator_for,
    check_divides,
    floats,
    global_normaliser,
    loader,
    progress_bar,
    train_steps,
)

__all__ = [
    "BertSize",
    "History",
    "MaskedLMObjective",
    "bert_config",
    "check_blocks_fit",
    "heldout_loss",
    "masked_lm_loss",
    "non_embedding_parameters",
    "pretrain_mlm",
    "sinusoidal_positions_",
]


def bert_config(vocab_size: int, size: BertSize, block_length: int, dropout: float = 0.1):
    """A ``BertConfig`` for ``size`` whose position embeddings cover ``block_length`` tokens."""
    if size.hidden % size.heads:
        raise ValueError(
            f"hidden={size.hidden} must be divisible by heads={size.heads} (each head gets hidden/heads dims)."
        )
    if not 0.0 <= dropout < 1.0:
        raise ValueError(f"dropout must be in [0, 1); got {dropout}.")
    return BertConfig(
        vocab_size=vocab_size,
        hidden_size=size.hidden,
        num_hidden_layers=size.layers,
        num_attention_heads=size.heads,
        intermediate_size=size.intermediate,
        max_position_embeddings=block_length,
        hidden_dropout_prob=dropout,
        attention_probs_dropout_prob=dropout,
    )


def sinusoidal_positions_(model, scale: float):
    """Start ``model``'s learned position embeddings [P, H] as sinusoids (Vaswani et al. 2017) instead of random, with
    a spread of ``scale`` times the word embeddings' (in place; returns the model). They stay trainable. A shift by k
    positions is then a fixed linear map of the table, so attention can learn "look at the word before" quickly;
    the course checkpoint's recipe uses it (``profiles.COURSE_BERT_RECIPE``), lesson 02 shows why."""
    if not scale > 0:
        raise ValueError(f"scale must be a positive number; got {scale!r}.")
    table = model.get_input_embeddings().weight
    positions = model.base_model.embeddings.position_embeddings.weight  # [P, H]
    n, h = positions.shape
    where = torch.arange(n, dtype=torch.float32)[:, None]  # [P, 1]
    freq = torch.exp(-math.log(10000.0) * torch.arange(0, h, 2, dtype=torch.float32) / h)  # [H/2]
    waves = torch.zeros(n, h)
    waves[:, 0::2], waves[:, 1::2] = torch.sin(where * freq), torch.cos(where * freq)[:, : h // 2]
    with torch.no_grad():
        positions.copy_(waves / waves.std() * table.std() * scale)
    return model


def non_embedding_parameters(model: torch.nn.Module) -> int:
    """Parameters outside the embedding tables and the (tied) vocabulary projection: Kaplan et al.'s N."""
    seen: set[int] = set()
    total = 0
    for name, p in model.named_parameters():
        if id(p) in seen or "embeddings" in name or name.endswith("decoder.weight"):
            continue
        seen.add(id(p))
        total += p.numel()
    return total


def check_blocks_fit(model: torch.nn.Module, blocks: torch.Tensor, batch_size: int) -> None:
    """Clear errors for blocks longer than the position embeddings, ids outside the vocabulary, bad batch sizes."""
    if blocks.dim() != 2 or blocks.dtype != torch.long:
        raise ValueError(
            f"blocks must be a LongTensor [n_blocks, block_length]; got {blocks.dtype} of shape {tuple(blocks.shape)}."
        )
    cfg = model.config
    if blocks.shape[1] > cfg.max_position_embeddings:
        raise ValueError(
            f"Blocks of {blocks.shape[1]} tokens do not fit the model's {cfg.max_position_embeddings} position "
            "embeddings. Pack with a block_length <= max_position_embeddings, or build the config with a longer one."
        )
    if int(blocks.max()) >= cfg.vocab_size or int(blocks.min()) < 0:
        raise ValueError(
            f"Token ids range over [{int(blocks.min())}, {int(blocks.max())}] but the model's vocabulary has "
            f"{cfg.vocab_size} entries: the tokenizer and the model do not belong together."
        )
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or not 1 <= batch_size <= blocks.shape[0]:
        raise ValueError(
            f"batch_size must be an int between 1 and the number of blocks ({blocks.shape[0]}); got {batch_size!r}."
        )


def masked_lm_loss(
    model, input_ids: torch.Tensor, labels: torch.Tensor, attention_mask: torch.Tensor | None = None
) -> torch.Tensor:
    """MLM cross-entropy of a masked LM, projecting only the masked positions onto the vocabulary.

    input_ids, labels: [B, T] (labels = IGNORE_INDEX where nothing is predicted); attention_mask: [B, T], 1 for
    tokens and 0 for padding, needed when the batch is padded (packed blocks have no padding and need none). Equals
    ``model(input_ids=input_ids, attention_mask=attention_mask, labels=labels).loss`` up to float rounding, at a
    fraction of the cost: hidden [B, T, H] -> gather the M masked rows [M, H] -> logits [M, V] instead of [B, T, V].
    ``BertForMaskedLM`` and ``AlbertForMaskedLM`` take this shortcut; other masked LMs compute the model's own loss.
    """
    parts = mlm_parts(model)
    if parts is None:
        return model(input_ids=input_ids, attention_mask=attention_mask, labels=labels).loss
    encoder, head = parts
    hidden = encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state  # [B, T, H]
    where = labels != IGNORE_INDEX  # [B, T]
    return F.cross_entropy(head(hidden[where]).float(), labels[where])  # [M, V] logits


class MaskedLMObjective(torch.nn.Module):
    """A masked LM and its training loss in one module: ``forward(input_ids, labels) -> loss`` (``masked_lm_loss``,
    the vocabulary projection on masked positions only). Training wraps this module rather than the bare model, so
    that the shortcut lives inside ``forward``, where a wrapper such as ``DistributedDataParallel`` sees it and
    synchronises the head's gradients with the rest."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(
        self, input_ids: torch.Tensor, labels: torch.Tensor, normaliser: torch.Tensor | None = None
    ) -> torch.Tensor:
        """input_ids, labels [B, T] -> the mean loss per masked token; with ``normaliser``, the sum of the losses
        divided by it instead (a share of a global batch's mean, ``training_loop.global_normaliser``)."""
        if normaliser is None:
            return masked_lm_loss(self.model, input_ids, labels)
        encoder, head = mlm_parts(self.model)
        where = labels != IGNORE_INDEX
        hidden = encoder(input_ids=input_ids).last_hidden_state[where]  # [M, H]
        return F.cross_entropy(head(hidden).float(), labels[where], reduction="sum") / normaliser


class MaskingCollator:
    """The collate function of MLM pretraining: stacks blocks [T] into a batch and masks it anew
    (``mask_tokens``), drawing from one seeded generator -> {"input_ids": [B, T], "labels": [B, T]}."""

    def __init__(self, tokenizer, mlm_probability: float, generator: torch.Generator):
        self.tokenizer, self.mlm_probability, self.generator = tokenizer, mlm_probability, generator

    def __call__(self, rows: list[torch.Tensor]) -> dict[str, torch.Tensor]:
        batch = mask_tokens(
            torch.stack(rows), self.tokenizer, mlm_probability=self.mlm_probability, generator=self.generator
        )
        return {"input_ids": batch.input_ids, "labels": batch.labels}


@torch.no_grad()
def heldout_loss(model, blocks: torch.Tensor, tokenizer, batch_size: int = 64, seed: int = 0) -> float:
    """Mean MLM loss per masked token on ``blocks`` [N, T], with masks fixed by ``seed`` so evaluations compare."""
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    g = torch.Generator().manual_seed(seed)
    total, count = 0.0, 0
    for start in range(0, blocks.shape[0], batch_size):
        batch = mask_tokens(blocks[start : start + batch_size], tokenizer, generator=g)
        n = int((batch.labels != IGNORE_INDEX).sum())
        if n:
            loss = masked_lm_loss(model, batch.input_ids.to(device), batch.labels.to(device))
            total += float(loss) * n
            count += n
    model.train(was_training)
    return total / count


@dataclass
class History:
    """What a pretraining run measured. Losses are per masked token (nats); ``tokens`` counts block positions."""

    steps: int
    batch_size: int
    block_length: int
    train_step: list[int] = field(default_factory=list)
    train_loss: list[float] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)  # learning rate used at each step
    eval_step: list[int] = field(default_factory=list)
    eval_loss: list[float] = field(default_factory=list)
    seconds: float = 0.0  # training time, evaluations excluded
    non_embedding_params: int = 0

    @property
    def tokens_per_step(self) -> int:
        return self.batch_size * self.block_length

    @property
    def tokens_per_second(self) -> float:
        return self.steps * self.tokens_per_step / self.seconds if self.seconds else float("nan")


def pretrain_mlm(
    model,
    tokenizer,
    train_blocks: torch.Tensor,
    eval_blocks: torch.Tensor,
    *,
    steps: int,
    batch_size: int,
    lr: float,
    warmup_steps: int,
    eval_every: int,
    seed: int = 0,
    mlm_probability: float = 0.15,
    weight_decay: float = 0.01,
    mixed_precision: bool | None = None,
    progress: bool | None = None,
) -> History:
    """Train ``model`` (``BertForMaskedLM``, ``AlbertForMaskedLM``; any device) with MLM; evaluate on ``eval_blocks``
    every ``eval_every`` steps.

    Blocks are drawn without replacement (a fresh permutation each epoch) and masked anew for every batch, in the
    collate function of a ``DataLoader`` (``MaskingCollator``). Linear warmup to ``lr`` over ``warmup_steps``, then
    linear decay to 0 at ``steps`` (Devlin et al. 2019). The loop runs on accelerate (``course_utils.training_loop``):
    one CPU or GPU, or several processes under ``accelerate launch``, where ``batch_size`` is the global batch, split
    evenly. ``mixed_precision``: autocast to bf16 (fp16 with loss scaling on GPUs without bf16); None follows the
    running profile (on in ``full``)."""
    for name, value in (("steps", steps), ("eval_every", eval_every)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int; got {value!r}.")
    if not 0 <= warmup_steps <= steps:
        raise ValueError(f"warmup_steps must be between 0 and steps={steps}; got {warmup_steps!r}.")
    check_blocks_fit(model, train_blocks, batch_size)
    check_blocks_fit(model, eval_blocks, min(batch_size, eval_blocks.shape[0]))
    accelerator = accelerator_for(next(model.parameters()).device, mixed_precision)
    check_divides(batch_size, accelerator)
    # RoBERTa's betas and eps (Liu et al., 2019); biases and LayerNorm weights do not decay (adamw's default). Not
    # fused: the course checkpoint was trained unfused, and the fused kernel rounds differently (1e-6 apart after 20
    # steps)
    optimizer = adamw(model.parameters(), lr=lr, weight_decay=weight_decay, betas=(0.9, 0.98), eps=1e-6, fused=False)
    schedule = get_linear_schedule_with_warmup(optimizer, warmup_steps, steps)
    g = torch.Generator().manual_seed(seed)  # one stream for the order of the blocks and their masks
    blocks = loader(
        train_blocks,
        EpochBatches(
            train_blocks.shape[0],
            batch_size,
            lambda epoch: torch.randperm(train_blocks.shape[0], generator=g).tolist(),
            drop_last=True,
        ),
        MaskingCollator(tokenizer, mlm_probability, g),
    )
    history = History(steps, batch_size, train_blocks.shape[1], non_embedding_params=non_embedding_parameters(model))

    def loss(objective, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        normaliser = global_normaliser(accelerator, (batch["labels"] != IGNORE_INDEX).sum())
        return objective(batch["input_ids"], batch["labels"], normaliser)

    def evaluate(step: int) -> None:
        history.eval_step.append(step)
        history.eval_loss.append(heldout_loss(model, eval_blocks, tokenizer, seed=seed))

    bar = progress_bar(steps, "pretraining", accelerator, progress)
    run = train_steps(
        MaskedLMObjective(model), optimizer, schedule, blocks, steps, accelerator=accelerator, loss=loss, bar=bar
    )
    evaluate(0)
    pending: list[torch.Tensor] = []  # this interval's step losses, left on the device until the next evaluation
    start = time.perf_counter()
    for step in run:
        history.train_step.append(step.number)
        history.lr.append(step.lr)
        pending.append(step.loss)
        if step.number % eval_every == 0 or step.number == steps:
            history.train_loss += floats(pending)  # one wait for the device per evaluation, then the clock
            pending = []
            history.seconds += time.perf_counter() - start
            evaluate(step.number)
            bar.set_postfix(heldout=f"{history.eval_loss[-1]:.3f}")
            start = time.perf_counter()
    bar.close()
    if not all(math.isfinite(x) for x in history.eval_loss):
        raise FloatingPointError(f"Held-out loss became {history.eval_loss[-1]}: lower the learning rate (lr={lr}).")
    model.eval()
    return history
