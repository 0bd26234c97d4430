"""Speed and memory targets of the course, measured outside the unit tests.

    python -m course_tools.bench mlm          # the course's pretraining loop vs run_mlm.py's packed default; mfu
    python -m course_tools.bench finetune     # the course's fine_tune vs the Trainer's defaults
    python -m course_tools.bench checkpoint   # rebuild the course BERT from nothing, timed, vs the shipped one
    python -m course_tools.bench english-mlm  # rebuild the course's English MLM (~40 min), vs the shipped one
    python -m course_tools.bench masking      # masking functions, tokens per second
    python -m course_tools.bench steps        # 02, 03c, 03d training steps: AVX2 paths, threads, a busy neighbour
    python -m course_tools.bench course       # every notebook (quick profile) against its time and memory budget
    python -m course_tools.bench autograde    # 20 submissions of one notebook vs 2 x 20 x its own run time
    python -m course_tools.bench distributed  # the training loops in 2 CPU processes vs 1: the same model (<= 1e-5)
    python -m course_tools.bench gpu          # on a GPU: bert-base MLM tokens/s and MFU, one SST-2 epoch's wall time
    python -m course_tools.bench gpu-profile  # on a GPU: where a bert-base MLM and SST-2 step goes (torch.profiler)
    python -m course_tools.bench gpu-lessons  # on a GPU: each lesson's full-profile training, peak memory and minutes
    python -m course_tools.bench compare A B  # two saved results (build/bench/<name>.json) side by side, B / A
    python -m course_tools.bench timeline     # where the last `make test` spent its time, lane by lane
    make bench                                # all of the above but compare and timeline

Each subcommand prints its measurements and exits 1 when a target is missed; ``mlm``, ``finetune`` and ``course`` also
write their figures, with the device and versions, to ``build/bench/<name>.json`` (``--save-as`` names it). Each imports
what it measures inside its own function (here and in ``bench_distributed``, ``bench_gpu``): one benchmark's libraries,
and the time they take to import, stay out of another's measurement, and ``--help`` answers at once."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

# ------------------------------------------------------------------------------------------------------- results
BENCH_DIR = Path("build/bench")


def save_result(name: str, figures: dict, goal_met: bool | None, folder: Path = BENCH_DIR) -> Path:
    """Write one run's figures to ``folder/<name>.json`` with what they were measured on, for ``bench compare``."""
    import platform

    import torch
    import transformers

    result = {
        "name": name,
        "device": f"{platform.processor() or platform.machine()}, {torch.get_num_threads()} "
        f"CPU threads" + (f", {torch.cuda.get_device_name(0)}" if torch.cuda.is_available() else ""),
        "versions": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "transformers": transformers.__version__,
        },
        "when": time.strftime("%Y-%m-%d %H:%M:%S"),
        "goal_met": goal_met,
        "figures": figures,
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps(result, indent=1))
    print(f"results: {path}")
    return path


def _result_path(what: str) -> Path:
    """A result file, or the name of one in ``build/bench``."""
    path = Path(what)
    if path.suffix == ".json" or path.exists():
        return path
    return BENCH_DIR / f"{what}.json"


def compare(a: str, b: str) -> list[tuple[str, float, float]]:
    """Print every number two saved runs share, and B / A -> [(figure, a, b)]."""
    runs = []
    for what in (a, b):
        path = _result_path(what)
        if not path.is_file():
            raise FileNotFoundError(
                f"no saved bench result {path}; run a bench (it writes {BENCH_DIR}/<name>.json) or name a .json file"
            )
        runs.append(json.loads(path.read_text()))
    print(
        f"A: {runs[0]['name']} ({runs[0]['device']}, {runs[0]['when']})\nB: {runs[1]['name']} "
        f"({runs[1]['device']}, {runs[1]['when']})"
    )
    shared = [
        (k, runs[0]["figures"][k], runs[1]["figures"][k])
        for k in runs[0]["figures"]
        if k in runs[1]["figures"] and all(isinstance(r["figures"][k], (int, float)) for r in runs)
    ]
    if not shared:
        print("the two runs share no figure")
    width = max((len(k) for k, _, _ in shared), default=0)
    for key, x, y in shared:
        ratio = f"{y / x:8.3f}" if x else "       -"
        print(f"{key:<{width}}  {x:14.6g}  {y:14.6g}  B/A {ratio}")
    return shared


