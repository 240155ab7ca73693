"""Hypothesis fuzzing of every parser of outside text: never a crash, only mcpctl's errors.

The config loader and validator (text as a person might mangle it), the placeholder parser,
the registry record parser and its conversion to an entry, the parse of each of the render
targets (tests/adversarial/README.md lists them; mcpctl/render/targets.py is the table) and
the import path that reads another tool's file. The property everywhere: a result, or an
exception of the documented tree in mcpctl/errors.py (McpctlError), nothing else.

Example counts are kept low enough for the whole suite to stay fast; CI runs Hypothesis's
"ci" profile (CI=true: derandomized), so a failure there replays.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import tomli_w
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpctl import load_config
from mcpctl.config.model import ServerEntry
from mcpctl.config.placeholders import (
    find_placeholders,
    forget_resolved,
    near_misses,
    resolve_text,
)
from mcpctl.config.validate import validate_text
from mcpctl.errors import McpctlError
from mcpctl.registry import entry_from_server_json, record_from_json
from mcpctl.render import parse
from mcpctl.render.base import Places
from mcpctl.render.importing import client_targets, read_source
from mcpctl.render.targets import TARGET_MODULES, target_names
from tests.config.test_model import mutated

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def mcpctl_errors_only(fn: Callable[[], Any]) -> Any:
    """``fn()``, or ``None`` when it raised one of mcpctl's documented errors."""
    try:
        return fn()
    except McpctlError as exc:
        assert exc.message and isinstance(exc.code, str)
        return None


# --- the config loader and validator (moved from tests/config/test_loader.py) ----------


documents = st.one_of(
    st.dictionaries(st.text(max_size=6), mutated(), max_size=4).map(json.dumps),
    st.dictionaries(st.text(max_size=6), mutated(), max_size=3).map(
        lambda d: json.dumps(d, indent=2)
    ),
)


