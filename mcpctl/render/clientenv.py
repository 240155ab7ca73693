"""What environment each client gives the stdio servers it starts.

Clients differ: Claude Code, VS Code, Zed, opencode and Goose pass their whole environment
(the entry's ``env`` on top); Claude Desktop, Cline, Roo Code and Continue pass a few
variables (the MCP SDK's list, or one like it) and the entry's ``env``; Codex passes its
own few and the names its ``env_vars`` lists; Gemini CLI passes its environment without the
variables it takes for secrets (``*KEY*``, ``*TOKEN*``, ``*CERT*``... and URLs with a
password). :data:`CLIENT_ENV` is that table, with where each claim comes from (also in
docs/render-clients.md); a client whose behaviour is not known is taken to pass its whole
environment. ``health --as`` starts a client's servers with :meth:`ClientEnv.environment`,
and says which variables make its verdict differ from plain ``health``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mcpctl.probe.serverenv import SDK_INHERITED_ENV, TRUST_ENV

if TYPE_CHECKING:
    from mcpctl.render.base import ClientTarget

__all__ = ["CLIENT_ENV", "ClientEnv", "client_env", "listed_env", "names_to_pass", "own_names"]

_MACOS_TEXT = ("__CF_USER_TEXT_ENCODING",)

# Codex's own list (codex-rs/rmcp-client/src/utils.rs, DEFAULT_ENV_VARS).
_CODEX = (
    ("HOME", "LOGNAME", "PATH", "SHELL", "USER", "__CF_USER_TEXT_ENCODING", "LANG", "LC_ALL",
     "TERM", "TMPDIR", "TZ")
    if sys.platform != "win32"
    else ("ALLUSERSPROFILE", "APPDATA", "COMPUTERNAME", "COMSPEC", "HOMEDRIVE", "HOMEPATH",
          "LOCALAPPDATA", "PATH", "PATHEXT", "PROGRAMDATA", "PROGRAMFILES", "SYSTEMDRIVE",
          "SYSTEMROOT", "TEMP", "TMP", "USERNAME", "USERPROFILE", "WINDIR")
)  # fmt: skip

# Continue adds these to the SDK's list, and PATH from the user's login shell.
_CONTINUE = ("HOME", "USER", "USERPROFILE", "LOGNAME", "USERNAME")


def _claude_code_drops(name: str, value: str) -> bool:
    """What Claude Code keeps to itself: its own sign-in and its telemetry settings."""
    return name.startswith("OTEL_") or name in (
        "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CODE_SUBSCRIPTION_TYPE", "CLAUDE_CODE_RATE_LIMIT_TIER",
        "CLAUDE_CODE_CHILD_SESSION", "CLAUDE_CODE_OTEL_DIAG_STDERR",
    )  # fmt: skip


# Gemini CLI's environment sanitisation (packages/core/src/services/environmentSanitization.ts).
_GEMINI_ALWAYS = frozenset(
    ("PATH", "SYSTEMROOT", "COMSPEC", "PATHEXT", "WINDIR", "TEMP", "TMP", "USERPROFILE",
     "SYSTEMDRIVE", "HOME", "LANG", "SHELL", "TMPDIR", "USER", "LOGNAME", "TERM", "COLORTERM")
)  # fmt: skip
_GEMINI_NEVER = frozenset(
    ("CLIENT_ID", "DB_URI", "CONNECTION_STRING", "AWS_DEFAULT_REGION", "AZURE_CLIENT_ID",
     "AZURE_TENANT_ID", "SLACK_WEBHOOK_URL", "TWILIO_ACCOUNT_SID", "DATABASE_URL",
     "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_ACCOUNT", "FIREBASE_PROJECT_ID")
)  # fmt: skip
_GEMINI_NAMES = re.compile("TOKEN|SECRET|PASSWORD|PASSWD|KEY|AUTH|CREDENTIAL|CREDS|PRIVATE|CERT")
_GEMINI_VALUES = re.compile(
    r"-----BEGIN (RSA|OPENSSH|EC|PGP) PRIVATE KEY-----|-----BEGIN CERTIFICATE-----"
    r"|(HTTPS?|FTP|SMTP)://[^:\s]{1,1024}:[^@\s]{1,1024}@"
    r"|(GHP|GHO|GHU|GHS|GHR|GITHUB_PAT)_[A-Z0-9_]{36,}|AIZASY[A-Z0-9_\\-]{33}|AKIA[A-Z0-9]{16}"
    r"|EYJ[A-Z0-9_-]{0,10240}\.[A-Z0-9_-]{0,10240}\.[A-Z0-9_-]{0,10240}"
    r"|(S|R)K_(LIVE|TEST)_[0-9A-Z]{24}|XOX[ABPR]-[A-Z0-9-]+"
)


def _gemini_drops(name: str, value: str) -> bool:
    """Whether Gemini CLI leaves ``name`` out of a server's environment (it compares both in
    upper case)."""
    key = name.upper()
    if key.startswith("GEMINI_CLI_"):
        return False
    if _GEMINI_VALUES.search(value[:20000].upper()):
        return True
    if key.startswith("GIT_CONFIG_") or key in _GEMINI_ALWAYS:
        return False
    return key in _GEMINI_NEVER or _GEMINI_NAMES.search(key) is not None


@dataclass(frozen=True)
class ClientEnv:
    """How a client builds the environment of a stdio server it starts.

    Attributes:
        whole: it passes its whole environment (less what ``drops`` says); else only the
            variables of ``passes``, and those its file lists for the server.
        passes: the variables a client that does not pass everything passes.
        drops: ``(name, value) -> bool``: what a ``whole`` client leaves out.
        allowlist: a variable that, set to a true value, makes the client pass only the SDK's
            list (Claude Code's ``CLAUDE_CODE_MCP_ALLOWLIST_ENV``).
        adds: what the client sets for every server (Claude Code's ``CLAUDECODE=1``, which
            servers read to know who started them).
        known: whether the behaviour comes from the client's source or documentation (else
            it is assumed: the whole environment).
        source: where that comes from.
    """

    whole: bool
    passes: tuple[str, ...] = ()
    drops: Callable[[str, str], bool] | None = None
    allowlist: str | None = None
    adds: Mapping[str, str] | None = None
    known: bool = True
    source: str = ""

    def environment(
        self,
        environ: Mapping[str, str],
        listed: bool | tuple[str, ...] = (),
        own: Mapping[str, str] | None = None,
    ) -> dict[str, str]:
        """The environment a server gets from this client: of ``environ`` (the client's),
        what the client passes, plus the names the file ``listed`` for it; ``own`` (the
        entry's ``env``, resolved) on top."""
        whole = self.whole
        passes = self.passes
        if self.allowlist is not None and _true(environ.get(self.allowlist, "")):
            whole, passes = False, SDK_INHERITED_ENV
        if whole:
            drops = self.drops
            env = {k: v for k, v in environ.items() if drops is None or not drops(k, v)}
        else:
            names = (*passes, *(listed if isinstance(listed, tuple) else ()))
            env = {n: environ[n] for n in names if n in environ and not environ[n].startswith("()")}
        return {**env, **(self.adds or {}), **(own or {})}

    @property
    def summary(self) -> str:
        """What it passes, in a few words."""
        if self.whole:
            how = "its whole environment"
            return how + (", less some variables" if self.drops is not None else "")
        return f"{', '.join(self.passes)} and the entry's env"


def _true(value: str) -> bool:
    return value.strip().lower() in ("1", "true", "yes", "on")


_SDK = (*SDK_INHERITED_ENV, *(() if sys.platform == "win32" else _MACOS_TEXT))
_ASSUMED = ClientEnv(True, known=False, source="not documented; assumed")

#: target -> how it builds a stdio server's environment (the whole environment when unknown).
CLIENT_ENV: dict[str, ClientEnv] = {
    "claude-desktop": ClientEnv(
        False, _SDK,
        source="modelcontextprotocol.io, Debugging: 'MCP servers inherit only a subset of "
        "environment variables automatically, like USER, HOME, and PATH'",
    ),
    "claude-code": ClientEnv(
        True, drops=_claude_code_drops, allowlist="CLAUDE_CODE_MCP_ALLOWLIST_ENV",
        adds={"CLAUDECODE": "1"},
        source="Claude Code 2.1 (npm @anthropic-ai/claude-code), its stdio transport: "
        "{...process.env, CLAUDECODE: '1', ...server.env}",
    ),
    "vscode": ClientEnv(
        True, source="microsoft/vscode src/vs/workbench/api/node/extHostMcpNode.ts: "
        "{...process.env}, envFile, then env",
    ),
    "cursor": _ASSUMED,
    "windsurf": _ASSUMED,
    "gemini": ClientEnv(
        True, drops=_gemini_drops,
        source="google-gemini/gemini-cli packages/core/src/tools/mcp-client.ts and "
        "services/environmentSanitization.ts",
    ),
    "codex": ClientEnv(
        False, _CODEX,
        source="openai/codex codex-rs/rmcp-client/src/utils.rs: DEFAULT_ENV_VARS and env_vars",
    ),
    "zed": ClientEnv(
        True, source="zed-industries/zed crates/context_server/src/transport/stdio_transport.rs",
    ),
    "cline": ClientEnv(
        False, SDK_INHERITED_ENV,
        source="cline/cline apps/vscode/src/services/mcp/McpHub.ts: getDefaultEnvironment()",
    ),
    "roo-code": ClientEnv(
        False, SDK_INHERITED_ENV,
        source="RooCodeInc/Roo-Code src/services/mcp/McpHub.ts: getDefaultEnvironment()",
    ),
    "continue": ClientEnv(
        False, tuple(dict.fromkeys((*SDK_INHERITED_ENV, *_CONTINUE))),
        source="continuedev/continue core/context/mcp/MCPConnection.ts: COMMONS_ENV_VARS",
    ),
    "lm-studio": _ASSUMED,
    "opencode": ClientEnv(
        True, source="anomalyco/opencode packages/opencode/src/mcp/index.ts: process.env",
    ),
    "amp": _ASSUMED,
    "goose": ClientEnv(
        True, source="block/goose crates/goose/src/agents/extension_manager.rs",
    ),
    "kiro": _ASSUMED,
    "qwen-code": ClientEnv(
        True, source="QwenLM/qwen-code packages/core/src/tools/mcp-client.ts: process.env",
    ),
    "copilot-cli": _ASSUMED,
}  # fmt: skip

# The key of a client's server entry that lists more variables for it to pass.
_LISTED_KEYS = {"codex": "env_vars"}


def client_env(target: str) -> ClientEnv:
    """How ``target`` builds a stdio server's environment (the whole environment when that is
    not known)."""
    return CLIENT_ENV.get(target, _ASSUMED)


def listed_env(client: ClientTarget, text: str) -> dict[str, tuple[str, ...]] | None:
    """Server name -> the variables ``client``'s file ``text`` lists for it to pass that server,
    as written (the import reader leaves out the ones mcpctl passes anyway); ``None`` for a
    client without such a list."""
    from mcpctl.errors import UsageError

    key = _LISTED_KEYS.get(client.name)
    if key is None:
        return None
    try:
        servers = client.servers_of(client.load(text))  # type: ignore[attr-defined]
    except UsageError:
        return {}
    found: dict[str, tuple[str, ...]] = {}
    for name, raw in servers.items() if isinstance(servers, dict) else ():
        names = raw.get(key) if isinstance(raw, dict) else None
        if isinstance(names, list):
            items = [n.get("name") if isinstance(n, dict) else n for n in names]
            found[str(name)] = tuple(n for n in items if isinstance(n, str))
    return found


def names_to_pass(inherit_env: bool | tuple[str, ...]) -> list[str]:
    """The variables to list for a client or proxy that passes a server only the names its
    file lists (Codex's ``env_vars``, 1mcp's ``envFilter``): the entry's ``inherit_env``
    names, then what mcpctl passes every server by default beyond the SDK's few (the trust
    and proxy settings), so that the server gets what ``mcpctl health`` gave it."""
    own = inherit_env if isinstance(inherit_env, tuple) else ()
    return list(dict.fromkeys((*own, *TRUST_ENV)))


def own_names(names: tuple[str, ...]) -> tuple[str, ...]:
    """``names`` read back from such a list, less the ones mcpctl passes anyway."""
    return tuple(n for n in names if n not in TRUST_ENV)
