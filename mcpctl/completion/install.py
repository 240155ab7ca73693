"""Where each shell looks for completion scripts, and putting mcpctl's there.

* bash: ``${XDG_DATA_HOME:-~/.local/share}/bash-completion/completions/mcpctl``, the user
  folder the bash-completion package loads a command's script from on its first TAB;
* zsh: ``~/.zfunc/_mcpctl``, a folder to add to ``fpath`` before ``compinit`` (the
  convention rustup and poetry document);
* fish: ``${XDG_CONFIG_HOME:-~/.config}/fish/completions/mcpctl.fish``, which fish loads by
  itself.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from mcpctl.completion.scripts import SHELLS, script
from mcpctl.errors import UsageError

__all__ = ["Installed", "detect_shell", "install", "script_path"]


class Installed(NamedTuple):
    """A script written: the shell, where, and what the user still has to do."""

    shell: str
    path: Path
    next_steps: list[str]


def _base(env: Mapping[str, str], var: str, default: str) -> Path:
    value = env.get(var, "")
    home = Path(env.get("HOME") or Path.home())
    return Path(value) if Path(value).is_absolute() else home / default


def detect_shell(env: Mapping[str, str] | None = None) -> str:
    """The user's shell, from ``$SHELL``.

    Raises:
        UsageError: ``$SHELL`` is not set, or not bash, zsh or fish.
    """
    value = (os.environ if env is None else env).get("SHELL", "")
    name = Path(value).name
    if name not in SHELLS:
        said = f"$SHELL is {value!r}" if value else "$SHELL is not set"
        raise UsageError(
            f"cannot tell which shell to complete for ({said})",
            hint="name it: mcpctl completion install bash|zsh|fish",
        )
    return name


def script_path(shell: str, env: Mapping[str, str] | None = None) -> Path:
    """Where ``shell`` looks for mcpctl's completion script (see the module's text)."""
    env = os.environ if env is None else env
    if shell == "bash":
        data = _base(env, "XDG_DATA_HOME", ".local/share")
        return data / "bash-completion" / "completions" / "mcpctl"
    if shell == "zsh":
        return _base(env, "HOME", "") / ".zfunc" / "_mcpctl"
    return _base(env, "XDG_CONFIG_HOME", ".config") / "fish" / "completions" / "mcpctl.fish"


def _next_steps(shell: str, path: Path, env: Mapping[str, str]) -> list[str]:
    if shell == "bash":
        return [
            "Open a new shell: the bash-completion package loads it on the first TAB.",
            f"Without that package, add to ~/.bashrc: source {path}",
        ]
    if shell == "zsh":
        rc = _base(env, "ZDOTDIR", "") / ".zshrc"
        try:
            listed = str(path.parent.name) in rc.read_text("utf-8", errors="replace")
        except OSError:
            listed = False
        steps = [] if listed else [
            f"Add to {rc}, before compinit: fpath=({path.parent} $fpath)",
            "and, if it is not there yet: autoload -Uz compinit && compinit",
        ]  # fmt: skip
        return [*steps, "Open a new shell (if it completes nothing: rm -f ~/.zcompdump*)."]
    return ["Open a new shell: fish loads it by itself."]


def install(shell: str, env: Mapping[str, str] | None = None) -> Installed:
    """Write ``shell``'s completion script where it looks for it (atomically).

    Raises:
        ValueError: ``shell`` is not bash, zsh or fish.
        ReadOnlyError, StorageError: the folder or file cannot be written.
    """
    from mcpctl.config.atomicwrite import atomic_write, io_error

    env = os.environ if env is None else env
    text = script(shell)
    path = script_path(shell, env)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise io_error(exc, path.parent, "create") from None
    atomic_write(path, text.encode("utf-8"), mode=0o644)
    return Installed(shell, path, _next_steps(shell, path, env))
