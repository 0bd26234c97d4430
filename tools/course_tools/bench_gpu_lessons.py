"""What each lesson's full profile asks of a GPU: ``python -m course_tools.bench gpu-lessons``.

For every training (and the one large inference) that a lesson runs in the full profile, with the full profile's
model shapes (bert-base-uncased, t5-small, facebook/bart-base from their configs, **random weights**), batch sizes,
lengths and mixed precision, through the course's own loops (``fine_tune``, ``pretrain_mlm``):

* the **peak GPU memory** of a step whose every sequence is as long as the recipe allows (the worst batch a run can
  draw), to hold against a Colab T4's 15 GB;
* the **seconds per step** (the marginal cost: a run of 32 steps minus one of 8, after a warm-up at the same lengths,
  so that a run's fixed cost and the first use of each shape's kernels stay out) over batches whose lengths are
  drawn from the real data's (the course's tokenizer on the real training splits, counted where the data is
  reachable and carried in ``--lengths``), times the number of steps the full recipe runs: the lesson's training time
  on this device. Evaluation, generation, tokenisation and downloads are left out, so a lesson takes longer than
  this; the step counts are written out in ``plan()``.

The counts of the full recipes' steps come from ``PROFILES["full"]`` and the training sets' sizes (``SIZES``).
Random weights cost what trained ones cost: speed and memory do not depend on the values. Nothing is asserted.
``--device cpu --tiny`` runs every workload with small models, to check the code on a CPU.
"""

from __future__ import annotations

import gc
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

T4_GB = 15.0  # a Colab T4's memory (GiB as Colab shows it)

# Training-set sizes of the full profile's data (the hub's train splits). SQuAD's windows are counted from its
# validation split's windows per question (the mirror holds no train split); CNN/DailyMail's count is its recipe's.
SIZES = {
    "sst2": 67349,
    "stsb": 5749,
    "conll2003": 14041,
    "squad_questions": 87599,
    "aeslc": 14436,
    "chemprot": 4169,
}


@dataclass(frozen=True)
class Workload:
    """One kind of training step a lesson runs, and how many of them its full recipe runs."""

    lesson: str
    name: str
    model: str  # a key of ``build_model``
    kind: str  # "classify", "tokens", "qa", "seq2seq", "mlm" or "forward"
    batch_size: int
    max_length: int
    lengths: str | None  # a key of the lengths file (real lengths, cut at max_length), None: every one max_length
    steps: int  # steps the full recipe runs (all seeds and runs together)
    target_length: int = 0  # seq2seq: the longest target
    target_lengths: str | None = None
    top_layers: int | None = None  # train only the top layers (None: everything)


