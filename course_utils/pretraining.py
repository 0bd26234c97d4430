"""Masked-language-model pretraining written for speed: packed blocks, dynamic masking, masked-only logits.

The loop is short on purpose. What makes it fast on a CPU:

* blocks are packed to full length (``packing.pack_blocks``), so no compute is spent on padding;
* masking is redone for every batch (dynamic masking, RoBERTa), with ``masking.mask_tokens``;
* the vocabulary projection runs only on the ~15 % masked positions (``masked_lm_loss``): for a small model
  the [hidden x vocab] output layer costs more than all transformer layers together.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from .masking import IGNORE_INDEX, mask_tokens
from .profiles import BertSize
from .quiet import is_quiet

__all__ = ["BertSize", "History", "MaskedLMObjective", "bert_config", "check_blocks_fit", "heldout_loss", "masked_lm_loss",
           "non_embedding_parameters", "pretrain_mlm"]


def bert_config(vocab_size: int, size: BertSize, block_length: int, dropout: float = 0.1):
    """A ``BertConfig`` for ``size`` whose position embeddings cover ``block_length`` tokens."""
    from transformers import BertConfig

    if size.hidden % size.heads:
        raise ValueError(f"hidden={size.hidden} must be divisible by heads={size.heads} (each head gets hidden/heads dims).")
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
        raise ValueError(f"blocks must be a LongTensor [n_blocks, block_length]; got {blocks.dtype} of shape {tuple(blocks.shape)}.")
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
        raise ValueError(f"batch_size must be an int between 1 and the number of blocks ({blocks.shape[0]}); got {batch_size!r}.")


# (encoder attribute, MLM head attribute) of the masked-LM classes whose head can score a subset of positions
_MLM_PARTS = (("bert", "cls"), ("albert", "predictions"))


def mlm_parts(model):
    """(encoder, MLM head) of a ``BertForMaskedLM`` or ``AlbertForMaskedLM``, so that a caller can project only the
    positions it needs onto the vocabulary; None for other models."""
    for encoder, head in _MLM_PARTS:
        if hasattr(model, encoder) and hasattr(model, head):
            return getattr(model, encoder), getattr(model, head)
    return None


def masked_lm_loss(model, input_ids: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """MLM cross-entropy of a masked LM, projecting only the masked positions onto the vocabulary.

    input_ids, labels: [B, T] (labels = IGNORE_INDEX where nothing is predicted). Equals
    ``model(input_ids=input_ids, labels=labels).loss`` up to float rounding, at a fraction of the cost:
    hidden [B, T, H] -> gather the M masked rows [M, H] -> logits [M, V] instead of [B, T, V].
    ``BertForMaskedLM`` and ``AlbertForMaskedLM`` take this shortcut; other masked LMs compute the model's own loss.
    """
    parts = mlm_parts(model)
    if parts is None:
        return model(input_ids=input_ids, labels=labels).loss
    encoder, head = parts
    hidden = encoder(input_ids=input_ids).last_hidden_state                   # [B, T, H]
    where = labels != IGNORE_INDEX                                            # [B, T]
    return F.cross_entropy(head(hidden[where]).float(), labels[where])        # [M, V] logits


class MaskedLMObjective(torch.nn.Module):
    """A masked LM and its training loss in one module: ``forward(input_ids, labels) -> loss`` (``masked_lm_loss``,
    the vocabulary projection on masked positions only). Training wraps this module rather than the bare model, so
    that the shortcut lives inside ``forward``, where a wrapper such as ``DistributedDataParallel`` sees it and
    synchronises the head's gradients with the rest."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return masked_lm_loss(self.model, input_ids, labels)


@torch.no_grad()
def heldout_loss(model, blocks: torch.Tensor, tokenizer, batch_size: int = 64, seed: int = 0) -> float:
    """Mean MLM loss per masked token on ``blocks`` [N, T], with masks fixed by ``seed`` so evaluations compare."""
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    g = torch.Generator().manual_seed(seed)
    total, count = 0.0, 0
    for start in range(0, blocks.shape[0], batch_size):
        batch = mask_tokens(blocks[start:start + batch_size], tokenizer, generator=g)
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
    lr: list[float] = field(default_factory=list)            # learning rate used at each step
    eval_step: list[int] = field(default_factory=list)
    eval_loss: list[float] = field(default_factory=list)
    seconds: float = 0.0        # training time, evaluations excluded
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

    Blocks are drawn without replacement (a fresh permutation each epoch) and masked anew for every batch.
    Linear warmup to ``lr`` over ``warmup_steps``, then linear decay to 0 at ``steps`` (Devlin et al. 2019).
    ``mixed_precision``: autocast to bf16 (fp16 with loss scaling on GPUs without bf16; ``course_utils.precision``);
    None follows the running profile (on in ``full``).
    """
    from .precision import Precision

    from transformers import get_linear_schedule_with_warmup

    for name, value in (("steps", steps), ("eval_every", eval_every)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int; got {value!r}.")
    if not 0 <= warmup_steps <= steps:
        raise ValueError(f"warmup_steps must be between 0 and steps={steps}; got {warmup_steps!r}.")
    check_blocks_fit(model, train_blocks, batch_size)
    check_blocks_fit(model, eval_blocks, min(batch_size, eval_blocks.shape[0]))
    device = next(model.parameters()).device
    precision = Precision(device, mixed_precision)
    objective = MaskedLMObjective(model)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]   # biases and LayerNorm weights
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=lr, betas=(0.9, 0.98), eps=1e-6,
    )
    schedule = get_linear_schedule_with_warmup(optimizer, warmup_steps, steps)
    g = torch.Generator().manual_seed(seed)
    history = History(steps, batch_size, train_blocks.shape[1], non_embedding_params=non_embedding_parameters(model))

    def evaluate(step: int) -> None:
        history.eval_step.append(step)
        history.eval_loss.append(heldout_loss(model, eval_blocks, tokenizer, seed=seed))

    from tqdm.auto import tqdm

    show = (not is_quiet()) if progress is None else progress
    bar = tqdm(total=steps, desc="pretraining", disable=not show, leave=False)
    evaluate(0)
    model.train()
    order = torch.randperm(train_blocks.shape[0], generator=g)
    cursor = 0
    start = time.perf_counter()
    for step in range(1, steps + 1):
        if cursor + batch_size > order.numel():
            order, cursor = torch.randperm(train_blocks.shape[0], generator=g), 0
        batch = mask_tokens(train_blocks[order[cursor:cursor + batch_size]], tokenizer,
                            mlm_probability=mlm_probability, generator=g)
        cursor += batch_size
        with precision.autocast():
            loss = objective(batch.input_ids.to(device), batch.labels.to(device))
        precision.backward(loss)
        history.lr.append(schedule.get_last_lr()[0])
        precision.step(optimizer, model.parameters(), max_norm=1.0)
        schedule.step()
        optimizer.zero_grad(set_to_none=True)
        history.train_step.append(step)
        history.train_loss.append(float(loss.detach()))
        bar.update(1)
        if step % eval_every == 0 or step == steps:
            history.seconds += time.perf_counter() - start
            evaluate(step)
            bar.set_postfix(heldout=f"{history.eval_loss[-1]:.3f}")
            model.train()
            start = time.perf_counter()
    bar.close()
    if not all(math.isfinite(x) for x in history.eval_loss):
        raise FloatingPointError(f"Held-out loss became {history.eval_loss[-1]}: lower the learning rate (lr={lr}).")
    model.eval()
    return history
