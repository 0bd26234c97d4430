"""Command line: ``release`` student notebooks, ``autograde`` a folder of submissions (into one grade book),
``merge-hand-grades`` into it, score each exercise's ``wrong-answers`` with its checks."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .autograde import autograde
from .exercises import ExerciseError
from .gradebook import add_book_arguments, add_merge_parser, merge_command
from .gradescope import add_zip_parser, zip_command
from .isolation import CHOICES, ISOLATION_VARIABLE
from .late import LateOptions
from .release import Publication, release
from .reporting import batch_counts, class_summary, class_table, grade_parts, totals, writing_summary
from .runner import Limits
from .student_repository import build_student_repository
from .wrong_answers import FOLDER, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_tools.grading", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    rel = commands.add_parser("release", help="write student versions of the solution notebooks")
    rel.add_argument("source", help="folder of solution notebooks (e.g. notebooks/) or one .ipynb")
    rel.add_argument("out", help="folder for the student notebooks (not the source folder)")
    rel.add_argument(
        "--students-repo",
        default=None,
        help="OWNER/NAME of the GitHub repository you publish the release in: the notebooks' Colab badges open "
        "them there (default: the course repository's name with -students)",
    )
    rel.add_argument("--branch", default="main", help="its branch (default: main)")
    rel.add_argument("--folder", default="notebooks", help="the folder there that holds them (default: notebooks)")
    repo = commands.add_parser(
        "student-repo", help="write a student repository to publish: released lessons, appendices, course_utils"
    )
    repo.add_argument("out", help="a new (or empty) folder for it")
    repo.add_argument("--students-repo", required=True, help="OWNER/NAME of the GitHub repository it will be")
    repo.add_argument("--branch", default="main", help="its branch (default: main)")
    auto = commands.add_parser("autograde", help="grade a folder of submissions: <folder>/<student>/<notebook>.ipynb")
    auto.add_argument("submissions", help="one folder per student, each holding their notebooks")
    auto.add_argument("--source", required=True, help="the solution notebooks (folder or one .ipynb)")
    auto.add_argument("--out", default="grades.csv", help="the grade table to write (default: grades.csv)")
    auto.add_argument(
        "--feedback", default=None, help="folder for per-student feedback (default: feedback/ beside --out)"
    )
    auto.add_argument(
        "--time-limit",
        type=float,
        default=None,
        help="seconds per notebook run (default: 3 times the solution's run in calibration + 60; without "
        "calibration, twice the notebook's quick-profile budget + 60)",
    )
    auto.add_argument(
        "--cell-time-limit",
        type=float,
        default=None,
        help="seconds per exercise cell or check (default: 3 times the solution's slowest in calibration + 30, "
        "at least 60; 60 without calibration)",
    )
    auto.add_argument(
        "--memory-mb", type=int, default=None, help="memory per submission (default: the profile's budget + 1 GB)"
    )
    auto.add_argument(
        "--isolation",
        choices=CHOICES,
        default=None,
        help="the kernels' filesystem sandbox: auto (bubblewrap where it works, else Landlock), "
        f"bubblewrap or landlock (default: ${ISOLATION_VARIABLE}, else auto)",
    )
    auto.add_argument(
        "--skip-calibration",
        action="store_true",
        help="grade without first checking that the solution notebooks earn every point here",
    )
    add_book_arguments(auto)
    wrong = commands.add_parser(
        "wrong-answers",
        aliases=["mutants"],
        help="run notebooks and, before each exercise, score its blank, its wrong answers and its solution with its "
        "checks as the grader would; fails where a wrong answer or the blank earns points or the solution does not",
    )
    wrong.add_argument("notebooks", nargs="*", help="solution notebooks (default: notebooks/NN_*.ipynb)")
    wrong.add_argument("--answers", default=str(FOLDER), help=f"the wrong answers' folder (default: {FOLDER})")
    wrong.add_argument(
        "--profile", default=None, help="quick, full or rehearsal (default: $COURSE_PROFILE, else quick)"
    )
    wrong.add_argument("--out", default="build/wrong-answers", help="executed copies and the report go here")
    wrong.add_argument("--timeout", type=int, default=1800, help="seconds allowed per notebook (default: 1800)")
    add_zip_parser(commands)
    add_merge_parser(commands)
    args = parser.parse_args(argv)
    if args.command == "merge-hand-grades":
        return merge_command(args)
    if args.command == "gradescope-zip":
        return zip_command(args)
    if args.command in ("wrong-answers", "mutants"):
        return wrong_answers_command(args)
    try:
        if args.command == "student-repo":
            publication = Publication.default(args.students_repo, args.branch, "notebooks")
            written = build_student_repository(args.out, publication)
            print(
                f"wrote {len(written)} files into {args.out}: push it to github.com/{publication.repository} "
                f"(branch {publication.branch}); its badges and first cells point there"
            )
            return 0
        if args.command == "release":
            publication = Publication.default(args.students_repo, args.branch, args.folder)
            for path in release(args.source, args.out, publication):
                print(f"released {path}")
            print(
                f"publish {args.out}/ at {publication.address}: the notebooks' Colab badges open them there. Their "
                f"links to the appendices and guides go to github.com/{publication.course} at {publication.tag}."
            )
            return 0
        limits = Limits(args.time_limit, args.cell_time_limit, args.memory_mb)
        results = autograde(
            args.submissions,
            args.source,
            args.out,
            limits,
            args.feedback,
            calibration=not args.skip_calibration,
            isolation=args.isolation,
            students=args.student,
            notebooks=args.notebook,
            late=LateOptions.from_args(args),
            roster=args.roster,
        )
    except (ValueError, ExerciseError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for student, notebooks in results.items():
        if args.student and student not in args.student:
            continue
        total, possible = totals(notebooks)
        parts = grade_parts(notebooks)
        look = [g.notebook for g in notebooks if g.needs_look]
        print(
            f"{student}: {total:g} / {possible:g}"
            + (
                f" automatic, {parts.by_hand:g} / {parts.by_hand_max:g} by hand"
                + (f", -{parts.penalty:g} late" if parts.penalty else "")
                + f": total {parts.total:g} / {parts.possible:g}"
                if parts.graded or parts.penalty
                else ""
            )
            + (f"  NEEDS A LOOK: a lesson cell failed in {', '.join(look)}" if look else "")
        )
    columns = list(dict.fromkeys(c for notebooks in results.values() for g in notebooks for c in g.outcomes))
    print()
    print(class_table(class_summary(results, columns), batch_counts(results), writing=writing_summary(results)))
    out = Path(args.out)
    print(
        f"grades: {out}; class report: {out.parent / 'class-report.html'}; Gradescope: {out.parent / 'gradescope'}/; "
        f"Canvas: {out.parent / 'canvas.csv'}"
    )
    if any(g.writing for notebooks in results.values() for g in notebooks):
        print(
            f"to grade by hand: {out.parent / 'hand-grading.md'} (answers beside their rubric); points go in "
            f"{out.parent / 'hand-grading.csv'}, then: python -m course_tools.grading merge-hand-grades --grades {out}"
        )
    return 0


def wrong_answers_command(args: argparse.Namespace) -> int:
    """``wrong-answers``: the notebooks run as ``course_tools.run_course`` runs them, with the trials before each
    exercise; prints one line per exercise and every problem."""
    from course_utils.profiles import get_profile

    from .. import run_course

    folder = Path(args.answers)
    if not folder.is_dir():
        print(
            f"error: no wrong answers folder at {folder} (write notebooks/wrong_answers/<notebook>.toml)",
            file=sys.stderr,
        )
        return 2
    report = run_course.run_course(
        run_course.find_notebooks(args.notebooks),
        Path(args.out),
        get_profile(args.profile).name,
        args.timeout,
        wrong_answers=folder,
    )
    print(run_course.summary_table(report))
    failed = problems(run_course.wrong_answer_rows(report)) or [
        nb for nb in report["notebooks"] if nb["status"] != "ok"
    ]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
