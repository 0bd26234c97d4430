# The course's commands: `make course` (run every notebook), `make test` (run the tests), `make lab` (open the lessons).
# Each creates the environment in .venv first if it is missing or older than pyproject.toml.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# torch is pinned only here, and comes as the CPU build: on Linux the package index's default torch wheel is the CUDA
# build with several GB of CUDA libraries, so it comes from PyTorch's CPU index. On a machine with an NVIDIA driver
# (nvidia-smi), or where that index cannot be reached (a local wheelhouse, as on the course's CI), pip's own sources
# are used as they are. macOS and Windows wheels on the package index are CPU builds already.
TORCH       ?= torch==2.13.0
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
EXTRAS      ?= offline,lab
# The maintainers' and instructors' package (tools/pyproject.toml): the runner, tests, linters, benchmarks, rehearsal
# and grading, and the website's builder (extra `site`). Installed beside course_utils by every target here; never by
# a notebook.
TOOLS       ?= ./tools[dev,site]
# `make test` plays a student without the offline mirror: only the datasets the registry takes from the hub are
# visible, copied from ../shared/data into this folder, which stands in for the hub (tests/hub_standin.py).
HUB_STANDIN ?= build/hub-standin

.PHONY: course models test unit lint rehearse lab env refresh-notebooks bench site site-check clean

env: $(STAMP)

$(STAMP): pyproject.toml tools/pyproject.toml
	@$(PYTHON) -c "import sys; sys.exit(sys.version_info < (3, 11))" 2>/dev/null || { echo "The course needs Python 3.11 or newer; $(PYTHON) is older or missing. Name another, e.g. make PYTHON=python3.12 lab"; exit 1; }
	@$(PYTHON) -m venv $(VENV) || { echo "Could not create $(VENV). On Debian or Ubuntu: sudo apt install python3-venv"; exit 1; }
	$(PY) -m pip install --quiet --upgrade pip
	@if [ "$$(uname -s)" = Linux ] && ! command -v nvidia-smi >/dev/null 2>&1 && \
	    $(PY) -c "import socket, urllib.parse as u; h = u.urlparse('$(TORCH_INDEX)'); socket.create_connection((h.hostname, h.port or 443), 3)" 2>/dev/null; \
	then echo "installing $(TORCH) (CPU build) from $(TORCH_INDEX)"; \
	     $(PY) -m pip install --quiet "$(TORCH)" --index-url "$(TORCH_INDEX)"; \
	else echo "installing $(TORCH) from pip's configured sources"; \
	     $(PY) -m pip install --quiet "$(TORCH)"; fi
	$(PY) -m pip install --quiet -e ".[$(EXTRAS)]" -e "$(TOOLS)"
	touch $(STAMP)

# The two models the course trained and ships (course_utils/data/models): checked, never trained here. The course
# BERT (lessons 02, 03a, 05, 07) and the English MLM on MiniLM's body (06, 08); `--rebuild` retrains them (maintainers).
models: $(STAMP)
	$(PY) -m course_tools.build_course_bert
	$(PY) -m course_tools.build_english_mlm --verify

# The main job: every notebook headless in the quick profile -> build/notebooks/*.ipynb + build/course-report.json
course: models
	$(PY) -m course_tools.run_course --profile quick --out build

# Every tier: the linters, the unit tests (fast and slow), the notebooks under nbval (offline, in the quick profile,
# without the mirror: see HUB_STANDIN) and the rehearsal of the full profile (below), one test per notebook.
# They run in LANES lanes (pytest-xdist), each on its own share of the cores, longest work first (conftest.py),
# after the lessons whose claims time work on every core (07), which run alone first. LANES=0: all in one process.
LANES ?= 2
TEST_ENV := COURSE_PROFILE=quick HF_HUB_OFFLINE=1 COURSE_QUIET=1 COURSE_HUB_STANDIN=$(HUB_STANDIN) \
            COURSE_TEST_TIMELINE=build/test-timeline.jsonl
test: lint models
	@mkdir -p build && rm -f build/test-timeline.jsonl
	$(TEST_ENV) $(PY) -m pytest -m every_core notebooks
	$(TEST_ENV) $(PY) -m pytest -m "not every_core" -n $(LANES) tests notebooks

# The fast unit tests alone (what a plain `pytest` runs): no notebook, nothing marked slow.
unit: $(STAMP)
	$(PY) -m pytest

# Format and lint (ruff), and the package's layers (import-linter: the lessons' package never imports the tools, and
# its modules import downwards only; .importlinter).
lint: $(STAMP)
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports

# The full profile's code path, offline on CPU: random-weight stand-ins of its hub checkpoints (built into
# build/rehearsal/hf-cache), datasets from the offline mirror (../shared/data), steps and examples capped.
rehearse: models
	COURSE_QUIET=1 $(PY) -m course_tools.rehearsal --out build/rehearsal

# JupyterLab on the lessons, in the course's environment.
lab: $(STAMP)
	$(PY) -m jupyter lab notebooks

# Maintainers: re-execute the notebooks offline, as `make test` sees them (the hub's stand-in, no other mirror data),
# and commit them with their outputs and the run's report (docs/results/quick.json: the site's results page).
refresh-notebooks: models
	$(PY) tests/hub_standin.py $(HUB_STANDIN)
	COURSE_DATA_DIR="$(CURDIR)/$(HUB_STANDIN)" HF_HUB_OFFLINE=1 $(PY) -m course_tools.run_course --profile quick --out build --inplace
	mkdir -p docs/results && cp build/course-report.json docs/results/quick.json

# Speed and memory targets (never timed inside unit tests).
bench: $(STAMP)
	HF_HUB_OFFLINE=1 $(PY) -m course_tools.bench all

# The course's website in build/site/: the executed lessons (build/notebooks/ after `make course`, else the committed
# ones; never re-executed), the appendices, the guides, the API reference and the results page (from
# build/course-report.json where it exists). SOLUTIONS=1 builds the instructor's site, solutions shown.
site: $(STAMP)
	$(PY) -m course_tools.site build $(if $(SOLUTIONS),--solutions)

# Every page of the site in headless Chromium (the system's: `apt install chromium`); screenshots in build/site-check/.
site-check: site
	$(PY) -m course_tools.site check

clean:
	rm -rf build
