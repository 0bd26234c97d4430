"""The course website (issue 41): the executed lessons rendered by Sphinx and myst-nb, never re-executed, with the
instructor appendices, the guides, an API reference of ``course_utils`` and a results page from the course report.

    python -m course_tools.site build            # -> build/site/ (student pages: solutions removed)
    python -m course_tools.site build --solutions  # the instructor's site, solutions and rubrics shown
    python -m course_tools.site check            # the built site in headless Chromium -> build/site-check/

:mod:`.lessons` prepares each lesson page (released or instructor version, outputs kept, the helpers it uses),
:mod:`.api` the reference pages, :mod:`.results` the results page, :mod:`.build` lays out the Sphinx project and
runs it, :mod:`.check` opens the result in a browser. Everything works offline: MathJax is served from the build.
"""
