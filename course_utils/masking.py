"""Masking for masked-language-model pretraining, and next-sentence-prediction pairs.

- ``mask_tokens``: BERT's MLM masking (Devlin et al., 2019): select 15 % of the maskable tokens; of those, 80 %
  become ``[MASK]``, 10 % a random token, 10 % stay as they are. Labels hold the original id at selected positions
  and -100 (ignored by the loss) elsewhere. Special and padding tokens are never selected.
- ``whole_word_mask``: the same, but a word's sub-tokens are selected together.
- ``span_mask``: SpanBERT (Joshi et al., 2020): contiguous spans with geometric lengths (p = 0.2, clipped at 10,
  mean ≈ 3.8) until 15 % of the tokens are covered; the 80/10/10 choice is made once per span.
- ``make_nsp_pairs``: BERT's next-sentence prediction: 50 % true next sentence, 50 % a sentence from another document.

Every random choice takes an optional ``torch.Generator`` (or ``random.Random``) so results are reproducible.

Lesson 01 introduces these functions (and writes BERT's 80/10/10 rule by hand first); 02 and 07 reuse them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import torch

from .training import IGNORE_INDEX


class MaskedBatch(NamedTuple):
    """A masked batch; unpacks as ``inputs, labels = mask_tokens(...)``."""

    input_ids: torch.Tensor  # [B, T] corrupted inputs
    labels: torch.Tensor  # [B, T] original id where selected, IGNORE_INDEX elsewhere


# ------------------------------------------------------------------------------------------------------ validation
def check_probabilities(mlm_probability: float, mask_replace_prob: float, random_replace_prob: float) -> None:
    """Raise ``ValueError`` unless all three lie in [0, 1] and the two replacement shares sum to at most 1."""
    for name, value in (
        ("mlm_probability", mlm_probability),
        ("mask_replace_prob", mask_replace_prob),
        ("random_replace_prob", random_replace_prob),
    ):
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0.0 <= float(value) <= 1.0:
            raise ValueError(f"{name} must be a number in [0, 1]; got {value!r}.")
    if mask_replace_prob + random_replace_prob > 1.0 + 1e-9:
        raise ValueError(
            f"mask_replace_prob + random_replace_prob must be at most 1 (the rest is kept unchanged); got "
            f"{mask_replace_prob} + {random_replace_prob} = {mask_replace_prob + random_replace_prob}."
        )


def _as_batch(input_ids: Any) -> torch.Tensor:
    """Input ids as a [B, T] integer tensor (a [T] tensor or list becomes [1, T])."""
    ids = input_ids if isinstance(input_ids, torch.Tensor) else torch.as_tensor(input_ids, dtype=torch.long)
    if ids.numel() == 0:
        raise ValueError(f"input_ids is empty (shape {tuple(ids.shape)}); give at least one token to mask.")
    if ids.dtype.is_floating_point or ids.dtype == torch.bool:
        raise ValueError(f"input_ids must hold integer token ids; got dtype {ids.dtype}.")
    if ids.dim() == 1:
        ids = ids.unsqueeze(0)
    if ids.dim() != 2:
        raise ValueError(f"input_ids must have shape [T] or [B, T]; got {tuple(ids.shape)}.")
    return ids.long()


def mask_token_id(tokenizer: Any) -> int:
    """The tokenizer's ``[MASK]`` id, or a clear error if it has none."""
    mask_id = getattr(tokenizer, "mask_token_id", None)
    if mask_id is None:
        raise ValueError(
            f"{type(tokenizer).__name__} has no mask token, so it cannot be used for masked-language-model masking. "
            "Use a BERT-style tokenizer (its mask token is '[MASK]') or add one with "
            "tokenizer.add_special_tokens({'mask_token': '[MASK]'})."
        )
    return int(mask_id)


