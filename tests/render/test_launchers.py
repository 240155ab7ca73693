"""Whether a client's entry starts this mcpctl's launcher: the same program, not one of the
same name (tests/cli/test_health_as.py probes a fake one)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

import mcpctl
from mcpctl.config.model import ServerEntry
from mcpctl.render.clientfile import is_launcher
from mcpctl.render.launchers import is_own_launcher, own_programs

PY = sys.executable


def test_launchers_are_this_program_only(tmp_path: Path) -> None:
    ours = Path(PY).parent / "mcpctl"
    if not ours.exists():
        pytest.skip(f"no mcpctl program beside {PY}")
    env = {"PATH": f"{Path(PY).parent}:/usr/bin:/bin"}
    run = ("run", "brave", "--config", "c.json")
    assert is_launcher(ServerEntry(command="mcpctl", args=run), env)
    assert is_launcher(ServerEntry(command=str(ours), args=run), env)
    linked = tmp_path / "link" / "mcpctl"  # a symlink to it is it
    linked.parent.mkdir()
    linked.symlink_to(ours)
    assert is_launcher(ServerEntry(command=str(linked), args=run), env)
    assert is_launcher(ServerEntry(command=PY, args=("-m", "mcpctl", *run), cwd=str(tmp_path)))
    # Not a launcher: other arguments, other programs, a copy, another mcpctl package.
    assert not is_launcher(ServerEntry(command="mcpctl", args=("health",)), env)
    assert not is_launcher(ServerEntry(command="npx", args=run), env)
    assert not is_launcher(ServerEntry(command="mcpctl", args=run), {"PATH": "/nonexistent"})
    copy = tmp_path / "copy" / "mcpctl"
    copy.parent.mkdir()
    copy.write_bytes(ours.read_bytes())
    copy.chmod(0o755)
    assert not is_launcher(ServerEntry(command=str(copy), args=run), env)
    assert not is_launcher(ServerEntry(command="mcpctl", args=run), {"PATH": str(copy.parent)})
    other = ServerEntry(command=str(ours), args=run, env={"PYTHONPATH": str(tmp_path)})
    assert not is_launcher(other, env)
    (tmp_path / "mcpctl").mkdir()  # python -m mcpctl from here imports that one
    assert not is_launcher(ServerEntry(command=PY, args=("-m", "mcpctl", *run),
                                       cwd=str(tmp_path)))  # fmt: skip
    # The same interpreter file elsewhere is another environment (a virtual one is its folder).
    elsewhere = tmp_path / "elsewhere" / "python3"
    elsewhere.parent.mkdir()
    elsewhere.symlink_to(PY)
    assert not is_launcher(ServerEntry(command=str(elsewhere), args=("-m", "mcpctl", *run)))


# The tests below need no installed program: the one this process runs is the file its
# sys.argv[0] names (as when a client starts `mcpctl run NAME` and it starts a probe), so they
# pass in a copy of the tree too (the mutation runs), where the installed script runs
# another copy of the package.

RUN = ("run", "brave", "--config", "c.json")


@pytest.fixture
def program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An ``mcpctl`` program, the one this process was started as."""
    path = tmp_path / "bin" / "mcpctl"
    path.parent.mkdir()
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    monkeypatch.setattr(sys, "argv", [str(path)])
    own_programs.cache_clear()
    yield path
    own_programs.cache_clear()


def test_the_program_this_process_runs_is_its_own(program: Path, tmp_path: Path) -> None:
    assert program.resolve() in own_programs()
    env = {"PATH": f"{tmp_path / 'nothing'}:{program.parent}"}
    assert is_own_launcher(ServerEntry(command="mcpctl", args=RUN), env)
    assert is_own_launcher(ServerEntry(command=str(program), args=RUN), {})
    assert is_own_launcher(ServerEntry(command="mcpctl", args=("run", "brave")), env)
    # Other arguments than `run NAME [--config FILE]`: the full CLI, not the launcher.
    assert not is_own_launcher(ServerEntry(command="mcpctl", args=("health",)), env)
    assert not is_own_launcher(ServerEntry(command="mcpctl", args=(*RUN, "-v")), env)
    # Not found on the PATH the server gets, or another program.
    assert not is_own_launcher(ServerEntry(command="mcpctl", args=RUN), {"PATH": "/nonexistent"})
    assert not is_own_launcher(ServerEntry(command="npx", args=RUN), env)


