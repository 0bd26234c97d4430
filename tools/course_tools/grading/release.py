"""Student versions of the solution notebooks, made by nbgrader's own preprocessors.

``ClearSolutions`` replaces each solution region by ``raise NotImplementedError()`` (the lines around it, such as the
signature, docstring and hints, stay), ``ClearHiddenTests`` removes the hidden tests, ``ClearOutput`` clears outputs
and execution counts. Around them the course keeps its own checks: the markers are validated first
(:func:`.exercises.find_exercises`, so a malformed one names the notebook, cell and line), a released cell that still
holds a marker is refused, nothing is written unless every notebook releases, and each file is written whole.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import nbformat

from course_utils.atomic import atomic_write_text

from .exercises import NBGRADER_DELIMITERS, STUB, ExerciseError, find_exercises

# nbgrader's ClearOutput drops "collapsed" and "scrolled"; the course drops the timing a front end records too.
OUTPUT_METADATA = {"collapsed", "scrolled", "execution"}


def nbgrader_preprocessors() -> list[Any]:
    """nbgrader's ``ClearSolutions`` (its stub set to the course's, without the ``# YOUR CODE HERE`` line),
    ``ClearHiddenTests`` and ``ClearOutput``, in the order ``nbgrader generate_assignment`` runs them."""
    # Imported here, not at the top: only releasing needs nbgrader, and importing it takes about 2 s, which every
    # autograde command (and `import course_tools.grading`) would otherwise pay; where it is missing, the command
    # says how to install it instead of failing to import.
    try:
        from nbgrader.preprocessors import ClearHiddenTests, ClearOutput, ClearSolutions
    except ImportError as err:
        raise ExerciseError(
            f"releasing student notebooks needs nbgrader ({err}); install the course's tools "
            "(`pip install -e ./tools`, as `make env` does) or `pip install 'nbgrader>=0.9'`"
        ) from None
    return [
        ClearSolutions(code_stub={"python": STUB}),
        ClearOutput(remove_metadata_fields=OUTPUT_METADATA),
        ClearHiddenTests(),
    ]


def release_notebook(nb: Any, name: str) -> Any:
    """A student copy of the solution notebook ``nb`` (left unchanged); ``name`` is used in error messages."""
    find_exercises(nb, name)  # malformed markers or metadata stop the release with the notebook, cell and line at fault
    preprocessors = nbgrader_preprocessors()
    student = copy.deepcopy(nb)
    resources: dict[str, Any] = {}
    try:
        for preprocessor in preprocessors:
            student, resources = preprocessor.preprocess(student, resources)
    except (RuntimeError, ValueError) as err:  # nbgrader's own refusals, e.g. a kernel language it has no stub for
        raise ExerciseError(f"{name}: nbgrader could not release it: {err}") from None
    for index, cell in enumerate(student.cells):
        leftover = [d for d in NBGRADER_DELIMITERS if d in cell.source]
        if leftover:  # cannot happen after find_exercises and nbgrader; refuse rather than leak if it ever does
            raise ExerciseError(
                f"{name}, cell {index}: still contains {leftover[0]!r} after release; put each marker on its own line"
            )
    return student


def notebooks_in(source: Path) -> list[Path]:
    """``source`` itself if it is a notebook, else the course notebooks (``NN_*.ipynb``) in the folder."""
    if source.is_file():
        if source.suffix != ".ipynb":
            raise ValueError(f"{source} is not a notebook (.ipynb)")
        return [source]
    if not source.is_dir():
        raise ValueError(
            f"{source} does not exist; give the folder of solution notebooks (e.g. notebooks/) or one .ipynb"
        )
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
