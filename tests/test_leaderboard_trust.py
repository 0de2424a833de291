"""Issue 67: a leaderboard that cannot mislead. Each adversarial case is one line on the
command's output and nothing wrong on the page."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from autocomp.cli import main

SWAP, CONF = "shape_color-n2/minimal-swap", "shape_color-n2/minimal-confusion"


def made(tmp_path, ties="strict"):
    """Hand-made results of two models and two blind scorers on two benchmarks."""
    from conftest import write_result

    folder = tmp_path / "results"
    for model, right in (("m:a", 60), ("m:b", 45), ("blind:length", 0), ("blind:unigram", 3)):
        for bench in (SWAP, CONF):
            write_result(folder, model, bench, right, 78, format="run", task="shape_color",
                         n=2, track="minimal", ties=ties, kind=bench.rsplit("-", 1)[1])
    return folder


def site(folder, tmp_path, *more, name="site"):
    got = CliRunner().invoke(main, ["leaderboard", *map(str, folder), "-o",
                                    str(tmp_path / name), *more])
    data = None
    if got.exit_code == 0:
        data = json.loads((tmp_path / name / "leaderboard.json").read_text(),
                          parse_constant=lambda c: pytest.fail(f"{c} in leaderboard.json"))
    return got, data


def row(data, model, kind="Swap"):
    section = next(s for s in data["sections"] if s["title"].startswith(kind))
    return next(r for r in section["rows"] if r["model"] == model)


def test_mixed_tie_rules_are_refused_in_one_line_and_ties_picks_one(tmp_path):
    strict = made(tmp_path / "s")
    aware = made(tmp_path / "a", ties="aware")
    got, _ = site([strict, aware], tmp_path)
    assert got.exit_code != 0
    assert got.output.strip().splitlines()[-1].endswith(
        "results under 2 tie rules (aware: 8, strict: 8): a page holds one; pick it with "
        "--ties (the others are left out)")
    got, data = site([strict, aware], tmp_path, "--ties", "aware")
    assert got.exit_code == 0, got.output
    assert got.output.count("scored under ties strict; this page is under aware") == 8
    assert data["ties"] == "aware" and all("ties: tie-aware" in s["title"]
                                           for s in data["sections"])


def test_a_backup_copy_and_a_tampered_duplicate_are_left_out_not_summed(tmp_path):
    """An innocent backup doubled n; a tampered duplicate (ties: aware) moved a Swap score.
    A file not named as eval names it is not read; a well-named second file for the same
    cell (a whole results folder copied inside) is named beside the one read."""
    from autocomp.eval.cells import result_file

    folder = made(tmp_path)
    canon = result_file(folder, "blind:length", SWAP)
    got, before = site([folder], tmp_path, name="before")
    shutil.copytree(canon.parent, canon.parent.with_name(canon.parent.name + ".bak"))
    tampered = folder / "elsewhere" / canon.name
    tampered.parent.mkdir()
    data = json.loads(canon.read_text())
    data.update(ties="aware")
    tampered.write_text(json.dumps(data))
    shutil.copy(canon.with_suffix(".predictions.jsonl"),
                tampered.with_suffix(".predictions.jsonl"))
    inner = folder / "old" / canon.parent.name
    shutil.copytree(canon.parent, inner)  # a copy of the results inside them
    got, after = site([folder], tmp_path)
    assert got.exit_code == 0, got.output
    lines = [ln for ln in got.output.splitlines() if ln.startswith("left out:")]
    assert len(lines) == 3 + 2  # the backup's 2, the tampered one, the inner copy's 2
    named = f"(blind_length-{canon.parent.name.split('-')[-1]}/{canon.name})"
    assert sum("not named as eval names 'blind:length'" in ln and named in ln
               for ln in lines) == 2  # the backup's Swap, the tampered one
    assert sum(f"a second file for 'blind:length' on '{SWAP}' (read: "
               f"{canon.relative_to(folder)})" in ln for ln in lines) == 1
    assert row(after, "blind:length")["cells"]["All"] == row(before, "blind:length")["cells"][
        "All"] and row(after, "blind:length")["cells"]["All"]["n"] == 78
    got = CliRunner().invoke(main, ["results", "check", str(folder)])
    assert got.exit_code == 1 and "5 of 13 results fail the results schema" in got.output


def test_a_file_borrowing_another_models_predictions_shows_nothing(tmp_path):
    """A result claiming a new model with `spec` set to the oracle's: the reader takes the
    predictions beside the file it read (none here) and never a spec from a file."""
    from autocomp.eval.cells import result_file

    folder = made(tmp_path)
    source = json.loads(result_file(folder, "m:a", SWAP).read_text())
    fake = result_file(folder, "evil:new", SWAP)
    fake.parent.mkdir(parents=True)
    fake.write_text(json.dumps({**source, "model": "evil:new", "spec": "m:a",
                                "metrics": {**source["metrics"], "accuracy": 100.0}}))
    got, data = site([folder], tmp_path)
    assert got.exit_code == 0, got.output
    assert "left out: evil:new on shape_color-n2/minimal-swap: predictions" in got.output
    assert not any(r["model"] == "evil:new" for s in data["sections"] for r in s["rows"])


@pytest.mark.parametrize("damage", ["nan credit", "abc credit", "chance 1e308"])
def test_a_damaged_number_is_one_line_and_nothing_on_the_page(tmp_path, damage):
    from autocomp.eval.cells import result_file

    folder = made(tmp_path)
    path = result_file(folder, "m:a", SWAP)
    if damage == "chance 1e308":
        data = json.loads(path.read_text())
        data["chance"] = 1e308
        path.write_text(json.dumps(data))
    else:
        pred = path.with_suffix(".predictions.jsonl")
        rows = [json.loads(line) for line in pred.read_text().splitlines()]
        rows[0]["tie_credit"] = float("nan") if damage == "nan credit" else "abc"
        pred.write_text("".join(json.dumps(r) + "\n" for r in rows))
    got, data = site([folder], tmp_path)  # parse_constant fails on NaN / Infinity
    assert got.exit_code == 0, got.output
    assert got.output.count("left out:") == 1 and "m:a on shape_color-n2/minimal-swap" in \
        got.output
    assert len(data["sections"]) == 2
    assert not any(r["model"] == "m:a" for r in next(
        s for s in data["sections"] if s["title"].startswith("Swap"))["rows"])


def test_all_pools_only_benchmarks_every_ranked_model_has_and_ranks_share(tmp_path):
    from conftest import write_result

    folder = made(tmp_path)
    other = "shape_color-n3/minimal-swap"
    write_result(folder, "m:a", other, 70, 78, format="run", task="shape_color", n=3,
                 track="minimal", kind="swap")
    got, data = site([folder], tmp_path)
    assert got.exit_code == 0, got.output
    swap = next(s for s in data["sections"] if s["title"].startswith("Swap"))
    assert swap["all_benchmarks"] == {"pooled": 1, "of": 2, "left_out": [other]}
    a, b = row(data, "m:a"), row(data, "m:b")
    assert a["cells"]["All"]["n"] == b["cells"]["All"]["n"] == 78
    assert a["cells"]["N=3"]["n"] == 78 and b["cells"]["N=3"] is None
    # 60/78 against 45/78: the intervals overlap, so both rank 1; baselines are not ranked
    assert a["cells"]["All"]["interval"][0] < b["cells"]["All"]["interval"][1]
    assert (a["rank"], b["rank"], row(data, "blind:length")["rank"]) == (1, 1, None)
    assert a["vs_chance"]["value"] == pytest.approx(100 * 60 / 78 - 50, abs=0.01)


def test_a_hand_written_sidecar_earns_no_mark(tmp_path):
    """A .verified.json with the right digests, written by hand: claimed, never ✓."""
    from autocomp.eval.cells import result_file
    from autocomp.eval.verify import _digest, predictions, sidecar

    folder = made(tmp_path)
    path = result_file(folder, "m:b", SWAP)
    sidecar(path).write_text(json.dumps({
        "verified": True, "items": 20, "of": 78, "result_sha256": _digest(path),
        "predictions_sha256": _digest(predictions(path))}))
    got, data = site([folder], tmp_path)
    assert got.exit_code == 0, got.output
    assert "1 result(s) carry a verification record from elsewhere: not marked" in got.output
    assert row(data, "m:b")["verified"] is None and row(data, "m:b")["claimed"] == "20/78"


@pytest.fixture(scope="module")
def clips_scored(demo_run, tiny_clips, tmp_path_factory):
    """Two seeded tiny random CLIPs and the baselines on the demo's N = 2 minimal
    shape_color benchmarks, under strict and under tie-aware credit."""
    from autocomp import api

    root = tmp_path_factory.mktemp("clips")
    specs = [f"open_clip:local-dir:{w}" for w in tiny_clips[:2]]
    specs += ["reference:random", "blind:length", "blind:unigram", "blind:distinct"]
    out = {}
    for rule in ("strict", "aware"):
        out[rule] = root / rule
        api.evaluate(demo_run, specs, out[rule], "shape_color-n2/minimal-*", ties=rule,
                     cache_dir=root / "cache")
    return out, specs[:2]


@pytest.mark.slow
@pytest.mark.parametrize("rule", ["strict", "aware"])
def test_random_clips_do_not_beat_the_blind_scorers(clips_scored, tmp_path, rule):
    """The issue's critical case: "vs blind" taken against the blind scorers' strict
    accuracy (~0: a text-only scorer ties every swap) showed a random CLIP at +33.5. Both
    under one rule (tie-aware by default), its interval covers 0."""
    from autocomp.report.board_site import public

    folders, clips = clips_scored
    got, data = site([folders[rule]], tmp_path)
    assert got.exit_code == 0, got.output
    swap = next(s for s in data["sections"] if s["title"].startswith("Swap"))
    assert f"ties: {'strict' if rule == 'strict' else 'tie-aware'}" in swap["title"]
    rows = [r for r in swap["rows"] if r["model"].startswith(public(clips[0]).rsplit("/")[0])]
    assert len(rows) == 2
    for r in rows:
        low, high = r["vs_blind"]["interval"]
        assert low <= 0 <= high and r["vs_blind"]["ties"] == "aware", r
        low, high = r["vs_chance"]["interval"]
        assert low <= 0 <= high, r


@pytest.mark.slow
def test_a_result_forged_on_half_its_items_fails_a_fresh_sample_of_20(clips_scored, tmp_path):
    """Forged consistently (predictions and accuracy agree, so `results check` passes) on
    every other item: a fresh sample of 20 catches it but with probability 0.5^20."""
    from autocomp.eval.cells import result_file

    folders, _ = clips_scored
    folder = shutil.copytree(folders["strict"], tmp_path / "results")
    path = result_file(folder, "reference:random", SWAP)
    pred = path.with_suffix(".predictions.jsonl")
    rows = [json.loads(line) for line in pred.read_text().splitlines()]
    for k, r in enumerate(sorted(rows, key=lambda r: r["id"])):
        if k % 2 == 0 and not r["correct"]:
            r.update(correct=True, correct_argmax=True, tie_credit=1.0, rank=1,
                     positive_score=r["best_negative_score"] + 1.0)
    pred.write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = json.loads(path.read_text())
    data["metrics"]["accuracy"] = 100.0 * sum(r["correct"] for r in rows) / len(rows)
    path.write_text(json.dumps(data))
    assert CliRunner().invoke(main, ["results", "check", str(folder)]).exit_code == 0
    got, board = site([folder], tmp_path, "--verify", "20")
    assert got.exit_code == 0, got.output
    forged = row(board, "reference:random")
    assert forged["verified"] is None and forged["claimed"] is None
    assert row(board, "blind:length")["verified"] == "20/78"


from autocomp.eval.scorers.base import ItemScorer, TextScorer  # noqa: E402


class FewestWords(TextScorer):
    """The docs' plugin example: a text scorer, blind by itself."""

    family = "fewest"
    light = True

    def score_texts(self, texts):
        import numpy as np

        return np.array([[-len(set(t.split()))] for t in texts], dtype=np.float32)


class Declared(ItemScorer):
    """An item scorer that declares itself a check of the harness."""

    family = "declared"
    light = True
    baseline = "reference"

    def score_item(self, item, candidates, truth):
        return [1.0 if t else 0.0 for t in truth]


def test_a_plugin_scorer_declares_itself_a_baseline(demo_run, tmp_path, registered):
    from autocomp import api

    registered("scorer", "fewest", "test_leaderboard_trust:FewestWords")
    registered("scorer", "declared", "test_leaderboard_trust:Declared")
    got = api.evaluate(demo_run, ["fewest:words", "declared:x"], tmp_path / "r",
                       "shape_color-n2/minimal-swap")
    assert {r["model"]: r["baseline"] for r in got} == {"fewest:words": "blind",
                                                        "declared:x": "reference"}
    from autocomp.report.categories import baseline_of

    assert baseline_of({"model": "blind:x"}) == "blind"  # results from before: by family
    assert baseline_of({"model": "hf:x", "baseline": None}) is None