def test_the_entrys_own_path_is_the_one_searched(program: Path) -> None:
    on = {"PATH": str(program.parent)}
    off = {"PATH": "/nonexistent"}
    assert is_own_launcher(ServerEntry(command="mcpctl", args=RUN, env=on), off)
    assert not is_own_launcher(ServerEntry(command="mcpctl", args=RUN, env=off), on)


def test_the_process_environment_is_the_default(
    program: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(program.parent))
    assert is_own_launcher(ServerEntry(command="mcpctl", args=RUN))
    monkeypatch.setenv("PATH", "/nonexistent")
    assert not is_own_launcher(ServerEntry(command="mcpctl", args=RUN))


def test_symlinks_lead_to_it_and_copies_do_not(program: Path, tmp_path: Path) -> None:
    linked = tmp_path / "link" / "mcpctl"
    linked.parent.mkdir()
    linked.symlink_to(program)
    assert is_own_launcher(ServerEntry(command=str(linked), args=RUN), {})
    assert is_own_launcher(ServerEntry(command="mcpctl", args=RUN), {"PATH": str(linked.parent)})
    copy = tmp_path / "copy" / "mcpctl"
    copy.parent.mkdir()
    copy.write_bytes(program.read_bytes())
    copy.chmod(0o755)
    assert not is_own_launcher(ServerEntry(command=str(copy), args=RUN), {})
    assert not is_own_launcher(ServerEntry(command="mcpctl", args=RUN), {"PATH": str(copy.parent)})
    # The same file under another name is not a launcher entry either.
    renamed = tmp_path / "link" / "tool"
    renamed.symlink_to(program)
    assert not is_own_launcher(ServerEntry(command=str(renamed), args=RUN), {})


