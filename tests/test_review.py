"""Human validation (Auto-Comp Tables 10, 17): the balanced sample, the local server (what it
will and will not serve), the append-only judgments and the report; then the page itself
in a real headless Chromium (skipped, saying why, where Debian's chromium is absent)."""

import errno
import json
import shutil
import threading
import urllib.error
import urllib.request
import warnings
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import built_run, shape_color_run

from autocomp.cli import main
from autocomp.core.errors import AutocompError
from autocomp.eval.scorers.choice import MAX_OPTIONS
from autocomp.review.judgments import Judgments
from autocomp.review.report import concordance, human_accuracy, kappa
from autocomp.review.sample import load_or_draw, sample_path
from autocomp.review.server import Review, make_server
from autocomp.run import Run

CONFIG = """
name: reviewrun
seed: 3
concepts:
  - {task: shape_color, n: [2, 3], count: 12}
  - {task: shape_position, n: [2], count: 6}
generate: {options: {size: 64, faults: {drop_object: 0.15}}}
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return built_run(tmp_path_factory.mktemp("review"), CONFIG)


@pytest.fixture
def run(built, tmp_path):
    """A fresh copy of the built run per test (samples and judgments start empty)."""
    shutil.copytree(built.dir, tmp_path / "run")
    return Run.open(tmp_path / "run")


class Served:
    def __init__(self, run, mode, per_cell=2, seed=0):
        self.sample = load_or_draw(run, mode, per_cell, seed)
        self.judgments = Judgments(run.dir / "review" / "judgments.jsonl")
        self.review = Review(run.dir, self.sample, self.judgments)
        self.httpd = make_server(self.review, port=0)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def get(self, path):
        try:
            with urllib.request.urlopen(self.url + path) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def post(self, body):
        req = urllib.request.Request(self.url + "/api/judge", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def serve():
    started = []

    def start(run, mode, **kw):
        started.append(Served(run, mode, **kw))
        return started[-1]

    yield start
    for s in started:
        s.close()


# -- the sample ---------------------------------------------------------------------------
def test_validate_sample_is_balanced_seeded_and_kept(run):
    s = load_or_draw(run, "validate", 2, 7)
    cells = Counter((u["task"], u["n"], u["track"]) for u in s["units"])
    assert set(cells.values()) == {2} and len(cells) == 6  # 2 concepts x both tracks per cell
    concepts = Counter(u["key"].rsplit("-", 1)[0] for u in s["units"])
    assert set(concepts.values()) == {2}  # each concept with its minimal and contextual image
    u = next(u for u in s["units"] if u["track"] == "minimal" and u["task"] == "shape_color")
    assert u["criteria"][0].startswith("Objects: exactly these")
    assert "Background: plain white" in u["criteria"]
    assert any(c.startswith("What color is the") and "\u2192" in c for c in u["criteria"])
    # kept: the same sample comes back, and other options are refused in one line
    assert load_or_draw(run, "validate", None, None) == s
    with pytest.raises(AutocompError, match="--per-cell 2 --seed 7"):
        load_or_draw(run, "validate", 3, 7)
    other = sample_path(run.paths.review, "validate")
    other.unlink()
    again = load_or_draw(run, "validate", 2, 7)
    assert again["units"] == s["units"]  # seeded: drawn anew, the same
    other.unlink()
    assert load_or_draw(run, "validate", 2, 8)["id"] != s["id"]


def test_test_sample_has_fifty_options_and_the_scorers_order(run):
    from autocomp.eval.scorers.choice import option_order
    from autocomp.formats.runs import find_benchmarks

    s = load_or_draw(run, "test", 3, 0)
    cells = Counter((u["task"], u["n"], u["track"], u["kind"]) for u in s["units"])
    benches = [b for b in find_benchmarks(run.dir) if b.kind in ("swap", "confusion")]
    assert len(cells) == len(benches) and {b.n for b in benches} == {2, 3}
    for b in benches:  # K per benchmark, or all it has
        assert cells[(b.task, b.n, b.track, b.kind)] == min(3, sum(1 for _ in b.items()))
    conf3 = [u for u in s["units"] if u["kind"] == "confusion" and u["n"] == 3]
    assert conf3 and all(len(u["options"]) == MAX_OPTIONS < u["candidates"] for u in conf3)
    items = {f"{b.name}:{i['id']}": i for b in find_benchmarks(run.dir) for i in b.items()}
    for u in s["units"]:
        item = items[u["key"]]
        texts = [item["positive"], *(n["caption"] for n in item["negatives"])]
        assert u["options"] == [texts[c] for c in option_order(item)]
        assert u["options"][u["answer"]] == item["positive"]
        same = {item["positive"]} | {n["caption"] for n in item["negatives"]
                                     if n.get("same_meaning")}
        assert {u["options"][i] for i in u["accepted"]} == same & set(u["options"])


# -- the server -----------------------------------------------------------------------------
def test_server_serves_the_sample_and_nothing_else(run, serve):
    srv = serve(run, "test")
    assert srv.httpd.server_address[0] == "127.0.0.1"
    code, body = srv.get("/api/state?annotator=alice")
    state = json.loads(body)
    assert code == 200 and state["judged"] == 0 and state["total"] == len(srv.sample["units"])
    assert "answer" not in state["unit"] and "auto" not in state["unit"]  # nothing given away
    code, data = srv.get("/image/0")  # decoded and encoded again: the same pixels, PNG
    import io

    from PIL import Image, ImageChops

    with Image.open(io.BytesIO(data)) as got, \
            Image.open(run.dir / srv.sample["units"][0]["image"]) as want:
        assert code == 200 and got.format == "PNG"
        assert ImageChops.difference(got.convert("RGB"), want.convert("RGB")).getbbox() is None
    for path in ("/image/99999", "/image/-1", "/image/..%2Fconfig.yaml", "/../config.yaml",
                 "/config.yaml", "/images/" + srv.sample["units"][0]["image"],
                 "/%2e%2e/%2e%2e/etc/passwd", "/api/state/../../config.yaml"):
        assert srv.get(path)[0] in (400, 404), path
    # a unit whose image names a path outside the run is still not served
    srv.review.units[1] = {**srv.review.units[1], "image": "../../../../etc/passwd"}
    assert srv.get("/image/1")[0] == 404
    # bad names and answers: 400 with a reason, nothing recorded
    assert srv.get("/api/state?annotator=")[0] == 400
    assert srv.get("/api/state?annotator=%3Cscript%3E")[0] == 400
    code, err = srv.post({"annotator": "alice", "index": 0, "answer": 999})
    assert code == 400 and "option index" in err["error"]
    code, err = srv.post({"annotator": "alice", "index": 10**6, "answer": 0})
    assert code == 400 and "no unit" in err["error"]
    assert srv.post({"annotator": "../x", "index": 0, "answer": 0})[0] == 400
    assert srv.post({"annotator": "alice", "index": 0, "answer": True})[0] == 400
    assert srv.post({"annotator": "alice", "index": "0", "answer": 0})[0] == 400
    form = urllib.request.Request(srv.url + "/api/judge", data=json.dumps(
        {"annotator": "alice", "index": 0, "answer": 0}).encode(),
        headers={"Content-Type": "text/plain"})  # what a cross-site form could send
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(form)
    assert err.value.code == 415
    assert not srv.judgments.path.exists()


def test_judgments_append_resume_and_survive_a_damaged_line(run, serve):
    srv = serve(run, "validate", per_cell=1)
    units = srv.sample["units"]
    code, state = srv.post({"annotator": "alice", "index": 0, "answer": "yes"})
    assert code == 200 and state["judged"] == 1 and state["unit"]["index"] == 1
    srv.post({"annotator": "alice", "index": 1, "answer": "no"})
    srv.post({"annotator": "alice", "index": 1, "answer": "yes"})  # a change of mind
    srv.post({"annotator": "bob", "index": 0, "answer": "no"})
    lines = srv.judgments.path.read_text().splitlines()
    assert len(lines) == 4  # appended, never rewritten
    latest = srv.judgments.latest("validate", srv.sample["id"])
    assert latest[("alice", units[1]["key"])]["answer"] == "yes"
    # a new server on the same run (a restart) goes on where each annotator stopped
    srv.close()
    again = serve(run, "validate", per_cell=1)
    assert json.loads(again.get("/api/state?annotator=alice")[1])["unit"]["index"] == 2
    assert json.loads(again.get("/api/state?annotator=bob")[1])["unit"]["index"] == 1
    back = json.loads(again.get("/api/state?annotator=alice&index=1")[1])
    assert back["unit"]["index"] == 1 and back["unit"]["answered"] == "yes"
    assert back["judged"] == 2
    assert again.get("/api/state?annotator=alice&index=999")[0] == 400
    assert again.get("/api/state?annotator=alice&index=x")[0] == 400
    with open(again.judgments.path, "a") as fh:
        fh.write('{"annotator": "alice", "unit": "x"')  # killed mid-line
    with pytest.warns(UserWarning, match=r"judgments.jsonl:5: 1 damaged line"):
        state = json.loads(again.get("/api/state?annotator=alice")[1])
    assert state["judged"] == 2


def _raw(srv, request: bytes, timeout: float = 10.0) -> bytes:
    """Send raw bytes to the server and read its answer until it closes or answers."""
    import socket

    with socket.create_connection(("127.0.0.1", srv.httpd.server_address[1]),
                                  timeout=timeout) as conn:
        data = b""
        try:
            conn.sendall(request)
            conn.shutdown(socket.SHUT_WR)
        except OSError:  # broken pipe, reset, not connected: the server answered and
            pass  # closed before the whole request was sent (or before our shutdown)
        try:
            while chunk := conn.recv(65536):
                data += chunk
        except ConnectionResetError:
            pass
        return data


def _post_request(srv, length: str, body: bytes = b"", **headers) -> bytes:
    port = srv.httpd.server_address[1]
    head = {"Host": f"127.0.0.1:{port}", "Content-Type": "application/json",
            "Content-Length": length, **headers}
    lines = "".join(f"{k}: {v}\r\n" for k, v in head.items())
    return f"POST /api/judge HTTP/1.1\r\n{lines}\r\n".encode() + body


def _post_raw(srv, length: str, body: bytes = b"", **headers) -> bytes:
    return _raw(srv, _post_request(srv, length, body, **headers))


def test_bad_body_sizes_and_bodies_are_400_and_read_nothing_more(run, serve):
    """Content-Length -1 used to read to the end of the stream (the body limit bypassed);
    "abc", non-ASCII digits and 16,000 nested brackets dropped the connection."""
    import tracemalloc

    srv = serve(run, "validate", per_cell=1)
    for length in ("-1", "abc", "\u0661\u0662".encode().decode("latin-1"), "1e3", ""):
        answer = _post_raw(srv, length, b'{"annotator": "alice", "index": 0, "answer": "yes"}')
        assert answer.startswith(b"HTTP/1.0 400") or answer.startswith(b"HTTP/1.1 400"), \
            (length, answer[:80])
        assert b"Content-Length" in answer
    # a body that never ends is not read past the limit
    request = _post_request(srv, "-1", b"x" * 5_000_000)
    tracemalloc.start()
    answer = _raw(srv, request)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert b" 400 " in answer.split(b"\r\n")[0] and peak < 2_000_000
    nested = b"[" * 16_000 + b"]" * 16_000
    answer = _post_raw(srv, str(len(nested)), nested)
    assert b" 413 " in answer.split(b"\r\n")[0]
    deep = b"[" * 8_000 + b"]" * 8_000
    answer = _post_raw(srv, str(len(deep)), deep)
    assert b" 400 " in answer.split(b"\r\n")[0] and b"bad request body" in answer
    assert not srv.judgments.path.exists()


def test_dns_rebinding_and_cross_origin_posts_are_refused(run, serve):
    srv = serve(run, "validate", per_cell=1)
    port = srv.httpd.server_address[1]

    def get(host):
        return _raw(srv, f"GET /api/state?annotator=eve HTTP/1.1\r\nHost: {host}\r\n\r\n"
                    .encode()).split(b"\r\n")[0]

    assert b" 403 " in get(f"attacker.example:{port}")
    assert b" 403 " in get("attacker.example")
    assert b" 403 " in get(f"127.0.0.1:{port + 1}")
    for ok in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"):
        assert b" 200 " in get(ok), ok
    body = json.dumps({"annotator": "eve", "index": 0, "answer": "yes"}).encode()
    evil = _post_raw(srv, str(len(body)), body, Origin="http://attacker.example")
    assert b" 403 " in evil.split(b"\r\n")[0]
    rebound = _post_raw(srv, str(len(body)), body, Origin=f"http://attacker.example:{port}",
                        Host=f"attacker.example:{port}")
    assert b" 403 " in rebound.split(b"\r\n")[0]
    assert not srv.judgments.path.exists()
    same = _post_raw(srv, str(len(body)), body, Origin=f"http://127.0.0.1:{port}")
    assert b" 200 " in same.split(b"\r\n")[0] and srv.judgments.path.exists()
    from autocomp.review.server import host_allowed, local_names

    names = local_names("127.0.0.1") | {"review.lab.example"}
    assert host_allowed("Review.Lab.Example:8765", names, 8765)
    assert host_allowed("review.lab.example", names, 80)
    assert not host_allowed("review.lab.example", names, 8765)
    assert not host_allowed("a:b:c", names, 8765) and not host_allowed(None, names, 8765)


def test_a_half_open_request_is_dropped_after_the_timeout(run):
    import socket
    import time

    sample = load_or_draw(run, "validate", 1, 0)
    review = Review(run.dir, sample, Judgments(run.dir / "review" / "judgments.jsonl"))
    httpd = make_server(review, port=0, timeout=0.5)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        with socket.create_connection(("127.0.0.1", httpd.server_address[1])) as conn:
            conn.sendall(b"POST /api/judge HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never ends
            conn.settimeout(120)  # far above the server's 0.5 s: a load spike never fails it
            start = time.monotonic()
            assert conn.recv(1024) == b""  # the server closed it, not our own timeout
            assert time.monotonic() - start < 120
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_full_disk_loses_no_acknowledged_judgment(run, serve, tmp_path):
    """A write cut short by the file-size limit (the kernel's EFBIG, as a full disk's
    ENOSPC) leaves nothing of itself; the next judgment is whole and read back."""
    import resource
    import signal

    path = tmp_path / "judgments.jsonl"
    judgments = Judgments(path)
    judgments.append({"annotator": "a", "unit": "u1", "answer": "yes"})
    size = path.stat().st_size
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    old = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size + 10, hard))
    try:
        with pytest.raises(OSError):
            judgments.append({"annotator": "a", "unit": "u2", "answer": "no"})
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, old)
    assert path.stat().st_size == size  # nothing torn left behind
    judgments.append({"annotator": "a", "unit": "u3", "answer": "no"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [r["unit"] for r in judgments.read()] == ["u1", "u3"]
    # a torn tail from a killed writer is cut off before the next line
    with open(path, "a") as fh:
        fh.write('{"annotator": "a", "unit": "u4"')
    judgments.append({"annotator": "a", "unit": "u5", "answer": "yes"})
    assert [r["unit"] for r in judgments.read()] == ["u1", "u3", "u5"]
    # a whole record missing only its newline (an edited file) is kept
    with open(path, "a") as fh:
        fh.write('{"annotator": "a", "unit": "u6", "answer": "yes"}')
    judgments.append({"annotator": "a", "unit": "u7", "answer": "yes"})
    assert [r["unit"] for r in judgments.read()] == ["u1", "u3", "u5", "u6", "u7"]

    # the page hears why: 507 with the reason, and the answer is not recorded

    srv = serve(run, "validate", per_cell=1)

    def full(record):
        raise OSError(errno.ENOSPC, "No space left on device")

    real, srv.review.judgments.append = srv.review.judgments.append, full
    code, err = srv.post({"annotator": "alice", "index": 0, "answer": "yes"})
    assert code == 507 and "not saved" in err["error"] and "disk full" in err["error"]
    srv.review.judgments.append = real
    code, state = srv.post({"annotator": "alice", "index": 0, "answer": "yes"})
    assert code == 200 and state["judged"] == 1


# -- the report -----------------------------------------------------------------------------
def test_kappa_matches_its_definition():
    # a 2x2 table [[a, b], [c, d]] = [[20, 5], [10, 15]]: p_o = 0.7, p_e = 0.5, kappa 0.4
    pairs = ([(False, False)] * 20 + [(False, True)] * 5 + [(True, False)] * 10
             + [(True, True)] * 15)
    assert kappa(pairs) == pytest.approx(0.4)
    assert kappa([(True, True)] * 5) is None  # one label throughout: undefined
    assert kappa([]) is None


def test_concordance_and_accuracy_from_judgments(run):
    s = load_or_draw(run, "validate", 2, 0)
    units = s["units"]
    latest = {}
    for i, u in enumerate(units):  # alice agrees with the validator except on unit 0
        latest[("alice", u["key"])] = {"answer": "yes" if u["auto"] != (i == 0) else "no"}
    for u in units[:4]:  # bob agrees throughout, on four units
        latest[("bob", u["key"])] = {"answer": "yes" if u["auto"] else "no"}
    c = concordance(s, latest)
    # unit 0 is a tie (alice against bob); the other units agree by majority
    assert c["all"]["ties"] == 1 and c["all"]["judged"] == len(units)
    assert c["all"]["agreement"] == 100.0
    alice = c["all"]["annotators"]["alice"]
    assert alice["judged"] == len(units)
    assert alice["agreement"] == pytest.approx(100 * (len(units) - 1) / len(units))
    assert c["all"]["between"]["alice / bob"] == {"judged": 4, "agreement": 75.0,
                                                  "kappa": c["all"]["between"]["alice / bob"]
                                                  ["kappa"]}
    t = load_or_draw(run, "test", 2, 0)
    latest = {("v1", u["key"]): {"answer": u["answer"]} for u in t["units"]}
    first = t["units"][0]
    latest[("v2", first["key"])] = {"answer": (first["answer"] + 1) % len(first["options"])}
    acc = human_accuracy(t, latest)
    cell = (first["task"], first["n"], first["track"], first["kind"])
    assert acc[cell]["v1"] == (2, 2) and acc[cell]["v2"] == (0, 1)
    # an option stating the positive's facts in other words (same_meaning) is right too
    unit = {"key": "k", "task": "t", "n": 2, "track": "minimal", "kind": "confusion",
            "options": ["a", "b", "c", "d"], "answer": 1, "accepted": [1, 3]}
    acc = human_accuracy({"units": [unit]}, {("v1", "k"): {"answer": 3},
                                             ("v2", "k"): {"answer": 0}})
    assert acc[("t", 2, "minimal", "confusion")] == {"v1": (1, 1), "v2": (0, 1)}


def test_likert_ratings_against_the_t2i_metrics(run, tmp_path):
    """Table 16's human side: ratings recorded with the yes / no answer (1-5 only), then
    Spearman and Kendall between the mean rating of a unit and each metric of its image,
    as scipy gives them."""
    from scipy.stats import kendalltau, spearmanr

    s = load_or_draw(run, "validate", 3, 0)
    review = Review(run.dir, s, Judgments(run.dir / "review" / "judgments.jsonl"))
    with pytest.raises(AutocompError, match="rating 6"):
        review.judge("alice", 0, "yes", 6)
    out = tmp_path / "t2i"
    res = CliRunner().invoke(main, ["t2i", str(run.dir), "-g", "run", "-o", str(out)])
    assert res.exit_code == 0, res.output
    scores = {}
    for line in (out / "run" / "scores.jsonl").read_text().splitlines():
        r = json.loads(line)
        scores[str(Path(r["image"]).resolve())] = r
    mine = {}
    for i, u in enumerate(s["units"]):
        r = scores[str((run.dir / u["image"]).resolve())]
        rating = 1 + round(4 * r["true_share"]) if i % 3 else 1 + i % 5  # some noise
        review.judge("alice", i, "yes" if rating > 3 else "no", rating)
        review.judge("bob", i, "yes", min(5, rating + 1))
        mine[u["key"]] = (rating + min(5, rating + 1)) / 2, r
    # a hand-edited judgments file: ratings off the scale are left out and counted, never
    # averaged in (issue 53)
    with open(run.dir / "review" / "judgments.jsonl", "a", encoding="utf-8") as fh:
        for who, rating in (("carol", 9), ("dave", "5"), ("erin", 4.5)):
            fh.write(json.dumps({"mode": "validate", "sample": s["id"],
                                 "unit": s["units"][0]["key"], "annotator": who,
                                 "answer": "yes", "rating": rating}) + "\n")
    res = CliRunner().invoke(main, ["review", str(run.dir), "--report", "--t2i", str(out)])
    assert "3 rating(s) outside 1-5 in the judgments file left out." in res.output
    assert res.exit_code == 0, res.output
    assert "Human faithfulness ratings" in res.output
    row = next(ln for ln in res.output.splitlines() if ln.startswith("| TIFA |"))
    a, b = zip(*[(h, r["tifa"]) for h, r in mine.values()], strict=True)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == str(len(mine))
    assert cells[2] == f"{spearmanr(a, b).statistic:.3f}"
    assert cells[4] == f"{kendalltau(a, b).statistic:.3f}"


def test_report_cli_says_what_is_missing(run):
    res = CliRunner().invoke(main, ["review", str(run.dir), "--report"])
    assert res.exit_code != 0 and "no validate review yet" in res.output


# -- the page in a real browser --------------------------------------------------------------
def _wait(driver, condition, timeout=15):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(condition)


def _progress(driver, text):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC

    _wait(driver, EC.text_to_be_present_in_element((By.ID, "progress"), text))


@pytest.mark.slow
def test_page_in_chromium_validate_mode(run, serve, browser, tmp_path):
    """Two annotators judge by clicking (and by key); a reload resumes; the report agrees
    with what was clicked."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC

    srv = serve(run, "validate", per_cell=1)
    units = srv.sample["units"]
    browser.get(srv.url + "/")
    browser.find_element(By.ID, "annotator").send_keys("alice")
    browser.find_element(By.ID, "start").click()
    _wait(browser, EC.visibility_of_element_located((By.ID, "yes")))
    _progress(browser, f"alice: 0 / {len(units)} judged")
    shown = browser.find_element(By.ID, "image")
    _wait(browser, lambda d: d.execute_script("return arguments[0].naturalWidth", shown) > 0)
    assert browser.find_element(By.ID, "caption").text == units[0]["caption"]
    crit = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#criteria li")]
    assert crit == units[0]["criteria"]
    clicked = {}
    for i, u in enumerate(units[:3]):  # alice: the validator's verdict, except on unit 1
        say = "yes" if u["auto"] != (i == 1) else "no"
        if i == 0:  # a Likert rating picked first goes with the answer
            browser.find_elements(By.CSS_SELECTOR, "#ratings button")[3].click()
        browser.find_element(By.ID, say).click()
        clicked[u["key"]] = say
        _progress(browser, f"alice: {i + 1} / ")
    browser.refresh()  # resumes at the fourth unit
    _progress(browser, f"alice: 3 / {len(units)} judged")
    assert browser.find_element(By.ID, "caption").text == units[3]["caption"]
    browser.find_element(By.TAG_NAME, "body").send_keys("y")  # the keyboard works too
    _progress(browser, "alice: 4 / ")
    browser.save_screenshot(str(tmp_path / "validate.png"))
    assert (tmp_path / "validate.png").stat().st_size > 5000
    # back to unit 3: its answer is shown; answering again changes it, progress stays
    browser.find_element(By.ID, "back").click()
    _wait(browser, EC.text_to_be_present_in_element((By.ID, "caption"), units[3]["caption"]))
    assert "answered this one already" in browser.find_element(By.ID, "answered").text
    assert "chosen" in browser.find_element(By.ID, "yes").get_attribute("class")
    browser.find_element(By.ID, "no").click()
    _wait(browser, EC.text_to_be_present_in_element((By.ID, "caption"), units[4]["caption"]))
    _progress(browser, "alice: 4 / ")
    # a second annotator, by name in the address, starts at the first unit
    browser.get(srv.url + "/?annotator=bob")
    _progress(browser, f"bob: 0 / {len(units)} judged")
    browser.find_element(By.ID, "yes" if units[0]["auto"] else "no").click()
    _progress(browser, "bob: 1 / ")
    recs = [json.loads(x) for x in srv.judgments.path.read_text().splitlines()]
    assert [(r["annotator"], r["unit"], r["answer"]) for r in recs[:3]] == \
        [("alice", k, v) for k, v in clicked.items()]
    assert recs[0]["rating"] == 4 and "rating" not in recs[1]
    assert len(recs) == 6 and recs[3]["answer"] == "yes" and recs[5]["annotator"] == "bob"
    assert (recs[4]["unit"], recs[4]["answer"]) == (units[3]["key"], "no")  # appended
    res = CliRunner().invoke(main, ["review", str(run.dir), "--report"])
    assert res.exit_code == 0, res.output
    assert "Table 10 (left)" in res.output and "5 judgments by 2 annotator(s)" in res.output
    agree = sum((clicked.get(u["key"]) == "yes") == u["auto"] for u in units[:3])
    c = concordance(srv.sample, srv.judgments.latest("validate", srv.sample["id"]))
    assert c["all"]["annotators"]["alice"]["agreement"] == pytest.approx(
        100 * (agree + (units[3]["auto"] is False)) / 4)  # the changed answer counts


