"""The main job: execute every notebook headless and write ``build/course-report.json``.

    python -m course_tools.run_course                   # all notebooks, quick profile, into build/
    python -m course_tools.run_course notebooks/01_masking.ipynb --profile full
    python -m course_tools.run_course --inplace         # maintainers: refresh the committed outputs

Each notebook runs in its own process (and kernel), so its time and peak memory are its own. A failing notebook is
reported and the run goes on; the exit status is 1 if any notebook failed.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from course_utils.atomic import atomic_write_text
from course_utils.claims import FAILED, HELD, NOT_EXPECTED, tally
from course_utils.efficiency import device_name
from course_utils.paths import repo_root
from course_utils.profiles import PROFILES, SET_ENV, get_profile, with_settings
from course_utils.report import RESULTS_ENV

REPORT_NAME = "course-report.json"


# ----------------------------------------------------------------------------------------------- the run (parent)
def shown(path: Path) -> str:
    """``path`` as a committed report records it: relative to the working folder when inside it (a checkout's own
    ``build/...``), so no machine's absolute paths travel with the course."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def run_notebook(
    source: Path, out_dir: Path, profile: str, timeout: int, wrong_answers: Path | None = None
) -> dict[str, Any]:
    """Execute ``source`` in a child process; return its report entry. ``wrong_answers``: also score each exercise's
    wrong answers from that folder (``course_tools.grading.wrong_answers``)."""
    output = out_dir / "notebooks" / source.name
    results_file = out_dir / "results" / f"{source.stem}.json"
    results_file.unlink(missing_ok=True)
    child_report = out_dir / "results" / f"{source.stem}.run.json"
    child_report.parent.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "COURSE_PROFILE": profile,
        "COURSE_QUIET": "1",
        RESULTS_ENV: str(results_file.resolve()),
        "MPLBACKEND": "module://matplotlib_inline.backend_inline",
        "PYTHONWARNINGS": "ignore",
    }
    cmd = [
        sys.executable,
        "-m",
        "course_tools.execute_notebook",
        str(source),
        "--output",
        str(output),
        "--child-report",
        str(child_report),
        "--timeout",
        str(timeout),
        *(["--wrong-answers", str(Path(wrong_answers).resolve())] if wrong_answers is not None else []),
    ]
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, env=env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        log, _ = proc.communicate(timeout=timeout)
        entry = (
            json.loads(child_report.read_text())
            if child_report.is_file()
            else {
                "status": "failed",
                "error": f"runner crashed: {log.strip().splitlines()[-1] if log.strip() else proc.returncode}",
                "peak_rss_mb": None,
            }
        )
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        entry = {"status": "failed", "error": f"timed out after {timeout} s", "peak_rss_mb": None}
    seconds = time.perf_counter() - start
    child_report.unlink(missing_ok=True)
    recorded = json.loads(results_file.read_text()) if results_file.is_file() else {}
    budget = PROFILES[profile]
    seconds_budget = budget.seconds_budget_for(source.stem)
    within = None
    if seconds_budget is not None and entry["status"] == "ok":
        within = seconds <= seconds_budget and (entry["peak_rss_mb"] or 0) <= budget.peak_rss_mb_budget
    report = {
        "name": source.stem,
        "status": entry["status"],
        "seconds": round(seconds, 1),
        "peak_rss_mb": entry["peak_rss_mb"],
        "within_budget": within,
        "error": entry["error"],
        "results": recorded.get("results", {}),
        "sources": recorded.get("sources", []),
        "claims": recorded.get("claims", []),
        "cells": entry.get("cells", []),
        "executed": shown(output),
    }
    if "wrong_answers" in entry:
        report["wrong_answers"] = entry["wrong_answers"]
    return report


def summary_table(report: dict[str, Any]) -> str:
    """A plain-text table of the report, for the end of the run."""
    rows = [("notebook", "status", "seconds", "peak MB", "budget", "claims", "results")]
    for nb in report["notebooks"]:
        counts = tally(nb.get("claims", []))
        claims_text = f"{counts[HELD]} held, {counts[FAILED]} failed, {counts[NOT_EXPECTED]} not expected"
        shown = (
            nb["error"]
            if nb["status"] != "ok"
            else ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in nb["results"].items())
        )
        budget = {True: "ok", False: "OVER", None: "-"}[nb["within_budget"]]
        rows.append(
            (
                nb["name"],
                nb["status"],
                f"{nb['seconds']:.1f}",
                f"{nb['peak_rss_mb'] or 0:.0f}",
                budget,
                claims_text,
                (shown[:90] + "…") if len(shown) > 90 else shown,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(6)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r[:6], widths)) + "  " + r[6] for r in rows]
    ok = sum(nb["status"] == "ok" for nb in report["notebooks"])
    every = tally([c for nb in report["notebooks"] for c in nb.get("claims", [])])
    lines.append(
        f"{ok}/{len(report['notebooks'])} notebooks ok in {report['total_seconds']:.1f} s "
        f"(profile {report['profile']}); claims: {every[HELD]} held, {every[FAILED]} failed, "
        f"{every[NOT_EXPECTED]} not expected here; report: {report['report']}"
    )
    if "matmul_gflops" in report:  # seconds compare across runs only where the machine ran at a like speed
        speed = report["matmul_gflops"]
        stolen = report.get("cpu_stolen")
        lines.append(
            f"machine: {report.get('machine', 'cpu')}; fp32 matmul {speed['before']:.0f} GFLOP/s before the run, "
            f"{speed['after']:.0f} after"
            + (f"; {stolen:.1%} of the CPU time stolen by the hypervisor" if stolen is not None else "")
        )
    rows = wrong_answer_rows(report)
    if rows:
        from .grading.wrong_answers import problems, table  # the grader's modules, only where trials ran

        lines += ["", "wrong answers, scored by each exercise's checks as the grader scores a student:", table(rows)]
        found = problems(rows)
        lines += [f"  PROBLEM {p}" for p in found] or ["every wrong answer and blank earns nothing; every solution all"]
    return "\n".join(lines)


