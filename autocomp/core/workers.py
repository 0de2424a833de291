"""Work handed to a few threads, or done at once in the calling thread (threads = 0): the
same Future either way, so a caller reads results (and errors) one way. The pool starts on
the first submit."""

from __future__ import annotations

from concurrent.futures import Future


class Workers:
    def __init__(self, threads: int, name: str = "worker"):
        self.threads, self.name, self._pool = threads, name, None

    def submit(self, fn, *args) -> Future:
        """`fn(*args)` on a worker thread; with no threads, run now (an error is raised
        again where the result is read, as from a thread)."""
        if not self.threads:
            done: Future = Future()
            try:
                done.set_result(fn(*args))
            except Exception as exc:
                done.set_exception(exc)
            return done
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix=self.name)
        return self._pool.submit(fn, *args)

    def map(self, fn, values) -> list:
        """`fn` of each value, in order, spread over the threads."""
        return [f.result() for f in [self.submit(fn, v) for v in values]]

    def shutdown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
