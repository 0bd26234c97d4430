"""The results page: what each lesson proved on the run that built the site, read from one or more course reports
(``build/course-report.json`` from ``make course``, the rehearsal's report, another machine's): per lesson its time
and peak memory against the profile's budget, every claim with its threshold and outcome, and the sources it loaded;
as tables, and as two figures. Two or more reports are shown side by side."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from course_utils.profiles import PROFILES  # noqa: E402


def load_report(path: Path) -> dict[str, Any]:
    """A course report, with a clear error for a file that is not one."""
    try:
        report = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise ValueError(f"{path} is not a readable course report ({err}); `make course` writes one") from None
    if not isinstance(report, dict) or "notebooks" not in report or "profile" not in report:
        raise ValueError(f"{path} is not a course report: it has no 'profile' and 'notebooks' (from run_course)")
    return report


def label(report: dict[str, Any], path: Path) -> str:
    """How a report is named in the tables: its profile, the day it ran and the machine's matmul speed, and the file."""
    speed = (report.get("matmul_gflops") or {}).get("before")
    day = str(report["date"])[:10] if report.get("date") else None
    return (
        f"{report['profile']}"
        + (f", {day}" if day else "")
        + (f", {speed:.0f} GFLOP/s" if speed else "")
        + f" ({path.parent.name}/{path.name})"
    )


# Reports committed with the course (docs/results/): the run behind the published lessons, so that a site built from a
# fresh clone has a results page. `make refresh-notebooks` writes quick.json; the rehearsal's is copied by hand.
COMMITTED = Path("docs") / "results"
BUILT = (Path("build") / "course-report.json", Path("build") / "rehearsal" / "course-report.json")


def default_reports(root: Path) -> tuple[list[Path], bool]:
    """The reports a site shows when none is named: this checkout's own runs (``make course``, ``make rehearse``) where
    any exists, else those committed with the course -> (paths, whether they are the committed ones)."""
    built = [root / p for p in BUILT if (root / p).is_file()]
    if built:
        return built, False
    return sorted((root / COMMITTED).glob("*.json")), True


def budget(report: dict[str, Any], lesson: str) -> tuple[float | None, float | None]:
    """(seconds, peak MB) the profile allows the lesson, or None where the profile sets none."""
    profile = PROFILES.get(report["profile"])
    if profile is None:
        return None, None
    return profile.seconds_budget_for(lesson), profile.peak_rss_mb_budget


def _number(value: Any) -> str:
    if isinstance(value, float):
        return "∞" if math.isinf(value) else f"{value:.4g}"
    return str(value)


def claims_table(claims: list[dict[str, Any]]) -> list[str]:
    rows = ["| claim | value | test | outcome |", "|---|---|---|---|"]
    for c in claims:
        test = f"{c.get('op', '')} {_number(c.get('threshold'))}"
        name = str(c["name"]).replace("|", "\\|")
        rows.append(f"| {name} | {_number(c.get('value'))} | {test} | {c.get('outcome', '')} |")
    return rows


def _grouped_bars(lessons: list[str], count: int, draw, ylabel: str, title: str, path: Path) -> None:
    """One figure of bars grouped by lesson, one bar per report: ``draw(ax, k, xs, width)`` draws report ``k``."""
    width = 0.8 / count
    fig, ax = plt.subplots(figsize=(8, 3.2))
    for k in range(count):
        draw(ax, k, [i + k * width for i in range(len(lessons))], width)
    ax.set_xticks([i + width * (count - 1) / 2 for i in range(len(lessons))], lessons, rotation=35, ha="right")
    ax.set(ylabel=ylabel, title=title)
    ax.set_ylim(0, ax.get_ylim()[1] * (1.15 + 0.2 * count))  # headroom: the legend (a row per report) clears the bars
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def figures(reports: list[tuple[str, dict[str, Any]]], folder: Path) -> list[str]:
    """Two PNGs in ``folder``: seconds per lesson against the budget, and claims held per lesson; their names."""
    folder.mkdir(parents=True, exist_ok=True)
    lessons = sorted({nb["name"] for _, r in reports for nb in r["notebooks"]})

    def time(ax, k, xs, width):
        name, report = reports[k]
        seconds = {nb["name"]: nb["seconds"] for nb in report["notebooks"]}
        ax.bar(xs, [seconds.get(n, 0) for n in lessons], width, label=name)
        budgets = [budget(report, n)[0] for n in lessons]
        ax.scatter([x for x, b in zip(xs, budgets) if b], [b for b in budgets if b], marker="_", s=200, color="black")

    def claims(ax, k, xs, width):
        name, report = reports[k]
        held = {nb["name"]: Counter(c.get("outcome") for c in nb.get("claims", [])) for nb in report["notebooks"]}
        ok = [held.get(n, Counter())["held"] for n in lessons]
        failed = [held.get(n, Counter())["failed"] for n in lessons]
        ax.bar(xs, ok, width, label=f"held · {name}")
        ax.bar(xs, failed, width, bottom=ok, color="crimson", label=f"failed · {name}" if any(failed) else None)

    title = "Time per lesson (bars) against its budget (black marks)"
    _grouped_bars(lessons, len(reports), time, "seconds", title, folder / "time.png")
    _grouped_bars(lessons, len(reports), claims, "claims", "Claims per lesson", folder / "claims.png")
    return ["time.png", "claims.png"]


