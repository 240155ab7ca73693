"""An MCP server that asks questions of every shape, in either era, and writes down what the
client answered: raw JSON-RPC over stdio.

python questions.py legacy|modern|tasks

* ``legacy``: the handshake (2025-11-25; ``server/discover`` gets -32601). A call of a tool
  below sends ``elicitation/create`` (ids ``q-1``, ``q-2``...) mid-call, whether or not the
  client declared the capability, and answers the call once the client responds.
* ``modern``: 2026-07-28, stateless (``initialize`` gets -32022, every result carries
  ``resultType`` and ``serverInfo``). A call of a tool below answers ``input_required``
  (requests under keys ``q-1``, ``q-2``...); the retry carrying the answer ends it.
* ``tasks``: ``modern``, plus the tasks extension: a call whose client declares it gets a
  task (``pollIntervalMs`` 100), ``input_required`` at each poll until ``tasks/update``
  answers it; ``tasks/cancel`` cancels it.

Tools (none takes arguments but ``visit``):

* ``confirm``: a form with no fields, "Really delete every file of the project?".
* ``optional``: "Anything to add?": ``note`` (string), ``verbose`` (boolean), none required.
* ``required``: "Which colour?": ``colour`` (red/green/blue, required), ``count`` (integer).
* ``visit`` {url}: a page to visit (URL mode) at ``url``.
* ``nag``: asks "Which colour, again?" (the ``required`` form) again after every answer,
  1,000 times at most.
* ``stuck`` (``tasks`` only): its task stays ``input_required`` with the same question
  whatever the answer.

An answer ends the call with the text ``accept {"colour": "red"}`` (the action, then the
content as sorted JSON); any action but accept makes it an error result. With
``QUESTIONS_ASK_ON_LIST`` set, the ``legacy`` server asks ``confirm``'s question before it
answers ``tools/list`` (as a server may, unasked).

With ``QUESTIONS_LOG`` set, each line appended to that file is a JSON object: ``{"method"}``
for every request or notification received, ``{"asked": KEY, "tool"}`` for every question
sent, ``{"answer": KEY, "action", "content"}`` for every answer received (``{"answer": KEY,
"error"}`` for an error response).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

LEGACY, MODERN = "2025-11-25", "2026-07-28"
EXTENSION = "io.modelcontextprotocol/tasks"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SERVER_INFO = {"name": "questions-test-server", "version": "1.0.0"}
CACHE = {"ttlMs": 0, "cacheScope": "private"}
MOST = 1000


def _form(message: str, properties: dict[str, Any], *required: str) -> dict[str, Any]:
    schema = {"type": "object", "properties": properties, "required": list(required)}
    return {"mode": "form", "message": message, "requestedSchema": schema}


COLOUR = {"colour": {"type": "string", "enum": ["red", "green", "blue"]},
          "count": {"type": "integer"}}  # fmt: skip
FORMS = {
    "confirm": _form("Really delete every file of the project?", {}),
    "optional": _form(
        "Anything to add?", {"note": {"type": "string"}, "verbose": {"type": "boolean"}}
    ),
    "required": _form("Which colour?", COLOUR, "colour"),
    "nag": _form("Which colour, again?", COLOUR, "colour"),
    "stuck": _form("Which colour, still?", COLOUR, "colour"),
}
TOOLS = [
    {"name": name, "description": f"Asks: {form['message']}",
     "inputSchema": {"type": "object", "properties": {}}}
    for name, form in FORMS.items()
] + [{"name": "visit", "description": "Sends the user to a page.",
      "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}},
                      "required": ["url"]}}]  # fmt: skip


def log(**event: Any) -> None:
    path = os.environ.get("QUESTIONS_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(event) + "\n")


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def question(tool: str, args: dict[str, Any]) -> dict[str, Any]:
    if tool == "visit":
        return {"mode": "url", "message": "Open the page to continue",
                "url": str(args.get("url")), "elicitationId": "visit-1"}  # fmt: skip
    return FORMS[tool]


def outcome(answer: dict[str, Any]) -> dict[str, Any]:
    """The call's result, from the client's answer (a result or an error response)."""
    if "error" in answer:
        text, error = f"error {answer['error'].get('message')}", True
    else:
        action = answer.get("action")
        text = f"{action} {json.dumps(answer.get('content') or {}, sort_keys=True)}"
        error = action != "accept"
    return {"content": [{"type": "text", "text": text}], "isError": error}


def received(key: str, answer: dict[str, Any]) -> None:
    if "error" in answer:
        log(answer=key, error=answer["error"].get("message"))
    else:
        log(answer=key, action=answer.get("action"), content=answer.get("content"))


class Questions:
    def __init__(self, era: str) -> None:
        self.era = era
        self.asked = 0
        self.waiting: dict[str, tuple[Any, str, dict[str, Any]]] = {}  # key -> (id, tool, args)
        self.listing: Any = None  # the id of a tools/list held back for a question
        self.tasks: dict[str, dict[str, Any]] = {}

    def ask(self, tool: str) -> str:
        self.asked += 1
        key = f"q-{self.asked}"
        log(asked=key, tool=tool)
        return key

    def serve(self) -> None:
        for line in sys.stdin:
            if not line.strip():
                continue
            message = json.loads(line)
            method = message.get("method")
            if method is None:
                self.response(message)
                continue
            log(method=method)
            if "id" not in message:
                continue
            params = message.get("params") or {}
            try:
                result = self.request(message["id"], method, params)
            except LookupError as e:
                send({"id": message["id"], "error": {"code": e.args[0], "message": e.args[1]}})
                continue
            if result is not None:
                if self.era != "legacy":
                    result.setdefault("resultType", "complete")
                    result.setdefault("_meta", {})[SERVER_INFO_KEY] = SERVER_INFO
                send({"id": message["id"], "result": result})

    # --- the handshake era ------------------------------------------------------------------

    def response(self, message: dict[str, Any]) -> None:
        key = str(message.get("id"))
        answer = message.get("result") if "result" in message else message
        received(key, answer or {})
        if key == "listing":
            send({"id": self.listing, "result": {"tools": TOOLS}})
            return
        if key not in self.waiting:
            return
        call_id, tool, args = self.waiting.pop(key)
        if tool == "nag" and self.asked < MOST:
            self.legacy_ask(call_id, tool, args)
        else:
            send({"id": call_id, "result": outcome(answer or {})})

    def legacy_ask(self, call_id: Any, tool: str, args: dict[str, Any]) -> None:
        key = self.ask(tool)
        self.waiting[key] = (call_id, tool, args)
        send({"id": key, "method": "elicitation/create", "params": question(tool, args)})

    def request(self, rid: Any, method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        if self.era == "legacy":
            if method == "initialize":
                return {"protocolVersion": LEGACY, "capabilities": {"tools": {}},
                        "serverInfo": SERVER_INFO}  # fmt: skip
            if method == "ping":
                return {}
            if method == "tools/list":
                if os.environ.get("QUESTIONS_ASK_ON_LIST"):
                    self.listing = rid
                    log(asked="listing", tool="tools/list")
                    send({"id": "listing", "method": "elicitation/create",
                          "params": FORMS["confirm"]})  # fmt: skip
                    return None
                return {"tools": TOOLS}
            if method == "tools/call" and params.get("name") in (*FORMS, "visit"):
                self.legacy_ask(rid, str(params["name"]), params.get("arguments") or {})
                return None
            raise LookupError(-32601, "Method not found")
        return self.stateless(method, params)

    # --- the stateless era ------------------------------------------------------------------

    def stateless(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        if method == "initialize" or meta.get(VERSION_KEY) != MODERN:
            raise LookupError(-32022, "Unsupported protocol version")
        declared = EXTENSION in ((meta.get(CAPABILITIES_KEY) or {}).get("extensions") or {})
        tasks = self.era == "tasks" and declared
        if method == "server/discover":
            extensions = {"extensions": {EXTENSION: {}}} if self.era == "tasks" else {}
            return {"supportedVersions": [MODERN], "capabilities": {"tools": {}, **extensions},
                    **CACHE}  # fmt: skip
        if method == "tools/list":
            return {"tools": TOOLS, **CACHE}
        if method == "tools/call":
            return self.call(str(params.get("name")), params, tasks)
        if method in ("tasks/get", "tasks/update", "tasks/cancel") and tasks:
            return self.task(method, params)
        raise LookupError(-32601, "Method not found")

    def call(self, tool: str, params: dict[str, Any], tasks: bool) -> dict[str, Any]:
        args = params.get("arguments") or {}
        if tasks:
            task_id = f"task-{len(self.tasks) + 1}"
            self.tasks[task_id] = {"tool": tool, "args": args, "key": None, "answer": None,
                                   "status": "working"}  # fmt: skip
            return {**self.wire(task_id), "resultType": "task"}
        answers = params.get("inputResponses") or {}
        for key, answer in answers.items():
            received(key, answer)
        last = answers.get(f"q-{self.asked}") if answers else None
        if last is None or (tool == "nag" and self.asked < MOST):
            key = self.ask(tool)
            return {"resultType": "input_required", "inputRequests": {key: {
                "method": "elicitation/create", "params": question(tool, args)}},
                "requestState": key}  # fmt: skip
        return outcome(last)

    def wire(self, task_id: str) -> dict[str, Any]:
        task = self.tasks[task_id]
        data = {"taskId": task_id, "status": task["status"], "pollIntervalMs": 100,
                "ttlMs": 60000, "createdAt": "2026-01-01T00:00:00Z",
                "lastUpdatedAt": "2026-01-01T00:00:00Z"}  # fmt: skip
        return {**data, **task.get("extra", {})}

    def task(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        task_id = str(params.get("taskId"))
        task = self.tasks.get(task_id)
        if task is None:
            raise LookupError(-32602, "Unknown task")
        if method == "tasks/cancel":
            if task["status"] not in ("completed", "cancelled"):
                task["status"], task["extra"] = "cancelled", {}
            return self.wire(task_id)
        if method == "tasks/update":
            for key, answer in (params.get("inputResponses") or {}).items():
                received(key, answer)
                task["answer"] = answer
            if task["tool"] != "stuck":
                task["status"], task["extra"] = "working", {}
            return {}
        if task["status"] in ("completed", "cancelled"):
            return self.wire(task_id)
        answer, tool = task["answer"], task["tool"]
        again = tool == "nag" and self.asked < MOST
        if task["key"] is None or (answer is not None and again):
            task["key"], task["answer"] = self.ask(tool), None
            answer = None
        if answer is None or tool == "stuck":
            request = {"method": "elicitation/create", "params": question(tool, task["args"])}
            task["status"] = "input_required"
            task["extra"] = {"inputRequests": {task["key"]: request}}
        else:
            task["status"], task["extra"] = "completed", {"result": outcome(answer)}
        return self.wire(task_id)


if __name__ == "__main__":
    era = sys.argv[1] if len(sys.argv) > 1 else "legacy"
    if era not in ("legacy", "modern", "tasks"):
        sys.exit(f"unknown era {era!r}; one of legacy, modern, tasks")
    Questions(era).serve()
