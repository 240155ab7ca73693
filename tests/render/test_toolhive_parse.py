"""Reading ToolHive manifests written by hand: the fields ToolHive defaults, what is not
read and why. (Manifests mcpctl wrote, read back: tests/render/test_toolhive.py.)"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpctl.config.model import AuthConfig, ServerEntry
from mcpctl.errors import UsageError
from mcpctl.render.toolhive_names import NAME_KEY
from mcpctl.render.toolhive_parse import parse_manifests

API = "toolhive.stacklok.dev/v1beta1"


def stream(*objects: dict[str, Any]) -> str:
    return "---\n".join(json.dumps(o) + "\n" for o in objects)  # JSON is YAML


def server(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": API, "kind": "MCPServer", "metadata": {"name": name}, "spec": spec}


def proxy(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": API, "kind": "MCPRemoteProxy", "metadata": {"name": name}, "spec": spec}


def test_a_server_without_a_transport_is_a_stdio_one() -> None:
    parsed = parse_manifests(stream(server("time", image="mcp/time", args=["--tz", "UTC"])))
    assert parsed.entries == {
        "time": ServerEntry(command="docker", args=("run", "-i", "--rm", "mcp/time", "--tz", "UTC"))
    }
    assert parsed.warnings == []


@pytest.mark.parametrize("image", [5, "", None])
def test_a_server_without_an_image_is_not_read(image: object) -> None:
    parsed = parse_manifests(stream(server("x", image=image)))
    assert parsed.entries == {}
    assert parsed.warnings == ["x: spec is not a stdio MCPServer with an image: not read"]


def test_package_images_run_their_package_and_other_images_run_in_docker() -> None:
    parsed = parse_manifests(stream(
        server("git", image="uvx://git+https://github.com/o/r", args=["serve"]),
        server("node", image="npx://@scope/pkg@1.0.0"),
        server("named-uvx", image="uvx"),  # an image, not a package: no scheme
    ))  # fmt: skip
    assert parsed.entries["git"] == ServerEntry(
        command="uvx", args=("git+https://github.com/o/r", "serve")
    )
    assert parsed.entries["node"] == ServerEntry(command="npx", args=("-y", "@scope/pkg@1.0.0"))
    assert parsed.entries["named-uvx"] == ServerEntry(
        command="docker", args=("run", "-i", "--rm", "uvx")
    )


def test_a_reference_to_no_secret_is_left_as_written() -> None:
    parsed = parse_manifests(stream(server(
        "s", image="img", args=["--home", "$(HOME)", "--key", "$(API_KEY)", "$$(HOME)"],
        secrets=[{"name": "k", "key": "api_key", "targetEnvName": "API_KEY"}],
    )))  # fmt: skip
    assert parsed.entries["s"].args[-5:] == (
        "--home", "$(HOME)", "--key", "${API_KEY}", "$(HOME)",
    )  # fmt: skip


@pytest.mark.parametrize("url", [None, "", 42])
def test_a_remote_proxy_without_a_url_is_not_read(url: object) -> None:
    parsed = parse_manifests(stream(proxy("api", remoteUrl=url)))
    assert parsed.entries == {}
    assert parsed.warnings == ["api: spec.remoteUrl is missing: not read"]


def test_a_remote_proxys_transport_is_kept_when_mcpctl_has_it() -> None:
    parsed = parse_manifests(stream(
        proxy("sse", remoteUrl="https://a/sse", transport="sse"),
        proxy("http", remoteUrl="https://a/mcp", transport="streamable-http"),
        proxy("other", remoteUrl="https://a/ws", transport="websocket"),
    ))  # fmt: skip
    assert parsed.entries["sse"].transport == "sse"
    assert parsed.entries["http"].transport == "streamable-http"
    assert parsed.entries["other"] == ServerEntry(url="https://a/ws")


def test_only_a_bearer_token_auth_config_is_read() -> None:
    def auth(name: str, kind: str) -> dict[str, Any]:
        spec = {"type": kind, "bearerToken": {"tokenSecretRef": {"name": "t", "key": "tok"}}}
        return {"apiVersion": API, "kind": "MCPExternalAuthConfig", "metadata": {"name": name},
                "spec": spec}  # fmt: skip

    parsed = parse_manifests(stream(
        auth("bearer", "bearerToken"), auth("oauth", "tokenExchange"),
        proxy("a", remoteUrl="https://a/mcp", externalAuthConfigRef={"name": "bearer"}),
        proxy("b", remoteUrl="https://b/mcp", externalAuthConfigRef={"name": "oauth"}),
    ))  # fmt: skip
    assert parsed.entries["a"].auth == AuthConfig(type="bearer", token="${TOK}")
    assert parsed.entries["b"].auth is None
    assert parsed.warnings == [
        "b: spec.externalAuthConfigRef is not a bearerToken MCPExternalAuthConfig of this "
        "stream: not read"
    ]


def test_a_header_secret_reference_that_is_no_object_is_a_blank_placeholder() -> None:
    forward = {"addHeadersFromSecret": [{"headerName": "X-Key", "valueSecretRef": "key"}]}
    parsed = parse_manifests(stream(proxy("a", remoteUrl="https://a/mcp", headerForward=forward)))
    assert parsed.entries["a"].headers == {"X-Key": "${_}"}


def test_a_secret_reference_without_a_key_is_a_blank_placeholder() -> None:
    parsed = parse_manifests(stream(server("s", image="img", secrets=[
        {"name": "k", "targetEnvName": "TOKEN"}])))  # fmt: skip
    assert parsed.entries["s"].env == {"TOKEN": "${_}"}


def test_empty_documents_of_a_stream_are_skipped() -> None:
    text = (
        "---\n" + stream(server("a", image="img")) + "---\n---\n" + stream(server("b", image="i"))
    )
    assert list(parse_manifests(text).entries) == ["a", "b"]


def test_a_document_without_a_kind_is_refused_in_words() -> None:
    with pytest.raises(UsageError) as caught:
        parse_manifests(stream(server("a", image="img"), {"metadata": {"name": "b"}}))
    assert caught.value.message == (
        "not a toolhive manifest: each document must be an object with a kind"
    )


@pytest.mark.parametrize("metadata", [None, "srv", ["srv"]])
def test_an_object_without_metadata_is_a_server_without_a_name(metadata: object) -> None:
    nameless = {"apiVersion": API, "kind": "MCPServer", "spec": {"image": "img"}}
    if metadata is not None:
        nameless["metadata"] = metadata
    other = {"apiVersion": "v1", "kind": "ConfigMap"}
    parsed = parse_manifests(stream(nameless, other, server("named", image="img")))
    assert list(parsed.entries) == ["named"]  # the servers after it are read
    assert parsed.warnings == [
        "?: (kind ConfigMap) is not read by toolhive",
        "?: metadata.name is not a new server name",
    ]


@pytest.mark.parametrize("spec", [None, "img", ["img"]])
def test_an_object_whose_spec_is_no_object_has_an_empty_one(spec: object) -> None:
    objects = [server("s"), proxy("p")]
    for obj in objects:
        obj.pop("spec")
        if spec is not None:
            obj["spec"] = spec
    parsed = parse_manifests(stream(*objects))
    assert parsed.entries == {}
    assert parsed.warnings == [
        "s: spec is not a stdio MCPServer with an image: not read",
        "p: spec.remoteUrl is missing: not read",
    ]


def test_a_name_that_is_taken_or_no_server_name_is_warned_and_the_rest_read() -> None:
    renamed = server("x", image="img")
    renamed["metadata"]["annotations"] = {NAME_KEY: "has space"}
    parsed = parse_manifests(stream(
        server("a", image="one"), proxy("a", remoteUrl="https://a/mcp"), renamed,
        server("b", image="two"),
    ))  # fmt: skip
    assert list(parsed.entries) == ["a", "b"]
    assert parsed.entries["a"].args[-1] == "one"  # the first of the name
    assert parsed.warnings == [
        "a: metadata.name is not a new server name",
        "has space: metadata.name is not a new server name",
    ]