def maskable_positions(
    input_ids: torch.Tensor, tokenizer: Any, attention_mask: torch.Tensor | None = None
) -> torch.Tensor:
    """Bool [B, T]: True where a token may be selected (not special, not padding)."""
    ids = _as_batch(input_ids)
    special = torch.tensor(sorted(set(tokenizer.all_special_ids)), dtype=ids.dtype)
    allowed = ~torch.isin(ids, special)
    if attention_mask is not None:
        allowed &= _as_batch(attention_mask).bool()
    return allowed


# ----------------------------------------------------------------------------------------------- 80 / 10 / 10 step
def replace_selected(
    input_ids: torch.Tensor,
    selected: torch.Tensor,
    mask_id: int,
    vocab_size: int,
    mask_replace_prob: float = 0.8,
    random_replace_prob: float = 0.1,
    generator: torch.Generator | None = None,
    choice: torch.Tensor | None = None,
) -> MaskedBatch:
    """Corrupt the ``selected`` positions (bool [B, T]): [MASK], a random id from the whole vocabulary, or kept.

    ``choice`` (float [B, T] in [0, 1)) lets a caller share one draw across a span; by default each position draws.
    """
    ids = _as_batch(input_ids)
    labels = torch.where(selected, ids, torch.full_like(ids, IGNORE_INDEX))
    if choice is None:
        choice = torch.rand(ids.shape, generator=generator)
    to_mask = selected & (choice < mask_replace_prob)
    to_random = selected & (choice >= mask_replace_prob) & (choice < mask_replace_prob + random_replace_prob)
    random_ids = torch.randint(vocab_size, ids.shape, generator=generator)
    corrupted = torch.where(to_mask, torch.full_like(ids, mask_id), ids)
    corrupted = torch.where(to_random, random_ids, corrupted)
    return MaskedBatch(corrupted, labels)


# ------------------------------------------------------------------------------------------------------ BERT MLM
def mask_tokens(
    input_ids: torch.Tensor,
    tokenizer: Any,
    *,
    attention_mask: torch.Tensor | None = None,
    mlm_probability: float = 0.15,
    mask_replace_prob: float = 0.8,
    random_replace_prob: float = 0.1,
    generator: torch.Generator | None = None,
) -> MaskedBatch:
    """BERT masking of ``input_ids`` ([B, T] or [T]); returns corrupted ids and labels, both [B, T]."""
    check_probabilities(mlm_probability, mask_replace_prob, random_replace_prob)
    mask_id = mask_token_id(tokenizer)
    ids = _as_batch(input_ids)
    allowed = maskable_positions(ids, tokenizer, attention_mask)
    selected = (torch.rand(ids.shape, generator=generator) < mlm_probability) & allowed
    return replace_selected(ids, selected, mask_id, len(tokenizer), mask_replace_prob, random_replace_prob, generator)


def _word_id_tensor(word_ids: Any, shape: torch.Size) -> torch.Tensor:
    """Word ids as long [B, T] with -1 where a token belongs to no word (special tokens, padding)."""
    if isinstance(word_ids, torch.Tensor):
        tensor = word_ids.long()
    else:
        rows = [[-1 if w is None else int(w) for w in row] for row in word_ids]
        if any(len(r) != shape[1] for r in rows):
            raise ValueError(f"word_ids rows must each have {shape[1]} entries, one per token.")
        tensor = torch.tensor(rows, dtype=torch.long)
    if tensor.dim() == 1:
        tensor = tensor.unsqueeze(0)
    if tuple(tensor.shape) != tuple(shape):
        raise ValueError(f"word_ids must have the shape of input_ids {tuple(shape)}; got {tuple(tensor.shape)}.")
    return tensor


