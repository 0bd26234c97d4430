import datasets
import pytest
import torch
from transformers import BertConfig, BertForMaskedLM

from course_utils.adaptation import check_label_sets, classifier, continue_pretraining, load_task, sample_texts
from course_utils.packing import corpus_blocks
from course_utils.training import train_only


@pytest.fixture(scope="module")
def tiny_mlm(tokenizer):
    torch.manual_seed(0)
    cfg = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=32,
    )
    return BertForMaskedLM(cfg)


def test_chemprot_loads_with_one_label_set():
    splits, names = load_task("chemprot")
    assert len(names) == 13 and "INHIBITOR" in names
    row = splits["validation"][0]
    assert names[row["label_id"]] == row["label"]


def test_a_label_missing_from_training_is_refused():
    splits = datasets.DatasetDict(
        {
            "train": datasets.Dataset.from_dict({"text": ["a", "b"], "label": ["X", "Y"]}),
            "test": datasets.Dataset.from_dict({"text": ["c"], "label": ["Z"]}),
        }
    )
    with pytest.raises(ValueError, match=r"test split of toy has label\(s\) \['Z'\]"):
        check_label_sets(splits, "toy")
    assert check_label_sets(splits.filter(lambda r: r["label"] != "Z"), "toy") == ["X", "Y"]


def test_sampled_corpora_have_the_asked_size_and_repeat_by_seed():
    texts = [f"sentence {i}" for i in range(100)]
    assert len(sample_texts(texts, 30)) == 30 and len(set(sample_texts(texts, 30))) == 30
    assert sample_texts(texts, 30, seed=1) == sample_texts(texts, 30, seed=1) != sample_texts(texts, 30, seed=2)
    with pytest.raises(ValueError, match="Cannot draw n=101 texts from a corpus of 100"):
        sample_texts(texts, 101)


def test_empty_or_short_corpora_are_refused(tokenizer, sentences):
    with pytest.raises(ValueError, match="The corpus is empty"):
        corpus_blocks(["", "   "], tokenizer, 32)
    with pytest.raises(ValueError, match="too short"):
        corpus_blocks(sentences[:5], tokenizer, 32, min_blocks=16)
    blocks = corpus_blocks(sentences[:200], tokenizer, 32, min_blocks=16)
    assert blocks.shape[1] == 32 and blocks.shape[0] >= 16


def test_continued_pretraining_adapts_a_copy(tiny_mlm, tokenizer, sentences):
    blocks = corpus_blocks(sentences[:400], tokenizer, 32)
    before = {k: v.clone() for k, v in tiny_mlm.state_dict().items()}
    adapted, history = continue_pretraining(
        tiny_mlm, tokenizer, blocks, blocks[:32], steps=40, batch_size=16, lr=3e-3, progress=False
    )
    assert history.eval_step == [0, 40] and history.eval_loss[-1] < history.eval_loss[0] - 0.5
    assert all(torch.equal(v, tiny_mlm.state_dict()[k]) for k, v in before.items())  # the original is untouched
    assert not adapted.training


def test_classifier_copies_the_mlm_encoder(tiny_mlm, tokenizer):
    clf = classifier(tiny_mlm, 13)
    assert torch.equal(clf.encoder.embeddings.word_embeddings.weight, tiny_mlm.bert.embeddings.word_embeddings.weight)
    assert clf.encoder is not tiny_mlm.bert
    batch = tokenizer(["the enzyme inhibits the receptor", "no effect"], padding=True, return_tensors="pt")
    assert clf(**batch).logits.shape == (2, 13)


def test_selective_fine_tuning_counts(tiny_mlm):
    clf = classifier(tiny_mlm, 3)
    head = sum(p.numel() for p in clf.head.parameters())
    layer = sum(p.numel() for p in clf.encoder.encoder.layer[-1].parameters())
    norms = sum(p.numel() for m in clf.encoder.modules() if isinstance(m, torch.nn.LayerNorm) for p in m.parameters())
    top_norms = sum(
        p.numel()
        for m in clf.encoder.encoder.layer[-1].modules()
        if isinstance(m, torch.nn.LayerNorm)
        for p in m.parameters()
    )
    assert train_only(clf, 0) == head
    assert train_only(clf, 1) == head + layer
    assert train_only(clf, 1, layer_norms=True) == head + layer + norms - top_norms
    embeddings = sum(p.numel() for p in clf.encoder.embeddings.parameters())
    embedding_norm = sum(p.numel() for p in clf.encoder.embeddings.LayerNorm.parameters())
    total = sum(p.numel() for p in clf.parameters())
    assert train_only(clf, 2, layer_norms=True) == total - embeddings + embedding_norm
    assert not clf.encoder.embeddings.word_embeddings.weight.requires_grad
    assert train_only(clf, None) == total and clf.encoder.embeddings.word_embeddings.weight.requires_grad
    with pytest.raises(ValueError, match="top_layers=3: the encoder has 2 layers"):
        train_only(clf, 3)


