"""The course's public address and release live in pyproject.toml; badges, first cells and README must agree."""
import shutil

import nbformat
import pytest

from course_utils import address

from test_registry import ROOT


def test_badges_first_cells_readme_and_pyproject_agree():
    assert address.problems(ROOT) == []
    rel = address.release(ROOT)
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
    readme.write_text(readme.read_text().replace("/blob/v", "/blob/main-was-v", 1))
    path = checkout / "notebooks" / "01_masking.ipynb"
    nb = nbformat.read(path, as_version=4)
    first = next(c for c in nb.cells if c.cell_type == "code")
    first.source = first.source.replace("@v", "@v9")
    nbformat.write(nb, path)
    found = address.problems(checkout)
    assert any(line.startswith("README.md: badge") for line in found)
    assert "01_masking.ipynb: the first code cell is not the install cell for " + address.release(checkout).tag in found
    assert sorted(address.sync(checkout)) == ["README.md", "notebooks/01_masking.ipynb"]
    assert address.problems(checkout) == []


def test_a_new_address_reaches_every_place(checkout):
    pyproject = checkout / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("github.com/bert-transfer-course/bert-transfer-course",
                                                       "github.com/a-university/bert-course"))
    assert len(address.problems(checkout)) > 11
    address.sync(checkout)
    assert address.problems(checkout) == []
    text = (checkout / "notebooks" / "03c_named_entities.ipynb").read_text()
    assert "git+https://github.com/a-university/bert-course@" in text and "github.com/bert-transfer-course" not in text


def test_first_cell_installs_only_where_the_course_is_missing():
    cell = address.release(ROOT).first_cell()
    assert 'if importlib.util.find_spec("course_utils") is None:' in cell and "%pip install" in cell
    assert "--quiet" in cell        # pip's errors still show; its progress does not


def test_first_cell_is_valid_ipython():
    """The `%pip` line sits inside an `if`: IPython must turn it into a magic call there, not a syntax error."""
    from IPython.core.inputtransformer2 import TransformerManager

    python = TransformerManager().transform_cell(address.release(ROOT).first_cell())
    compile(python, "first cell", "exec")
    assert "    get_ipython().run_line_magic('pip', 'install --quiet \"course-utils @ git+https://github.com/" in python
