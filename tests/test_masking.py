import random

import pytest
import torch
from transformers import DataCollatorForLanguageModeling

from course_utils.masking import (
    IGNORE_INDEX,
    make_nsp_pairs,
    mask_tokens,
    maskable_positions,
    masking_rates,
    sample_span_lengths,
    span_length_distribution,
    span_mask,
    whole_word_mask,
)


@pytest.fixture(scope="module")
def batch(tokenizer, sentences):
    return tokenizer(sentences, padding=True, return_tensors="pt")


def rates_of(tokenizer, enc, masked):
    allowed = maskable_positions(enc["input_ids"], tokenizer, enc["attention_mask"])
    return masking_rates(enc["input_ids"], masked, tokenizer.mask_token_id, allowed)


def test_bert_masking_rates_on_a_large_batch(tokenizer, batch):
    masked = mask_tokens(
        batch["input_ids"],
        tokenizer,
        attention_mask=batch["attention_mask"],
        generator=torch.Generator().manual_seed(0),
    )
    rates = rates_of(tokenizer, batch, masked)
    assert rates["masked_fraction"] == pytest.approx(0.15, abs=0.006)
    assert rates["mask_token_fraction"] == pytest.approx(0.80, abs=0.02)
    assert rates["random_token_fraction"] == pytest.approx(0.10, abs=0.015)
    assert rates["kept_fraction"] == pytest.approx(0.10, abs=0.015)


def test_special_and_padding_tokens_are_never_selected(tokenizer, batch):
    masked = mask_tokens(
        batch["input_ids"],
        tokenizer,
        attention_mask=batch["attention_mask"],
        mlm_probability=0.9,
        generator=torch.Generator().manual_seed(1),
    )
    special = torch.isin(batch["input_ids"], torch.tensor(tokenizer.all_special_ids))
    selected = masked.labels != IGNORE_INDEX
    assert not (selected & special).any()
    assert not (selected & (batch["attention_mask"] == 0)).any()
    assert torch.equal(masked.input_ids[special], batch["input_ids"][special])


def test_label_layout(tokenizer, batch):
    ids = batch["input_ids"]
    masked = mask_tokens(
        ids, tokenizer, attention_mask=batch["attention_mask"], generator=torch.Generator().manual_seed(2)
    )
    selected = masked.labels != IGNORE_INDEX
    assert masked.labels.shape == ids.shape == masked.input_ids.shape
    assert torch.equal(masked.labels[selected], ids[selected])  # labels: the original token
    assert torch.equal(masked.input_ids[~selected], ids[~selected])  # untouched elsewhere
    assert not torch.equal(masked.input_ids, ids)


def test_the_input_is_not_modified_and_seeds_reproduce(tokenizer, batch):
    ids = batch["input_ids"].clone()
    a = mask_tokens(ids, tokenizer, generator=torch.Generator().manual_seed(3))
    b = mask_tokens(ids, tokenizer, generator=torch.Generator().manual_seed(3))
    assert torch.equal(ids, batch["input_ids"])
    assert torch.equal(a.input_ids, b.input_ids) and torch.equal(a.labels, b.labels)


def test_agrees_in_distribution_with_the_transformers_collator(tokenizer, sentences):
    features = [tokenizer(s) for s in sentences]
    collator = DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15, seed=0)
    theirs = collator(features)
    enc = tokenizer.pad(features, return_tensors="pt")
    original = enc["input_ids"]
    ours = mask_tokens(
        original, tokenizer, attention_mask=enc["attention_mask"], generator=torch.Generator().manual_seed(0)
    )
    a = rates_of(tokenizer, enc, ours)
    b = masking_rates(
        original,
        type(ours)(theirs["input_ids"], theirs["labels"]),
        tokenizer.mask_token_id,
        maskable_positions(original, tokenizer, enc["attention_mask"]),
    )
    for key in a:
        assert a[key] == pytest.approx(b[key], abs=0.02), key
    # same selection law per position: sequences' selected counts have similar means
    per_seq_ours = (ours.labels != IGNORE_INDEX).sum(1).float().mean()
    per_seq_theirs = (theirs["labels"] != IGNORE_INDEX).sum(1).float().mean()
    assert per_seq_ours == pytest.approx(float(per_seq_theirs), rel=0.08)


def test_whole_word_masking_selects_words_together(tokenizer, sentences):
    enc = tokenizer(sentences[:1500], padding=True, return_tensors="pt")
    words = [enc.word_ids(i) for i in range(len(enc["input_ids"]))]
    masked = whole_word_mask(
        enc["input_ids"],
        words,
        tokenizer,
        attention_mask=enc["attention_mask"],
        generator=torch.Generator().manual_seed(0),
    )
    selected = masked.labels != IGNORE_INDEX
    split_words = 0
    for i, row in enumerate(words):
        groups: dict[int, set[bool]] = {}
        for t, w in enumerate(row):
            if w is not None:
                groups.setdefault(w, set()).add(bool(selected[i, t]))
        assert all(len(g) == 1 for g in groups.values()), f"sequence {i}: a word was partly selected"
        split_words += sum(row.count(w) > 1 for w in set(row) if w is not None)
    assert split_words > 100  # the check above was exercised on multi-piece words
    assert rates_of(tokenizer, enc, masked)["masked_fraction"] == pytest.approx(0.15, abs=0.015)


