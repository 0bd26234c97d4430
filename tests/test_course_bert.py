import copy
import json

import pytest
import torch
from transformers import BertForMaskedLM

from course_utils import course_bert as cb
from course_utils import resources
from course_utils.paths import CACHE_ENV
from course_utils.pretraining import BertSize, bert_config
from course_utils.profiles import PretrainRecipe
from course_utils.wordpiece import train_wordpiece

RECIPE = PretrainRecipe(
    vocab_size=300,
    size=BertSize(32, 1, 2, 64),
    block_length=32,
    batch_size=4,
    steps=3,
    lr=1e-3,
    warmup_steps=1,
    eval_every=3,
    eval_blocks=4,
)


@pytest.fixture(scope="module")
def pair(sentences):
    tok = train_wordpiece(sentences[:500], RECIPE.vocab_size)
    torch.manual_seed(0)
    return BertForMaskedLM(bert_config(len(tok), RECIPE.size, RECIPE.block_length)).eval(), tok


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(cb, "course_recipe", lambda: RECIPE)
    return tmp_path


def test_saved_checkpoint_round_trips(pair, cache):
    model, tok = pair
    folder = cb.save_checkpoint(model, tok, RECIPE, summary={"heldout_loss_end": 5.0})
    assert folder == cb.checkpoint_dir(RECIPE) and folder.parent == cache
    assert cb.checkpoint_problem(folder) is None
    assert [p.name for p in cache.iterdir()] == [folder.name]  # no partial folder left behind
    loaded, loaded_tok = cb.load_checkpoint(folder)
    ids = tok(["it was a dark and stormy night"], return_tensors="pt")["input_ids"]
    assert loaded_tok("it was a dark and stormy night", return_tensors="pt")["input_ids"].equal(ids)
    with torch.no_grad():
        torch.testing.assert_close(loaded(input_ids=ids).logits, model(input_ids=ids).logits, rtol=0, atol=0)
    assert json.loads((folder / cb.MANIFEST).read_text())["summary"] == {"heldout_loss_end": 5.0}


def test_a_changed_recipe_gets_its_own_folder():
    other = PretrainRecipe(**{**RECIPE.__dict__, "steps": 4})
    assert cb.recipe_key(other) != cb.recipe_key(RECIPE)


@pytest.mark.parametrize(
    "damage, problem",
    [
        (
            lambda f: (f / "model.safetensors").write_bytes(b"truncated"),
            "model.safetensors does not match its checksum",
        ),
        (lambda f: (f / "tokenizer.json").unlink(), "tokenizer.json is missing"),
        (lambda f: (f / cb.MANIFEST).unlink(), "no readable manifest.json"),
        (lambda f: (f / cb.MANIFEST).write_text("{not json"), "no readable manifest.json"),
    ],
)
def test_damaged_cache_is_detected_rebuilt_and_never_loaded(pair, cache, monkeypatch, damage, problem):
    model, tok = pair
    folder = cb.save_checkpoint(model, tok, RECIPE)
    damage(folder)
    assert problem in cb.checkpoint_problem(folder)
    with pytest.raises(FileNotFoundError, match="not a usable checkpoint"):
        cb.load_checkpoint(folder)
    builds = []

    def fake_build(recipe, progress=None):
        builds.append(recipe)
        from course_utils.pretraining import History

        return model, tok, History(1, 1, 1, eval_loss=[9.0, 8.0]), {"heldout_loss_end": 8.0}

    monkeypatch.setattr(cb, "build", fake_build)
    assert cb.ensure_checkpoint() == folder and builds == [RECIPE]
    assert cb.checkpoint_problem(folder) is None
    assert cb.ensure_checkpoint() == folder and len(builds) == 1  # whole now: loaded, not rebuilt


def test_the_resolver_never_asks_the_hub_for_course_checkpoints(pair, cache, monkeypatch):
    model, tok = pair
    cb.save_checkpoint(model, tok, RECIPE)
    monkeypatch.setattr(resources, "hub_status", lambda kind="dataset": (True, "reachable (pretend)"))
    ckpt = resources.resolve_checkpoint(cb.COURSE_BERT)
    assert ckpt.source == "course" and ckpt.location == str(cb.checkpoint_dir(RECIPE))
    assert "the course's BERT, built on this machine in" in ckpt.detail
    assert "(1 layers, hidden 32, 3 steps" in ckpt.detail
    loaded, loaded_tok = cb.course_bert()
    assert isinstance(loaded, BertForMaskedLM) and not loaded.training and len(loaded_tok) == len(tok)


