# Two entry points a new machine needs: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# A failing stage inside a pipe must fail the target.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck pytest bench clean sdk-venv

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

# The main job, offline: simulate -> grade -> optimize -> export, then push to a store
# kept under demo/ (not ~/.whileai). Every file it writes lands in demo/.
demo: $(STAMP)
	@mkdir -p demo
	$(BIN)/whileai simulate specs/orders --mode rl --budget 400 --reproducible \
	  | $(BIN)/whileai grade -o demo/graded.jsonl
	$(BIN)/whileai report demo/graded.jsonl
	$(BIN)/whileai optimize demo/graded.jsonl --mode rl --report demo/optimize.json -o demo/train.jsonl
	$(BIN)/whileai export demo/train.jsonl --format trl -o demo/train.trl.jsonl
	WHILEAI_HOME=demo/home $(BIN)/whileai push demo/train.jsonl --name orders-rl-demo --mode rl
	WHILEAI_HOME=demo/home $(BIN)/whileai datasets

lint: $(STAMP)
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest

# The original SDK, pinned, in a venv of its own: the compatibility tests drive `whileai
# serve` with it (tests/server/test_sdk_compat.py). Built once (stamp), never in git; where
# PyPI cannot be reached the tests that need it skip and say why.
SDK_VENV ?= .venv-sdk
SDK_VERSION := 0.131
SDK_STAMP := $(SDK_VENV)/.installed-$(SDK_VERSION)

$(SDK_STAMP):
	rm -rf $(SDK_VENV)
	$(PYTHON) -m venv $(SDK_VENV)
	if $(SDK_VENV)/bin/python -m pip install -q 'whileai==$(SDK_VERSION)'; then \
	  touch $(SDK_STAMP); \
	else \
	  echo "sdk-venv: could not install whileai==$(SDK_VERSION); its compatibility tests will skip" >&2; \
	  rm -rf $(SDK_VENV); \
	fi

sdk-venv: $(SDK_STAMP)

test: sdk-venv lint typecheck pytest

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) $(SDK_VENV) demo .pytest_cache .mypy_cache .ruff_cache
