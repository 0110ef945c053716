# Two commands for everyone (see README.md):
#   make lab    set everything up, then open your copy of the course in JupyterLab
#   make test   set up the same environment and run the whole test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# nbgrader calls `alembic` by name, so the environment's bin/ goes first on PATH.
export PATH := $(abspath $(BIN)):$(PATH)

# JupyterLab refuses to run as root unless told to (containers often are root).
LAB_FLAGS ?= $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: lab test setup student recordings notebooks lock bench

# Your copy of the lessons (student/), made if missing, opened at lesson 01.
lab: student
	$(BIN)/jupyter lab $(LAB_FLAGS) student/01_one_file_read.ipynb

# Add the lessons student/ lacks (exercise answers removed by nbgrader); never overwrites a file.
student: setup
	$(BIN)/python -m labkit.student

test: setup
	$(BIN)/python -m pytest

setup: $(VENV)/.installed

$(VENV)/.installed: requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $@

# Rewrite recordings/ from labkit/scripted.py (a test checks they match).
recordings: setup
	$(BIN)/python -m labkit.scripted

# Re-execute the five lessons in place and save their outputs (never edit outputs by hand).
notebooks: setup
	$(BIN)/jupyter nbconvert --to notebook --execute --inplace \
	  --ExecutePreprocessor.kernel_name=python3 --ExecutePreprocessor.record_timing=False \
	  --ExecutePreprocessor.store_widget_state=False notebooks/0*.ipynb

bench: setup
	$(BIN)/python bench/assembly.py
	$(BIN)/python bench/replay_server.py
	$(BIN)/python bench/widgets.py
	$(BIN)/python bench/loop_copies.py
	$(BIN)/python bench/linear_check.py
	$(BIN)/python bench/autograde.py

# Re-pin every dependency from a fresh environment (run after changing pyproject.toml).
lock:
	rm -rf .lock-venv && $(PYTHON) -m venv .lock-venv
	.lock-venv/bin/python -m pip install --quiet -e '.[course,test]'
	.lock-venv/bin/python -m pip freeze --exclude-editable > requirements.lock
	rm -rf .lock-venv
