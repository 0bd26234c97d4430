"""The student repository an instructor publishes (issue 57): complete, self-contained, and with nothing in it that
leads to a solution: released lessons, appendices without reviews or rubrics, course_utils, a README and package
metadata pointing at the students' repository; no instructor notebook, wrong answer, rubric, tool, test or guide."""

from __future__ import annotations

import tomllib
from pathlib import Path

import nbformat
import pytest

from course_tools.colab_links import release as course_release
from course_tools.grading.exercises import ExerciseError
from course_tools.grading.release import Publication
from course_tools.grading.student_repository import build_student_repository, check_tree, local_links

ROOT = Path(__file__).resolve().parent.parent
PUBLICATION = Publication.default("a-school/bert-2027", "spring", "notebooks")


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("students") / "bert-2027"
    build_student_repository(out, PUBLICATION)
    return out


def test_it_holds_what_a_student_needs_and_nothing_of_the_instructor_s(tree):
    lessons = sorted(p.name for p in (ROOT / "notebooks").glob("[0-9]*.ipynb"))
    assert sorted(p.name for p in (tree / "notebooks").glob("*.ipynb")) == lessons
    assert (tree / "notebooks" / "appendix" / "01_masking.md").is_file()
    assert (tree / "course_utils" / "__init__.py").is_file() and (tree / "LICENSE").is_file()
    for absent in ("notebooks/wrong_answers", "notebooks/rubrics", "tools", "tests", "docs", "Makefile"):
        assert not (tree / absent).exists(), absent
    appendix = (tree / "notebooks" / "appendix" / "01_masking.md").read_text()
    assert "## Review" not in appendix and "## Rubric" not in appendix


def test_its_badges_install_and_metadata_point_at_the_students_repository(tree):
    readme = (tree / "README.md").read_text()
    assert "colab.research.google.com/github/a-school/bert-2027/blob/spring/notebooks/01_masking.ipynb" in readme
    assert "mybinder.org/v2/gh/a-school/bert-2027/spring" in readme
    first = nbformat.read(tree / "notebooks" / "01_masking.ipynb", 4).cells[1].source
    assert "course-utils @ git+https://github.com/a-school/bert-2027@spring" in first
    meta = tomllib.loads((tree / "pyproject.toml").read_text())
    assert meta["project"]["urls"]["Repository"] == "https://github.com/a-school/bert-2027"
    assert meta["project"]["name"] == "course-utils" and "pytest" not in meta.get("tool", {})


def test_a_search_of_the_whole_tree_finds_no_solution_rubric_or_link_into_the_course(tree):
    assert check_tree(tree, {}, course_release().repository) == []
    text = "\n".join(p.read_text(errors="replace") for p in tree.rglob("*.md"))
    cells = nbformat.read(tree / "notebooks" / "01_masking.ipynb", 4).cells
    assert sum("raise NotImplementedError()" in c.source for c in cells) >= 4  # each exercise's stub
    assert f"github.com/{course_release().repository}" not in text


def test_the_search_finds_a_solution_s_body_copied_into_a_module_and_a_link_into_the_course(tree, tmp_path):
    from course_tools.grading.leaks import secrets_of

    lesson = ROOT / "notebooks" / "01_masking.ipynb"
    secrets = secrets_of(nbformat.read(lesson, 4), lesson.stem, lesson.parent, course_release().badge_url(""))
    body = [s.text for s in secrets if s.kind == "solution" and s.where.endswith(":ex3_corruption_shares")]
    assert len(body) >= 3
    (tmp_path / "helper.py").write_text("def shares():\n" + "".join(f"    {line}\n" for line in body))
    (tmp_path / "notes.md").write_text(f"see https://github.com/{course_release().repository}/blob/main/x")
    found = check_tree(tmp_path, {lesson.name: secrets}, course_release().repository)
    assert any("helper.py" in f and "ex3_corruption_shares" in f for f in found), found
    assert any("notes.md: links into the instructor's repository" in f for f in found), found


def test_a_link_to_a_file_the_repository_lacks_keeps_its_text_only(tmp_path):
    (tmp_path / "appendix").mkdir()
    (tmp_path / "appendix" / "a.md").write_text("")
    page = tmp_path / "lesson.md"
    text = "[kept](appendix/a.md#x) [guide](../docs/guide/x.md) [web](https://e.org) [MASK] ![img](missing.png)"
    assert local_links(text, page) == "[kept](appendix/a.md#x) guide [web](https://e.org) [MASK] ![img](missing.png)"


def test_it_refuses_a_folder_that_is_not_empty(tmp_path):
    (tmp_path / "old.txt").write_text("x")
    with pytest.raises(ExerciseError, match="not an empty folder"):
        build_student_repository(tmp_path, PUBLICATION)


def test_the_students_site_builds_from_it_with_the_lessons_outputs_and_no_way_back_to_the_course(tree, tmp_path):
    """`python -m course_tools.site build --from TREE`: the sources Sphinx renders (lessons, downloads, appendices,
    home page) come from the student repository, with the executed lessons' outputs outside the exercises."""
    from course_tools.grading.leaks import secrets_of
    from course_tools.site.build import copy_pages, index_page, write_lessons

    source = tmp_path / "src"
    write_lessons(ROOT, source, ROOT / "notebooks", solutions=False, students=tree)
    copy_pages(tree, source, "https://github.com/a-school/bert-2027", "spring", solutions=False)
    (source / "index.md").write_text(index_page(tree, source))
    page = nbformat.read(source / "notebooks" / "01_masking.ipynb", 4)
    code = [c for c in page.cells if c.cell_type == "code"]
    assert "course-utils @ git+https://github.com/a-school/bert-2027@spring" in code[0].source
    assert "colab.research.google.com/github/a-school/bert-2027/blob/spring/notebooks/01_masking.ipynb" in (
        page.cells[0].source
    )
    assert sum(bool(c.outputs) for c in code) > len(code) // 2, "the lesson's outputs are shown"
    download = nbformat.read(source / "downloads" / "01_masking.ipynb", 4)
    assert all(not c.outputs for c in download.cells if c.cell_type == "code")
    secrets = {
        p.name: secrets_of(nbformat.read(p, 4), p.stem, p.parent, course_release().badge_url(""))
        for p in sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
    }
    assert check_tree(source, secrets, course_release().repository) == []
    assert "raises `NotImplementedError` until you answer it" in (source / "index.md").read_text()  # their README


def test_the_students_site_refuses_a_repository_released_from_other_lessons(tree, tmp_path):
    from course_tools.site.build import write_lessons

    other = tmp_path / "other"
    (other / "notebooks").mkdir(parents=True)
    nb = nbformat.read(tree / "notebooks" / "01_masking.ipynb", 4)
    nb.cells = nb.cells[:-1]
    nbformat.write(nb, other / "notebooks" / "01_masking.ipynb")
    with pytest.raises(ValueError, match="01_masking: the student notebook's cells do not match"):
        write_lessons(ROOT, tmp_path / "src", ROOT / "notebooks", solutions=False, students=other)