# ----------------------------------------------------------------------------------------------------------- mlm
def matmul_flops(m: int, k: int, n: int, seconds: float = 0.5) -> float:
    """This machine's measured fp32 FLOP/s for [m, k] @ [k, n]: the best of repeated runs over ``seconds``."""
    import torch

    a, b = torch.randn(m, k), torch.randn(k, n)
    a @ b
    best, spent = float("inf"), 0.0
    while spent < seconds:
        start = time.perf_counter()
        a @ b
        took = time.perf_counter() - start
        best, spent = min(best, took), spent + took
    return 2 * m * k * n / best


def bert_train_flops(size, batch: int, length: int, predicted: int, vocab: int) -> float:
    """Matmul FLOPs of one training step (forward and backward, 3 x the forward's) of a BERT encoder of ``size`` on
    [batch, length] tokens whose MLM head projects ``predicted`` positions onto ``vocab`` (all positions for the
    transformers head, the masked ones for the course's). Embedding lookups, softmax, LayerNorm and GELU are left out:
    they move memory rather than multiply matrices."""
    n, h, i = batch * length, size.hidden, size.intermediate
    per_layer = 8 * n * h * h + 4 * n * h * i + 4 * batch * length * length * h  # Q, K, V, O; FFN; scores and mix
    head = 2 * predicted * h * h + 2 * predicted * h * vocab  # transform, decoder
    return 3 * (size.layers * per_layer + head)


def _default_batches(
    texts, tokenizer, steps: int, batch_size: int, block_length: int, seed: int, mlm_probability: float
):
    """run_mlm.py --line_by_line: one paragraph per sequence, padded to the longest in its batch, masked by the
    collator."""
    import torch
    from transformers import DataCollatorForLanguageModeling

    collator = DataCollatorForLanguageModeling(tokenizer, mlm_probability=mlm_probability, seed=seed)
    encoded = tokenizer(list(texts), truncation=True, max_length=block_length)["input_ids"]
    encoded = [ids for ids in encoded if len(ids) > 2]
    order = torch.randperm(len(encoded), generator=torch.Generator().manual_seed(seed)).tolist()
    for step in range(steps):
        rows = [encoded[i] for i in order[step * batch_size : (step + 1) * batch_size]]
        yield collator([{"input_ids": ids} for ids in rows])


# nats. The loops draw different masks, and the books' WordPiece vocabulary is not the same from one process to the next
# (huggingface/tokenizers#1794), so equal training lands a little apart: two runs of the same packed anchor ended 0.07
# apart (7.087, 7.015). Equal means within that spread.
LOSS_TOLERANCE = 0.1