def test_a_relative_command_is_found_from_the_entrys_folder(
    program: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = ServerEntry(command="bin/mcpctl", args=RUN, cwd=str(tmp_path))
    assert is_own_launcher(entry, {})
    assert not is_own_launcher(ServerEntry(command="bin/mcpctl", args=RUN, cwd="/"), {})
    monkeypatch.chdir(tmp_path)  # no folder: the one the server is started in, this one
    assert is_own_launcher(ServerEntry(command="bin/mcpctl", args=RUN), {})
    assert is_own_launcher(ServerEntry(command="./bin/mcpctl", args=RUN), {})
    assert not is_own_launcher(ServerEntry(command="bin", args=RUN), {})  # a folder


def test_a_tilde_in_its_command_or_folder_is_taken_as_written(
    program: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As the server is started: no shell expands it, and a user who does not exist raises
    # nothing.
    monkeypatch.setenv("HOME", str(tmp_path))
    assert not is_own_launcher(ServerEntry(command="~/bin/mcpctl", args=RUN), {})
    monkeypatch.chdir(tmp_path)
    (tmp_path / "~").symlink_to(tmp_path)
    assert is_own_launcher(ServerEntry(command="~/bin/mcpctl", args=RUN), {})
    nobody = "~mcpctl-no-such-user"
    assert not is_own_launcher(ServerEntry(command=f"{nobody}/bin/mcpctl", args=RUN), {})
    assert not is_own_launcher(ServerEntry(command="bin/mcpctl", args=RUN, cwd=nobody), {})
    (tmp_path / nobody).symlink_to(tmp_path)
    assert is_own_launcher(ServerEntry(command="bin/mcpctl", args=RUN, cwd=nobody), {})
    # python -m mcpctl looks for another mcpctl in the folder as written, not in the home.
    (tmp_path / "mcpctl.py").write_text("")
    entry = ServerEntry(command=PY, args=("-m", "mcpctl", *RUN), cwd="~")
    assert not is_own_launcher(entry, {})
    (tmp_path / "~").unlink()
    (tmp_path / "~").mkdir()
    assert is_own_launcher(entry, {})


def test_what_is_not_known_without_running_it_is_no_launcher(program: Path) -> None:
    on = {"PATH": str(program.parent)}
    folder = str(program.parent.parent)
    assert not is_own_launcher(ServerEntry(command="${TOOL}", args=RUN), on)
    assert not is_own_launcher(ServerEntry(command="mcpctl", args=RUN), {"PATH": "${BIN}"})
    assert not is_own_launcher(ServerEntry(command="mcpctl", args=RUN, env={"PATH": "${B}"}), on)
    assert is_own_launcher(ServerEntry(command="bin/mcpctl", args=RUN, cwd=folder), {})
    assert not is_own_launcher(ServerEntry(command="bin/mcpctl", args=RUN, cwd="${HERE}"), {})
    assert not is_own_launcher(ServerEntry(url="https://example.com/mcp"), on)
    assert not is_own_launcher(ServerEntry(command=""), on)


@pytest.mark.parametrize("name", ["PYTHONPATH", "PYTHONHOME", "PYTHONSAFEPATH", "PYTHONUSERBASE"])
def test_a_variable_that_changes_what_python_imports_makes_it_another_program(
    program: Path, name: str
) -> None:
    entry = ServerEntry(command=str(program), args=RUN, env={name: "/elsewhere"})
    assert not is_own_launcher(entry, {})
    assert is_own_launcher(ServerEntry(command=str(program), args=RUN, env={"OTHER": "x"}), {})


@pytest.mark.parametrize(
    "argv",
    [["pytest"], [], [""], ["/nonexistent/mcpctl"]],
)
def test_only_an_mcpctl_file_started_as_this_process_is_its_program(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "pytest"
    other.write_text("")
    monkeypatch.setattr(sys, "argv", [str(other) if a == "pytest" else a for a in argv])
    own_programs.cache_clear()
    try:
        found = own_programs()
    finally:
        own_programs.cache_clear()
    assert other.resolve() not in found
    assert Path("/nonexistent/mcpctl") not in found


def test_an_mcpctl_exe_started_as_this_process_is_its_program(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exe = tmp_path / "mcpctl.exe"
    exe.write_text("")
    monkeypatch.setattr(sys, "argv", [str(exe)])
    own_programs.cache_clear()
    try:
        assert exe.resolve() in own_programs()
        assert is_own_launcher(ServerEntry(command=str(exe), args=RUN), {})
    finally:
        own_programs.cache_clear()


def test_python_dash_m_mcpctl_is_this_package_only(tmp_path: Path) -> None:
    here = Path(mcpctl.__file__).resolve().parent.parent
    empty = tmp_path / "empty"
    empty.mkdir()
    module = (PY, "-m", "mcpctl")
    assert is_own_launcher(ServerEntry(command=PY, args=(*module[1:], *RUN), cwd=str(empty)))
    # From the folder that holds this package, python -m mcpctl imports this package.
    assert is_own_launcher(ServerEntry(command=PY, args=(*module[1:], *RUN), cwd=str(here)))
    assert not is_own_launcher(ServerEntry(command=PY, args=("-m", "mcpctl", "health"),
                                           cwd=str(empty)))  # fmt: skip
    assert not is_own_launcher(ServerEntry(command=PY, args=("-m", "other", *RUN), cwd=str(empty)))
    assert not is_own_launcher(ServerEntry(command=PY, args=("-m", "mcpctl", *RUN),
                                           cwd="${PROJECT}"))  # fmt: skip
    # Another mcpctl where it starts: a package or a module of that name.
    shadow = tmp_path / "shadow"
    (shadow / "mcpctl").mkdir(parents=True)
    assert not is_own_launcher(ServerEntry(command=PY, args=("-m", "mcpctl", *RUN),
                                           cwd=str(shadow)))  # fmt: skip
    module_file = tmp_path / "module"
    module_file.mkdir()
    (module_file / "mcpctl.py").write_text("")
    assert not is_own_launcher(ServerEntry(command=PY, args=("-m", "mcpctl", *RUN),
                                           cwd=str(module_file)))  # fmt: skip
    # A program elsewhere is not this interpreter, nor another one in its folder.
    other = tmp_path / "notpython"
    other.write_text("#!/bin/sh\n")
    other.chmod(0o755)
    for command in (other, *[p for p in Path(PY).parent.glob("pip*") if p.is_file()][:1]):
        entry = ServerEntry(command=str(command), args=("-m", "mcpctl", *RUN), cwd=str(empty))
        assert not is_own_launcher(entry), command


def test_a_placeholder_in_a_folder_name_is_not_a_folder(program: Path, tmp_path: Path) -> None:
    literal = tmp_path / "${BIN}"  # a folder really named so: still a placeholder in the entry
    literal.mkdir()
    (literal / "mcpctl").symlink_to(program)
    assert not is_own_launcher(ServerEntry(command="${BIN}/mcpctl", args=RUN, cwd=str(tmp_path)))


def test_python_found_on_path_is_checked_for_another_mcpctl_where_it_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    on = {"PATH": str(Path(PY).parent)}
    args = ("-m", "mcpctl", *RUN)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert is_own_launcher(ServerEntry(command=Path(PY).name, args=args, cwd=str(empty)), on)
    # Where it starts is not known: it may hold another mcpctl.
    assert not is_own_launcher(ServerEntry(command=Path(PY).name, args=args, cwd="${P}"), on)
    # No folder: the one the server is started in, this process's.
    shadow = tmp_path / "shadow"
    (shadow / "mcpctl").mkdir(parents=True)
    monkeypatch.chdir(shadow)
    assert not is_own_launcher(ServerEntry(command=PY, args=args))
    monkeypatch.chdir(empty)
    assert is_own_launcher(ServerEntry(command=PY, args=args))


# The console script of the distribution this package was installed by: a distribution's
# metadata (RECORD, direct_url.json) laid out in a folder put first on sys.path.


def installed(
    root: Path,
    monkeypatch: pytest.MonkeyPatch,
    record: list[str],
    *,
    package: Path | None = None,
    url: str | None = None,
) -> Path:
    """A site folder holding an ``mcpctl`` distribution's metadata, first on sys.path."""
    site = root / "lib" / "site"
    info = site / "mcpctl-9.9.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mcpctl\nVersion: 9.9\n")
    (info / "RECORD").write_text("".join(f"{line},,\n" for line in record))
    if url is not None:
        (info / "direct_url.json").write_text(json.dumps({"url": url, "dir_info": {}}))
    if package is not None:
        (site / "mcpctl").symlink_to(package)
    for line in record:
        if line.startswith("../"):
            script = site / line
            script.parent.mkdir(parents=True, exist_ok=True)
            script.write_text("#!/bin/sh\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(sys, "argv", ["pytest"])
    own_programs.cache_clear()
    return site


HERE = Path(mcpctl.__file__).resolve().parent  # this package's folder
SCRIPT = "../bin/mcpctl"


@pytest.fixture(autouse=True)
def _fresh_programs() -> Iterator[None]:
    yield
    own_programs.cache_clear()


def test_the_script_of_the_distribution_that_installed_this_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = installed(tmp_path, monkeypatch, ["mcpctl/__init__.py", SCRIPT, "../bin/other"],
                     package=HERE)  # fmt: skip
    assert own_programs() == {(site / SCRIPT).resolve()}


def test_an_editable_install_is_known_by_its_source_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "my source"  # written %-quoted in the URL
    source.symlink_to(HERE.parent)
    url = "file://" + quote(str(source))
    site = installed(tmp_path, monkeypatch, ["__editable__.mcpctl.pth", SCRIPT], url=url)
    assert own_programs() == {(site / SCRIPT).resolve()}


def test_a_windows_script_folder_counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = "../Scripts/mcpctl.exe"
    site = installed(tmp_path, monkeypatch, ["mcpctl/__init__.py", script], package=HERE)
    assert own_programs() == {(site / script).resolve()}


@pytest.mark.parametrize(
    "case", ["other package", "other source", "not a file URL", "script not a file", "not bin"]
)
def test_another_distributions_script_is_not_this_program(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    other = tmp_path / "other" / "mcpctl"
    other.mkdir(parents=True)
    (other / "__init__.py").write_text("")
    record, package, url = ["mcpctl/__init__.py", SCRIPT], HERE, None
    if case == "other package":
        package = other
    elif case == "other source":
        record, package, url = [SCRIPT], None, "file://" + quote(str(other.parent))
    elif case == "not a file URL":
        record, package, url = [SCRIPT], None, "https://example.com" + quote(str(HERE.parent))
    elif case == "script not a file":
        pass  # listed, but a folder now
    else:
        record = ["mcpctl/__init__.py", "../tools/mcpctl"]
    site = installed(tmp_path, monkeypatch, record, package=package, url=url)
    if case == "script not a file":
        (site / SCRIPT).unlink()
        (site / SCRIPT).mkdir()
    assert own_programs() == frozenset()
