"""`virtflow config check|docs`: validate a configuration, and document every setting.

`check` reads the configuration exactly as a process would (environment over the YAML file
over the secrets directory), names each bad key, and prints the effective settings with every
secret masked; with `--temporal` it also asks the Temporal server the configuration names
whether it would orphan spares (a cluster removed while it has spares, exit 3). `docs`
renders docs/SETTINGS.md from the settings model, so the reference page cannot drift from the
code.
"""

from __future__ import annotations

import asyncio
import json
import os
import types
import typing
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from pydantic import BaseModel, SecretStr, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined, to_jsonable_python
from pydantic_settings import (
    DotEnvSettingsSource,
    EnvSettingsSource,
    InitSettingsSource,
    NestedSecretsSettingsSource,
    PydanticBaseSettingsSource,
    SecretsSettingsSource,
    YamlConfigSettingsSource,
)
from rich.console import Console
from rich.markup import escape

from placement.errors import field_path
from runtime.clusters import ClusterConfig
from runtime.receivers import ReceiverConfig
from runtime.settings import CONFIG_ENV, DEFAULT_SECRETS_DIR, REPO_ROOT, SECRETS_DIR_ENV, Settings
from runtime.temporal_profile import TemporalProfileError, TemporalProfileSource, origin

EXIT_BAD_CONFIG = 2
EXIT_ORPHANS = 3
MASK = "**********"

config_app = typer.Typer(help="Check and document the configuration.", no_args_is_help=True)
out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def env_name(key: str) -> str:
    return f"VIRTFLOW_{key.upper()}"


def problems(error: ValidationError) -> list[str]:
    """One line per bad key: `key (VIRTFLOW_KEY): what is wrong`."""
    lines = []
    for item in error.errors(include_url=False):
        key = field_path(item["loc"]) or "settings"
        top = str(item["loc"][0]) if item["loc"] else ""
        where = f"{key} ({env_name(top)})" if top in Settings.model_fields else key
        lines.append(f"{where}: {item['msg']}")
    return lines


def load(file: Path | None) -> Settings:
    """The settings from `file` (else VIRTFLOW_CONFIG) and the environment."""
    if file is not None:
        os.environ[CONFIG_ENV] = str(file)
    return Settings()


def masked(settings: Settings) -> dict[str, Any]:
    """The effective settings as plain data, every secret replaced by asterisks."""
    data = settings.model_dump(mode="json")
    # Tokens are dictionary keys: masked alike, they would collapse into one entry.
    data["api_tokens"] = [f"{MASK} ({role})" for role in settings.api_tokens.values()]
    return data


def _label(source: PydanticBaseSettingsSource, key: str) -> str:
    if isinstance(source, TemporalProfileSource):
        return origin(key, source.environ)
    if isinstance(source, YamlConfigSettingsSource):
        return f"file {os.environ[CONFIG_ENV]}"
    # Before the environment: the secrets directory's source is a kind of environment source.
    if isinstance(source, NestedSecretsSettingsSource | SecretsSettingsSource):
        return _secret_file(Path(str(source.secrets_dir)), key)
    if isinstance(source, EnvSettingsSource):
        return f"environment {env_name(key)}"
    if isinstance(source, InitSettingsSource):
        return "arguments"
    return type(source).__name__


def _secret_file(directory: Path, key: str) -> str:
    """The file that set `key`, or the pattern of the files that set its nested keys."""
    name = env_name(key).lower()
    if (directory / name).is_file():
        return f"secrets file {directory / name}"
    return f"secrets files {directory / name}__*"


def origins() -> dict[str, str]:
    """Setting -> where its value came from, for every setting not left at its default;
    the sources are asked in the order the settings ask them."""
    sources = Settings.settings_customise_sources(
        Settings,
        InitSettingsSource(Settings, init_kwargs={}),
        EnvSettingsSource(Settings),
        DotEnvSettingsSource(Settings, env_file=None),
        SecretsSettingsSource(Settings),
    )
    found: dict[str, str] = {}
    for source in sources:
        for key in source():
            found.setdefault(key, _label(source, key))
    return found


