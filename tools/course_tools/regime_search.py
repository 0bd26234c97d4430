"""Lesson 05's regime search, rerunnable: where does domain-adaptive pretraining reach ChemProt?

Lesson 05 runs the best regime of this search live and shows the whole search as a table; this module is the search
itself, so the table can be measured again whenever something it depends on changes (the fine-tuning optimizer, the
course checkpoint, the recipe)::

    python -m course_tools.regime_search            # quick profile, 7 regimes x 5 seeds: about 12 min on 2 cores
    python -m course_tools.regime_search --seeds 2 --regimes 1 7

Every regime fine-tunes the general model and a DAPT model with the same seeds (the same head initialisation and
batches), so each seed's gain is a paired difference; the table reports both means and the gain's mean and standard
deviation over seeds. The results also go to ``build/regime-search.json``. Nothing here is imported by the package.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from transformers import BertForMaskedLM

from course_utils.adaptation import classifier, continue_pretraining, load_task
from course_utils.finetuning import fine_tune, predict
from course_utils.metrics import load_metric
from course_utils.packing import corpus_blocks
from course_utils.resources import load_dataset, load_model, load_tokenizer
from course_utils.session import setup
from course_utils.training import train_only

from .exercise_reference import equal_tokens


@dataclass(frozen=True)
class Regime:
    """One row of lesson 05's table: which DAPT model, and how ChemProt fine-tunes on top of it."""

    label: str
    dapt: str  # "section 2" (100 steps, the token-equal corpus) or "whole" (regime_steps)
    top_layers: int | None = None  # None: every weight trains; n: only the top n layers and the head
    train_examples: int | None = None  # None: all 4,169 labelled sentences
    epochs: float | None = None  # None: the lesson's recipe
    lr: float | None = None
    markers: bool = False  # entity markers the novels' vocabulary can read: { } for << >>, [ ] for [[ ]]


REGIMES = (
    Regime("section 2's DAPT (100 steps on the token-equal corpus); section 4's recipe", "section 2"),
    Regime("section 2's DAPT; 500 labelled sentences, 5 epochs", "section 2", train_examples=500, epochs=5),
    Regime("section 2's DAPT; only the top layer and the head train", "section 2", top_layers=1),
    Regime("DAPT on the whole corpus; section 4's recipe", "whole"),
    Regime("the same, with entity markers in the vocabulary", "whole", markers=True),
    Regime("the same DAPT; every weight, 3 epochs at 5e-4", "whole", epochs=3, lr=5e-4),
    Regime("the same DAPT; only the top layer and the head train", "whole", top_layers=1),
)


# Seeds 0 to 4 chose the regime; the lesson confirms it live on recipe.regime_seeds others (100, 101, ...)
SEARCH_SEEDS = 5


