"""Student versions of the solution notebooks, made by nbgrader's own preprocessors.

``ClearSolutions`` replaces each solution region by ``raise NotImplementedError()`` (the lines around it, such as the
signature, docstring and hints, stay), ``ClearHiddenTests`` removes the hidden tests, ``ClearOutput`` clears outputs
and execution counts. Around them the course keeps its own checks: the markers are validated first
(:func:`.exercises.find_exercises`, so a malformed one names the notebook, cell and line), a released cell that still
holds a marker is refused, nothing is written unless every notebook releases, and each file is written whole.

Nothing in a student's copy leads back to the solutions (issue 54). The committed notebooks' Colab badges open the
*instructor's* notebooks (solutions, hidden tests, outputs), so the release points each badge at the student copy,
where the instructor publishes the release (:class:`Publication`: by default the course repository's name with
``-students``, branch ``main``, folder ``notebooks``; the command prints it). The prose's relative links (the
instructor appendix, the guides) become links to the public course at its release tag, and a released notebook that
still links to the rubrics (``notebooks/rubrics/``, instructor-only) or to an instructor notebook is refused.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from course_utils.atomic import atomic_write_text

from ..colab_links import BADGE_RE
from ..colab_links import release as course_release
from .exercises import NBGRADER_DELIMITERS, STUB, ExerciseError, find_exercises
from .leaks import leaks, secrets_of

RUBRICS = "rubrics"  # notebooks/rubrics/<lesson>.md: the written answers' rubrics, never released
RELATIVE_LINK = re.compile(r"\]\((?![a-z][a-z0-9+.-]*:|#|/)([^)\s]+)\)")  # [text](relative/path#anchor)


@dataclass(frozen=True)
class Publication:
    """Where the instructor publishes the released notebooks (a GitHub repository, branch and folder): the address
    their Colab badges open. The course itself (``course``, ``tag``) is where the prose's relative links point."""

    repository: str  # owner/name of the students' repository
    branch: str = "main"
    folder: str = "notebooks"
    course: str = ""  # owner/name of the public course repository
    tag: str = ""  # its release tag

    @classmethod
    def default(cls, repository: str | None = None, branch: str = "main", folder: str = "notebooks") -> Publication:
        rel = course_release()
        repository = repository or f"{rel.repository}-students"
        if not re.fullmatch(r"[\w.-]+/[\w.-]+", repository):
            raise ValueError(f"the students' repository is OWNER/NAME on GitHub; got {repository!r}")
        return cls(repository, branch, folder.strip("/"), rel.repository, rel.tag)

    def badge_url(self, notebook: str) -> str:
        where = f"{self.folder}/{notebook}" if self.folder else notebook
        return f"https://colab.research.google.com/github/{self.repository}/blob/{self.branch}/{where}"

    @property
    def address(self) -> str:
        return f"https://github.com/{self.repository}/tree/{self.branch}/{self.folder}".rstrip("/")

    def course_url(self, relative: str) -> str:
        return f"https://github.com/{self.course}/blob/{self.tag}/notebooks/{relative}"


def point_badges(nb: Any, publication: Publication) -> None:
    """Every Colab badge in ``nb``'s Markdown opens the released copy, not the instructor's notebook."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = BADGE_RE.sub(lambda m: publication.badge_url(m.group("nb")), cell.source)


def point_links(nb: Any, publication: Publication, name: str) -> None:
    """Relative links in ``nb``'s Markdown -> the public course at its tag; a link to the rubrics is refused."""
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        for link in RELATIVE_LINK.findall(cell.source):
            if link.split("#")[0].split("/")[0] == RUBRICS:
                raise ExerciseError(
                    f"{name}, cell {index}: links to the instructor-only rubrics ({link}); only a written answer's "
                    "own cell (which the release replaces) may"
                )
        cell.source = RELATIVE_LINK.sub(lambda m: f"]({publication.course_url(m.group(1))})", cell.source)


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


def release_notebook(nb: Any, name: str, publication: Publication | None = None) -> Any:
    """A student copy of the solution notebook ``nb`` (left unchanged), its Colab badges opening the copy as
    ``publication`` (default :meth:`Publication.default`) publishes it; ``name`` is used in error messages."""
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
    point_badges(student, publication or Publication.default())
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


def release(source: Path | str, out: Path | str, publication: Publication | None = None) -> list[Path]:
    """Write the student version of every notebook in ``source`` (a folder or one notebook) into the folder ``out``,
    badges and links pointing where ``publication`` says (default :meth:`Publication.default`).

    Every notebook is read and released in memory first, so a malformed one stops the command before anything is
    written; each file is then written whole (atomically). Refuses to write into the source folder.
    """
    publication = publication or Publication.default()
    source, out = Path(source), Path(out)
    notebooks = notebooks_in(source)
    source_dir = source if source.is_dir() else source.parent
    if out.resolve() == source_dir.resolve():
        raise ValueError(f"the output folder {out} is the source folder: releasing there would overwrite the solutions")
    released, found = [], []
    instructor_badge = course_release().badge_url("")
    for path in notebooks:
        solution = nbformat.read(path, as_version=4)
        student = release_notebook(solution, path.stem, publication)
        point_links(student, publication, path.stem)
        released.append((path, student))
        secrets = secrets_of(solution, path.stem, path.parent, instructor_badge)
        found += leaks({path.name: "\n".join(c.source for c in student.cells)}, secrets)
    if found:  # cannot happen with nbgrader's preprocessors and the links pointed; refuse rather than leak
        raise ExerciseError("the release would show students: " + "; ".join(found[:5]))
    written = []
    for path, student in released:
        target = out / path.name
        atomic_write_text(target, nbformat.writes(student))
        written.append(target)
    return written
