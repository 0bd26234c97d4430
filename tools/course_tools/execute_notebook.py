"""``python -m course_tools.execute_notebook SOURCE --output OUT --child-report REPORT``: one notebook, own kernel.

The child process that ``course_tools.run_course`` starts for each notebook, so that a notebook's time and peak memory
are its own. It imports Jupyter's packages and nothing of ``course_utils``: the lessons' package pulls in torch,
transformers and datasets (about 2.5 s on 2 cores), which the kernel imports anyway and the child never uses, so a
child that imported them would add those seconds to every notebook's time.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from .jupyter_kernel import this_environment_kernel_manager


def execute(source: Path, output: Path, cell_timeout: int, wrong_answers: Path | None = None) -> dict[str, Any]:
    """Run ``source`` in a fresh kernel of this Python environment; write the executed copy to ``output``, even on
    failure, and return ``{"status", "error", "peak_rss_mb", "cells": [[cell index, seconds, first line], ...]}``.

    ``wrong_answers``: a folder of wrong answers (``course_tools.grading.wrong_answers``); before each exercise its
    blank, wrong answers and solution are scored by its checks in the same kernel, and the report gains
    ``"wrong_answers"``, one row per exercise. That mode imports the grader (and with it course_utils)."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.read(source, as_version=4)
    km = this_environment_kernel_manager()
    peak = {"mb": 0.0}
    cells: list[list] = []  # [cell index, seconds, first source line] per code cell: where a lesson's time goes
    started = {"at": 0.0}

    def note_start(cell: Any = None, **_: Any) -> None:
        if not is_trial(cell):  # a wrong-answer trial's cell counts in the time of the exercise's cell
            started["at"] = time.perf_counter()

    def after_cell(cell: Any = None, cell_index: int = -1, **_: Any) -> None:  # peak memory and the cell's time
        process = getattr(km.provisioner, "process", None)
        if process is not None:
            peak["mb"] = max(peak["mb"], peak_rss_mb(process.pid))
        if cell is not None and not is_trial(cell):
            first = next((line for line in cell.source.splitlines() if line.strip()), "")
            cells.append([cell_index, round(time.perf_counter() - started["at"], 2), first[:80]])

    client = NotebookClient(
        nb,
        km=km,
        timeout=cell_timeout,
        resources={"metadata": {"path": str(source.parent)}},
        record_timing=False,  # no per-cell timestamps: refreshed notebooks diff only where outputs change
        on_cell_execute=note_start,
        on_cell_executed=after_cell,
    )
    status, error = "ok", None
    trials = None
    try:
        if wrong_answers is None:
            client.execute()
        else:
            from .grading.wrong_answers import WrongAnswerTrials  # the grader imports course_utils: only here

            trials = WrongAnswerTrials(nb, source.stem, wrong_answers)
            with client.setup_kernel():
                for index, cell in enumerate(nb.cells):
                    trials.before_cell(client, index)
                    client.execute_cell(cell, index, execution_count=client.code_cells_executed + 1)
    except CellExecutionError as err:
        status, error = "failed", last_line(str(err))
    except Exception as err:  # noqa: BLE001 - a kernel that dies or times out is a failed notebook, not a crash
        status, error = "failed", f"{type(err).__name__}: {err}"[:500]
    _write_whole(output, nbformat.writes(nb))
    entry = {"status": status, "error": error, "peak_rss_mb": round(peak["mb"], 1), "cells": cells}
    if trials is not None:
        entry["wrong_answers"] = trials.summary()
    return entry


def is_trial(cell: Any) -> bool:
    """A cell that ``course_tools.grading.wrong_answers`` runs between the notebook's own (``TRIAL`` there)."""
    return cell is not None and bool(cell.get("metadata", {}).get("course_trial"))


def _write_whole(path: Path, text: str) -> None:
    """``course_utils.atomic.atomic_write_text``, loaded from its file: importing it by name would first run the
    lessons' package's ``__init__`` (torch, transformers; see the module's docstring). It needs the standard library
    alone."""
    package = importlib.util.find_spec("course_utils")  # finds the package without importing it
    spec = importlib.util.spec_from_file_location("_course_atomic", Path(package.origin).parent / "atomic.py")
    atomic = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(atomic)
    atomic.atomic_write_text(path, text)


def peak_rss_mb(pid: int) -> float:
    """Peak resident memory of a process so far: Linux's high-water mark (VmHWM), else its current RSS."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    try:
        import psutil  # a dependency of course_tools, imported where it is used

        return psutil.Process(pid).memory_info().rss / 2**20
    except Exception:  # noqa: BLE001 - the process may be gone
        return 0.0


def last_line(text: str) -> str:
    """The error line of a traceback, without terminal colours."""
    lines = re.sub(r"\x1b\[[0-9;]*m", "", text).strip().splitlines()
    return lines[-1][:500] if lines else "cell error"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", help="the notebook to run")
    parser.add_argument("--output", required=True, help="where the executed copy goes")
    parser.add_argument("--child-report", required=True, help="where this run's status, peak memory and cells go")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds allowed per cell (default: 1800)")
    parser.add_argument("--wrong-answers", default=None, help="also score each exercise's wrong answers from here")
    args = parser.parse_args(argv)
    folder = Path(args.wrong_answers) if args.wrong_answers else None
    entry = execute(Path(args.source), Path(args.output), args.timeout, folder)
    Path(args.child_report).write_text(json.dumps(entry))
    return 0


if __name__ == "__main__":
    sys.exit(main())
