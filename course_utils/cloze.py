"""Reading a masked LM at its ``[MASK]``: the MLM head's logits at one mask per text, and what lessons 06 and 08 make of
them (``prompting`` writes the texts of lesson 08's patterns; this module reads the model).

- ``fill_mask``, ``word_log_probs``: the model's top words, or one word's log-probability, at the mask (06);
- ``label_logits`` / ``mask_label_logits``: the logits of a verbalizer's label words, zero-shot or for PET's training
  loss (08);
- factual cloze templates (LAMA-style, Petroni et al., 2019) with the expected answer, scored by precision@k;
- negation (NEG-136-SIMP, Ettinger, 2020): does the top prediction change when "not" is inserted?

Templates are written with the literal slot ``[MASK]``; it is replaced by the tokenizer's own mask token, so the same
template serves BERT (``[MASK]``) and RoBERTa (``<mask>``).
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from .training import logits_at

SLOT = "[MASK]"
FACTS_FILE = Path(__file__).parent / "data" / "cloze_facts.tsv"


@dataclass(frozen=True)
class Cloze:
    """One factual probe: ``template`` holds exactly one ``[MASK]``; ``answer`` is the expected single word."""

    relation: str
    template: str
    answer: str


def check_template(template: str) -> str:
    """Return ``template`` if it has exactly one ``[MASK]`` slot; otherwise a ValueError that says how many it has."""
    if not isinstance(template, str):
        raise TypeError(f"A cloze template is a str with one {SLOT} slot; got {type(template).__name__}.")
    n = template.count(SLOT)
    if n != 1:
        raise ValueError(
            f"A cloze template needs exactly one {SLOT} slot; {template!r} has {n}. "
            f"Example: 'The capital of France is {SLOT}.'"
        )
    return template


def load_facts(path: str | Path = FACTS_FILE) -> list[Cloze]:
    """The course's factual cloze probes: a tab-separated file with columns relation, template, answer."""
    path = Path(path)
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader((line for line in handle if not line.startswith("#")), delimiter="\t"))
    if not rows or set(rows[0]) != {"relation", "template", "answer"}:
        raise ValueError(f"{path} must be tab-separated with the header: relation, template, answer.")
    facts = []
    for number, row in enumerate(rows, start=2):
        try:
            check_template(row["template"])
        except ValueError as err:
            raise ValueError(f"{path}, line {number}: {err}") from None
        facts.append(Cloze(row["relation"], row["template"], row["answer"].strip().lower()))
    return facts


def logits_at_mask(model, batch, mask_token_id: int) -> torch.Tensor:
    """The MLM head's logits over the vocabulary at each row's one mask token: a tokenized batch [B, T] -> [B, V].

    BERT and ALBERT project only the B mask rows onto the vocabulary (hidden [B, T, H] -> [B, H] -> [B, V]), not
    all B x T positions; other masked LMs run their whole head."""
    rows, cols = (batch["input_ids"] == mask_token_id).nonzero(as_tuple=True)
    if not torch.equal(rows, torch.arange(batch["input_ids"].shape[0], device=rows.device)):  # row i, once
        raise ValueError(
            f"Every row needs exactly one mask token (id {mask_token_id}); found {rows.numel()} mask(s) "
            f"in {batch['input_ids'].shape[0]} rows (cloze templates and pattern_texts give one each)."
        )
    return logits_at(model, {k: v for k, v in batch.items() if k != "labels"}, rows, cols)  # [B, V]


@torch.no_grad()
def mask_logits(model, tokenizer, templates: Sequence[str], batch_size: int = 32):
    """The MLM head's logits at the one ``[MASK]`` of each template, batch by batch, shortest templates first (a batch
    pads only to its own longest, so sorting by length halves the work on SST-2's sentences): yields (indices into
    ``templates`` [B], logits [B, vocab]). The model is put in eval mode while this runs."""
    texts = [check_template(t).replace(SLOT, tokenizer.mask_token) for t in templates]
    lengths = [len(ids) for ids in tokenizer(texts)["input_ids"]] if texts else []
    order = sorted(range(len(texts)), key=lengths.__getitem__)
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    try:
        for start in range(0, len(order), batch_size):
            indices = order[start : start + batch_size]
            batch = tokenizer([texts[i] for i in indices], return_tensors="pt", padding=True).to(device)
            yield indices, logits_at_mask(model, batch, tokenizer.mask_token_id)  # [B, vocab]
    finally:
        model.train(was_training)


