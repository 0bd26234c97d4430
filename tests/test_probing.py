import numpy as np
import pytest
import torch

from course_utils import load_dataset
from course_utils.cloze import (
    check_template,
    fill_mask,
    is_single_token,
    load_facts,
    negation_pairs,
    precision_at_k,
    word_log_probs,
)
from course_utils.probing import (
    ScalarMixProbe,
    fit_probe,
    flat_labels,
    layer,
    linear_probe,
    majority_accuracy,
    mlp_probe,
    probe_accuracy,
    word_features,
)
from course_utils.pseudo_likelihood import masked_log_probs, pair_scores, shared_positions, stereotype_score


# ------------------------------------------------------------------------------------------------------- cloze
def test_a_template_needs_exactly_one_slot():
    assert check_template("Paris is in [MASK].") == "Paris is in [MASK]."
    for bad, n in (("Paris is in France.", 0), ("[MASK] is in [MASK].", 2)):
        with pytest.raises(ValueError, match=f"exactly one \\[MASK\\] slot; .* has {n}"):
            check_template(bad)
    with pytest.raises(TypeError, match="a str"):
        check_template(["[MASK]"])


def test_the_course_facts_load_and_a_bad_file_names_its_line(tmp_path):
    facts = load_facts()
    assert len(facts) >= 40 and {f.relation for f in facts} >= {"capital", "language", "occupation"}
    bad = tmp_path / "facts.tsv"
    bad.write_text(
        "relation\ttemplate\tanswer\ncapital\tThe capital of France is [MASK].\tparis\n"
        "capital\tThe capital of Spain is Madrid.\tmadrid\n",
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match="line 3: .* has 0"):
        load_facts(bad)


def test_fill_mask_reads_the_mask_position(tiny_mlm, tokenizer):
    paris = tokenizer.convert_tokens_to_ids("paris")
    with torch.no_grad():
        tiny_mlm.cls.predictions.decoder.bias[paris] += 100.0  # the head now always says "paris"
    try:
        top = fill_mask(tiny_mlm, tokenizer, ["The capital of France is [MASK].", "[MASK] is lovely in spring."], k=3)
    finally:
        with torch.no_grad():
            tiny_mlm.cls.predictions.decoder.bias[paris] -= 100.0
    assert [row[0] for row in top] == ["paris", "paris"] and all(len(row) == 3 for row in top)
    assert precision_at_k(top, ["Paris", "london"], k=1) == 0.5
    with pytest.raises(ValueError, match="pair up"):
        precision_at_k(top, ["paris"], k=1)


def test_word_log_probs_agree_with_fill_mask(tiny_mlm, tokenizer):
    templates = ["The capital of France is [MASK].", "A robin is a [MASK]."]
    best = [row[0] for row in fill_mask(tiny_mlm, tokenizer, templates, k=1)]
    top = word_log_probs(tiny_mlm, tokenizer, templates, best)
    other = word_log_probs(tiny_mlm, tokenizer, templates, ["bird", "bird"])
    assert all(t >= o for t, o in zip(top, other)) and all(t < 0 for t in top)
    assert is_single_token(tokenizer, "bird") and not is_single_token(tokenizer, "ornithologically")
    with pytest.raises(ValueError, match="only single-token words"):
        word_log_probs(tiny_mlm, tokenizer, templates[:1], ["ornithologically"])


def test_negation_pairs_differ_only_by_not():
    rows = load_dataset("lm_diagnostics", "neg_136_simp", split="test")
    pairs = negation_pairs(rows)
    assert pairs[0] == ("A trout is a [MASK].", "A trout is not a [MASK].")
    assert all(neg.replace(" not", "", 1) == aff for aff, neg in pairs)
    assert (
        negation_pairs(
            [
                {
                    "context_aff": "A crow is (a|an)",
                    "context_neg": "A crow is not (a|an)",
                    "target_aff": "animal",
                    "target_neg": "tree",
                }
            ]
        )[0][0]
        == "A crow is an [MASK]."
    )


# ------------------------------------------------------------------------------------------- pseudo-likelihood
def test_shared_positions_skip_the_words_that_differ():
    assert shared_positions([5, 6, 7, 8], [5, 9, 7, 8]) == ([0, 2, 3], [0, 2, 3])
    assert shared_positions([5, 6, 7], [5, 9, 9, 7]) == ([0, 2], [0, 3])


def test_masked_log_probs_masks_one_position_at_a_time(tiny_mlm, tokenizer):
    ids = tokenizer("the cat sat down")["input_ids"]
    masked = list(ids)
    masked[2] = tokenizer.mask_token_id
    with torch.no_grad():
        expected = tiny_mlm(input_ids=torch.tensor([masked])).logits[0, 2].log_softmax(-1)[ids[2]]
    assert masked_log_probs(tiny_mlm, tokenizer, ids, [2]) == pytest.approx(float(expected), abs=1e-5)
    # several positions in one batch (only the masked rows are projected): the sum of the one-at-a-time full-head values
    one_by_one = 0.0
    for p in (1, 2, 3):
        masked = list(ids)
        masked[p] = tokenizer.mask_token_id
        with torch.no_grad():
            one_by_one += float(tiny_mlm(input_ids=torch.tensor([masked])).logits[0, p].log_softmax(-1)[ids[p]])
    assert masked_log_probs(tiny_mlm, tokenizer, ids, [1, 2, 3], batch_size=2) == pytest.approx(one_by_one, abs=1e-4)
    assert masked_log_probs(tiny_mlm, tokenizer, ids, []) == 0.0
    a, b = pair_scores(tiny_mlm, tokenizer, "the nurse was kind", "the nurse was kind")
    assert a == pytest.approx(b) and a < 0


