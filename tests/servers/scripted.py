"""An MCP server over stdio that answers as its script says, in raw JSON-RPC (no SDK: it
starts in a few milliseconds).

python scripted.py SCRIPT

SCRIPT is a JSON object: method -> list of answers, used in order (the last one again once
the list is used up). An answer is ``{"result": ...}``, ``{"error": {...}}`` or ``"silent"``
(no answer). A method the script does not name gets -32601. Every method received is
written to stderr, one a line, so a test can tell what reached the server. With
``SCRIPTED_SERVER_STARTS`` set, a line is appended to that file each time it starts; with
``SCRIPTED_SERVER_REQUESTS`` set, every message received is appended to that file as it came.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


def _send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def main() -> None:
    script: dict[str, list[Any]] = json.loads(sys.argv[1])
    starts = os.environ.get("SCRIPTED_SERVER_STARTS")
    if starts:
        with open(starts, "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\n")
    requests = os.environ.get("SCRIPTED_SERVER_REQUESTS")
    for line in sys.stdin:
        if not line.strip():
            continue
        if requests:
            with open(requests, "a", encoding="utf-8") as f:
                f.write(line.rstrip("\n") + "\n")
        request = json.loads(line)
        method = request.get("method")
        if isinstance(method, str):
            sys.stderr.write(method + "\n")
            sys.stderr.flush()
        if "id" not in request or method is None:
            continue  # a notification, or a response to us: nothing to answer
        answers = script.get(method)
        if not answers:
            error = {"code": -32601, "message": f"Method not found: {method}"}
            _send({"id": request["id"], "error": error})
            continue
        answer = answers.pop(0) if len(answers) > 1 else answers[0]
        if answer != "silent":
            _send({"id": request["id"], **answer})


if __name__ == "__main__":
    main()
