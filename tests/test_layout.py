"""The packages' shape. Their layers are import-linter's contracts (.importlinter, checked by `make lint`); these tests
check what the contracts cannot: that every module of the lessons' package is placed in a layer, and what importing
the package loads."""

from __future__ import annotations

import configparser
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "course_utils"


def test_every_module_of_the_lessons_package_sits_in_a_layer():
    """A module left out of the layers contract could import upwards unseen: a new module must be placed."""
    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    layers = config["importlinter:contract:layers"]["layers"]
    placed = {name.strip() for line in layers.splitlines() for name in re.split(r"[:|]", line) if name.strip()}
    modules = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    modules |= {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert modules - placed == set(), "place these modules in a layer of .importlinter"
    assert placed - modules == set(), "these layers name modules that do not exist"


def test_the_package_does_not_import_the_modules_run_as_commands():
    """``python -m course_tools.X`` runs X as ``__main__``; had something already imported X, its module would exist
    twice (Python warns: 'found in sys.modules ... this may result in unpredictable behaviour')."""
    text = (ROOT / "Makefile").read_text() + (ROOT / "README.md").read_text()
    commands = set(re.findall(r"-m (course_(?:utils|tools)\.[a-z_]+)", text))
    assert {"course_tools.run_course", "course_tools.rehearsal", "course_tools.build_course_bert"} <= commands
    script = "import course_utils, course_tools, sys; print(' '.join(sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT)
    assert not commands & set(loaded.stdout.split())


def test_importing_the_package_leaves_the_course_bert_builder_and_training_stack_unloaded():
    """``import course_utils`` registers the course checkpoint without importing its builder: lesson 02's pretraining
    loop pulls in transformers' BERT modelling code and accelerate, which every command would otherwise load before
    doing anything."""
    script = (
        "import course_utils, sys; from course_utils.resources import OFFLINE_CHECKPOINTS; "
        "from course_utils.profiles import COURSE_CHECKPOINT; "
        "print(COURSE_CHECKPOINT in OFFLINE_CHECKPOINTS, ' '.join(sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT)
    registered, *loaded = out.stdout.split()
    assert registered == "True"
    heavy = {
        "course_utils.course_bert",
        "course_utils.english_mlm",
        "course_utils.pretraining",
        "accelerate",
        "transformers.models.bert.modeling_bert",
    }
    assert not heavy & set(loaded), f"import course_utils loaded {sorted(heavy & set(loaded))}"


def _lesson_modules() -> dict[str, set[str]]:
    """Lesson number (``03a``) -> the ``course_utils`` modules its notebook imports by name."""
    from test_student_wheel import notebook_imports

    names = {p.stem for p in PACKAGE.glob("*.py")} | {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    return {
        nb.name.split("_")[0]: {
            m.split(".")[1] for m in notebook_imports(nb) if m.count(".") and m.split(".")[1] in names
        }
        for nb in sorted((ROOT / "notebooks").glob("*.ipynb"))
    }


def test_each_notebook_names_its_helpers_and_each_helper_its_lessons():
    """The links the site's API reference draws both ways: a lesson's introduction lists the modules it imports, and
    a module's docstring names every lesson that imports it."""
    import ast
    import json

    missing = []
    for lesson, modules in _lesson_modules().items():
        (notebook,) = (ROOT / "notebooks").glob(f"{lesson}_*.ipynb")
        intro = "".join(json.loads(notebook.read_text())["cells"][0]["source"])
        missing += [f"{lesson} does not name {m}" for m in modules if f"`{m}`" not in intro]
        for module in modules:
            path = PACKAGE / f"{module}.py" if (PACKAGE / f"{module}.py").exists() else PACKAGE / module / "__init__.py"
            doc = ast.get_docstring(ast.parse(path.read_text())) or ""
            if not re.search(rf"\b{lesson}\b", doc):
                missing.append(f"{module}'s docstring does not name lesson {lesson}")
    assert missing == []