def wrong_answer_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The wrong-answer trials of every notebook that ran them, one row per exercise."""
    return [row for nb in report["notebooks"] for row in nb.get("wrong_answers", [])]


def run_course(
    notebooks: list[Path],
    out_dir: Path,
    profile: str,
    timeout: int,
    inplace: bool = False,
    wrong_answers: Path | None = None,
) -> dict[str, Any]:
    """Execute ``notebooks`` in order and write ``out_dir/course-report.json``; returns the report. ``wrong_answers``:
    a folder of wrong answers to score before each exercise (see ``run_notebook``)."""
    speed_before = machine_speed()
    cpu_before = cpu_times()
    start = time.perf_counter()
    entries = []
    for source in tqdm(notebooks, desc="notebooks", unit="nb", disable=None):
        entry = run_notebook(source, out_dir, profile, timeout, wrong_answers)
        if inplace and entry["status"] == "ok":
            atomic_write_text(source, Path(entry["executed"]).read_text())
        entries.append(entry)
    report_path = out_dir / REPORT_NAME
    report = {
        "profile": profile,
        "notebooks": entries,
        "total_seconds": round(time.perf_counter() - start, 1),
        "matmul_gflops": {"before": speed_before, "after": machine_speed()},
        "cpu_stolen": stolen_share(cpu_before, cpu_times()),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": device_name("cpu"),  # the processor and the threads the notebooks ran on
        "report": shown(report_path),
    }
    atomic_write_text(report_path, json.dumps(report, indent=2))
    return report


def cpu_times() -> list[int] | None:
    """The machine's CPU time so far by kind (Linux's /proc/stat: user, nice, system, idle, iowait, irq, softirq,
    steal, ...), in ticks; None where there is no /proc/stat."""
    try:
        with open("/proc/stat", encoding="utf-8") as f:
            return [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None


def stolen_share(before: list[int] | None, after: list[int] | None) -> float | None:
    """The share of CPU time between two ``cpu_times`` that the hypervisor gave to other machines (steal): time a
    run's seconds include but its yardstick, the best of many matmuls, does not. None where it cannot tell."""
    if not before or not after or len(before) < 8 or len(after) < 8:
        return None
    total = sum(after[:8]) - sum(before[:8])
    return round((after[7] - before[7]) / total, 4) if total > 0 else None


def machine_speed() -> float:
    """This machine's fp32 matmul speed now, in GFLOP/s, in the shape of a MiniLM feed-forward layer ([2048, 384] @
    [384, 1536]): the yardstick that says whether two runs' seconds compare, on a shared machine whose speed drifts."""
    from .bench import matmul_flops  # bench imports this module's functions where it uses them; no cycle at import

    return round(matmul_flops(2048, 384, 1536, seconds=1.0) / 1e9, 1)


def find_notebooks(paths: list[str]) -> list[Path]:
    if paths:
        found = [Path(p) for p in paths]
    else:
        root = repo_root()
        if root is None:
            raise SystemExit("Not inside the course checkout: name the notebooks to run.")
        found = sorted((root / "notebooks").glob("[0-9]*.ipynb"))
    missing = [str(p) for p in found if not p.is_file() or p.suffix != ".ipynb"]
    if missing:
        raise SystemExit(f"Not a notebook file: {', '.join(missing)}")
    if not found:
        raise SystemExit("No notebooks found (looked for notebooks/NN_*.ipynb).")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", help="notebooks to run (default: notebooks/NN_*.ipynb)")
    parser.add_argument("--profile", default=None, help="quick or full (default: $COURSE_PROFILE, else quick on CPU)")
    parser.add_argument("--out", default="build", help="folder for executed copies and the report (default: build)")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds allowed per notebook (default: 1800)")
    parser.add_argument(
        "--inplace", action="store_true", help="write outputs back into the source notebooks when they pass"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="set a recipe field of the profile for this run, e.g. --set finetuning.sst2.lr=3e-5 (repeatable; "
        "the notebooks see it as $COURSE_SET and print it under their setup)",
    )
    args = parser.parse_args(argv)

    try:
        profile = get_profile(args.profile).name
        if args.set:
            with_settings(get_profile(profile), args.set)  # refused here, with the fields accepted, before any kernel
            os.environ[SET_ENV] = "; ".join(args.set)
    except ValueError as err:
        parser.error(str(err))
    if os.environ.get("COURSE_DATA_DIR"):  # kernels start in notebooks/: a relative mirror path must not change meaning
        os.environ["COURSE_DATA_DIR"] = str(Path(os.environ["COURSE_DATA_DIR"]).expanduser().resolve())
    report = run_course(find_notebooks(args.notebooks), Path(args.out), profile, args.timeout, args.inplace)
    print(summary_table(report))
    return 0 if all(nb["status"] == "ok" for nb in report["notebooks"]) else 1


if __name__ == "__main__":
    sys.exit(main())
