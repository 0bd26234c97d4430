"""What the full profile costs on a GPU: ``python -m course_tools.bench gpu``.

Prints, with the device's name:

* the MLM pretraining throughput of a bert-base-sized BERT (``pretrain_mlm``, the full profile's mixed precision,
  blocks of 128 tokens from the course's books) in tokens per second, and its model FLOP utilisation (MFU): the
  model's training FLOPs per second over the device's dense 16-bit peak (Chowdhery et al., 2022, appendix B);
* the wall time of one epoch of SST-2 (67,349 sentences) through ``fine_tune`` with the full profile's recipe
  (batch 32, 128 tokens), that is, what a Colab student waits for in lesson 03a.

The weights are random with bert-base-uncased's config (shipped with the course): speed does not depend on them, and
no pretrained checkpoint is needed. Without a CUDA device it says so and measures nothing; nothing is asserted.
``--device cpu --tiny`` runs the same code on a CPU with a small model and little data, to check it works.
"""

from __future__ import annotations

import json
import time

# Dense (no sparsity) 16-bit tensor-core peaks, TFLOP/s, from NVIDIA's data sheets: bf16 where the GPU has it, else
# fp16. Matched against torch.cuda.get_device_name in this order.
PEAK_TFLOPS: tuple[tuple[str, float], ...] = (
    ("H100 PCIe", 756.0),
    ("H100", 989.0),
    ("H200", 989.0),
    ("A100", 312.0),
    ("L40S", 362.0),
    ("L4", 121.0),
    ("A10G", 125.0),
    ("A10", 125.0),
    ("T4", 65.0),
    ("V100", 125.0),
)


def peak_tflops(device_name: str) -> float | None:
    """The device's dense 16-bit peak in TFLOP/s, or None for a device not in ``PEAK_TFLOPS``."""
    for key, peak in PEAK_TFLOPS:
        if key.lower() in device_name.lower():
            return peak
    return None


def training_flops_per_token(config, block_length: int, mask_fraction: float) -> float:
    """Forward + backward FLOPs per token of MLM training: 6 per encoder weight, 12 * layers * hidden * length for
    attention's two matrix products, and the MLM head (6 per weight) on the masked fraction of positions only."""
    h, layers, ff, vocab = config.hidden_size, config.num_hidden_layers, config.intermediate_size, config.vocab_size
    encoder = layers * (4 * h * h + 2 * h * ff)  # attention projections and the feed-forward block
    attention = 12 * layers * h * block_length
    head = mask_fraction * 6 * (h * h + h * vocab)
    return 6 * encoder + attention + head


def run(
    device: str = "cuda", tiny: bool = False, steps: int = 30, batch_size: int = 64, lengths: dict | None = None
) -> dict[str, float]:
    """Measure both numbers on ``device``; returns them (and prints them). ``lengths``: SST-2's token counts (from
    ``bench gpu-lessons --write-lengths``), to run the epoch on random ids where the sentences cannot be loaded."""
    import numpy as np
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertForSequenceClassification

    from course_utils.course_bert import load_books
    from course_utils.efficiency import device_name
    from course_utils.finetuning import encode_task, fine_tune
    from course_utils.glue import load_glue
    from course_utils.packing import pack_blocks
    from course_utils.pretraining import pretrain_mlm

    from .bench_gpu_lessons import SIZES, Workload, examples, padding_tokenizer
    from .standin_checkpoints import real_config

    config = BertConfig(**{k: v for k, v in real_config("bert-base-uncased").items() if k != "architectures"})
    if tiny:
        config.update({"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 128})
        steps, batch_size = 3, 8
    T = 128
    tokenizer = padding_tokenizer()  # shipped, so offline too (the model keeps bert-base's 30,522-piece embedding)
    name = device_name(device)
    blocks = pack_blocks(load_books()[0][: 400 if tiny else 20000], tokenizer, T)
    torch.manual_seed(0)
    model = BertForMaskedLM(config).to(device)
    history = pretrain_mlm(
        model,
        tokenizer,
        blocks[:-8],
        blocks[-8:],
        steps=steps,
        batch_size=batch_size,
        lr=1e-4,
        warmup_steps=0,
        eval_every=steps,
        mixed_precision=True,
        progress=False,
    )
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    tokens_s = history.tokens_per_second
    achieved = tokens_s * training_flops_per_token(config, T, 0.15) / 1e12
    peak = peak_tflops(name)
    print(f"device: {name}")
    shape = "a small BERT (--tiny)" if tiny else "bert-base's shape"
    print(
        f"MLM pretraining, {shape} ({config.num_hidden_layers} layers, hidden {config.hidden_size}), random weights, "
        f"{steps} steps of {batch_size} x {T} tokens, mixed precision: {tokens_s:,.0f} tokens/s = "
        f"{achieved:.1f} TFLOP/s of model FLOPs"
        + (
            f", MFU {achieved / peak:.0%} of {peak:g}"
            if peak
            else " (this device's peak is not in PEAK_TFLOPS: no MFU)"
        )
    )
    del model
    if lengths is None:  # the real sentences (the hub, or the offline mirror)
        sst2 = load_glue("sst2", "train")
        train = encode_task(tokenizer, sst2.select(range(64)) if tiny else sst2, "sst2", T)
    else:  # random ids at the real sentences' lengths (measured where the data is: bench gpu-lessons)
        sst2_rows = Workload("03a", "SST-2", "bert-base-cls2", "classify", 32, T, "sst2", 0)
        rng = np.random.default_rng(0)
        train = examples(sst2_rows, 64 if tiny else SIZES["sst2"], lengths, config.vocab_size, False, rng)
    torch.manual_seed(0)
    classifier = BertForSequenceClassification(config).to(device)
    start = time.perf_counter()
    fine_tune(classifier, tokenizer, train, epochs=1, lr=2e-5, batch_size=32, mixed_precision=True, progress=False)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    epoch_s = time.perf_counter() - start
    print(f"one SST-2 epoch with fine_tune ({len(train):,} sentences, batch 32, mixed precision): {epoch_s:.1f} s")
    results = {
        "tokens_per_second": tokens_s,
        "model_tflops": achieved,
        "mfu": achieved / peak if peak else None,
        "sst2_epoch_seconds": epoch_s,
    }
    print(json.dumps({"device": name, **results}))
    return results


def main(device: str | None = None, tiny: bool = False, lengths_file=None) -> bool:
    """``bench gpu``: measure on CUDA when there is one; say so and measure nothing when there is none."""
    import torch

    if device is None:
        if not torch.cuda.is_available():
            print(
                "no CUDA device here: nothing measured (run `python -m course_tools.bench gpu` on a GPU machine; "
                "`--device cpu --tiny` checks the code on a CPU)"
            )
            return True
        device = "cuda"
    run(device, tiny=tiny, lengths=json.loads(lengths_file.read_text()) if lengths_file else None)
    return True