def results_page(paths: list[Path], folder: Path, committed: bool = False) -> str:
    """MyST Markdown of the results page; its figures are written into ``folder`` (the page's own folder).
    ``committed``: the reports are those committed with the course, not a run of this checkout."""
    if not paths:
        return (
            "# Results\n\nNo course report was given when this site was built. Run `make course` (it writes "
            "`build/course-report.json`), then `make site`.\n"
        )
    reports = [(label(report, p), report) for p, report in ((p, load_report(p)) for p in paths)]
    lines = ["# Results", ""]
    lines += [
        "What each lesson proved on the run behind this site: its time and peak memory against the profile's "
        "budget, and every claim it checked. Reports: " + "; ".join(name for name, _ in reports) + ".",
        "",
    ]
    machines = [(name, r["machine"]) for name, r in reports if r.get("machine")]
    if len(reports) == 1 and machines:
        lines += [f"Machine: {machines[0][1]}.", ""]
    elif machines:
        lines += ["Machines: " + "; ".join(f"{machine} ({name})" for name, machine in machines) + ".", ""]
    if committed:
        lines += [
            "These are the reports committed with the course (`docs/results/`), not a run of this checkout: "
            "`make course` (and `make rehearse`) write this machine's, and `make site` shows them instead.",
            "",
        ]
    for png in figures(reports, folder):
        lines += [f"![{png[:-4]}]({png})", ""]
    header = "| lesson | " + " | ".join(f"{name}: seconds / budget · peak MB · claims held" for name, _ in reports)
    lines += [header + " |", "|---|" + "---|" * len(reports)]
    lessons = sorted({nb["name"] for _, r in reports for nb in r["notebooks"]})
    for lesson in lessons:
        cells = []
        for _, report in reports:
            nb = next((n for n in report["notebooks"] if n["name"] == lesson), None)
            if nb is None:
                cells.append("not run")
                continue
            seconds, _ = budget(report, lesson)
            tally = Counter(c.get("outcome") for c in nb.get("claims", []))
            peak = f"{nb['peak_rss_mb']:.0f}" if nb.get("peak_rss_mb") else "?"
            over = " **over**" if nb.get("within_budget") is False else ""
            cells.append(
                f"{nb['status']}, {nb['seconds']:.0f} s / {seconds:.0f} s{over} · {peak} MB · "
                f"{tally['held']} of {sum(tally.values())}"
                if seconds
                else f"{nb['status']}, {nb['seconds']:.0f} s · {peak} MB · {tally['held']} of {sum(tally.values())}"
            )
        lines.append(f"| {lesson} | " + " | ".join(cells) + " |")
    lines.append("")
    for name, report in reports:
        lines += [f"## {name}", ""]
        for nb in report["notebooks"]:
            lines += [f"### {nb['name']}", ""]
            if nb.get("error"):
                lines += [f"Failed: {nb['error']}", ""]
            if nb.get("claims"):
                lines += claims_table(nb["claims"]) + [""]
            if nb.get("sources"):
                lines += ["Loaded: " + "; ".join(f"{s['name']} ({s['source']})" for s in nb["sources"]), ""]
    return "\n".join(lines)
