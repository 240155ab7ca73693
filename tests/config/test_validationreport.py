"""The problem collector: the first problems in document order, the rest counted by kind,
and a report's JSON form."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpctl.config.jsontext import PositionedJson, parse_value_positions
from mcpctl.config.model import Problem
from mcpctl.config.validate import validate_text
from mcpctl.config.validationreport import ProblemCollector, ValidationReport


def doc() -> PositionedJson:
    """Server ``a`` written at line 2, its env value at line 3, ``b`` at line 9."""
    return PositionedJson(
        {"a": {"env": {"V": "$X $Y"}}, "b": {}},
        values={("a",): (2, 8), ("a", "env", "V"): (3, 12), ("b",): (9, 8)},
        keys={("a",): (2, 3), ("b",): (9, 3)},
    )


def test_one_problem_per_item_at_the_value_in_the_order_found() -> None:
    col = ProblemCollector(doc())
    col.add_each("warning", "w", ("a", "env", "V"), ["$Y", "$X", "$Z"], lambda m: f"bad {m}",
                 hint="write ${NAME}")  # fmt: skip
    assert col.problems() == [
        Problem("warning", "w", f"bad {m}", "a.env.V", 3, 12, "write ${NAME}")
        for m in ("$Y", "$X", "$Z")
    ]
    col.add_each("error", "e", ("a",), [], lambda m: m)
    assert len(col.problems()) == 3


def test_a_problem_where_nothing_was_written_has_no_position_and_comes_first() -> None:
    col = ProblemCollector(PositionedJson({}))
    col.add("error", "e", ("x", "y"), "late")
    col.add_each("warning", "w", ("z",), ["$A"], lambda m: m)
    assert col.problems() == [
        Problem("error", "e", "late", "x.y", None, None, None),
        Problem("warning", "w", "$A", "z", None, None, None),
    ]


def test_beyond_the_cut_each_problem_is_counted_by_its_kind() -> None:
    col = ProblemCollector(doc(), limit=1)
    col.add("warning", "first", ("a",), "kept")
    col.keep(Problem("error", "e", "m", "b", 9, 8))
    col.keep(Problem("warning", "w", "m", "b", 9, 9))
    col.keep(Problem("warning", "w", "m", "b", 10, 1))
    col.add("error", "e", ("b",), "beyond, by its member")
    col.add_each("error", "e", ("b",), ["1", "2", "3"], lambda m: m)
    col.add_each("warning", "w", ("b",), ["1", "2"], lambda m: m)
    assert [p.code for p in col.problems()] == ["first"]
    assert (col.omitted_errors, col.omitted_warnings) == (5, 4)
    report = col.fill(ValidationReport(Path("f"), servers=2))
    assert report.to_dict() == {
        "file": "f",
        "valid": False,
        "servers": 2,
        "errors": 5,
        "warnings": 5,
        "problems": [{**report.problems[0].to_dict()}],
        "omitted": 9,
    }


def test_items_at_one_place_stop_being_kept_where_the_cut_falls() -> None:
    col = ProblemCollector(doc(), limit=3)
    col.keep(Problem("error", "late", "m", "b", 9, 8))
    col.add_each("error", "e", ("a", "env", "V"), ["1", "2", "3", "4"], lambda m: m)
    assert [p.message for p in col.problems()] == ["1", "2", "3"]
    assert (col.omitted_errors, col.omitted_warnings) == (2, 0)


def test_an_earlier_column_on_the_last_kept_line_still_displaces_it() -> None:
    col = ProblemCollector(doc(), limit=1)
    col.keep(Problem("warning", "late", "m", "a.x", 3, 30))
    col.add_each("warning", "w", ("a", "env", "V"), ["$A"], lambda m: m)
    assert [(p.code, p.column) for p in col.problems()] == [("w", 12)]
    assert col.omitted_warnings == 1


def test_a_problem_of_the_whole_document_is_placed_when_the_report_is_full() -> None:
    col = ProblemCollector(doc(), limit=1)
    col.add("error", "late", ("b",), "m")
    col.add("error", "root", (), "the top level")
    col.add("error", "index", (0, "x"), "a path that is no member")
    # Unplaced, the top level's problem sorts first; the later unplaced one after it.
    assert [p.code for p in col.problems()] == ["root"]
    assert col.omitted_errors == 2


def test_near_misses_beyond_the_cut_are_not_positioned(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[int] = []
    real = parse_value_positions

    def spy(*args: object, **kw: object) -> object:
        parsed.append(1)
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr("mcpctl.config.jsonindex.parse_value_positions", spy)
    data = {f"s{i}": {"command": "sh", "args": [1]} for i in range(1000)}
    data |= {f"t{i}": {"command": "sh", "env": {"V": "$X"}} for i in range(500)}
    report = validate_text(json.dumps(data, indent=2), path=Path("f"))
    assert report.error_count == 1000 and report.warning_count == 500
    assert len(parsed) == 1000
