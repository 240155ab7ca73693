"""The toolhive target: manifests the operator's own CRD schemas accept, no secret ever written,
and the manifests read back into the same entries."""

from __future__ import annotations

import functools
import json
import re
import string
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator

try:
    from yaml import CSafeLoader as Loader
except ImportError:  # a PyYAML without libyaml
    from yaml import SafeLoader as Loader  # type: ignore[assignment]

from mcpctl.config.loader import build_config
from mcpctl.config.model import AuthConfig, ServerEntry, ToolFilter
from mcpctl.errors import UsageError
from mcpctl.render import render
from mcpctl.render.base import RenderRequest
from mcpctl.render.targets import get_target
from mcpctl.render.toolhive import NAME_MAX, TARGETS, _yaml, dns_name, secret_ref, var_of_key
from tests.golden import check_golden

DATA = Path(__file__).resolve().parent.parent / "data"
FIXTURE = DATA / "render" / "fixture.json"
GOLDEN = DATA / "render" / "golden" / "toolhive.yaml"
CRDS = DATA / "toolhive"
TARGET = TARGETS["toolhive"]
SUBDOMAIN_RE = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")
LABEL_RE = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
SECRET_KEY_RE = re.compile(r"[-._a-zA-Z0-9]{1,253}")


def fixture_entries() -> dict[str, ServerEntry]:
    config, problems = build_config(json.loads(FIXTURE.read_text(encoding="utf-8")))
    assert not problems
    return config.enabled()


def run(entries: dict[str, ServerEntry], template: dict[str, Any] | None = None, **kw: Any) -> Any:
    return TARGET.render(
        RenderRequest(entries, template=template, environ=kw.pop("environ", {}), **kw)
    )


def docs_of(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d is not None]


# --- the CRDs: which versions are served, and their schemas ---------------------------------


@functools.cache
def crds() -> dict[tuple[str, str], dict[str, Any]]:
    """(apiVersion, kind) -> the version's entry of the CRD (``served``, ``schema``...)."""
    found = {}
    for path in sorted(CRDS.glob("*.yaml")):
        crd = yaml.load(path.read_text(encoding="utf-8"), Loader=Loader)
        for version in crd["spec"]["versions"]:
            found[(f"{crd['spec']['group']}/{version['name']}", crd["spec"]["names"]["kind"])] = (
                version
            )
    return found


@functools.cache
def validator(api_version: str, kind: str) -> Draft7Validator:
    return Draft7Validator(crds()[(api_version, kind)]["schema"]["openAPIV3Schema"])


def list_map_duplicates(schema: dict[str, Any], value: Any, path: str = "$") -> list[str]:
    """Lists the schema keys by ``x-kubernetes-list-map-keys`` whose items repeat a key (which
    the API server refuses; jsonschema knows nothing of it)."""
    found: list[str] = []
    if isinstance(value, dict):
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            sub = schema.get("properties", {}).get(key) or (
                extra if isinstance(extra, dict) else None
            )
            found += list_map_duplicates(sub, item, f"{path}.{key}") if sub else []
    elif isinstance(value, list):
        keys = schema.get("x-kubernetes-list-map-keys")
        if schema.get("x-kubernetes-list-type") == "map" and keys:
            seen = [tuple(item.get(k) for k in keys) for item in value]
            if len(seen) != len(set(seen)):
                found.append(f"{path}: items repeat {keys}")
        for i, item in enumerate(value):
            found += list_map_duplicates(schema.get("items", {}), item, f"{path}[{i}]")
    return found