def bench_mlm(steps: int, batch_size: int, seed: int = 0, profile_steps: int = 0) -> tuple[dict, bool]:
    """Lesson 02's model trained on the same packed books for ``steps`` steps three ways, each step timed whole
    (batch preparation and masking included) -> (figures, goal met).

    - ``packed anchor``: what transformers' ``run_mlm.py`` does by default: the same packed blocks,
      ``DataCollatorForLanguageModeling`` masking them, ``BertForMaskedLM`` computing logits at every position;
    - ``line by line``: ``run_mlm.py --line_by_line``: one paragraph per sequence, padded per batch;
    - ``course``: the course's loop: ``mask_tokens`` on the packed blocks, ``masked_lm_loss`` projecting only the
      masked positions onto the vocabulary.

    Every way uses lesson 02's optimizer (``training.adamw`` with RoBERTa's betas). The goal: the course >= 3x the
    packed anchor's tokens/s at equal or lower held-out loss. It also measures this machine's matmul throughput and
    prints the course loop's model FLOP utilisation (``mfu``) against it; ``profile_steps`` > 0 profiles that many
    steps of the course's loop by operator."""
    import torch
    from torch.profiler import record_function
    from transformers import BertForMaskedLM, DataCollatorForLanguageModeling

    from course_utils.course_bert import book_blocks
    from course_utils.masking import mask_tokens
    from course_utils.pretraining import bert_config, heldout_loss, masked_lm_loss
    from course_utils.profiles import get_profile
    from course_utils.training import IGNORE_INDEX, adamw

    recipe = get_profile("quick").pretraining  # lesson 02's live run
    tokenizer, blocks, eval_blocks, train_texts = book_blocks(recipe)
    T, V, p = recipe.block_length, len(tokenizer), recipe.mlm_probability
    print(
        f"model: BERT {recipe.size}, vocab {V}; data: the course's books, {blocks.shape[0]:,} packed blocks of "
        f"{T}; {steps} steps of {batch_size} sequences, masking {p:.0%}; AdamW lr {recipe.lr}; "
        f"{torch.get_num_threads()} CPU threads"
    )
    if steps * batch_size > blocks.shape[0]:
        raise ValueError(
            f"{steps} steps of {batch_size} blocks need {steps * batch_size:,} blocks; the books have "
            f"{blocks.shape[0]:,}: ask for fewer --steps"
        )

    def fresh_model():
        torch.manual_seed(seed)
        model = BertForMaskedLM(bert_config(V, recipe.size, T, recipe.dropout)).train()
        return model, adamw(model.parameters(), lr=recipe.lr, betas=(0.9, 0.98), eps=1e-6, fused=False)

    def packed_rows():
        order = torch.randperm(blocks.shape[0], generator=torch.Generator().manual_seed(seed))
        for step in range(steps):
            yield blocks[order[step * batch_size : (step + 1) * batch_size]]

    def course_steps(model):
        g = torch.Generator().manual_seed(seed)
        for rows in packed_rows():
            with record_function("masking"):
                batch = mask_tokens(rows, tokenizer, mlm_probability=p, generator=g)
            yield (
                masked_lm_loss(model, batch.input_ids, batch.labels),
                rows.numel(),
                int((batch.labels != IGNORE_INDEX).sum()),
            )

    def anchor_steps(model):
        collator = DataCollatorForLanguageModeling(tokenizer, mlm_probability=p, seed=seed)
        for rows in packed_rows():
            batch = collator([{"input_ids": r} for r in rows.tolist()])
            yield model(**batch).loss, rows.numel(), rows.numel()

    def line_steps(model):
        for batch in _default_batches(train_texts, tokenizer, steps, batch_size, T, seed, p):
            yield model(**batch).loss, int(batch["attention_mask"].sum()), batch["input_ids"].numel()

    ways = {"packed anchor": anchor_steps, "line by line": line_steps, "course": course_steps}
    figures: dict = {}
    for way, steps_of in ways.items():
        model, optimizer = fresh_model()
        tokens, flops, seconds = 0, 0.0, 0.0
        it = steps_of(model)
        for _ in range(steps):
            start = time.perf_counter()  # the whole step: batch, masking, forward, backward, update
            step = next(it, None)
            if step is None:
                break
            loss, n_tokens, predicted = step
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            seconds += time.perf_counter() - start
            tokens += n_tokens
            flops += bert_train_flops(recipe.size, batch_size, T, predicted, V)
        loss = heldout_loss(model, eval_blocks, tokenizer, seed=seed)
        key = way.replace(" ", "_")
        figures.update(
            {
                f"{key}_tokens_per_s": tokens / seconds,
                f"{key}_heldout_loss": loss,
                f"{key}_gflop_per_s": flops / seconds / 1e9,
            }
        )
        print(
            f"{way:>14}: {tokens / seconds:9.0f} tokens/s (text tokens, padding not counted)   held-out MLM loss "
            f"after {steps} steps {loss:.3f}   {flops / seconds / 1e9:6.1f} GFLOP/s of matmuls"
        )
        if way == "course" and profile_steps:
            shares = _profile(lambda model=model: course_steps(model), optimizer, profile_steps)
            figures.update({f"profile_share_{group}": share for group, share in shares.items()})
    h, i = recipe.size.hidden, recipe.size.intermediate
    peaks = {
        "2048x2048 @ 2048x2048": matmul_flops(2048, 2048, 2048),
        f"{batch_size * T}x{h} @ {h}x{i} (the FFN)": matmul_flops(batch_size * T, h, i),
        f"{round(p * batch_size * T)}x{h} @ {h}x{V} (the masked head)": matmul_flops(round(p * batch_size * T), h, V),
    }
    for shape, rate in peaks.items():
        print(f"matmul {shape}: {rate / 1e9:6.1f} GFLOP/s")
    peak = max(peaks.values())
    mfu = figures["course_gflop_per_s"] * 1e9 / peak
    speedup = figures["course_tokens_per_s"] / figures["packed_anchor_tokens_per_s"]
    figures.update(
        {
            "peak_matmul_gflop_per_s": peak / 1e9,
            "mfu": mfu,
            "speedup": speedup,
            "speedup_line_by_line": figures["course_tokens_per_s"] / figures["line_by_line_tokens_per_s"],
        }
    )
    gap = figures["course_heldout_loss"] - figures["packed_anchor_heldout_loss"]
    met = speedup >= 3.0 and gap <= LOSS_TOLERANCE
    print(
        f"held-out loss, course minus packed anchor: {gap:+.3f} nats (equal within {LOSS_TOLERANCE}, the spread "
        "between runs: different masks, a vocabulary that differs by process)"
    )
    print(
        f"goal: >= 3x the packed anchor's tokens/s at equal or lower held-out loss -> {'met' if met else 'NOT met'}; "
        f"the line-by-line anchor: {figures['speedup_line_by_line']:.2f}x"
    )
    print(f"mfu {mfu:.2f}  (the course loop's matmul FLOP/s over this machine's best measured matmul; goal >= 0.70)")
    if "profile_share_matmuls" in figures and mfu < 0.70:
        in_matmuls = figures["profile_share_matmuls"]
        print(
            f"  the matmuls take {in_matmuls:.0%} of a step; for 0.70 with them as they are, the rest of the step "
            f"({1 - in_matmuls:.0%} now) would have to shrink to {max(0.0, 1 - in_matmuls * 0.70 / mfu):.0%} of it"
        )
    print(f"speedup {speedup:.2f}")
    return figures, met


