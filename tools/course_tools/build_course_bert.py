"""``python -m course_tools.build_course_bert [--rebuild]``: make sure the course checkpoint is cached (lesson 02).

``make course``, ``make test`` and ``make rehearse`` run it first, so that no notebook spends its budget training the
checkpoint; it does nothing when the cache is whole. (A module of its own: ``course_bert`` is a library module, and a
command that other modules may import would run twice under ``python -m``.)
"""

from __future__ import annotations

import argparse
import json

from course_utils.course_bert import MANIFEST, describe, ensure_checkpoint


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course_tools.build_course_bert",
        description="Build the course checkpoint once for this machine, or check it.",
    )
    parser.add_argument("--rebuild", action="store_true", help="train it again even when the cache is whole")
    args = parser.parse_args(argv)
    folder = ensure_checkpoint(rebuild=args.rebuild)
    facts = json.loads((folder / MANIFEST).read_text())["summary"]
    print(f"[course] course checkpoint ready: {describe(folder)}")
    if "unigram_loss" in facts:
        print(
            f"[course] held-out MLM loss {facts['heldout_loss_start']:.3f} -> {facts['heldout_loss_end']:.3f} "
            f"(unigram frequencies: {facts['unigram_loss']:.3f}); built in {facts['seconds']:.0f} s on "
            f"{facts['device']}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
