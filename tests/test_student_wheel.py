"""The wheel a student installs (a notebook's first cell on Colab) holds what the lessons import, and nothing else."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "course_utils"


def notebook_imports(notebook: Path) -> set[str]:
    """The ``course_utils`` modules a notebook's code cells import (``from course_utils.x import y``, ``from
    course_utils import x`` where x is a module, ``import course_utils.x``)."""
    found: set[str] = set()
    for cell in json.loads(notebook.read_text())["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        # IPython's magics (%pip) and shell lines are not Python: each becomes a `pass` at its indentation
        code = "\n".join(
            line[: len(line) - len(line.lstrip())] + "pass" if line.lstrip().startswith(("%", "!")) else line
            for line in source.splitlines()
        )
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == PACKAGE:
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names if alias.name.split(".")[0] == PACKAGE)
    return found


def module_imports(name: str, path: Path) -> set[str]:
    """The modules one module of the package imports, relative imports resolved."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def reached_from_notebooks(modules: dict[str, Path]) -> set[str]:
    """Every module of the package that some notebook reaches, directly or through other modules (a module's parent
    packages are imported with it)."""
    todo = set().union(*(notebook_imports(nb) for nb in (ROOT / "notebooks").glob("*.ipynb")))
    reached: set[str] = set()
    while todo:
        name = todo.pop()
        parts = name.split(".")
        for i in range(1, len(parts) + 1):
            prefix = ".".join(parts[:i])
            if prefix in modules and prefix not in reached:
                reached.add(prefix)
                todo |= module_imports(prefix, modules[prefix])
    return reached


def module_name(path: str) -> str:
    parts = path[: -len(".py")].split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The student wheel, built from a copy of what its build reads (so the checkout gets no build folders)."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / PACKAGE, source / PACKAGE, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", str(out), "."],
        cwd=source,
        check=True,
        capture_output=True,
        text=True,
    )
    (built,) = out.glob("course_utils-*.whl")
    return built


@pytest.mark.slow
def test_the_student_wheel_carries_only_modules_the_lessons_reach(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert not [n for n in names if n.startswith("course_tools")], "the maintainers' tools are not for students"
    # evaluate loads the metric scripts under metrics/<name>/ by path: they are data, not modules of the package
    in_wheel = {module_name(n) for n in names if n.endswith(".py") and not re.match(r"course_utils/metrics/\w+/", n)}
    modules = {
        module_name(p.relative_to(ROOT).as_posix()): p
        for p in (ROOT / PACKAGE).rglob("*.py")
        if not re.match(r"course_utils/metrics/\w+/", p.relative_to(ROOT).as_posix())
    }
    assert in_wheel == set(modules), "the wheel and the package's source differ"
    unreached = in_wheel - reached_from_notebooks(modules)
    assert unreached == set(), f"modules no notebook reaches ship to every student: {sorted(unreached)}"


@pytest.mark.slow
def test_the_student_wheel_is_the_size_the_maintainers_guide_says(wheel):
    guide = ROOT / "docs" / "guide" / "maintainers.md"
    stated = re.search(r"student wheel[^.]*?about ([\d.]+) MB", guide.read_text())
    assert stated, f"{guide.name} states the student wheel's size ('student wheel ... about N MB')"
    size_mb = wheel.stat().st_size / 1e6
    assert abs(size_mb - float(stated.group(1))) <= 0.05 * float(stated.group(1)), f"the wheel is {size_mb:.1f} MB"


def test_the_reach_finder_follows_imports_through_modules(tmp_path):
    """The check above is only as good as its import walk: a module reached only through another counts."""
    (tmp_path / "a.py").write_text("from .b import f\n")
    (tmp_path / "b.py").write_text("import os\n")
    assert module_imports("course_utils.a", tmp_path / "a.py") >= {"course_utils.b", "course_utils.b.f"}
