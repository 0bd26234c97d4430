"""Maintainers' command line for the datasets that ship with the course (the table itself is course_utils.registry).

    python -m course_tools.shipped_data                 # the registry as a Markdown table
    python -m course_tools.shipped_data verify          # every shipped file against its sha256, with sizes
    python -m course_tools.shipped_data ship MIRROR     # copy the shipped datasets from a hub-layout mirror

A separate module from the registry so that ``python -m`` does not run a module the package has already imported.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import yaml

from course_utils.registry import (
    CHECKSUMS_KEY,
    DATASETS,
    FRONT_MATTER,
    front_matter,
    sha256,
    shipped_folder,
    verify_shipped,
)


def ship(mirror: Path) -> list[Path]:
    """Copy every shipped dataset (its README and parquet files) from a hub-layout ``mirror`` into the package and
    record their checksums in the README's front matter, with the licence and source from the registry.

    Each folder is written beside its final place and renamed into it, so it is whole or absent.
    """
    written = []
    for entry in DATASETS:
        if not entry.shipped:
            continue
        source = mirror / entry.folder
        if not (source / "README.md").is_file():
            raise FileNotFoundError(f"{source} is not a hub-layout dataset folder (no README.md).")
        target = shipped_folder(entry)
        tmp = target.parent / f".{target.name}.partial"
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            for path in [source / "README.md", *sorted(source.rglob("*.parquet"))]:
                dest = tmp / path.relative_to(source)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, dest)
            readme = tmp / "README.md"
            text = readme.read_text(encoding="utf-8")
            meta = front_matter(readme)
            match = FRONT_MATTER.match(text)
            body = text[match.end() :] if match else text
            meta["license"] = entry.licence
            meta["course_source"] = f"shipped with the course: {entry.why}" + (
                f" (upstream on the hub: {entry.upstream})" if entry.upstream else ""
            )
            meta[CHECKSUMS_KEY] = {p.relative_to(tmp).as_posix(): sha256(p) for p in sorted(tmp.rglob("*.parquet"))}
            readme.write_text(
                "---\n" + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True) + "---\n" + body, encoding="utf-8"
            )
            shutil.rmtree(target, ignore_errors=True)
            tmp.rename(target)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        written.append(target)
    return written


def table() -> str:
    """The registry as a Markdown table."""
    rows = ["| dataset | source | configs | licence | lessons |", "|---|---|---|---|---|"]
    for e in DATASETS:
        where = (
            "shipped with the course" if e.shipped else f"hub `{e.hub}`" + (f" @ `{e.revision}`" if e.revision else "")
        )
        rows.append(f"| `{e.name}` | {where} | {', '.join(e.configs)} | {e.licence} | {', '.join(e.lessons)} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_tools.shipped_data", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("list", help="print the registry (the default)")
    sub.add_parser("verify", help="check every shipped file against its sha256")
    ship_parser = sub.add_parser("ship", help="copy the shipped datasets from a hub-layout mirror")
    ship_parser.add_argument("mirror", type=Path)
    args = parser.parse_args(argv)
    if args.command == "verify":
        for e in DATASETS:
            if e.shipped:
                folder = verify_shipped(e)
                size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
                print(f"ok  {e.name:<28} {size / 1e6:5.1f} MB  {folder}")
        return 0
    if args.command == "ship":
        for folder in ship(args.mirror):
            print(f"wrote {folder}")
        return 0
    print(table())
    return 0


if __name__ == "__main__":
    sys.exit(main())
