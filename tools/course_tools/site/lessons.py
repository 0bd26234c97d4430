"""A lesson as the website shows it: the executed notebook, released for students (solutions, hidden tests and the
exercise cells' outputs removed) or whole for instructors, with a line of links under its title."""

from __future__ import annotations

import ast
import copy
import importlib
import re
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from course_tools.grading.exercises import nbgrader_meta
from course_tools.grading.release import release_notebook

BADGE = re.compile(r"\[!\[Open In Colab\]\([^)]*\)\]\((?P<url>[^)]+)\)")


@dataclass(frozen=True)
class Helper:
    """A ``course_utils`` object a lesson uses: its dotted name and the kind Sphinx files it under."""

    name: str  # e.g. course_utils.masking.mask_tokens
    module: str  # e.g. course_utils.masking


def _resolve(module: ModuleType, attribute: str) -> Helper | None:
    obj = getattr(module, attribute, None)
    if obj is None:  # a submodule the package does not import itself (``from course_utils import adaptation``)
        try:
            obj = importlib.import_module(f"{module.__name__}.{attribute}")
        except ImportError:
            return None
    if isinstance(obj, ModuleType):
        return Helper(obj.__name__, obj.__name__)
    home = getattr(obj, "__module__", None) or module.__name__
    if not home.startswith("course_utils"):
        return None  # something course_utils merely re-exports from elsewhere
    return Helper(f"{home}.{attribute}", home)


def helpers_used(nb: Any) -> list[Helper]:
    """The ``course_utils`` functions, classes and modules a notebook's code cells import or call through a module
    (``from course_utils.masking import mask_tokens``; ``from course_utils import adaptation`` then
    ``adaptation.sample_texts``), each once, sorted by name."""
    found: dict[str, Helper] = {}
    modules: dict[str, ModuleType] = {}  # names bound to course_utils modules, from any earlier cell
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        source = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in cell.source.splitlines())
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("course_utils"):
                module = importlib.import_module(node.module)
                for alias in node.names:
                    helper = _resolve(module, alias.name)
                    if helper is not None:
                        found[helper.name] = helper
                        if helper.name == helper.module:
                            modules[alias.asname or alias.name] = importlib.import_module(helper.name)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules:
                helper = _resolve(modules[node.value.id], node.attr)
                if helper is not None:
                    found[helper.name] = helper
    return sorted(found.values(), key=lambda h: h.name)


def student_page(executed: Any, name: str, released: Any | None = None) -> Any:
    """The released notebook (nbgrader's stubs in the solution cells, hidden tests gone) with the executed outputs
    put back on every cell that is not part of an exercise; an exercise's cells show no output, which would give
    the answer away. ``released``: the student notebook to show instead of releasing ``executed`` here (a student
    repository's, whose badges and install line point at that repository); it must have the same cells."""
    student = copy.deepcopy(released) if released is not None else release_notebook(executed, name)
    kinds = lambda nb: [c.cell_type for c in nb.cells]  # noqa: E731
    if kinds(student) != kinds(executed):
        raise ValueError(
            f"{name}: the student notebook's cells do not match the executed lesson's ({len(student.cells)} against "
            f"{len(executed.cells)}); release the student repository from the same commit the lessons ran at"
        )
    for released_cell, ran in zip(student.cells, executed.cells, strict=True):
        meta = nbgrader_meta(ran)
        if ran.cell_type == "code" and not meta.get("solution") and not meta.get("grade"):
            released_cell.outputs = copy.deepcopy(ran.get("outputs", []))
            released_cell.execution_count = ran.get("execution_count")
    return student


def with_links(nb: Any, helpers: list[Helper], download: str) -> Any:
    """The notebook with, right under its title, the links a reader wants: Colab (the badge becomes a plain link:
    it is an image on another site, which an offline reader cannot load), the student notebook, and the helpers the
    lesson uses, each linked to its API reference entry (MyST's ``{py:obj}`` role)."""
    nb = copy.deepcopy(nb)
    title = nb.cells[0]
    match = BADGE.search(title.source)
    parts = [f"[Open in Colab]({match.group('url')})"] if match else []
    parts.append(f"{{download}}`Download the student notebook <{download}>`")
    lines = [" · ".join(parts)]
    if helpers:
        used = ", ".join(f"{{py:obj}}`{h.name.removeprefix('course_utils.')} <{h.name}>`" for h in helpers)
        lines.append(f"**Helpers used here** (`course_utils`): {used}")
    heading, _, rest = BADGE.sub("", title.source).partition("\n")
    title.source = "\n\n".join([heading, *lines, rest.strip()])
    return nb
