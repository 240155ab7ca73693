"""The scripts in completions/, run by real shells against the installed program.

bash is on every machine that runs these tests; zsh and fish are integration tests (Debian
packages ``zsh`` and ``fish``). zsh is driven through a pseudo-terminal (its zpty module),
since its completion system only runs inside the line editor; fish answers ``complete -C``.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from mcpctl.completion.toolcache import remember_tools
from mcpctl.paths import Paths
from mcpctl.render.targets import TARGET_MODULES
from tests.completion.conftest import CONFIG
from tests.conftest import need_program, write_config

COMPLETIONS = Path(__file__).resolve().parent.parent.parent / "completions"
BIN = str(Path(sys.executable).parent)


def shell_env() -> dict[str, str]:
    """The test's environment, with this environment's mcpctl first on PATH."""
    return {**os.environ, "PATH": BIN + os.pathsep + os.environ.get("PATH", "")}


@pytest.fixture
def project(isolated: Path) -> Path:
    """A config with servers, and tool names from an earlier probe of 'time'."""
    write_config(isolated / "external-mcps.json", CONFIG)
    paths = Paths.from_env()
    remember_tools(paths.cache_dir, paths.config, {"time": ["get_current_time", "convert_time"]})
    (isolated / "backups").mkdir()
    (isolated / "backup.json").write_text("{}")
    return isolated


# --- bash ---------------------------------------------------------------------------------

BASH_DRIVER = """
source {script}
complete -p mcpctl
compopt() {{ echo "compopt $*"; }}  # outside a real TAB press, the builtin refuses to run
COMP_LINE={line}
COMP_POINT=${{#COMP_LINE}}
read -ra COMP_WORDS <<< "$COMP_LINE"
[[ $COMP_LINE == *' ' ]] && COMP_WORDS+=('')
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
_mcpctl_complete mcpctl "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf 'reply: %s\\n' "${{COMPREPLY[@]}}"
"""


def bash(line: str, cwd: Path) -> tuple[str, list[str]]:
    """(what ``complete -p`` and compopt said, COMPREPLY) for a TAB at the end of ``line``."""
    program = need_program("bash", "the bash completion script runs in it")
    driver = BASH_DRIVER.format(script=COMPLETIONS / "mcpctl.bash", line=shlex.quote(line))
    r = subprocess.run([program, "--norc", "--noprofile", "-c", driver], capture_output=True,
                       text=True, cwd=cwd, env=shell_env(), timeout=60)  # fmt: skip
    assert r.returncode == 0 and r.stderr == "", r.stderr
    lines = r.stdout.splitlines()
    said = "\n".join(x for x in lines if not x.startswith("reply: "))
    return said, [
        x.removeprefix("reply: ") for x in lines if x.startswith("reply: ") and x != "reply: "
    ]


def test_bash_registers_the_function(project: Path) -> None:
    said, _ = bash("mcpctl ", project)
    assert said.splitlines()[0] == "complete -F _mcpctl_complete mcpctl"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("mcpctl sn", ["snapshot"]),
        ("mcpctl snapshot ", ["save", "diff"]),
        ("mcpctl registry ", ["list", "add", "remove", "sync"]),
        (
            "mcpctl list --",
            ["--enabled", "--group", "--config", "--json", "--quiet", "--verbose", "--help"],
        ),
        ("mcpctl add web --transport ", ["streamable-http", "sse"]),
        ("mcpctl add web --transport=s", ["streamable-http", "sse"]),
        ("mcpctl get ", ["time", "github", "files"]),
        ("mcpctl enable ", ["files"]),
        ("mcpctl remove time ", ["github", "files"]),
        ("mcpctl call time ", ["get_current_time", "convert_time"]),
        ("mcpctl call time conv", ["convert_time"]),
        ("mcpctl call github ", []),
        ("mcpctl render cl", ["claude-desktop", "claude-code", "cline"]),
        ("mcpctl secret set ", ["DOCS_DIR", "FILES_KEY", "GITHUB_TOKEN"]),
        ("mcpctl auth ", ["status", "logout", "github"]),
        ("mcpctl completion install ", ["bash", "zsh", "fish"]),
    ],
)
def test_bash_completes(project: Path, line: str, expected: list[str]) -> None:
    assert bash(line, project)[1] == expected


def test_bash_render_targets(project: Path) -> None:
    assert bash("mcpctl render ", project)[1] == list(TARGET_MODULES)


def test_bash_files(project: Path) -> None:
    said, reply = bash("mcpctl undo --file back", project)
    assert reply == ["backup.json", "backups/"] and "compopt -o nospace" in said
    said, reply = bash("mcpctl --config=backup.", project)
    assert reply == ["backup.json"] and "compopt" not in said


def test_bash_with_a_config_named_on_the_line(project: Path, tmp_path: Path) -> None:
    other = write_config(tmp_path / "other.json", {"elsewhere": {"command": "x"}})
    assert bash(f"mcpctl --config {other} enable ", project)[1] == []
    assert bash(f"mcpctl --config {other} get ", project)[1] == ["elsewhere"]


def bash_readline(line: str, cwd: Path) -> list[str]:
    """The words of ``line`` after a TAB at its end in an interactive bash: what readline
    really inserts (word breaks, quoting), run through a pseudo-terminal."""
    import pty
    import select
    import time

    program = need_program("bash", "the bash completion script runs in it")
    pid, fd = pty.fork()
    if pid == 0:  # the child: an interactive bash with the script loaded
        try:
            os.chdir(cwd)
            env = {**shell_env(), "PS1": "$ ", "TERM": "dumb", "INPUTRC": os.devnull}
            os.execve(program, [program, "--norc", "--noprofile", "-i"], env)  # noqa: S606
        finally:
            os._exit(127)  # never back into the test runner
    source = f"source {shlex.quote(str(COMPLETIONS / 'mcpctl.bash'))}\n"
    # TAB, then turn the line into the arguments of `set --` (Ctrl-A: the line's start), and
    # print them one per line: nothing runs mcpctl itself.
    keys = f"{source}{line}\t\x01set -- \nprintf '<%s>\\n' \"$@\"; echo DO''NE\nexit\n"
    os.write(fd, keys.encode())
    out = b""
    deadline = time.monotonic() + 30
    try:
        while b"DONE" not in out.replace(b"DO''NE", b"") and time.monotonic() < deadline:
            if select.select([fd], [], [], 0.2)[0]:
                try:
                    out += os.read(fd, 4096)
                except OSError:
                    break
    finally:
        os.close(fd)
        os.waitpid(pid, 0)
    text = out.decode(errors="replace").replace("\r", "")
    return [x[1:-1] for x in text.splitlines() if x.startswith("<") and x.endswith(">")]


def test_bash_readline_inserts_the_answer(project: Path) -> None:
    (project / "my notes.json").write_text("")
    assert bash_readline("mcpctl add web --transport=st", project) == [
        "mcpctl", "add", "web", "--transport=streamable-http",
    ]  # fmt: skip
    assert bash_readline("mcpctl --config=backup.", project) == ["mcpctl", "--config=backup.json"]
    assert bash_readline("mcpctl undo --file my", project) == [
        "mcpctl", "undo", "--file", "my notes.json",
    ]  # fmt: skip
    assert bash_readline("mcpctl call time conv", project) == [
        "mcpctl", "call", "time", "convert_time",
    ]  # fmt: skip


# --- zsh ----------------------------------------------------------------------------------

ZSH_DRIVER = r"""
zmodload zsh/zpty || exit 3
zpty z 'TERM=dumb zsh -f -i'
zpty -w z 'PS1="> "; fpath=({folder} $fpath); autoload -Uz compinit; compinit -u -D; print RE""ADY'
read_until() {{
    local out="" line deadline=$(( SECONDS + 20 ))
    while (( SECONDS < deadline )); do
        if zpty -r -t z line; then out+=$line; [[ $out == *$1* ]] && break; else sleep 0.05; fi
    done
    print -r -- "$out"
}}
read_until READY > /dev/null
zpty -w -n z {line}$'\t'
sleep 0.3
zpty -w -n z $'\x15print DO""NE\n'
read_until DONE
zpty -d z
"""


def zsh(line: str, cwd: Path) -> str:
    """What the terminal shows after a TAB at the end of ``line`` in an interactive zsh."""
    program = need_program("zsh", "the zsh completion script runs in it")
    driver = ZSH_DRIVER.format(folder=shlex.quote(str(COMPLETIONS)), line=shlex.quote(line))
    env = {**shell_env(), "HOME": str(cwd)}
    r = subprocess.run([program, "-f", "-c", driver], capture_output=True, text=True, cwd=cwd,
                       env=env, timeout=60)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return r.stdout.replace("\r", "")


@pytest.mark.integration
def test_zsh_completes(project: Path) -> None:
    screen = zsh("mcpctl get ", project)
    assert "time" in screen and "What time it is" in screen and "github" in screen
    assert "mcpctl snapshot " in zsh("mcpctl snaps", project)  # the one match, inserted
    screen = zsh("mcpctl call time ", project)
    assert "get_current_time" in screen and "convert_time" in screen
    assert "mcpctl add web --transport streamable-http" in zsh(
        "mcpctl add web --transport st", project
    )
    assert "mcpctl --config=backup.json" in zsh("mcpctl --config=backup.", project)
    screen = zsh("mcpctl render cl", project)
    assert "claude-desktop" in screen and "cline" in screen


# --- fish ---------------------------------------------------------------------------------


def fish(line: str, cwd: Path) -> list[str]:
    """What fish offers for ``line`` (``complete -C``), descriptions cut off."""
    program = need_program("fish", "the fish completion script runs in it")
    driver = (
        f"source {shlex.quote(str(COMPLETIONS / 'mcpctl.fish'))}; complete -C {shlex.quote(line)}"
    )
    env = {**shell_env(), "HOME": str(cwd), "XDG_CONFIG_HOME": str(cwd / ".config")}
    r = subprocess.run([program, "--no-config", "-c", driver], capture_output=True, text=True,
                       cwd=cwd, env=env, timeout=60)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return [x.split("\t")[0] for x in r.stdout.splitlines()]


@pytest.mark.integration
@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("mcpctl snapshot ", ["diff", "save"]),
        ("mcpctl get ", ["files", "github", "time"]),
        ("mcpctl call time ", ["convert_time", "get_current_time"]),
        ("mcpctl add web --transport=", ["--transport=sse", "--transport=streamable-http"]),
        ("mcpctl undo --file back", ["backup.json", "backups/"]),
        ("mcpctl --config=backup.", ["--config=backup.json"]),
        ("mcpctl secret set G", ["GITHUB_TOKEN"]),
    ],
)
def test_fish_completes(project: Path, line: str, expected: list[str]) -> None:
    assert sorted(fish(line, project)) == expected