def test_selective_training_of_a_masked_lm_keeps_the_tied_decoder_frozen(tiny_mlm):
    """Lesson 08's PET on the quick profile trains the MLM head and the top layers only."""
    import copy

    mlm = copy.deepcopy(tiny_mlm)
    head = {n: p for n, p in mlm.cls.named_parameters() if p is not mlm.bert.embeddings.word_embeddings.weight}
    layer = sum(p.numel() for p in mlm.bert.encoder.layer[-1].parameters())
    assert train_only(mlm, 1) == sum(p.numel() for p in head.values()) + layer
    assert not mlm.bert.embeddings.word_embeddings.weight.requires_grad  # = the decoder's weight (tied)
    assert not any(p.requires_grad for p in mlm.bert.encoder.layer[0].parameters())
    assert mlm.cls.predictions.transform.dense.weight.requires_grad
    with pytest.raises(TypeError, match="masked LM such as BertForMaskedLM"):
        train_only(torch.nn.Linear(2, 2), 1)


def test_equal_tokens_cuts_the_corpus_with_more_tokens_not_the_one_with_more_sentences():
    from course_tools.exercise_reference import equal_tokens  # lesson 05's Exercise 1, kept out of course_utils
    from course_utils.adaptation import sample_texts

    words = lambda text: len(text.split())  # noqa: E731
    few_long = [" ".join(["bio"] * 10) + f" {i}" for i in range(5)]  # 5 sentences, 55 words
    many_short = [f"cs {i}" for i in range(20)]  # 20 sentences, 40 words
    x, y = equal_tokens(few_long, many_short, words, seed=1)
    assert y == sample_texts(many_short, 20, 1)  # fewer tokens: whole, shuffled
    assert x == sample_texts(few_long, 5, 1)[:4]  # the shortest prefix reaching 40 words: 44
    assert 0 <= sum(map(words, x)) - sum(map(words, y)) < max(map(words, few_long))
    assert (x, y) == equal_tokens(few_long, many_short, words, seed=1)
    assert equal_tokens(many_short, few_long, words, seed=1) == (y, x)
    with pytest.raises(ValueError, match="no tokens"):
        equal_tokens(["", "a"], ["b"], words)
    with pytest.raises(ValueError, match="Cannot draw"):
        equal_tokens([], ["b"], words)


@pytest.mark.slow
def test_the_regime_search_pairs_seeds_and_writes_its_table(tmp_path):
    """Lesson 05's table comes from ``python -m course_tools.regime_search``: one cheap row (section 2's DAPT, top
    layer + head) with one seed runs end to end on the course checkpoint, and the gain is DAPT minus general for the
    same seed. A row number outside the table is refused with the range. (A process of its own: the search calls
    the lessons' ``setup``, which sets the profile and seeds of the process it runs in.)"""
    import json
    import subprocess
    import sys

    from course_tools.regime_search import with_markers

    assert with_markers("<< aspirin >> binds [[ COX-1 ]]") == "{ aspirin } binds [ COX-1 ]"
    command = [sys.executable, "-m", "course_tools.regime_search", "--out", str(tmp_path / "search.json")]
    refused = subprocess.run(command + ["--regimes", "9"], capture_output=True, text=True)
    assert refused.returncode == 2 and "--regimes takes numbers from 1 to 7" in refused.stderr
    assert not (tmp_path / "search.json").exists()

    done = subprocess.run(command + ["--regimes", "3", "--seeds", "1"], capture_output=True, text=True, check=True)
    assert "| section 2's DAPT; only the top layer and the head train |" in done.stdout
    (row,) = json.loads((tmp_path / "search.json").read_text())["rows"]
    assert row["regime"] == 3 and len(row["general"]) == len(row["DAPT"]) == 1
    assert row["gain_mean"] == pytest.approx(row["DAPT"][0] - row["general"][0])
