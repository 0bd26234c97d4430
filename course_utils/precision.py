"""Mixed precision for the package's training loops: which 16-bit format a device computes in. Lesson 07 explains
what bf16 and fp16 keep and lose; ``pretrain_mlm`` (lesson 02) and ``fine_tune`` (lesson 03) pass the choice to
accelerate (``course_utils.engine``), which autocasts the forward pass and scales the loss where the format needs it.

A GPU with bf16 (A100, H100, L4) and a CPU compute in bf16; an older GPU (Colab's T4) in fp16, whose 5 exponent bits
underflow small gradients, so its loss is scaled up before ``backward`` and the gradients down before the step
(``torch.amp.GradScaler``). The weights stay fp32 throughout (Micikevicius et al., 2018).
"""
from __future__ import annotations

import torch

from .claims import active_profile
from .profiles import PROFILES


def profile_wants_mixed_precision() -> bool:
    """The running profile's choice (``Profile.mixed_precision``): on in ``full`` and its rehearsal, off in ``quick``."""
    return PROFILES[active_profile()].mixed_precision


def amp_dtype(device: torch.device | str) -> torch.dtype | None:
    """The 16-bit format autocast uses on ``device``: bf16 on a CPU and on GPUs that have it, else fp16; None where
    the course does not use autocast (Apple's MPS)."""
    device = torch.device(device)
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if device.type == "cpu":
        return torch.bfloat16
    return None


def mode(device: torch.device | str, enabled: bool | None = None) -> str:
    """accelerate's name for how a run on ``device`` computes: 'bf16', 'fp16' or 'no' (fp32). ``enabled`` None
    follows the running profile."""
    enabled = profile_wants_mixed_precision() if enabled is None else bool(enabled)
    dtype = amp_dtype(device) if enabled else None
    return {torch.bfloat16: "bf16", torch.float16: "fp16"}.get(dtype, "no")