def plan(squad_windows_per_question: float = 1.0) -> list[Workload]:
    """Every workload, with its step count from ``PROFILES["full"]`` (the notebook's loop counts written out).
    SQuAD's steps depend on how many 384-token windows a question's context makes (the lengths file counts them)."""
    from course_utils.profiles import PROFILES

    p = PROFILES["full"]
    ft = p.finetune
    per_epoch = lambda n, b: math.ceil(n / b)  # noqa: E731
    pre, sst2, small, scratch = p.pretraining, ft("sst2"), ft("sst2_small"), ft("sst2_scratch")
    stsb, ner, squad = ft("stsb"), ft("conll2003"), ft("squad")
    s2s, news, ad, eff, pr = p.seq2seq, p.seq2seq.news, p.adaptation, p.efficiency, p.prompting
    chem_run = per_epoch(SIZES["chemprot"], ad.finetune.batch_size) * ad.finetune.epochs
    aeslc_steps = per_epoch(SIZES["aeslc"], s2s.batch_size) * s2s.epochs
    squad_windows = math.ceil(SIZES["squad_questions"] * squad_windows_per_question)
    return [
        Workload(
            "02",
            "pretraining, bert-small shape (main run)",
            "bert-02",
            "mlm",
            pre.batch_size,
            pre.block_length,
            None,
            pre.steps,
        ),
        Workload(
            "02",
            "scale study, 2 smaller sizes",
            "bert-02-scale",
            "mlm",
            pre.batch_size,
            pre.block_length,
            None,
            pre.steps * len(p.scale_study.sizes),
        ),
        # 03a: the headline run (1 epoch of SST-2), 3 small-data runs (pooling, warmup, learning rate variants) and
        # the random-init run on its own budget
        Workload(
            "03a",
            "SST-2, bert-base",
            "bert-base-cls2",
            "classify",
            sst2.batch_size,
            sst2.max_length,
            "sst2",
            per_epoch(SIZES["sst2"], sst2.batch_size) * sst2.epochs
            + 3 * per_epoch(small.train_examples, small.batch_size) * small.epochs
            + per_epoch(scratch.train_examples, scratch.batch_size) * scratch.epochs,
        ),
        Workload(
            "03b",
            "STS-B cross-encoder",
            "bert-base-cls1",
            "classify",
            stsb.batch_size,
            stsb.max_length,
            "stsb",
            per_epoch(SIZES["stsb"], stsb.batch_size) * stsb.epochs,
        ),
        Workload(
            "03c",
            "CoNLL-2003 tagger",
            "bert-base-tokens",
            "tokens",
            ner.batch_size,
            ner.max_length,
            "conll2003",
            per_epoch(SIZES["conll2003"], ner.batch_size) * ner.epochs,
        ),
        Workload(
            "03d",
            "SQuAD reader",
            "bert-base-qa",
            "qa",
            squad.batch_size,
            squad.max_length,
            "squad",
            per_epoch(squad_windows, squad.batch_size) * squad.epochs,
        ),
        *(
            Workload(
                "04",
                f"{model} on AESLC",
                model,
                "seq2seq",
                s2s.batch_size,
                s2s.max_source_length,
                "aeslc_source",
                aeslc_steps,
                s2s.max_target_length,
                "aeslc_target",
            )
            for model in ("t5-small", "bart-base")
        ),
        # CNN/DailyMail articles average 781 tokens and summaries 56 (See et al., 2017): sources fill 512
        Workload(
            "04",
            "t5-small on CNN/DailyMail",
            "t5-small",
            "seq2seq",
            s2s.batch_size,
            news.max_source_length,
            None,
            per_epoch(news.train_examples, s2s.batch_size) * news.epochs,
            news.max_target_length,
            None,
        ),
        # DAPT, TAPT, DAPT + TAPT and the wrong domain: 4 adaptation runs (TAPT's counted at DAPT's steps)
        Workload(
            "05",
            "continued MLM pretraining, 4 runs",
            "bert-base-mlm",
            "mlm",
            ad.batch_size,
            ad.block_length,
            None,
            4 * ad.steps,
        ),
        Workload(
            "05",
            "long DAPT, top layer only",
            "bert-base-mlm",
            "mlm",
            ad.batch_size,
            ad.block_length,
            None,
            ad.regime_steps,
            top_layers=ad.regime_top_layers,
        ),
        # 5 starting models x seeds, then the regime's confirmation: 2 models x regime seeds
        Workload(
            "05",
            "ChemProt fine-tuning runs",
            "bert-base-cls13",
            "classify",
            ad.finetune.batch_size,
            ad.finetune.max_length,
            "chemprot",
            chem_run * (5 * ad.seeds + 2 * ad.regime_seeds),
        ),
        Workload(
            "06",
            "hidden states of the probing sentences",
            "bert-base-mlm",
            "forward",
            64,
            160,
            None,
            per_epoch(p.probing.train_sentences + p.probing.eval_sentences, 64),
        ),
        Workload(
            "07",
            "inference, the grid's largest point",
            "bert-base-cls2",
            "forward",
            max(eff.inference_batches),
            max(eff.inference_lengths),
            None,
            1,
        ),
        Workload(
            "07",
            "selective fine-tuning, 3 choices",
            "bert-base-cls2",
            "classify",
            eff.selective.batch_size,
            eff.selective.max_length,
            "sst2",
            3 * per_epoch(eff.selective.train_examples, eff.selective.batch_size),
        ),
        Workload(
            "07",
            "distillation: 6-layer student, soft and gold labels",
            "bert-6-cls2",
            "classify",
            eff.selective.batch_size,
            128,
            "sst2",
            2 * per_epoch(SIZES["sst2"], eff.selective.batch_size),
        ),
        # PET and the classification head: fewshot_k sizes x seeds x fewshot_steps each
        Workload(
            "08",
            "PET and head few-shot runs",
            "bert-base-mlm",
            "mlm",
            pr.fewshot_batch_size,
            pr.max_length,
            None,
            2 * len(pr.fewshot_k) * pr.seeds * pr.fewshot_steps,
        ),
        Workload(
            "08",
            "multi-task runs (3 mixtures)",
            "bert-base-cls1",
            "classify",
            pr.multitask_batch_size,
            pr.multitask_max_length,
            "stsb",
            3 * pr.multitask_seeds * pr.multitask_steps,
        ),
    ]


