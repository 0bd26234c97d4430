"""The course's public address and release live in pyproject.toml; badges, first cells and README must agree."""

import shutil

import nbformat
import pytest
from test_registry import ROOT

from course_tools import colab_links


def test_badges_first_cells_readme_and_pyproject_agree():
    assert colab_links.problems(ROOT) == []
    rel = colab_links.release(ROOT)
    assert rel.tag.startswith("v") and rel.repository.count("/") == 1


@pytest.fixture
def checkout(tmp_path):
    """A copy of what the address lives in: pyproject.toml, README.md and the notebooks."""
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks")
    return tmp_path


def test_a_disagreeing_badge_or_first_cell_is_found_and_synced(checkout):
    readme = checkout / "README.md"
    readme.write_text(
        readme.read_text().replace("/blob/v", "/blob/main-was-v", 1).replace("-course/v0", "-course/v9", 1)
    )
    path = checkout / "notebooks" / "01_masking.ipynb"
    nb = nbformat.read(path, as_version=4)
    first = next(c for c in nb.cells if c.cell_type == "code")
    first.source = first.source.replace("@v", "@v9")
    nbformat.write(nb, path)
    found = colab_links.problems(checkout)
    assert any(line.startswith("README.md: badge") for line in found)
    assert any(line.startswith("README.md: Binder badge") for line in found)
    assert (
        "01_masking.ipynb: the first code cell is not the install cell for " + colab_links.release(checkout).tag
        in found
    )
    assert sorted(colab_links.sync(checkout)) == ["README.md", "notebooks/01_masking.ipynb"]
    assert colab_links.problems(checkout) == []


def test_a_new_address_reaches_every_place(checkout):
    pyproject = checkout / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace(
            "github.com/bert-transfer-course/bert-transfer-course", "github.com/a-university/bert-course"
        )
    )
    assert len(colab_links.problems(checkout)) > 11
    colab_links.sync(checkout)
    assert colab_links.problems(checkout) == []
    text = (checkout / "notebooks" / "03c_named_entities.ipynb").read_text()
    assert "git+https://github.com/a-university/bert-course@" in text and "github.com/bert-transfer-course" not in text


def _run_first_cell(course_installed: bool) -> list[tuple[str, str]]:
    """Run the first cell as IPython would (its `%pip` becomes a magic call), recording the magics it calls."""
    import importlib.util

    from IPython.core.inputtransformer2 import TransformerManager

    calls: list[tuple[str, str]] = []

    class Shell:
        def run_line_magic(self, name: str, line: str) -> None:
            calls.append((name, line))

    python = TransformerManager().transform_cell(colab_links.release(ROOT).first_cell())
    real = importlib.util.find_spec
    find = real if course_installed else (lambda name, *a: None if name == "course_utils" else real(name, *a))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(importlib.util, "find_spec", find)
        exec(compile(python, "first cell", "exec"), {"get_ipython": Shell})
    return calls


def test_first_cell_installs_the_release_only_where_the_course_is_missing():
    """In a checkout (course_utils importable) the cell does nothing; on Colab it pip-installs the course pinned to
    this release's tag, quietly (pip's errors still show; its progress does not)."""
    assert _run_first_cell(course_installed=True) == []
    ((magic, line),) = _run_first_cell(course_installed=False)
    release = colab_links.release(ROOT)
    assert magic == "pip" and line.startswith("install --quiet") and f"@{release.tag}" in line


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.stem)
def test_each_notebook_is_stored_as_nbformat_writes_it(path):
    """Sorted keys and nbformat's indentation, so a tool that rewrites a notebook (sync, refresh) changes only what it
    means to. A script that edits metadata with plain json writes keys in its own order: rewrite with nbformat."""
    text = path.read_text(encoding="utf-8")
    assert nbformat.writes(nbformat.reads(text, as_version=4)).rstrip("\n") == text.rstrip("\n"), (
        f'{path.name} is not stored as nbformat writes it; run: python -c "import nbformat as n; '
        f"n.write(n.read('{path.relative_to(ROOT)}', 4), '{path.relative_to(ROOT)}')\""
    )
