"""``python -m course_tools.site check``: the built site in a real browser (headless Chromium, driven by Playwright
through the system's browser; nothing is downloaded).

Every page is served from ``build/site`` on localhost and opened; the check fails a page that logs a console error,
asks for anything outside the site (a CDN: the site must work offline), has no heading, shows an image that did not
decode, leaves math untypeset, or links to a page of the site that does not exist. Lesson 01's "WordPiece" must be
found by the site's search. A screenshot of every page goes to ``build/site-check/``. Where no Chromium is installed
the check says how to get one and skips (exit 0)."""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from pathlib import Path
from urllib.parse import unquote, urlparse

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")
INSTALL = (
    "no Chromium found: on Debian or Ubuntu `sudo apt install chromium`, on macOS `brew install --cask chromium`, "
    "or set $CHROMIUM to a Chrome or Chromium binary; then `pip install -e './tools[site]'` for Playwright"
)
SEARCH_TERM, SEARCH_PAGE = "WordPiece", "notebooks/01_masking.html"
# True where the page has typeset math (MathJax 2 wraps each formula), or has no math to typeset.
MATH_DONE = """() => {
  const math = document.querySelectorAll('div.math, span.math');
  if (math.length === 0) return true;
  return document.querySelectorAll('.MathJax, .MathJax_CHTML, .MathJax_Display, mjx-container').length > 0;
}"""
BROKEN_IMAGES = """() => [...document.images].filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)"""
LINKS = """() => [...document.querySelectorAll('a[href]')].map(a => a.href)"""


def find_browser() -> str | None:
    """The Chromium to drive: ``$CHROMIUM``, else the first of :data:`BROWSERS` on the PATH."""
    named = os.environ.get("CHROMIUM")
    if named:
        return named if Path(named).is_file() else None
    return next((found for name in BROWSERS if (found := shutil.which(name))), None)


def serve(folder: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    """A quiet local web server on ``folder``, on a free port, in a thread."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):  # noqa: D102
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def pages_of(site: Path) -> list[str]:
    """The site's pages (relative paths), without Sphinx's copies of the sources."""
    return sorted(
        p.relative_to(site).as_posix()
        for p in site.rglob("*.html")
        if not p.relative_to(site).parts[0].startswith(("_sources", "_static", "_downloads"))
    )


def check_site(site: Path, out: Path) -> list[str]:
    """Check every page of ``site`` (see the module's docstring); the problems found, one line each."""
    site, out = Path(site), Path(out)
    if not (site / "index.html").is_file():
        raise FileNotFoundError(f"{site} holds no built site (index.html); run `make site` first")
    browser_path = find_browser()
    if browser_path is None:
        print(f"site check skipped: {INSTALL}")
        return []
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("site check skipped: Playwright is missing; `pip install -e './tools[site]'`")
        return []
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    server, base = serve(site)
    problems: list[str] = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=browser_path, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            errors: list[str] = []
            page.on(
                "console",
                lambda m: (
                    errors.append(f"console: {m.text}")
                    if m.type == "error" and "Failed to load resource" not in m.text  # reported with its URL below
                    else None
                ),
            )
            page.on("pageerror", lambda e: errors.append(f"script error: {e}"))
            page.on("response", lambda r: errors.append(f"missing ({r.status}): {r.url}") if r.status >= 400 else None)

            def outside(route):
                errors.append(f"fetched from outside the site: {route.request.url}")
                route.abort()

            page.route(lambda url: not url.startswith(base), outside)
            for name in pages_of(site):
                errors.clear()
                page.goto(base + name, wait_until="load")
                try:
                    page.wait_for_function(MATH_DONE, timeout=15000)
                except Exception:
                    errors.append("math was not typeset")
                if page.locator("h1").count() == 0:
                    errors.append("no heading")
                errors += [f"image did not decode: {src}" for src in page.evaluate(BROKEN_IMAGES)]
                for href in page.evaluate(LINKS):
                    url = urlparse(href)
                    if href.startswith(base) and url.path.endswith(".html"):
                        target = site / unquote(url.path[len(urlparse(base).path) :])
                        if not target.is_file():
                            errors.append(f"broken link: {href[len(base) :]}")
                shot = out / (name.replace("/", "__") + ".png")
                page.screenshot(path=str(shot))
                problems += [f"{name}: {e}" for e in dict.fromkeys(errors)]
            page.goto(f"{base}search.html?q={SEARCH_TERM}", wait_until="load")
            try:
                page.wait_for_selector(f"#search-results a[href*='{SEARCH_PAGE}']", timeout=20000)
            except Exception:
                problems.append(f"search: '{SEARCH_TERM}' did not find {SEARCH_PAGE}")
            page.screenshot(path=str(out / "search.png"))
            browser.close()
    finally:
        server.shutdown()
    pages = len(pages_of(site))
    for line in problems:
        print(line)
    print(f"site check: {pages} pages, {len(problems)} problems; screenshots in {out}")
    return problems
