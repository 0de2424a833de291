"""The review page's server: the standard library's HTTP server, bound to 127.0.0.1 unless
told otherwise. It answers four requests and reads no path a request names:

  GET  /                      the page
  GET  /api/state?annotator=  the next unit this annotator has not judged, and progress
       [&index=I]             (or unit I, with the answer given to it: going back)
  POST /api/judge             {annotator, index, answer[, rating]}: one judgment, appended
                               (validate mode: an optional Likert rating 1-5 of how
                               faithfully the image shows its caption)
  GET  /image/<index>         the image of sample unit <index>, a file inside the run
Units go to the page without their answers (the validators' verdict, the positive's place).

What a page on another site cannot do:
- post a judgment: judgments are JSON only (a cross-site JSON post needs a CORS preflight,
  never granted), and a post whose Origin is not this server's own is refused;
- read units through DNS rebinding (its own name pointed at 127.0.0.1): a request whose
  Host is a name other than localhost, this machine's names or the bound one is refused
  (an IP address cannot be rebound; `autocomp review --allow-host NAME` adds a name).
A body's size must be plain ASCII digits up to MAX_BODY; a connection idle for `timeout`
seconds is closed. A judgment that cannot be written (disk full) is answered 507 with the
reason, and nothing of it stays in the file.
"""

from __future__ import annotations

import ipaddress
import json
import re
import socket
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from autocomp.core.errors import AutocompError, disk_full
from autocomp.review.judgments import Judgments, check_name
from autocomp.review.sample import LIKERT, is_right, valid_rating

MAX_BODY = 16_384
# the page: its own inline script and style, images and API calls from this server only;
# every other response (images, JSON, text) can run nothing, opened as its own URL too
PAGE_POLICY = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
               "img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; "
               "frame-ancestors 'none'")
OTHER_POLICY = "default-src 'none'; sandbox; frame-ancestors 'none'"
TIMEOUT = 30.0  # seconds a connection may sit idle mid-request
_LENGTH = re.compile(r"[0-9]{1,9}")  # ASCII digits only: int() also takes "\u0661", " 12"


class Review:
    """The sample, the judgments and what the page may see of them."""

    def __init__(self, run_dir: Path, sample: dict, judgments: Judgments):
        self.root = Path(run_dir).resolve()
        self.sample, self.judgments = sample, judgments
        self.units = sample["units"]

    def state(self, annotator: str, index=None) -> dict:
        """Progress, and the next unit this annotator has not judged, or unit `index` (to
        go back to one; its earlier answer comes with it)."""
        mine = {unit: rec for (who, unit), rec in self.judgments.latest(
            self.sample["mode"], self.sample["id"]).items() if who == annotator}
        if index is None:
            index = next((i for i, u in enumerate(self.units) if u["key"] not in mine), None)
        elif not _whole(index) or not 0 <= index < len(self.units):
            raise AutocompError(f"no unit {index!r} in this sample")
        unit = None
        if index is not None:
            unit = self.public(index)
            if self.units[index]["key"] in mine:
                earlier = mine[self.units[index]["key"]]
                unit["answered"] = earlier["answer"]
                if "rating" in earlier:
                    unit["rated"] = earlier["rating"]
        return {"mode": self.sample["mode"], "annotator": annotator, "total": len(self.units),
                "judged": sum(u["key"] in mine for u in self.units), "unit": unit}

    def public(self, index: int) -> dict:
        u = self.units[index]
        out = {"index": index, "image": f"/image/{index}", "task": u["task"], "n": u["n"],
               "track": u["track"]}
        if self.sample["mode"] == "validate":
            out.update(caption=u["caption"], criteria=u["criteria"])
        else:
            out.update(kind=u["kind"], options=u["options"])
        return out

    def judge(self, annotator: str, index, answer, rating=None) -> dict:
        if not _whole(index) or not 0 <= index < len(self.units):
            raise AutocompError(f"no unit {index!r} in this sample")
        u = self.units[index]
        rec = {"mode": self.sample["mode"], "sample": self.sample["id"], "unit": u["key"],
               "annotator": annotator}
        if self.sample["mode"] == "validate":
            if answer not in ("yes", "no"):
                raise AutocompError(f"answer {answer!r}: expected 'yes' or 'no'")
            rec["answer"] = answer
            if rating is not None:
                if not valid_rating(rating):
                    raise AutocompError(f"rating {rating!r}: expected a whole number "
                                        f"1..{LIKERT}")
                rec["rating"] = rating
        else:
            if not _whole(answer) or not 0 <= answer < len(u["options"]):
                raise AutocompError(f"answer {answer!r}: expected an option index 0.."
                                    f"{len(u['options']) - 1}")
            rec.update(answer=answer, chosen=u["options"][answer],
                       correct=is_right(u, answer))
        self.judgments.append(rec)
        return self.state(annotator)

    def image(self, index: int) -> Path:
        path = (self.root / self.units[index]["image"]).resolve()
        if not path.is_relative_to(self.root) or not path.is_file():
            raise FileNotFoundError(path)
        return path


