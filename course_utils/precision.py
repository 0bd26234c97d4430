"""Mixed precision for the package's training loops: which 16-bit format a device computes in, autocast around the
forward pass, and loss scaling where the format needs it. Lesson 07 explains what bf16 and fp16 keep and lose;
``pretrain_mlm`` (lesson 02) and ``fine_tune`` (lesson 03) train through it.

A GPU with bf16 (A100, H100, L4) and a CPU compute in bf16; an older GPU (Colab's T4) in fp16, whose 5 exponent bits
underflow small gradients, so its loss is scaled up before ``backward`` and the gradients down before the step
(``torch.amp.GradScaler``). The weights stay fp32 throughout (Micikevicius et al., 2018).
"""
from __future__ import annotations

from contextlib import AbstractContextManager

import torch


def profile_wants_mixed_precision() -> bool:
    """The running profile's choice (``Profile.mixed_precision``): on in ``full`` and its rehearsal, off in ``quick``."""
    from .claims import active_profile
    from .profiles import PROFILES

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


class Precision:
    """Autocast and loss scaling for one training run on ``device``; a no-op when ``enabled`` is False.

    Use ``with precision.autocast(): loss = ...``, then ``precision.backward(loss)`` and
    ``precision.step(optimizer, params, max_norm)`` (unscale, clip, step, update the scale).
    """

    def __init__(self, device: torch.device | str, enabled: bool | None = None):
        self.device = torch.device(device)
        self.enabled = profile_wants_mixed_precision() if enabled is None else bool(enabled)
        self.dtype = amp_dtype(self.device) if self.enabled else None
        scale = self.dtype == torch.float16 and self.device.type == "cuda"
        self.scaler = torch.amp.GradScaler("cuda", enabled=scale)

    @property
    def name(self) -> str:
        """'bf16', 'fp16' or 'fp32', for printed tables."""
        return {torch.bfloat16: "bf16", torch.float16: "fp16"}.get(self.dtype, "fp32")

    def autocast(self) -> AbstractContextManager:
        return torch.autocast(self.device.type, dtype=self.dtype or torch.bfloat16, enabled=self.dtype is not None)

    def backward(self, loss: torch.Tensor) -> None:
        self.scaler.scale(loss).backward()

    def step(self, optimizer: torch.optim.Optimizer, params, max_norm: float | None = 1.0) -> None:
        """Unscale the gradients, clip their norm to ``max_norm`` (None: no clipping), step, update the scale."""
        self.scaler.unscale_(optimizer)
        if max_norm is not None:
            torch.nn.utils.clip_grad_norm_(params, max_norm)
        self.scaler.step(optimizer)
        self.scaler.update()
