"""The rehearsal of the full profile: every notebook in ``full``'s code path, offline, on a CPU, in minutes.

    make rehearse                                   # = python -m course_tools.rehearsal --out build/rehearsal
    python -m course_tools.rehearsal notebooks/04_seq2seq_t5_bart.ipynb

It builds the stand-ins of the full profile's hub checkpoints (``course_tools.standin_checkpoints``) into a Hugging Face
cache folder, points ``HF_HUB_CACHE`` there with the hub switched off, takes datasets from the offline mirror under
their hub names, and runs the notebooks in the ``rehearsal`` profile (``full`` with steps and examples capped, nothing
else changed; ``course_utils.profiles``). Random stand-ins cannot reach a paper's accuracy: in a rehearsal, a lesson's
claims check only what they must still satisfy (``course_utils.claims``). Before each exercise it also scores the
exercise's blank, its wrong answers (``notebooks/wrong_answers``) and its solution with the exercise's checks
(``course_tools.grading.wrong_answers``), and fails where one earns what it should not. Introduced for maintainers
and CI."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from course_utils.paths import repo_root
from course_utils.profiles import PROFILES, Profile
from course_utils.resources import mirror_dir

from . import run_course
from .grading.wrong_answers import FOLDER, problems
from .standin_checkpoints import STANDINS, build_all

REHEARSAL = "rehearsal"


def hub_checkpoints(profile: Profile) -> list[str]:
    """The checkpoints a profile names that have stand-ins, in the order they first appear."""
    return [name for name in profile.checkpoints() if name in STANDINS]


def require_mirror() -> Path:
    """The offline mirror, which the rehearsal takes its datasets from; a clear error where there is none."""
    root = mirror_dir()
    if root is None:
        raise SystemExit(
            "The rehearsal needs the offline mirror of the hub's datasets (the full profile's data under their hub "
            "names): none found. Put it at ../shared/data beside the checkout or point $COURSE_DATA_DIR at it. "
            "Students do not need a rehearsal: online, run the full profile itself (COURSE_PROFILE=full)."
        )
    return root


def prepare(out: Path, cache: Path | None = None, mirror: Path | None = None) -> dict[str, str]:
    """Build the stand-ins into ``cache`` (default ``out/hf-cache``; reused where built) -> the environment a
    rehearsal's kernels run in: the hub off, its cache the stand-ins', datasets from the offline mirror (``mirror``,
    default the one the resolver finds). ``make rehearse`` and the rehearsal's tests (tests/test_rehearsal.py, one per
    notebook) both start here."""
    root = mirror or require_mirror()
    cache = cache or out / "hf-cache"
    build_all(cache, hub_checkpoints(PROFILES[REHEARSAL]))
    return {"HF_HUB_CACHE": str(cache), "HF_HUB_OFFLINE": "1", "COURSE_DATA_DIR": str(root)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", help="notebooks to rehearse (default: notebooks/NN_*.ipynb)")
    parser.add_argument("--out", default="build/rehearsal", help="executed copies, report and stand-ins go here")
    parser.add_argument(
        "--cache",
        default=None,
        help="Hugging Face cache folder for the stand-ins "
        "(default: OUT/hf-cache; built there when missing, reused when present)",
    )
    parser.add_argument("--timeout", type=int, default=600, help="seconds allowed per notebook (default: 600)")
    parser.add_argument(
        "--no-wrong-answers",
        action="store_true",
        help="skip scoring each exercise's blank, wrong answers and solution before it runs (on by default)",
    )
    parser.add_argument(
        "--answers",
        default=None,
        help="the wrong answers' folder (default: the checkout's notebooks/wrong_answers; a red team's scratch folder)",
    )
    args = parser.parse_args(argv)

    out = Path(args.out).resolve()
    os.environ.update(prepare(out, Path(args.cache).resolve() if args.cache else None))
    notebooks = run_course.find_notebooks(args.notebooks)
    wrong = (
        None if args.no_wrong_answers else (Path(args.answers).resolve() if args.answers else wrong_answers_folder())
    )
    report = run_course.run_course(notebooks, out, REHEARSAL, args.timeout, wrong_answers=wrong)
    print(run_course.summary_table(report))
    trials_failed = bool(problems(run_course.wrong_answer_rows(report)))
    return 0 if all(nb["status"] == "ok" for nb in report["notebooks"]) and not trials_failed else 1


def wrong_answers_folder() -> Path | None:
    """The checkout's ``notebooks/wrong_answers`` (each exercise's blank and solution are scored even without it)."""
    root = repo_root()
    return None if root is None else root / FOLDER


if __name__ == "__main__":
    sys.exit(main())
