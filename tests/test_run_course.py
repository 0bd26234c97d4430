"""The main job on two small fixture notebooks: one that records results, one that fails."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "notebooks"


@pytest.mark.slow
def test_report_has_status_time_memory_and_results(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "course_tools.run_course",
            str(FIXTURES / "ok_records.ipynb"),
            str(FIXTURES / "fails.ipynb"),
            "--out",
            str(tmp_path),
            "--profile",
            "quick",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr  # one notebook failed: the job says so
    report = json.loads((tmp_path / "course-report.json").read_text())
    assert report["profile"] == "quick" and report["total_seconds"] > 0
    ok, failed = report["notebooks"]
    assert (ok["name"], ok["status"], failed["status"]) == ("ok_records", "ok", "failed")
    assert ok["results"] == {"answer": 42, "ratio": 0.5}
    assert ok["seconds"] > 0 and ok["peak_rss_mb"] > 50  # the kernel holds a 32 MB array on top of python
    assert ok["within_budget"] is True
    [(index, seconds, first_line)] = ok["cells"]  # where a lesson's time goes: one entry per code cell
    assert index == 0 and 0 <= seconds <= ok["seconds"] and first_line == "from course_utils import record"
    assert "arithmetic is broken" in failed["error"] and failed["results"] == {"before_failure": 1}
    assert (tmp_path / "notebooks" / "fails.ipynb").is_file()  # executed copy kept, with the error in it
    assert "1/2 notebooks ok" in proc.stdout
    assert "AssertionError: arithmetic is broken" in proc.stdout  # the table shows why a notebook failed
    speed = report["matmul_gflops"]  # the yardstick that says whether two runs' seconds compare
    assert speed["before"] > 1 and speed["after"] > 1 and "; fp32 matmul" in proc.stdout
    assert "machine: cpu (" in proc.stdout
    assert report["cpu_stolen"] is None or 0 <= report["cpu_stolen"] <= 1


def test_stolen_share_is_steal_over_all_cpu_time_between_two_readings():
    from course_tools.run_course import stolen_share

    before = [100, 0, 50, 800, 0, 0, 0, 50, 0, 0]  # user nice system idle iowait irq softirq steal guest guest_nice
    after = [400, 0, 100, 1200, 0, 0, 0, 300, 5, 0]  # 1,000 ticks more, 250 of them stolen (guest is in user already)
    assert stolen_share(before, after) == 0.25
    assert stolen_share(None, after) is None and stolen_share(before, before) is None


def test_unknown_profile_is_refused(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "course_tools.run_course", "--profile", "turbo", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "Unknown course profile 'turbo'" in proc.stderr


def test_a_recipe_field_set_from_the_command_line_is_checked_before_any_notebook_runs(capsys, tmp_path):
    from course_tools.run_course import main

    with pytest.raises(SystemExit) as stopped:
        main(["--set", "finetuning.sst2.lrr=3e-5", "--out", str(tmp_path)])
    assert stopped.value.code == 2 and not list(tmp_path.iterdir())
    assert "FinetuneRecipe has no field 'lrr'; accepted: train_examples, epochs, lr" in capsys.readouterr().err


def test_the_notebook_child_writes_its_copy_without_importing_the_lessons_package(tmp_path):
    """The child run_course starts per notebook must not pay for torch and transformers (course_utils' imports)."""
    script = (
        "import sys; from pathlib import Path; from course_tools.execute_notebook import _write_whole; "
        f"_write_whole(Path({str(tmp_path / 'out' / 'x.ipynb')!r}), 'whole'); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('course_utils', 'torch', 'transformers')))"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
    assert (tmp_path / "out" / "x.ipynb").read_text() == "whole"


def test_reports_record_paths_inside_the_checkout_relative(tmp_path, monkeypatch):
    """A committed report (docs/results/*.json) carries no machine's absolute paths: what lies below the working
    folder is recorded relative to it; anything else as given."""
    from course_tools.run_course import shown

    monkeypatch.chdir(tmp_path)
    assert shown(tmp_path / "build" / "rehearsal" / "notebooks" / "01.ipynb") == "build/rehearsal/notebooks/01.ipynb"
    assert shown(Path("build/x.json")) == "build/x.json"
    outside = tmp_path.parent / "elsewhere.json"
    assert shown(outside) == str(outside)
