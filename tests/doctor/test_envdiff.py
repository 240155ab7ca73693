"""Which of the user's environment variables a failed server did not get, by name only."""

from __future__ import annotations

from mcpctl.config.model import ServerEntry
from mcpctl.doctor.envdiff import missing_names, with_env_note


def test_the_names_missing_come_mentioned_first_then_likely_then_the_rest() -> None:
    environ = {
        "ZED": "1", "ALPHA": "1", "HTTPS_PROXY": "p", "NODE_OPTIONS": "o", "KUBECONFIG": "k",
        "DB_URL": "u", "MY_DB_URL_2": "u", "_": "x", "PWD": "/", "SHLVL": "1",
        "MCPCTL_HOME": "h", "GIVEN": "g", "lc_all": "C", "URL": "u",
    }  # fmt: skip
    child = {"GIVEN": "g"}
    stderr = ["error: no DB_URL", "ZED, then (ALPHA_2 is not ALPHA_)"]  # names end, start lines
    assert missing_names(child, environ, stderr) == [
        "DB_URL", "ZED",  # mentioned as whole names (not MY_DB_URL_2, not ALPHA in ALPHA_2)
        "HTTPS_PROXY", "KUBECONFIG", "NODE_OPTIONS", "lc_all",  # likely to matter, any case
        "ALPHA", "MY_DB_URL_2", "URL",  # URL only ends a longer name there
    ]  # fmt: skip
    assert missing_names(child, environ) == [
        "HTTPS_PROXY", "KUBECONFIG", "NODE_OPTIONS", "lc_all", "ALPHA", "DB_URL", "MY_DB_URL_2",
        "URL", "ZED",
    ]  # fmt: skip


def test_the_note_names_what_it_did_not_get_and_how_to_pass_one() -> None:
    entry = ServerEntry(command="srv", inherit_env=("KEPT",))
    environ = {f"V{i}": "value" for i in range(10)} | {"KEPT": "k"}
    detail, fix = with_env_note("it exited", "check it", entry, ["V3 missing"], environ)
    assert detail == (
        "it exited; it started without 10 of your environment variables (V3, V0, V1, V2, V4, "
        "V5, V6, V7 and 2 more), which a run by hand would have"
    )
    assert fix == (
        'check it; if it needs one of them, name it in its entry: "inherit_env": ["V3", "V0", '
        '"V1"] (mcpctl add NAME --inherit-env V3 ... when adding it)'
    )
    assert "value" not in detail + fix
    # No fix before: the way to pass one is the fix; up to 8 names: no "more".
    few = {"A1": "1", "B1": "1"}
    detail, fix = with_env_note("it exited", None, entry, ["x"], few)
    assert detail.endswith(
        "without 2 of your environment variables (A1, B1), which a run by hand would have"
    )
    eight = {f"E{i}": "1" for i in range(8)}
    detail, _ = with_env_note("it exited", None, entry, ["x"], eight)
    assert "(E0, E1, E2, E3, E4, E5, E6, E7), which" in detail  # all shown, no "and 0 more"
    assert fix == (
        'if it needs one of them, name it in its entry: "inherit_env": ["A1", "B1"] '
        "(mcpctl add NAME --inherit-env A1 ... when adding it)"
    )


def test_no_note_without_stderr_or_without_a_missing_name() -> None:
    entry = ServerEntry(command="srv")
    assert with_env_note("d", "f", entry, [], {"A1": "1"}) == ("d", "f")
    assert with_env_note("d", "f", entry, ["x"], {}) == ("d", "f")
