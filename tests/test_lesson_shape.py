"""A lesson's shape, checked on the committed notebooks (DESIGN.md, "A lesson's shape"; issue 39): at most 1,800 words
of markdown, and outputs a student reads rather than scrolls past."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
MAX_WORDS = 1800
MAX_OUTPUT_LINES = 25  # a model's repr, a raw dict or a log is longer; a table or a short report is not
MAX_OUTPUT_CHARS = 2000


def markdown_words(notebook: dict) -> int:
    """Words (whitespace-separated runs) in every markdown cell, a written answer's cell included: its rubric lives
    in the lesson's instructor appendix and the cell holds one line that links to it."""
    return sum(len(re.findall(r"\S+", "".join(c["source"]))) for c in notebook["cells"] if c["cell_type"] == "markdown")


def text_outputs(notebook: dict):
    """(cell index, text) of every output a reader sees as text: streams, and results with no richer view."""
    for i, cell in enumerate(notebook["cells"]):
        for out in cell.get("outputs", []):
            if out["output_type"] == "stream":
                yield i, "".join(out["text"])
            elif not {"text/html", "image/png", "image/svg+xml"} & set(out.get("data", {})):
                yield i, "".join(out.get("data", {}).get("text/plain", ""))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_lesson_has_at_most_1800_words_of_markdown(path):
    words = markdown_words(json.loads(path.read_text()))
    assert words <= MAX_WORDS, f"{path.name} has {words} words of markdown; a lesson has at most {MAX_WORDS}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_output_is_longer_than_a_reader_reads(path):
    long = [
        f"cell {i}: {text.count(chr(10))} lines, {len(text)} characters"
        for i, text in text_outputs(json.loads(path.read_text()))
        if text.count("\n") > MAX_OUTPUT_LINES or len(text) > MAX_OUTPUT_CHARS
    ]
    assert not long, f"{path.name}: outputs over {MAX_OUTPUT_LINES} lines or {MAX_OUTPUT_CHARS} characters: {long}"


def test_the_checks_count_what_they_say():
    nb = {
        "cells": [
            {"cell_type": "markdown", "source": ["# Two words\n", "and three more"]},
            {
                "cell_type": "markdown",
                "metadata": {"nbgrader": {"solution": True, "grade": True, "grade_id": "why", "points": 2}},
                "source": ["A rubric link: counted"],
            },
            {
                "cell_type": "code",
                "source": ["not counted at all"],
                "outputs": [
                    {"output_type": "stream", "text": ["a\n" * 30]},
                    {"output_type": "execute_result", "data": {"text/plain": ["BertModel(\n" + "  layer\n" * 40]}},
                    {"output_type": "display_data", "data": {"text/plain": ["<Figure>"], "image/png": "..."}},
                ],
            },
        ]
    }
    assert markdown_words(nb) == 10
    assert [t.count("\n") for _, t in text_outputs(nb)] == [30, 41]


# ------------------------------------------------------------------------------------ numbers the prose quotes
# A decimal or a percentage in a lesson's markdown is a number from its own run unless its sentence cites a paper
# (a year in brackets, "et al.", "A & B (2019)"); a number from the run must be in the outputs, to the precision quoted.
# What is neither (arithmetic on printed numbers, a figure whose citation sits in the sentence before) is listed here
# with where it comes from.
NOT_FROM_THE_RUN: dict[str, dict[str, str]] = {
    "03c_named_entities": {"0.005": "exercise 4's band for 'same'"},
    "04_seq2seq_t5_bart": {"0.002": "exercise 4's band for 'the same'"},
}
CITATION = re.compile(r"et al\.|\w+ & \w+,? \(?\d{4}|\(\d{4}[a-z]?[,)]|\w, (19|20)\d\d[a-z]?[),;]")
QUOTED = re.compile(  # 0.645, 7.8x, 44 %, 87 s, 1,061 times
    r"(?<![\w.])\d[\d,]*\.\d+(?=x\b|×|[^\w]|$)|(?<![\w.,])\d+(?= ?%)|(?<![\w.,])\d[\d,]*(?= s\b| times\b|x\b|×)"
)
PRINTED = re.compile(r"\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?")


def _sentences(markdown: str) -> list[str]:
    markdown = re.sub(r"```.*?```|`[^`]*`|\$[^$]*\$", "", markdown, flags=re.S)  # code and math are not quotes
    markdown = re.sub(r"\]\([^)]*\)", "]", markdown)  # nor are link targets
    return re.split(r"(?<=[.!?])\s+(?=[A-Z*(])|\n\n|\n- ", markdown)


def _printed_numbers(notebook: dict) -> set[float]:
    texts = []
    for cell in notebook["cells"]:
        for out in cell.get("outputs", []):
            texts.append("".join(out.get("text", "")))
            texts += ["".join(v) for k, v in out.get("data", {}).items() if k.startswith("text/")]
    return {float(m.replace(",", "")) for m in PRINTED.findall("\n".join(texts))}


