"""``python -m course_tools.site build|check``: see the package's docstring."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .build import build


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_tools.site", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("build", help="build the static site (offline; the notebooks are not executed)")
    make.add_argument("--out", type=Path, default=Path("build/site"))
    make.add_argument("--solutions", action="store_true", help="the instructor's site: solutions and rubrics shown")
    make.add_argument(
        "--report",
        type=Path,
        action="append",
        default=None,
        help="a course report for the results page (repeat to compare; by default those of `make course` and `make "
        "rehearse`, build/course-report.json and build/rehearsal/course-report.json, where present, else the ones "
        "committed in docs/results/)",
    )
    make.add_argument("--notebooks", type=Path, default=None, help="executed notebooks (default build/notebooks/)")
    make.add_argument(
        "--from",
        dest="students",
        type=Path,
        default=None,
        help="the students' site, from a student repository (python -m course_tools.grading student-repo): its "
        "notebooks, appendices and README, every link pointing at it",
    )
    make.add_argument("--branch", default="main", help="with --from: the student repository's branch (default: main)")
    check = commands.add_parser("check", help="open the built site in headless Chromium and check every page")
    check.add_argument("--site", type=Path, default=Path("build/site"))
    check.add_argument("--out", type=Path, default=Path("build/site-check"))
    args = parser.parse_args(argv)
    if args.command == "build":
        reports = args.report
        missing = [str(p) for p in reports or [] if not p.is_file()]
        if missing:
            parser.error(f"no such report: {', '.join(missing)} (make course writes build/course-report.json)")
        if args.students is not None and args.solutions:
            parser.error("--from builds the students' site: it cannot show --solutions")
        home = build(
            args.out,
            solutions=args.solutions,
            reports=reports,
            executed=args.notebooks,
            students=args.students,
            branch=args.branch,
        )
        print(f"site: {home}")
        return 0
    from .check import check_site

    problems = check_site(args.site, args.out)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
