"""How the ranks of one launch meet between stages: through small files on the run's
filesystem, never through a collective that a slow rank would time out.

One launch shares a token (broadcast once, at start). Under `<run>/.sync/<token>/`:
  alive-<rank>           a counter a thread rewrites every few seconds while the rank lives
  <stage>.done-<rank>    the rank has finished its share of the stage
  <stage>.merging        created (exclusively) by the rank that merges: the last to finish
  <stage>.merged         the merged records are written; the next stage may start

So a rank that finishes the last stage exits at once (nobody waits on it) except rank 0,
which holds the launch's stage locks until the last stage is merged (core/locks.py: every
rank's writes are fenced by them) and then removes the launch's files; a slow rank is
never killed by a peer's timeout, and a rank that died (no heartbeat for `stall` seconds)
makes its peers stop with one line that says how to resume. Work is never lost: the part
files hold every finished batch, and a relaunch (any number of processes) shares the
unfinished items out again.

No rank trusts another host's clock, nor file times that an NFS attribute cache may serve
stale: a peer is alive while the counter in its alive file keeps changing, timed on this
rank's own monotonic clock (a file is read afresh on every open: close-to-open
consistency), so clocks skewed by hours between nodes change nothing.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path

from autocomp.core.errors import RetryLater

WAIT_TIMEOUT = 24 * 3600  # seconds a finished rank waits for its peers (a SLURM job's day)
STALL_TIMEOUT = 300  # seconds without a heartbeat after which a peer counts as dead
BEAT = 5.0  # seconds between heartbeats


class Peers:
    """The file rendezvous of one launch, seen from one rank."""

    def __init__(self, root: Path, token: str, rank: int, world: int,
                 wait_timeout: float = WAIT_TIMEOUT, stall: float = STALL_TIMEOUT,
                 beat: float = BEAT, poll: float = 0.25):
        self.dir = Path(root) / ".sync" / token
        self.rank, self.world = rank, world
        self.wait_timeout, self.stall, self.beat, self.poll = wait_timeout, stall, beat, poll
        self.dir.mkdir(parents=True, exist_ok=True)
        self._stop = threading.Event()
        self._parent = os.getppid()  # the launcher: when it dies, this rank stops too
        self._thread = threading.Thread(target=self._beat, daemon=True)
        self._beats = 0
        self._seen: dict[int, tuple[str | None, float]] = {}  # peer -> (counter, since)
        self._alive()
        self._thread.start()

    def close(self, last: bool = False) -> None:
        """Stop the heartbeat; `last`: this rank merged the launch's last stage, so every
        other rank is done with the launch's files, which go."""
        self._stop.set()
        if last:
            import shutil

            shutil.rmtree(self.dir, ignore_errors=True)

    def clean_others(self) -> int:
        """Remove the folders of earlier launches (a killed launch leaves its own behind);
        only the launch holding the run's stage locks calls this. Returns how many."""
        import shutil

        gone = 0
        for other in self.dir.parent.iterdir():
            if other != self.dir and other.is_dir() and not other.is_symlink():
                shutil.rmtree(other, ignore_errors=True)
                gone += 1
        return gone

    def _beat(self) -> None:
        while not self._stop.wait(self.beat):
            if os.getppid() != self._parent:
                self._orphaned()
            try:
                self._alive()
            except OSError:  # the launch's folder went: nothing left to signal
                return

    def _orphaned(self) -> None:
        """The launcher was killed (its workers live in their own sessions and outlive
        it): stop now rather than work beside the relaunch. A torn last line of a part
        file is cut when it is next opened; images are written by rename."""
        import sys

        try:  # stderr may be a pipe to the dead launcher
            sys.stderr.write(f"autocomp: rank {self.rank}: the launcher is gone; stopping "
                             "(re-run the same command to resume)\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        finally:
            os._exit(70)

    def _touch(self, name: str) -> None:
        from autocomp.core.own_files import mark

        mark(self.dir / name)  # a marker: only whether it exists is ever read

    def _alive(self) -> None:
        """The next value of this rank's counter, written whole (temp file + rename)."""
        self._beats += 1
        from autocomp.core.records import write_text

        write_text(self.dir / f"alive-{self.rank}", f"{self._beats}\n", sync=False)

    def _counter(self, rank: int) -> str | None:
        try:
            return (self.dir / f"alive-{rank}").read_text()
        except FileNotFoundError:
            return None

    # -- a stage -----------------------------------------------------------------------
    def finished(self, stage: str) -> None:
        self._touch(f"{stage}.done-{self.rank}")

    def all_finished(self, stage: str) -> bool:
        return all((self.dir / f"{stage}.done-{r}").exists() for r in range(self.world))

    def claim_merge(self, stage: str) -> bool:
        """True for exactly one rank (the first to ask once every rank has finished)."""
        if not self.all_finished(stage):
            return False
        try:
            fd = os.open(self.dir / f"{stage}.merging", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except OSError:  # claimed already (or merged and cleaned up)
            return False
        os.write(fd, str(self.rank).encode())
        os.close(fd)
        return True

    def merged(self, stage: str) -> None:
        self._touch(f"{stage}.merged")

    def wait_merged(self, stage: str, claim: bool = True) -> bool:
        """Until some rank has merged `stage`; True when this rank is to merge it after all
        (`claim`: every rank finished and none claimed it). A dead peer or the wait timeout
        is one line."""
        start = time.monotonic()
        while not (self.dir / f"{stage}.merged").exists():
            if claim and self.claim_merge(stage):
                return True
            self._check(stage, time.monotonic() - start)
            time.sleep(self.poll)
        return False

    def wait_all(self, stage: str) -> None:
        """Until every rank has finished `stage` (nobody merges); a dead peer or the wait
        timeout is one line."""
        start = time.monotonic()
        while not self.all_finished(stage):
            self._check(stage, time.monotonic() - start)
            time.sleep(self.poll)

    def _check(self, stage: str, waited: float) -> None:
        if waited > self.wait_timeout:  # a peer that lives but never finishes: a relaunch
            raise RetryLater(                #  shares its items out again (exit 75)
                f"stage {stage}: ranks {self._pending(stage)} did not finish within "
                f"wait_timeout ({self.wait_timeout:.0f} s); every finished batch is kept: "
                "re-run the same command (any number of processes) to go on",
                file=self.dir.parent.parent)
        dead = self._dead(stage)
        if dead:  # stalled (an NFS hiccup, a hung GPU) or gone: retry later (exit 75)
            raise RetryLater(
                f"stage {stage}: rank(s) {', '.join(map(str, dead))} stopped (no "
                f"heartbeat for {self.stall:.0f} s) before finishing their share; every "
                "finished batch is kept: re-run the same command (any number of "
                "processes) and the unfinished items are shared out again",
                file=self.dir.parent.parent)

    def _pending(self, stage: str) -> list[int]:
        return [r for r in range(self.world) if not (self.dir / f"{stage}.done-{r}").exists()]

    def _dead(self, stage: str) -> list[int]:
        """Peers that have not finished `stage` (or are merging it) and whose counter has
        not changed for `stall` seconds of this rank's clock (a peer that never wrote one
        counts from when this rank first looked)."""
        now = time.monotonic()
        suspects = self._pending(stage)
        with contextlib.suppress(FileNotFoundError, ValueError):
            suspects.append(int((self.dir / f"{stage}.merging").read_text() or -1))
        out = []
        for r in sorted(set(suspects) - {-1, self.rank}):
            value = self._counter(r)
            last = self._seen.get(r)
            if last is None or last[0] != value:
                self._seen[r] = (value, now)
            elif now - last[1] > self.stall:
                out.append(r)
        return out