def padding_tokenizer():
    """The shipped course BERT's tokenizer (offline everywhere): the loops need one only to pad and to mask."""
    from course_utils.profiles import COURSE_CHECKPOINT
    from course_utils.resources import load_tokenizer

    return load_tokenizer(COURSE_CHECKPOINT)


def build_model(key: str, tiny: bool):
    """A randomly initialised model of the full profile's shape (``tiny``: 2 layers, hidden 64)."""
    from transformers import (
        AutoConfig,
        AutoModelForSeq2SeqLM,
        BertConfig,
        BertForMaskedLM,
        BertForQuestionAnswering,
        BertForSequenceClassification,
        BertForTokenClassification,
    )

    from course_utils.profiles import PROFILES

    from .standin_checkpoints import real_config

    small = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 128}
    if key in ("t5-small", "bart-base"):
        name = {"t5-small": "t5-small", "bart-base": "facebook/bart-base"}[key]
        raw = {k: v for k, v in real_config(name).items() if k not in ("architectures", "task_specific_params")}
        config = AutoConfig.for_model(raw.pop("model_type"), **raw)
        if tiny:
            config.update(
                {"d_model": 64, "d_ff": 128, "num_layers": 2, "num_decoder_layers": 2, "num_heads": 2}
                if key == "t5-small"
                else {
                    "d_model": 64,
                    "encoder_ffn_dim": 128,
                    "decoder_ffn_dim": 128,
                    "encoder_layers": 2,
                    "decoder_layers": 2,
                    "encoder_attention_heads": 2,
                    "decoder_attention_heads": 2,
                }
            )
        return AutoModelForSeq2SeqLM.from_config(config)
    base = {k: v for k, v in real_config("bert-base-uncased").items() if k != "architectures"}
    if key.startswith("bert-02"):
        pre = PROFILES["full"].pretraining
        size = pre.size if key == "bert-02" else PROFILES["full"].scale_study.sizes[-1]
        base.update(
            {
                "vocab_size": pre.vocab_size,
                "hidden_size": size.hidden,
                "num_hidden_layers": size.layers,
                "num_attention_heads": size.heads,
                "intermediate_size": size.intermediate,
            }
        )
    if key == "bert-6-cls2":
        base["num_hidden_layers"] = 6
    config = BertConfig(**base)
    if tiny:
        config.update(small)
    if key.endswith("-mlm") or key.startswith("bert-02"):
        return BertForMaskedLM(config)
    if key.endswith("-qa"):
        return BertForQuestionAnswering(config)
    if key.endswith("-tokens"):
        config.num_labels = 9
        return BertForTokenClassification(config)
    config.num_labels = int(key.rsplit("cls", 1)[1])
    if config.num_labels == 1:
        config.problem_type = "regression"
    return BertForSequenceClassification(config)


def examples(w: Workload, n: int, lengths: dict[str, list[int]], vocab: int, longest: bool, rng) -> list[dict]:
    """``n`` training examples of ``w``'s kind: random ids at real lengths (``longest``: all at max_length)."""

    def length(key: str | None, cap: int) -> int:
        if longest or key is None:
            return cap
        return max(4, min(cap, int(rng.choice(lengths[key]))))

    rows = []
    for _ in range(n):
        size = length(w.lengths, w.max_length)
        ids = [101] + rng.integers(1000, vocab, size - 2).tolist() + [102]
        row: dict = {"input_ids": ids}
        if w.kind == "classify":
            row["labels"] = float(rng.random()) if w.model.endswith("cls1") else int(rng.integers(2))
        elif w.kind == "tokens":
            row["labels"] = rng.integers(0, 9, size).tolist()
        elif w.kind == "qa":
            row["start_positions"], row["end_positions"] = sorted(rng.integers(0, size, 2).tolist())
        elif w.kind == "seq2seq":
            target = length(w.target_lengths, w.target_length)
            row["labels"] = rng.integers(5, vocab, target).tolist()
        rows.append(row)
    return rows


