"""A student repository to publish: everything a student needs and nothing that leads to a solution (issue 57).

``python -m course_tools.grading student-repo OUT --students-repo OWNER/NAME`` writes a folder that is a complete
repository, self-contained:

- ``notebooks/``: the released lessons (:mod:`.release`): stubs, no hidden tests, no outputs; their Colab badges open
  them in OWNER/NAME, and their first cell installs ``course_utils`` from OWNER/NAME too;
- ``notebooks/appendix/``: the lessons' appendices (trials, recipes, notes) without the reviews of the lesson and
  its exercises (``## Review``) and without any rubric;
- ``course_utils/`` and a ``pyproject.toml`` that installs it (``pip install -e .``), its address OWNER/NAME;
- a README with the lessons, their Colab badges and a Binder badge, all opening OWNER/NAME, and the setup steps;
- the licence.

Not in it: the instructor's notebooks, ``notebooks/wrong_answers``, ``notebooks/rubrics``, the tools, tests and
guides. A link in a lesson to a file the repository does not hold (a guide, a module of the tools) keeps its text and
loses its address, so nothing points into the instructor's repository. Before anything is written the whole tree is
searched (:mod:`.leaks`) for every solution line, hidden test, rubric line and instructor address; the folder is
built beside ``OUT`` and moved there whole.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import nbformat

from course_utils.paths import repo_root

from ..colab_links import INSTALL_RE
from ..colab_links import release as course_release
from .exercises import ExerciseError
from .leaks import Secret, copied_solutions, leaks, readable, secrets_of
from .release import Publication, notebooks_in, release_notebook

DROPPED_SECTIONS = ("## Review", "## Rubric:")  # an appendix's sections a student does not get


def without_sections(text: str, dropped: tuple[str, ...] = DROPPED_SECTIONS) -> str:
    """A Markdown page without its level-2 sections whose heading starts with one of ``dropped``."""
    sections = re.split(r"(?m)^(?=## )", text)
    return "".join(s for s in sections if not s.startswith(dropped)).rstrip() + "\n"


LINK = re.compile(r"(?<!!)\[([^\]]*)\]\((?![a-z][a-z0-9+.-]*:|#|/)([^)\s]+)\)")  # [text](relative#anchor)


def local_links(text: str, page: Path) -> str:
    """``text`` (the page at ``page``) with its relative links to files beside it kept and any other link's address
    dropped, its text kept."""

    def keep_or_drop(match: re.Match) -> str:
        target = match.group(2).split("#")[0]
        return match.group(0) if not target or (page.parent / target).resolve().is_file() else match.group(1)

    return LINK.sub(keep_or_drop, text)


def readme(publication: Publication, lessons: list[Path]) -> str:
    """The students' README: what the course is, each lesson with its Colab badge, and how to run it locally."""
    binder = f"https://mybinder.org/v2/gh/{publication.repository}/{publication.branch}?urlpath=lab/tree/notebooks"
    rows = [
        f"| [`{p.stem}`](notebooks/{p.name}) | [![Open In Colab](https://colab.research.google.com/assets/"
        f"colab-badge.svg)]({publication.badge_url(p.name)}) |"
        for p in lessons
    ]
    return "\n".join(
        [
            "# BERT and Transfer Learning: the exercises",
            "",
            "The lessons of the open course *BERT and Transfer Learning* with their exercises to do: each exercise "
            "cell raises `NotImplementedError` until you answer it, and the check cell after it tells you what is "
            "wrong in plain words. Hand in the notebooks as your instructor says.",
            "",
            f"[![Binder](https://mybinder.org/badge_logo.svg)]({binder})",
            "",
            "| lesson | open |",
            "|---|---|",
            *rows,
            "",
            "## On Colab",
            "",
            "Open a lesson with its badge and run the cells in order: the first cell installs the course's helpers "
            "(`course_utils`), pinned to this repository. A GPU runtime (Runtime → Change runtime type) runs the "
            "`full` profile; on a CPU the lessons run the `quick` one.",
            "",
            "## On your machine",
            "",
            "Python 3.11 or newer:",
            "",
            "```bash",
            f"git clone https://github.com/{publication.repository}",
            f"cd {publication.repository.split('/')[1]}",
            "python -m venv .venv && . .venv/bin/activate",
            'pip install -e ".[lab]"',
            "jupyter lab notebooks/",
            "```",
            "",
        ]
    )


