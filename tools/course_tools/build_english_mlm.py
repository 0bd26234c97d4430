"""``python -m course_tools.build_english_mlm [--rebuild]``: train the course's English masked LM and ship it.

For maintainers, once per change of ``profiles.COURSE_MLM_RECIPE`` (about an hour on 2 CPU cores, minutes on a GPU):
MiniLM's body (all-MiniLM-L6-v2, from its PyPI package) gets BERT's MLM head; the head and the top
``trained_layers`` layers train with MLM on the recipe's corpora, everything below stays MiniLM's. What trained is
written, in fp16, to ``course_utils/data/models/minilm-mlm`` with a manifest (recipe, recipe key, sha256, held-out
losses) and a model card; ``course_utils.english_mlm`` puts it back on MiniLM's body when a lesson asks for
``course/minilm-mlm``. Students never run this.

``--check`` trains a second copy into a scratch folder and compares its held-out loss with the shipped one's
(``course_tools.bench english-mlm`` calls it; the tolerance is ``REBUILD_TOLERANCE``).
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import tempfile
from dataclasses import asdict, replace
from pathlib import Path

import torch
from safetensors.torch import save_file
from transformers import AutoTokenizer, BertForMaskedLM

from course_utils import english_mlm
from course_utils.packing import pack_blocks
from course_utils.pretraining import heldout_loss, pretrain_mlm
from course_utils.profiles import COURSE_MLM_RECIPE, EnglishMLMRecipe
from course_utils.resources import load_dataset, resolve_checkpoint

# A rebuild on another machine draws the same masks and batches but rounds differently; its held-out loss on the
# books must land within this many nats of the shipped model's.
REBUILD_TOLERANCE = 0.05


def corpus(recipe: EnglishMLMRecipe) -> list[str]:
    """The recipe's training texts, each corpus' texts repeated its number of copies, in the recipe's order."""
    texts: list[str] = []
    for name, config, split, column, copies in recipe.corpora:
        rows = [t for t in load_dataset(name, config, split=split)[column] if isinstance(t, str) and t.strip()]
        texts.extend(rows * copies)
    return texts


def heldout_sets(recipe: EnglishMLMRecipe, tokenizer) -> dict[str, torch.Tensor]:
    """Held-out blocks [N, T]: the books' validation split (the number the rebuild is checked on) and SST-2's
    validation sentences (text the model never saw, in the domain of lesson 08's task)."""
    books = load_dataset("gutenberg_books", "default", split="validation")["text"]
    reviews = load_dataset("nyu-mll/glue", "sst2", split="validation")["sentence"]
    return {
        "books": pack_blocks(books, tokenizer, recipe.block_length)[: recipe.eval_blocks],
        "sst2": pack_blocks(reviews, tokenizer, recipe.block_length),
    }


def start_model(recipe: EnglishMLMRecipe):
    """MiniLM's body with a new MLM head; only the head and the top ``trained_layers`` layers train -> (model,
    tokenizer). The head's output bias starts at nothing better than zero; its decoder is tied to the (frozen) word
    embeddings, as in BERT."""
    base = resolve_checkpoint(recipe.base).location
    torch.manual_seed(recipe.seed)
    model = BertForMaskedLM.from_pretrained(
        base, hidden_dropout_prob=recipe.dropout, attention_probs_dropout_prob=recipe.dropout
    )
    tokenizer = AutoTokenizer.from_pretrained(base)
    trained = english_mlm.trained_names(model, recipe.trained_layers)
    for name, p in model.named_parameters():
        p.requires_grad = name in trained
    return model, tokenizer