@st.composite
def mangled(draw: st.DrawFn) -> str:
    text = draw(documents)
    for _ in range(draw(st.integers(0, 3))):
        if not text:
            break
        i = draw(st.integers(0, len(text) - 1))
        op = draw(st.sampled_from(["delete", "insert", "duplicate"]))
        if op == "delete":
            text = text[:i] + text[i + 1 :]
        elif op == "insert":
            text = text[:i] + draw(st.sampled_from(list('{}[],:"\\ \n0aé\x00\ud800'))) + text[i:]
        else:
            j = draw(st.integers(i, len(text)))
            text = text[:j] + text[i:j] + text[j:]
    return text


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(mangled(), st.text(max_size=50)))
def test_loader_and_validator_never_crash(tmp_path_factory, text: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("fuzz") / "external-mcps.json"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    result = load_config(path)
    assert all(p.severity in ("error", "warning") for p in result.problems)
    report = validate_text(text, path=path)
    assert all(p.message for p in report.problems)
    # The loader only loads what the validator finds no model error in. Literal secrets and
    # control characters in values are errors of policy, not of the model: the lenient
    # loader keeps such entries (the output escapes the characters; writes refuse both).
    tolerated = ("plaintext_secret", "named_literal_secret", "duplicate_key", "control_character")
    model_errors = {p.path.split(".")[0].split("[")[0] for p in report.errors
                    if p.code not in tolerated}  # fmt: skip
    assert not (set(result.config.entries) & model_errors)


# --- placeholders ---------------------------------------------------------------------

placeholder_text = st.lists(
    st.sampled_from([*"${}:-_AZaz09 \\\n\x00é\ud800", "${", ":-", "${A", "${A:-"]), max_size=30
).map("".join) | st.text(max_size=40)


@settings(max_examples=300, deadline=None)
@given(text=placeholder_text, policy=st.sampled_from(["empty", "skip", "error"]))
def test_placeholders_parse_and_resolve_anything(text: str, policy: Any) -> None:
    for ph in find_placeholders(text):
        assert text[ph.start : ph.end].startswith("${") and text[ph.end - 1] == "}"
    assert all(isinstance(m, str) for m in near_misses(text))
    environ = {"A": "value-a", "AZ": ""}
    try:
        out = mcpctl_errors_only(lambda: resolve_text(text, environ=environ, policy=policy))
    finally:
        forget_resolved()  # what was resolved here is no secret of the tests that follow
    assert out is None or isinstance(out, str)


# --- registry records -------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)
texts = st.text(max_size=12) | st.sampled_from(["", "1.0.0", "{x}", "\x1b[2J", "io.a/b", "\ud800"])
argument = st.fixed_dictionaries(
    {}, optional={"type": st.sampled_from(["positional", "named", "x"]) | json_values,
                  "name": texts | json_values, "value": texts | json_values,
                  "default": texts, "isRequired": st.booleans() | json_values,
                  "valueHint": texts, "variables": json_values},
)  # fmt: skip
package = st.fixed_dictionaries(
    {}, optional={
        "registryType": st.sampled_from(["npm", "pypi", "oci", "nuget", "mcpb", "x"]) | json_values,
        "identifier": texts | json_values, "version": texts | json_values,
        "runtimeHint": texts | json_values, "registryBaseUrl": texts,
        "transport": st.fixed_dictionaries({}, optional={
            "type": st.sampled_from(["stdio", "sse", "streamable-http"]) | json_values,
            "url": texts}) | json_values,
        "runtimeArguments": st.lists(argument, max_size=2) | json_values,
        "packageArguments": st.lists(argument, max_size=2) | json_values,
        "environmentVariables": st.lists(argument, max_size=2) | json_values,
    },
)  # fmt: skip
remote = st.fixed_dictionaries(
    {}, optional={"type": st.sampled_from(["sse", "streamable-http", "x"]) | json_values,
                  "url": st.sampled_from(["https://h.example/{r}/mcp", "http://x", ""]) | texts,
                  "headers": st.lists(argument, max_size=2) | json_values,
                  "variables": st.dictionaries(texts, argument, max_size=2) | json_values},
)  # fmt: skip
server_json = st.fixed_dictionaries(
    {"name": st.sampled_from(["io.a/b", "x", ""]) | texts, "version": texts | json_values},
    optional={"description": texts | json_values, "title": texts | json_values,
              "packages": st.lists(package, max_size=2) | json_values,
              "remotes": st.lists(remote, max_size=2) | json_values,
              "_meta": json_values, "websiteUrl": texts, "repository": json_values},
)  # fmt: skip
records = (
    server_json
    | server_json.map(lambda s: {"server": s, "_meta": {
        "io.modelcontextprotocol.registry/official": {"status": "active", "isLatest": True}}})
    | json_values
)  # fmt: skip


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=records, prefer=st.sampled_from([None, "package", "remote"]))
def test_registry_records_parse_or_are_refused_with_an_mcpctl_error(raw: Any, prefer: Any) -> None:
    record = record_from_json(raw)  # never raises: None when unusable
    if record is None:
        return
    converted = mcpctl_errors_only(lambda: entry_from_server_json(record, prefer=prefer))
    if converted is not None:
        entry = converted.entry
        assert isinstance(entry, ServerEntry) and (entry.command is None) != (entry.url is None)


# --- every render target's parse, and import ---------------------------------------------

TOP_KEYS = ["mcpServers", "servers", "mcp", "context_servers", "mcp_servers", "extensions",
            "amp.mcpServers", "mcpProxy", "inputs", "apiVersion", "kind", "metadata", "spec",
            "name", "version", "schema"]  # fmt: skip
FIELDS = ["command", "args", "env", "cwd", "url", "headers", "type", "transport",
          "transportType", "timeout", "connectionTimeout", "options", "tools", "include_tags",
          "auth", "oauth", "enabled", "disabled", "disabledTools", "inheritParentEnv",
          "envFilter", "description", "cmd", "envs", "uri", "serverUrl", "httpUrl",
          "startup_timeout_sec", "environment", "image", "remoteURL", "targetPort", "source",
          "enabled_tools", "bearer_token_env_var", "http_headers", "requestInit"]  # fmt: skip
