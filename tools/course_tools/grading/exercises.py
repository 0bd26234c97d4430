"""The exercises of a solution notebook, read from nbgrader's markers and cell metadata.

A *solution cell* (``nbgrader.solution: true``) holds the answer between ``### BEGIN SOLUTION`` and
``### END SOLUTION``; the *grade cell* after it (``nbgrader.grade: true``, ``points``) holds a visible check and,
between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS``, the tests students do not see. One solution cell and
the grade cell that follows it make one exercise, named after the solution cell's ``grade_id``.

A *written answer* is nbgrader's manually graded answer: a Markdown cell with both ``solution`` and ``grade`` set and
its ``points``. In the instructor's notebook it holds the rubric, or a link to the section of the lesson's instructor
appendix that holds it (``[rubric](appendix/01_masking.md#rubric-ex4_explain)``), which keeps the lesson's prose
short; the release replaces the cell whole with ``YOUR ANSWER HERE``, the student writes there, and the instructor
grades it by hand (:func:`find_written_answers`).

nbgrader, which makes the student versions (:mod:`.release`), reads any line that merely *contains* ``BEGIN SOLUTION``
(and the other three) as a marker, in any cell; the grader reads only a line that is exactly the marker. So that both
always agree, :func:`find_exercises` accepts such a line only as the exact marker, alone on its line, in a cell of
the right kind: solution markers in a solution cell, hidden-test markers in a grade cell.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .rules import Rule, RuleError, broken, read_rules

BEGIN_SOLUTION = "### BEGIN SOLUTION"
END_SOLUTION = "### END SOLUTION"
BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"
END_HIDDEN = "### END HIDDEN TESTS"
STUB = "raise NotImplementedError()"
TEXT_STUB = "YOUR ANSWER HERE"  # what nbgrader's ClearSolutions leaves in a written answer's cell
# What nbgrader looks for (a substring of a line) -> the line the course's markers must then be.
NBGRADER_DELIMITERS = {
    "BEGIN SOLUTION": BEGIN_SOLUTION,
    "END SOLUTION": END_SOLUTION,
    "BEGIN HIDDEN TESTS": BEGIN_HIDDEN,
    "END HIDDEN TESTS": END_HIDDEN,
}


class ExerciseError(ValueError):
    """A notebook whose exercise markers or metadata cannot be read."""


@dataclass(frozen=True)
class Exercise:
    """One graded exercise of a notebook: where its cells are and what it is worth."""

    notebook: str  # the notebook's stem, e.g. "01_masking"
    name: str  # the solution cell's grade_id
    solution_index: int  # index of the solution cell in the solution notebook
    check_index: int  # index of its grade cell
    check_id: str  # the grade cell's grade_id
    points: float
    prompt: str  # the solution cell as released (what the student starts from)
    exports: tuple[str, ...]  # top-level names the reference solution defines
    rules: tuple[Rule, ...] = ()  # what the task forbids, checked on the answer's syntax tree (.rules)

    @property
    def column(self) -> str:
        """The exercise's column in the grade table."""
        return f"{self.notebook}:{self.name}"


@dataclass(frozen=True)
class WrittenAnswer:
    """A question answered in prose and graded by hand: where its cell is, what it is worth, the rubric."""

    notebook: str
    name: str  # the cell's grade_id
    index: int  # index of the answer cell in the solution notebook
    points: float
    question: str  # the Markdown cell just before the answer cell (where the question is asked)
    rubric: str  # the answer cell in the instructor's notebook, or the appendix section it links to

    @property
    def column(self) -> str:
        return f"{self.notebook}:{self.name}"


def is_written_answer(cell: Any) -> bool:
    """nbgrader's manually graded answer: a Markdown cell that is both a solution and a grade cell."""
    meta = nbgrader_meta(cell)
    return cell.get("cell_type") == "markdown" and bool(meta.get("solution")) and bool(meta.get("grade"))


def regions(source: str, begin: str, end: str) -> list[tuple[int, int]]:
    """Line spans ``(begin_line, end_line)`` of each ``begin`` … ``end`` region; clear errors for bad nesting."""
    spans, start = [], None
    for number, line in enumerate(source.splitlines()):
        marker = line.strip()
        if marker == begin:
            if start is not None:
                raise ExerciseError(f"line {number + 1}: {begin!r} inside another {begin!r} region")
            start = number
        elif marker == end:
            if start is None:
                raise ExerciseError(f"line {number + 1}: {end!r} without a {begin!r} before it")
            spans.append((start, number))
            start = None
    if start is not None:
        raise ExerciseError(f"line {start + 1}: {begin!r} is never closed by {end!r}")
    return spans


def strip_solutions(source: str) -> str:
    """The cell as a student receives it: each solution region becomes ``raise NotImplementedError()``.

    Lines outside the markers (the signature, the docstring, prompt comments) stay; the stub takes the indentation
    of the ``### BEGIN SOLUTION`` line.
    """
    lines = source.splitlines()
    for start, stop in reversed(regions(source, BEGIN_SOLUTION, END_SOLUTION)):
        indent = re.match(r"\s*", lines[start]).group(0)
        lines[start : stop + 1] = [indent + STUB]
    return "\n".join(lines)


