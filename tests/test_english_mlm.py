"""The course's English MLM (issue 38): MiniLM's body + the shipped head and top layers, checked and put together."""

import json
import shutil

import pytest
import torch
from safetensors.torch import load_file
from transformers import BertConfig, BertForMaskedLM

from course_utils import english_mlm as em
from course_utils import resources
from course_utils.profiles import COURSE_MLM_CHECKPOINT, COURSE_MLM_RECIPE, PROFILES
from course_utils.registry import ShippedDataError

MINILM = "sentence-transformers/all-MiniLM-L6-v2"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_trained_names_are_the_head_and_the_top_layers():
    model = BertForMaskedLM(
        BertConfig(vocab_size=50, hidden_size=8, num_hidden_layers=3, num_attention_heads=2, intermediate_size=16)
    )
    names = em.trained_names(model, 1)
    assert names and all(n.startswith(("cls.predictions.", "bert.encoder.layer.2.")) for n in names)
    assert any(n.startswith("bert.encoder.layer.2.") for n in names)
    assert "cls.predictions.transform.dense.weight" in names and "cls.predictions.bias" in names
    assert not any("embeddings" in n or "layer.1." in n for n in names)  # the tied decoder is the word embedding
    assert em.trained_names(model, 0) == {n for n in names if n.startswith("cls.")}
    with pytest.raises(ValueError, match="from 0 to 3"):
        em.trained_names(model, 4)


def test_the_shipped_model_is_whole_small_and_made_with_the_course_recipe():
    facts = em.manifest()
    assert facts["recipe_key"] == em.recipe_key(COURSE_MLM_RECIPE)
    assert set(facts["files"]) == {em.WEIGHTS}
    size = sum(p.stat().st_size for p in em.SHIPPED.iterdir())
    assert size <= 10e6, f"the shipped English MLM is {size / 1e6:.1f} MB (the issue's budget: 10 MB)"
    state = load_file(em.SHIPPED / em.WEIGHTS)
    assert all(t.dtype == torch.float16 for t in state.values())
    assert sum(t.numel() for t in state.values()) == facts["parameters"]
    summary = facts["summary"]
    # it learned: the held-out loss fell far from the new head's, and fp16 cost nothing measurable
    assert summary["heldout_loss_end"]["books"] < summary["heldout_loss_start"]["books"] - 3
    for part in ("books", "sst2"):
        assert abs(summary["heldout_loss_fp16"][part] - summary["heldout_loss_end"][part]) < 0.01
    assert "What it is" in (em.SHIPPED / "README.md").read_text()  # the model card


def test_assembled_model_is_minilm_below_and_the_shipped_weights_above(cache):
    folder = em.assemble()
    assert folder.parent == cache and [p.name for p in cache.iterdir()] == [folder.name]  # nothing partial left
    model = BertForMaskedLM.from_pretrained(folder)
    base = BertForMaskedLM.from_pretrained(resources.resolve_checkpoint(MINILM).location)
    shipped = load_file(em.SHIPPED / em.WEIGHTS)
    own, theirs = dict(model.named_parameters()), dict(base.named_parameters())
    for name, p in own.items():
        expected = shipped[name].float() if name in shipped else theirs[name]
        assert torch.equal(p.detach(), expected.detach()), name
    assert em.assemble() == folder  # the second time: the cache, as it is


def test_the_resolver_serves_it_under_its_course_name_and_never_asks_the_hub(cache, monkeypatch):
    folder = em.assemble()  # offline: MiniLM from its package (online, its body would come from the hub)
    monkeypatch.setattr(resources, "hub_status", lambda kind="dataset": (True, "reachable (pretend)"))
    ckpt = resources.resolve_checkpoint(COURSE_MLM_CHECKPOINT)
    assert ckpt.location == str(folder)
    assert ckpt.source == "course" and "MiniLM" in ckpt.detail and "shipped" in ckpt.detail
    assert PROFILES["quick"].mlm_checkpoint == PROFILES["quick"].prompting.mlm_model == COURSE_MLM_CHECKPOINT


@pytest.mark.parametrize(
    "damage",
    [
        lambda f: (f / em.WEIGHTS).write_bytes(b"truncated"),
        lambda f: (f / em.WEIGHTS).unlink(),
        lambda f: (f / em.MANIFEST).write_text("{not json"),
    ],
)
def test_a_damaged_shipped_model_is_an_error_that_says_how_to_restore_it(tmp_path, cache, monkeypatch, damage):
    copy = tmp_path / "minilm-mlm"
    shutil.copytree(em.SHIPPED, copy)
    monkeypatch.setattr(em, "SHIPPED", copy)
    damage(copy)
    with pytest.raises(ShippedDataError, match="git checkout"):
        em.assemble()
    assert not cache.exists() or not any(cache.iterdir())


@pytest.mark.slow
def test_the_assembled_model_scores_its_shipped_heldout_loss(cache):
    """Put together on this machine, the model reproduces the held-out loss the maintainers measured (fp16 weights):
    a model assembled wrongly (a layer missed, the head misplaced) would be far off."""
    from transformers import AutoTokenizer

    from course_tools.build_english_mlm import heldout_sets
    from course_utils.pretraining import heldout_loss

    folder = em.assemble()
    model, tokenizer = BertForMaskedLM.from_pretrained(folder).eval(), AutoTokenizer.from_pretrained(folder)
    books = heldout_sets(COURSE_MLM_RECIPE, tokenizer)["books"]
    expected = json.loads((em.SHIPPED / em.MANIFEST).read_text())["summary"]["heldout_loss_fp16"]["books"]
    assert heldout_loss(model, books, tokenizer, seed=COURSE_MLM_RECIPE.seed) == pytest.approx(expected, abs=1e-3)