scalar = (
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats(allow_nan=False,
    allow_infinity=False) | st.text(max_size=10) | st.sampled_from(
        ["stdio", "sse", "http", "streamable-http", "npx", "https://h.example/mcp", "${A}",
         "{env:A}", "${env:A}", "${input:a}", "MCPServer", "MCPRemoteProxy", "\x1b[2J"])
)  # fmt: skip
values = st.recursive(
    scalar,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=14,
)
server = st.dictionaries(st.sampled_from(FIELDS), values, max_size=6)
servers = st.dictionaries(st.text(max_size=6), server | values, max_size=3)
documents_of_servers = st.dictionaries(
    st.sampled_from(TOP_KEYS), servers | values, min_size=1, max_size=3
)


def _toml(doc: dict[str, Any]) -> str:
    def drop_none(v: Any) -> Any:
        if isinstance(v, dict):
            return {str(k): drop_none(x) for k, x in v.items() if x is not None}
        if isinstance(v, list):
            return [drop_none(x) for x in v if x is not None]
        return v

    try:
        return tomli_w.dumps(drop_none(doc))
    except (TypeError, ValueError):
        return json.dumps(doc)


def serialise(doc: dict[str, Any], how: str) -> str:
    if how == "json":
        return json.dumps(doc)
    if how == "jsonc":  # comments and trailing commas, as VS Code and Zed allow
        return "// c\n" + json.dumps(doc, indent=1).replace("\n}", ",\n}") + "/* end */"
    if how == "toml":
        return _toml(doc)
    return yaml.safe_dump(doc) if how == "yaml" else yaml.safe_dump_all([doc, doc])


def mangle(text: str, data: st.DataObject) -> str:
    for _ in range(data.draw(st.integers(0, 3))):
        if not text:
            break
        i = data.draw(st.integers(0, len(text) - 1))
        text = (
            text[:i] + data.draw(st.sampled_from([*'{}[],:"\\\n#-=\x00\ud800', ""])) + text[i + 1 :]
        )
    return text


@pytest.mark.parametrize("target", target_names())
@FAST
@given(doc=documents_of_servers, how=st.sampled_from(["json", "jsonc", "toml", "yaml", "yaml-all"]),
       data=st.data())  # fmt: skip
def test_every_target_parse_returns_entries_or_an_mcpctl_error(
    target: str, doc: dict[str, Any], how: str, data: st.DataObject
) -> None:
    text = mangle(serialise(doc, how), data)
    parsed = mcpctl_errors_only(lambda: parse(target, text))
    if parsed is not None:
        assert isinstance(parsed.warnings, list)
        for entry in parsed.entries.values():
            assert isinstance(entry, ServerEntry)
            assert (entry.command is None) != (entry.url is None)


def test_the_fuzzed_targets_are_the_whole_table() -> None:
    assert target_names() == list(TARGET_MODULES) and len(target_names()) == 23


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as d:
        yield Path(d)


IMPORT_SOURCES = [t.name for t in client_targets()]


@pytest.mark.parametrize("source", IMPORT_SOURCES)
@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(doc=documents_of_servers, raw=st.binary(max_size=40), as_bytes=st.booleans())
def test_import_reads_any_file_or_says_why_not(
    scratch: Path, source: str, doc: dict[str, Any], raw: bytes, as_bytes: bool
) -> None:
    path = scratch / f"{source}.conf"
    path.write_bytes(raw if as_bytes else json.dumps(doc).encode())
    places = Places(home=scratch, cwd=scratch, system="linux", environ={})
    found = mcpctl_errors_only(lambda: read_source(source, path, places))
    if found is not None:
        assert found[0] == path
