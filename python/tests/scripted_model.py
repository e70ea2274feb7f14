"""A scripted chat-completions model over HTTPS for the agent tests, run inside the test network namespace
(as ``test/support/model-server/chat-completions.ts`` answers): ``python3 scripted_model.py CERT KEY HOST
PORT DIR``. Each ``POST …/chat/completions`` consumes the first turn of ``DIR/script.json`` (a list of
``{"type": "text", "text"}`` or ``{"type": "tool-call", "name", "arguments"}``; usage 10 in, 5 out), and
is recorded in ``DIR/requests.jsonl`` (path, whether ``authorization`` held ``Bearer <DIR/key>``, the
offered tool names, the body's ``model``; never a header value). Requests without the key are refused with 401. Streamed
answers are ``chat.completion.chunk`` events, with the usage chunk when ``stream_options.include_usage``
asks for it. Prints ``ready`` once listening."""

from __future__ import annotations

import json
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

DIR = Path(sys.argv[5]) if len(sys.argv) > 5 else Path(".")
LOCK = threading.Lock()
COUNTER = [0]


def next_turn() -> dict[str, Any]:
    with LOCK:
        script_file = DIR / "script.json"
        turns = json.loads(script_file.read_text()) if script_file.exists() else []
        if not turns:
            return {"type": "text", "text": "(unscripted)"}
        turn: dict[str, Any] = turns.pop(0)
        script_file.write_text(json.dumps(turns))
        return turn


def new_id(prefix: str) -> str:
    with LOCK:
        COUNTER[0] += 1
        return f"{prefix}{COUNTER[0]:06d}"


USAGE = {
    "prompt_tokens": 10,
    "completion_tokens": 5,
    "total_tokens": 15,
    "prompt_tokens_details": {"cached_tokens": 0},
    "completion_tokens_details": {"reasoning_tokens": 0},
}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _json(self, status: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        key = (DIR / "key").read_text().strip()
        injected = self.headers.get("authorization") == f"Bearer {key}"
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        tools = [t.get("function", {}).get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
        with LOCK, open(DIR / "requests.jsonl", "a", encoding="utf-8") as record:
            line = {"path": self.path, "key_injected": injected, "tools": tools, "model": body.get("model")}
            record.write(json.dumps(line) + "\n")
        if not injected:
            self._json(401, {"error": {"message": "invalid api key", "type": "invalid_request_error"}})
            return
        if not self.path.endswith("/chat/completions"):
            self._json(404, {"error": {"message": "no such endpoint", "type": "invalid_request_error"}})
            return
        turn = next_turn()
        if body.get("stream") is True:
            self._stream(body, turn)
            return
        message: dict[str, Any] = {"role": "assistant", "content": turn.get("text")}
        if turn["type"] == "tool-call":
            call = {"name": turn["name"], "arguments": json.dumps(turn["arguments"])}
            message = {"role": "assistant", "content": None,
                       "tool_calls": [{"id": new_id("call_"), "type": "function", "function": call}]}  # fmt: skip
        finish = "tool_calls" if turn["type"] == "tool-call" else "stop"
        self._json(200, {"id": new_id("chatcmpl-"), "object": "chat.completion", "created": int(time.time()),
                         "model": body.get("model"), "usage": USAGE,
                         "choices": [{"index": 0, "message": message, "finish_reason": finish}]})  # fmt: skip

    def _stream(self, body: dict[str, Any], turn: dict[str, Any]) -> None:
        include_usage = (body.get("stream_options") or {}).get("include_usage") is True
        ident, created = new_id("chatcmpl-"), int(time.time())

        def chunk(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
            out: dict[str, Any] = {"id": ident, "object": "chat.completion.chunk", "created": created,
                                   "model": body.get("model"),
                                   "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}  # fmt: skip
            if include_usage:
                out["usage"] = None
            return out

        events: list[object] = []
        if turn["type"] == "text":
            events.append(chunk({"role": "assistant", "content": ""}, None))
            events += [chunk({"content": piece + " "}, None) for piece in turn["text"].split(" ")[:-1]]
            events.append(chunk({"content": turn["text"].split(" ")[-1]}, None))
            finish = "stop"
        else:
            args = json.dumps(turn["arguments"])
            first = {"index": 0, "id": new_id("call_"), "type": "function", "function": {"name": turn["name"], "arguments": ""}}
            events.append(chunk({"role": "assistant", "content": None, "tool_calls": [first]}, None))
            for i in range(0, len(args), 12):
                events.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": args[i:i + 12]}}]}, None))
            finish = "tool_calls"
        events.append(chunk({}, finish))
        if include_usage:
            events.append({"id": ident, "object": "chat.completion.chunk", "created": created,
                           "model": body.get("model"), "choices": [], "usage": USAGE})  # fmt: skip
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        for event in events:
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True

    def log_message(self, format: str, *args: object) -> None:
        pass


def main() -> None:
    cert, key, host, port = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = ThreadingHTTPServer((host, port), Handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print("ready", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
