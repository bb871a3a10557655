"""Scripted local model servers so the real `claude` and `codex` CLIs run tool calls without a login.

``FakeAnthropic`` speaks the Messages API (SSE) that Claude Code calls through ``ANTHROPIC_BASE_URL``;
``FakeResponses`` speaks the OpenAI Responses API (SSE) that Codex calls through a custom model provider.
Each answers with the next scripted step (a tool call or a final text) based on how many tool results the
conversation already holds, and records every request body so tests can check what reached the model (for
example the SessionStart context packet). They were also used to record the hook payload and transcript
fixtures under tests/fixtures/. Loopback only; nothing leaves the machine.
"""

from __future__ import annotations

import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _Server:
    def __init__(self, steps: list[dict[str, Any]]) -> None:
        self.steps = steps
        self.requests: list[dict[str, Any]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.end_headers()

            def do_GET(self) -> None:
                owner._json(self, {"data": [], "models": []})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    body = {}
                owner.requests.append({"path": self.path, "body": body})
                owner.handle(self, body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> _Server:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def handle(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        raise NotImplementedError

    @staticmethod
    def _json(handler: BaseHTTPRequestHandler, value: Any) -> None:
        data = json.dumps(value).encode()
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    @staticmethod
    def _sse(handler: BaseHTTPRequestHandler, events: list[tuple[str, dict[str, Any]]]) -> None:
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.end_headers()
        for name, data in events:
            handler.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            handler.wfile.flush()

    def all_request_text(self) -> str:
        return "\n".join(json.dumps(request["body"]) for request in self.requests)


class FakeAnthropic(_Server):
    """Steps: ``{"tool": "Bash", "input": {...}}`` or ``{"text": "..."}``."""

    def handle(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        if "count_tokens" in handler.path:
            self._json(handler, {"input_tokens": 10})
            return
        messages = body.get("messages") or []
        results = sum(
            1
            for message in messages
            if isinstance(message.get("content"), list)
            for block in message["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        )
        tools = [tool.get("name") for tool in body.get("tools") or []]
        if "Bash" in tools and results < len(self.steps):
            step = self.steps[results]
        else:
            step = {"text": "All done." if "Bash" in tools else "Summary: work happened."}
        block: dict[str, Any]
        if "text" in step:
            block, stop = {"type": "text", "text": step["text"]}, "end_turn"
        else:
            block = {
                "type": "tool_use",
                "id": "toolu_" + uuid.uuid4().hex[:20],
                "name": step["tool"],
                "input": step["input"],
            }
            stop = "tool_use"
        message = {
            "id": "msg_" + uuid.uuid4().hex[:20],
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "fake"),
            "content": [block],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
        if not body.get("stream"):
            self._json(handler, message)
            return
        start_block = block if block["type"] == "text" else {**block, "input": {}}
        if block["type"] == "text":
            start_block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        self._sse(
            handler,
            [
                (
                    "message_start",
                    {"type": "message_start", "message": {**message, "content": [], "stop_reason": None}},
                ),
                ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start_block}),
                ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                (
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": stop, "stop_sequence": None},
                        "usage": {"output_tokens": 5},
                    },
                ),
                ("message_stop", {"type": "message_stop"}),
            ],
        )


class FakeResponses(_Server):
    """Steps: ``{"function": "exec_command", "arguments": {...}}`` or ``{"text": "..."}``."""

    def handle(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        items = body.get("input") or []
        outputs = sum(
            1
            for item in items
            if isinstance(item, dict) and item.get("type") in ("function_call_output", "custom_tool_call_output")
        )
        step = self.steps[outputs] if body.get("tools") and outputs < len(self.steps) else {"text": "All done."}
        if "text" in step:
            item = {
                "type": "message",
                "role": "assistant",
                "id": "msg_" + uuid.uuid4().hex,
                "content": [{"type": "output_text", "text": step["text"], "annotations": []}],
            }
        else:
            item = {
                "type": "function_call",
                "id": "fc_" + uuid.uuid4().hex,
                "call_id": "call_" + uuid.uuid4().hex[:12],
                "name": step["function"],
                "arguments": json.dumps(step["arguments"]),
            }
        response_id = "resp_" + uuid.uuid4().hex
        usage = {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        }
        self._sse(
            handler,
            [
                ("response.created", {"type": "response.created", "response": {"id": response_id}}),
                ("response.output_item.done", {"type": "response.output_item.done", "item": item}),
                ("response.completed", {"type": "response.completed", "response": {"id": response_id, "usage": usage}}),
            ],
        )
