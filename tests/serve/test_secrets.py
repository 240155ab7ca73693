"""``secret_set``: the value is typed by the user on a page of this machine (URL-mode
elicitation) and goes to the keyring; it never passes through the client, the model or a
tool's arguments. The page itself: loopback, one use, its own form, its own host."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
import pytest

from mcpctl.serve.secretpage import SecretPages
from tests.auth.filekeyring import read_items
from tests.serve.conftest import ERAS, Answers, Served, error_text, structured

VALUE = "s3cr3t-" + "Zq9Xw8Vu7Ts6Rq5Po4Nm"


def request(
    url: str, data: dict[str, str] | None = None, headers: dict[str, str] | None = None
) -> tuple[int, str]:
    """(status, body) of a GET, or of a form POST when ``data`` is given."""
    body = urllib.parse.urlencode(data).encode() if data is not None else None
    req = urllib.request.Request(url, data=body, headers=headers or {})  # noqa: S310 -- loopback
    try:
        with urllib.request.urlopen(req, timeout=30) as answer:  # noqa: S310
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def form_key(page: str) -> str:
    found = re.search(r"name='form_key' value='([^']+)'", page)
    assert found, page
    return found.group(1)


def fill(url: str, value: str = VALUE) -> tuple[int, str]:
    """What the user does in the browser: open the page, type, send."""
    status, page = request(url)
    assert status == 200, page
    return request(url, {"form_key": form_key(page), "value": value})


@pytest.mark.parametrize("mode", ERAS)
def test_the_value_goes_from_the_page_to_the_keyring(served: Served, mode: str) -> None:
    served.write({})
    filled: list[tuple[int, str]] = []

    async def on_url(url: str) -> None:
        filled.append(await anyio.to_thread.run_sync(fill, url))

    answers = Answers(on_url=on_url)

    async def go() -> tuple[types.CallToolResult, int]:
        async with served.client("--allow-changes", mode=mode, answers=answers) as client:
            result = await client.call_tool("secret_set", {"name": "GITHUB_TOKEN"})
            again = await anyio.to_thread.run_sync(request, answers.asked[0].url)
            return result, again[0]

    result, again = run(go)
    outcome = structured(result)
    assert outcome["applied"] and outcome["detail"] == "GITHUB_TOKEN is stored in the OS keyring"
    [asked] = answers.asked
    assert isinstance(asked, types.ElicitRequestURLParams)
    assert asked.url.startswith("http://127.0.0.1:") and "GITHUB_TOKEN" in asked.message
    assert filled and filled[0][0] == 200 and "stored" in filled[0][1]
    items = read_items(served.tmp / "keyring.json")
    assert items["mcpctl\x00secret:GITHUB_TOKEN"] == VALUE
    assert VALUE not in json.dumps(result.model_dump(mode="json"))
    assert again == 404  # one use


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_declined_stores_nothing(served: Served, mode: str, action: str) -> None:
    served.write({})
    answers = Answers(actions=[action])

    async def go() -> tuple[dict[str, Any], int]:
        async with served.client("--allow-changes", mode=mode, answers=answers) as client:
            outcome = structured(await client.call_tool("secret_set", {"name": "API_KEY"}))
            gone = await anyio.to_thread.run_sync(request, answers.asked[0].url)
            return outcome, gone[0]

    outcome, gone = run(go)
    assert not outcome["applied"] and outcome["answer"] == action
    assert "mcpctl\x00secret:API_KEY" not in read_items(served.tmp / "keyring.json")
    assert gone == 404  # the page is gone


@pytest.mark.parametrize("mode", ERAS)
def test_refused_without_a_page_and_for_a_bad_name(served: Served, mode: str) -> None:
    served.write({})

    async def go() -> tuple[str, str]:
        async with served.client("--allow-changes", mode=mode) as client:  # cannot ask
            cannot = error_text(await client.call_tool("secret_set", {"name": "API_KEY"}))
        async with served.client("--allow-changes", mode=mode, answers=Answers()) as client:
            bad = error_text(await client.call_tool("secret_set", {"name": "api key"}))
        return cannot, bad

    cannot, bad = run(go)
    assert "URL-mode elicitation" in cannot and "mcpctl secret set API_KEY" in cannot
    assert "UPPER_SNAKE_CASE" in bad or "invalid" in bad.lower(), bad


def test_the_page_takes_one_value_from_its_own_form_on_its_own_host() -> None:
    stored: list[tuple[str, str]] = []
    pages = SecretPages(lambda name, value: stored.append((name, value)))
    try:
        page, url = pages.open("TOKEN")
        port = urllib.parse.urlsplit(url).port
        status, text = request(url)
        assert status == 200 and "TOKEN" in text and "type='password'" in text
        key = form_key(text)
        # Another host name (DNS rebinding) does not find the page.
        assert request(url, headers={"Host": f"evil.example:{port}"})[0] == 404
        # Another site's form, or a form without the page's key, is refused.
        assert request(url, {"form_key": key, "value": "x"},
                       {"Origin": "https://evil.example"})[0] == 403  # fmt: skip
        assert request(url, {"form_key": "guess", "value": "x"})[0] == 403
        assert request(url.replace(page.token, "x" * 43))[0] == 404
        assert request(url, {"form_key": key, "value": ""})[0] == 200  # asked again
        assert stored == []
        assert request(url, {"form_key": key, "value": "v1"})[0] == 200
        assert stored == [("TOKEN", "v1")] and page.stored and page.done.is_set()
        assert request(url, {"form_key": key, "value": "v2"})[0] == 404
        assert stored == [("TOKEN", "v1")]
    finally:
        pages.close()


def test_a_keyring_that_fails_is_said_on_the_page_and_to_the_tool() -> None:
    from mcpctl.errors import KeyringUnavailableError

    def broken(name: str, value: str) -> None:
        raise KeyringUnavailableError("no keyring backend")

    pages = SecretPages(broken)
    try:
        page, url = pages.open("TOKEN")
        status, text = fill(url)
        assert status == 500 and "no keyring backend" in text
        assert page.done.is_set() and not page.stored and page.error == "no keyring backend"
    finally:
        pages.close()


def run(fn: Any) -> Any:
    return anyio.run(fn)
