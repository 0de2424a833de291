"""A small OpenAI-compatible chat server for tests, bound to 127.0.0.1 on a free port.

Answers: a caption made of the quoted phrases of the prompt (it passes the check), or for
an image question "red". `script` is a list of behaviours consumed one per request
("500", "timeout", "malformed", "empty", "notjson": a 200 whose body is not JSON, "hang":
no answer for 30 s), then "ok" forever. GET /v1/models lists `models` (id -> the weights
it says it loaded, vLLM's `root`).
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeServer:
    def __init__(self):
        self.script: list[str] = []
        self.requests: list[dict] = []
        self.models = {"m": "org/weights-v1"}
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                if not self.path.rstrip("/").endswith("/models"):
                    return self._send(404, {"error": {"message": "not found"}})
                return self._send(200, {"object": "list", "data": [
                    {"id": name, "object": "model", "created": 0, "owned_by": "fake",
                     "root": root} for name, root in owner.models.items()]})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with owner.lock:
                    owner.requests.append(body)
                    mode = owner.script.pop(0) if owner.script else "ok"
                if mode == "500":
                    return self._send(500, {"error": {"message": "overloaded"}})
                if mode == "timeout":
                    time.sleep(1.5)
                    return self._send(200, owner.reply(body))
                if mode == "notjson":
                    return self._raw(200, b"<html>gateway says hello</html>")
                if mode == "hang":
                    time.sleep(30)
                    return self._send(200, owner.reply(body))
                if mode == "malformed":
                    return self._send(200, {"id": "x", "object": "chat.completion",
                                            "created": 0, "model": "m", "choices": []})
                if mode == "empty":
                    reply = owner.reply(body)
                    reply["choices"][0]["message"]["content"] = None
                    return self._send(200, reply)
                return self._send(200, owner.reply(body))

            def _send(self, code, payload):
                self._raw(code, json.dumps(payload).encode())

            def _raw(self, code, data: bytes):
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @staticmethod
    def reply(body: dict) -> dict:
        content = body["messages"][-1]["content"]
        if isinstance(content, list):  # an image question
            text = "red"
        else:
            line = next((ln for ln in content.splitlines()
                         if ln.startswith(("Objects and colors to include:",
                                           "Relations to include:"))), "")
            phrases = re.findall(r"'([^']+)'", line)
            text = f"Caption: \"In a bright room, {' and '.join(phrases)}.\""
        return {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": text}}]}

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
