# virtflow: the commands a newcomer runs. Every target creates .venv when missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install dev demo test lint unit bench clean collections test-libvirt chromium kubectl openapi

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

openapi: $(STAMP)  ## regenerate the checked-in openapi.json (a test keeps it current)
	$(BIN)/python -m api.openapi

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy .

test: lint chromium kubectl
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/pytest

chromium:  ## Debian's chromium for the Temporal UI test (installed when missing and root)
	@command -v chromium >/dev/null || [ "$$(id -u)" != 0 ] || \
	  (apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium) || \
	  echo "chromium could not be installed: the Temporal UI test will be skipped"

kubectl:  ## Debian's kubectl, the judge of the lab Kubernetes API (installed when missing and root)
	@command -v kubectl >/dev/null || [ "$$(id -u)" != 0 ] || \
	  (apt-get update -qq && apt-get install -y -qq --no-install-recommends kubernetes-client) || \
	  echo "kubectl could not be installed: the kubectl tests of the lab API will be skipped"

bench: $(STAMP)
	$(BIN)/python bench/placement_speed.py
	$(BIN)/python bench/placement_quality.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python bench/orchestration.py

collections: $(STAMP)  ## community.libvirt and community.proxmox, extracted from the PyPI ansible wheel
	$(BIN)/python -m tests.libvirt.collections .virtflow/collections

# A real qemu domain through the libvirt playbook (Debian, as root): libvirt and qemu from apt,
# libvirt-python into the venv, libvirtd started by hand with qemu running as root (fast starts).
test-libvirt: collections
	apt-get install -y --no-install-recommends libvirt-daemon-system qemu-system-x86 libvirt-dev pkg-config
	$(BIN)/python -m pip install --quiet "libvirt-python>=9"
	grep -q '^user = "root"' /etc/libvirt/qemu.conf || printf 'user = "root"\ngroup = "root"\n' >> /etc/libvirt/qemu.conf
	pgrep -x virtlogd >/dev/null || virtlogd -d
	pgrep -x libvirtd >/dev/null || libvirtd -d
	PATH="$(CURDIR)/$(BIN):$$PATH" ANSIBLE_COLLECTIONS_PATH="$(CURDIR)/.virtflow/collections" \
		$(BIN)/pytest -m libvirt tests/libvirt

clean:
	rm -rf .virtflow build *.egg-info .pytest_cache .mypy_cache .ruff_cache