def whole_word_mask(
    input_ids: torch.Tensor,
    word_ids: Any,
    tokenizer: Any,
    *,
    attention_mask: torch.Tensor | None = None,
    mlm_probability: float = 0.15,
    mask_replace_prob: float = 0.8,
    random_replace_prob: float = 0.1,
    generator: torch.Generator | None = None,
) -> MaskedBatch:
    """Whole-word masking: each word is selected with ``mlm_probability`` and all its sub-tokens with it.

    ``word_ids``: per token the index of its word (``encoding.word_ids(i)`` of a fast tokenizer; None or -1 for
    special tokens), a list of lists or a long tensor [B, T]. In expectation ``mlm_probability`` of the tokens are
    selected, as in token-level masking.
    """
    check_probabilities(mlm_probability, mask_replace_prob, random_replace_prob)
    mask_id = mask_token_id(tokenizer)
    ids = _as_batch(input_ids)
    words = _word_id_tensor(word_ids, ids.shape)
    allowed = maskable_positions(ids, tokenizer, attention_mask) & (words >= 0)
    n_words = int(words.max().item()) + 1 if (words >= 0).any() else 1
    word_drawn = torch.rand((ids.shape[0], n_words), generator=generator) < mlm_probability  # [B, W]
    selected = word_drawn.gather(1, words.clamp(min=0)) & allowed
    return replace_selected(ids, selected, mask_id, len(tokenizer), mask_replace_prob, random_replace_prob, generator)


# ---------------------------------------------------------------------------------------------------- SpanBERT
def span_length_distribution(geometric_p: float = 0.2, max_span_length: int = 10) -> torch.Tensor:
    """P(length = 1..max) of a geometric distribution truncated at ``max_span_length`` and renormalised: [max]."""
    if not 0.0 < geometric_p <= 1.0:
        raise ValueError(f"geometric_p must be in (0, 1]; got {geometric_p!r}.")
    if not isinstance(max_span_length, int) or max_span_length < 1:
        raise ValueError(f"max_span_length must be a positive int; got {max_span_length!r}.")
    lengths = torch.arange(1, max_span_length + 1, dtype=torch.float64)
    probs = geometric_p * (1 - geometric_p) ** (lengths - 1)
    return probs / probs.sum()


def sample_span_lengths(
    n: int, geometric_p: float = 0.2, max_span_length: int = 10, generator: torch.Generator | None = None
) -> torch.Tensor:
    """``n`` span lengths (long [n]) from ``span_length_distribution``."""
    probs = span_length_distribution(geometric_p, max_span_length)
    return torch.multinomial(probs, n, replacement=True, generator=generator) + 1


def span_mask(
    input_ids: torch.Tensor,
    tokenizer: Any,
    *,
    attention_mask: torch.Tensor | None = None,
    word_ids: Any | None = None,
    mask_budget: float = 0.15,
    geometric_p: float = 0.2,
    max_span_length: int = 10,
    mask_replace_prob: float = 0.8,
    random_replace_prob: float = 0.1,
    generator: torch.Generator | None = None,
) -> MaskedBatch:
    """SpanBERT masking of ``input_ids`` ([B, T]); returns corrupted ids and labels, both [B, T].

    Spans of geometric length (in words when ``word_ids`` is given, else in tokens) start at random units and are
    added until ``mask_budget`` of each sequence's maskable tokens are selected; a span that would overshoot the
    budget is redrawn. All tokens of a span share one [MASK] / random / keep decision.
    """
    check_probabilities(mask_budget, mask_replace_prob, random_replace_prob)
    mask_id = mask_token_id(tokenizer)
    ids = _as_batch(input_ids)
    allowed = maskable_positions(ids, tokenizer, attention_mask)
    words = _word_id_tensor(word_ids, ids.shape) if word_ids is not None else None
    selected = torch.zeros_like(allowed)
    choice = torch.ones(ids.shape)  # 1.0 = keep; overwritten per span
    for b in range(ids.shape[0]):
        positions = allowed[b].nonzero().flatten().tolist()
        if words is None:
            units = [[p] for p in positions]
        else:
            by_word: dict[int, list[int]] = {}
            for p in positions:
                if words[b, p] >= 0:
                    by_word.setdefault(int(words[b, p]), []).append(p)
            units = [by_word[w] for w in sorted(by_word)]
        budget = round(mask_budget * len(positions))
        if budget == 0 or not units:
            continue
        tries = 50 * (budget + 1)  # draws made up front; a span that overshoots the budget is skipped
        lengths = sample_span_lengths(tries, geometric_p, max_span_length, generator).tolist()
        starts = torch.randint(len(units), (tries,), generator=generator).tolist()
        draws = torch.rand(tries, generator=generator).tolist()
        taken: set[int] = set()
        for length, start, draw in zip(lengths, starts, draws):
            span = [p for unit in units[start : start + length] for p in unit if p not in taken]
            if not span or len(taken) + len(span) > budget:
                continue
            taken.update(span)
            choice[b, span] = draw
            if len(taken) == budget:
                break
        selected[b, list(taken)] = True
    return replace_selected(
        ids, selected, mask_id, len(tokenizer), mask_replace_prob, random_replace_prob, generator, choice=choice
    )