# Operator groups of a training step, by the names torch.profiler gives aten operators (self time, forward and backward
# alike); every operator run inside the optimizer's step or the masking counts as "optimizer" or "masking" instead.
OPERATOR_GROUPS = {
    "matmuls": ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm"),
    "attention (SDPA)": ("aten::_scaled_dot_product",),
    "GELU": ("aten::gelu",),
    "log-softmax and loss": ("aten::_log_softmax", "aten::nll_loss"),
    "LayerNorm": ("aten::native_layer_norm",),
    "dropout": ("aten::native_dropout", "aten::bernoulli"),
    "embeddings": ("aten::embedding",),
}
RANGES = {"optimizer": "Optimizer.step", "masking": "masking"}


def time_by_group(events) -> dict[str, float]:
    """Seconds of a profiled run by operator group -> {group: seconds}, "other" for the rest, "total" for all.
    ``events``: ``profile.events()``, each with its self time and its parent range; the self times add up to the
    whole run."""
    seconds = {group: 0.0 for group in (*OPERATOR_GROUPS, *RANGES, "other")}

    def group_of(event) -> str:
        walk = event
        while walk is not None:
            for group, prefix in RANGES.items():
                if walk.name.startswith(prefix):
                    return group
            walk = walk.cpu_parent
        return next((g for g, names in OPERATOR_GROUPS.items() if event.name.startswith(names)), "other")

    for event in events:
        seconds[group_of(event)] += event.self_cpu_time_total / 1e6
    seconds["total"] = sum(seconds.values())
    return seconds


