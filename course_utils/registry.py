"""Every dataset the course loads, and where it comes from: one table, read by the resolver and the tests.

Two kinds of source, so that a clone of the repository plus the internet is enough (lesson 01 onwards):

* **shipped with the course** (``source="course"``): corpora the course assembled, and small datasets whose hub
  copies need a loading script (which ``datasets`` >= 4 refuses to run) and whose licences allow redistribution.
  They live in ``course_utils/data/<folder>/`` in hub layout (parquet files, and a README whose front matter lists
  configs, features, licence, source and the sha256 of every file), so ``pip install`` carries them to Colab too.
* **from the hub** (``source="hub"``): data-only repositories (parquet, no loading script), optionally pinned to a
  revision. Offline they fall back to the mirror (``$COURSE_DATA_DIR``, then ``../shared/data``), which stands in
  for the hub on machines without internet.

``python -m course_tools.shipped_data`` prints the table, ``... verify`` checks every shipped file against its sha256,
and ``... ship MIRROR`` (maintainers) copies the shipped datasets from a mirror and writes their checksums.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from .paths import repo_root

SHIPPED_ROOT = Path(__file__).resolve().parent / "data"  # package data: travels with pip install
CHECKSUMS_KEY = "course_checksums"  # README front matter: {relative path: sha256}


@dataclass(frozen=True)
class DatasetEntry:
    """One dataset: the name lessons ask for, where it comes from, its configs and licence.

    ``folder`` is its folder name in the course's data (``course``) or in the offline mirror (``hub``).
    For hub sources ``hub`` is the repository, ``revision`` a pinned branch, tag or commit (None: main), and
    ``config_as_data_dir`` says the revision lays configs out as folders (the hub's parquet export) rather than
    declaring them in its README. ``why`` says why the source is safe (hub) or why the course ships it (course).
    """

    name: str
    source: str  # "course" or "hub"
    folder: str
    configs: tuple[str, ...]
    licence: str
    why: str
    lessons: tuple[str, ...]
    hub: str | None = None
    revision: str | None = None
    config_as_data_dir: bool = False
    upstream: str | None = None  # course datasets copied from a hub repository that needs a loading script

    @property
    def shipped(self) -> bool:
        return self.source == "course"


# fmt: off
DATASETS: tuple[DatasetEntry, ...] = (
    # ----------------------------------------------------------------------------------- shipped with the course
    DatasetEntry(
        "gutenberg_books", "course", "gutenberg_books", ("default",),
        "public domain in the USA (Project Gutenberg texts; the PG licence header and footer removed)",
        "assembled for the course: 20 books split by book (16 train, 2 validation, 2 test)",
        ("02", "03a", "05", "06", "07", "08"),   # 02 trains the course's tiny BERT on them; the others load it or
                                                 # (06, 08) the English MLM, trained on them too
    ),
    DatasetEntry(
        "biomed_corpus", "course", "biomed_corpus", ("biomed", "cs"),
        "Apache-2.0 (the SciBERT repository; the underlying corpora keep their own terms)",
        "assembled for the course from the sentences of SciBERT's biomedical and computer-science NER/parsing data",
        ("05",),
    ),
    DatasetEntry(
        "scibert_text_classification", "course", "scibert_text_classification", ("chemprot", "acl_arc"),
        "Apache-2.0 (the SciBERT repository; the underlying corpora keep their own terms)",
        "assembled for the course from SciBERT's ChemProt and ACL-ARC classification files",
        ("05",),
    ),
    DatasetEntry(
        "lm_diagnostics", "course", "lm_diagnostics",
        ("neg_136_simp", "neg_136_nat", "role_88", "cprag_102", "cprag_102_explanations"),
        "MIT (aetting/lm-diagnostics)",
        "assembled for the course from Ettinger's (2020) psycholinguistic diagnostics; no hub copy exists",
        ("06",),
    ),
    DatasetEntry(
        "universal_dependencies", "course", "universal_dependencies", ("en_ewt",),
        "CC BY-SA 4.0 (UD English EWT v2.16)",
        "the hub's copy needs a loading script, which datasets >= 4 refuses; the licence allows redistribution",
        ("06",), upstream="universal-dependencies/universal_dependencies",
    ),
    DatasetEntry(
        "crows_pairs", "course", "crows_pairs", ("crows_pairs",),
        "CC BY-SA 4.0 (nyu-mll/crows-pairs)",
        "the hub's copy needs a loading script, which datasets >= 4 refuses; the licence allows redistribution",
        ("06",), upstream="nyu-mll/crows_pairs",
    ),
    # ---------------------------------------------------------------------------------------------- from the hub
    DatasetEntry(
        "nyu-mll/glue", "hub", "glue",
        ("ax", "cola", "mnli", "mnli_matched", "mnli_mismatched", "mrpc", "qnli", "qqp", "rte", "sst2", "stsb", "wnli"),
        "per task (see Wang et al., 2019; MRPC: Microsoft Research terms)",
        "data only: parquet files, one folder per config, declared in the README",
        ("01", "03a", "03b", "06", "07", "08"), hub="nyu-mll/glue",
    ),
    DatasetEntry(
        "rajpurkar/squad", "hub", "squad", ("plain_text",),
        "CC BY-SA 4.0",
        "data only: parquet files declared in the README",
        ("01", "03d", "04"), hub="rajpurkar/squad",
    ),
    DatasetEntry(
        "Yale-LILY/aeslc", "hub", "aeslc", ("default",),
        "CC BY-NC-SA 4.0 (non-commercial)",
        "data only: parquet files declared in the README",
        ("04",), hub="Yale-LILY/aeslc",
    ),
    DatasetEntry(
        "abisee/cnn_dailymail", "hub", "cnn_dailymail", ("1.0.0", "2.0.0", "3.0.0"),
        "Apache-2.0",
        "data only: parquet files declared in the README (the full profile only)",
        ("04",), hub="abisee/cnn_dailymail",
    ),
    DatasetEntry(
        "eriktks/conll2003", "hub", "conll2003", ("conll2003",),
        "research use only (Reuters RCV1 text): the course does not redistribute it",
        "main still carries a loading script (conll2003.py), which datasets >= 4 refuses; the hub's own parquet "
        "export (branch refs/convert/parquet, written by the hub's parquet-converter bot) holds the same rows as data "
        "files only, one folder per config, with the ClassLabel features in the parquet schema",
        ("03c", "06"), hub="eriktks/conll2003", revision="refs/convert/parquet", config_as_data_dir=True,
    ),
)
# fmt: on


def by_name() -> dict[str, DatasetEntry]:
    """Every name a lesson may ask for -> its entry (names, hub ids, folders and upstream ids are all accepted)."""
    names: dict[str, DatasetEntry] = {}
    for entry in DATASETS:
        for name in (entry.name, entry.hub, entry.folder, entry.upstream):
            if name:
                names.setdefault(name, entry)
    return names


def entry(name: str) -> DatasetEntry | None:
    """The registry's entry for ``name``, or None for a dataset the course does not use."""
    return by_name().get(name)


# ---------------------------------------------------------------------------------------------- shipped datasets
def shipped_folder(entry: DatasetEntry) -> Path:
    return SHIPPED_ROOT / entry.folder


FRONT_MATTER = re.compile(r"\A---\r?\n(.*?)\r?\n---\r?\n", re.DOTALL)


def front_matter(readme: Path) -> dict:
    """The YAML front matter of a hub-layout README (an empty dict when there is none)."""
    match = FRONT_MATTER.match(readme.read_text(encoding="utf-8"))
    return (yaml.safe_load(match.group(1)) or {}) if match else {}


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _restore_hint(entry: DatasetEntry) -> str:
    folder = shipped_folder(entry)
    root = repo_root()
    if root is not None and (root / ".git").exists() and folder.is_relative_to(root):
        return (
            f"restore it from git: `git checkout -- {folder.relative_to(root).as_posix()}` in {root} "
            "(`git status` there shows what changed)"
        )
    return (
        f'reinstall the course: `pip install --force-reinstall --no-deps "{install_spec()}"`, then restart the runtime'
    )


def install_spec() -> str:
    """What the first cell of every notebook installs, read from the installed package's own metadata."""
    try:
        meta = importlib.metadata.metadata("course-utils")
        urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [] if ", " in u)
        return f"course-utils @ git+{urls['Repository']}@v{meta['Version']}"
    except (importlib.metadata.PackageNotFoundError, KeyError):
        return "course-utils @ git+<the course's repository>@<its release>"


