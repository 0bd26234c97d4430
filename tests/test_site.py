"""The course website (course_tools.site): what each lesson page shows, the links it rewrites, the results page, and
one build of the whole site from the checkout (slow), checked in headless Chromium where one is installed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest

from course_tools.colab_links import release as course_release
from course_tools.grading.leaks import leaks, readable, secrets_of
from course_tools.site.build import rewrite_links, without_rubrics
from course_tools.site.lessons import helpers_used, student_page, with_links
from course_tools.site.results import load_report, results_page

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "grading" / "01_tiny.ipynb"


def test_a_lesson_lists_the_helpers_it_imports_or_calls_through_a_module():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%pip install nothing\nfrom course_utils.masking import mask_tokens"),
        nbformat.v4.new_code_cell("from course_utils import claim, adaptation\nx = adaptation.sample_texts([], 1)"),
        nbformat.v4.new_code_cell("import numpy as np\nfrom transformers import AutoModel"),
        nbformat.v4.new_markdown_cell("from course_utils.cloze import fill_mask  (prose, not code)"),
    ]
    assert [h.name for h in helpers_used(nb)] == [
        "course_utils.adaptation",
        "course_utils.adaptation.sample_texts",
        "course_utils.claims.claim",  # where it is defined, not where it was imported from
        "course_utils.masking.mask_tokens",
    ]


def test_a_student_page_shows_the_lesson_s_outputs_but_no_solution_and_no_exercise_output():
    nb = nbformat.read(FIXTURE, 4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = [nbformat.v4.new_output("stream", text=f"ran {cell.source[:12]!r}\n")]
    page = student_page(nb, "01_tiny")
    assert "return math.pi * r" not in nbformat.writes(page) and "Rubric" not in nbformat.writes(page)
    assert page.cells[7].outputs == [] and page.cells[8].outputs == []  # area and its check
    assert page.cells[1].outputs == nb.cells[1].outputs and page.cells[14].outputs == nb.cells[14].outputs
    linked = with_links(page, helpers_used(nb), "../downloads/01_tiny.ipynb")
    heading, links = linked.cells[0].source.split("\n\n")[:2]
    assert heading == "# A tiny lesson for the grader's tests"
    assert "{download}`Download the student notebook <../downloads/01_tiny.ipynb>`" in links


def test_a_link_to_a_file_the_site_does_not_render_goes_to_github(tmp_path):
    root, source = tmp_path / "repo", tmp_path / "src"
    for path in ("docs/guide/a.md", "notebooks/01.ipynb", "tools/x.py"):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("")
    (source / "docs" / "guide").mkdir(parents=True)
    (source / "docs" / "guide" / "a.md").write_text("")
    (source / "notebooks").mkdir()
    (source / "notebooks" / "01.ipynb").write_text("")
    text = "[a](a.md#top) [n](../../notebooks/01.ipynb) [x](../../tools/x.py#L3) [w](https://e.org) [g](missing.md)"
    out = rewrite_links(text, Path("docs/guide/page.md"), source, root, "https://github.com/o/r", "v1.0")
    assert out == (
        "[a](a.md#top) [n](../../notebooks/01.ipynb) [x](https://github.com/o/r/blob/v1.0/tools/x.py#L3) "
        "[w](https://e.org) [g](missing.md)"
    )


def test_the_students_site_leaves_the_rubrics_out_of_the_appendices():
    page = "# Appendix\n\n## Trials\n\nkept\n\n## Rubric: `ex4_explain`\n\n- 1 point: secret\n\n## After\n\nkept too\n"
    assert without_rubrics(page) == "# Appendix\n\n## Trials\n\nkept\n\n## After\n\nkept too\n"


def test_the_results_page_tabulates_each_report_and_refuses_a_file_that_is_not_one(tmp_path):
    report = {
        "profile": "quick",
        "matmul_gflops": {"before": 190.0},
        "notebooks": [
            {
                "name": "01_masking",
                "status": "ok",
                "seconds": 40.0,
                "peak_rss_mb": 1300.0,
                "within_budget": True,
                "claims": [{"name": "a | b", "value": 0.5, "op": ">=", "threshold": 0.1, "outcome": "held"}],
                "sources": [{"name": "nyu-mll/glue", "source": "hub"}],
            }
        ],
    }
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "course-report.json").write_text(json.dumps(report))
    page = results_page([tmp_path / "a" / "course-report.json"], tmp_path / "out")
    assert "| 01_masking | ok, 40 s / 60 s · 1300 MB · 1 of 1 |" in page
    assert "| a \\| b | 0.5 | >= 0.1 | held |" in page and "nyu-mll/glue (hub)" in page
    assert (tmp_path / "out" / "time.png").stat().st_size > 1000 and (tmp_path / "out" / "claims.png").is_file()
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ValueError, match="not a course report"):
        load_report(tmp_path / "bad.json")
    assert "Run `make course`" in results_page([], tmp_path / "none")


def test_a_site_shows_this_checkout_s_own_reports_else_the_committed_ones(tmp_path):
    from course_tools.site.results import default_reports, label

    (tmp_path / "docs" / "results").mkdir(parents=True)
    committed = tmp_path / "docs" / "results" / "quick.json"
    committed.write_text("{}")
    assert default_reports(tmp_path) == ([committed], True)
    (tmp_path / "build" / "rehearsal").mkdir(parents=True)
    own = tmp_path / "build" / "rehearsal" / "course-report.json"
    own.write_text("{}")
    assert default_reports(tmp_path) == ([own], False)
    (tmp_path / "build" / "course-report.json").write_text("{}")
    assert default_reports(tmp_path) == ([tmp_path / "build" / "course-report.json", own], False)
    report = {"profile": "quick", "date": "2026-11-27 21:50 UTC", "matmul_gflops": {"before": 195.2}, "notebooks": []}
    assert label(report, committed) == "quick, 2026-11-27, 195 GFLOP/s (results/quick.json)"
    committed.write_text(json.dumps({**report, "machine": "2 cores, AMD EPYC"}))
    page = results_page([committed], tmp_path / "out", committed=True)
    assert "Machine: 2 cores, AMD EPYC." in page and "not a run of this checkout" in page
    assert "not a run of this checkout" not in results_page([committed], tmp_path / "out2")
    both = results_page([committed, committed], tmp_path / "out3")
    assert "Machines: 2 cores, AMD EPYC (quick, 2026-11-27, 195 GFLOP/s (results/quick.json))" in both


@pytest.mark.slow
def test_the_site_builds_offline_from_the_checkout_and_passes_the_browser_check(tmp_path):
    from course_tools.site.build import build
    from course_tools.site.check import check_site, find_browser

    home = build(tmp_path / "site")
    site = home.parent
    lessons = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9]*.ipynb"))
    assert {p.stem for p in (site / "notebooks").glob("*.html")} == set(lessons)
    assert {p.stem for p in (site / "notebooks" / "appendix").glob("*.html")} == {
        p.stem for p in (ROOT / "notebooks" / "appendix").glob("*.md")
    }
    assert (site / "api" / "course_utils.masking.html").is_file() and (site / "results" / "index.html").is_file()
    assert (site / "docs" / "guide" / "troubleshooting.html").is_file()
    assert (site / "_static" / "mathjax" / "tex-chtml.js").is_file()
    masking = (site / "notebooks" / "01_masking.html").read_text()
    assert "cdn.jsdelivr" not in masking and "colab-badge.svg" not in masking  # nothing fetched from elsewhere
    assert "Helpers used here" in masking and "course_utils.masking.mask_tokens" in masking
    assert "Rubric" not in (site / "notebooks" / "appendix" / "01_masking.html").read_text()
    assert "BEGIN SOLUTION" not in masking and "NotImplementedError" in masking  # the student's stubs
    assert list((site / "_downloads").rglob("01_masking.ipynb")), "the student notebook is offered for download"
    assert not (site / "notebooks" / "rubrics").exists()
    # nothing on the students' site leads to a solution: each lesson's page and download is searched for its
    # solutions, hidden tests, rubrics and instructor addresses; every other page for any lesson's rubrics and addresses
    sources = tmp_path / "site-src"
    everyone = []
    for lesson in sorted((ROOT / "notebooks").glob("[0-9]*.ipynb")):
        secrets = secrets_of(nbformat.read(lesson, 4), lesson.stem, lesson.parent, course_release().badge_url(""))
        everyone += [s for s in secrets if s.kind in ("rubric", "address")]
        shown = [
            sources / "notebooks" / lesson.name,
            sources / "downloads" / lesson.name,
            site / "notebooks" / f"{lesson.stem}.html",
        ]
        assert leaks({p.name: readable(p) for p in shown}, secrets) == []
    pages = [p for p in (*sources.rglob("*.md"), *site.rglob("*.html")) if "notebooks/0" not in p.as_posix()]
    assert leaks({str(p.relative_to(tmp_path)): readable(p) for p in pages}, everyone) == []
    if find_browser() is None:
        pytest.skip("no Chromium here (apt install chromium): the site built, its browser check was not run")
    shots = tmp_path / "shots"
    assert check_site(site, shots) == []
    assert len(list(shots.glob("*.png"))) > len(lessons)
    shutil.rmtree(tmp_path / "site-src", ignore_errors=True)