def fill_mask(model, tokenizer, templates: Sequence[str], k: int = 5, batch_size: int = 32) -> list[list[str]]:
    """The ``k`` most likely tokens for the one ``[MASK]`` of each template, best first (word pieces as the
    vocabulary spells them, e.g. ``paris`` or ``##s``). ``model`` is any ``...ForMaskedLM``."""
    if not 1 <= k <= len(tokenizer):
        raise ValueError(f"k={k!r}: accepted 1 to the vocabulary size ({len(tokenizer)}).")
    out: list[list[str]] = [[] for _ in templates]
    for indices, logits in mask_logits(model, tokenizer, templates, batch_size):
        for i, ids in zip(indices, logits.topk(k, dim=-1).indices.tolist()):
            out[i] = tokenizer.convert_ids_to_tokens(ids)
    return out


def word_log_probs(
    model, tokenizer, templates: Sequence[str], words: Sequence[str], batch_size: int = 32
) -> list[float]:
    """log P(word | template) at each template's ``[MASK]``, for single-token ``words`` (a word the vocabulary
    splits into several pieces is an error that names it; filter with ``is_single_token`` first)."""
    if len(templates) != len(words):
        raise ValueError(f"{len(templates)} templates for {len(words)} words: they must pair up.")
    ids = []
    for word in words:
        if not is_single_token(tokenizer, word):
            raise ValueError(
                f"{word!r} is {tokenizer.tokenize(word)} to this tokenizer: only single-token words "
                "can fill one [MASK]. Filter with is_single_token(tokenizer, word)."
            )
        ids.append(tokenizer.convert_tokens_to_ids(tokenizer.tokenize(word)[0]))
    out: list[float] = [0.0] * len(templates)
    for indices, logits in mask_logits(model, tokenizer, templates, batch_size):
        wanted = torch.tensor([ids[i] for i in indices], device=logits.device).unsqueeze(1)
        for i, value in zip(indices, logits.log_softmax(-1).gather(1, wanted).squeeze(1).tolist()):
            out[i] = value
    return out


def is_single_token(tokenizer, word: str) -> bool:
    """Whether ``word`` is one token of the vocabulary (and so can fill one [MASK])."""
    pieces = tokenizer.tokenize(word)
    return len(pieces) == 1 and pieces[0] != tokenizer.unk_token


def precision_at_k(predictions: Sequence[Sequence[str]], answers: Sequence[str], k: int) -> float:
    """Share of probes whose answer is among the first ``k`` predictions (case-insensitive)."""
    if len(predictions) != len(answers):
        raise ValueError(f"{len(predictions)} prediction lists for {len(answers)} answers: they must pair up.")
    if len(answers) == 0:
        raise ValueError("No probes to score.")
    hits = sum(a.lower() in [p.lower() for p in preds[:k]] for preds, a in zip(predictions, answers))
    return hits / len(answers)


def article_for(word: str) -> str:
    """'an' before a vowel letter, else 'a' (NEG-136 writes the article as '(a|an)')."""
    return "an" if word[:1].lower() in "aeiou" else "a"


def negation_pairs(rows) -> list[tuple[str, str]]:
    """NEG-136-SIMP rows -> (affirmative, negated) templates that differ only by "not", e.g.
    ('A robin is a [MASK].', 'A robin is not a [MASK].'). The article agrees with the affirmative target."""
    pairs = []
    for row in rows:
        article = article_for(row["target_aff"])
        aff, neg = (row[key].replace("(a|an)", article).strip() for key in ("context_aff", "context_neg"))
        pairs.append((f"{aff} {SLOT}.", f"{neg} {SLOT}."))
    return pairs


def mask_label_logits(
    model, batch: Mapping[str, torch.Tensor], mask_token_id: int, label_ids: torch.Tensor
) -> torch.Tensor:
    """Differentiable label-word logits for training (PET): a tokenized batch with one mask per row -> [B, C]
    (column c is label c's word)."""
    logits = logits_at_mask(model, batch, mask_token_id)  # [B, V]
    return logits[:, torch.as_tensor(label_ids).to(logits.device)]  # [B, C]


def label_logits(
    model, tokenizer, texts: Sequence[str], label_ids: Sequence[int], batch_size: int = 64
) -> torch.Tensor:
    """The MLM head's logits of the label words at each text's ``[MASK]``: texts with one ``[MASK]`` -> [N, C]
    (column c is label c's word). ``argmax(-1)`` is the zero-shot prediction."""
    ids = torch.as_tensor(list(label_ids))
    out = torch.empty(len(texts), len(ids))
    for indices, logits in mask_logits(model, tokenizer, texts, batch_size):
        out[torch.as_tensor(indices)] = logits[:, ids.to(logits.device)].float().cpu()
    return out