_VERIFIED: set[tuple] = set()  # (path, size, mtime) of the file sets already checked in this process


class ShippedDataError(FileNotFoundError):
    """A dataset that ships with the course is missing or damaged; the message names the file and the fix."""


def verify_shipped(entry: DatasetEntry) -> Path:
    """Check every file of a shipped dataset against the sha256 in its README; return its folder.

    Raises ``ShippedDataError`` naming the first missing or damaged file and how to restore it. Verified once per
    process for the same files (size and modification time), so a notebook pays for it once.
    """
    if not entry.shipped:
        raise ValueError(f"{entry.name!r} comes from the hub, not from the course's own data.")
    folder = shipped_folder(entry)
    readme = folder / "README.md"
    if not readme.is_file():
        raise ShippedDataError(
            f"The course's copy of {entry.name!r} is missing: {readme} is not there. "
            f"To restore it, {_restore_hint(entry)}."
        )
    try:
        checksums = front_matter(readme).get(CHECKSUMS_KEY) or {}
    except yaml.YAMLError as err:
        raise ShippedDataError(
            f"{readme} is damaged (its front matter is not YAML: {err}). To restore it, {_restore_hint(entry)}."
        ) from err
    if not checksums:
        raise ShippedDataError(
            f"{readme} lists no `{CHECKSUMS_KEY}`, so the course's copy of {entry.name!r} cannot "
            f"be checked. To restore it, {_restore_hint(entry)}."
        )
    files = [folder / rel for rel in sorted(checksums)]
    missing = [f for f in files if not f.is_file()]
    if missing:
        raise ShippedDataError(
            f"The course's copy of {entry.name!r} is incomplete: {missing[0]} is missing. "
            f"To restore it, {_restore_hint(entry)}."
        )
    unlisted = sorted(set(folder.rglob("*.parquet")) - set(files))
    if unlisted:  # datasets would load it with the rest: a file nobody checked is not the course's data
        raise ShippedDataError(
            f"The course's copy of {entry.name!r} holds {unlisted[0]}, which its README's "
            f"`{CHECKSUMS_KEY}` do not list. Remove it, or {_restore_hint(entry)}."
        )
    stamp = tuple((str(f), f.stat().st_size, f.stat().st_mtime_ns) for f in files)
    if stamp in _VERIFIED:
        return folder
    for f in files:
        digest = sha256(f)
        expected = checksums[f.relative_to(folder).as_posix()]
        if digest != expected:
            raise ShippedDataError(
                f"The course's copy of {entry.name!r} is damaged: {f} has sha256 {digest[:16]}…, expected "
                f"{expected[:16]}…. To restore it, {_restore_hint(entry)}."
            )
    _VERIFIED.add(stamp)
    return folder