def check_manifests(text: str) -> list[dict[str, Any]]:
    """Every document valid for its CRD's schema at its apiVersion, with Kubernetes names."""
    assert text.endswith("\n")
    docs = docs_of(text)
    for doc in docs:
        key = (doc["apiVersion"], doc["kind"])
        assert key in crds(), f"no CRD serves {key}"
        assert crds()[key]["served"]
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator(*key).iter_errors(doc)]
        assert not errors, (doc, errors)
        schema = crds()[key]["schema"]["openAPIV3Schema"]
        assert not list_map_duplicates(schema, doc), doc
        meta = doc["metadata"]
        assert SUBDOMAIN_RE.fullmatch(meta["name"]), meta
        if doc["kind"] in ("MCPServer", "MCPRemoteProxy"):
            assert len(meta["name"]) <= NAME_MAX
        assert meta["labels"] == {"app.kubernetes.io/managed-by": "mcpctl"}
        assert "namespace" not in meta or LABEL_RE.fullmatch(meta["namespace"])
        for ref in secret_refs(doc):
            assert SUBDOMAIN_RE.fullmatch(ref["name"]) and SECRET_KEY_RE.fullmatch(ref["key"]), ref
    names = [(d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"]) for d in docs]
    assert len(names) == len(set(names))
    return docs


def secret_refs(doc: dict[str, Any]) -> list[dict[str, str]]:
    spec = doc["spec"]
    refs = list(spec.get("secrets", []))
    refs += [
        h["valueSecretRef"] for h in spec.get("headerForward", {}).get("addHeadersFromSecret", [])
    ]
    return refs + ([spec["bearerToken"]["tokenSecretRef"]] if "bearerToken" in spec else [])


def test_the_crds_serve_v1alpha1_deprecated_and_v1beta1() -> None:
    for kind in (
        "MCPServer",
        "MCPRemoteProxy",
        "MCPGroup",
        "VirtualMCPServer",
        "MCPExternalAuthConfig",
    ):
        alpha = crds()[("toolhive.stacklok.dev/v1alpha1", kind)]
        beta = crds()[("toolhive.stacklok.dev/v1beta1", kind)]
        assert alpha["served"] and alpha.get("deprecated") and beta["served"] and beta["storage"]
    assert (
        "deprecated"
        in (Path(__file__).resolve().parents[2] / "docs" / "render-toolhive.md").read_text()
    )


# --- the fixture and the golden ----------------------------------------------------------------


def test_fixture_renders_the_golden_manifests() -> None:
    rendered = run(fixture_entries())
    check_golden(GOLDEN, rendered.text)
    assert run(fixture_entries()).text == rendered.text  # deterministic
    assert not rendered.holds_secrets


def test_fixture_manifests_validate_and_say_what_they_left_out() -> None:
    rendered = run(fixture_entries())
    docs = check_manifests(rendered.text)
    assert [(d["kind"], d["metadata"]["name"]) for d in docs] == [
        ("MCPServer", "time"), ("MCPServer", "github"), ("MCPRemoteProxy", "search"),
        ("MCPExternalAuthConfig", "legacy-sse-bearer"), ("MCPRemoteProxy", "legacy-sse"),
        ("MCPRemoteProxy", "notion"),
    ]  # fmt: skip
    github = docs[1]["spec"]
    assert github["image"] == "npx://@modelcontextprotocol/server-github@2025.4.8"
    assert github["env"] == [
        {"name": "GITHUB_TOOLSETS", "value": fixture_entries()["github"].env["GITHUB_TOOLSETS"]}
    ]
    assert github["secrets"] == [
        {
            "name": "github-token",
            "key": "github_token",
            "targetEnvName": "GITHUB_PERSONAL_ACCESS_TOKEN",
        }
    ]
    assert docs[0]["spec"]["image"] == "uvx://mcp-server-time"
    assert docs[0]["spec"]["args"] == ["--local-timezone=UTC"]
    assert docs[2]["spec"]["headerForward"] == {
        "addPlaintextHeaders": {"X-Client": "mcpctl"},
        "addHeadersFromSecret": [
            {
                "headerName": "X-Api-Key",
                "valueSecretRef": {"name": "search-api-key", "key": "search_api_key"},
            }
        ],
    }
    assert docs[3]["spec"]["bearerToken"]["tokenSecretRef"] == {
        "name": "legacy-token",
        "key": "legacy_token",
    }
    assert docs[4]["spec"]["externalAuthConfigRef"] == {"name": "legacy-sse-bearer"}
    assert docs[4]["spec"]["transport"] == "sse"
    text = "\n".join(rendered.warnings)
    for expected in (
        "files: command 'node' cannot run in a cluster",
        "time: command runs as uvx://mcp-server-time",
        "github: tools needs the template's virtualServer",
        "search: timeout cannot be expressed",
        "notion: auth oauth sign-in cannot happen here",
    ):
        assert expected in text
    assert all(not w.startswith("disabled-one") for w in rendered.warnings)


def test_fixture_reads_back() -> None:
    parsed = TARGET.parse(run(fixture_entries()).text)
    entries = fixture_entries()
    assert list(parsed.entries) == ["time", "github", "search", "legacy-sse", "notion"]
    assert parsed.entries["github"].env == entries["github"].env
    assert parsed.entries["github"].args == entries["github"].args
    assert parsed.entries["search"].headers == entries["search"].headers
    assert parsed.entries["legacy-sse"].auth == entries["legacy-sse"].auth
    assert parsed.entries["notion"].description == entries["notion"].description
    assert not parsed.warnings


def test_template_adds_group_and_virtual_server_with_tool_filters() -> None:
    entries = fixture_entries() | {
        "fs": ServerEntry(
            command="npx",
            args=("-y", "fs-server"),
            tools=ToolFilter(allow=("read", "write"), deny=("wr*",)),
        ),
        "none": ServerEntry(command="uvx", args=("quiet",), tools=ToolFilter(allow=())),
        "glob": ServerEntry(url="https://g.example.com/mcp", tools=ToolFilter(allow=("get_*",))),
    }
    template = {"namespace": "mcp", "virtualServer": {"name": "all-tools"}}
    rendered = run(entries, template)
    docs = check_manifests(rendered.text)
    assert docs[0]["kind"] == "MCPGroup" and docs[0]["metadata"]["name"] == "all-tools"
    vmcp = docs[-1]
    assert vmcp["kind"] == "VirtualMCPServer"
    assert vmcp["spec"]["groupRef"] == {"name": "all-tools"}
    assert vmcp["spec"]["incomingAuth"] == {"type": "anonymous"}
    assert vmcp["spec"]["config"]["aggregation"]["tools"] == [
        {"workload": "fs", "filter": ["read"]},
        {"workload": "none", "excludeAll": True},
    ]
    for doc in docs:
        assert doc["metadata"]["namespace"] == "mcp"
        if doc["kind"] in ("MCPServer", "MCPRemoteProxy"):
            assert doc["spec"]["groupRef"] == {"name": "all-tools"}
    text = "\n".join(rendered.warnings)
    assert "github: tools.deny cannot be expressed" in text
    assert "glob: tools.allow cannot be expressed" in text
    assert "template: virtualServer admits clients unauthenticated" in text
    parsed = TARGET.parse(rendered.text)
    assert parsed.entries["fs"].tools == ToolFilter(allow=("read",))
    assert parsed.entries["none"].tools == ToolFilter(allow=())
    assert parsed.entries["github"].tools is None


def test_template_options() -> None:
    entries = {
        "npm": ServerEntry(command="npx", args=("-y", "pkg@1.0")),
        "tool": ServerEntry(command="python3", args=("s.py",)),
    }
    template = {
        "apiVersion": "v1beta1", "group": "team",
        "virtualServer": {"name": "gw", "incomingAuth": {"type": "oidc", "oidcConfigRef": {"name": "idp", "audience": "gw"}}},
        "images": {"npm": "ghcr.io/org/pkg:1.0", "tool": "ghcr.io/org/tool:2", "gone": "x:1"},
        "replicas": 3,
    }  # fmt: skip
    rendered = run(entries, template)
    docs = check_manifests(rendered.text)
    assert {d["apiVersion"] for d in docs} == {"toolhive.stacklok.dev/v1beta1"}
    assert docs[0]["metadata"]["name"] == "team" and docs[-1]["spec"]["groupRef"] == {
        "name": "team"
    }
    assert docs[-1]["spec"]["incomingAuth"]["type"] == "oidc"
    assert docs[1]["spec"]["image"] == "ghcr.io/org/pkg:1.0" and "args" not in docs[1]["spec"]
    assert docs[2]["spec"]["image"] == "ghcr.io/org/tool:2" and docs[2]["spec"]["args"] == ["s.py"]
    assert sorted(rendered.warnings) == [
        "template: images.gone names no enabled server",
        "template: replicas is not a toolhive template key",
    ]


@pytest.mark.parametrize(
    "template",
    [
        {"namespace": "Not_A_Label"},
        {"group": ""},
        {"virtualServer": {"incomingAuth": {"type": "anonymous"}}},
        {"virtualServer": "gw"},
        {"virtualServer": {"name": "gw", "incomingAuth": "open"}},
        {"apiVersion": "v2"},
        {"images": {"a": 1}},
        {"images": ["a"]},
    ],
)
def test_bad_templates_are_usage_errors(template: dict[str, Any]) -> None:
    with pytest.raises(UsageError, match="toolhive template"):
        run({"a": ServerEntry(command="npx", args=("p",))}, template)


# --- what each entry becomes -------------------------------------------------------------------


def test_docker_entries_run_their_image() -> None:
    entry = ServerEntry(
        command="docker",
        args=(
            "run",
            "-i",
            "--rm",
            "--name=gh",
            "-e",
            "TOKEN",
            "-e",
            "MODE=ro",
            "ghcr.io/github/github-mcp-server",
            "stdio",
        ),
        env={"TOKEN": "${GITHUB_TOKEN}", "DOCKER_HOST": "unix:///run/docker.sock"},
    )
    docs = check_manifests(run({"gh": entry}).text)
    spec = docs[0]["spec"]
    assert spec["image"] == "ghcr.io/github/github-mcp-server"
    assert spec["args"] == ["stdio"]
    assert spec["env"] == [{"name": "MODE", "value": "ro"}]
    assert spec["secrets"] == [
        {"name": "github-token", "key": "github_token", "targetEnvName": "TOKEN"}
    ]


@pytest.mark.parametrize(
    "entry",
    [
        ServerEntry(command="node", args=("server.js",)),
        ServerEntry(command="docker", args=("run", "-v", "/data:/data", "img")),
        ServerEntry(command="docker", args=("compose", "up")),
        ServerEntry(command="npx", args=("-p", "pkg", "cmd")),
        ServerEntry(command="uvx", args=("--from", "pkg", "cmd")),
    ],
)
def test_commands_without_an_image_are_left_out_with_a_warning(entry: ServerEntry) -> None:
    rendered = run({"srv": entry})
    assert docs_of(rendered.text) == []
    what = "with these options" if entry.command in ("npx", "uvx") else "without an image"
    why = f"cannot run in a cluster {what}: left out (name an image in the template's images)"
    assert rendered.warnings == [f"srv: command {entry.command!r} {why}"]


def test_placeholders_in_args_become_kubernetes_references() -> None:
    entry = ServerEntry(
        command="uvx",
        args=(
            "srv==1.2",
            "--token",
            "${API_TOKEN}",
            "--root=${ROOT:-/srv}",
            "price$(x)",
            "$$",
            "a$${API_TOKEN}",
        ),
        env={"TOKEN_ENV": "${API_TOKEN}"},
        cwd="/srv",
        inherit_env=("HOME",),
    )
    rendered = run({"srv": entry})
    spec = check_manifests(rendered.text)[0]["spec"]
    assert spec["image"] == "uvx://srv@1.2"
    assert spec["args"] == [
        "--token",
        "$(TOKEN_ENV)",
        "--root=$(root)",
        "price$$(x)",
        "$$$",
        "a$$$(TOKEN_ENV)",
    ]
    assert spec["secrets"] == [
        {"name": "api-token", "key": "api_token", "targetEnvName": "TOKEN_ENV"},
        {"name": "root", "key": "root"},
    ]
    text = "\n".join(rendered.warnings)
    assert "srv: cwd does not apply" in text and "srv: inherit_env does not apply" in text
    assert "srv: args default of ${ROOT} does not apply" in text
    back = TARGET.parse(rendered.text).entries["srv"]
    assert back.args == (
        "srv@1.2",
        "--token",
        "${API_TOKEN}",
        "--root=${ROOT}",
        "price$(x)",
        "$$",
        "a$${API_TOKEN}",
    )
    assert back.env == {"TOKEN_ENV": "${API_TOKEN}"}


def test_env_values_that_are_not_one_placeholder_are_whole_secrets() -> None:
    entry = ServerEntry(
        command="npx",
        args=("-y", "db"),
        env={"URL": "postgres://u:${PW}@h/db", "A": "${SAME}", "B": "${SAME}", "LIT": "$(HOME)"},
    )
    rendered = run({"db": entry})
    spec = check_manifests(rendered.text)[0]["spec"]
    assert spec["secrets"] == [
        {"name": "db-env-url", "key": "env.url", "targetEnvName": "URL"},
        {"name": "same", "key": "same", "targetEnvName": "A"},
        {"name": "db-env-b", "key": "same", "targetEnvName": "B"},
    ]
    assert spec["env"] == [{"name": "LIT", "value": "$$(HOME)"}]
    text = "\n".join(rendered.warnings)
    assert "db: env.URL is not one ${VAR}: Secret db-env-url (key env.url) must hold it" in text
    assert (
        "db: env.B shares a Secret with another variable: Secret db-env-b must hold it too" in text
    )
    assert TARGET.parse(rendered.text).entries["db"].env["LIT"] == "$(HOME)"


def test_remote_headers_and_auth() -> None:
    entries = {
        "plain": ServerEntry(
            url="https://a.example.com/mcp",
            headers={"Authorization": "Bearer ${API_TOKEN}", "Host": "evil", "X-Team": "blue"},
        ),
        "key": ServerEntry(
            url="https://b.example.com/mcp",
            auth=AuthConfig(type="header", name="X-Api-Key", value="${B_KEY}"),
        ),
        "literal": ServerEntry(
            url="https://c.example.com/mcp",
            auth=AuthConfig(type="bearer", token="literal-token-value"),
        ),
        "basic": ServerEntry(
            url="https://d.example.com/mcp",
            auth=AuthConfig(type="basic", username="u", password="${PW}"),
        ),
        "templated": ServerEntry(url="https://${HOST}/mcp"),
        "relative": ServerEntry(url="${BASE}/mcp"),
    }
    rendered = run(entries)
    docs = {d["metadata"]["name"]: d["spec"] for d in check_manifests(rendered.text)}
    assert docs["plain"]["headerForward"] == {"addPlaintextHeaders": {"X-Team": "blue"}}
    assert docs["plain-bearer"]["bearerToken"]["tokenSecretRef"] == {
        "name": "api-token",
        "key": "api_token",
    }
    assert docs["key"]["headerForward"]["addHeadersFromSecret"] == [
        {"headerName": "X-Api-Key", "valueSecretRef": {"name": "b-key", "key": "b_key"}}
    ]
    assert docs["literal-bearer"]["bearerToken"]["tokenSecretRef"] == {
        "name": "literal-auth-token",
        "key": "auth.token",
    }
    assert "literal-token-value" not in rendered.text
    assert "relative" not in docs and "templated" in docs
    text = "\n".join(rendered.warnings)
    for expected in (
        "plain: headers.Host is not forwarded by ToolHive",
        "literal: auth.token is not one ${VAR}",
        "basic: auth basic cannot be expressed",
        "templated: url has placeholders",
        "relative: url must start with http:// or https://",
    ):
        assert expected in text
    back = TARGET.parse(rendered.text).entries
    assert back["plain"].auth == AuthConfig(type="bearer", token="${API_TOKEN}")
    assert back["key"].headers == {"X-Api-Key": "${B_KEY}"}


def test_names_are_dns_labels_and_collisions_get_a_suffix() -> None:
    assert dns_name("My_Server") == "my-server"
    assert dns_name("a.b@c") == "a-b-c"
    assert dns_name("--x--") == "x"
    assert dns_name("___") == "mcp"
    assert len(dns_name("a" * 64)) == NAME_MAX
    assert dns_name("GITHUB_TOKEN", 253, "secret") == "github-token"
    assert var_of_key("github_token") == "GITHUB_TOKEN" and var_of_key("env.url") == "ENV_URL"
    assert var_of_key("9x") == "_9X"
    warnings: list[str] = []
    assert secret_ref(warnings, "s", "s", "env.A", "${A_B}") == {"name": "a-b", "key": "a_b"}
    assert not warnings
    entries = {"My_Server": ServerEntry(url="https://a.example.com"), "my-server": ServerEntry(url="https://b.example.com"),
               "x" * 64: ServerEntry(url="https://c.example.com"), "x" * 63 + "_": ServerEntry(url="https://d.example.com")}  # fmt: skip
    rendered = run(entries)
    docs = check_manifests(rendered.text)
    assert [d["metadata"]["name"] for d in docs] == [
        "my-server",
        "my-server-2",
        "x" * 46,
        "x" * 44 + "-2",
    ]
    assert "my-server: name is another server's as a DNS name: now my-server-2" in rendered.warnings
    assert list(TARGET.parse(rendered.text).entries) == list(entries)


# --- secrets ---------------------------------------------------------------------------------


def test_inline_secrets_never_writes_a_value() -> None:
    environ = {"GITHUB_TOKEN": "ghp_real_token_value_123", "SEARCH_API_KEY": "sk-search-value-456",
               "LEGACY_TOKEN": "legacy-value-789", "PROJECT_DIR": "/home/me/secret-project"}  # fmt: skip
    rendered = render(
        "toolhive",
        fixture_entries(),
        inline_secrets=True,
        environ=environ,
        secrets=lambda name: f"keyring-{name}-value",
    )
    assert not rendered.holds_secrets
    assert "inline_secrets does not apply to toolhive: Secrets hold the values" in rendered.warnings
    out = rendered.text + "\n".join(rendered.warnings)
    for value in [*environ.values(), "keyring-"]:
        assert value not in out
    assert rendered.text == run(fixture_entries()).text


# --- generated configs ---------------------------------------------------------------------------

VARS = ["TOKEN", "API_KEY", "DB_PASS", "X1", "_Y"]
MARKERS = {var: f"!secret-{i}!" for i, var in enumerate(VARS)}
words = st.text(string.ascii_letters + string.digits + "-_./:=@$(){} ", min_size=1, max_size=10)
placeholders = st.builds(
    lambda v, d: f"${{{v}{d}}}", st.sampled_from(VARS), st.sampled_from(["", ":-dflt", ":-"])
)
values = st.one_of(words, placeholders, st.builds(lambda a, p: a + p, words, placeholders))
names = st.from_regex(r"[A-Za-z0-9_-]{1,64}", fullmatch=True)
filters = st.one_of(
    st.none(),
    st.builds(ToolFilter, allow=st.one_of(st.none(), st.lists(st.sampled_from(["a", "b_c", "d*"]), max_size=3).map(tuple)),
              deny=st.lists(st.sampled_from(["a", "x?"]), max_size=2).map(tuple)),
)  # fmt: skip
common = {
    "tools": filters,
    "timeout": st.one_of(st.none(), st.just(5000)),
    "description": st.one_of(st.none(), words),
}
stdio = st.builds(
    ServerEntry,
    command=st.sampled_from(["npx", "uvx", "docker", "node", "NPX.cmd"]),
    args=st.lists(st.one_of(st.sampled_from(["-y", "run", "-i", "--rm", "-e", "TOKEN", "pkg@1.0", "--flag", "img:1"]), values), max_size=6).map(tuple),
    env=st.dictionaries(st.sampled_from(["TOKEN", "MODE", "A B", "path"]), values, max_size=3),
    cwd=st.one_of(st.none(), st.just("/srv")),
    inherit_env=st.one_of(st.just(False), st.just(True), st.just(("HOME",))),
    **common,
)  # fmt: skip
auths = st.one_of(
    st.none(),
    st.builds(AuthConfig, type=st.just("bearer"), token=values),
    st.builds(AuthConfig, type=st.just("header"), name=st.sampled_from([None, "X-Key", "Host"]), value=values),
    st.builds(AuthConfig, type=st.just("basic"), username=words, password=values),
    st.builds(AuthConfig, type=st.just("oauth"), scopes=st.just(("read",))),
)  # fmt: skip
remote = st.builds(
    ServerEntry,
    url=st.sampled_from(["https://a.example.com/mcp", "http://10.0.0.1:8080/sse", "https://${HOST}/x", "${BASE}/mcp"]),
    transport=st.sampled_from([None, "streamable-http", "sse"]),
    headers=st.dictionaries(st.sampled_from(["X-Api-Key", "Authorization", "Host", "x-team"]), values, max_size=3),
    auth=auths,
    **common,
)  # fmt: skip
templates = st.one_of(
    st.none(),
    st.fixed_dictionaries({}, optional={
        "namespace": st.sampled_from(["mcp", "team-a"]), "group": st.just("grp"),
        "virtualServer": st.just({"name": "gw"}), "apiVersion": st.sampled_from(["v1alpha1", "v1beta1"]),
    }),
)  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entries=st.dictionaries(names, st.one_of(stdio, remote), max_size=5), template=templates)
def test_generated_configs_render_valid_manifests_without_secrets(
    entries: dict[str, ServerEntry], template: dict[str, Any] | None
) -> None:
    rendered = run(
        entries, template, inline_secrets=True, environ=MARKERS, secrets=lambda name: "!keyring!"
    )
    docs = check_manifests(rendered.text)
    out = rendered.text + "\n".join(rendered.warnings)
    assert "!secret-" not in out and "!keyring!" not in out
    assert not rendered.holds_secrets
    kinds = [d["kind"] for d in docs]
    assert kinds.count("MCPServer") + kinds.count("MCPRemoteProxy") <= len(entries)
    assert kinds.count("VirtualMCPServer") == (1 if template and "virtualServer" in template else 0)
    proxies = [d for d in docs if d["kind"] == "MCPRemoteProxy"]
    auth_names = {d["metadata"]["name"] for d in docs if d["kind"] == "MCPExternalAuthConfig"}
    assert {
        p["spec"]["externalAuthConfigRef"]["name"]
        for p in proxies
        if "externalAuthConfigRef" in p["spec"]
    } == auth_names
    parsed = TARGET.parse(rendered.text)
    assert len(parsed.entries) == kinds.count("MCPServer") + kinds.count("MCPRemoteProxy")
    assert set(parsed.entries) <= set(entries)


expressible_values = st.one_of(
    st.text(string.ascii_letters + string.digits + "-_./:=@$() ", min_size=1, max_size=10),
    st.sampled_from(VARS).map(lambda v: f"${{{v}}}"),
)
expressible_args = st.lists(
    st.one_of(
        expressible_values, st.builds(lambda a, v: a + v, expressible_values, expressible_values)
    ),
    max_size=3,
)
expressible = st.one_of(
    st.builds(
        ServerEntry,
        command=st.just("npx"),
        args=st.builds(lambda p, rest: ("-y", p, *rest), st.sampled_from(["pkg", "@s/p@1.2.3"]), expressible_args),
        env=st.dictionaries(st.sampled_from(["MODE", "TOKEN", "LEVEL"]), expressible_values, max_size=3),
        description=st.one_of(st.none(), st.just("described")),
    ),
    st.builds(
        ServerEntry,
        command=st.just("uvx"),
        args=st.builds(lambda p, rest: (p, *rest), st.sampled_from(["mcp-server-time", "srv@2.0"]), expressible_args),
        env=st.dictionaries(st.sampled_from(["MODE", "TOKEN"]), expressible_values, max_size=2),
    ),
    st.builds(
        ServerEntry,
        url=st.sampled_from(["https://a.example.com/mcp", "http://127.0.0.1:9/sse"]),
        transport=st.sampled_from([None, "streamable-http", "sse"]),
        headers=st.dictionaries(st.sampled_from(["X-Api-Key", "X-Team"]), expressible_values, max_size=2),
        auth=st.one_of(st.none(), st.sampled_from(VARS).map(lambda v: AuthConfig(type="bearer", token=f"${{{v}}}"))),
    ),
)  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    entries=st.dictionaries(
        st.from_regex(r"[A-Za-z0-9_]{1,20}", fullmatch=True), expressible, max_size=4
    )
)
def test_expressible_entries_read_back_the_same(entries: dict[str, ServerEntry]) -> None:
    rendered = run(entries)
    parsed = TARGET.parse(rendered.text)
    for name, entry in entries.items():
        assert parsed.entries[name] == entry, (name, rendered.text)


