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
	$(BIN)/python -m labkit lessons student

test: setup
	$(BIN)/python -m pytest

# uv installs the same pins as pip, several times faster; it is used when it is on PATH
# (`pip install uv`, or see its documentation), else pip. Each step prints one line; the
# installers' output goes to .venv/setup.log, shown (without pip's "Location ... is ignored"
# noise) when a step fails.
UV ?= $(shell command -v uv 2>/dev/null)
SETUP_LOG := $(VENV)/setup.log
ifneq ($(UV),)
INSTALLER := uv
install = $(UV) pip install --quiet --python $(BIN)/python $(1) >>$(SETUP_LOG) 2>&1
else
INSTALLER := pip
install = $(BIN)/python -m pip install --quiet --disable-pip-version-check $(1) >>$(SETUP_LOG) 2>&1
endif
show_log = { grep -v "is ignored: it is neither" $(SETUP_LOG) >&2; exit 1; }

setup: $(VENV)/.installed

$(VENV)/.installed: requirements.lock pyproject.toml
	@echo "setup: creating $(VENV)/ with $$($(PYTHON) --version)"
	@$(PYTHON) -m venv $(VENV) && : > $(SETUP_LOG)
	@echo "setup: installing the $$(grep -c '==' requirements.lock) pinned packages of requirements.lock with $(INSTALLER)"
	@$(call install,-r requirements.lock) || $(show_log)
	@echo "setup: installing labkit from this clone (editable)"
	@$(call install,--no-deps -e .) || $(show_log)
	@touch $@
	@echo "setup: done; run things with $(BIN)/python (its log: $(SETUP_LOG))"

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

# Re-pin every dependency from a fresh environment (run after changing pyproject.toml).
lock:
	rm -rf .lock-venv && $(PYTHON) -m venv .lock-venv
	.lock-venv/bin/python -m pip install --quiet -e '.[course,test]'
	.lock-venv/bin/python -m pip freeze --exclude-editable > requirements.lock
	{ sed -n 1,2p binder/requirements.txt; cat requirements.lock; } > binder/requirements.txt.new
	mv binder/requirements.txt.new binder/requirements.txt
	rm -rf .lock-venv