def test_a_model_that_knows_only_word_frequencies_scores_the_unigram_loss(pair):
    """unigram_loss and heldout_loss draw the same masks: a BERT whose logits are the log frequencies, whatever the
    input, must score exactly the unigram baseline."""
    from course_utils.packing import pack_blocks
    from course_utils.pretraining import heldout_loss

    model, tok = copy.deepcopy(pair[0]), pair[1]  # the fixture is shared: change a copy
    blocks = pack_blocks(["it was a dark and stormy night; the rain fell in torrents"] * 40, tok, RECIPE.block_length)
    train, held_out = blocks[:-4], blocks[-4:]
    counts = torch.bincount(train.flatten(), minlength=len(tok)).double() + 1
    with torch.no_grad():
        model.get_output_embeddings().weight.zero_()  # tied to the input embeddings: the input is erased too
        model.cls.predictions.bias.copy_((counts / counts.sum()).log().float())
    expected = cb.unigram_loss(train, held_out, tok, seed=3)
    assert heldout_loss(model, held_out, tok, seed=3) == pytest.approx(expected, rel=1e-5)
    assert cb.unigram_loss(train, held_out, tok, seed=4) != pytest.approx(
        expected, rel=1e-9
    )  # other masks, other value


@pytest.mark.slow
def test_book_blocks_learns_its_vocabulary_from_the_training_books_only():
    """The books are split by whole book; the vocabulary comes from the training books, and both splits are packed
    into full [CLS] ... [SEP] blocks of the recipe's length, with no padding."""
    tokenizer, train_blocks, eval_blocks, train_texts = cb.book_blocks(RECIPE)
    train, validation = cb.load_books()
    assert train_texts == train and len(validation) > 0
    assert len(tokenizer) <= RECIPE.vocab_size
    assert tokenizer.get_vocab() == train_wordpiece(train, RECIPE.vocab_size).get_vocab()
    assert train_blocks.shape[1] == eval_blocks.shape[1] == RECIPE.block_length
    assert eval_blocks.shape[0] == RECIPE.eval_blocks and train_blocks.shape[0] > 100 * RECIPE.eval_blocks
    for blocks in (train_blocks, eval_blocks):
        assert (blocks[:, 0] == tokenizer.cls_token_id).all() and (blocks[:, -1] == tokenizer.sep_token_id).all()
        assert not (blocks == tokenizer.pad_token_id).any()
    first_words = tokenizer.decode(train_blocks[0, 1:9]).split()
    assert " ".join(first_words[:3]) in " ".join(train).lower()


# ------------------------------------------------------------------------------------- the shipped checkpoint (38)
def test_the_shipped_checkpoint_is_whole_and_made_with_the_course_recipe(monkeypatch):
    """A fresh clone loads the checkpoint that ships with the package and trains nothing."""
    assert cb.checkpoint_problem(cb.SHIPPED) is None
    manifest = json.loads((cb.SHIPPED / cb.MANIFEST).read_text())
    assert manifest["recipe_key"] == cb.recipe_key(cb.course_recipe())

    def no_build(*args, **kwargs):
        raise AssertionError("the shipped checkpoint should have been used")

    monkeypatch.setattr(cb, "build", no_build)
    assert cb.ensure_checkpoint() == cb.SHIPPED
    assert "shipped with the course" in cb.describe(cb.SHIPPED)
    assert resources.resolve_checkpoint(cb.COURSE_BERT).location == str(cb.SHIPPED)


@pytest.fixture
def shipped_copy(tmp_path, monkeypatch):
    import shutil

    folder = tmp_path / "tiny-bert-books"
    shutil.copytree(cb.SHIPPED, folder)
    monkeypatch.setattr(cb, "SHIPPED", folder)
    return folder


def test_a_damaged_shipped_checkpoint_is_an_error_that_says_how_to_restore_it(shipped_copy, monkeypatch):
    (shipped_copy / "model.safetensors").write_bytes(b"truncated")
    monkeypatch.setattr(cb, "build", lambda *a, **k: pytest.fail("a damaged shipped checkpoint must not be rebuilt"))
    with pytest.raises(cb.ShippedDataError, match="does not match its checksum.*git checkout"):
        cb.ensure_checkpoint()


def test_a_recipe_the_shipped_checkpoint_was_not_built_with_is_built_into_the_cache(shipped_copy, cache, monkeypatch):
    """A maintainer who changes the recipe gets a checkpoint built with it, not the shipped one under a new name."""
    assert cb.shipped_checkpoint(RECIPE) is None
    assert cb.shipped_checkpoint() is None  # the `cache` fixture makes RECIPE the course recipe
    calls = []
    monkeypatch.setattr(cb, "build", lambda recipe, progress=None: calls.append(recipe) or pytest.skip("built"))
    with pytest.raises(pytest.skip.Exception):
        cb.ensure_checkpoint()
    assert calls == [RECIPE]


def test_ship_copies_a_whole_checkpoint_and_refuses_a_broken_one(pair, cache, tmp_path):
    from course_tools.build_course_bert import ship

    model, tok = pair
    folder = cb.save_checkpoint(model, tok, RECIPE)
    into = ship(folder, tmp_path / "shipped" / "tiny")
    assert cb.checkpoint_problem(into) is None and sorted(p.name for p in into.iterdir()) == sorted(
        p.name for p in folder.iterdir()
    )
    assert [p.name for p in into.parent.iterdir()] == ["tiny"]  # nothing half-written beside it
    (folder / "tokenizer.json").unlink()
    with pytest.raises(FileNotFoundError, match="nothing was shipped"):
        ship(folder, tmp_path / "shipped" / "other")
    assert not (tmp_path / "shipped" / "other").exists()