@pytest.mark.slow
def test_page_in_chromium_test_mode(run, serve, browser):
    """Answer Swap and Confusion items by clicking options: right ones and a wrong one;
    Table 10 (right) and Table 17 count them."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC

    srv = serve(run, "test", per_cell=1)
    units = srv.sample["units"]
    browser.get(srv.url + "/?annotator=carol")
    wrong = 2
    for i, u in enumerate(units[:5]):
        _wait(browser, EC.visibility_of_element_located((By.CSS_SELECTOR, "button.option")))
        buttons = browser.find_elements(By.CSS_SELECTOR, "button.option")
        assert [b.find_element(By.CLASS_NAME, "text").text for b in buttons] == u["options"]
        labels = [b.find_element(By.CLASS_NAME, "label").text for b in buttons]
        assert labels[0] == "A" and len(labels) == len(u["options"]) <= MAX_OPTIONS
        pick = u["answer"] if i != wrong else (u["answer"] + 1) % len(u["options"])
        browser.execute_script("arguments[0].scrollIntoView()", buttons[pick])
        buttons[pick].click()
        _progress(browser, f"carol: {i + 1} / ")
    recs = [json.loads(x) for x in srv.judgments.path.read_text().splitlines()]
    assert [r["correct"] for r in recs] == [True, True, False, True, True]
    u = units[wrong]
    assert recs[wrong]["chosen"] == u["options"][(u["answer"] + 1) % len(u["options"])]
    res = CliRunner().invoke(main, ["review", str(run.dir), "--mode", "test", "--report"])
    assert res.exit_code == 0, res.output
    assert "Table 10 (right)" in res.output and "Table 17" in res.output
    row = next(line for line in res.output.splitlines()
               if line.startswith(f"| {u['task']} | {u['n']} | "
                                  f"{'Min' if u['track'] == 'minimal' else 'Ctx'} |"))
    assert "0/1" in row


def test_cli_serves_on_loopback_by_default():
    from autocomp.cli.review import review

    host = next(p for p in review.params if p.name == "host")
    assert host.default == "127.0.0.1"


def test_page_ships_in_the_package():
    from autocomp.review.server import page

    html = page().decode()
    assert 'id="yes"' in html and "/api/judge" in html
    assert Path(__file__).parent.parent.joinpath("autocomp/review/page.html").is_file()


def test_sample_refuses_a_run_with_nothing_to_review(run):
    shutil.rmtree(run.dir / "bench")  # the test's own copy (the `run` fixture)
    with pytest.raises(AutocompError, match="no benchmark"):
        load_or_draw(run, "test", 2, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_or_draw(run, "validate", 1, 0)["units"]  # validation records remain


def test_an_image_record_naming_an_svg_with_a_script_is_not_served(run, serve, tmp_path):
    """Issue 68: an image record pointing at an .svg with a script was served as
    image/svg+xml with no Content-Security-Policy; opened as its own URL it ran and posted
    a forged judgment. Only raster images decoded here are served, as PNG, and every
    response carries nosniff and a policy that runs nothing but the page's own script."""
    import shutil
    import urllib.request

    srv = serve(run, "test")
    svg = run.dir / "images" / "evil.svg"
    svg.write_text('<svg xmlns="http://www.w3.org/2000/svg"><script>fetch("/api/judge", '
                   '{method: "POST"})</script></svg>')
    fake = run.dir / "images" / "page.png"  # HTML named as an image
    fake.write_text("<html><script>alert(1)</script></html>")
    try:
        for name in ("images/evil.svg", "images/page.png"):
            srv.review.units[0] = {**srv.review.units[0], "image": name}
            code, body = srv.get("/image/0")
            assert code == 415 and body == b"not a raster image"
        for path in ("/", "/api/state?annotator=alice", "/image/1"):
            with urllib.request.urlopen(srv.url + path) as resp:
                policy = resp.headers["Content-Security-Policy"]
                assert resp.headers["X-Content-Type-Options"] == "nosniff"
                assert "default-src 'none'" in policy
                if path == "/":
                    assert "connect-src 'self'" in policy
                else:
                    assert "sandbox" in policy and "script-src" not in policy
                    assert resp.headers["Content-Type"] in ("application/json", "image/png")
        assert not (run.dir / "review" / "judgments.jsonl").exists() or \
            "evil" not in (run.dir / "review" / "judgments.jsonl").read_text()
        for method in ("PUT", "DELETE", "OPTIONS"):  # the library's own error pages too
            req = urllib.request.Request(srv.url + "/api/judge", method=method)
            try:
                urllib.request.urlopen(req)
            except urllib.error.HTTPError as exc:
                assert exc.code == 501 and exc.headers["X-Content-Type-Options"] == "nosniff"
                assert "sandbox" in exc.headers["Content-Security-Policy"]
                assert exc.headers["Content-Type"].startswith("text/plain")
            else:
                raise AssertionError(f"{method} answered")
    finally:
        svg.unlink()
        fake.unlink()
        shutil.rmtree(tmp_path / "unused", ignore_errors=True)