def build(recipe: EnglishMLMRecipe, progress: bool | None = None):
    """Train the English MLM -> (model on the CPU, tokenizer, summary for the manifest, held-out blocks by name)."""
    model, tokenizer = start_model(recipe)
    train_blocks = pack_blocks(corpus(recipe), tokenizer, recipe.block_length)
    held = heldout_sets(recipe, tokenizer)
    before = {k: heldout_loss(model, v, tokenizer, seed=recipe.seed) for k, v in held.items()}
    device = "cuda" if torch.cuda.is_available() else "cpu"
    history = pretrain_mlm(
        model.to(device),
        tokenizer,
        train_blocks,
        held["books"],
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
    model = model.cpu().eval()
    after = {k: heldout_loss(model, v, tokenizer, seed=recipe.seed) for k, v in held.items()}
    summary = {
        "heldout_loss_start": before,
        "heldout_loss_end": after,
        "eval_step": history.eval_step,
        "eval_loss": history.eval_loss,
        "train_loss_last_100": sum(history.train_loss[-100:]) / len(history.train_loss[-100:]),
        "train_tokens": int(train_blocks.numel()),
        "tokens_seen": recipe.steps * history.tokens_per_step,
        "seconds": round(history.seconds, 1),
        "device": torch.cuda.get_device_name() if device == "cuda" else f"cpu ({torch.get_num_threads()} threads)",
    }
    return model, tokenizer, summary, held


def ship(model, tokenizer, recipe: EnglishMLMRecipe, summary: dict, held: dict, folder: Path) -> Path:
    """Write what trained, in fp16, with its manifest and model card into ``folder`` (whole or not at all)."""
    state = {k: v.detach().to(torch.float16).contiguous() for k, v in english_mlm.trained_state(model, recipe).items()}
    # what fp16 costs, measured: the held-out loss of the model rebuilt from the fp16 file
    rounded = english_mlm.put_back(copy.deepcopy(model), {k: v.float() for k, v in state.items()})
    summary = dict(
        summary, heldout_loss_fp16={k: heldout_loss(rounded, v, tokenizer, seed=recipe.seed) for k, v in held.items()}
    )
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        save_file(state, tmp / english_mlm.WEIGHTS, metadata={"format": "pt"})
        manifest = {
            "format": english_mlm.FORMAT_VERSION,
            "recipe_key": english_mlm.recipe_key(recipe),
            "recipe": asdict(recipe),
            "files": {english_mlm.WEIGHTS: english_mlm.sha256(tmp / english_mlm.WEIGHTS)},
            "parameters": sum(v.numel() for v in state.values()),
            "summary": summary,
        }
        (tmp / english_mlm.MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        (tmp / "README.md").write_text(english_mlm.model_card(manifest))
        for f in (tmp, *tmp.iterdir()):  # mkdtemp's folder is private; a package's files are not
            f.chmod(0o755 if f.is_dir() else 0o644)
        if folder.exists():
            for f in folder.iterdir():
                f.unlink()
            folder.rmdir()
        tmp.rename(folder)
    finally:
        if tmp.exists():
            for f in tmp.iterdir():
                f.unlink()
            tmp.rmdir()
    return folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course_tools.build_english_mlm",
        description="Train the course's English MLM (MiniLM's body + an MLM head) and write what ships with it.",
    )
    parser.add_argument("--out", type=Path, default=english_mlm.SHIPPED, help="where to write (default: the package)")
    parser.add_argument("--steps", type=int, default=None, help="fewer steps, for a smoke test (not for shipping)")
    parser.add_argument(
        "--check", action="store_true", help="train into a scratch folder and compare with the shipped model"
    )
    parser.add_argument("--verify", action="store_true", help="only check the shipped model's files (no training)")
    args = parser.parse_args(argv)
    if args.verify:
        facts = english_mlm.manifest()  # raises, naming the damaged file and the fix
        if facts["recipe_key"] != english_mlm.recipe_key(COURSE_MLM_RECIPE):
            print(
                f"[course] the shipped English MLM was trained with recipe {facts['recipe_key']}, not with "
                f"profiles.COURSE_MLM_RECIPE ({english_mlm.recipe_key(COURSE_MLM_RECIPE)}): retrain and ship it "
                "(python -m course_tools.build_english_mlm)"
            )
            return 1
        loss = facts["summary"]["heldout_loss_fp16"]["books"]
        print(
            f"[course] English MLM shipped and whole: {english_mlm.SHIPPED} ({facts['parameters']:,} trained "
            f"parameters, recipe {facts['recipe_key']}, held-out loss on the books {loss:.3f})"
        )
        return 0
    recipe = COURSE_MLM_RECIPE
    if args.steps is not None:
        recipe = replace(recipe, steps=args.steps, warmup_steps=min(recipe.warmup_steps, args.steps // 10))
    model, tokenizer, summary, held = build(recipe)
    if args.check:
        shipped = english_mlm.manifest()["summary"]["heldout_loss_end"]["books"]
        rebuilt = summary["heldout_loss_end"]["books"]
        ok = math.isfinite(rebuilt) and abs(rebuilt - shipped) <= REBUILD_TOLERANCE
        print(
            f"[course] rebuilt held-out loss {rebuilt:.3f}, shipped {shipped:.3f}: "
            f"{'within' if ok else 'NOT within'} {REBUILD_TOLERANCE}"
        )
        return 0 if ok else 1
    folder = ship(model, tokenizer, recipe, summary, held, args.out)
    print(
        f"[course] wrote {folder}: held-out loss on the books {summary['heldout_loss_start']['books']:.3f} -> "
        f"{summary['heldout_loss_end']['books']:.3f} in {summary['seconds']:.0f} s on {summary['device']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
