"""What a lesson's timings ran on (lesson 07 introduces it): a device's name, as printed beside every measured cost.

Lesson 07 times inference and training on the learner's own device and compares formats, batch sizes and threads;
its timing code is written out in the notebook. A timing means little without the device it was measured on, so
every table of timings names it with ``device_name``; the benchmarks of the course's tools (``bench gpu``) do too.
"""

from __future__ import annotations

import platform

import torch


def _cpu_model() -> str:
    """The processor's marketing name where Linux tells it (/proc/cpuinfo), else what ``platform`` knows."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def device_name(device: torch.device | str) -> str:
    """What ``device`` is, for printed tables and the course report: ``"cuda (NVIDIA H100 80GB HBM3)"``,
    ``"cpu (AMD EPYC, 2 threads)"``. Timings mean little without it."""
    device = torch.device(device)
    if device.type == "cuda":
        return f"cuda ({torch.cuda.get_device_name(device)})"
    if device.type == "cpu":
        return f"cpu ({_cpu_model()}, {torch.get_num_threads()} threads)"
    return str(device)