def _profile(make_steps, optimizer, steps: int) -> dict[str, float]:
    """Where a training step's time goes, by operator (``torch.profiler``), over ``steps`` steps -> each group's share
    of the time (``time_by_group``)."""
    from torch.profiler import ProfilerActivity, profile

    it = make_steps()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            step = next(it, None)
            if step is None:
                break
            step[0].backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15))
    seconds = time_by_group(prof.events())
    shares = {group: seconds[group] / seconds["total"] for group in seconds if group != "total"}
    print(f"where a step's time goes ({steps} steps under the profiler, which slows small operators most):")
    for group, share in sorted(shares.items(), key=lambda kv: -kv[1]):
        print(f"  {group:<22} {share:6.1%}")
    return shares


# ------------------------------------------------------------------------------------------------------ finetune
def bench_finetune(examples: int, batch_size: int, seed: int = 0) -> tuple[dict, bool]:
    """Fine-tune the quick profile's encoder on the same SST-2 sentences for one epoch two ways, each timed whole
    -> (figures, goal met).

    - ``Trainer``: transformers' ``Trainer`` with its defaults (``DataCollatorWithPadding``, random order, its AdamW
      with no weight decay and a linear schedule), at the same learning rate, batch size and seed;
    - ``course``: ``finetuning.fine_tune`` (batches grouped by length, fused AdamW, warmup).

    Both are scored on the whole SST-2 validation set. Goal: the course >= 1.5x the Trainer's examples/s, its
    accuracy within 1 point."""
    import datasets
    import torch
    from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments

    from course_utils.finetuning import fine_tune, predict, score
    from course_utils.glue import load_glue
    from course_utils.profiles import get_profile
    from course_utils.resources import load_model, load_tokenizer

    profile = get_profile("quick")
    tokenizer = load_tokenizer(profile.encoder)
    L, lr = profile.finetune("sst2").max_length, 5e-5
    sentences = load_glue("sst2", "train").shuffle(seed=seed).select(range(examples))
    validation = load_glue("sst2", "validation")

    def encode(rows):
        ids = tokenizer(list(rows["sentence"]), truncation=True, max_length=L)["input_ids"]
        return [{"input_ids": i, "labels": y} for i, y in zip(ids, rows["label"])]

    train, valid = encode(sentences), encode(validation)
    print(
        f"model: {profile.encoder}; data: {examples:,} SST-2 training sentences, 1 epoch, batch {batch_size}, "
        f"lr {lr}; scored on {len(valid)} validation sentences; {torch.get_num_threads()} CPU threads"
    )

    def fresh_model():
        torch.manual_seed(seed)
        return load_model(AutoModelForSequenceClassification, profile.encoder, num_labels=2)

    def with_trainer(model):
        with tempfile.TemporaryDirectory() as tmp:
            args = TrainingArguments(
                output_dir=tmp,
                per_device_train_batch_size=batch_size,
                num_train_epochs=1,
                learning_rate=lr,
                seed=seed,
                report_to="none",
                save_strategy="no",
                logging_strategy="no",
                disable_tqdm=True,
                use_cpu=not torch.cuda.is_available(),
            )
            Trainer(
                model=model, args=args, train_dataset=datasets.Dataset.from_list(train), processing_class=tokenizer
            ).train()

    def with_course(model):
        fine_tune(model, tokenizer, train, epochs=1, lr=lr, batch_size=batch_size, seed=seed, progress=False)

    figures: dict = {}
    for way, train_with in (("Trainer", with_trainer), ("course", with_course)):
        model = fresh_model()
        start = time.perf_counter()
        train_with(model)
        seconds = time.perf_counter() - start
        accuracy = score(predict(model.eval(), tokenizer, valid), valid, "sst2")["accuracy"]
        key = way.lower()
        figures.update({f"{key}_examples_per_s": examples / seconds, f"{key}_accuracy": accuracy})
        print(f"{way:>8}: {examples / seconds:7.1f} examples/s ({seconds:.1f} s)   validation accuracy {accuracy:.3f}")
    speedup = figures["course_examples_per_s"] / figures["trainer_examples_per_s"]
    figures["speedup"] = speedup
    met = speedup >= 1.5 and figures["course_accuracy"] >= figures["trainer_accuracy"] - 0.01
    print(f"goal: >= 1.5x the Trainer default's examples/s, accuracy within 1 point -> {'met' if met else 'NOT met'}")
    print(f"speedup {speedup:.2f}")
    return figures, met