def _whole(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def page() -> bytes:
    return resources.files("autocomp.review").joinpath("page.html").read_bytes()


def local_names(host: str) -> set[str]:
    """Host names (without port) a request may carry: localhost, this machine's names and
    the one served on. Any IP address is fine too (see `host_allowed`)."""
    names = {"localhost", host.lower()}
    for name in (socket.gethostname(), socket.getfqdn()):
        names.add(name.lower())
    return names


_HOST = re.compile(r"(\[[0-9a-f:.]+\]|[^:\[\]]+)(?::([0-9]{1,5}))?")


def host_allowed(header: str | None, names: set[str], port: int) -> bool:
    """The Host header names this server: an IP address or one of `names`, on its port."""
    found = _HOST.fullmatch((header or "").strip().lower())
    if not found or (found.group(2) or "80") != str(port):
        return False
    host = found.group(1).strip("[]")
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return host in names


def make_server(review: Review, host: str = "127.0.0.1", port: int = 8765,
                timeout: float = TIMEOUT, allow_hosts: tuple[str, ...] = ()):
    """`allow_hosts`: more names the page may be opened at (a reverse proxy's)."""
    server = ThreadingHTTPServer((host, port), Handler)
    server.review, server.idle_timeout = review, timeout
    server.names = local_names(host) | {name.lower() for name in allow_hosts}
    return server


class Handler(BaseHTTPRequestHandler):
    """The four requests, over the server's `review`, `names` and `idle_timeout`."""

    server_version = "autocomp-review"

    def setup(self):
        self.timeout = self.server.idle_timeout  # a half-open request cannot hold a thread
        super().setup()

    def log_message(self, *args):
        pass

    @property
    def review(self) -> Review:
        return self.server.review

    def _refused(self) -> bool:
        """A request from a rebound name, or a cross-origin post: answered 403."""
        if not host_allowed(self.headers.get("Host"), self.server.names,
                            self.server.server_port):
            self._send(403, b"unknown Host: open the page at the address the review "
                            b"command printed", "text/plain")
            return True
        origin = self.headers.get("Origin")
        if self.command == "POST" and origin is not None and \
                origin.lower().rstrip("/") != f"http://{self.headers['Host'].lower()}":
            self._send(403, b"cross-origin post refused", "text/plain")
            return True
        return False

    def do_GET(self):
        if self._refused():
            return None
        url = urlsplit(self.path)
        if url.path == "/":
            return self._send(200, page(), "text/html; charset=utf-8")
        if url.path == "/api/state":
            query = parse_qs(url.query)
            name = query.get("annotator", [""])[0]
            at = query.get("index", [None])[0]
            at = int(at) if at is not None and _LENGTH.fullmatch(at) else at
            return self._api(lambda: self.review.state(check_name(name), at))
        if url.path.startswith("/image/") and _LENGTH.fullmatch(url.path[7:]):
            return self._image(int(url.path[7:]))
        return self._send(404, b"not found", "text/plain")

    def _image(self, index: int):
        if index >= len(self.review.units):
            return self._send(404, b"not found", "text/plain")
        try:
            path = self.review.image(index)
        except FileNotFoundError:
            return self._send(404, b"image missing", "text/plain")
        from autocomp.report.html import reencoded

        data = reencoded(path, self.review.root, thumb=None)  # only pixels, as PNG
        if data is None:  # an SVG with a script, HTML named .png, anything not decoded
            return self._send(415, b"not a raster image", "text/plain")
        return self._send(200, data, "image/png")

    def do_POST(self):
        if self._refused():
            return None
        if urlsplit(self.path).path != "/api/judge":
            return self._send(404, b"not found", "text/plain")
        # JSON only: a page on another site cannot send this without a CORS preflight,
        # which this server never grants
        if not (self.headers.get("Content-Type") or "").startswith("application/json"):
            return self._send(415, b"expected application/json", "text/plain")
        body = self._body()
        if body is None:
            return None
        return self._api(lambda: self.review.judge(check_name(body.get("annotator")),
                                                   body.get("index"), body.get("answer"),
                                                   body.get("rating")))

    def _body(self) -> dict | None:
        """The request's JSON object, or None once an error is answered."""
        length = (self.headers.get("Content-Length") or "0").strip()
        if not _LENGTH.fullmatch(length):
            self.close_connection = True  # the body's end is unknown
            self._json(400, {"error": f"bad Content-Length {length[:20]!r}"})
            return None
        if int(length) > MAX_BODY:
            self.close_connection = True
            self._send(413, b"too large", "text/plain")
            return None
        try:
            body = json.loads(self.rfile.read(int(length)) or b"{}")
            if not isinstance(body, dict):
                raise ValueError("expected a JSON object")
        except (ValueError, RecursionError) as exc:  # RecursionError: deep nesting
            self._json(400, {"error": f"bad request body ({str(exc)[:80]})"})
            return None
        return body

    def _api(self, fn):
        try:
            return self._json(200, fn())
        except AutocompError as exc:
            return self._json(400, {"error": str(exc)})
        except OSError as exc:  # the judgment could not be written: nothing of it kept
            full = disk_full(exc)
            return self._json(507 if full else 500, {
                "error": f"the judgment was not saved: {exc.strerror or exc}"
                         + (" (disk full: free some space and answer again)" if full
                            else "")})

    def _json(self, code, data):
        return self._send(code, json.dumps(data).encode(), "application/json")

    def send_error(self, code, message=None, explain=None):
        """The library's own errors (a method it does not serve, a request line it cannot
        read) as plain text with the same headers as every other response: its HTML error
        page came without a Content-Security-Policy."""
        self.close_connection = True
        reason = message or self.responses.get(code, ("error",))[0]
        self._send(code, f"{code} {reason}".encode("ascii", "replace")[:200],
                   "text/plain; charset=utf-8")

    def _send(self, code, data: bytes, content_type: str):
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Security-Policy",
                         PAGE_POLICY if content_type.startswith("text/html") else OTHER_POLICY)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        self.wfile.write(data)
