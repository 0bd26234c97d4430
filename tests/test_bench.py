"""The benchmarks' own arithmetic and bookkeeping (their timings run outside the tests: ``python -m
course_tools.bench``)."""

import json

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode
from transformers import BertConfig, BertForMaskedLM

from course_tools.bench import bert_train_flops, compare, main, save_result, time_by_group, where_the_time_goes
from course_utils.pretraining import masked_lm_loss
from course_utils.profiles import BertSize
from course_utils.training import IGNORE_INDEX


@pytest.mark.parametrize("masked_only", [False, True])
def test_the_flop_count_of_a_training_step_equals_torchs_own_count(masked_only):
    """``bert_train_flops`` (what ``bench mlm``'s mfu divides by time) against PyTorch's FlopCounterMode on one
    forward and backward of a small BERT: the transformers head (every position) and the course's masked-only one."""
    size, vocab, batch, length = BertSize(hidden=32, layers=2, heads=2, intermediate=64), 500, 3, 16
    torch.manual_seed(0)
    model = BertForMaskedLM(
        BertConfig(
            vocab_size=vocab,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            max_position_embeddings=length,
        )
    )
    ids = torch.randint(5, vocab, (batch, length))
    labels = ids.clone()
    if masked_only:
        labels[torch.rand(batch, length) > 0.2] = IGNORE_INDEX
    predicted = int((labels != IGNORE_INDEX).sum()) if masked_only else batch * length
    with FlopCounterMode(display=False) as counter:
        loss = masked_lm_loss(model, ids, labels) if masked_only else model(input_ids=ids, labels=labels).loss
        loss.backward()
    assert counter.get_total_flops() == bert_train_flops(size, batch, length, predicted, vocab)


def test_saved_results_compare_figure_by_figure(tmp_path, capsys):
    a = save_result("before", {"speedup": 2.0, "mfu": 0.5, "only_here": 1.0, "device": "cpu"}, False, tmp_path)
    b = save_result("after", {"speedup": 3.0, "mfu": 0.6}, True, tmp_path)
    saved = json.loads(b.read_text())
    assert saved["goal_met"] is True and saved["figures"] == {"speedup": 3.0, "mfu": 0.6} and saved["versions"]["torch"]
    assert compare(str(a), str(b)) == [("speedup", 2.0, 3.0), ("mfu", 0.5, 0.6)]
    out = capsys.readouterr().out
    assert "B/A    1.500" in out and "B/A    1.200" in out and "only_here" not in out


