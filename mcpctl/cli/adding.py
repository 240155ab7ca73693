"""``mcpctl add --from-registry``: plan the entry (asking for missing values on a terminal),
then write it, or say where the server already is."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from mcpctl.cli import output
from mcpctl.cli.common import config_store, entry_summary, read_config
from mcpctl.results import Result

if TYPE_CHECKING:
    from mcpctl.registry.convert import MissingInput

__all__ = ["add_from_registry"]


def _ask(missing: MissingInput) -> str:
    label = missing.name + (f" ({missing.description})" if missing.description else "")
    value: str = typer.prompt(label)
    return value


def add_from_registry(
    name: str | None,
    spec: str,
    registry: str | None,
    prefer: Any,
    package_type: str | None,
    env: dict[str, str],
    headers: dict[str, str],
    *,
    overrides: dict[str, Any],
    force: bool,
    warnings: list[str],
    refresh_timeout: float | None = None,
    offline: bool = False,
) -> int:
    """Add ``spec`` from a registry; returns the exit code (0 also when it is there already).

    ``offline`` plans from the registries' cache alone, without touching the network. The
    entry is checked as a plain ``add``'s is: a command (the runtime: ``uvx``, ``npx``,
    ``docker``...) not on PATH is a warning.

    Raises:
        UsageError, MissingInputError, RegistryError, PlaintextSecretError: see
        :func:`mcpctl.registry.install.plan_add` and :func:`~mcpctl.registry.install.apply_add`.
    """
    import sys

    from mcpctl.cli.common import cache, sources
    from mcpctl.registry.install import apply_add, plan_add
    from mcpctl.registry.syncing import REFRESH_TIMEOUT

    store = config_store()
    entries = read_config().config.entries
    plan = plan_add(
        cache(), sources([registry] if registry else None), spec, entries,
        registry=registry, name=name, prefer=prefer, package_type=package_type, env=env,
        headers=headers, overrides=overrides, force=force,
        ask=_ask if sys.stdin.isatty() else None,
        offline=offline,
        refresh_timeout=REFRESH_TIMEOUT if refresh_timeout is None else refresh_timeout,
    )  # fmt: skip
    warnings += plan.warnings
    record = plan.record
    data: dict[str, Any] = {
        "name": plan.name,
        "config": str(store.path),
        "changed": not plan.unchanged,
        "replaced": False,
        "registry": plan.registry,
        "server": entry_summary(plan.name, plan.entry),
        "secrets": plan.conversion.secrets,
    }
    if plan.unchanged:
        output.info(
            f"{record.name} is already configured as {plan.existing!r} in {store.path}; "
            "nothing changed (--force replaces it, a NAME adds another copy)"
        )
        flags = {
            "--env": bool(env),
            "--header": bool(headers),
            "--description": "description" in overrides,
            "--timeout": "timeout" in overrides,
            "--disabled": not overrides.get("enabled", True),
            "--allow-literal": bool(overrides.get("allow_literal")),
        }
        given = [flag for flag, used in flags.items() if used]
        if given:
            warnings.append(f"{', '.join(given)} not applied: {plan.existing!r} is left as it is")
        existing = entries.get(str(plan.existing))
        if existing is not None:
            data["server"] = entry_summary(str(plan.existing), existing)
        return output.emit(Result("add", data, warnings))
    from mcpctl.config.validate import entry_warnings

    warnings += entry_warnings(plan.name, plan.entry.to_data(), base=store.path.parent)
    outcome = apply_add(store, plan, force=force)
    assert outcome is not None
    data["replaced"] = outcome.replaced
    verb = "Replaced" if outcome.replaced else "Added"
    output.info(
        f"{verb} {plan.name!r} from {plan.registry}: {record.name}@{record.version} "
        f"({plan.conversion.kind})"
    )
    if plan.conversion.secrets:
        output.info(f"It needs secrets before it works: {', '.join(plan.conversion.secrets)}")
        for secret in plan.conversion.secrets:
            output.info(f"  mcpctl secret set {secret}   (or: export {secret}=...)")
    return output.emit(Result("add", data, warnings))
