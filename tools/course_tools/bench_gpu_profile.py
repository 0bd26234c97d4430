"""Where a full-profile training step goes: ``python -m course_tools.bench gpu-profile`` (issue 58, item 1).

PyTorch's profiler over a few steps of two of the course's own loops, in bert-base's shape with random weights and
the full profile's mixed precision, after a few unprofiled warm-up steps:

* lesson 02's masked-LM pretraining (``pretrain_mlm``, 64 blocks of 128 tokens from the course's books);
* lesson 03a's SST-2 fine-tuning (``fine_tune``, batch 32, padded per batch), on random ids at SST-2's real lengths
  (``--lengths``, from ``bench gpu-lessons --write-lengths``; else every sentence 24 pieces).

For each it prints the wall time per step, the GPU's busy time per step (the sum of its kernels, one stream), the
share of the step the GPU waits on the host, the host-device synchronisations per step, the attention
implementation, and the slowest kernels and host operators. On a CPU (``--device cpu --tiny``) the same code runs
with a small model, to check it; there the 'GPU' columns are empty. Nothing is asserted: it is a finding, written
into docs/gpu.md.
"""

from __future__ import annotations

import time

SYNCS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cudaMemcpyAsync")


def summarise(prof, steps: int, wall_s: float, title: str) -> dict[str, float]:
    """One loop's profile -> its figures per step; prints them and the top operators."""
    events = prof.key_averages()
    kernels = [  # the GPU's own work: kernels and copies, not the ranges that mark them (Optimizer.step#AdamW.step)
        e
        for e in events
        if "CUDA" in str(getattr(e, "device_type", ""))
        and not getattr(e, "is_user_annotation", False)
        and "#" not in e.key
    ]
    gpu_us = sum(e.self_device_time_total for e in kernels)
    syncs = {name: sum(e.count for e in events if e.key == name) for name in SYNCS}
    figures = {
        "wall_ms_per_step": 1000 * wall_s / steps,
        "gpu_busy_ms_per_step": gpu_us / 1000 / steps,
        "syncs_per_step": sum(syncs.values()) / steps,
    }
    figures["gpu_idle_share"] = 1 - figures["gpu_busy_ms_per_step"] / figures["wall_ms_per_step"] if gpu_us else None
    print(f"\n== {title}: {steps} profiled steps")
    print(
        f"wall {figures['wall_ms_per_step']:.1f} ms a step; GPU kernels {figures['gpu_busy_ms_per_step']:.1f} ms a step"
        + (f" -> the GPU waits {figures['gpu_idle_share']:.0%} of the step" if gpu_us else "")
    )
    print("host-device synchronisations a step: " + ", ".join(f"{k} {v / steps:.1f}" for k, v in syncs.items()))
    if gpu_us:
        print(events.table(sort_by="self_device_time_total", row_limit=12, max_name_column_width=60))
    print(events.table(sort_by="self_cpu_time_total", row_limit=12, max_name_column_width=60))
    return figures


def run(device: str = "cuda", tiny: bool = False, lengths: dict | None = None, steps: int = 10) -> dict:
    """Profile ``steps`` steps of each loop on ``device`` -> {"mlm": figures, "sst2": figures}."""
    import numpy as np
    import torch
    from torch.profiler import ProfilerActivity, profile
    from transformers import BertConfig, BertForMaskedLM, BertForSequenceClassification

    from course_utils.course_bert import load_books
    from course_utils.efficiency import device_name
    from course_utils.finetuning import fine_tune
    from course_utils.packing import pack_blocks
    from course_utils.pretraining import pretrain_mlm

    from .bench_gpu_lessons import padding_tokenizer
    from .standin_checkpoints import real_config

    config = BertConfig(**{k: v for k, v in real_config("bert-base-uncased").items() if k != "architectures"})
    batch = 64
    if tiny:
        config.update({"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 128})
        steps, batch = 2, 8
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.startswith("cuda") else [])
    tokenizer = padding_tokenizer()
    blocks = pack_blocks(load_books()[0][: 400 if tiny else 4000], tokenizer, 128)
    print(f"device: {device_name(device)}; bert-base's shape{' (tiny)' if tiny else ''}, random weights, bf16/fp16")

    def sync() -> None:
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    def profiled(train, warm_up, title: str) -> dict[str, float]:
        """``warm_up()`` unprofiled, then ``train()`` (``steps`` steps) under the profiler -> its figures."""
        warm_up()
        sync()
        with profile(activities=activities) as prof:
            start = time.perf_counter()
            train()
            sync()
            wall = time.perf_counter() - start
        return summarise(prof, steps, wall, title)

    torch.manual_seed(0)
    mlm_model = BertForMaskedLM(config).to(device)
    print(f"attention implementation: {mlm_model.config._attn_implementation}")

    def mlm(n: int) -> None:
        pretrain_mlm(mlm_model, tokenizer, blocks[:-8], blocks[-8:], steps=n, batch_size=batch, lr=1e-4,
                     warmup_steps=0, eval_every=n, mixed_precision=True, progress=False)  # fmt: skip

    figures = {"mlm": profiled(lambda: mlm(steps), lambda: mlm(3), f"02 MLM, batch {batch} x 128")}
    mlm_model.cpu()

    rng = np.random.default_rng(0)
    sizes = lengths["sst2"] if lengths else [24]

    def sentence() -> dict:
        """Random ids at one of SST-2's lengths, [CLS] ... [SEP], with a random label."""
        ids = [101, *rng.integers(1000, config.vocab_size, max(3, min(128, int(rng.choice(sizes)))) - 2).tolist(), 102]
        return {"input_ids": ids, "token_type_ids": [0] * len(ids), "labels": int(rng.integers(0, 2))}

    train = [sentence() for _ in range(32 * (steps + 3))]
    torch.manual_seed(0)
    classifier = BertForSequenceClassification(config).to(device)

    def sst2(rows) -> None:
        fine_tune(classifier, tokenizer, rows, epochs=1, lr=2e-5, batch_size=32, mixed_precision=True, progress=False)

    figures["sst2"] = profiled(
        lambda: sst2(train[32 * 3 :]),
        lambda: sst2(train[: 32 * 3]),
        "03a SST-2 fine-tuning, batch 32, padded per batch",
    )
    return figures


def main(device: str | None = None, tiny: bool = False, lengths_file=None) -> bool:
    """``bench gpu-profile``: profile on CUDA when there is one; say so and profile nothing when there is none."""
    import json

    import torch

    if device is None:
        if not torch.cuda.is_available():
            print("no CUDA device here: nothing profiled (`--device cpu --tiny` checks the code on a CPU)")
            return True
        device = "cuda"
    run(device, tiny, json.loads(lengths_file.read_text()) if lengths_file else None)
    return True