def test_compare_names_what_is_missing(tmp_path, capsys):
    assert main(["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 2
    assert f"no saved bench result {tmp_path / 'a.json'}" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["compare", "only-one"])
    assert "compare takes two saved results" in capsys.readouterr().err


def test_a_profiled_step_is_split_into_groups_that_add_up():
    """``bench mlm --profile-steps``' breakdown on a real profile of a tiny step: the matmul lands in "matmuls", the
    optimizer's own multiplies in "optimizer" (not "other"), the masking range in "masking", and the groups sum to
    the whole."""
    from torch.profiler import ProfilerActivity, profile, record_function

    model = torch.nn.Linear(64, 64)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        with record_function("masking"):
            x = torch.randn(32, 64).mul(torch.rand(32, 64) > 0.15)
        model(x).pow(2).mean().backward()
        optimizer.step()
    seconds = time_by_group(prof.events())
    assert seconds["matmuls"] > 0 and seconds["optimizer"] > 0 and seconds["masking"] > 0
    assert seconds["total"] == pytest.approx(sum(v for k, v in seconds.items() if k != "total"))
    assert seconds["total"] == pytest.approx(sum(e.self_cpu_time_total for e in prof.events()) / 1e6)
    in_optimizer = (
        sum(
            e.self_cpu_time_total
            for e in prof.events()
            if e.cpu_parent is not None and e.cpu_parent.name.startswith("Optimizer.step")
        )
        / 1e6
    )
    assert seconds["optimizer"] >= in_optimizer > 0  # its children are counted there, not in "other"


def test_the_slowest_cells_of_the_slowest_lessons_are_listed():
    report = {
        "notebooks": [
            {"name": "fast", "seconds": 10.0, "cells": [[1, 5.0, "import torch"]]},
            {
                "name": "slow",
                "seconds": 100.0,
                "cells": [[2, 10.0, "setup()"], [5, 60.0, "fine_tune(model)"], [7, 20.0, "predict(model)"]],
            },
        ]
    }
    text = where_the_time_goes(report, lessons=1, cells=2)
    assert text.splitlines() == [
        "slow (100 s): slowest cells",
        "  cell   5    60.0 s ( 60%)  fine_tune(model)",
        "  cell   7    20.0 s ( 20%)  predict(model)",
    ]


@pytest.mark.slow
def test_two_processes_train_the_same_model_as_one(capsys):
    """`bench distributed` at a small size: pretrain_mlm and fine_tune under `accelerate launch` with 2 CPU processes
    (gloo) end within 1e-5 of the one-process run with the same global batch and seed."""
    from course_tools.bench_distributed import GOAL, compare

    assert compare(processes=2, steps=4, batch_size=8) <= GOAL
    out = capsys.readouterr().out
    assert out.strip().splitlines()[-1].startswith("max parameter difference")


def test_each_gpu_gets_its_own_peak_however_its_name_contains_another():
    """MFU needs the device's peak; names nest ("H100" in "H100 PCIe", "L4" in "L40S"), so the table is matched in
    an order where every GPU finds its own row. A device not in the table has no peak (MFU is then not claimed)."""
    from course_tools.bench_gpu import PEAK_TFLOPS, peak_tflops

    for name, peak in PEAK_TFLOPS:
        assert peak_tflops(f"NVIDIA {name}") == peak, name
    assert peak_tflops("cpu (Xeon)") is None


@pytest.mark.slow
def test_the_gpu_bench_runs_its_code_on_a_cpu(capsys):
    """`bench gpu --device cpu --tiny`: the same measurements with a small model, so the GPU-only command is not
    first run on a GPU."""
    from course_tools.bench_gpu import run

    results = run("cpu", tiny=True)
    assert results["tokens_per_second"] > 0 and results["sst2_epoch_seconds"] > 0 and results["mfu"] is None
    assert "one SST-2 epoch with fine_tune (64 sentences" in capsys.readouterr().out


@pytest.mark.slow
def test_the_gpu_profile_runs_its_code_on_a_cpu(capsys):
    """`bench gpu-profile --device cpu --tiny`: both loops under the profiler with a small model, no GPU time."""
    from course_tools.bench_gpu_profile import run

    figures = run("cpu", tiny=True)
    assert figures["mlm"]["wall_ms_per_step"] > 0 and figures["sst2"]["wall_ms_per_step"] > 0
    assert figures["mlm"]["gpu_busy_ms_per_step"] == 0 and figures["sst2"]["gpu_idle_share"] is None
    assert "attention implementation: sdpa" in capsys.readouterr().out


@pytest.mark.slow
def test_bench_steps_times_a_lessons_own_steps_in_a_fresh_process():
    """`bench steps`: a lesson's training steps run in a child process under a setting's environment; the per-step
    time comes back."""
    from course_tools.bench_steps import LESSONS, measure

    assert measure("02", 2, "1-thread") > 0
    with pytest.raises(RuntimeError, match="lesson 99"):
        measure("99", 2, "native")
    assert set(LESSONS) == {"02", "03c", "03d"}


def test_bench_steps_refuses_an_unknown_setting():
    from course_tools.bench_steps import bench_steps

    with pytest.raises(ValueError, match="accepted: native, avx2"):
        bench_steps(["02"], ["turbo"])


def test_gpu_lessons_counts_each_full_recipes_steps_from_the_profile():
    """`bench gpu-lessons` multiplies a measured step by the full recipe's step count: the counts follow the profile
    (03c: CoNLL-2003's 14,041 sentences, batch 32, 3 epochs; 02: the main run's steps)."""
    from course_tools.bench_gpu_lessons import plan
    from course_utils.profiles import PROFILES

    rows: dict = {}
    for w in plan():
        rows.setdefault((w.lesson, w.kind), w)
    assert rows[("03c", "tokens")].steps == 439 * 3
    assert rows[("02", "mlm")].steps == PROFILES["full"].pretraining.steps
    assert {w.lesson for w in plan()} == {"02", "03a", "03b", "03c", "03d", "04", "05", "06", "07", "08"}


@pytest.mark.slow
def test_the_gpu_lessons_bench_runs_one_workload_of_each_kind_on_a_cpu(capsys):
    """Every kind of step (classify, tokens, qa, seq2seq, mlm, forward) goes through the course's loops with small
    models, random ids at lengths drawn from a given distribution, capped at the recipe's maximum."""
    from course_tools.bench_gpu_lessons import examples, plan, run

    lengths = {
        "sst2": [5, 9, 300],
        "stsb": [20],
        "conll2003": [12],
        "squad": [200, 384],
        "squad_windows_per_question": [1.02],
        "aeslc_source": [140],
        "aeslc_target": [8],
        "chemprot": [70],
    }
    first = {}
    for w in plan():
        first.setdefault(w.kind, w)
    rows = run(
        "cpu",
        tiny=True,
        lengths_file=None,
        only=lambda w: w.kind in first and first[w.kind].name == w.name,
        lengths=lengths,
    )
    assert {r["workload"] for r in rows} == {w.name for w in first.values()}
    assert all(r["seconds_per_step"] > 0 and r["steps"] > 0 for r in rows)
    assert "per lesson (training steps only)" in capsys.readouterr().out
    sst2 = next(w for w in plan() if w.lengths == "sst2")
    import numpy as np

    drawn = examples(sst2, 50, lengths, 5000, False, np.random.default_rng(0))
    assert max(len(e["input_ids"]) for e in drawn) == sst2.max_length  # 300 is cut at 128


def test_the_timeline_of_a_test_run_says_which_lane_stood_idle(tmp_path, capsys):
    from course_tools.bench_timeline import report

    lines = [
        {"lane": "gw0", "unit": "notebooks/02.ipynb", "phase": "call", "seconds": 100.0, "end": 1100.0},
        {"lane": "gw1", "unit": "tests/test_rehearsal.py::t[02]", "phase": "call", "seconds": 30.0, "end": 1030.0},
        {"lane": "gw1", "unit": "tests/test_a.py", "phase": "call", "seconds": 20.0, "end": 1050.0},
    ]
    path = tmp_path / "timeline.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    found = report(path)
    assert found["lanes"]["gw0"] == {"start": 1000.0, "end": 1100.0, "busy": 100.0}
    assert found["lanes"]["gw1"]["busy"] == 50.0 and found["lanes"]["gw1"]["end"] == 1050.0
    assert found["tiers"] == {"notebooks (nbval)": 100.0, "rehearsal": 30.0, "unit tests": 20.0}
    assert "gw1          50       50                  50" in capsys.readouterr().out
    path.write_text("")
    with pytest.raises(ValueError, match="empty"):
        report(path)
