"""Speed and memory targets of the course, measured outside the unit tests.

    python -m course_utils.bench mlm          # the course's pretraining loop vs the transformers default
    python -m course_utils.bench finetune     # dynamic padding + length-grouped batches vs padding to max length
    python -m course_utils.bench checkpoint   # build the course checkpoint from nothing, timed
    python -m course_utils.bench masking      # masking functions, tokens per second
    python -m course_utils.bench course       # every notebook (quick profile) against its time and memory budget
    python -m course_utils.bench autograde    # 20 submissions of one notebook vs 2 x 20 x its own run time
    python -m course_utils.bench distributed  # the training loops in 2 CPU processes vs 1: the same model (<= 1e-5)
    python -m course_utils.bench gpu          # on a GPU: bert-base MLM tokens/s and MFU, one SST-2 epoch's wall time
    make bench                                # all of the above

Each subcommand prints its measurements and exits 1 when a target is missed. Each imports what it measures inside
its own function (here and in ``bench_distributed``, ``bench_gpu``): one benchmark's libraries, and the time they take
to import, stay out of another's measurement, and ``--help`` answers at once.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path


# ----------------------------------------------------------------------------------------------------------- mlm
def _default_batches(texts, tokenizer, steps: int, batch_size: int, block_length: int, seed: int):
    """The transformers default: one paragraph per sequence, padded to the longest in its batch, masked by the collator."""
    import torch
    from transformers import DataCollatorForLanguageModeling

    collator = DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15, seed=seed)
    encoded = tokenizer(list(texts), truncation=True, max_length=block_length)["input_ids"]
    encoded = [ids for ids in encoded if len(ids) > 2]
    order = torch.randperm(len(encoded), generator=torch.Generator().manual_seed(seed)).tolist()
    for step in range(steps):
        rows = [encoded[i] for i in order[step * batch_size:(step + 1) * batch_size]]
        yield collator([{"input_ids": ids} for ids in rows])


def bench_mlm(steps: int, batch_size: int, seed: int = 0) -> tuple[float, bool]:
    """Train the same model on the same books for ``steps`` steps two ways -> (tokens/s speedup, goal met)."""
    import torch
    from transformers import BertForMaskedLM

    from .course_bert import book_blocks
    from .profiles import get_profile
    from .masking import mask_tokens
    from .pretraining import bert_config, heldout_loss, masked_lm_loss

    recipe = get_profile("quick").pretraining      # lesson 02's live run
    tokenizer, blocks, eval_blocks, train_texts = book_blocks(recipe)
    T = recipe.block_length
    print(f"model: BERT {recipe.size}, vocab {len(tokenizer)}; data: the course's books; {steps} steps of "
          f"{batch_size} sequences; AdamW lr {recipe.lr}; {torch.get_num_threads()} CPU threads")

    def fresh_model():
        torch.manual_seed(seed)
        model = BertForMaskedLM(bert_config(len(tokenizer), recipe.size, T, recipe.dropout)).train()
        return model, torch.optim.AdamW(model.parameters(), lr=recipe.lr)

    def course_batches():
        g = torch.Generator().manual_seed(seed)
        order = torch.randperm(blocks.shape[0], generator=g)
        for step in range(steps):
            yield mask_tokens(blocks[order[step * batch_size:(step + 1) * batch_size]], tokenizer, generator=g)

    results = {}
    for way in ("default", "course"):
        model, optimizer = fresh_model()
        tokens, seconds = 0, 0.0
        batches = course_batches() if way == "course" else _default_batches(train_texts, tokenizer, steps, batch_size, T, seed)
        for batch in batches:  # time the training step only, not batch preparation (done alike on both sides)
            start = time.perf_counter()
            if way == "course":
                loss = masked_lm_loss(model, batch.input_ids, batch.labels)
                tokens += batch.input_ids.numel()
            else:
                loss = model(**batch).loss
                tokens += int(batch["attention_mask"].sum())
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            seconds += time.perf_counter() - start
        results[way] = (tokens / seconds, heldout_loss(model, eval_blocks, tokenizer, seed=seed))
        print(f"{way:>8}: {results[way][0]:9.0f} tokens/s (text tokens, padding not counted)   "
              f"held-out MLM loss after {steps} steps {results[way][1]:.3f}")
    speedup = results["course"][0] / results["default"][0]
    met = speedup >= 3.0 and results["course"][1] <= results["default"][1] + 1e-6
    print(f"goal: >= 3x tokens/s with equal or lower loss at equal steps -> {'met' if met else 'NOT met'}")
    print(f"speedup {speedup:.2f}")
    return speedup, met


# ------------------------------------------------------------------------------------------------------ finetune
def bench_finetune(examples: int, batch_size: int, seed: int = 0) -> tuple[float, bool]:
    """Fine-tune the profile's encoder on SST-2 sentences two ways -> (examples/s speedup, goal met).

    fixed: every sentence padded to SST-2's max_length, random order. dynamic: ``DataCollatorWithPadding`` pads each batch
    to its longest sentence, and transformers' ``LengthGroupedSampler`` puts sentences of similar length together.
    """
    import torch
    from transformers import AutoModelForSequenceClassification, DataCollatorWithPadding
    from transformers.trainer_pt_utils import LengthGroupedSampler

    from .glue import load_glue
    from .profiles import get_profile
    from .resources import load_model, load_tokenizer

    profile = get_profile("quick")
    tokenizer = load_tokenizer(profile.encoder)
    sentences = load_glue("sst2", "train").shuffle(seed=seed).select(range(examples))
    L = profile.finetune("sst2").max_length
    print(f"model: {profile.encoder}; data: {examples} SST-2 training sentences; batch {batch_size}; "
          f"max_length {L}; {torch.get_num_threads()} CPU threads")
    collate = DataCollatorWithPadding(tokenizer)
    encoded = [{"input_ids": ids, "labels": label} for ids, label in
               zip(tokenizer(list(sentences["sentence"]), truncation=True, max_length=L)["input_ids"], sentences["label"])]
    g = torch.Generator().manual_seed(seed)
    orders = {
        "fixed": torch.randperm(examples, generator=g).tolist(),
        "dynamic": list(LengthGroupedSampler(batch_size, lengths=[len(e["input_ids"]) for e in encoded], generator=g)),
    }
    results = {}
    for way, order in orders.items():
        torch.manual_seed(seed)
        model = load_model(AutoModelForSequenceClassification, profile.encoder, num_labels=2).train()
        optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
        seconds, padded = 0.0, 0
        for start in range(0, examples, batch_size):
            rows = [encoded[i] for i in order[start:start + batch_size]]
            batch = collate(rows) if way == "dynamic" else tokenizer.pad(rows, padding="max_length", max_length=L,
                                                                         return_tensors="pt")
            padded += batch["input_ids"].numel()
            t0 = time.perf_counter()
            model(**batch).loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            seconds += time.perf_counter() - t0
        real = sum(len(e["input_ids"]) for e in encoded)
        results[way] = examples / seconds
        print(f"{way:>8}: {results[way]:7.1f} examples/s   {padded / examples:5.1f} positions per example "
              f"({1 - real / padded:.0%} padding)")
    speedup = results["dynamic"] / results["fixed"]
    met = speedup >= 2.0
    print(f"goal: dynamic padding + length grouping >= 2x the examples/s of fixed padding -> {'met' if met else 'NOT met'}")
    print(f"speedup {speedup:.2f}")
    return speedup, met


# ---------------------------------------------------------------------------------------------------- checkpoint
def bench_checkpoint(limit_s: float = 720.0) -> bool:
    """Build the course checkpoint from nothing in a temporary cache; the target is ``limit_s`` seconds."""
    import os

    from .course_bert import CACHE_ENV, MANIFEST, ensure_checkpoint, load_checkpoint

    with tempfile.TemporaryDirectory() as tmp:
        old = os.environ.get(CACHE_ENV)
        os.environ[CACHE_ENV] = tmp
        try:
            start = time.perf_counter()
            folder = ensure_checkpoint(progress=False)
            seconds = time.perf_counter() - start
            load_checkpoint(folder)
            summary = json.loads((folder / MANIFEST).read_text())["summary"]
            print(f"held-out MLM loss {summary['heldout_loss_start']:.3f} -> {summary['heldout_loss_end']:.3f}")
        finally:
            if old is None:
                os.environ.pop(CACHE_ENV, None)
            else:
                os.environ[CACHE_ENV] = old
    ok = seconds <= limit_s
    print(f"course checkpoint built from nothing in {seconds:.1f} s (target <= {limit_s:.0f} s): {'ok' if ok else 'OVER'}")
    return ok


# ------------------------------------------------------------------------------------------------------- masking
def bench_masking() -> None:
    import torch

    from .masking import mask_tokens, span_mask, whole_word_mask
    from .resources import load_tokenizer

    tokenizer = load_tokenizer("sentence-transformers/all-MiniLM-L6-v2")
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(1000, 30000, (256, 128), generator=g)
    words = torch.arange(128).repeat(256, 1) // 2  # two pieces a word
    for name, fn in [("mask_tokens", lambda: mask_tokens(ids, tokenizer, generator=g)),
                     ("whole_word_mask", lambda: whole_word_mask(ids, words, tokenizer, generator=g)),
                     ("span_mask", lambda: span_mask(ids, tokenizer, generator=g))]:
        fn()
        start = time.perf_counter()
        repeats = 3 if name == "span_mask" else 20
        for _ in range(repeats):
            fn()
        per_call = (time.perf_counter() - start) / repeats
        print(f"{name:>16}: {ids.numel() / per_call / 1e6:7.2f} M tokens/s  ({per_call * 1e3:.1f} ms per 256x128 batch)")


# -------------------------------------------------------------------------------------------------------- course
def bench_course(out: Path) -> bool:
    from .run_course import find_notebooks, run_course, summary_table

    report = run_course(find_notebooks([]), out, "quick", timeout=1800)
    print(summary_table(report))
    bad = [nb["name"] for nb in report["notebooks"] if nb["status"] != "ok" or nb["within_budget"] is False]
    if bad:
        print(f"over budget or failed: {', '.join(bad)}")
    return not bad


# ----------------------------------------------------------------------------------------------------- autograde
def bench_autograde(notebook: str, submissions: int) -> tuple[float, bool]:
    """Autograde ``submissions`` copies of ``notebook`` (half with the reference answers, half untouched releases)
    and compare with the notebook's own quick-profile run -> (seconds, goal met: at most 2 x submissions x own)."""
    import shutil

    from .grading import autograde, release
    from .paths import repo_root
    from .run_course import run_notebook

    source = (repo_root() or Path.cwd()) / "notebooks" / f"{notebook}.ipynb"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        own = run_notebook(source, tmp / "own", "quick", timeout=1800)
        if own["status"] != "ok":
            print(f"{notebook} itself failed: {own['error']}")
            return 0.0, False
        release(source, tmp / "release")
        for i in range(submissions):
            folder = tmp / "submissions" / f"student{i:02d}"
            folder.mkdir(parents=True)
            shutil.copy(source if i % 2 == 0 else tmp / "release" / source.name, folder / source.name)
        start = time.perf_counter()
        autograde(tmp / "submissions", source, tmp / "grades.csv", progress=True)
        seconds = time.perf_counter() - start
        print((tmp / "grades.csv").read_text())
    goal = 2 * submissions * own["seconds"]
    print(f"{notebook}: own run {own['seconds']:.1f} s; {submissions} submissions graded in {seconds:.1f} s "
          f"({seconds / submissions:.1f} s each); goal <= {goal:.0f} s")
    print(f"ratio {seconds / (submissions * own['seconds']):.2f}")
    return seconds, seconds <= goal


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_utils.bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["mlm", "finetune", "checkpoint", "masking", "course", "autograde",
                                            "distributed", "gpu", "all"])
    parser.add_argument("--steps", type=int, default=100, help="mlm: training steps for each way (default 100)")
    parser.add_argument("--examples", type=int, default=512, help="finetune: training examples each way (default 512)")
    parser.add_argument("--batch-size", type=int, default=None,
                        help="sequences per step (default: 16 for mlm, 32 for finetune)")
    parser.add_argument("--out", type=Path, default=Path("build"), help="course: where executed notebooks go")
    parser.add_argument("--notebook", default="01_masking", help="autograde: the notebook to grade (default 01_masking)")
    parser.add_argument("--device", default=None, help="gpu: measure on this device (default: cuda if present)")
    parser.add_argument("--tiny", action="store_true", help="gpu: a small model and little data, to check the code")
    parser.add_argument("--submissions", type=int, default=20, help="autograde: how many submissions (default 20)")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.examples < 1 or (args.batch_size is not None and args.batch_size < 1):
        parser.error("--steps, --examples and --batch-size must be positive")
    from .quiet import quiet_libraries

    quiet_libraries()
    ok = True
    if args.what in ("masking", "all"):
        bench_masking()
    if args.what in ("mlm", "all"):
        ok &= bench_mlm(args.steps, args.batch_size or 16)[1]
    if args.what in ("finetune", "all"):
        ok &= bench_finetune(args.examples, args.batch_size or 32)[1]
    if args.what in ("checkpoint", "all"):
        ok &= bench_checkpoint()
    if args.what in ("course", "all"):
        ok &= bench_course(args.out)
    if args.what in ("autograde", "all"):
        ok &= bench_autograde(args.notebook, args.submissions)[1]
    if args.what in ("distributed", "all"):
        from .bench_distributed import GOAL, compare

        ok &= compare(processes=2, steps=20, batch_size=16) <= GOAL
    if args.what in ("gpu", "all"):
        from .bench_gpu import main as bench_gpu

        ok &= bench_gpu(args.device, args.tiny)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
