"""Student versions of the solution notebooks: answers replaced by a stub, hidden tests removed, outputs cleared."""
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import nbformat

from ..atomic import atomic_write_text
from .exercises import BEGIN_HIDDEN, BEGIN_SOLUTION, END_HIDDEN, END_SOLUTION, find_exercises, split_hidden, strip_solutions

MARKERS = (BEGIN_SOLUTION, END_SOLUTION, BEGIN_HIDDEN, END_HIDDEN)


def release_notebook(nb: Any, name: str) -> Any:
    """A student copy of the solution notebook ``nb`` (left unchanged); ``name`` is used in error messages."""
    find_exercises(nb, name)  # malformed markers or metadata stop the release with the cell at fault
    student = copy.deepcopy(nb)
    for cell in student.cells:
        if cell.cell_type != "code":
            continue
        if BEGIN_SOLUTION in cell.source:
            cell.source = strip_solutions(cell.source)
        if BEGIN_HIDDEN in cell.source:
            cell.source = split_hidden(cell.source)[0].rstrip("\n")
        cell.outputs = []
        cell.execution_count = None
        cell.metadata.pop("execution", None)
        leftover = [m for m in MARKERS if m in cell.source]
        if leftover:  # a marker inside a string or a comment line with extra text: refuse rather than leak
            raise ValueError(f"{name}: a cell still contains {leftover[0]!r} after release; put each marker on its own line")
    return student


def notebooks_in(source: Path) -> list[Path]:
    """``source`` itself if it is a notebook, else the course notebooks (``NN_*.ipynb``) in the folder."""
    if source.is_file():
        if source.suffix != ".ipynb":
            raise ValueError(f"{source} is not a notebook (.ipynb)")
        return [source]
    if not source.is_dir():
        raise ValueError(f"{source} does not exist; give the folder of solution notebooks (e.g. notebooks/) or one .ipynb")
    found = sorted(p for p in source.glob("*.ipynb") if p.name[:1].isdigit())
    if not found:
        raise ValueError(f"no course notebooks (NN_*.ipynb) in {source}")
    return found


def release(source: Path | str, out: Path | str) -> list[Path]:
    """Write the student version of every notebook in ``source`` (a folder or one notebook) into the folder ``out``.

    Every notebook is read and released in memory first, so a malformed one stops the command before anything is
    written; each file is then written whole (atomically). Refuses to write into the source folder.
    """
    source, out = Path(source), Path(out)
    notebooks = notebooks_in(source)
    source_dir = source if source.is_dir() else source.parent
    if out.resolve() == source_dir.resolve():
        raise ValueError(f"the output folder {out} is the source folder: releasing there would overwrite the solutions")
    released = [(path, release_notebook(nbformat.read(path, as_version=4), path.stem)) for path in notebooks]
    written = []
    for path, student in released:
        target = out / path.name
        atomic_write_text(target, nbformat.writes(student))
        written.append(target)
    return written
