# Two commands do everything on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.tuner-installed
DEMO_NAME ?= demo-$(shell date +%Y%m%d-%H%M%S)
# Compiled modules are kept (in __pycache__, ignored by git) even where the environment says not to write them:
# without them every pytest process rewrites and compiles each test module again (6 of its 14 s of collection
# here) and every Ray worker compiles the tuner modules it imports.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: venv demo test test-fast test-ray-matrix lint docs bench bench-peers bench-gpu image clean

# (Re)install only when .venv is missing or pyproject.toml changed since the last install.
venv:
	@want="$$(sha256sum pyproject.toml | cut -c1-64) $$($(PYTHON) -c 'import sys; print(sys.version_info[:2])')"; \
	if [ -x $(BIN)/python ] && [ "$$(cat $(STAMP) 2>/dev/null)" = "$$want" ]; then \
		echo "venv: $(VENV) is current"; \
	else \
		echo "venv: installing into $(VENV) (a few minutes the first time)"; \
		rm -f $(STAMP); \
		[ -x $(BIN)/python ] || $(PYTHON) -m venv $(VENV) || exit 1; \
		$(BIN)/python -m pip install --quiet --upgrade pip || exit 1; \
		$(BIN)/python -m pip install --quiet -e '.[dev,gpu,bench]' || exit 1; \
		echo "$$want" > $(STAMP); \
	fi

# tuner's own defaults (scheduler and searcher chosen by auto), on a set small enough for about a minute on 2 cores;
# the sweep writes its report.html at the end.
demo: venv
	$(BIN)/tuner sweep --space cifar_small --dataset synthetic --synthetic-size 1500 \
		--num-samples 8 --max-epochs 3 --storage-path ./results --name $(DEMO_NAME)

# Two tiers: the fast one (unit tests and instant trials on a real Ray) first, then the slow one (CIFAR
# sweeps, a real Ray head, kill -9 and resume, and tests that wait on real time: timeouts, budgets, signals).
# TEST_WORKERS pytest processes share the tests (pytest-xdist), each with a Ray of its own: much of a real
# sweep's time is waiting (worker starts, timers, signals), which a second process fills; a module's tests
# stay in one process, so a module's shared sweeps run once.
TEST_WORKERS ?= 2
# Each tier ends with its 20 slowest tests: where a slow suite's time goes is printed, not guessed.
test: venv
	$(BIN)/python -m pytest tests -m "not slow" -n $(TEST_WORKERS) --dist loadscope --durations 20
	$(BIN)/python -m pytest tests -m slow -n $(TEST_WORKERS) --dist loadscope --durations 20

test-fast: venv
	$(BIN)/python -m pytest tests -m "not slow" -n $(TEST_WORKERS) --dist loadscope

# The unit tier and a conformance smoke on each Ray version tuner is tested on (2.50.0, 2.55.1, 2.60.0),
# each installed beside .venv; a side-by-side summary at the end (tests/ray_matrix.sh).
test-ray-matrix: venv
	bash tests/ray_matrix.sh

# The linter over the repo, the formatter and the type checker over tuner/ (pyproject.toml says where).
lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# The user guide (docs/, mkdocs.yml) as a static site in site/. --strict makes every warning fail the build:
# a link to a missing page or heading, a page left out of the nav.
docs: venv
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict

bench: venv
	$(BIN)/python benchmarks/bench_trainable.py
	$(BIN)/python benchmarks/bench_overhead.py
	$(BIN)/python benchmarks/bench_scale.py --sizes 100,400,1600 --rounds 3
	$(BIN)/python benchmarks/bench_replay.py
	$(BIN)/python benchmarks/bench_search.py

# Syne Tune 0.13.0 (the last release with ASHA in both forms, MOBSTER, Hyper-Tune, DyHPO and synchronous BOHB),
# for benchmarks/bench_protocol.py's peers, in a venv of its own: it pins numpy < 1.27, which tuner's does not.
PEERS := .venv-peers
bench-peers:
	@[ -x $(PEERS)/bin/python ] || $(PYTHON) -m venv $(PEERS)
	$(PEERS)/bin/python -m pip install --quiet 'syne-tune==0.13.0' 'numpy<1.27' 'scipy<1.14' 'scikit-learn<1.6' statsmodels autograd onnxruntime
	$(PEERS)/bin/python -c "import syne_tune, onnxruntime; print('peers: syne-tune', syne_tune.__version__)"

# On a machine with a CUDA GPU: the gpu-marked tests and the GPU benchmarks, logs in gpu-logs/.
bench-gpu: venv
	PYTHON=$(BIN)/python bash benchmarks/gpu_suite.sh

# Build docker/Dockerfile with podman (no Docker engine needed; as root) on a local Debian base, then run
# `tuner spaces` and a two-trial synthetic sweep inside the image. Its cache is .image/ (docker/image.sh).
image:
	bash docker/image.sh

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache *.egg-info
