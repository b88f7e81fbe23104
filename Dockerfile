# One image for every virtflow process: `virtflow worker`, `virtflow api`, `virtflow receiver`.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTFLOW_PLAYBOOK_DIR=/opt/virtflow/playbooks \
    VIRTFLOW_STATE_DIR=/var/lib/virtflow \
    VIRTFLOW_LOG_FORMAT=json

# ssh: Ansible reaches real hypervisors over it.
RUN apt-get update \
    && apt-get install --yes --no-install-recommends openssh-client \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/virtflow
COPY pyproject.toml README.md ./
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
RUN pip install . \
    && useradd --system --uid 10001 --home-dir /var/lib/virtflow --create-home virtflow

USER virtflow
WORKDIR /var/lib/virtflow
ENTRYPOINT ["virtflow"]
CMD ["--help"]
