"""The training loops on accelerate: one process, several processes, and the batch that does not divide."""

import types

import pytest

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


def test_two_processes_train_the_same_model_as_one(capsys):
    """`bench distributed` at a small size: pretrain_mlm and fine_tune under `accelerate launch` with 2 CPU processes
    (gloo) end within 1e-5 of the one-process run with the same global batch and seed."""
    from course_tools.bench_distributed import GOAL, compare

    assert compare(processes=2, steps=4, batch_size=8) <= GOAL
    out = capsys.readouterr().out
    assert out.strip().splitlines()[-1].startswith("max parameter difference")


def test_the_gpu_bench_runs_its_code_on_a_cpu_and_knows_the_peaks(capsys):
    """`bench gpu --device cpu --tiny`: the same measurements with a small model, so the GPU-only command is not
    first run on a GPU. MFU needs the device's peak, known for the usual GPUs only."""
    from course_tools.bench_gpu import peak_tflops, run

    assert peak_tflops("NVIDIA H100 80GB HBM3") == 989.0 and peak_tflops("NVIDIA H100 PCIe") == 756.0
    assert peak_tflops("Tesla T4") == 65.0 and peak_tflops("cpu (Xeon)") is None
    results = run("cpu", tiny=True)
    assert results["tokens_per_second"] > 0 and results["sst2_epoch_seconds"] > 0 and results["mfu"] is None
    assert "one SST-2 epoch with fine_tune (64 sentences" in capsys.readouterr().out