# ---------------------------------------------------------------------------------------------------- checkpoint
def bench_checkpoint(limit_s: float = 720.0) -> bool:
    """Rebuild the course BERT from nothing in a temporary cache: the target is ``limit_s`` seconds, and a held-out
    loss within ``build_course_bert.REBUILD_TOLERANCE`` of the shipped checkpoint's."""
    import os

    from course_utils.course_bert import MANIFEST, SHIPPED, ensure_checkpoint, load_checkpoint
    from course_utils.paths import CACHE_ENV

    from .build_course_bert import REBUILD_TOLERANCE

    with tempfile.TemporaryDirectory() as tmp:
        old = os.environ.get(CACHE_ENV)
        os.environ[CACHE_ENV] = tmp
        try:
            start = time.perf_counter()
            folder = ensure_checkpoint(rebuild=True, progress=False)
            seconds = time.perf_counter() - start
            load_checkpoint(folder)
            summary = json.loads((folder / MANIFEST).read_text())["summary"]
        finally:
            if old is None:
                os.environ.pop(CACHE_ENV, None)
            else:
                os.environ[CACHE_ENV] = old
    shipped = json.loads((SHIPPED / MANIFEST).read_text())["summary"]["heldout_loss_end"]
    gap = summary["heldout_loss_end"] - shipped
    close = abs(gap) <= REBUILD_TOLERANCE
    fast = seconds <= limit_s
    print(
        f"course BERT rebuilt from nothing in {seconds:.1f} s (target <= {limit_s:.0f} s): {'ok' if fast else 'OVER'}; "
        f"held-out MLM loss {summary['heldout_loss_end']:.3f}, shipped {shipped:.3f} (|gap| <= {REBUILD_TOLERANCE}): "
        f"{'ok' if close else 'OFF'}"
    )
    return fast and close


def bench_english_mlm() -> bool:
    """Train the course's English MLM again (``course_tools.build_english_mlm --check``: about forty minutes on 2 CPU
    cores) and compare its held-out loss on the books with the shipped model's."""
    from .build_english_mlm import main as build_main

    return build_main(["--check"]) == 0


# ------------------------------------------------------------------------------------------------------- masking
def bench_masking() -> None:
    import torch

    from course_utils.masking import mask_tokens, span_mask, whole_word_mask
    from course_utils.resources import load_tokenizer

    tokenizer = load_tokenizer("sentence-transformers/all-MiniLM-L6-v2")
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(1000, 30000, (256, 128), generator=g)
    words = torch.arange(128).repeat(256, 1) // 2  # two pieces a word
    for name, fn in [
        ("mask_tokens", lambda: mask_tokens(ids, tokenizer, generator=g)),
        ("whole_word_mask", lambda: whole_word_mask(ids, words, tokenizer, generator=g)),
        ("span_mask", lambda: span_mask(ids, tokenizer, generator=g)),
    ]:
        fn()
        start = time.perf_counter()
        repeats = 3 if name == "span_mask" else 20
        for _ in range(repeats):
            fn()
        per_call = (time.perf_counter() - start) / repeats
        print(
            f"{name:>16}: {ids.numel() / per_call / 1e6:7.2f} M tokens/s  ({per_call * 1e3:.1f} ms per 256x128 batch)"
        )


