"""The one training loop of the course, on Hugging Face ``accelerate``: pretraining (lesson 02), continued pretraining
(lesson 05) and fine-tuning (lesson 03, reused by 04-08) all take their steps from ``train_steps``.

One step: the batch's share for this process, the loss under autocast, ``backward`` (loss-scaled where fp16 needs
it), gradients clipped to norm 1.0, the optimizer and the schedule stepped, gradients cleared, and the loss kept on
the device (a ``float()`` every step would make the host wait for each GPU step before queuing the next). The same
loop runs on one CPU, on one GPU in bf16 or fp16, or on several GPUs or nodes under ``accelerate launch``:
``Accelerator.prepare`` wraps the model, optimizer and schedule; collectives (``reduce``) combine what each process
measured.

Mixed precision: a GPU with bf16 (A100, H100, L4) and a CPU compute in bf16; an older GPU (Colab's T4) in fp16, whose
5 exponent bits underflow small gradients, so its loss is scaled up before ``backward`` and the gradients down before
the step. The weights stay fp32 throughout (Micikevicius et al., 2018). Lesson 07 measures what each format keeps.

How batches are shared, so that N processes compute exactly what one process computes with the same global batch:
every process reads the same *global* batches from its own ``DataLoader`` (the sampler's order, and for MLM the
masks, drawn in the collate function from one seeded generator: the same in every process) and keeps its own slice
of each (``my_slice``). Reading is cheap next to the model (masking, padding), and no batch travels between
processes. A loss that averages over a variable number of positions (masked tokens) is normalised by the global
count, so the gradients that ``DistributedDataParallel`` averages are those of the global batch. Dropout is the one
thing that differs: each process draws its own dropout masks.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import torch
from accelerate import Accelerator
from accelerate.state import AcceleratorState, PartialState
from accelerate.utils import DataLoaderConfiguration
from torch.utils.data import DataLoader
from tqdm.auto import tqdm

from .profiles import active_profile, get_profile
from .quiet import is_quiet


def amp_dtype(device: torch.device | str) -> torch.dtype | None:
    """The 16-bit format autocast uses on ``device``: bf16 on a CPU and on GPUs that have it, else fp16; None where
    the course does not use autocast (Apple's MPS)."""
    device = torch.device(device)
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if device.type == "cpu":
        return torch.bfloat16
    return None


def cpu_computes_bf16() -> bool:
    """Whether this CPU does bf16 arithmetic in hardware (AVX-512 BF16 or AMX, as oneDNN sees it). Without it PyTorch
    emulates bf16, far slower than fp32: lesson 02's rehearsal on an AVX2-only CPU ran past its 600 s limit."""
    check = getattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", None)
    try:
        return bool(check()) if check is not None else True
    except RuntimeError:
        return True


def precision_mode(device: torch.device | str, enabled: bool | None = None) -> str:
    """accelerate's name for how a run on ``device`` computes: 'bf16', 'fp16' or 'no' (fp32). ``enabled`` None
    follows the running profile (``Profile.mixed_precision``: on in ``full`` and its rehearsal, off in ``quick``),
    except on a CPU without bf16 hardware, where the profile's choice would only slow the run down: there it is fp32.
    ``enabled=True`` asks for 16-bit whatever the hardware (lesson 07 measures what that costs)."""
    device = torch.device(device)
    if enabled is None:
        enabled = get_profile(active_profile()).mixed_precision and (device.type != "cpu" or cpu_computes_bf16())
    dtype = amp_dtype(device) if enabled else None
    return {torch.bfloat16: "bf16", torch.float16: "fp16"}.get(dtype, "no")


def accelerator_for(device: torch.device | str, mixed_precision: bool | None = None):
    """An ``Accelerator`` for a run on ``device``: bf16 / fp16 / fp32 as ``precision_mode`` decides
    (``mixed_precision`` None follows the running profile); ``split_batches``, because the loops' batch sizes are
    global (so the prepared schedule steps once per optimizer step, whatever the number of processes).

    accelerate keeps one process-wide state; a single process (a notebook) may train once in fp32 and once in bf16,
    so there the state is started afresh for every run. Under ``accelerate launch`` it is left as the launcher set it.
    accelerate has no public way to do this: ``_reset_state`` is what its own tests call between configurations
    (huggingface/accelerate#1055), and its maintainers pointed users to it (skorch-dev/skorch#873).
    """
    device = torch.device(device)
    if PartialState().num_processes == 1:
        AcceleratorState._reset_state(reset_partial_state=True)
    return Accelerator(
        cpu=device.type == "cpu",
        mixed_precision=precision_mode(device, mixed_precision),
        dataloader_config=DataLoaderConfiguration(split_batches=True),
        step_scheduler_with_optimizer=True,
    )


def check_divides(batch_size: int, accelerator) -> None:
    """A global batch is split evenly across processes; refuse one that does not divide."""
    processes = accelerator.num_processes
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int; got {batch_size!r}.")
    if batch_size % processes:
        fits = [b for b in (batch_size - batch_size % processes, batch_size + processes - batch_size % processes) if b]
        raise ValueError(
            f"batch_size={batch_size} does not divide among {processes} processes: every process takes an "
            f"equal slice of each global batch. Accepted: a multiple of {processes}, e.g. "
            f"{' or '.join(map(str, fits))}."
        )


class EpochBatches:
    """A batch sampler: each pass (epoch) yields lists of indices into ``size`` examples, in the order ``order(epoch)``
    gives, ``batch_size`` at a time; the last, shorter batch is dropped when ``drop_last``."""

    def __init__(self, size: int, batch_size: int, order: Callable[[int], Sequence[int]], drop_last: bool = False):
        self.size, self.batch_size, self.order, self.drop_last = size, batch_size, order, drop_last
        self.epoch = 0

    def __iter__(self) -> Iterator[list[int]]:
        order = list(self.order(self.epoch))
        self.epoch += 1
        end = len(order) - len(order) % self.batch_size if self.drop_last else len(order)
        for start in range(0, end, self.batch_size):
            yield order[start : start + self.batch_size]

    def __len__(self) -> int:
        return self.size // self.batch_size if self.drop_last else math.ceil(self.size / self.batch_size)


def loader(examples: Sequence, batch_sampler: EpochBatches, collate: Callable):
    """A ``DataLoader`` over ``examples`` (a list, or a tensor's rows) with ``batch_sampler`` and ``collate``, read in
    this process (no workers, so a collate function that draws from a generator keeps its order)."""
    # Its own generator for the worker seed a DataLoader draws at every pass: otherwise that draw comes from torch's
    # global generator, and would shift the dropout masks of the model being trained.
    return DataLoader(
        examples,
        batch_sampler=batch_sampler,
        collate_fn=collate,
        num_workers=0,
        generator=torch.Generator().manual_seed(0),
    )


def my_slice(batch: dict[str, torch.Tensor], accelerator) -> dict[str, torch.Tensor]:
    """This process's equal share of a global batch (rows ``[i * B / N, (i + 1) * B / N)`` of every tensor), on its
    device; the whole batch in a single process."""
    processes, index = accelerator.num_processes, accelerator.process_index
    rows = len(next(iter(batch.values())))
    if rows % processes:
        raise ValueError(f"a batch of {rows} rows does not divide among {processes} processes")
    share = rows // processes
    return {k: v[index * share : (index + 1) * share].to(accelerator.device) for k, v in batch.items()}


def forever(batches) -> Iterator:
    """Batches from ``batches`` (a DataLoader) epoch after epoch."""
    while True:
        yield from batches


def global_normaliser(accelerator, local_count: torch.Tensor) -> torch.Tensor | None:
    """For a loss averaged over a variable number of positions: the global count divided by the number of processes,
    so that ``sum of this process's losses / normaliser`` averaged over processes is the global batch's mean.
    None in a single process (the loss is its own mean)."""
    if accelerator.num_processes == 1:
        return None
    total = accelerator.reduce(local_count.detach().float(), reduction="sum")
    return total.clamp(min=1.0) / accelerator.num_processes


def progress_bar(total: int, desc: str, accelerator, progress: bool | None = None) -> tqdm:
    """A tqdm bar over ``total`` steps, shown on the main process unless quiet mode is on (``progress`` None) or
    ``progress=False``."""
    visible = ((not is_quiet()) if progress is None else bool(progress)) and accelerator.is_main_process
    return tqdm(total=total, desc=desc, disable=not visible, leave=False)


@dataclass(frozen=True)
class Step:
    """One optimizer step as ``train_steps`` yields it: its number (from 1), its loss (a 0-dim tensor on the device,
    averaged over processes) and the learning rate it used."""

    number: int
    loss: torch.Tensor
    lr: float


def train_steps(
    model: torch.nn.Module,
    optimizer,
    schedule,
    batches: DataLoader,
    steps: int,
    *,
    accelerator,
    loss: Callable[[torch.nn.Module, dict[str, torch.Tensor]], torch.Tensor],
    bar: tqdm | None = None,
) -> Iterator[Step]:
    """Prepare ``model`` (the module whose ``forward`` gives the loss), ``optimizer`` and ``schedule`` with
    ``accelerator`` now, then lazily run ``steps`` optimizer steps on ``batches`` (global batches, read epoch after
    epoch), yielding a ``Step`` after each.

    ``loss(prepared_model, batch)`` computes the loss of this process's share of a batch (dict of tensors [B/N, ...]).
    The parameters that require gradients are clipped to norm 1.0 together. The model is in training mode at every
    step (a caller may evaluate between steps) and, when the steps are done, is the caller's module again, without
    accelerate's wrappers.
    """
    trainable = [p for p in model.parameters() if p.requires_grad]
    prepared, optimizer, schedule = accelerator.prepare(model, optimizer, schedule)

    def run() -> Iterator[Step]:
        stream = forever(batches)
        try:
            for number in range(1, steps + 1):
                prepared.train()
                batch = my_slice(next(stream), accelerator)
                with accelerator.autocast():
                    value = loss(prepared, batch)
                accelerator.backward(value)
                accelerator.clip_grad_norm_(trainable, 1.0)
                lr = schedule.get_last_lr()[0]
                optimizer.step()
                schedule.step()
                optimizer.zero_grad(set_to_none=True)
                if bar is not None:
                    bar.update(1)
                yield Step(number, accelerator.reduce(value.detach(), reduction="mean"), lr)
        finally:
            accelerator.unwrap_model(prepared, keep_fp32_wrapper=False)  # the caller's module, unwrapped

    return run()


def floats(losses: Sequence[torch.Tensor]) -> list[float]:
    """Losses kept on the device -> Python floats, with one wait for the device for all of them."""
    return torch.stack(list(losses)).float().tolist() if losses else []
