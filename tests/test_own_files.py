"""core/own_files.py and the writers that use it: no write into a run, export, results,
review or cache folder follows a link or cuts a file autocomp did not create (issue 68).
Each test plants links (and hard links) where autocomp writes and checks that the file
they point to is untouched."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from autocomp.cli import main
from autocomp.core.errors import AutocompError

OUTSIDE = "someone else's file\n"


def _outside(tmp_path, name="outside.txt"):
    path = tmp_path / name
    path.write_text(OUTSIDE)
    return path


def test_temp_spill_and_marker_files_never_write_through_what_stands_at_their_name(tmp_path):
    """A predictable temp name (the heartbeat's, a failure record's, a spill file's) linked
    or hard-linked to another file: written through before, now unlinked and made anew."""
    from autocomp.core.own_files import create_new, mark
    from autocomp.core.records import write_text

    outside = _outside(tmp_path)
    for name, plant in (("soft", os.symlink), ("hard", os.link)):
        spot = tmp_path / f"{name}.tmp"
        plant(outside, spot)
        with create_new(spot) as fh:
            fh.write("ours\n")
        assert spot.read_text() == "ours\n" and not spot.is_symlink()
        assert outside.read_text() == OUTSIDE
    made_by_link = tmp_path / "made-by-a-link"
    (tmp_path / "marker").symlink_to(made_by_link)
    mark(tmp_path / "marker")
    assert not made_by_link.exists()
    (tmp_path / "result.json").symlink_to(outside)
    write_text(tmp_path / "result.json", "{}")
    assert not (tmp_path / "result.json").is_symlink() and outside.read_text() == OUTSIDE
    (tmp_path / "folder.tmp").mkdir()
    with pytest.raises(AutocompError, match="a directory stands where a file autocomp"):
        create_new(tmp_path / "folder.tmp")


def test_eval_replaces_links_in_its_results_folder_and_follows_none(demo_run, tmp_path):
    """Every file `autocomp eval` writes (result, predictions, summaries; the models file
    is read as the user's own) linked to an outside file beforehand: each is written as the
    folder's own file and the outside files keep their bytes."""
    from autocomp import api

    first = tmp_path / "first"
    api.evaluate(demo_run, ["blind:length"], first, "shape_color-n2/minimal-swap")
    written = sorted(p.relative_to(first) for p in first.rglob("*")
                     if p.is_file() and p.name != "models.yaml")
    assert len(written) == 3, written
    second = tmp_path / "second"
    outsides = []
    for k, rel in enumerate(written):
        outsides.append(_outside(tmp_path, f"outside-{k}.txt"))
        (second / rel).parent.mkdir(parents=True, exist_ok=True)
        (second / rel).symlink_to(outsides[-1])
    api.evaluate(demo_run, ["blind:length"], second, "shape_color-n2/minimal-swap")
    for rel, outside in zip(written, outsides, strict=True):
        assert outside.read_text() == OUTSIDE, rel
        assert not (second / rel).is_symlink(), rel
        assert (second / rel).read_bytes() == (first / rel).read_bytes() or \
            rel.suffix in (".json", ".jsonl"), rel  # times and paths differ
    result = next(second.rglob("*-swap-*.json"))
    assert json.loads(result.read_text())["n_items"] == 78


def test_the_embedding_cache_writes_through_no_link(tmp_path):
    import numpy as np

    from autocomp.eval.cache import EmbeddingCache

    cache = EmbeddingCache(tmp_path / "cache", "scorer:a")
    cache.close()
    label = cache.path / "scorer.txt"
    label.unlink()
    made_by_link = tmp_path / "made-by-a-link"
    label.symlink_to(made_by_link)  # dangling: writing through it would create it
    cache = EmbeddingCache(tmp_path / "cache", "scorer:a")
    cache.put_many(["k1"], np.ones((1, 4), dtype=np.float32))
    cache.close()
    assert not made_by_link.exists() and label.read_text() == "scorer:a\n"
    assert EmbeddingCache(tmp_path / "cache", "scorer:a").missing(["k1"]) == []


def test_judgments_are_never_appended_through_a_link(tmp_path):
    """review/judgments.jsonl linked to an outside file: the append (which repairs a torn
    tail by cutting it) refuses in one line; the outside file keeps its last line."""
    from autocomp.review.judgments import Judgments

    outside = _outside(tmp_path)
    outside.write_text("a whole line\nhalf a li")
    path = tmp_path / "review" / "judgments.jsonl"
    path.parent.mkdir()
    path.symlink_to(outside)
    judgments = Judgments(path)
    for call in (lambda: judgments.append({"unit": "u", "annotator": "a", "answer": 1}),
                 judgments.read):
        with pytest.raises(AutocompError, match="a symbolic link stands where the judgments "
                                                "file should be"):
            call()
    assert outside.read_text() == "a whole line\nhalf a li"
    path.unlink()
    os.mkfifo(path)
    with pytest.raises(AutocompError, match="a FIFO stands where the judgments file"):
        judgments.read()  # a FIFO there hung the report


def test_failure_records_and_figures_replace_a_link_not_its_target(tmp_path):
    from autocomp.core.errors import RetryLater
    from autocomp.report.figures import pyplot, save
    from autocomp.runtime import failures

    outside = _outside(tmp_path)
    run = tmp_path / "run"
    folder = run / failures.FOLDER
    folder.mkdir(parents=True)
    import socket

    planted = folder / f"{socket.gethostname()}-{os.getpid()}.json"
    planted.symlink_to(outside)
    assert failures.record(run, RetryLater("a peer stalled")) == 75
    assert outside.read_text() == OUTSIDE and json.loads(planted.read_text())["code"] == 75
    plt = pyplot()
    fig, _ = plt.subplots()
    stem = tmp_path / "figures" / "f"
    stem.parent.mkdir()
    for fmt in ("png", "pdf", "svg"):
        stem.with_suffix(f".{fmt}").symlink_to(outside)
    saved = save(fig, stem)
    assert len(saved) == 3 and outside.read_text() == OUTSIDE
    assert all(not p.is_symlink() and p.stat().st_size > 100 for p in saved)


def test_a_huge_predictions_line_is_refused_not_read_or_published(demo_run, tmp_path):
    """Issue 68: a 400 MB predictions line took 820 MB to read and was copied into the
    leaderboard site. Now `results check` names the line, the site leaves the result out
    (and copies nothing of it), and no reader takes more than LINE_LIMIT of a line."""

    from autocomp import api
    from autocomp.core import own_files
    from autocomp.eval.schema import check_file as check

    out = tmp_path / "res"
    api.evaluate(demo_run, ["blind:length"], out, "shape_color-n2/minimal-swap")
    result = next(out.rglob("*-swap-*.json"))
    pred = result.with_suffix(".predictions.jsonl")
    lines = pred.read_text().splitlines(keepends=True)
    huge = lines[0].replace('"id":', '"pad":"' + "x" * (own_files.LINE_LIMIT + 10) + '","id":', 1)
    pred.write_text(huge + "".join(lines[1:]))
    problems = check(result)
    assert len(problems) == 1 and "line 1 is over 8,388,608 characters" in problems[0]
    got = CliRunner().invoke(main, ["leaderboard", str(out), "-o", str(tmp_path / "site")])
    assert got.exit_code == 1 and "line 1 is over 8,388,608 characters" in got.output
    assert not list((tmp_path / "site").rglob("*.predictions.jsonl"))


def test_a_part_file_linked_outside_the_run_is_never_cut_nor_appended_to(tmp_path):
    """Issue 68: a part file linked to an outside file had its last line cut by the repair
    and 400 records appended; a dangling link created its target. One line naming the part
    file; the outside file untouched."""
    from autocomp.core.errors import AutocompError
    from autocomp.runtime.parts import PartWriter, part_path, read_part, repair

    stage = tmp_path / "run" / "captions"
    stage.mkdir(parents=True)
    outside = tmp_path / "outside.txt"
    outside.write_text("line one\nhalf a line")
    part = part_path(stage, 0)
    part.symlink_to(outside)
    for call in (lambda: repair(part), lambda: PartWriter(stage, 0),
                 lambda: list(read_part(part))):
        with pytest.raises(AutocompError, match="a symbolic link stands where a part file "
                                                "should be: autocomp writes through no link"):
            call()
    assert outside.read_text() == "line one\nhalf a line"
    part.unlink()
    part.symlink_to(tmp_path / "made-by-a-link")
    with pytest.raises(AutocompError):
        PartWriter(stage, 0)
    assert not (tmp_path / "made-by-a-link").exists()
    part.unlink()
    part.mkdir()
    with pytest.raises(AutocompError, match="a directory stands where a part file should be"):
        PartWriter(stage, 0)