# -------------------------------------------------------------------------------------------------------- course
def bench_course(out: Path, goal_s: float = 1800.0) -> tuple[dict, bool]:
    """Every notebook in the quick profile against its time and memory budget, and the whole course against
    ``goal_s`` (30 minutes on 2 cores) -> (figures, every notebook ok and within budget and the total within goal)."""
    from .run_course import find_notebooks, run_course, summary_table

    report = run_course(find_notebooks([]), out, "quick", timeout=1800)
    print(summary_table(report))
    bad = [nb["name"] for nb in report["notebooks"] if nb["status"] != "ok" or nb["within_budget"] is False]
    if bad:
        print(f"over budget or failed: {', '.join(bad)}")
    total = sum(nb["seconds"] for nb in report["notebooks"])
    print(where_the_time_goes(report))
    print(f"the quick course: {total / 60:.1f} minutes in all (goal <= {goal_s / 60:.0f})")
    figures = {f"{nb['name']}_seconds": nb["seconds"] for nb in report["notebooks"]}
    figures.update({f"{nb['name']}_peak_mb": nb["peak_rss_mb"] for nb in report["notebooks"]})
    figures.update(
        {
            f"{nb['name']}_cell_{index}_seconds": seconds
            for nb in report["notebooks"]
            for index, seconds, _ in nb.get("cells", [])
        }
    )
    figures["total_seconds"] = total
    return figures, not bad and total <= goal_s