# ------------------------------------------------------------------------------------------------------ statistics
def masking_rates(
    original_ids: torch.Tensor, batch: MaskedBatch, mask_id: int, maskable: torch.Tensor
) -> dict[str, float]:
    """Realised rates: share of maskable tokens selected, and how the selected ones were corrupted.

    A random draw that happens to hit the original token counts as kept (it is indistinguishable), so the kept
    share sits a hair above its nominal value.
    """
    original = _as_batch(original_ids)
    selected = batch.labels != IGNORE_INDEX
    n_selected = int(selected.sum())
    if n_selected == 0:
        raise ValueError("No token was selected, so the replacement shares are undefined; use a larger batch.")
    as_mask = selected & (batch.input_ids == mask_id)
    kept = selected & (batch.input_ids == original) & ~as_mask
    randomised = selected & ~as_mask & ~kept
    return {
        "masked_fraction": n_selected / int(maskable.sum()),
        "mask_token_fraction": int(as_mask.sum()) / n_selected,
        "random_token_fraction": int(randomised.sum()) / n_selected,
        "kept_fraction": int(kept.sum()) / n_selected,
    }


# ------------------------------------------------------------------------------------------------------------ NSP
@dataclass(frozen=True)
class NspPair:
    """Two segments for next-sentence prediction."""

    sentence_a: str
    sentence_b: str
    is_next: bool

    @property
    def label(self) -> int:
        """transformers' ``next_sentence_label``: 0 = B follows A, 1 = B is random."""
        return 0 if self.is_next else 1


def make_nsp_pairs(
    documents: Sequence[Sequence[str]], *, next_probability: float = 0.5, rng: random.Random | None = None
) -> list[NspPair]:
    """One pair per pair of consecutive sentences in each document.

    With probability ``next_probability`` B is the true next sentence; otherwise B is a random sentence from a
    *different* document (so a "random" B is never accidentally the right one).
    """
    if not 0.0 <= next_probability <= 1.0:
        raise ValueError(f"next_probability must be in [0, 1]; got {next_probability!r}.")
    docs = [list(d) for d in documents if len(d) > 0]
    if len(docs) < 2:
        raise ValueError(
            f"make_nsp_pairs needs at least 2 non-empty documents (random B comes from another document); "
            f"got {len(docs)}."
        )
    if not any(len(d) >= 2 for d in docs):
        raise ValueError(
            "make_nsp_pairs needs at least one document with 2 or more sentences to form a true next pair."
        )
    rng = rng or random.Random(0)
    pairs = []
    for i, doc in enumerate(docs):
        for a, b in zip(doc, doc[1:]):
            if rng.random() < next_probability:
                pairs.append(NspPair(a, b, True))
            else:
                other = rng.randrange(len(docs) - 1)
                other += other >= i  # any document but this one
                pairs.append(NspPair(a, rng.choice(docs[other]), False))
    return pairs
