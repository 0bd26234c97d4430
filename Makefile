# The course's two commands:  `make course` (run every notebook) and `make test` (run the tests).
# Both create the environment in .venv first if it is missing or older than pyproject.toml.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# torch is pinned only here: 2.13.0 is the local CPU build (a looser spec would pull CUDA wheels).
TORCH  ?= torch==2.13.0

.PHONY: course test env refresh-notebooks bench clean

env: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "$(TORCH)"
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

# The main job: every notebook headless in the quick profile -> build/notebooks/*.ipynb + build/course-report.json
course: $(STAMP)
	$(PY) -m course_utils.run_course --profile quick --out build

# Unit tests, the notebooks under nbval, offline and in the quick profile.
test: $(STAMP)
	COURSE_PROFILE=quick HF_HUB_OFFLINE=1 COURSE_QUIET=1 $(PY) -m pytest

# Maintainers: re-execute the notebooks offline and commit them with their outputs.
refresh-notebooks: $(STAMP)
	HF_HUB_OFFLINE=1 $(PY) -m course_utils.run_course --profile quick --out build --inplace

# Speed and memory targets (never timed inside unit tests).
bench: $(STAMP)
	HF_HUB_OFFLINE=1 $(PY) -m course_utils.bench all

clean:
	rm -rf build
