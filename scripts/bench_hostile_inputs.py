"""Issue 68's two measured numbers, before and after, in one run:

1. A silent chat server (accepts, never answers): how long a `vqascore:openai:` request
   waits and how many requests it sends, with the openai client's own retries (before:
   a timeout retried like an overload, max_retries times) and with autocomp's ChatClient
   (after: a timeout retried once). At the default 60 s timeout the issue saw 753 s.
2. A predictions file with one huge line: the peak memory (RSS, MB) of reading it as the
   readers did (`for line in fh` + json.loads) and as `results check` reads it now
   (own_files.bounded_lines: refused past 8 MiB), each in a fresh process.

    python scripts/bench_hostile_inputs.py [--timeout 1] [--line-mb 400]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


def silent_server() -> tuple[str, list]:
    """A TCP server that accepts every connection and never answers; (url, accepted)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    accepted: list = []

    def serve():
        while True:
            conn, _ = sock.accept()
            accepted.append(conn)  # held open, never answered

    threading.Thread(target=serve, daemon=True).start()
    return f"http://127.0.0.1:{sock.getsockname()[1]}/v1", accepted


def chat(timeout: float, retries: int) -> list[str]:
    import openai

    from autocomp.core.errors import AutocompError
    from autocomp.models.chat import ChatClient

    messages = [{"role": "user", "content": "Is there a red cube? Yes or no."}]
    rows = []
    for how in ("before", "after"):
        url, accepted = silent_server()
        start = time.monotonic()
        if how == "before":  # the openai client's own retries, as ChatClient used them
            client = openai.OpenAI(base_url=url, api_key="EMPTY", timeout=timeout,
                                   max_retries=retries)
            with contextlib.suppress(openai.APITimeoutError):
                client.chat.completions.create(model="m", messages=messages)
        else:
            with contextlib.suppress(AutocompError):
                ChatClient("m", base_url=url, timeout=timeout,
                           max_retries=retries).complete(messages)
        seconds = time.monotonic() - start
        rows.append((how, seconds, len(accepted)))
    (_, before, n_before), (_, after, n_after) = rows
    return [f"silent server, timeout {timeout:g} s, max_retries {retries}: before "
            f"{before:.1f} s and {n_before} requests; after {after:.1f} s and {n_after} "
            f"requests ({before / after:.1f}x shorter); at 60 s: about "
            f"{60 * n_before:.0f} s + backoff before, {60 * n_after:.0f} s + backoff after"]


READ = {
    "before": "import json, sys\n"
              "with open(sys.argv[1], encoding='utf-8') as fh:\n"
              "    n = sum(1 for line in fh if json.loads(line))\n",
    "after": "import sys\n"
             "from autocomp.eval.schema import prediction_problems\n"
             "result = __import__('pathlib').Path(sys.argv[1].replace('.predictions.jsonl', "
             "'.json'))\n"
             "print(prediction_problems(result, "
             "{'n_items': 2, 'ties': 'strict', 'metrics': {'accuracy': 0.0}})[0][:90])\n",
}


def peak_mb(code: str, path: Path) -> tuple[float, str]:
    """(peak RSS in MB, last output line) of `code` run on `path` in a fresh process."""
    wrapper = (code + "import resource\n"
               "print('peak', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)\n")
    got = subprocess.run([sys.executable, "-c", wrapper, str(path)], capture_output=True,
                         text=True, check=True)
    lines = got.stdout.strip().splitlines()
    return float(lines[-1].split()[1]), (lines[0] if len(lines) > 1 else "")


def huge_line(line_mb: int) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        pred = Path(tmp) / "r.predictions.jsonl"
        with open(pred, "w", encoding="utf-8") as fh:
            fh.write('{"id": "a", "pad": "')
            block = "x" * (1 << 20)
            for _ in range(line_mb):
                fh.write(block)
            fh.write('", "positive_score": 1.0, "best_negative_score": 0.0}\n')
            fh.write(json.dumps({"id": "b", "positive_score": 1.0,
                                 "best_negative_score": 0.0}) + "\n")
        before, _ = peak_mb(READ["before"], pred)
        after, said = peak_mb(READ["after"], pred)
    return [f"one {line_mb} MB predictions line: peak RSS before {before:,.0f} MB (read whole), "
            f"after {after:,.0f} MB ({before / after:.1f}x less; refused: {said})"]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=1.0)
    parser.add_argument("--retries", type=int, default=5)
    parser.add_argument("--line-mb", type=int, default=400)
    args = parser.parse_args(argv)
    for line in chat(args.timeout, args.retries) + huge_line(args.line_mb):
        print(line, flush=True)


if __name__ == "__main__":
    main()