json_like = st.recursive(
    st.one_of(st.text(), st.integers(), st.booleans(), st.none(), st.floats(-1e6, 1e6).filter(lambda f: "e" not in repr(f)), st.sampled_from(["yes", "Off", "null", "1.5", "0x1f", "1:20", "a: b", "- x", "#c", "@x", "a:"])),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(), inner, max_size=3)),
    max_leaves=12,
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(data=st.dictionaries(st.text(), json_like, min_size=1, max_size=4))
def test_the_yaml_writer_writes_what_yaml_reads_back(data: dict[str, Any]) -> None:
    assert yaml.safe_load("\n".join(_yaml(data)) + "\n") == data


# --- import ------------------------------------------------------------------------------------

TOOLHIVE_EXAMPLE = """\
apiVersion: toolhive.stacklok.dev/v1beta1
kind: MCPServer
metadata:
  name: github
  namespace: toolhive-system
spec:
  image: ghcr.io/github/github-mcp-server
  transport: stdio
  proxyPort: 8080
  secrets:
    - name: github-token
      key: token
      targetEnvName: GITHUB_PERSONAL_ACCESS_TOKEN
  env:
    - name: GITHUB_API_URL
      value: https://api.github.com
---
apiVersion: v1
kind: Secret
metadata:
  name: github-token
stringData:
  token: do-not-read-me
---
apiVersion: toolhive.stacklok.dev/v1beta1
kind: MCPServer
metadata:
  name: fetch
spec:
  image: ghcr.io/stackloklabs/gofetch/server
  transport: streamable-http
---
apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPRemoteProxy
metadata:
  name: api-proxy
spec:
  remoteUrl: https://mcp.example.com/api
  externalAuthConfigRef:
    name: elsewhere
"""


