"""What must never reach a student, and a search for it in what does (issue 54).

The secrets of a solution notebook are the lines of its solutions and hidden tests (those that appear nowhere else in
the lesson, and are long enough to identify: a bare ``return x`` is no secret), the rubrics of its written answers,
and the addresses of the instructor's notebooks and rubrics. :func:`leaks` finds any of them in the texts of a release
or of the students' site; the release command runs it on what it is about to write, and the tests run it on a release
of the course and on its students' site.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .exercises import BEGIN_HIDDEN, BEGIN_SOLUTION, END_HIDDEN, END_SOLUTION, find_written_answers, regions

SHORTEST = 24  # characters: a shorter line (``return out``, ``assert ok``) could be anyone's
RUBRIC_FOLDER = "rubrics"


@dataclass(frozen=True)
class Secret:
    kind: str  # "solution", "hidden test", "rubric" or "address"
    where: str  # the notebook (and exercise) it belongs to
    text: str


def _lines(source: str, begin: str, end: str) -> list[str]:
    lines = source.split("\n")
    return [lines[i].strip() for start, stop in regions(source, begin, end) for i in range(start + 1, stop)]


def _identifying(line: str, public: set[str]) -> bool:
    return len(line) >= SHORTEST and not line.startswith("#") and line not in public


def secrets_of(nb: Any, notebook: str, folder: Path | None, instructor_badge: str) -> list[Secret]:
    """The secrets of the solution notebook ``nb`` (``folder``: where it lies, for its rubrics' pages;
    ``instructor_badge``: the start of the Colab address of the committed, instructor notebooks)."""
    hidden_lines, solution_lines, public = [], [], set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            public |= {line.strip() for line in cell.source.split("\n")}
            continue
        solution = set(_lines(cell.source, BEGIN_SOLUTION, END_SOLUTION))
        hidden = set(_lines(cell.source, BEGIN_HIDDEN, END_HIDDEN))
        exercise = f"{notebook}:{cell.metadata.get('nbgrader', {}).get('grade_id', '?')}"
        solution_lines += [(exercise, line) for line in sorted(solution)]
        hidden_lines += [(exercise, line) for line in sorted(hidden)]
        public |= {line.strip() for line in cell.source.split("\n")} - solution - hidden
    found = [Secret("solution", where, line) for where, line in solution_lines if _identifying(line, public)]
    found += [Secret("hidden test", where, line) for where, line in hidden_lines if _identifying(line, public)]
    for answer in find_written_answers(nb, notebook, folder):
        found += [
            Secret("rubric", f"{notebook}:{answer.name}", line.strip())
            for line in answer.rubric.split("\n")
            if len(line.strip()) >= SHORTEST
        ]
    found.append(Secret("address", notebook, f"{instructor_badge}{notebook}.ipynb"))
    found.append(Secret("address", notebook, f"{RUBRIC_FOLDER}/{notebook}.md"))
    return found


def readable(path: Path) -> str:
    """A file's text as a reader sees it: a notebook's cell sources, an HTML page without its tags (code that syntax
    highlighting split into spans reads whole again), anything else as it is."""
    if path.suffix == ".ipynb":
        import nbformat

        return "\n".join(cell.source for cell in nbformat.read(path, as_version=4).cells)
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".html":
        text = html.unescape(re.sub(r"<[^>]+>", "", text))
    return text


def copied_solutions(name: str, text: str, secrets: list[Secret], least: int = 3) -> list[str]:
    """The exercises whose solution ``text`` (a module, say) reproduces: at least ``least`` of its identifying lines,
    and at least half of them. Single lines (``return 2 * precision * recall / (precision + recall)``) are anyone's;
    a solution's body is not."""
    lines = {_normal(line) for line in text.split("\n")}
    by_exercise: dict[str, list[str]] = {}
    for secret in secrets:
        if secret.kind == "solution":
            by_exercise.setdefault(secret.where, []).append(_normal(secret.text))
    out = []
    for where, body in by_exercise.items():
        shared = [line for line in body if line in lines]
        if len(shared) >= least and 2 * len(shared) >= len(body):
            out.append(f"{name}: {len(shared)} of the {len(body)} lines of {where}'s solution, e.g. {shared[0][:50]}")
    return out


def _normal(line: str) -> str:
    return re.sub(r"\s+", " ", line.strip())


def leaks(texts: dict[str, str], secrets: list[Secret]) -> list[str]:
    """Each secret found in ``texts`` (name -> text), as "<name>: <kind> of <where>: <the start of it>". A solution or
    hidden-test line is found where a line of the text is that line; a rubric line or an address, anywhere."""
    out = []
    for name, text in texts.items():
        lines = {_normal(line) for line in text.split("\n")}
        flat = _normal(text)
        for secret in secrets:
            code = secret.kind in ("solution", "hidden test")
            if (_normal(secret.text) in lines) if code else (_normal(secret.text) in flat):
                out.append(f"{name}: {secret.kind} of {secret.where}: {secret.text[:60]}")
    return out
