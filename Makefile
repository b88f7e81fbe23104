# virtflow: the commands a newcomer runs. Every target creates .venv when missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install dev demo test lint unit bench clean collections

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

dev: $(STAMP)  ## run the whole stack on the embedded lab, in the foreground
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/virtflow dev

demo: $(STAMP)  ## provision and release one spare end to end, then exit
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/virtflow demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy .

test: lint
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python bench/placement_speed.py
	$(BIN)/python bench/placement_quality.py

collections: $(STAMP)  ## community.libvirt and community.proxmox, extracted from the PyPI ansible wheel
	$(BIN)/python -m tests.libvirt.collections .virtflow/collections

clean:
	rm -rf .virtflow build *.egg-info .pytest_cache .mypy_cache .ruff_cache