def test_parse_reads_handwritten_manifests_liberally() -> None:
    parsed = get_target("toolhive").parse(TOOLHIVE_EXAMPLE)
    assert parsed.entries["github"] == ServerEntry(
        command="docker",
        args=(
            "run",
            "-i",
            "--rm",
            "-e",
            "GITHUB_API_URL",
            "-e",
            "GITHUB_PERSONAL_ACCESS_TOKEN",
            "ghcr.io/github/github-mcp-server",
        ),
        env={
            "GITHUB_API_URL": "https://api.github.com",
            "GITHUB_PERSONAL_ACCESS_TOKEN": "${TOKEN}",
        },
    )
    assert parsed.entries["api-proxy"] == ServerEntry(url="https://mcp.example.com/api")
    assert "fetch" not in parsed.entries
    text = "\n".join(parsed.warnings)
    assert "github-token: (kind Secret) is not read by toolhive" in text
    assert "fetch: spec is not a stdio MCPServer with an image" in text
    assert (
        "api-proxy: spec.externalAuthConfigRef is not a bearerToken MCPExternalAuthConfig" in text
    )
    assert "do-not-read-me" not in text


@pytest.mark.parametrize(
    "text",
    [
        "kind: MCPServer\nspec: [unclosed\n",
        "- a\n- b\n",
        "apiVersion: v1\nmetadata: {name: x}\n",
        "just text\n",
        "apiVersion: toolhive.stacklok.dev/v1alpha1\nkind: MCPServer\n---\n- listed\n",
    ],
)
def test_parse_refuses_what_is_not_a_manifest(text: str) -> None:
    with pytest.raises(UsageError, match="not a toolhive manifest"):
        TARGET.parse(text)


