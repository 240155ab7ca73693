"""What a program's stderr says went wrong: the lines health, doctor and errors show."""

from __future__ import annotations

from mcpctl.errors import ProbeFailed
from mcpctl.text import stderr_cause

# What `npx -y` prints for a package that is not in the registry (npm 10).
NPM_404 = [
    "npm error code E404",
    "npm error 404 Not Found - GET https://registry.npmjs.org/@acme%2fnone",
    "npm error 404",
    "npm error 404  The requested resource '@acme/none@*' could not be found or you do not "
    "have permission to access it.",
    "npm error 404",
    "npm error 404 Note that you can also install from a",
    "npm error 404 tarball, folder, http url, or git url.",
    "npm error A complete log of this run can be found in: /root/.npm/_logs/x-debug-0.log",
]
NPM_CAUSE = [NPM_404[1], NPM_404[3]]


def test_npms_404_is_the_not_found_lines_not_its_advice() -> None:
    assert stderr_cause(NPM_404) == NPM_CAUSE
    assert stderr_cause(NPM_404, limit=1) == [NPM_404[3]]  # the last line that is no noise


def test_a_traceback_is_its_exception() -> None:
    lines = ["Traceback (most recent call last):", '  File "/srv/server.py", line 3, in <module>',
             "    import foo", "ModuleNotFoundError: No module named 'foo'"]  # fmt: skip
    assert stderr_cause(lines) == ["ModuleNotFoundError: No module named 'foo'"]


def test_the_cause_and_where_the_program_stopped_in_order() -> None:
    lines = ["starting", "listening on 3000", "Error: listen EADDRINUSE: address in use",
             "    at Server.setupListenHandle (node:net:1817:16)", "", "shutting down"]  # fmt: skip
    assert stderr_cause(lines) == [
        "listening on 3000", "Error: listen EADDRINUSE: address in use", "shutting down",
    ]  # fmt: skip
    assert stderr_cause(["only", "plain", "lines", "here"]) == ["plain", "lines", "here"]


def test_only_noise_is_shown_as_it_is_and_nothing_is_nothing() -> None:
    assert stderr_cause(["npm error 404", "npm error code E404"]) == [
        "npm error 404", "npm error code E404",
    ]  # fmt: skip
    assert stderr_cause([]) == [] and stderr_cause(["", "  "]) == []
    assert stderr_cause(NPM_404, limit=0) == []


def test_a_failed_call_shows_the_same_lines() -> None:
    err = ProbeFailed("pkg", "server_exited", "the server exited", stderr=NPM_404)
    assert err.details == [f"pkg stderr: {line}" for line in NPM_CAUSE]
