"""Only the user answers a server's questions, in every era and for tasks: what the SERVER
received (tests/servers/questions.py writes it down) is ``accept`` only with the user's
answer, ``cancel`` when nobody answered, ``decline`` for a page mcpctl will not show; rounds
are capped; a probe never accepts anything."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.errors import InputRequiredError, UsageError
from mcpctl.probe import call_tool, probe
from mcpctl.probe.inputrequests import InputAnswer, InputRequest, answers_from, visitable
from tests.conftest import SERVERS

DEADLINE = 60
ERAS = ("legacy", "modern", "tasks")
FORMS = ("confirm", "optional", "required")


class Server:
    """questions.py in one era, and what it saw."""

    def __init__(self, tmp_path: Path, era: str, **env: str) -> None:
        self.log = tmp_path / f"{era}.log"
        script = str(SERVERS / "questions.py")
        self.entry = ServerEntry(
            command=sys.executable, args=(script, era), env={"QUESTIONS_LOG": str(self.log), **env}
        )

    def events(self) -> list[dict[str, Any]]:
        lines = self.log.read_text().splitlines() if self.log.exists() else []
        return [json.loads(line) for line in lines]

    def answers(self) -> list[tuple[str, Any]]:
        """(action or error, content) of every answer the server received, in order."""
        return [
            (e.get("action") or f"error: {e.get('error')}", e.get("content"))
            for e in self.events()
            if "answer" in e
        ]

    def asked(self) -> int:
        return sum("asked" in e for e in self.events())

    def methods(self) -> list[str]:
        return [e["method"] for e in self.events() if "method" in e]


def call(server: Server, tool: str, args: dict[str, Any] | None = None, **kwargs: Any) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(DEADLINE):
            return await call_tool("q", server.entry, tool, args or {}, timeout=50, **kwargs)

    return anyio.run(bounded)


# --- nobody answers: cancel, never accept ----------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("tool", FORMS)
def test_a_form_nobody_answers_is_cancelled(tmp_path: Path, era: str, tool: str) -> None:
    server = Server(tmp_path, era)
    with pytest.raises(InputRequiredError) as caught:
        call(server, tool, answer=answers_from({}))
    assert server.answers() == [("cancel", None)]  # told cancel: nobody was asked
    [asked] = caught.value.requests
    assert asked["mode"] == "form"
    assert "the server was told cancel" in caught.value.message
    assert any(asked["message"] in line for line in caught.value.details)
    if era == "tasks":
        assert server.methods()[-1] == "tasks/cancel"


@pytest.mark.parametrize("era", ERAS)
def test_no_answerer_at_all_is_nobody(tmp_path: Path, era: str) -> None:
    server = Server(tmp_path, era)
    with pytest.raises(InputRequiredError):
        call(server, "confirm")
    assert server.answers() == [("cancel", None)]


# --- the user's answers --------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
def test_a_confirmation_is_accepted_only_when_told_to(tmp_path: Path, era: str) -> None:
    server = Server(tmp_path, era)
    answers = answers_from({}, confirm=True)
    assert call(server, "confirm", answer=answers).text == "accept {}"
    assert server.answers() == [("accept", {})]
    assert answers.confirmed == 1


@pytest.mark.parametrize("era", ERAS)
def test_a_form_of_optional_fields(tmp_path: Path, era: str) -> None:
    server = Server(tmp_path, era)
    # One field given is an answer; the rest stays unanswered.
    res = call(server, "optional", answer=answers_from({"verbose": "yes"}))
    assert res.text == 'accept {"verbose": true}'
    # Nothing given is not; told to confirm, it goes back empty.
    with pytest.raises(InputRequiredError) as caught:
        call(server, "optional", answer=answers_from({}))
    assert "--input-accept" in (caught.value.hint or "")
    assert call(server, "optional", answer=answers_from({}, confirm=True)).text == "accept {}"
    assert server.answers() == [("accept", {"verbose": True}), ("cancel", None), ("accept", {})]


@pytest.mark.parametrize("era", ERAS)
def test_a_required_field(tmp_path: Path, era: str) -> None:
    server = Server(tmp_path, era)
    # confirm does not stand in for a required field.
    with pytest.raises(InputRequiredError):
        call(server, "required", answer=answers_from({"count": "2"}, confirm=True))
    res = call(server, "required", answer=answers_from({"colour": "red", "count": "2"}))
    assert res.text == 'accept {"colour": "red", "count": 2}'
    assert server.answers() == [("cancel", None), ("accept", {"colour": "red", "count": 2})]


@pytest.mark.parametrize("era", ERAS)
def test_a_mistyped_field_is_refused_before_anything_is_accepted(tmp_path: Path, era: str) -> None:
    server = Server(tmp_path, era)
    with pytest.raises(UsageError, match=r"--input colr: .* \(did you mean 'colour'\?\)") as e:
        call(server, "required", answer=answers_from({"colr": "red", "count": "2"}))
    assert not isinstance(e.value, InputRequiredError)
    # Optional fields: "nte" would have been dropped, and the form accepted without it.
    with pytest.raises(UsageError, match="did you mean 'note'"):
        call(server, "optional", answer=answers_from({"nte": "hi", "verbose": "no"}))
    assert server.answers() == [("cancel", None), ("cancel", None)]


def test_a_value_no_form_asked_for_is_reported_after_the_call(tmp_path: Path) -> None:
    server = Server(tmp_path, "modern")
    answers = answers_from({"colour": "red", "zzz": "1", "colr": "2"})
    assert call(server, "required", answer=answers).text == 'accept {"colour": "red"}'
    assert answers.unused() == ["zzz", "colr"]
    with pytest.raises(UsageError) as caught:
        answers.check_unused()
    assert caught.value.message == (
        "--input 'zzz', 'colr' (did you mean 'colour'?): no form asked for them, so they were "
        "not sent"
    )
    assert caught.value.hint == "the fields asked for: colour, count"
    nothing = answers_from({"x": "1"})
    with pytest.raises(UsageError, match="'x': no form asked for it") as caught:
        nothing.check_unused()
    assert caught.value.hint == "the server asked for no input: drop --input"


# --- pages to visit ----------------------------------------------------------------------------


URLS = [
    ("https://example.com/verify", True),
    ("http://127.0.0.1:9/verify", True),
    ("http://localhost:9/verify", True),
    ("http://[::1]:9/verify", True),
    ("http://example.com/verify", False),
    ("javascript:alert(1)", False),
    ("file:///etc/passwd", False),
    ("data:text/html,<script>alert(1)</script>", False),
    ("vscode://extension/evil", False),
    ("https://example.com/\x1b[2Jverify", False),
    ("https:///no-host", False),
]


@pytest.mark.parametrize(("url", "shown"), URLS)
def test_visitable(url: str, shown: bool) -> None:
    assert visitable(url) is shown


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(("url", "shown"), [URLS[0], URLS[1], URLS[4], URLS[5], URLS[6], URLS[7]])
def test_a_page_reaches_the_answerer_only_at_a_safe_address(
    tmp_path: Path, era: str, url: str, shown: bool
) -> None:
    server = Server(tmp_path, era)
    seen: list[InputRequest] = []

    async def visited(request: InputRequest) -> InputAnswer:
        seen.append(request)
        return InputAnswer("accept")

    res = call(server, "visit", {"url": url}, answer=visited)
    if shown:
        assert [r.url for r in seen] == [url] and res.text == "accept {}"
        assert server.answers() == [("accept", None)]
    else:
        assert seen == [] and res.is_error and res.text == "decline {}"
        assert server.answers() == [("decline", None)]
        assert [w for w in res.warnings if "which mcpctl declined" in w]


@pytest.mark.parametrize("era", ERAS)
def test_a_page_nobody_visits_is_cancelled(tmp_path: Path, era: str) -> None:
    server = Server(tmp_path, era)
    with pytest.raises(InputRequiredError) as caught:
        call(server, "visit", {"url": "https://example.com/v"}, answer=answers_from({}))
    assert caught.value.requests[0]["url"] == "https://example.com/v"
    assert "run it on a terminal" in (caught.value.hint or "")
    assert server.answers() == [("cancel", None)]


# --- the round cap -------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
def test_a_server_that_keeps_asking_is_stopped_after_ten_rounds(tmp_path: Path, era: str) -> None:
    server = Server(tmp_path, era)
    with pytest.raises(UsageError, match="kept asking for input: 10 rounds answered") as caught:
        call(server, "nag", answer=answers_from({"colour": "red"}))
    assert not isinstance(caught.value, InputRequiredError)
    answers = [action for action, _ in server.answers()]
    assert answers[:10] == ["accept"] * 10
    assert answers[10:] and set(answers[10:]) == {"cancel"}  # told cancel, never accept again
    assert server.asked() <= 13  # asked at most twice more while being stopped
    if era == "tasks":
        assert server.methods()[-1] == "tasks/cancel"


def test_a_task_that_stays_waiting_is_stopped_after_ten_rounds(tmp_path: Path) -> None:
    server = Server(tmp_path, "tasks")
    with pytest.raises(UsageError, match="kept asking for input: 10 rounds"):
        call(server, "stuck", answer=answers_from({"colour": "red"}))
    assert server.answers() == [("accept", {"colour": "red"}), ("cancel", None)]
    methods = server.methods()
    assert methods.count("tasks/get") == 11 and methods[-1] == "tasks/cancel"


@pytest.mark.parametrize("era", ERAS)
def test_a_server_that_asks_again_after_cancel_is_stopped_at_once(tmp_path: Path, era: str) -> None:
    server = Server(tmp_path, era)
    before = time.monotonic()
    with pytest.raises(InputRequiredError):
        call(server, "nag", answer=answers_from({}))
    assert time.monotonic() - before < 30  # not the call's timeout (50 s)
    assert {action for action, _ in server.answers()} == {"cancel"}
    assert server.asked() <= 3


# --- probes ask nobody ---------------------------------------------------------------------


def test_a_probe_never_accepts_a_question(tmp_path: Path) -> None:
    server = Server(tmp_path, "legacy", QUESTIONS_ASK_ON_LIST="1")

    async def probed() -> Any:
        with anyio.fail_after(DEADLINE):
            return await probe("q", server.entry, timeout=30)

    result = anyio.run(probed)
    assert result.healthy, result.error
    [(answer, _)] = server.answers()
    assert answer.startswith("error:")  # the probe does not take questions: not even cancel


def test_a_followed_server_never_gets_an_answer(tmp_path: Path) -> None:
    """What ``watch --servers`` keeps open asks nobody either."""
    from mcpctl.probe.catalogfollow import follow_catalog

    server = Server(tmp_path, "legacy", QUESTIONS_ASK_ON_LIST="1")
    seen: list[int] = []

    async def followed() -> None:
        with anyio.fail_after(DEADLINE):
            async with anyio.create_task_group() as tg:

                async def on_catalog(catalog: Any) -> None:
                    seen.append(len(catalog.tools))
                    tg.cancel_scope.cancel()

                tg.start_soon(lambda: follow_catalog("q", server.entry, on_catalog, timeout=30))

    anyio.run(followed)
    assert seen == [6]  # listed, after the question was refused
    [(answer, _)] = server.answers()
    assert answer.startswith("error:")


# --- what mutation testing found unpinned -------------------------------------------------


def test_the_rounds_past_the_cap_give_the_call_up() -> None:
    from mcpctl.probe.inputlog import InputLog

    log = InputLog(max_rounds=2)
    assert log.next_round() is True and log.next_round() is True and not log.stopping
    assert log.next_round() is False and log.capped and log.stopping
    with pytest.raises(UsageError) as caught:
        log.check("db.query")
    assert caught.value.message == (
        "db.query kept asking for input: 2 rounds answered, and it asks again; the server was "
        "told cancel and the call stopped"
    )
    assert caught.value.hint == (
        "the server may not accept the answers given; check them, or call it elsewhere"
    )


def test_the_first_failure_is_the_one_raised() -> None:
    from mcpctl.probe.inputlog import InputLog

    log = InputLog()
    first, second = UsageError("first"), UsageError("second")
    log.give_up(first)
    log.give_up(second)
    log.give_up()
    assert log.failure is first and log.stopping
    with pytest.raises(UsageError) as caught:
        log.check("t")
    assert caught.value is first


def test_what_nobody_answered_says_how_to_answer() -> None:
    from mcpctl.probe.inputlog import InputLog
    from mcpctl.probe.inputrequests import InputField

    form = InputRequest("1", "form", "who?", (InputField("user", required=True),
                                             InputField("org"), InputField("user")))  # fmt: skip
    empty = InputRequest("2", "form", "go on?")
    page = InputRequest("3", "url", "sign in", url="https://example.com/x")
    log = InputLog(unanswered=[form, empty])
    with pytest.raises(InputRequiredError) as caught:
        log.check("db.query")
    err = caught.value
    assert err.message == "db.query asks for input nobody gave; the server was told cancel"
    assert err.hint == (
        "answer on a terminal, or give each field with --input user=VALUE --input org=VALUE; "
        "or accept a form that asks for nothing with --input-accept"
    )
    log = InputLog(unanswered=[page])
    with pytest.raises(InputRequiredError) as caught:
        log.check("t")
    assert caught.value.hint == "run it on a terminal to visit the page the server names"


def test_sampling_and_roots_are_declined_with_a_warning() -> None:
    import mcp_types as types

    from mcpctl.probe.inputlog import InputLog, _answer

    log = InputLog()
    params = types.CreateMessageRequestParams(messages=[], max_tokens=1)
    assert anyio.run(_answer, "1", types.CreateMessageRequest(params=params), None, log) is None
    assert anyio.run(_answer, "2", types.ListRootsRequest(), None, log) is None
    assert log.warnings == [
        "the server asked for sampling, which mcpctl declines",
        "the server asked for roots, which mcpctl declines",
    ]
    assert not log.stopping and log.rounds == 0


# --- one call's questions without a server (each round, each key, each answer) ---------------


def form(message: str = "who?") -> Any:
    import mcp_types as types

    schema = {"type": "object", "properties": {"user": {"type": "string"}}}
    return types.ElicitRequest(params=types.ElicitRequestFormParams(
        message=message, requested_schema=schema))  # fmt: skip


def page(url: str) -> Any:
    import mcp_types as types

    return types.ElicitRequest(params=types.ElicitRequestURLParams(
        message="sign in", url=url, elicitation_id="e1"))  # fmt: skip


class Recorder:
    """An answerer that writes down what it was asked and answers from ``answers`` in turn
    (``None`` for nobody)."""

    def __init__(self, *answers: InputAnswer | None) -> None:
        self.answers = list(answers)
        self.asked: list[InputRequest] = []

    async def __call__(self, request: InputRequest) -> InputAnswer | None:
        self.asked.append(request)
        return self.answers.pop(0)


def test_a_round_is_answered_under_the_keys_the_server_gave() -> None:
    from mcpctl.probe.inputlog import InputLog, answer_requests

    log = InputLog()
    answer = Recorder(InputAnswer("accept", {"user": "ann"}), InputAnswer("decline"))
    requests = {"first": form("who?"), "second": form("and who else?")}
    got = anyio.run(answer_requests, requests, answer, log)
    assert [(r.key, r.message) for r in answer.asked] == [
        ("first", "who?"), ("second", "and who else?")]  # fmt: skip
    assert {k: (v.action, v.content) for k, v in got.items()} == {
        "first": ("accept", {"user": "ann"}), "second": ("decline", None)}  # fmt: skip
    assert log.rounds == 1 and not log.stopping and not log.warnings


def test_a_round_with_a_question_nobody_answered_is_cancelled_throughout() -> None:
    """An answer already given in the round is taken back: the server is told cancel to every
    question of a call given up on."""
    from mcpctl.probe.inputlog import InputLog, answer_requests

    log = InputLog()
    answer = Recorder(InputAnswer("accept", {"user": "ann"}), None)
    got = anyio.run(answer_requests, {"a": form(), "b": form(), "c": form()}, answer, log)
    assert {k: v.action for k, v in got.items()} == {"a": "cancel", "b": "cancel", "c": "cancel"}
    assert len(answer.asked) == 2  # nobody is asked once the call is given up on
    assert [r.key for r in log.unanswered] == ["b"] and log.stopping


def test_a_page_is_answered_without_content_and_a_form_with_it() -> None:
    from mcpctl.probe.inputlog import InputLog, answer_requests

    log = InputLog()
    answer = Recorder(InputAnswer("accept", {"stray": 1}), InputAnswer("accept", {"user": "x"}))
    got = anyio.run(
        answer_requests, {"p": page("https://example.com/in"), "f": form()}, answer, log
    )
    assert (got["p"].action, got["p"].content) == ("accept", None)
    assert (got["f"].action, got["f"].content) == ("accept", {"user": "x"})
    assert answer.asked[0].url == "https://example.com/in"


def test_a_page_at_an_unsafe_address_is_declined_with_a_warning_cut_to_one_line() -> None:
    from mcpctl.probe.inputlog import InputLog, answer_requests

    log = InputLog()
    answer = Recorder()  # never asked
    url = "javascript:alert(1)//" + "x" * 300
    got = anyio.run(answer_requests, {"p": page(url)}, answer, log)
    assert got["p"].action == "decline" and not answer.asked and not log.stopping
    [warning] = log.warnings
    assert warning == (
        f'the server asked to open "{url[:199]}…", which mcpctl declined: only an https page '
        "(or http on this machine) is shown"
    )


def test_an_answer_that_cannot_be_given_gives_the_call_up() -> None:
    from mcpctl.probe.inputlog import InputLog, answer_requests

    log = InputLog()
    wrong = UsageError("count must be a number; got 'x'")

    async def answer(request: InputRequest) -> InputAnswer | None:
        raise wrong

    got = anyio.run(answer_requests, {"a": form()}, answer, log)
    assert got["a"].action == "cancel" and log.failure is wrong and log.stopping
    with pytest.raises(UsageError) as caught:
        log.check("t")
    assert caught.value is wrong


def test_the_rounds_of_a_stateless_server_are_capped() -> None:
    from mcpctl.probe.inputlog import InputLog, answer_requests

    log = InputLog(max_rounds=2)
    answer = Recorder(InputAnswer("accept", {"user": "a"}), InputAnswer("accept", {"user": "b"}))
    for expected in ("accept", "accept", "cancel"):
        got = anyio.run(answer_requests, {"k": form()}, answer, log)
        assert got["k"].action == expected
    assert log.capped and log.rounds == 3 and len(answer.asked) == 2


def test_sampling_and_roots_get_no_answer_in_a_round() -> None:
    import mcp_types as types

    from mcpctl.probe.inputlog import InputLog, answer_requests, cancelled

    log = InputLog()
    params = types.CreateMessageRequestParams(messages=[], max_tokens=1)
    requests = {"s": types.CreateMessageRequest(params=params), "r": types.ListRootsRequest()}
    assert anyio.run(answer_requests, requests, None, log) == {}
    assert log.rounds == 1 and len(log.warnings) == 2
    answered = types.ElicitResult(action="accept", content={"a": 1})
    assert {k: v.action for k, v in cancelled({**requests, "f": form(), "e": answered}).items()} == {
        "f": "cancel", "e": "cancel"}  # fmt: skip


def elicit(callback: Any, request_id: int, request: Any) -> Any:
    from mcp.client.session import ClientRequestContext

    context = ClientRequestContext(session=None, request_id=request_id)  # type: ignore[arg-type]
    return anyio.run(callback, context, request.params)


def test_the_elicitation_callback_counts_each_question_as_a_round() -> None:
    from mcpctl.probe.inputlog import InputLog, elicitation_callback

    log = InputLog(max_rounds=2)
    answer = Recorder(InputAnswer("accept", {"user": "a"}), InputAnswer("decline"))
    callback = elicitation_callback(answer, log)
    first = elicit(callback, 7, form())
    assert (first.action, first.content) == ("accept", {"user": "a"})
    assert elicit(callback, 8, page("https://example.com/")).action == "decline"
    assert [r.key for r in answer.asked] == ["7", "8"] and log.rounds == 2
    assert elicit(callback, 9, form()).action == "cancel"  # the third round: past the cap
    assert log.capped and len(answer.asked) == 2


def test_a_handshake_server_that_asks_again_after_cancel_ends_the_call_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mcpctl.probe import inputlog
    from mcpctl.probe.inputlog import InputLog, elicitation_callback

    monkeypatch.setattr(inputlog, "STOP_GRACE", 3600)  # a grace no test outlasts
    log = InputLog()
    callback = elicitation_callback(Recorder(None), log)

    async def run() -> None:
        from mcp.client.session import ClientRequestContext

        context = ClientRequestContext(session=None, request_id=1)  # type: ignore[arg-type]
        assert (await callback(context, form().params)).action == "cancel"
        assert [r.key for r in log.unanswered] == ["1"]
        assert (await callback(context, form().params)).action == "cancel"
        with anyio.fail_after(DEADLINE):  # it asked again: no grace
            await log.halted()

    anyio.run(run)


def test_a_call_given_up_on_is_left_to_the_server_for_a_grace_then_ended(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mcpctl.probe import inputlog

    monkeypatch.setattr(inputlog, "STOP_GRACE", 0.05)
    log = inputlog.InputLog()

    async def run() -> bool:
        with anyio.move_on_after(0.2) as waited:
            await log.halted()  # not given up on: never returns
        assert waited.cancelled_caught
        log.give_up()
        with anyio.fail_after(10):  # the grace, then the call is ended
            await log.halted()
        return True

    assert anyio.run(run)


def test_no_answerer_leaves_every_question_unanswered() -> None:
    from mcpctl.probe.inputlog import InputLog, answer_requests

    log = InputLog()
    got = anyio.run(answer_requests, {"a": form(), "p": page("https://example.com/")}, None, log)
    assert {k: v.action for k, v in got.items()} == {"a": "cancel", "p": "cancel"}
    assert [r.key for r in log.unanswered] == ["a"] and log.stopping


def test_a_form_with_a_required_field_is_not_one_to_accept_empty() -> None:
    from mcpctl.probe.inputlog import InputLog
    from mcpctl.probe.inputrequests import InputField

    form = InputRequest("1", "form", "who?", (InputField("user", required=True),))
    log = InputLog(unanswered=[form])
    with pytest.raises(InputRequiredError) as caught:
        log.check("t")
    assert caught.value.hint == "answer on a terminal, or give each field with --input user=VALUE"
    assert caught.value.details == ['asked: "who?": user (string, required)']
    assert caught.value.requests == [form.to_dict()]