def test_parse_reads_a_kubectl_list() -> None:
    items = docs_of(run(fixture_entries()).text)
    listed = yaml.safe_dump(
        {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}
    )
    assert TARGET.parse(listed).entries == TARGET.parse(run(fixture_entries()).text).entries


def test_parse_of_nothing_is_nothing() -> None:
    assert TARGET.parse("").entries == {}
    assert TARGET.parse(run({}).text).entries == {}
    assert run({}).text.endswith("\n")


def test_secret_names_are_dns_names_of_at_most_253_characters() -> None:
    warnings: list[str] = []
    long = secret_ref(warnings, "s", "res", "env.K", "${" + "A" * 300 + "}")
    assert long == {"name": "a" * 253, "key": "a" * 300}
    assert secret_ref(warnings, "s", "res", "env.K", "${_}") == {"name": "secret", "key": "_"}
    assert secret_ref(warnings, "s", "r" * 300, "env.K", "x") == {"name": "r" * 253, "key": "env.k"}
    odd = secret_ref(warnings, "s", "res", "headers.X-Key/Odd", "lit")
    assert odd == {"name": "res-headers-x-key-odd", "key": "headers.x-key_odd"}


def test_a_template_name_that_is_no_label_says_what_a_label_is() -> None:
    with pytest.raises(UsageError) as caught:
        get_target("toolhive").render(RenderRequest({}, template={"namespace": "Bad_NS"}))
    assert caught.value.message == "toolhive template: namespace must be a DNS-1123 label"
    assert caught.value.hint == (
        "lowercase letters, digits and '-', starting and ending with a letter or digit"
    )


