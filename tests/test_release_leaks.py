"""Nothing in a student's release leads to a solution (issue 54): the release points its Colab badges at the
students' copies and its links at the public course, and a search for every solution line, hidden test, rubric and
instructor address finds none of them in it. The students' site is searched the same way in tests/test_site.py."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from course_tools.colab_links import release as course_release
from course_tools.grading.exercises import ExerciseError
from course_tools.grading.leaks import leaks, secrets_of
from course_tools.grading.release import Publication, release

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
LESSON = NOTEBOOKS / "01_masking.ipynb"


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("release")
    release(NOTEBOOKS, out, Publication.default("a-school/bert-2027", "spring", "lessons"))
    return out


def _text(path: Path) -> str:
    return "\n".join(cell.source for cell in nbformat.read(path, as_version=4).cells)


def _secrets(path: Path):
    return secrets_of(nbformat.read(path, as_version=4), path.stem, path.parent, course_release().badge_url(""))


def test_the_badges_open_the_students_copies_and_the_links_go_to_the_public_course(released):
    text = _text(released / LESSON.name)
    assert "colab.research.google.com/github/a-school/bert-2027/blob/spring/lessons/01_masking.ipynb" in text
    assert course_release().badge_url("01_masking.ipynb") not in text
    rel = course_release()
    assert f"https://github.com/{rel.repository}/blob/{rel.tag}/notebooks/appendix/01_masking.md" in text
    assert "](appendix/" not in text and "](rubrics/" not in text


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("[0-9]*.ipynb")), ids=lambda p: p.stem)
def test_a_release_holds_no_solution_hidden_test_rubric_or_instructor_address(released, path):
    secrets = _secrets(path)
    assert {s.kind for s in secrets} >= {"solution", "hidden test", "address"}
    assert leaks({path.name: _text(released / path.name)}, secrets) == []


def test_the_search_finds_each_kind_of_secret_planted_in_a_release(released):
    secrets = _secrets(LESSON)
    clean = _text(released / LESSON.name)
    for kind in ("solution", "hidden test", "rubric", "address"):
        planted = next(s for s in secrets if s.kind == kind)
        found = leaks({"planted": clean + "\n    " + planted.text + "\n"}, secrets)
        assert any(f"{kind} of" in f for f in found), (kind, planted.text)


def test_a_released_notebook_may_not_link_to_the_rubrics(tmp_path):
    nb = nbformat.read(LESSON, as_version=4)
    prose = next(c for c in nb.cells if c.cell_type == "markdown" and not c.metadata.get("nbgrader"))
    prose.source += "\n\nSee [the rubric](rubrics/01_masking.md#rubric-ex4_explain)."
    nbformat.write(nb, tmp_path / LESSON.name)
    with pytest.raises(ExerciseError, match="instructor-only rubrics"):
        release(tmp_path / LESSON.name, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_students_repository_must_be_owner_and_name():
    with pytest.raises(ValueError, match="OWNER/NAME"):
        Publication.default("just-a-name")
