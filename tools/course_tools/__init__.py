"""What builds, runs, tests, rehearses, benchmarks, releases and grades the course *BERT and Transfer Learning*.

The lessons import ``course_utils`` alone; this package is for maintainers, instructors and CI, installed by ``make``
(``pip install -e ./tools``), never by a notebook's first cell. Each module is a command:

    python -m course_tools.run_course          # every notebook headless, the course report   (make course)
    python -m course_tools.build_course_bert   # check the shipped course BERT; --rebuild   (make models)
    python -m course_tools.build_english_mlm   # train and ship the English MLM; --verify     (make models)
    python -m course_tools.rehearsal           # the full profile's code path with stand-ins  (make rehearse)
    python -m course_tools.bench all           # speed and memory goals                       (make bench)
    python -m course_tools.grading release|autograde ...   # student versions; grading submissions
    python -m course_tools.colab_links check|sync          # badges and first cells at the release
    python -m course_tools.shipped_data [verify|ship]      # the datasets that ship with the course
    python -m course_tools.regime_search       # lesson 05's table of fine-tuning regimes
    python -m course_tools.execute_notebook    # one notebook in its own kernel (run_course starts one per notebook)
"""
