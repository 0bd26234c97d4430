"""The course's own small BERT with its MLM head: pretrained on the course's books, shipped with the package.

    model, tokenizer = course_bert()                      # the shipped checkpoint
    load_model(AutoModelForMaskedLM, COURSE_BERT)         # the same checkpoint through the resolver
    python -m course_tools.build_course_bert --rebuild    # maintainers: train it again (ten to forty minutes)

Notebook 02 trains a BERT live in about a minute and then loads this one, made the same way with a longer recipe of its
own (``profiles.COURSE_BERT_RECIPE``, about ten to forty minutes on two CPU cores). The maintainers trained it once; it
ships in ``data/models/tiny-bert-books`` (10 MB, fp32, ``manifest.json`` with the recipe, its key and the sha256 of
every file), so a student's first lesson starts with the lessons, and every machine loads the same weights (builds on
different CPUs round differently, enough to move a claim). It is the general-domain starting point of the later
offline lessons (03a's small-model row, 05's domain-adaptive pretraining); 05 and 07 also read the books it was trained
on (``load_books``), and 01 trains it a hundred steps more for SpanBERT's span-boundary objective.

A damaged shipped checkpoint is an error that says how to restore it. Where the recipe in ``profiles`` no longer
matches the shipped one's key (a maintainer changed it), the checkpoint is trained and kept in the cache instead:
``$COURSE_CACHE_DIR``, else ``$XDG_CACHE_HOME/bert-transfer-course``, else ``~/.cache/bert-transfer-course``, one
folder per recipe hash, written beside its place and renamed into it, so it is whole or absent.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch
from transformers import AutoTokenizer, BertForMaskedLM

from .masking import mask_tokens
from .packing import pack_blocks
from .paths import cache_root, describe_path
from .pretraining import bert_config, pretrain_mlm, sinusoidal_positions_
from .profiles import COURSE_BERT_RECIPE, COURSE_CHECKPOINT, PretrainRecipe
from .registry import ShippedDataError
from .registry import sha256 as _sha256
from .resources import load_dataset, load_model, load_tokenizer
from .training import IGNORE_INDEX
from .wordpiece import train_wordpiece

COURSE_BERT = COURSE_CHECKPOINT  # the name later lessons ask the resolver for (profile.course_model)
MANIFEST = "manifest.json"
FORMAT_VERSION = 1
BOOKS = ("gutenberg_books", "default")
SHIPPED = Path(__file__).parent / "data" / "models" / "tiny-bert-books"


def course_recipe() -> PretrainRecipe:
    """The recipe of the course checkpoint (``profiles.COURSE_BERT_RECIPE``), whatever profile is active."""
    return COURSE_BERT_RECIPE


def recipe_key(recipe: PretrainRecipe) -> str:
    """A short hash of the recipe: a changed recipe gets a new folder instead of a stale checkpoint."""
    text = json.dumps({"format": FORMAT_VERSION, "recipe": asdict(recipe)}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def checkpoint_dir(recipe: PretrainRecipe | None = None) -> Path:
    """The cache folder of the checkpoint trained with ``recipe`` (default: the course recipe)."""
    return cache_root() / f"bert-books-{recipe_key(recipe or course_recipe())}"


def save_checkpoint(
    model, tokenizer, recipe: PretrainRecipe, *, folder: Path | str | None = None, summary: dict[str, Any] | None = None
) -> Path:
    """Save model + tokenizer with a manifest, whole or not at all; returns the folder.

    ``summary`` (e.g. held-out losses) is stored in the manifest for whoever loads the checkpoint later.
    """
    folder = Path(folder) if folder is not None else checkpoint_dir(recipe)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = folder.parent / f".{folder.name}.partial-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        files = {p.name: _sha256(p) for p in sorted(tmp.iterdir()) if p.is_file()}
        manifest = {
            "format": FORMAT_VERSION,
            "recipe_key": recipe_key(recipe),
            "recipe": asdict(recipe),
            "files": files,
            "summary": summary or {},
        }
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2))
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(tmp, folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return folder


def checkpoint_problem(folder: Path | str) -> str | None:
    """Why ``folder`` is not a whole, verified checkpoint, or None when it is."""
    folder = Path(folder)
    if not folder.is_dir():
        return "not there"
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
        files = manifest["files"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        return f"no readable {MANIFEST} ({type(err).__name__})"
    if manifest.get("format") != FORMAT_VERSION:
        return f"format {manifest.get('format')!r}, expected {FORMAT_VERSION}"
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        if name not in files:
            return f"{name} missing from the manifest"
    for name, digest in files.items():
        path = folder / name
        if not path.is_file():
            return f"{name} is missing"
        if _sha256(path) != digest:
            return f"{name} does not match its checksum (corrupt or partly written)"
    return None


def load_checkpoint(folder: Path | str):
    """Load a verified checkpoint folder -> (BertForMaskedLM in eval mode, tokenizer); raise if it is not whole."""
    problem = checkpoint_problem(folder)
    if problem:
        raise FileNotFoundError(f"{folder} is not a usable checkpoint: {problem}.")
    model = BertForMaskedLM.from_pretrained(folder)
    return model.eval(), AutoTokenizer.from_pretrained(folder)


def load_books():
    """The course's books (shipped with it): (train paragraphs, validation paragraphs), split by whole book."""
    books = load_dataset(*BOOKS)
    return list(books["train"]["text"]), list(books["validation"]["text"])


