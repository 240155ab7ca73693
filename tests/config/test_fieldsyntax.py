"""What no process can be given, in the words every refusal uses."""

from __future__ import annotations

from mcpctl.config.fieldsyntax import unpassable


def test_unpassable_names_what_no_process_can_be_given() -> None:
    assert unpassable("npx -y server") is None
    assert unpassable("raw-\udcff-name") is None  # a raw name's byte, as os.fsdecode gives it
    assert unpassable("a\x00b") == "a NUL character (\\x00)"
    assert unpassable("x\ud800") == "a lone surrogate (\\ud800)"