def test_review_on_a_run_it_cannot_write_to_names_the_option(tmp_path, monkeypatch):
    from autocomp.review.sample import load_or_draw
    from autocomp.run import Run

    run = shape_color_run(tmp_path)
    (run.dir / "review").write_text("a file where the review folder goes")
    out = CliRunner().invoke(main, ["review", str(run.dir), "--port", "0"])
    assert out.exit_code == 1 and "Traceback" not in out.output
    assert "cannot write the review folder" in out.output
    assert "pass --review-dir DIR" in out.output
    import tempfile

    real = tempfile.TemporaryFile
    ro_dir = tmp_path / "read-only-mount"  # root writes anywhere: simulate the mount
    ro_dir.mkdir()

    def refused(*args, dir=None, **kw):
        if str(dir) == str(ro_dir):
            raise PermissionError(13, "Permission denied")
        return real(*args, dir=dir, **kw)

    monkeypatch.setattr(tempfile, "TemporaryFile", refused)
    ro = CliRunner().invoke(main, ["review", str(run.dir), "--review-dir", str(ro_dir)])
    assert ro.exit_code == 1 and "(permission denied)" in ro.output, ro.output
    assert "--review-dir" not in ro.output  # the user's own folder: no option to suggest
    elsewhere = tmp_path / "mine"
    sample = load_or_draw(Run.open(run.dir), "validate", 2, 0, elsewhere)
    assert (elsewhere / "validate.sample.json").is_file() and sample["units"]
    rep = CliRunner().invoke(main, ["review", str(run.dir), "--review-dir", str(elsewhere),
                                    "--report"])
    assert rep.exit_code == 1 and "no validate judgments on this run's sample" in rep.output