def book_blocks(recipe: PretrainRecipe):
    """The books prepared for ``recipe`` -> (tokenizer, train_blocks [N, T], eval_blocks [recipe.eval_blocks, T],
    train paragraphs): a WordPiece vocabulary learned from the training books, both splits packed into blocks."""
    train_texts, eval_texts = load_books()
    tokenizer = train_wordpiece(train_texts, recipe.vocab_size)
    train_blocks = pack_blocks(train_texts, tokenizer, recipe.block_length)
    eval_blocks = pack_blocks(eval_texts, tokenizer, recipe.block_length)[: recipe.eval_blocks]
    return tokenizer, train_blocks, eval_blocks, train_texts


def unigram_loss(train_blocks, eval_blocks, tokenizer, seed: int = 0) -> float:
    """The loss of a model that ignores context and predicts every masked piece from the training pieces' frequencies
    (add-one smoothed), on the masks ``heldout_loss(..., seed=seed)`` draws: the line a pretrained BERT must go below.
    ``train_blocks`` [N, T], ``eval_blocks`` [M, T]. Lesson 02 computes the same number in the open."""
    counts = torch.bincount(train_blocks.flatten(), minlength=len(tokenizer)).double() + 1
    log_p = (counts / counts.sum()).log()
    g = torch.Generator().manual_seed(seed)
    nll = []
    for start in range(0, eval_blocks.shape[0], 64):  # the batches heldout_loss masks, in its order
        labels = mask_tokens(eval_blocks[start : start + 64], tokenizer, generator=g).labels
        nll.append(-log_p[labels[labels != IGNORE_INDEX]])
    return torch.cat(nll).mean().item()


def build(recipe: PretrainRecipe, progress: bool | None = None):
    """Train a tokenizer and a BERT on the books with ``recipe`` -> (model on the CPU, tokenizer, History, summary).

    Notebook 02 makes the same calls in the open. Trains on a GPU when there is one, in fp32 either way (the
    checkpoint is cached by its recipe and must not depend on the precision of whoever built it). ``summary`` holds
    the held-out curve, the unigram baseline and the cost, for the manifest.
    """
    tokenizer, train_blocks, eval_blocks, _ = book_blocks(recipe)
    torch.manual_seed(recipe.seed)
    model = BertForMaskedLM(bert_config(len(tokenizer), recipe.size, recipe.block_length, recipe.dropout))
    if recipe.sinusoid_scale:
        sinusoidal_positions_(model, recipe.sinusoid_scale)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    history = pretrain_mlm(
        model.to(device),
        tokenizer,
        train_blocks,
        eval_blocks,
        steps=recipe.steps,
        batch_size=recipe.batch_size,
        lr=recipe.lr,
        warmup_steps=recipe.warmup_steps,
        eval_every=recipe.eval_every,
        seed=recipe.seed,
        mlm_probability=recipe.mlm_probability,
        mixed_precision=False,
        progress=progress,
    )
    summary = {
        "heldout_loss_start": history.eval_loss[0],
        "heldout_loss_end": history.eval_loss[-1],
        "unigram_loss": unigram_loss(train_blocks, eval_blocks, tokenizer, recipe.seed),
        "eval_step": history.eval_step,
        "eval_loss": history.eval_loss,
        "train_tokens": int(train_blocks.numel()),
        "tokens_seen": recipe.steps * history.tokens_per_step,
        "seconds": round(history.seconds, 1),
        "tokens_per_second": round(history.tokens_per_second),
        "device": torch.cuda.get_device_name() if device == "cuda" else f"cpu ({torch.get_num_threads()} threads)",
        "trained_by": "course_utils.course_bert.build",
    }
    return model.cpu(), tokenizer, history, summary


