"""eval/cache.py: the embedding cache of a run: shards written by several processes at once,
a damaged shard or a full disk never read as vectors, a result folder per cell."""

import errno
import json
import os
import sys

import pytest
from click.testing import CliRunner
from conftest import shape_color_run

from autocomp.cli import main


def test_disk_full_says_disk_full_and_keeps_the_cache_whole(tmp_path, monkeypatch):

    run = shape_color_run(tmp_path)
    real = os.fsync
    calls = {"n": 0}

    def full(fd):
        calls["n"] += 1
        if calls["n"] > 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd)
    monkeypatch.setattr("autocomp.eval.cache.os.fsync", full)
    out = CliRunner().invoke(main, ["eval", str(run.dir), "--model", "blind:distinct"])
    assert out.exit_code == 83  # disk full (core/errors.py, issue 66)
    assert "disk full (No space left on device)" in out.output
    assert "Traceback" not in out.output and "damaged" not in out.output
    monkeypatch.setattr("autocomp.eval.cache.os.fsync", real)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "unreadable" shard: it was cut back whole
        again = CliRunner().invoke(main, ["eval", str(run.dir), "--model", "blind:distinct"])
    assert again.exit_code == 0, again.output


def test_damaged_embedding_cache_warns_and_recomputes_only_what_it_lost(tmp_path):
    import numpy as np

    from autocomp.eval.cache import EmbeddingCache

    cache = EmbeddingCache(tmp_path, "blind:unigram")
    cache.put_many(["a", "b"], np.ones((2, 3)))
    cache.close()
    (cache.path / "other.vec").write_bytes(b"this is not a shard" * 100)
    with pytest.warns(UserWarning, match=r"other\.vec: unreadable from byte 0"):
        again = EmbeddingCache(tmp_path, "blind:unigram")
    assert again.missing(["a", "b", "c"]) == ["c"]  # the good shard still serves

    run = shape_color_run(tmp_path)
    runner = CliRunner()
    ok = runner.invoke(main, ["eval", str(run.dir), "--model", "blind:unigram"])
    assert ok.exit_code == 0, ok.output
    results = {p: p.read_bytes() for p in sorted((run.dir / "results").rglob("*.json"))}
    for shard in (run.dir / "cache").rglob("*.vec"):
        data = shard.read_bytes()
        shard.write_bytes(data[:len(data) // 2] + b"garbage" * 50)  # torn and damaged
    out = runner.invoke(main, ["eval", str(run.dir), "--model", "blind:unigram"])
    assert out.exit_code == 0 and "Traceback" not in out.output
    after = {p: p.read_bytes() for p in sorted((run.dir / "results").rglob("*.json"))}
    assert [json.loads(after[p])["metrics"] for p in after] == \
        [json.loads(results[p])["metrics"] for p in results]


def test_ranks_on_several_nodes_share_one_cache_folder(tmp_path):
    """Processes write their own shards at once, with no lock; each reads the others'."""
    import subprocess

    code = ("import sys, numpy as np; from autocomp.eval.cache import EmbeddingCache as C; "
            "c = C(sys.argv[1], 's'); r = int(sys.argv[2]); "
            "[c.put_many([f'{r}-{i}-{j}' for j in range(10)], np.full((10, 8), r)) "
            "for i in range(50)]; c.close()")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path), str(r)])
             for r in range(4)]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    from autocomp.eval.cache import EmbeddingCache

    reader = EmbeddingCache(tmp_path, "s")
    keys = [f"{r}-{i}-{j}" for r in range(4) for i in range(50) for j in range(10)]
    assert reader.missing(keys) == [] and len(list(reader.path.glob("*.vec"))) == 4
    got = reader.get_many(keys)
    assert all(float(got[k][0]) == int(k.split("-")[0]) for k in keys)


def test_result_folders_are_one_to_one():
    from autocomp.eval.cache import folder_name, slug

    pairs = [("open_clip:local-dir:/w/ckpt v2", "open_clip:local-dir:/w/ckpt_v2"),
             ("hf:/org/m", "hf:org/m")]
    for a, b in pairs:
        assert slug(a) == slug(b) and folder_name(a) != folder_name(b)
    assert folder_name("reference:oracle") == folder_name("reference:oracle")


def test_a_damaged_cache_shard_is_never_read_as_vectors(tmp_path):
    """A shard cut inside a vector and padded with other bytes once gave that vector's
    frame garbage floats (a best negative scored 1.7e11); every frame now carries a CRC-32,
    so the damaged frame is not read, counted, and its vector computed again."""
    import numpy as np

    from autocomp.eval.cache import EmbeddingCache

    keys = [f"k{i:02d}" for i in range(20)]
    vectors = np.random.default_rng(0).standard_normal((20, 16)).astype(np.float32)
    cache = EmbeddingCache(tmp_path, "scorer")
    cache.put_many(keys, vectors)
    cache.close()
    shard = next(tmp_path.rglob("*.vec"))
    data = shard.read_bytes()
    frame = (len(data) - 7) // 20  # after the 7-byte magic, 20 frames of one size
    cut = 7 + 10 * frame + frame // 2  # inside frame 10's vector
    shard.write_bytes(data[:cut] + np.random.default_rng(1).bytes(len(data) - cut))
    with pytest.warns(UserWarning, match="unreadable from byte"):
        again = EmbeddingCache(tmp_path, "scorer")
    got = again.get_many(keys)
    assert again.damaged == 1 and sorted(got) == keys[:10]
    for key, vector in got.items():
        assert np.array_equal(vector, vectors[keys.index(key)])
    assert again.missing(keys) == keys[10:]  # computed again
    old = tmp_path / "old"
    shard_dir = EmbeddingCache(old, "scorer").path
    (shard_dir / "host-1-abc.vec").write_bytes(b"ACVEC1\n" + data[7:])  # before checksums
    with pytest.warns(UserWarning, match="written by an older autocomp"):
        assert EmbeddingCache(old, "scorer").missing(keys) == keys