def test_span_lengths_follow_the_clipped_geometric():
    probs = span_length_distribution(0.2, 10)
    mean = float((probs * torch.arange(1, 11)).sum())
    assert mean == pytest.approx(3.8, abs=0.01)  # SpanBERT's reported mean span length
    lengths = sample_span_lengths(20000, generator=torch.Generator().manual_seed(0))
    assert lengths.min() >= 1 and lengths.max() <= 10
    assert lengths.float().mean() == pytest.approx(mean, abs=0.06)


def test_span_masking_meets_its_budget_with_contiguous_spans(tokenizer, sentences):
    passages = [" ".join(sentences[i : i + 12]) for i in range(0, 2400, 12)]  # ~128-token sequences, as in pretraining
    enc = tokenizer(passages, padding=True, truncation=True, max_length=128, return_tensors="pt")
    masked = span_mask(
        enc["input_ids"], tokenizer, attention_mask=enc["attention_mask"], generator=torch.Generator().manual_seed(0)
    )
    allowed = maskable_positions(enc["input_ids"], tokenizer, enc["attention_mask"])
    selected = masked.labels != IGNORE_INDEX
    assert not (selected & ~allowed).any()
    per_seq_budget = (allowed.sum(1).float() * 0.15).round()
    assert torch.all(selected.sum(1) <= per_seq_budget)
    assert selected.sum() / allowed.sum() == pytest.approx(0.15, abs=0.02)
    # spans: fewer runs of selected tokens than selected tokens (they come in contiguous pieces)
    starts = selected[:, 1:] & ~selected[:, :-1]
    assert starts.sum() < 0.45 * selected.sum()


def test_nsp_pairs_are_half_next_and_random_ones_come_from_other_documents():
    docs = [[f"d{d} s{s}" for s in range(30)] for d in range(20)]
    pairs = make_nsp_pairs(docs, rng=random.Random(0))
    assert len(pairs) == 20 * 29
    share = sum(p.is_next for p in pairs) / len(pairs)
    assert share == pytest.approx(0.5, abs=0.05)
    for p in pairs:
        doc_a, doc_b = p.sentence_a.split()[0], p.sentence_b.split()[0]
        if p.is_next:
            assert doc_a == doc_b and int(p.sentence_b.split("s")[-1]) == int(p.sentence_a.split("s")[-1]) + 1
            assert p.label == 0
        else:
            assert doc_a != doc_b and p.label == 1


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"mlm_probability": 1.5}, "mlm_probability must be a number in \\[0, 1\\]; got 1.5"),
        ({"mlm_probability": -0.1}, "mlm_probability"),
        ({"mask_replace_prob": 0.9, "random_replace_prob": 0.2}, "at most 1"),
        ({"random_replace_prob": "0.1"}, "random_replace_prob"),
    ],
)
def test_bad_probabilities_are_refused(tokenizer, kwargs, message):
    with pytest.raises(ValueError, match=message):
        mask_tokens(torch.tensor([[101, 2023, 102]]), tokenizer, **kwargs)


def test_tokenizer_without_mask_token_is_refused(tokenizer):
    class NoMask:
        mask_token_id = None
        all_special_ids = [0]

    with pytest.raises(ValueError, match="has no mask token"):
        mask_tokens(torch.tensor([[5, 6, 7]]), NoMask())


@pytest.mark.parametrize("ids", [torch.zeros((0,), dtype=torch.long), torch.zeros((2, 0), dtype=torch.long), []])
def test_empty_input_is_refused(tokenizer, ids):
    with pytest.raises(ValueError, match="empty"):
        mask_tokens(ids, tokenizer)


def test_float_or_3d_input_is_refused(tokenizer):
    with pytest.raises(ValueError, match="integer token ids"):
        mask_tokens(torch.ones(2, 3), tokenizer)
    with pytest.raises(ValueError, match="shape"):
        mask_tokens(torch.ones(2, 3, 4, dtype=torch.long), tokenizer)


def test_nsp_bad_input():
    with pytest.raises(ValueError, match="at least 2 non-empty documents"):
        make_nsp_pairs([["only one document", "two sentences"]])
    with pytest.raises(ValueError, match="2 or more sentences"):
        make_nsp_pairs([["a"], ["b"]])
    with pytest.raises(ValueError, match="next_probability"):
        make_nsp_pairs([["a", "b"], ["c"]], next_probability=2)
