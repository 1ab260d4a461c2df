# `make run` and `make test` set up everything on a fresh Debian machine, then serve / test.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.installed
# Debian packages: Graphviz's `dot` for layout, fonts, venv for Debian's own python3; Chromium, Redis and ffmpeg (ffprobe) only for tests.
APT_RUN := graphviz fonts-dejavu-core python3-venv
APT_PACKAGES := $(APT_RUN) chromium redis-server ffmpeg
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
TORCH_WHEEL_DIR ?= /opt/wheels

.PHONY: run test setup system lint bench vendor clean docker-test compose-test

run:
	$(MAKE) setup APT_PACKAGES="$(APT_RUN)"
	$(PY) -m app

test: setup
	$(PY) -m pytest

setup: system $(STAMP)

system:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[test]'
	@# PyTorch is a test-only cross-check: install it only from a local wheel, never a multi-GB download.
	@if ls $(TORCH_WHEEL_DIR)/torch-2.13.0*.whl >/dev/null 2>&1; then \
	  $(PIP) install -q 'torch==2.13.0' --find-links $(TORCH_WHEEL_DIR); \
	else echo "no local torch 2.13.0 wheel: PyTorch cross-checks will be skipped"; fi
	touch $(STAMP)

lint: setup
	$(PY) -m ruff check engine app sandbox tests bench

bench: setup
	$(PIP) install -q -e '.[bench]'
	$(PY) bench/engine.py
	$(PY) bench/server.py
	$(PY) bench/page.py

# builds and runs the image (docker, and debootstrap where the base image cannot be pulled): not part of `make test`
docker-test: setup
	PYTHON=$(PY) bash scripts/docker_smoke.sh

compose-test: docker-test
	PYTHON=$(PY) bash scripts/compose_smoke.sh

vendor:
	bash scripts/vendor.sh

clean:
	rm -rf $(VENV) .pytest_cache test-artifacts