def split_hidden(source: str) -> tuple[str, str]:
    """``(visible, hidden)``: the grade cell without its hidden tests, and the hidden tests alone."""
    lines = source.splitlines()
    visible, hidden, cut = [], [], 0
    for start, stop in regions(source, BEGIN_HIDDEN, END_HIDDEN):
        visible += lines[cut:start]
        hidden += lines[start + 1 : stop]
        cut = stop + 1
    visible += lines[cut:]
    return "\n".join(visible).rstrip() + ("\n" if visible else ""), "\n".join(hidden)


def without_magics(source: str) -> str:
    """A cell as plain Python: IPython's magics and shell escapes (``%time``, ``!pip``) become blank lines."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())


def defined_names(source: str) -> tuple[str, ...]:
    """Top-level names a cell binds (def, class, assignment, import, for/with targets), in order of appearance."""
    try:
        tree = ast.parse(without_magics(source))
    except SyntaxError:
        return ()
    names: list[str] = []

    class Binder(ast.NodeVisitor):
        def visit_FunctionDef(self, node: ast.AST) -> None:  # the name binds; its body is another scope
            names.append(node.name)

        visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef

        def visit_Lambda(self, node: ast.AST) -> None:
            pass

        visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_Lambda

        def visit_Name(self, node: ast.Name) -> None:
            if isinstance(node.ctx, ast.Store):
                names.append(node.id)

        def visit_alias(self, node: ast.alias) -> None:
            names.append((node.asname or node.name).split(".")[0])

    Binder().visit(tree)
    return tuple(dict.fromkeys(n for n in names if n != "*"))


def nbgrader_meta(cell: Any) -> dict[str, Any]:
    return dict(cell.get("metadata", {}).get("nbgrader", {}) or {})


def check_marker_lines(cell: Any, where: str) -> None:
    """Every line nbgrader would read as a marker is one of the course's markers, alone on its line, in a cell where
    it belongs; ``ExerciseError`` names the line otherwise (a marker inside a string or after code, a marker in a
    Markdown or lesson cell, hidden tests outside a grade cell)."""
    meta = nbgrader_meta(cell)
    for number, line in enumerate(str(cell.get("source", "")).splitlines(), 1):
        found = next((d for d in NBGRADER_DELIMITERS if d in line), None)
        if found is None:
            continue
        marker = NBGRADER_DELIMITERS[found]
        if line.strip() != marker:
            raise ExerciseError(
                f"{where}, line {number}: {line.strip()[:80]!r} contains {found!r} but is not "
                f"the marker {marker!r} alone on its line; nbgrader would read it as one (reword "
                "it, or put the marker on a line of its own)"
            )
        if cell.get("cell_type") != "code":
            raise ExerciseError(
                f"{where}, line {number}: {marker!r} in a {cell.get('cell_type')} cell; markers go in code cells only"
            )
        if "SOLUTION" in found and not meta.get("solution"):
            raise ExerciseError(
                f'{where}, line {number}: has {marker!r} but no nbgrader metadata with "solution": true'
            )
        if "HIDDEN" in found and not meta.get("grade"):
            raise ExerciseError(
                f"{where}, line {number}: has {marker!r} but is not a grade cell (nbgrader metadata "
                'with "grade": true and "points"); hidden tests go in the check after an exercise'
            )


def checked_regions(source: str, begin: str, end: str, where: str) -> list[tuple[int, int]]:
    """:func:`regions`, with ``where`` (notebook and cell) in front of its error."""
    try:
        return regions(source, begin, end)
    except ExerciseError as err:
        raise ExerciseError(f"{where}, {err}") from None


def cell_points(meta: dict[str, Any], where: str) -> float:
    """A grade cell's ``points``, or ``ExerciseError`` naming the cell."""
    points = meta.get("points")
    if not isinstance(points, (int, float)) or isinstance(points, bool) or points < 0:
        grade_id = meta.get("grade_id")
        raise ExerciseError(f'{where}: grade cell {grade_id!r} needs "points": a number ≥ 0, not {points!r}')
    return float(points)


RUBRIC_LINK = re.compile(r"\]\(([^)#\s]+\.md)#([^)\s]+)\)")  # [text](page.md#anchor)


def heading_anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def linked_section(page: Path, anchor: str) -> str:
    """The section of a Markdown page under the heading whose anchor is ``anchor``, up to the next heading of the
    same or a higher level; ``ExerciseError`` names the headings there are when none matches."""
    lines = page.read_text(encoding="utf-8").splitlines()
    headings = [
        (i, len(m.group(1)), m.group(2)) for i, line in enumerate(lines) if (m := re.match(r"(#+)\s+(.*)", line))
    ]
    for n, (start, level, title) in enumerate(headings):
        if heading_anchor(title) == anchor:
            stop = next((i for i, lvl, _ in headings[n + 1 :] if lvl <= level), len(lines))
            return "\n".join(lines[start + 1 : stop]).strip()
    raise ExerciseError(
        f"{page} has no heading with the anchor #{anchor}; its anchors: "
        + ", ".join("#" + heading_anchor(t) for _, _, t in headings)
    )


