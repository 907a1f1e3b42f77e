# Two entry points a new machine needs: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# A failing stage inside a pipe must fail the target.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck pytest bench clean

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

test: lint typecheck pytest

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) demo .pytest_cache .mypy_cache .ruff_cache