# --- the words and corners each field is pinned by ------------------------------------------


@pytest.mark.parametrize(
    ("template", "message"),
    [
        (
            {"apiVersion": "v2"},
            "toolhive template: apiVersion must be one of toolhive.stacklok.dev/v1alpha1, "
            "toolhive.stacklok.dev/v1beta1",
        ),
        ({"group": "Team"}, "toolhive template: group must be a DNS-1123 label"),
        (
            {"virtualServer": {"name": "GW"}},
            "toolhive template: virtualServer.name must be a DNS-1123 label",
        ),
        (
            {"virtualServer": {"name": "gw", "incomingAuth": {"issuer": "x"}}},
            "toolhive template: virtualServer.incomingAuth needs a type",
        ),
        (
            {"virtualServer": {"name": "gw", "incomingAuth": "open"}},
            "toolhive template: virtualServer.incomingAuth needs a type",
        ),
        (
            {"images": {"a": ""}},
            "toolhive template: images must map server names to image references",
        ),
    ],
)
def test_a_bad_template_is_refused_in_words_naming_its_key(
    template: dict[str, Any], message: str
) -> None:
    with pytest.raises(UsageError) as caught:
        run({"a": ServerEntry(command="npx", args=("p",))}, template)
    assert caught.value.message == message


@pytest.mark.parametrize(
    ("command", "args", "image"),
    [
        ("npx.cmd", ("-y", "pkg"), "npx://pkg"),
        ("NPX.EXE", ("--yes", "pkg"), "npx://pkg"),
        ("npx", ("--yes", "-y", "pkg"), "npx://pkg"),
        ("C:\\Program Files\\nodejs\\npx.cmd", ("pkg",), "npx://pkg"),
        ("/usr/local/bin/uvx", ("srv==1.0",), "uvx://srv@1.0"),
    ],
)
def test_npx_and_uvx_are_known_by_their_file_name(
    command: str, args: tuple[str, ...], image: str
) -> None:
    rendered = run({"srv": ServerEntry(command=command, args=args)})
    spec = check_manifests(rendered.text)[0]["spec"]
    assert spec["image"] == image and "args" not in spec
    assert rendered.warnings == [
        f"srv: command runs as {image}, which the operator does not build: build and push it "
        "with 'thv build', name it in images"
    ]