def rubric_of(answer_cell: str, folder: Path | None) -> str:
    """A written answer's rubric: the appendix section its cell links to (read from ``folder``, the solution
    notebook's folder), else the cell itself. A cell whose linked page is not beside the notebook (a source folder
    copied without the appendices) keeps its link, with a line saying where the rubric should have been."""
    link = RUBRIC_LINK.search(answer_cell)
    if link is None or folder is None:
        return answer_cell
    page = folder / link.group(1)
    if not page.is_file():
        return f"{answer_cell.strip()}\n\n(The rubric is in {link.group(1)}, which is not beside the notebook.)"
    return linked_section(page, link.group(2))


def find_written_answers(nb: Any, notebook: str, folder: Path | None = None) -> list[WrittenAnswer]:
    """The written answers of a solution notebook, in order (the cells are validated by :func:`find_exercises`);
    ``folder`` is where the notebook lies, for rubrics that link to its instructor appendix (:func:`rubric_of`)."""
    find_exercises(nb, notebook)
    answers = []
    for index, cell in enumerate(nb.cells):
        if is_written_answer(cell):
            before = nb.cells[index - 1] if index else None
            question = before.source if before is not None and before.cell_type == "markdown" else ""
            meta = nbgrader_meta(cell)
            rubric = rubric_of(cell.source, folder)
            answers.append(WrittenAnswer(notebook, meta["grade_id"], index, float(meta["points"]), question, rubric))
    return answers


def find_exercises(nb: Any, notebook: str) -> list[Exercise]:
    """The exercises of a solution notebook, in order; ``ExerciseError`` says which cell is malformed and why.

    Written answers (:func:`is_written_answer`) are validated here too (a grade_id of their own, points, and not
    between an exercise and its check) but are not exercises: nobody's code runs for them."""
    exercises: list[Exercise] = []
    pending: tuple[int, str] | None = None
    seen: set[str] = set()
    for index, cell in enumerate(nb.cells):
        meta = nbgrader_meta(cell)
        where = f"{notebook}, cell {index}"
        check_marker_lines(cell, where)
        if not meta.get("solution") and not meta.get("grade"):
            continue
        grade_id = meta.get("grade_id")
        if not grade_id:
            raise ExerciseError(f"{where}: nbgrader cell without a grade_id")
        if grade_id in seen:
            raise ExerciseError(f"{where}: grade_id {grade_id!r} is used twice")
        seen.add(grade_id)
        if cell.cell_type == "markdown" and meta.get("solution") != meta.get("grade"):
            raise ExerciseError(
                f'{where}: a Markdown cell graded by hand needs both "solution": true and "grade": true '
                "(nbgrader's manually graded answer)"
            )
        if is_written_answer(cell):
            cell_points(meta, where)
            if pending is not None:
                raise ExerciseError(
                    f"{where}: written answer {grade_id!r} sits between exercise {pending[1]!r} and its check; "
                    "put it after the check"
                )
            continue
        if cell.cell_type != "code":
            raise ExerciseError(f"{where}: only code cells can be exercises (found a {cell.cell_type} cell)")
        if meta.get("solution"):
            if pending is not None:
                raise ExerciseError(f"{where}: solution cell {pending[1]!r} has no grade cell after it")
            if not checked_regions(cell.source, BEGIN_SOLUTION, END_SOLUTION, where):
                raise ExerciseError(f"{where}: solution cell without {BEGIN_SOLUTION!r} … {END_SOLUTION!r}")
            pending = (index, grade_id)
        if meta.get("grade"):
            points = cell_points(meta, where)
            if pending is None:
                raise ExerciseError(f"{where}: grade cell {grade_id!r} has no solution cell before it")
            checked_regions(cell.source, BEGIN_HIDDEN, END_HIDDEN, where)  # validates the markers
            solution_index, name = pending
            reference = nb.cells[solution_index].source
            try:
                rules = read_rules(nb.cells[solution_index].metadata.get("course_rules"), f"{notebook}, {name}")
            except RuleError as err:
                raise ExerciseError(str(err)) from None
            broken_by_reference = broken(without_magics(reference), rules)
            if broken_by_reference:
                raise ExerciseError(
                    f"{notebook}, {name}: the reference solution breaks its own rule: {broken_by_reference[0]}"
                )
            exercises.append(
                Exercise(
                    notebook,
                    name,
                    solution_index,
                    index,
                    grade_id,
                    float(points),
                    strip_solutions(reference),
                    defined_names(reference),
                    rules,
                )
            )
            pending = None
    if pending is not None:
        raise ExerciseError(f"{notebook}, cell {pending[0]}: solution cell {pending[1]!r} has no grade cell after it")
    return exercises