def shipped_checkpoint(recipe: PretrainRecipe | None = None) -> Path | None:
    """The checkpoint shipped with the package if it was built with ``recipe`` (default: the course recipe), else
    None; raises ``ShippedDataError`` when the shipped folder is damaged."""
    if not SHIPPED.is_dir():
        return None
    problem = checkpoint_problem(SHIPPED)
    if problem:
        raise ShippedDataError(
            f"The course BERT shipped with the package ({SHIPPED}) is damaged: {problem}. Restore it from git "
            "(`git checkout -- course_utils/data/models`) or reinstall the course."
        )
    key = json.loads((SHIPPED / MANIFEST).read_text()).get("recipe_key")
    return SHIPPED if key == recipe_key(recipe or course_recipe()) else None


def ensure_checkpoint(
    recipe: PretrainRecipe | None = None, *, rebuild: bool = False, progress: bool | None = None
) -> Path:
    """The folder of a verified checkpoint for ``recipe``: the shipped one when its recipe key matches, else the
    cache if whole, else trained now and cached. ``rebuild`` trains it again into the cache."""
    recipe = recipe or course_recipe()
    if not rebuild:
        shipped = shipped_checkpoint(recipe)
        if shipped is not None:
            return shipped
    folder = checkpoint_dir(recipe)
    problem = "rebuild asked for" if rebuild else checkpoint_problem(folder)
    if problem is None:
        return folder
    if problem != "not there":
        print(f"[course] the cached checkpoint {folder} is unusable ({problem}); rebuilding it")
    else:
        print(
            f"[course] the shipped course BERT was built with another recipe, and there is no cached checkpoint at "
            f"{folder}; training it now, once for this machine ({recipe.steps:,} steps: ten minutes or more on 2 CPU "
            f"cores)"
        )
    model, tokenizer, _, summary = build(recipe, progress)
    return save_checkpoint(model, tokenizer, recipe, folder=folder, summary=summary)


def summary(recipe: PretrainRecipe | None = None) -> dict[str, Any]:
    """What the build of the course checkpoint measured (its manifest's summary: held-out curve, unigram loss, cost);
    builds the checkpoint first if there is none."""
    folder = ensure_checkpoint(recipe)
    return json.loads((folder / MANIFEST).read_text())["summary"]


def course_bert(*, rebuild: bool = False, progress: bool | None = None):
    """The course's tiny pretrained BERT and its tokenizer -> (BertForMaskedLM in eval mode, BertTokenizer).

    The shipped checkpoint (``ensure_checkpoint``); ``rebuild`` trains one into the cache first, for the
    maintainers' comparison, and still loads the shipped one. Goes through the resolver, so it prints where the
    checkpoint came from like every other load.
    """
    ensure_checkpoint(rebuild=rebuild, progress=progress)
    return load_model(BertForMaskedLM, COURSE_BERT).eval(), load_tokenizer(COURSE_BERT)


def describe(folder: Path) -> str:
    """One line on what a checkpoint folder holds, for the resolver's '[model] name <- ...' line."""
    recipe = json.loads((Path(folder) / MANIFEST).read_text())["recipe"]
    s = recipe["size"]
    where = (
        "shipped with the course" if Path(folder) == SHIPPED else f"built on this machine in {describe_path(folder)}"
    )
    return (
        f"the course's BERT, {where} ({s['layers']} layers, hidden {s['hidden']}, "
        f"{recipe['steps']:,} steps on its books)"
    )


def provide() -> tuple[Path, str]:
    """The resolver's offline provider for ``COURSE_BERT`` (``course_utils/__init__.py`` registers it, importing this
    module only when a lesson first asks for the checkpoint)."""
    folder = ensure_checkpoint()
    return folder, describe(folder)
