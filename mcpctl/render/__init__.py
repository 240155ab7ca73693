"""Rendering the config for proxies, clients and clusters, and importing what other tools have.

    from mcpctl.render import render, parse

One module per target family, each a pure pair per target: ``render`` (entries in, text out)
and ``parse`` (text in, entries out). :mod:`~mcpctl.render.targets` is the table of targets.
Every parse reads its text with :mod:`~mcpctl.render.readers` (JSON with comments, TOML,
YAML: one reader per format, one set of limits for every file another tool wrote).

Also here, because each is built on the targets' parse half:

* :mod:`~mcpctl.render.importing` -- ``mcpctl import``: another tool's file scanned, planned
  and applied to this config;
* :mod:`~mcpctl.render.clientfile` -- a client's file as that client runs it (the check of
  ``render --install``), and :mod:`~mcpctl.render.clienthealth` -- ``health --as CLIENT``,
  which probes those entries through :mod:`mcpctl.probe`;
* :mod:`~mcpctl.render.install` -- ``render --install``'s merge into a client's file, which
  edits a JSON file in place (:mod:`~mcpctl.render.jsonedit`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpctl.config.model import ServerEntry
    from mcpctl.config.placeholders import SecretSource
    from mcpctl.render.base import Parsed, Rendered
    from mcpctl.render.delivery import Launcher, SecretsMode

__all__ = ["parse", "render", "target_names"]


def render(
    target: str,
    entries: Mapping[str, ServerEntry],
    *,
    only: Iterable[str] = (),
    template: dict[str, Any] | None = None,
    inline_secrets: bool = False,
    secrets: SecretSource | None = None,
    environ: Mapping[str, str] | None = None,
    pinned: Mapping[str, Sequence[str]] | None = None,
    secrets_mode: SecretsMode | None = None,
    launcher: Launcher | None = None,
    listen: str | None = None,
    serve: ServerEntry | None = None,
) -> Rendered:
    """``entries`` (enabled ones; only those named in ``only`` when given) as ``target``'s
    document.

    ``listen`` (``HOST:PORT``, ``[::1]:PORT``) is where the proxy listens, for the targets
    whose file says it (``mcp-proxy``); such a target warns when what it renders listens
    beyond this machine with no auth token.

    ``secrets_mode`` says how secrets reach the client (:mod:`mcpctl.render.delivery`):
    ``auto`` (the default; ``inline`` when ``inline_secrets``) runs a stdio server whose
    placeholders only the keyring can fill through ``launcher`` (``mcpctl run NAME``),
    ``launcher`` runs every stdio server so, ``env`` leaves placeholders to the client and
    ``inline`` writes the values. A cluster target keeps its own secret objects.

    ``serve`` (:func:`mcpctl.render.delivery.serve_entry`) is added to a client's servers
    as :data:`~mcpctl.render.delivery.SELF_NAME`: the entry that starts ``mcpctl serve``.

    ``pinned`` (server -> tool names, as a lock file recorded them) makes each listed
    server's tool filter an allow list of exactly those tools that its own filter lets
    through, so a tool the server adds later is not exposed; a server not in ``pinned`` is
    rendered as it is, with a warning.

    Raises:
        UsageError: an unknown target, a name in ``only`` that is not configured, a
            ``listen`` that is not ``HOST:PORT`` or that the target has no place for, or
            ``serve`` for a target that is not a client or beside a server of its name.
        PlaceholderError: ``inline_secrets`` and a variable has no value.
    """
    import os

    from mcpctl.config.controlchars import refuse_lone_surrogates
    from mcpctl.errors import ServerNotFoundError
    from mcpctl.render.base import RenderRequest
    from mcpctl.render.delivery import SELF_NAME, Launcher, deliver, inline
    from mcpctl.render.listen import listen_for
    from mcpctl.render.targets import get_target

    chosen_target = get_target(target)
    address = listen_for(chosen_target, listen) if listen is not None else None
    if serve is not None:
        _check_self(target, chosen_target.family, entries)

    wanted = list(dict.fromkeys(only))
    missing = [n for n in wanted if n not in entries]
    if missing:
        raise ServerNotFoundError.for_names(missing, entries)
    chosen = {
        name: entry
        for name, entry in entries.items()
        if entry.enabled and (not wanted or name in wanted)
    }
    refuse_lone_surrogates(chosen, f"render {target}")
    notes: list[str] = []
    if pinned is not None:
        chosen, notes = _pin(chosen, pinned)
    mode = secrets_mode or ("inline" if inline_secrets else "auto")
    request = RenderRequest(chosen, template, mode == "inline", secrets, environ, listen=address)
    launched: list[str] = []
    label = str(getattr(chosen_target, "label", target))
    env = os.environ if environ is None else environ
    holds_secrets = False
    syntax = getattr(chosen_target, "syntax", None)
    spelled = chosen_target.family != "client" or getattr(syntax, "spell", None) is not None
    if chosen_target.family == "client" and mode == "inline":
        expands: str | None = getattr(syntax, "label", None) if spelled else None
        delivery = inline(chosen, environ=env, secrets=secrets, label=label, expands=expands)
        request.entries, holds_secrets = delivery.entries, delivery.holds_secrets
        notes += delivery.notes
    elif chosen_target.family != "cluster" and mode != "inline":
        how = launcher or Launcher()
        delivery = deliver(chosen, mode, launcher=how, environ=env, secrets=secrets,
                           label=label, expands=spelled)  # fmt: skip
        request.entries, launched = delivery.entries, delivery.launched
        request.keyring_vars = delivery.keyring_vars
        notes += delivery.notes
        if mode != "env":
            request.headers_command = how.headers_command
    if serve is not None:  # after the delivery: mcpctl serve is mcpctl, never launched by it
        request.entries = {**request.entries, SELF_NAME: serve}
    rendered = chosen_target.render(request)
    rendered.warnings[:0] = notes
    rendered.holds_secrets = rendered.holds_secrets or holds_secrets
    rendered.launched = launched
    return rendered


def _check_self(target: str, family: str, entries: Mapping[str, ServerEntry]) -> None:
    """Raises UsageError when ``mcpctl serve`` cannot be added to ``target``'s servers."""
    from mcpctl.errors import UsageError
    from mcpctl.render.delivery import SELF_NAME

    if family != "client":
        raise UsageError(
            f"--self adds mcpctl to a client's servers; {target} is a {family}",
            hint="render it for a client: mcpctl render claude-code --self",
        )
    if SELF_NAME in entries:
        raise UsageError(
            f"a server named {SELF_NAME!r} is configured: --self would stand in its place",
            hint=f"rename that server ('mcpctl remove {SELF_NAME}' and add it again under "
            "another name)",
            subjects=(SELF_NAME,),
        )


def _pin(
    entries: Mapping[str, ServerEntry], pinned: Mapping[str, Sequence[str]]
) -> tuple[dict[str, ServerEntry], list[str]]:
    from dataclasses import replace

    from mcpctl.config.model import ToolFilter

    out: dict[str, ServerEntry] = {}
    notes: list[str] = []
    for name, entry in entries.items():
        tools = pinned.get(name)
        if tools is None:
            notes.append(
                f"{name}: nothing pinned in the lock file: rendered unpinned, every tool exposed"
            )
            out[name] = entry
            continue
        own = entry.tools
        allow = tuple(t for t in dict.fromkeys(tools) if own is None or own.allows(t))
        out[name] = replace(entry, tools=ToolFilter(allow=allow))
    return out, notes


def parse(target: str, text: str) -> Parsed:
    """The entries of ``target``'s document ``text``.

    Raises:
        UsageError: an unknown target, or ``text`` is not such a document.
    """
    from mcpctl.render.targets import get_target

    return get_target(target).parse(text)


def target_names() -> list[str]:
    """Every render/import target."""
    from mcpctl.render.targets import target_names as names

    return names()
