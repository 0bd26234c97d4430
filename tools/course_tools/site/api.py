"""The API reference: one page per ``course_utils`` module, generated from its docstrings by Sphinx's autodoc, each
opening with the lessons that use it and, per helper, which lessons call it."""

from __future__ import annotations

import pkgutil
from collections import defaultdict

import course_utils

from .lessons import Helper


def public_modules() -> list[str]:
    """Every module of the lessons' package except the metric scripts that evaluate loads by path."""
    names = [m.name for m in pkgutil.walk_packages(course_utils.__path__, "course_utils.")]
    return ["course_utils", *sorted(n for n in names if not n.startswith("course_utils.metrics."))]


def module_page(module: str, used_by: dict[str, list[str]], lessons: dict[str, str]) -> str:
    """MyST Markdown for one module: who uses what, then autodoc. ``used_by`` maps a helper's dotted name to the
    lessons (notebook stems) that use it; ``lessons`` maps a stem to its page's path from the API folder."""
    mine = {name: stems for name, stems in used_by.items() if name.rsplit(".", 1)[0] == module or name == module}
    lines = [f"# `{module}`", ""]
    if mine:
        lines += ["Used in the lessons:", ""]
        for name, stems in sorted(mine.items()):
            links = ", ".join(f"[{stem}]({lessons[stem]})" for stem in stems)
            label = name.removeprefix(module + ".") if name != module else "the module"
            lines.append(f"- `{label}`: {links}")
        lines.append("")
    else:
        lines += ["No lesson imports this module directly; other helpers use it.", ""]
    lines += ["```{eval-rst}", f".. automodule:: {module}", "   :members:", "```", ""]
    return "\n".join(lines)


def usage(helpers: dict[str, list[Helper]]) -> dict[str, list[str]]:
    """Helper name -> the lessons using it, from each lesson's :func:`.lessons.helpers_used`."""
    used: dict[str, list[str]] = defaultdict(list)
    for stem, found in helpers.items():
        for helper in found:
            used[helper.name].append(stem)
    return dict(used)