def test_an_image_with_placeholders_is_written_as_it_is_with_a_warning() -> None:
    rendered = run({"srv": ServerEntry(command="npx", args=("-y", "pkg@${VERSION}"))})
    assert check_manifests(rendered.text)[0]["spec"]["image"] == "npx://pkg@${VERSION}"
    assert rendered.warnings[1:] == [
        "srv: image has placeholders, which the operator does not expand"
    ]


def test_docker_passes_the_container_only_its_env_options() -> None:
    entry = ServerEntry(
        command="docker",
        args=("run", "--name", "MODE", "--env", "A=1", "--env=B=2", "-i", "img:1"),
        env={"MODE": "for the docker client"},
    )
    rendered = run({"d": entry})
    spec = check_manifests(rendered.text)[0]["spec"]
    assert spec == {
        "image": "img:1",
        "transport": "stdio",
        "proxyPort": 8080,
        "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
    }
    assert rendered.warnings == []


def test_remote_credentials_each_go_where_they_belong() -> None:
    entries = {
        "unnamed": ServerEntry(
            url="https://a.example.com/mcp", auth=AuthConfig(type="header", value="${KEY}")
        ),
        "lit": ServerEntry(
            url="https://b.example.com/mcp",
            auth=AuthConfig(type="header", name="X-Api-Key", value="literal"),
        ),
        "raw": ServerEntry(
            url="https://c.example.com/mcp", headers={"Authorization": "Token public-demo"}
        ),
        "basic": ServerEntry(
            url="https://d.example.com/mcp",
            auth=AuthConfig(type="basic", username="u", password="${PW}"),
        ),
        "signin": ServerEntry(
            url="https://e.example.com/mcp", auth=AuthConfig(type="oauth"), timeout=5000
        ),
        "bearer": ServerEntry(
            url="https://f.example.com/mcp", auth=AuthConfig(type="bearer", token="${TOKEN}")
        ),
    }
    rendered = run(entries, {"group": "team"})
    docs = check_manifests(rendered.text)
    specs = {d["metadata"]["name"]: d["spec"] for d in docs}
    assert specs["unnamed"]["headerForward"] == {
        "addHeadersFromSecret": [
            {"headerName": "Authorization", "valueSecretRef": {"name": "key", "key": "key"}}
        ]
    }
    assert specs["lit"]["headerForward"] == {
        "addHeadersFromSecret": [
            {
                "headerName": "X-Api-Key",
                "valueSecretRef": {"name": "lit-headers-x-api-key", "key": "headers.x-api-key"},
            }
        ]
    }
    # The documented rule: a header without a placeholder is forwarded as written.
    assert specs["raw"]["headerForward"] == {
        "addPlaintextHeaders": {"Authorization": "Token public-demo"}
    }
    assert "headerForward" not in specs["basic"] and "headerForward" not in specs["signin"]
    # Only the servers join the group, not the bearer token's MCPExternalAuthConfig.
    assert specs["bearer-bearer"] == {
        "type": "bearerToken",
        "bearerToken": {"tokenSecretRef": {"name": "token", "key": "token"}},
    }
    assert specs["bearer"]["groupRef"] == {"name": "team"}
    assert rendered.warnings == [
        "lit: headers.X-Api-Key is not one ${VAR}: Secret lit-headers-x-api-key "
        "(key headers.x-api-key) must hold it",
        "basic: auth basic cannot be expressed: forward it from a Secret",
        "signin: auth oauth sign-in cannot happen here: set it up on the cluster "
        "(externalAuthConfigRef)",
        "signin: timeout cannot be expressed: ToolHive has no timeout",
    ]


