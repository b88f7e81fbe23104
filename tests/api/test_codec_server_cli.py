"""The `temporal` CLI shows an encrypted workflow's input decoded through the codec server,
for a holder of one of its tokens only, and a failure's real message the way the docs say."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import shutil
import subprocess
import uuid

import pytest
from pydantic import SecretStr
from temporalio.client import Client, WorkflowFailureError
from temporalio.worker import Worker

from api.codec_server import create_codec_app
from runtime.encryption import EncryptionCodec, data_converter
from runtime.settings import REPO_ROOT
from runtime.temporal_binaries import temporal_cli
from tests.known_secrets import CODEC_TOKEN, PAYLOAD_KEY
from tests.runtime.encrypted_echo import EncryptedEcho, Note
from webhooks.serve import serve_app

TOKEN = CODEC_TOKEN


async def shown_input(client: Client, workflow_id: str, codec_url: str, token: str) -> bytes:
    """The start event's input as `temporal workflow show` gives it (b"" if it cannot)."""
    proc = await asyncio.create_subprocess_exec(
        str(temporal_cli()), "workflow", "show", "--output", "json",
        f"--address={client.service_client.config.target_host}",
        f"--namespace={client.namespace}", f"--workflow-id={workflow_id}",
        f"--codec-endpoint={codec_url}", f"--codec-auth=Bearer {token}",
        # A refused codec call is retried until the command's deadline: keep it short.
        "--command-timeout=2s",
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    output, _ = await proc.communicate()
    try:
        started = json.loads(output)["events"][0]["workflowExecutionStartedEventAttributes"]
    except (ValueError, KeyError):
        return b""  # the CLI refused to show what it could not decode
    return base64.b64decode(started["input"]["payloads"][0]["data"])


async def test_the_cli_decodes_through_the_codec_server_with_a_token(client: Client) -> None:
    codec = EncryptionCodec({"k1": SecretStr(PAYLOAD_KEY)}, "k1")
    sealed = Client(
        client.service_client, namespace=client.namespace, data_converter=data_converter(codec)
    )
    host = f"hv-{uuid.uuid4().hex[:8]}"
    handle = await sealed.start_workflow(
        "EncryptedEcho",
        Note(host=host, message="hello"),
        id=f"encrypted-{uuid.uuid4()}",
        task_queue=f"tq-{uuid.uuid4()}",  # no worker: the input is what is shown
    )
    app = create_codec_app(codec, tokens=[SecretStr(TOKEN)], origins=[])
    try:
        async with serve_app(app) as codec_url:
            allowed = await shown_input(client, handle.id, codec_url, TOKEN)
            refused = await shown_input(client, handle.id, codec_url, "not-a-token")
    finally:
        await handle.terminate()
    assert json.loads(allowed) == {"host": host, "message": "hello"}
    assert host.encode() not in refused


def failure_recipe() -> str:
    """docs/OPERATIONS.md's command that prints the real failure messages."""
    page = (REPO_ROOT / "docs" / "OPERATIONS.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", page, flags=re.S)
    (recipe,) = [b for b in blocks if "encodedAttributes" in b]
    return re.sub(r"\\\n\s*", "", recipe).strip()


async def test_the_real_failure_message_reads_as_the_docs_say(client: Client) -> None:
    if shutil.which("jq") is None:
        pytest.skip("jq not found (Debian's jq): the docs' recipe needs it")
    codec = EncryptionCodec({"k1": SecretStr(PAYLOAD_KEY)}, "k1")
    sealed = Client(
        client.service_client, namespace=client.namespace, data_converter=data_converter(codec)
    )
    host, task_queue = f"hv-{uuid.uuid4().hex[:8]}", f"tq-{uuid.uuid4()}"
    workflow_id = f"encrypted-{uuid.uuid4()}"
    async with Worker(sealed, task_queue=task_queue, workflows=[EncryptedEcho]):
        with pytest.raises(WorkflowFailureError):
            await sealed.execute_workflow(
                EncryptedEcho.run,
                Note(host=host, message="fail"),
                id=workflow_id,
                task_queue=task_queue,
            )
    app = create_codec_app(codec, tokens=[SecretStr(TOKEN)], origins=[])
    async with serve_app(app) as codec_url:
        shell = {
            "PATH": f"{temporal_cli().parent}:{os.environ['PATH']}",
            "TEMPORAL_ADDRESS": client.service_client.config.target_host,
            "TEMPORAL_NAMESPACE": client.namespace,
            "W": workflow_id,
            "CODEC": codec_url,
            "TOKEN": TOKEN,
        }
        proc = await asyncio.create_subprocess_exec(
            "bash", "-o", "pipefail", "-c", failure_recipe(),
            env={**os.environ, **shell}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        output, errors = await proc.communicate()
    assert proc.returncode == 0, errors.decode()
    # The history holds only "Encoded failure"; the recipe reads the sealed message.
    assert output.decode().splitlines() == [f"could not reach {host}"]
