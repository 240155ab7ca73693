"""mcpctl.sdk: the one importer of the MCP SDK's ``mcp`` package, and the SDK layout
its client-half loading relies on (these tests fail loudly when an SDK release changes it)."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

from mcpctl import sdk

LAYOUT_CHANGED = (
    "the MCP SDK's layout changed: mcpctl.sdk can no longer load its client modules "
    "without the server half. Update mcpctl/sdk.py to the new layout, or drop the "
    "client-half loading (plain imports) if it saves nothing any more"
)


def _type_checking_imports() -> dict[str, str]:
    """name -> module of the imports under ``if TYPE_CHECKING:`` in sdk.py."""
    tree = ast.parse(Path(sdk.__file__).read_text(encoding="utf-8"))
    block = next(
        n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"
    )
    return {
        alias.name: node.module
        for node in block.body
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("mcp.")
        for alias in node.names
    }


def test_the_type_checker_sees_the_names_that_load() -> None:
    # A name missing from the TYPE_CHECKING imports would silently be Any to mypy.
    assert _type_checking_imports() == {**sdk.MODULES, **sdk.SERVER_MODULES}
    assert not set(sdk.MODULES) & set(sdk.SERVER_MODULES)
    assert set(sdk.__all__) == {
        *sdk.MODULES,
        *sdk.SERVER_MODULES,
        "MODULES",
        "SERVER_MODULES",
        "use_client_half",
    }
    assert sorted(dir(sdk)) == sorted(sdk.__all__)


def test_every_name_is_the_sdks_own() -> None:
    for name, module in {**sdk.MODULES, **sdk.SERVER_MODULES}.items():
        assert getattr(sdk, name) is getattr(importlib.import_module(module), name), name


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        sdk.NoSuchThing  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchThing" in str(exc)
    else:
        raise AssertionError("no AttributeError")


def test_the_stand_ins_are_packages() -> None:
    for package in sdk.STAND_INS:
        spec = importlib.util.find_spec(package)
        assert spec is not None and spec.submodule_search_locations is not None, (
            f"{package} is no longer a package: {LAYOUT_CHANGED}"
        )


CLIENT_HALF = """
import importlib, json, sys
from mcpctl import sdk
sdk.use_client_half()
loaded = {name: getattr(sdk, name) for name in sdk.MODULES}
extra = sorted(m for m in sys.modules
               if m in ("mcp", "mcp.client") or m.startswith(("mcp.server", "starlette", "uvicorn")))
import mcp  # the real package, for whoever imports it next
same = [name for name, value in loaded.items()
        if value is getattr(importlib.import_module(sdk.MODULES[name]), name)]
print(json.dumps({"extra": extra, "same": sorted(same), "real": mcp.__spec__ is not None
                  and hasattr(mcp, "ClientSession")}))
"""


def test_every_name_loads_without_the_server_half() -> None:
    r = subprocess.run(
        [sys.executable, "-c", CLIENT_HALF], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, f"{LAYOUT_CHANGED}\n{r.stderr}"
    found = json.loads(r.stdout)
    extra = found["extra"]
    assert extra == [], f"{LAYOUT_CHANGED}: {len(extra)} server-side modules loaded: {extra[:8]}"
    assert found["same"] == sorted(sdk.MODULES), LAYOUT_CHANGED
    assert found["real"], "a later `import mcp` must get the real package"


SERVER_AFTER_CLIENT_HALF = """
import anyio, json, sys
from mcpctl import sdk
sdk.use_client_half()
client_names = {name: getattr(sdk, name) for name in sdk.MODULES}  # the client half, first
app = sdk.MCPServer("after-the-client-half")
real = "mcp" in sys.modules and hasattr(sys.modules["mcp"], "ClientSession")

@app.tool()
def hello(who: str) -> str:
    return f"hello {who}"

async def main():
    from mcp import Client
    async with Client(app, mode="legacy") as client:
        result = await client.call_tool("hello", {"who": "serve"})
    print(json.dumps({"text": result.content[0].text, "real": real,
                      "same": client_names["ClientSession"] is sdk.ClientSession}))

anyio.run(main)
"""


def test_the_server_half_loads_after_the_client_half() -> None:
    # The program may have probed (client half, stand-ins) before it serves: the server's
    # names load with the real package (never through stand-ins), and a server answers.
    r = subprocess.run(
        [sys.executable, "-c", SERVER_AFTER_CLIENT_HALF], capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.strip().splitlines()[-1]) == {
        "text": "hello serve",
        "real": True,
        "same": True,
    }
