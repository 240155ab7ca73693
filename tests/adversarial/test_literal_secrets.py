"""Secrets that do not look random: a passphrase under a secret's name, a flag's value.

A file from elsewhere (a client's config to import) holds `DB_PASSWORD` as a passphrase and
`--api-key VALUE` / `--token=VALUE` in a server's arguments. None of them looks like a token,
so a shape check lets them through; the name says what they are. Import moves each to the
keyring and writes a placeholder; add refuses them; validate flags one already in the file;
render then has nothing to print.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpctl.config.redaction import secret_flag_values
from tests.conftest import Cli, MemoryKeyring, write_config

PASSPHRASE = "correct horse battery staple"
FLAG_VALUE = "plainwordsecret"
EQ_VALUE = "anotherplainword"


def test_import_moves_named_and_flagged_literals_to_the_keyring(
    cli: Cli, config_path: Path, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    source = write_config(tmp_path / "mcp.json", {"mcpServers": {"db": {
        "command": "db-mcp", "env": {"DB_PASSWORD": PASSPHRASE},
        "args": ["--api-key", FLAG_VALUE, f"--token={EQ_VALUE}", "--max-tokens", "4096"],
    }}})  # fmt: skip
    config_path.write_text("{}\n")
    r = cli("import", "cursor", str(source))
    assert r.exit_code == 0, r.stderr
    for value in (PASSPHRASE, FLAG_VALUE, EQ_VALUE):
        assert value not in r.stdout + r.stderr
        assert value not in config_path.read_text()
    entry = json.loads(config_path.read_text())["db"]
    assert entry["env"] == {"DB_PASSWORD": "${DB_PASSWORD}"}
    assert entry["args"] == ["--api-key", "${API_KEY}", "--token=${TOKEN}", "--max-tokens", "4096"]
    kept = {k[1]: v for k, v in memory_keyring.items.items()}
    assert kept["secret:DB_PASSWORD"] == PASSPHRASE
    assert kept["secret:API_KEY"] == FLAG_VALUE and kept["secret:TOKEN"] == EQ_VALUE
    r = cli("render", "claude-code")
    assert r.exit_code == 0 and not {PASSPHRASE, FLAG_VALUE, EQ_VALUE} & set(r.stdout.split('"'))


@pytest.mark.parametrize(
    "args",
    [["--api-key", FLAG_VALUE], [f"--token={EQ_VALUE}"], ["-password", FLAG_VALUE],
     ["--client-secret", FLAG_VALUE], ["--github-pat", FLAG_VALUE]],
)  # fmt: skip
def test_add_refuses_a_literal_flag_value_and_validate_flags_one(
    cli: Cli, config_path: Path, args: list[str]
) -> None:
    config_path.write_text("{}\n")
    r = cli("add", "s", "--", "srv", *args)
    assert r.exit_code == 2, r.stdout
    assert "a flag named like a secret must take a ${VAR} placeholder" in r.stderr
    assert FLAG_VALUE not in r.stderr and EQ_VALUE not in r.stderr
    assert config_path.read_text() == "{}\n"
    write_config(config_path, {"s": {"command": "srv", "args": args}})
    r = cli("validate", "--json")
    codes = [p["code"] for p in r.json["data"]["problems"]]
    assert "named_literal_secret" in codes
    assert FLAG_VALUE not in r.stdout and EQ_VALUE not in r.stdout


@pytest.mark.parametrize(
    "args",
    [["--key", "./tls.key"], ["--token", "${TOKEN}"], ["--token-file", "tokens.txt"],
     ["--tokenizer", "bert"], ["--max-tokens", "4096"], ["--api-key"], ["--api-key", "--verbose"],
     ["--password=${P:-x}"], ["--use-token", "true"]],
)  # fmt: skip
def test_what_is_no_literal_secret_flag(args: list[str]) -> None:
    assert secret_flag_values(args) == []


def test_allow_literal_lets_a_flag_keep_a_non_secret(cli: Cli, config_path: Path) -> None:
    config_path.write_text("{}\n")
    r = cli("add", "s", "--allow-literal=--api-key", "--", "srv", "--api-key", "public-demo")
    assert r.exit_code == 0, r.stderr
    assert json.loads(config_path.read_text())["s"]["allow_literal"] == ["--api-key"]
    assert cli("validate").exit_code == 0