def test_a_stdio_server_keeps_its_name_beside_its_dns_name() -> None:
    rendered = run(
        {"My_Server": ServerEntry(command="uvx", args=("srv",))}, {"images": {"My_Server": "img:1"}}
    )
    doc = check_manifests(rendered.text)[0]
    assert doc["metadata"]["name"] == "my-server"
    assert doc["metadata"]["annotations"] == {"mcpctl/server": "My_Server"}
    assert list(TARGET.parse(rendered.text).entries) == ["My_Server"]


def test_a_secret_shared_by_a_long_variable_gets_a_name_of_at_most_253_characters() -> None:
    entry = ServerEntry(command="uvx", args=("db",), env={"A": "${SAME}", "K" * 300: "${SAME}"})
    spec = check_manifests(run({"db": entry}).text)[0]["spec"]
    assert spec["secrets"][1]["name"] == "db-env-" + "k" * 246


def test_the_virtual_server_prefixes_and_filters_by_exact_names() -> None:
    entries = {
        "sheets": ServerEntry(command="uvx", args=("s",), tools=ToolFilter(allow=("export_XLSX",))),
        "globbed": ServerEntry(command="uvx", args=("g",), tools=ToolFilter(allow=("get_?",))),
    }
    rendered = run(entries, {"virtualServer": {"name": "gw", "incomingAuth": {"type": "oidc"}}})
    aggregation = check_manifests(rendered.text)[-1]["spec"]["config"]["aggregation"]
    assert aggregation == {
        "conflictResolution": "prefix",
        "tools": [{"workload": "sheets", "filter": ["export_XLSX"]}],
    }
    assert rendered.warnings[-1] == (
        "globbed: tools.allow cannot be expressed: ToolHive allows a list of exact names"
    )


def test_nothing_to_render_is_said_in_a_comment() -> None:
    assert run({}).text == "# no servers to render\n"


def test_the_yaml_writer_writes_each_scalar_as_kubernetes_reads_it() -> None:
    value = {
        "none": None, "on": True, "off": False, "list": [], "map": {}, "int": 3,
        "float": 1.5, "word": "plain", "bool-word": "yes", "day": date(2025, 1, 2),
    }  # fmt: skip
    lines = _yaml(value)
    assert lines == [
        "none: null", '"on": true', '"off": false', "list: []", "map: {}", "int: 3",
        "float: 1.5", "word: plain", 'bool-word: "yes"', 'day: "2025-01-02"',
    ]  # fmt: skip
    assert yaml.safe_load("\n".join(lines)) == value | {"day": "2025-01-02"}
