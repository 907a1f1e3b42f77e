# Two entry points a new machine needs: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# A failing stage inside a pipe must fail the target.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
# Two installs, two stamps: the demo needs the package alone; the tests add the dev
# extras (Ray, Playwright, moto, PostgreSQL's driver, the docs tooling...).
DEMO_STAMP := $(VENV)/.installed-demo
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck docs pytest bench clean sdk-venv side

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(DEMO_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $(DEMO_STAMP)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP) $(DEMO_STAMP)

# The main job, offline: simulate -> grade -> optimize -> export, then push to a store
# kept under demo/ (not ~/.whileai). Every file it writes lands in demo/.
demo: $(DEMO_STAMP)
	@mkdir -p demo
	$(BIN)/whileai simulate specs/orders --mode rl --budget 400 --reproducible \
	  | $(BIN)/whileai grade -o demo/graded.jsonl
	$(BIN)/whileai report demo/graded.jsonl
	$(BIN)/whileai optimize demo/graded.jsonl --mode rl --report demo/optimize.json -o demo/train.jsonl
	$(BIN)/whileai export sft demo/train.jsonl --format trl --spec specs/orders -o demo/train.trl.jsonl
	WHILEAI_HOME=demo/home $(BIN)/whileai push demo/train.jsonl --name orders-rl-demo --mode rl
	WHILEAI_HOME=demo/home $(BIN)/whileai datasets

lint: $(STAMP)
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy

# The documentation site (docs/, mkdocs.yml): strict, so a broken link, a page left out
# of the nav or a reference that no longer resolves fails the build. The CLI reference and
# the environment-variable table are generated from the command tree as it builds.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# One worker per core, four at most; `make pytest PYTEST_ARGS=` runs it in one process.
PYTEST_ARGS ?= -n auto --maxprocesses 4
pytest: $(STAMP)
	$(BIN)/pytest $(PYTEST_ARGS)

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


# The side environment the export tests run the exported RL environment in: verifiers
# (Python >= 3.11, not in .venv) with whileai installed from this tree, and TRL's wheel
# without its dependencies (the tests read its chat templates as files, never import it).
# Built once; where no Python >= 3.11 exists it records why, and those tests skip.
SIDE_VF := side/verifiers
$(SIDE_VF)/.installed: pyproject.toml
	rm -rf $(SIDE_VF)/venv $(SIDE_VF)/skip && mkdir -p $(SIDE_VF)
	py=$$(for p in $(PYTHON) python3.13 python3.12 python3.11; do \
	  $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null && { echo $$p; break; }; \
	done); \
	if [ -z "$$py" ]; then echo "no Python >= 3.11 found for verifiers" > $(SIDE_VF)/skip; else \
	  $$py -m venv $(SIDE_VF)/venv && \
	  $(SIDE_VF)/venv/bin/python -m pip install -q --upgrade pip && \
	  $(SIDE_VF)/venv/bin/python -m pip install -q 'verifiers>=0.4,<0.5' -e . && \
	  $(SIDE_VF)/venv/bin/python -m pip install -q --no-deps 'trl>=1.0,<2'; \
	fi
	touch $@

# A fresh environment with nothing of this project in it: the RL environment `export --env`
# writes (from the golden graded rows), installed with plain pip from the folder, and
# verifiers. tests/export/test_env_fresh_venv.py runs vf-eval in it and checks the folder
# is what the exporter writes today (a stale one skips and says to rebuild).
SIDE_ENV := side/envfresh
$(SIDE_ENV)/.installed: pyproject.toml $(shell find whileai_core -name '*.py' -o -name '*.json') | $(STAMP)
	rm -rf $(SIDE_ENV) && mkdir -p $(SIDE_ENV)
	py=$$(for p in $(PYTHON) python3.13 python3.12 python3.11; do \
	  $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null && { echo $$p; break; }; \
	done); \
	if [ -z "$$py" ]; then echo "no Python >= 3.11 found for verifiers" > $(SIDE_ENV)/skip; else \
	  $(BIN)/whileai export tests/golden/grade/orders-rl.jsonl --env $(SIDE_ENV)/orders_env \
	    --spec specs/orders --band 0,1 --report $(SIDE_ENV)/export-report.json && \
	  $$py -m venv $(SIDE_ENV)/venv && \
	  $(SIDE_ENV)/venv/bin/python -m pip install -q --upgrade pip && \
	  $(SIDE_ENV)/venv/bin/python -m pip install -q './$(SIDE_ENV)/orders_env[rl]'; \
	fi
	touch $@

# OpenLLMetry's flattened `gen_ai.prompt.N.*` spans are its 0.53 release; 0.62 (in .venv)
# sends the current conventions under the same module name, so 0.53 is laid over .venv
# here, for the one test process that puts it first on the path (tests/traces).
SIDE_LL := side/openllmetry
$(SIDE_LL)/.installed: pyproject.toml | $(STAMP)
	rm -rf $(SIDE_LL) && mkdir -p $(SIDE_LL)
	$(BIN)/python -m pip install -q --no-deps --target $(SIDE_LL)/lib 'opentelemetry-instrumentation-openai==0.53.4'
	touch $@

# TRL and torch for the GRPO test (tests/export/test_grpo.py): the `train` extra in a venv
# of its own, so .venv stays light. torch comes from PyPI; pip takes a CPU build where the
# machine's wheel store has one (torch<2.14 here: the CUDA wheels are ~5 GB more).
SIDE_TRAIN := side/train
$(SIDE_TRAIN)/.installed: pyproject.toml
	rm -rf $(SIDE_TRAIN) && mkdir -p $(SIDE_TRAIN)
	$(PYTHON) -m venv $(SIDE_TRAIN)/venv
	$(SIDE_TRAIN)/venv/bin/python -m pip install -q --upgrade pip
	$(SIDE_TRAIN)/venv/bin/python -m pip install -q '.[train]' 'torch<2.14'
	touch $@

side: $(SIDE_VF)/.installed $(SIDE_ENV)/.installed $(SIDE_LL)/.installed $(SIDE_TRAIN)/.installed

test: sdk-venv side lint typecheck docs pytest

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) $(SDK_VENV) side demo site .pytest_cache .mypy_cache .ruff_cache