def unprinted_quotes(notebook: dict) -> list[tuple[int, str]]:
    """(cell, number) for every number the markdown quotes from the run that no output prints, to the precision quoted
    (0.645 matches a printed 0.6452; 64.5 % or 64 % matches a printed 0.645)."""
    printed = _printed_numbers(notebook)
    missing = []
    for i, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        for sentence in _sentences("".join(cell["source"])):
            if CITATION.search(sentence):
                continue
            for match in QUOTED.finditer(sentence):
                quote = match.group()
                value = float(quote.replace(",", ""))
                places = len(quote.split(".")[1]) if "." in quote else 0
                percent = sentence[match.end() :].lstrip().startswith("%")  # this occurrence's unit, not the first's
                scales = (1, 100, 0.01) if percent else (1,)
                if not any(round(x * s, places) == round(value, places) for x in printed for s in scales):
                    missing.append((i, quote))
    return missing


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_number_the_prose_quotes_from_the_run_is_in_its_outputs(path):
    allowed = NOT_FROM_THE_RUN.get(path.stem, {})
    missing = [(i, q) for i, q in unprinted_quotes(json.loads(path.read_text())) if q not in allowed]
    assert not missing, f"{path.name}: (cell, number) quoted in markdown, printed by no output: {missing}"


def test_the_quote_check_catches_a_stale_number_and_spares_a_citation():
    def nb(text: str) -> dict:
        return {
            "cells": [
                {"cell_type": "markdown", "source": [text]},
                {"cell_type": "code", "source": [""], "outputs": [{"output_type": "stream", "text": ["acc 0.6452\n"]}]},
            ]
        }

    assert unprinted_quotes(nb("It reached 0.645 here.")) == []
    assert unprinted_quotes(nb("It reached 64.5 % here.")) == []
    assert unprinted_quotes(nb("Not 64.5 but 64.5 % here.")) == [(0, "64.5")]  # only the bare one is unprinted
    assert unprinted_quotes(nb("It reached 0.652 here.")) == [(0, "0.652")]
    assert unprinted_quotes(nb("It ran 0.652x faster.")) == [(0, "0.652")]
    assert unprinted_quotes(nb("Trained in 87 s, 3 times faster; 0.6452 s a step.")) == [(0, "87"), (0, "3")]
    assert unprinted_quotes(nb("BERT-base reached 84.6 (Devlin et al., 2019).")) == []
    assert unprinted_quotes(nb("Run `x = 1.5` with $p = 0.3$.")) == []


def test_every_relative_link_in_the_lessons_the_readme_and_the_guides_resolves_anchors_included():
    """Files must exist; an anchor into a Markdown page (or the page itself) must be one of its headings (GitHub's and
    the site's anchors are the same: lower case, punctuation dropped, spaces as hyphens)."""
    from course_tools.grading.exercises import heading_anchor

    root = NOTEBOOKS[0].parents[1]
    pages = [
        (p, "\n".join("".join(c["source"]) for c in json.loads(p.read_text())["cells"] if c["cell_type"] == "markdown"))
        for p in NOTEBOOKS
    ]
    pages += [
        (p, p.read_text())
        for p in [root / "README.md", *root.glob("notebooks/appendix/*.md"), *root.glob("docs/**/*.md")]
    ]

    def anchors(page: Path) -> set[str]:
        text = page.read_text() if page.suffix == ".md" else ""
        return {heading_anchor(m) for m in re.findall(r"(?m)^#+\s+(.*)$", text)}

    broken = []
    for page, text in pages:
        for target, anchor in re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)", text):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            path = (page.parent / target) if target else page
            if not path.exists():
                broken.append(f"{page.relative_to(root)} -> {target} (no such file)")
            elif anchor and path.suffix == ".md" and anchor not in anchors(path):
                broken.append(f"{page.relative_to(root)} -> {target}#{anchor} (no such heading)")
    assert not broken, f"links that do not resolve: {broken}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_lesson_has_an_independent_reading_on_record(path):
    """Issue 53: each lesson's appendix keeps a "Review" section, the findings of a reader who did not write the
    change and what was done about each (docs/guide/maintainers.md, "Changing a lesson")."""
    appendix = path.parent / "appendix" / f"{path.stem}.md"
    sections = re.findall(r"^## (.+)$", appendix.read_text(), flags=re.M)
    assert "Review" in sections, f"{appendix.name} has no '## Review' section (sections: {sections})"
    review = appendix.read_text().split("\n## Review\n", 1)[1].split("\n## ", 1)[0]
    assert re.search(r"20\d\d-\d\d-\d\d", review), f"{appendix.name}: the Review section names no date of reading"