def with_markers(text: str) -> str:
    """ChemProt's entity markers as characters the novels' vocabulary has: << >> -> { }, [[ ]] -> [ ]."""
    return text.replace("<<", "{").replace(">>", "}").replace("[[", "[").replace("]]", "]")


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="quick", choices=("quick", "full"))
    parser.add_argument(
        "--seeds", type=int, default=SEARCH_SEEDS, help=f"seeds per starting model (default: {SEARCH_SEEDS})"
    )
    parser.add_argument(
        "--regimes", type=int, nargs="*", default=None, help=f"which rows to run, 1-{len(REGIMES)} (default: all)"
    )
    parser.add_argument("--out", type=Path, default=Path("build/regime-search.json"))
    args = parser.parse_args(argv)
    chosen = args.regimes or list(range(1, len(REGIMES) + 1))
    if not all(1 <= r <= len(REGIMES) for r in chosen):
        parser.error(f"--regimes takes numbers from 1 to {len(REGIMES)}; got {chosen}")

    recipe = setup(seed=0, profile=args.profile).profile.adaptation  # as the lesson's setup cell
    ft, seeds = recipe.finetune, list(range(args.seeds))
    general = load_model(BertForMaskedLM, recipe.general_model).eval()
    tokenizer = load_tokenizer(recipe.general_model)
    biomed, cs = load_dataset("biomed_corpus", "biomed"), load_dataset("biomed_corpus", "cs")
    chemprot, labels = load_task("chemprot")
    heldout = corpus_blocks(biomed["validation"]["text"], tokenizer, recipe.block_length)[: recipe.eval_blocks]

    dapt_models: dict[str, torch.nn.Module] = {}

    def dapt(which: str) -> torch.nn.Module:
        """Lesson 05's two DAPT models, made once each, exactly as the lesson makes them (seed 0)."""
        if which not in dapt_models:
            if which == "section 2":
                texts = equal_tokens(
                    list(biomed["train"]["text"]),
                    list(cs["train"]["text"]),
                    lambda t: len(tokenizer.tokenize(t)),
                    seed=0,
                )[0]
                blocks = corpus_blocks(texts, tokenizer, recipe.block_length, min_blocks=recipe.batch_size)
                steps, every = recipe.steps, max(1, recipe.steps // 5)
            else:
                blocks = corpus_blocks(list(biomed["train"]["text"]), tokenizer, recipe.block_length)
                steps, every = recipe.regime_steps, None
            dapt_models[which] = continue_pretraining(
                general,
                tokenizer,
                blocks,
                heldout,
                steps=steps,
                batch_size=recipe.batch_size,
                lr=recipe.lr,
                eval_every=every,
                seed=0,
                progress=False,
            )[0]
        return dapt_models[which]

    def encode(split: str, regime: Regime) -> list[dict]:
        data = chemprot[split]
        limit = regime.train_examples if split == "train" else None
        if limit is not None:
            data = data.shuffle(seed=0).select(range(limit))
        texts = [with_markers(t) if regime.markers else t for t in data["text"]]
        enc = tokenizer(texts, truncation=True, max_length=ft.max_length)
        return [{"input_ids": ids, "labels": y} for ids, y in zip(enc["input_ids"], data["label_id"])]

    f1 = load_metric("f1")
    rows = []
    for number in chosen:
        regime, start = REGIMES[number - 1], time.time()
        train_rows, val_rows = encode("train", regime), encode("validation", regime)
        gold = np.array([r["labels"] for r in val_rows])
        scores = {}
        for name, model in (("general", general), ("DAPT", dapt(regime.dapt))):
            scores[name] = []
            for seed in seeds:
                torch.manual_seed(seed)
                clf = classifier(model, len(labels), pooling=recipe.pooling)
                train_only(clf, regime.top_layers)
                fine_tune(
                    clf,
                    tokenizer,
                    train_rows,
                    epochs=regime.epochs or ft.epochs,
                    lr=regime.lr or ft.lr,
                    batch_size=ft.batch_size,
                    seed=seed,
                    progress=False,
                )
                predictions = predict(clf, tokenizer, val_rows).argmax(1)
                scores[name].append(f1.compute(predictions=predictions, references=gold, average="micro")["f1"])
        gains = np.array(scores["DAPT"]) - np.array(scores["general"])
        rows.append(
            {
                "regime": number,
                "label": regime.label,
                "general": scores["general"],
                "DAPT": scores["DAPT"],
                "gain_mean": float(gains.mean()),
                "gain_std": float(gains.std()),
                "seeds_positive": int((gains > 0).sum()),
                "seconds": time.time() - start,
            }
        )
        print(
            f"| {regime.label} | {np.mean(scores['general']):.3f} | {np.mean(scores['DAPT']):.3f} | "
            f"{gains.mean():+.3f} ± {gains.std():.3f} | {(gains > 0).sum()}/{len(gains)} |  "
            f"({time.time() - start:.0f} s)",
            flush=True,
        )
    result = {"profile": args.profile, "seeds": seeds, "general_model": recipe.general_model, "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