def pyproject(root: Path, publication: Publication) -> str:
    """The course's package metadata (course_utils only), its address the students' repository; the maintainers'
    settings (pytest, ruff) left out."""
    text = (root / "pyproject.toml").read_text(encoding="utf-8")
    text = text.split("\n[tool.pytest", 1)[0].rstrip() + "\n"
    return re.sub(r'(?m)^Repository = "[^"]*"$', f'Repository = "https://github.com/{publication.repository}"', text)


def tracked(root: Path, folder: str) -> list[Path]:
    """The files of ``folder`` git tracks (a checkout's caches and builds stay behind); all files without git."""
    try:
        listed = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", folder], capture_output=True, check=True, text=True
        ).stdout
        return [root / name for name in listed.split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        return [p for p in (root / folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts]


def build_student_repository(out: Path | str, publication: Publication, root: Path | None = None) -> list[Path]:
    """Write the students' repository into ``out`` (which must not exist or be empty); the files written."""
    root = root or repo_root()
    if root is None:
        raise ExerciseError("the student repository is built from a checkout of the course")
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ExerciseError(f"{out} exists and is not an empty folder: give a new folder for the student repository")
    lessons = notebooks_in(root / "notebooks")
    rel = course_release(root)
    install = f"course-utils @ git+https://github.com/{publication.repository}@{publication.branch}"
    with tempfile.TemporaryDirectory(dir=out.parent if out.parent.exists() else None) as scratch:
        tree = Path(scratch) / "repository"
        (tree / "notebooks" / "appendix").mkdir(parents=True)
        for path in tracked(root, "course_utils"):
            if path.suffix != ".pyc":
                target = tree / path.relative_to(root)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target)
        for page in sorted((root / "notebooks" / "appendix").glob("*.md")):
            (tree / "notebooks" / "appendix" / page.name).write_text(without_sections(page.read_text()))
        shutil.copy2(root / "LICENSE", tree / "LICENSE")
        (tree / "pyproject.toml").write_text(pyproject(root, publication))
        (tree / "README.md").write_text(readme(publication, lessons))
        secrets: dict[str, list[Secret]] = {}
        for path in lessons:
            solution = nbformat.read(path, as_version=4)
            student = release_notebook(solution, path.stem, publication)
            for cell in student.cells:
                if cell.cell_type == "code":
                    cell.source = INSTALL_RE.sub(install, cell.source)
                else:
                    cell.source = local_links(cell.source, tree / "notebooks" / path.name)
            nbformat.write(student, tree / "notebooks" / path.name)
            secrets[path.name] = secrets_of(solution, path.stem, path.parent, rel.badge_url(""))
        for page in (tree / "notebooks" / "appendix").glob("*.md"):
            page.write_text(local_links(page.read_text(), page))
        found = check_tree(tree, secrets, rel.repository)
        if found:
            raise ExerciseError("the student repository would show students: " + "; ".join(found[:5]))
        if out.exists():
            out.rmdir()
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(tree), str(out))
    return sorted(p for p in out.rglob("*") if p.is_file())


def check_tree(tree: Path, secrets: dict[str, list[Secret]], course: str) -> list[str]:
    """What in ``tree`` leads to a solution: a lesson's own secrets in its notebook; any lesson's rubrics and
    addresses in any other text file, and a solution's body (:func:`.leaks.copied_solutions`) in any file but the
    metrics ``course_utils`` re-implements from their published definitions (SQuAD's F1, seqeval, ROUGE: the
    exercises that ask for one forbid calling it); any address in the instructor's repository (``course``)."""
    everyone = [s for found in secrets.values() for s in found]
    general = [s for s in everyone if s.kind in ("rubric", "address")]
    out = []
    for path in sorted(p for p in tree.rglob("*") if p.is_file()):
        if path.suffix in (".parquet", ".safetensors", ".pyc"):
            continue
        name = path.relative_to(tree).as_posix()
        try:
            text = readable(path)
        except UnicodeDecodeError:
            continue
        out += leaks({name: text}, secrets.get(path.name, general) if path.suffix == ".ipynb" else general)
        if path.suffix != ".ipynb" and not name.startswith("course_utils/metrics/"):
            out += copied_solutions(name, text, everyone)
        if f"github.com/{course}" in text or f"/gh/{course}/" in text:
            out.append(f"{name}: links into the instructor's repository github.com/{course}")
    for forbidden in ("notebooks/wrong_answers", "notebooks/rubrics", "tools", "tests", "docs"):
        if (tree / forbidden).exists():
            out.append(f"{forbidden}: the instructor's, not the students'")
    return out
