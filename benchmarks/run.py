"""Speed and memory targets of the course, checked outside the unit tests.

    make bench            # or: python benchmarks/run.py [--skip-course]

1. runs the main job (quick profile) and checks each notebook against its profile's budget
   (seconds and peak RSS, see course_utils/profiles.py);
2. times the masking functions on a realistic batch and prints tokens per second.
Exits 1 if a notebook fails or is over budget.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def bench_masking() -> None:
    import torch

    from course_utils import load_tokenizer
    from course_utils.masking import mask_tokens, span_mask, whole_word_mask

    tokenizer = load_tokenizer("sentence-transformers/all-MiniLM-L6-v2")
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(1000, 30000, (256, 128), generator=g)
    words = torch.arange(128).repeat(256, 1) // 2  # two pieces a word
    for name, fn in [("mask_tokens", lambda: mask_tokens(ids, tokenizer, generator=g)),
                     ("whole_word_mask", lambda: whole_word_mask(ids, words, tokenizer, generator=g)),
                     ("span_mask", lambda: span_mask(ids, tokenizer, generator=g))]:
        fn()
        start = time.perf_counter()
        repeats = 3 if name == "span_mask" else 20
        for _ in range(repeats):
            fn()
        per_call = (time.perf_counter() - start) / repeats
        print(f"{name:>16}: {ids.numel() / per_call / 1e6:7.2f} M tokens/s  ({per_call * 1e3:.1f} ms per 256x128 batch)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skip-course", action="store_true", help="only the masking timings")
    args = parser.parse_args()
    bench_masking()
    if args.skip_course:
        return 0
    from course_utils.run_course import find_notebooks, run_course, summary_table

    report = run_course(find_notebooks([]), ROOT / "build", "quick", timeout=1800)
    print(summary_table(report))
    bad = [nb["name"] for nb in report["notebooks"] if nb["status"] != "ok" or nb["within_budget"] is False]
    if bad:
        print(f"over budget or failed: {', '.join(bad)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