def where_the_time_goes(report: dict, lessons: int = 3, cells: int = 3) -> str:
    """The ``cells`` slowest code cells of the ``lessons`` slowest notebooks in a ``run_course`` report, with the
    share of the notebook's time each takes (the rest is the kernel's start and the quick cells)."""
    lines = []
    for nb in sorted(report["notebooks"], key=lambda nb: -nb["seconds"])[:lessons]:
        lines.append(f"{nb['name']} ({nb['seconds']:.0f} s): slowest cells")
        for index, seconds, first in sorted(nb.get("cells", []), key=lambda c: -c[1])[:cells]:
            lines.append(f"  cell {index:>3} {seconds:7.1f} s ({seconds / nb['seconds']:4.0%})  {first}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------------- autograde
def bench_autograde(notebook: str, submissions: int) -> tuple[float, bool]:
    """Autograde ``submissions`` copies of ``notebook`` (half with the reference answers, half untouched releases)
    and compare with the notebook's own quick-profile run -> (seconds, goal met: at most 2 x submissions x own)."""
    import shutil

    from course_utils.paths import repo_root

    from .grading import autograde, release
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
    print(
        f"{notebook}: own run {own['seconds']:.1f} s; {submissions} submissions graded in {seconds:.1f} s "
        f"({seconds / submissions:.1f} s each); goal <= {goal:.0f} s"
    )
    print(f"ratio {seconds / (submissions * own['seconds']):.2f}")
    return seconds, seconds <= goal


def _bench_steps(lessons: str, settings: str | None) -> tuple[dict, None]:
    """``bench steps``: the training steps' table (``course_tools.bench_steps``); it has no goal, only findings."""
    from .bench_steps import SETTINGS, bench_steps

    return bench_steps(lessons.split(","), settings.split(",") if settings else list(SETTINGS)), None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course_tools.bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "what",
        choices=[
            "mlm",
            "finetune",
            "checkpoint",
            "english-mlm",
            "masking",
            "course",
            "steps",
            "autograde",
            "distributed",
            "gpu",
            "gpu-lessons",
            "gpu-profile",
            "all",
            "compare",
            "timeline",
        ],
    )
    parser.add_argument("runs", nargs="*", help="compare: two saved results (names in build/bench, or .json files)")
    parser.add_argument("--steps", type=int, default=100, help="mlm: training steps for each way (default 100)")
    parser.add_argument(
        "--profile-steps",
        type=int,
        default=0,
        help="mlm: also profile this many steps of the course's loop by operator (default 0: no)",
    )
    parser.add_argument(
        "--examples", type=int, default=2000, help="finetune: training sentences each way (default 2000)"
    )
    parser.add_argument(
        "--batch-size", type=int, default=None, help="sequences per step (default: 16 for mlm, 32 for finetune)"
    )
    parser.add_argument(
        "--save-as",
        default=None,
        help="mlm, finetune, course: the result's name in build/bench (default: the bench's name)",
    )
    parser.add_argument("--out", type=Path, default=Path("build"), help="course: where executed notebooks go")
    parser.add_argument(
        "--notebook", default="01_masking", help="autograde: the notebook to grade (default 01_masking)"
    )
    parser.add_argument("--device", default=None, help="gpu: measure on this device (default: cuda if present)")
    parser.add_argument("--tiny", action="store_true", help="gpu: a small model and little data, to check the code")
    parser.add_argument(
        "--lengths",
        type=Path,
        default=None,
        help="gpu-lessons: the training data's token counts, from --write-lengths where the data is (default: count)",
    )
    parser.add_argument("--write-lengths", type=Path, default=None, help="gpu-lessons: only count them into this file")
    parser.add_argument(
        "--lessons", default="02,03c,03d", help="steps: the lessons whose training steps are timed (default 02,03c,03d)"
    )
    parser.add_argument(
        "--settings",
        default=None,
        help="steps: comma-separated settings (default: every one; see python -m course_tools.bench_steps)",
    )
    parser.add_argument("--submissions", type=int, default=20, help="autograde: how many submissions (default 20)")
    args = parser.parse_args(argv)
    if (
        args.steps < 1
        or args.examples < 1
        or (args.batch_size is not None and args.batch_size < 1)
        or args.profile_steps < 0
    ):
        parser.error("--steps, --examples and --batch-size must be positive, --profile-steps at least 0")
    if (args.what == "compare") != bool(args.runs) or (args.what == "compare" and len(args.runs) != 2):
        parser.error("compare takes two saved results, e.g. `compare mlm mlm-before`; the other benches take none")
    if args.what == "timeline":
        from .bench_timeline import report

        try:
            report()
        except (FileNotFoundError, ValueError) as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        return 0
    if args.what == "compare":
        try:
            compare(*args.runs)
        except (FileNotFoundError, json.JSONDecodeError, KeyError) as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        return 0
    from course_utils.quiet import quiet_libraries

    quiet_libraries()
    ok = True
    if args.what in ("masking", "all"):
        bench_masking()
    for name, run in (
        ("mlm", lambda: bench_mlm(args.steps, args.batch_size or 16, profile_steps=args.profile_steps)),
        ("finetune", lambda: bench_finetune(args.examples, args.batch_size or 32)),
        ("checkpoint", None),
        ("course", lambda: bench_course(args.out)),
        ("steps", lambda: _bench_steps(args.lessons, args.settings)),
    ):
        if args.what not in (name, "all"):
            continue
        if name == "checkpoint":
            ok &= bench_checkpoint()
            continue
        figures, met = run()
        save_result(args.save_as if args.save_as and args.what != "all" else name, figures, met)
        ok &= met is not False  # None: a bench of findings, no goal
    if args.what in ("english-mlm", "all"):
        ok &= bench_english_mlm()
    if args.what in ("autograde", "all"):
        ok &= bench_autograde(args.notebook, args.submissions)[1]
    if args.what in ("distributed", "all"):
        from .bench_distributed import GOAL
        from .bench_distributed import compare as compare_processes

        ok &= compare_processes(processes=2, steps=20, batch_size=16) <= GOAL
    if args.what in ("gpu", "all"):
        from .bench_gpu import main as bench_gpu

        ok &= bench_gpu(args.device, args.tiny, args.lengths)
    if args.what == "gpu-profile":
        from .bench_gpu_profile import main as bench_gpu_profile

        ok &= bench_gpu_profile(args.device, args.tiny, args.lengths)
    if args.what in ("gpu-lessons", "all"):
        from .bench_gpu_lessons import main as bench_gpu_lessons

        ok &= bench_gpu_lessons(args.device, args.tiny, args.lengths, args.write_lengths)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
