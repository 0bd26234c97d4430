"""The engine under the package's training loops: Hugging Face ``accelerate``.

``pretrain_mlm`` (lesson 02) and ``fine_tune`` (lesson 03) are each one loop that runs on one CPU, on one GPU in bf16
or fp16 with loss scaling, or on several GPUs or nodes under ``accelerate launch``: ``Accelerator.prepare`` wraps the
model, optimizer, schedule and ``DataLoader``; ``accelerator.autocast()`` and ``accelerator.backward()`` do the mixed
precision; collectives (``reduce``) combine what each process measured.

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

import torch
from accelerate import Accelerator
from accelerate.state import AcceleratorState, PartialState
from accelerate.utils import DataLoaderConfiguration
from torch.utils.data import DataLoader

from . import precision


def accelerator_for(device: torch.device | str, mixed_precision: bool | None = None):
    """An ``Accelerator`` for a run on ``device``: bf16 / fp16 / fp32 as ``course_utils.precision`` decides
    (``mixed_precision`` None follows the running profile); ``split_batches``, because the loops' batch sizes are
    global (so the prepared schedule steps once per optimizer step, whatever the number of processes).

    accelerate keeps one process-wide state; a single process (a notebook) may train once in fp32 and once in bf16,
    so there the state is started afresh for every run. Under ``accelerate launch`` it is left as the launcher set it.
    """
    device = torch.device(device)
    if PartialState().num_processes == 1:
        AcceleratorState._reset_state(reset_partial_state=True)
    return Accelerator(
        cpu=device.type == "cpu",
        mixed_precision=precision.mode(device, mixed_precision),
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
        raise ValueError(f"batch_size={batch_size} does not divide among {processes} processes: every process takes an "
                         f"equal slice of each global batch. Accepted: a multiple of {processes}, e.g. "
                         f"{' or '.join(map(str, fits))}.")


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
            yield order[start:start + self.batch_size]

    def __len__(self) -> int:
        return self.size // self.batch_size if self.drop_last else math.ceil(self.size / self.batch_size)


def loader(examples: Sequence, batch_sampler: EpochBatches, collate: Callable):
    """A ``DataLoader`` over ``examples`` (a list, or a tensor's rows) with ``batch_sampler`` and ``collate``, read in
    this process (no workers, so a collate function that draws from a generator keeps its order)."""
    # Its own generator for the worker seed a DataLoader draws at every pass: otherwise that draw comes from torch's
    # global generator, and would shift the dropout masks of the model being trained.
    return DataLoader(examples, batch_sampler=batch_sampler, collate_fn=collate, num_workers=0,
                      generator=torch.Generator().manual_seed(0))


def my_slice(batch: dict[str, torch.Tensor], accelerator) -> dict[str, torch.Tensor]:
    """This process's equal share of a global batch (rows ``[i * B / N, (i + 1) * B / N)`` of every tensor), on its
    device; the whole batch in a single process."""
    processes, index = accelerator.num_processes, accelerator.process_index
    rows = len(next(iter(batch.values())))
    if rows % processes:
        raise ValueError(f"a batch of {rows} rows does not divide among {processes} processes")
    share = rows // processes
    return {k: v[index * share:(index + 1) * share].to(accelerator.device) for k, v in batch.items()}


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
