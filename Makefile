# virtflow: the commands a newcomer runs. Every target creates .venv when missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# `make dev` and `make demo` need only the lab extra; everything else installs the dev extra.
LAB_STAMP := $(VENV)/.installed-lab
LOWEST := .venv-lowest

.PHONY: install dev demo test lint lowest unit bench bench-quick clean collections test-libvirt chromium kubectl promtool openapi libvirt guest-image client sshd

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

$(LAB_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[lab]"
	touch $(LAB_STAMP)

install: $(STAMP)

dev: $(LAB_STAMP)  ## run the whole stack on the embedded lab, in the foreground
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/virtflow dev

demo: $(LAB_STAMP)  ## provision and release one spare end to end, then exit
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/virtflow demo

openapi: $(STAMP)  ## regenerate the checked-in openapi.json (a test keeps it current)
	$(BIN)/python -m api.openapi

client: openapi  ## regenerate the typed client virtflow_client/ from openapi.json
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/openapi-python-client generate --path openapi.json \
		--meta none --config openapi-client.yaml --output-path virtflow_client --overwrite

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy .

# Many tests wait on servers, timeouts and guests rather than compute: on 2 cores two workers
# (each with its own Temporal server) left a third of the CPU idle (797 s), three keep it about
# 90% busy (686 s). More gain little: the playbook runs' Ansible modules are then the limit.
TEST_WORKERS ?= 3
test: lint chromium kubectl promtool libvirt sshd guest-image
	PATH="$(CURDIR)/$(BIN):$$PATH" ANSIBLE_COLLECTIONS_PATH="$(CURDIR)/.virtflow/collections" \
		$(BIN)/pytest -n $(TEST_WORKERS) --dist loadgroup --durations=15

# The lowest versions the dependency bounds allow, in a venv of their own, and the tests of the
# pure parts and the HTTP API on them: a lower bound that is not true fails here.
LOWEST_TESTS := tests/placement tests/webhooks tests/runtime tests/activities/test_kube_config.py
lowest: $(STAMP)
	test -x $(LOWEST)/bin/python || $(PYTHON) -m venv $(LOWEST)
	$(BIN)/uv pip install --quiet --python $(LOWEST)/bin/python --resolution lowest-direct -e ".[test]"
	$(LOWEST)/bin/pytest -q -p no:cacheprovider $(LOWEST_TESTS)

chromium:  ## Debian's chromium for the Temporal UI test (installed when missing and root)
	@command -v chromium >/dev/null || [ "$$(id -u)" != 0 ] || \
	  (apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium) || \
	  echo "chromium could not be installed: the Temporal UI test will be skipped"

# The real-VM spare reaches its libvirt host over SSH, as a site's worker does: the tests run
# their own sshd on loopback (own config, port and keys; the system's sshd and its config are
# left alone), so only the package is needed.
sshd:  ## Debian's openssh-server for the tests' loopback sshd (installed when missing and root)
	@command -v sshd >/dev/null || [ -x /usr/sbin/sshd ] || [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openssh-server) || \
	  echo "openssh-server could not be installed: the real-VM spare (over SSH) will be skipped"

kubectl:  ## Debian's kubectl, the judge of the lab Kubernetes API (installed when missing and root)
	@command -v kubectl >/dev/null || [ "$$(id -u)" != 0 ] || \
	  (apt-get update -qq && apt-get install -y -qq --no-install-recommends kubernetes-client) || \
	  echo "kubectl could not be installed: the kubectl tests of the lab API will be skipped"

promtool:  ## Debian's prometheus package for promtool, the alerts' unit tests (installed when missing and root)
	@command -v promtool >/dev/null || [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus) || \
	  echo "prometheus could not be installed: the promtool tests of the alerts will be skipped"

bench: $(STAMP)
	$(BIN)/python bench/placement_speed.py
	$(BIN)/python bench/placement_quality.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python bench/orchestration.py

# The figures virtflow is held to, beside those recorded in docs/BENCHMARKS.md (a few minutes).
bench-quick: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python bench/quick.py

collections: $(STAMP)  ## community.libvirt and community.proxmox, extracted from the PyPI ansible wheel
	$(BIN)/python -m tests.libvirt.collections .virtflow/collections

# The real hypervisor path (Debian, as root): libvirt and qemu from apt, libvirt-python and lxml
# into the venv (community.libvirt needs both), the community collections, qemu running as root
# (starts take 0.5 s instead of 44 s). The test session starts libvirtd and stops it after.
# Without root or apt the libvirt tests are skipped and say why.
LIBVIRT_DEBS := libvirt-daemon-system qemu-system-x86 qemu-utils libvirt-dev pkg-config \
	debootstrap cloud-image-utils genisoimage
libvirt: collections
	@command -v libvirtd >/dev/null && command -v cloud-localds >/dev/null && command -v debootstrap >/dev/null \
	  || [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(LIBVIRT_DEBS)) || \
	  echo "libvirt could not be installed: the real-VM tests will be skipped"
	@! command -v pkg-config >/dev/null || ! pkg-config --exists libvirt || \
	  $(BIN)/python -c "import libvirt, lxml" 2>/dev/null || \
	  $(BIN)/python -m pip install --quiet "libvirt-python>=9" "lxml>=5"
	@[ ! -f /etc/libvirt/qemu.conf ] || grep -q '^user = "root"' /etc/libvirt/qemu.conf || \
	  printf 'user = "root"\ngroup = "root"\n' >> /etc/libvirt/qemu.conf

# The guest image the real-VM spare boots, cached under /var/cache/virtflow by recipe hash.
guest-image: $(STAMP)
	@[ "$$(id -u)" != 0 ] || ! command -v debootstrap >/dev/null || \
	  $(BIN)/python -m lab.guest_image || echo "the guest image could not be built: the real-VM tests will be skipped"

test-libvirt: libvirt sshd guest-image  ## only the real-VM tests
	PATH="$(CURDIR)/$(BIN):$$PATH" ANSIBLE_COLLECTIONS_PATH="$(CURDIR)/.virtflow/collections" \
		$(BIN)/pytest -m libvirt tests/libvirt

clean:
	rm -rf .virtflow $(LOWEST) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
