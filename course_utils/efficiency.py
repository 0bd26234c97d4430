"""What a lesson's timings ran on (lesson 07 introduces it): a device's name, as printed beside every measured cost.

Lesson 07 times inference and training on the learner's own device and compares formats, batch sizes and threads;
its timing code is written out in the notebook. A timing means little without the device it was measured on, so
every table of timings names it with ``device_name``; the benchmarks of the course's tools (``bench gpu``) do too.
"""

from __future__ import annotations

import platform

import torch


def _cpuinfo(field: str) -> str | None:
    """The first ``field`` line of /proc/cpuinfo (Linux), or None where there is none."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.lower().startswith(field):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def _cpu_model() -> str:
    """The processor's marketing name where Linux tells it (/proc/cpuinfo), else what ``platform`` knows."""
    return _cpuinfo("model name") or platform.processor() or platform.machine() or "unknown CPU"


def vector_extensions() -> str | None:
    """The widest vector instructions this x86 CPU has, as its flags say: ``"AVX-512 with BF16"``, ``"AVX-512"``,
    ``"AVX2"``; None where /proc/cpuinfo does not tell. Two 2-core machines of one model name can differ here, and
    bf16 arithmetic is fast only with AVX-512 BF16 (lesson 07)."""
    flags = (_cpuinfo("flags") or "").split()
    if "avx512f" in flags:
        return "AVX-512 with BF16" if "avx512_bf16" in flags else "AVX-512"
    return "AVX2" if "avx2" in flags else None


def device_name(device: torch.device | str) -> str:
    """What ``device`` is, for printed tables and the course report: ``"cuda (NVIDIA H100 80GB HBM3)"``,
    ``"cpu (AMD EPYC, AVX-512 with BF16, 2 threads)"``. Timings mean little without it."""
    device = torch.device(device)
    if device.type == "cuda":
        return f"cuda ({torch.cuda.get_device_name(device)})"
    if device.type == "cpu":
        vectors = vector_extensions()
        return f"cpu ({_cpu_model()}{f', {vectors}' if vectors else ''}, {torch.get_num_threads()} threads)"
    return str(device)
