"""The training loops on accelerate: one process, several processes, and the batch that does not divide."""

import types

import pytest
import torch

from course_utils.training_loop import EpochBatches, check_divides, my_slice


def test_a_global_batch_that_does_not_divide_among_processes_is_refused():
    two = types.SimpleNamespace(num_processes=2)
    check_divides(16, two)
    with pytest.raises(
        ValueError, match=r"batch_size=15 does not divide among 2 processes.*multiple of 2, e\.g\. 14 or 16"
    ):
        check_divides(15, two)
    with pytest.raises(ValueError, match="batch_size must be a positive int"):
        check_divides(0, two)


def test_each_process_keeps_its_own_equal_slice_of_the_global_batch():
    import torch

    batch = {"input_ids": torch.arange(8).view(4, 2), "labels": torch.arange(4)}
    for index in range(2):
        acc = types.SimpleNamespace(num_processes=2, process_index=index, device=torch.device("cpu"))
        part = my_slice(batch, acc)
        assert part["labels"].tolist() == [2 * index, 2 * index + 1] and part["input_ids"].shape == (2, 2)


def test_epoch_batches_follow_the_order_of_each_epoch_and_drop_a_short_tail_when_asked():
    orders = {0: [3, 1, 4, 0, 2], 1: [2, 0, 1, 4, 3]}
    batches = EpochBatches(5, 2, lambda epoch: orders[epoch], drop_last=True)
    assert list(batches) == [[3, 1], [4, 0]] and list(batches) == [[2, 0], [1, 4]] and len(batches) == 2
    assert list(EpochBatches(5, 2, lambda epoch: orders[0])) == [[3, 1], [4, 0], [2]]


def test_train_steps_prepares_once_steps_lazily_and_gives_the_model_back():
    """The one loop: nothing runs until iterated; each Step carries the lr it used (warmup then decay) and a loss on
    the device; the model is in training mode at every step even if the caller evaluated between steps; at the end
    the caller's module is unwrapped and trained (its weights moved)."""
    from transformers import get_linear_schedule_with_warmup

    from course_utils.training import adamw
    from course_utils.training_loop import EpochBatches, accelerator_for, floats, loader, train_steps

    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    before = model.weight.detach().clone()
    rows = [{"x": torch.randn(4), "y": torch.randn(1)} for _ in range(8)]
    batches = loader(
        rows, EpochBatches(8, 4, lambda epoch: range(8)), lambda b: {k: torch.stack([r[k] for r in b]) for k in b[0]}
    )
    optimizer = adamw(model.parameters(), lr=0.1)
    schedule = get_linear_schedule_with_warmup(optimizer, 2, 6)
    modes = []

    def loss(prepared, batch):
        modes.append(prepared.training)
        return torch.nn.functional.mse_loss(prepared(batch["x"]), batch["y"])

    run = train_steps(model, optimizer, schedule, batches, 6, accelerator=accelerator_for("cpu", False), loss=loss)
    assert modes == [] and torch.equal(model.weight, before)  # lazy: no step yet
    steps = []
    for step in run:
        steps.append(step)
        model.eval()  # a caller evaluating between steps
    assert [s.number for s in steps] == [1, 2, 3, 4, 5, 6] and all(modes)
    lrs = [s.lr for s in steps]
    assert lrs[0] == 0.0 and lrs[2] == max(lrs) and lrs[-1] < lrs[2]  # warmup over 2 steps, then linear decay
    assert all(s.loss.dim() == 0 for s in steps) and len(floats([s.loss for s in steps])) == 6
    assert type(model) is torch.nn.Linear and not torch.equal(model.weight, before)