def test_stereotype_score_follows_the_pair_direction(monkeypatch):
    import course_utils.pseudo_likelihood as pl

    monkeypatch.setattr(pl, "pair_scores", lambda m, t, more, less: (float(len(more)), float(len(less))))
    rows = [  # the longer sentence scores higher
        {"sent_more": "xxxx", "sent_less": "x", "stereo_antistereo": 0, "bias_type": 0},  # prefers sent_more: stereo
        {"sent_more": "xxxx", "sent_less": "x", "stereo_antistereo": 1, "bias_type": 0},  # antistereo: sent_less is
        {"sent_more": "x", "sent_less": "xxxx", "stereo_antistereo": 1, "bias_type": 1},  # the stereotyping one
    ]
    score, per_category, verdicts = stereotype_score(None, None, rows, categories=["race-color", "gender"])
    assert verdicts == [True, False, True] and score == pytest.approx(2 / 3)
    assert per_category == {"gender": 1.0, "race-color": 0.5}
    with pytest.raises(ValueError, match="No CrowS-Pairs rows"):
        stereotype_score(None, None, [])


def test_stereotype_score_runs_on_the_shipped_pairs(tiny_mlm, tokenizer):
    rows = load_dataset("crows_pairs", split="test").select(range(3))
    short = [r for r in rows if len(tokenizer(r["sent_more"])["input_ids"]) <= 64]
    score, _, verdicts = stereotype_score(tiny_mlm, tokenizer, short)
    assert len(verdicts) == len(short) and score == pytest.approx(sum(verdicts) / len(verdicts))


# ------------------------------------------------------------------------------------------------- probing
def test_labels_must_match_words():
    assert flat_labels([["a", "b"], ["c"]], [[1, 2], [3]]).tolist() == [1, 2, 3]
    with pytest.raises(ValueError, match="Sentence 1 has 1 words but 2 labels"):
        flat_labels([["a", "b"], ["c"]], [[1, 2], [3, 4]])


def test_word_features_keep_each_words_first_piece(tiny_mlm, tokenizer):
    encoder = tiny_mlm.bert
    sentences = [["unbelievable", "cats"], ["dogs", "run", "quickly"]]
    feats = word_features(encoder, tokenizer, sentences)
    assert feats.shape == (5, 3, 32)  # 5 words, embeddings + 2 layers, hidden 32
    enc = tokenizer(sentences[0], is_split_into_words=True, return_tensors="pt")
    first_of_cats = enc.word_ids(0).index(1)
    with torch.no_grad():
        hidden = encoder(**enc, output_hidden_states=True).hidden_states
    assert torch.allclose(feats[1, 2], hidden[2][0, first_of_cats], atol=1e-5)
    assert torch.allclose(feats[0, 0], hidden[0][0, 1], atol=1e-5)
    assert torch.equal(layer(feats, -1), feats[:, 2])
    # batched by length, returned in sentence order: the longer sentence first gives its three words first
    flipped = word_features(encoder, tokenizer, sentences[::-1], batch_size=1)
    assert torch.allclose(flipped, torch.cat([feats[2:], feats[:2]]), atol=1e-5)
    with pytest.raises(IndexError, match="layers 0 \\(embeddings\\) to 2"):
        layer(feats, 3)
    with pytest.raises(ValueError, match="positions; the model has 64"):
        word_features(encoder, tokenizer, [["word"] * 80])


def test_probes_learn_a_readable_signal_and_not_noise():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3000, 3, 16, generator=g)
    y = (x[:, 2, 0] > 0).long() + 2 * (x[:, 2, 1] > 0).long()  # 4 labels, readable from layer 2 only
    train, test = slice(0, 2000), slice(2000, None)
    probe = linear_probe(16, 4)
    fit_probe(probe, layer(x, 2)[train], y[train], epochs=10, batch_size=64)
    assert probe_accuracy(probe, layer(x, 2)[test], y[test]) > 0.9  # chance: 0.25
    noise = linear_probe(16, 4)
    fit_probe(noise, layer(x, 0)[train], y[train], epochs=10, batch_size=64)
    assert probe_accuracy(noise, layer(x, 0)[test], y[test]) < 0.4  # layer 0 carries nothing about y
    mlp = mlp_probe(16, 4, width=32)
    fit_probe(mlp, layer(x, 2)[train], y[train], epochs=10, batch_size=64)
    assert probe_accuracy(mlp, layer(x, 2)[test], y[test]) > 0.9
    mix = ScalarMixProbe(3, 16, 4)
    fit_probe(mix, x[train], y[train], epochs=10, batch_size=64, lr=3e-2)
    w = mix.weights()
    assert w.sum() == pytest.approx(1.0, abs=1e-5) and w.argmax() == 2
    with pytest.raises(ValueError, match="one label per word"):
        fit_probe(probe, x[:10, 2], y[:9])


def test_control_task_is_fixed_per_type_and_copies_the_label_distribution():
    from course_tools.exercise_reference import control_task  # lesson 06's Exercise 1, kept out of course_utils

    words = [f"w{i}" for i in range(6000)]
    labels = [0] * 6000 + [1] * 3000 + [2] * 1000  # 60 / 30 / 10 %
    mapping = control_task(words + words[:10], labels, seed=1)
    assert len(mapping) == 6000 and mapping == control_task(words, labels, seed=1)
    assert mapping != control_task(words, labels, seed=2)
    shares = np.bincount(list(mapping.values())) / len(mapping)
    assert np.allclose(shares, [0.6, 0.3, 0.1], atol=0.03)
    with pytest.raises(ValueError, match="needs the task's labels"):
        control_task(words, [])
    assert majority_accuracy(torch.tensor([0, 0, 1]), torch.tensor([0, 1, 1, 1])) == 0.25