def measure(w: Workload, lengths: dict, tokenizer, device: str, tiny: bool, timed_steps: int, rng) -> dict:
    """Peak memory of the longest batch, then seconds per step over ``timed_steps`` batches of real lengths."""
    import torch
    from transformers import DataCollatorForTokenClassification

    from course_utils.finetuning import fine_tune
    from course_utils.pretraining import pretrain_mlm
    from course_utils.seq2seq import collator
    from course_utils.training import train_only

    torch.manual_seed(0)
    model = build_model(w.model, tiny).to(device)
    if w.top_layers is not None:
        train_only(model, w.top_layers)  # lesson 05's long DAPT: the MLM head and the top layers
    vocab = model.config.vocab_size
    cuda = device.startswith("cuda")

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize()

    def run(rows_or_blocks, steps: int) -> None:
        if w.kind == "mlm":
            pretrain_mlm(
                model,
                tokenizer,
                rows_or_blocks,
                rows_or_blocks[: w.batch_size],
                steps=steps,
                batch_size=w.batch_size,
                lr=1e-5,
                warmup_steps=0,
                eval_every=steps,
                mixed_precision=True,
                progress=False,
            )
        elif w.kind == "forward":
            model.eval()
            with torch.no_grad(), torch.autocast(device.split(":")[0], dtype=torch.bfloat16):
                for _ in range(steps):
                    model(input_ids=rows_or_blocks)
        else:
            collate = {"seq2seq": collator(tokenizer), "tokens": DataCollatorForTokenClassification(tokenizer)}.get(
                w.kind
            )
            fine_tune(
                model,
                tokenizer,
                rows_or_blocks,
                epochs=1,
                lr=1e-5,
                batch_size=w.batch_size,
                collate=collate,
                mixed_precision=True,
                progress=False,
            )

    def data(steps: int, longest: bool):
        if w.kind == "forward":  # one batch, run `steps` times
            return torch.randint(1000, vocab, (w.batch_size, w.max_length), device=device)
        if w.kind == "mlm":  # packed blocks, as pretrain_mlm takes them
            return torch.randint(1000, vocab, (steps * w.batch_size, w.max_length))
        return examples(w, steps * w.batch_size, lengths, vocab, longest, rng)

    run(data(2, True), 2)  # warm-up, and the longest batch for the peak
    sync()
    if cuda:  # what an earlier run left in reference cycles (its optimizer, say) must not count towards this peak
        gc.collect()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    run(data(2, True), 2)
    sync()
    peak = torch.cuda.max_memory_reserved() / 2**30 if cuda else float("nan")
    run(data(timed_steps, False), timed_steps)  # warm-up at the real lengths: kernels for their shapes load once

    def timed(steps: int) -> float:
        batches = data(steps, False)
        sync()
        start = time.perf_counter()
        run(batches, steps)
        sync()
        return time.perf_counter() - start

    # the marginal cost of a step: a run's fixed cost (its loader, optimizer, accelerator) cancels in the difference
    long, short = timed(4 * timed_steps), timed(timed_steps)
    per_step = (long - short) / (3 * timed_steps) if long > short else long / (4 * timed_steps)  # noise: the mean
    model.to("cpu")  # its GPU memory back before the next workload
    if cuda:
        gc.collect()
        torch.cuda.empty_cache()
    return {
        "lesson": w.lesson,
        "workload": w.name,
        "batch": w.batch_size,
        "max_length": w.max_length,
        "peak_gib": peak,
        "seconds_per_step": per_step,
        "steps": w.steps,
        "seconds": per_step * w.steps,
    }