@config_app.command("check")
def check(
    file: Annotated[Path | None, typer.Argument(help="YAML settings file")] = None,
    temporal: Annotated[
        bool,
        typer.Option(
            "--temporal",
            help="Also ask the Temporal server it names for running spares of clusters it "
            "does not register (exit 3 naming them, 1 when Temporal cannot be asked)",
        ),
    ] = False,
) -> None:
    """Validate a configuration; print it with secrets masked (exit 2 naming each bad key)."""
    try:
        settings = load(file)
    except ValidationError as error:
        for line in problems(error):
            err.print(f"[red]error:[/] {line}")
        raise typer.Exit(EXIT_BAD_CONFIG) from None
    except (OSError, yaml.YAMLError, TemporalProfileError) as error:
        err.print(f"[red]error:[/] {error}")
        raise typer.Exit(EXIT_BAD_CONFIG) from None
    out.print(yaml.safe_dump(masked(settings), sort_keys=False), end="", markup=False)
    out.print("# where each value came from (every other setting is its default):", markup=False)
    for key, where in origins().items():
        out.print(f"#   {key}: {where}", markup=False)
    out.print("# configuration is valid", style="green")
    if temporal:
        check_spares(settings)


def check_spares(settings: Settings) -> None:
    """Refuse a configuration that no longer registers a cluster with running spares."""
    from temporalio.service import RPCError

    from runtime.connect import connect
    from worker.unregistered_clusters import orphaned_lines, unregistered_spares

    async def look() -> dict[str, list[str]]:
        return await unregistered_spares(await connect(settings), settings)

    where = f"Temporal {settings.temporal_address}, task queue {settings.task_queue}"
    try:
        found = asyncio.run(look())
    except (RPCError, RuntimeError, OSError) as error:
        err.print(f"[red]error:[/] could not ask {where}: {error}")
        raise typer.Exit(1) from None
    if not found:
        out.print(f"# no running spare of an unregistered cluster ({where})", style="green")
        return
    for line in orphaned_lines(found):
        err.print(f"[red]error:[/] {escape(line)}")
    names = ", ".join(found)
    err.print(
        f"[red]refused:[/] a cluster is removed only once its spares have ended ({names}); "
        "release them, or keep the cluster registered (docs/OPERATIONS.md, Many clusters)"
    )
    raise typer.Exit(EXIT_ORPHANS)


@config_app.command("docs")
def docs(
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write here")] = None,
) -> None:
    """Print (or write) the settings reference page, docs/SETTINGS.md."""
    text = settings_reference()
    if output is None:
        out.print(text, end="", markup=False)
    else:
        output.write_text(text)


# --- the reference page -----------------------------------------------------------------


