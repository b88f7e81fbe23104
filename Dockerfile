# One image for every virtflow process: `virtflow worker`, `virtflow api`, `virtflow receiver`.
# The worker can provision: the playbooks ship in the package, the libvirt and Proxmox variants'
# collections and Python needs are installed at pinned versions (deploy/image/), and tini is
# PID 1, reaping the ssh ControlPersist children Ansible leaves and passing SIGTERM on to the
# worker, which then lets running playbooks finish (graceful_shutdown_seconds).

# Build: the wheel, its provider extras (libvirt-python compiles against libvirt's headers),
# and the collections, into one virtualenv.
FROM python:3.11-slim-bookworm AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN apt-get update \
    && apt-get install --yes --no-install-recommends gcc libc6-dev pkg-config libvirt-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY placement placement
COPY contracts contracts
COPY workflows workflows
COPY activities activities
COPY webhooks webhooks
COPY runtime runtime
COPY worker worker
COPY api api
COPY cli cli
COPY lab lab
COPY playbooks playbooks
COPY hypervisors hypervisors
COPY provisioners provisioners
COPY virtflow_client virtflow_client
COPY deploy/image deploy/image
RUN python -m venv /opt/virtflow \
    && /opt/virtflow/bin/pip install --constraint deploy/image/constraints.txt ".[libvirt,proxmox,encryption]" \
    && /opt/virtflow/bin/ansible-galaxy collection install \
        --requirements-file deploy/image/collections.yml \
        --collections-path /opt/virtflow/collections

FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/opt/virtflow/bin:$PATH \
    ANSIBLE_COLLECTIONS_PATH=/opt/virtflow/collections \
    HOME=/var/lib/virtflow \
    VIRTFLOW_STATE_DIR=/var/lib/virtflow \
    VIRTFLOW_LOG_FORMAT=json
# tini: PID 1. openssh-client: Ansible and qemu+ssh reach the hosts over it. libvirt0 and
# libvirt-clients: the libvirt bindings' library and `virsh` (the playbooks read IPs with it).
RUN apt-get update \
    && apt-get install --yes --no-install-recommends tini openssh-client libvirt0 libvirt-clients \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --user-group --home-dir /var/lib/virtflow --create-home virtflow
COPY --from=build /opt/virtflow /opt/virtflow

USER 10001:10001
WORKDIR /var/lib/virtflow
# Without -g: the signal goes to the worker only, not to the playbooks it runs, so they finish.
ENTRYPOINT ["tini", "--", "virtflow"]
CMD ["--help"]