def real_lengths(tiny: bool) -> dict[str, list]:
    """Token counts of the full profile's training data under the course's tokenizers (needs the data: the hub, or
    the offline mirror). Targets are counted with bert-base-uncased's WordPiece, standing in for T5's and BART's
    tokenizers (how far their counts differ was not measured)."""
    from course_utils.adaptation import load_task
    from course_utils.glue import load_glue
    from course_utils.question_answering import encode_for_training
    from course_utils.resources import load_dataset, load_tokenizer

    tok = load_tokenizer("sentence-transformers/all-MiniLM-L6-v2")  # bert-base-uncased's WordPiece
    cap = 500 if tiny else None

    def count(texts, pairs=None, max_length=512) -> list[int]:
        texts = list(texts)[:cap]
        enc = tok(texts, list(pairs)[:cap] if pairs is not None else None, truncation=True, max_length=max_length)
        return [len(x) for x in enc["input_ids"]]

    sst2, stsb = load_glue("sst2", "train"), load_glue("stsb", "train")
    conll = load_dataset("eriktks/conll2003", "conll2003", split="train")
    squad = load_dataset("rajpurkar/squad", "plain_text", split="validation")
    squad = squad.select(range(cap or len(squad)))
    aeslc = load_dataset("Yale-LILY/aeslc", split="train")
    windows = encode_for_training(tok, squad, 384, 128)
    chemprot, _ = load_task("chemprot")
    return {
        "sst2": count(sst2["sentence"]),
        "stsb": count(stsb["sentence1"], stsb["sentence2"]),
        "conll2003": count([" ".join(t) for t in conll["tokens"]]),
        "squad": [len(x["input_ids"]) for x in windows],
        "squad_windows_per_question": [len(windows) / len(squad)],
        "aeslc_source": count(aeslc["email_body"]),
        "aeslc_target": count(aeslc["subject_line"]),
        "chemprot": count(chemprot["train"]["text"]),
    }


def run(
    device: str,
    tiny: bool = False,
    lengths_file: Path | None = None,
    out: Path | None = None,
    only: Callable[[Workload], bool] = lambda w: True,
    lengths: dict | None = None,
) -> list[dict]:
    """Measure every workload (``only``: those it accepts); print a table per lesson and the lessons' totals; write
    them to ``out``. The data's token counts: ``lengths``, else ``lengths_file``, else counted now."""
    import numpy as np
    import torch

    from course_utils.efficiency import device_name

    if lengths is None:
        lengths = json.loads(lengths_file.read_text()) if lengths_file else real_lengths(tiny)
    rng = np.random.default_rng(0)
    rows = []
    print(f"device: {device_name(device)}; random weights in the full profile's shapes{' (tiny)' if tiny else ''}")
    tokenizer = padding_tokenizer()
    for w in filter(only, plan(lengths["squad_windows_per_question"][0])):
        try:
            row = measure(w, lengths, tokenizer, device, tiny, 3 if tiny else 8, rng)
        except Exception as err:  # noqa: BLE001 - one workload's failure (out of memory, say) is a finding too
            print(f"{w.lesson:>4} {w.name:<52} FAILED: {type(err).__name__}: {str(err)[:300]}", flush=True)
            if device.startswith("cuda"):
                torch.cuda.empty_cache()
            continue
        rows.append(row)
        print(
            f"{row['lesson']:>4} {row['workload']:<52} batch {row['batch']:>3} x {row['max_length']:>3}  "
            f"peak {row['peak_gib']:5.1f} GiB  {row['seconds_per_step'] * 1000:7.1f} ms/step x {row['steps']:>6,} "
            f"= {row['seconds'] / 60:6.1f} min",
            flush=True,
        )
    print("\nper lesson (training steps only): minutes on this device, largest peak against a T4's 15 GB")
    for lesson in dict.fromkeys(r["lesson"] for r in rows):
        mine = [r for r in rows if r["lesson"] == lesson]
        peak = max(r["peak_gib"] for r in mine)
        fits = "n/a" if math.isnan(peak) else "fits" if peak <= T4_GB else "DOES NOT FIT"
        print(f"{lesson:>4}  {sum(r['seconds'] for r in mine) / 60:6.1f} min   peak {peak:5.1f} GiB  {fits}")
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"device": device_name(device), "torch": torch.__version__, "rows": rows}, indent=1))
    return rows


def main(device: str | None, tiny: bool, lengths: Path | None, write_lengths: Path | None) -> bool:
    """``bench gpu-lessons``: count the data's lengths (``write_lengths``), or measure on CUDA when there is one."""
    import torch

    if write_lengths:
        write_lengths.parent.mkdir(parents=True, exist_ok=True)
        write_lengths.write_text(json.dumps(real_lengths(tiny)))
        print(f"token counts of the full profile's training data -> {write_lengths}")
        return True
    if device is None:
        if not torch.cuda.is_available():
            print("no CUDA device here: nothing measured (`--device cpu --tiny` checks the code on a CPU)")
            return True
        device = "cuda"
    run(device, tiny, lengths, Path("build/bench/gpu-lessons.json"))
    return True