def type_name(annotation: Any) -> str:
    """A reader's name for a field's type: `path`, `secret`, `int | null`, `"a" | "b"`."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is type(None):
        return "null"
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_name(arg) for arg in args)
    if origin is typing.Literal:
        return " | ".join(f'"{arg}"' for arg in args)
    if origin is Annotated:
        is_file = any("file" in repr(meta) for meta in args[1:])
        return "file path" if is_file else type_name(args[0])
    if origin in (list, dict):
        return f"{origin.__name__}[{', '.join(type_name(arg) for arg in args)}]"
    names = {str: "string", int: "int", float: "number", bool: "bool", Path: "path"}
    if annotation is SecretStr:
        return "secret"
    return names.get(annotation, getattr(annotation, "__name__", str(annotation)))


def default_text(field: FieldInfo) -> str:
    if field.default_factory is not None:
        value = field.default_factory()  # type: ignore[call-arg]
    elif field.default is PydanticUndefined:
        return "required"
    else:
        value = field.default
    if isinstance(value, Path) and value.is_absolute() and value.is_relative_to(REPO_ROOT):
        return f"`<install>/{value.relative_to(REPO_ROOT)}`"
    if value is None or value == {} or value == []:
        return "unset" if value is None else "empty"
    plain = to_jsonable_python(value)
    return f"`{plain if isinstance(plain, str) else json.dumps(plain)}`"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def field_table(model: type[BaseModel], env: bool) -> list[str]:
    head = "| setting | environment | type | default | meaning |" if env else None
    rows = [head, "|---|---|---|---|---|"] if head else ["| key | type | default | meaning |"]
    if not env:
        rows.append("|---|---|---|---|")
    for key, field in model.model_fields.items():
        cells = [f"`{key}`"]
        if env:
            cells.append(f"`{env_name(key)}`")
        cells += [
            _cell(type_name(field.annotation)),
            _cell(default_text(field)),
            _cell(field.description or ""),
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def settings_reference() -> str:
    lines = [
        "# Settings reference",
        "",
        "<!-- Generated by `virtflow config docs -o docs/SETTINGS.md`; do not edit by hand. -->",
        "",
        "Every virtflow process (worker, API, receiver, `dev`) reads the same settings, highest",
        "priority first:",
        "",
        "1. environment variables `VIRTFLOW_<SETTING>`; nested keys join with `__`",
        "   (`VIRTFLOW_RECEIVERS__UPGRADECTRL__URL`), lists and maps are JSON",
        '   (`VIRTFLOW_INVENTORIES=\'{"default": "/etc/virtflow/hosts.yaml"}\'`);',
        f"2. the YAML file named by `{CONFIG_ENV}` (or `virtflow --config FILE`);",
        "3. one file per setting in the secrets directory, named like the environment variable",
        f"   (`virtflow_temporal_api_key`): `{SECRETS_DIR_ENV}`, else `{DEFAULT_SECRETS_DIR}`",
        "   when it exists (Docker and Kubernetes secrets);",
        "4. for the `temporal_*` connection settings, Temporal's standard ones as the `temporal`",
        "   CLI and the SDKs read them: `TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`,",
        "   `TEMPORAL_API_KEY`, `TEMPORAL_TLS`, `TEMPORAL_TLS_SERVER_CA_CERT_PATH`,",
        "   `TEMPORAL_TLS_CLIENT_CERT_PATH`, `TEMPORAL_TLS_CLIENT_KEY_PATH`,",
        "   `TEMPORAL_TLS_SERVER_NAME`, over the profile `TEMPORAL_PROFILE` (default `default`) of",
        "   `temporal.toml` (`TEMPORAL_CONFIG_FILE`, else `~/.config/temporalio/temporal.toml`).",
        "",
        "Unknown keys are errors. Secrets (`secret` below) are never printed: they show as",
        f"`{MASK}`. `virtflow config check [FILE]` validates a configuration, names each bad",
        "key and exits 2, or prints the effective settings with secrets masked and where each",
        "value came from.",
        "",
        "## Settings",
        "",
        *field_table(Settings, env=True),
        "",
        "## A receiver (`receivers.<name>`)",
        "",
        "A webhook receiver that requests may name. In YAML under `receivers:`, or",
        "`VIRTFLOW_RECEIVERS__<NAME>__<KEY>` in the environment.",
        "",
        *field_table(ReceiverConfig, env=False),
        "",
        "## A cluster (`clusters.<name>`)",
        "",
        "A workload cluster requests may name (docs/OPERATIONS.md, Many clusters). In YAML",
        "under `clusters:`, or `VIRTFLOW_CLUSTERS` as JSON. Without `clusters`, the one",
        "cluster `cluster_name` is registered from `kubeconfig`, `join_api_server` and",
        "`join_api_server_ca`, with every receiver, inventory and pool and no budget: a",
        "single-cluster site's settings keep working as they are.",
        "",
        *field_table(ClusterConfig, env=False),
        "",
    ]
    return "\n".join(lines)
