import json
import os
import shutil
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# a pytest-xdist worker per core (pyproject's addopts): each worker, and every process it
# starts, gets its share of the cores for the math libraries' threads (OpenMP, OpenBLAS,
# MKL), set before torch or numpy loads them. Unset, 2 workers ran 2 threads each on 2
# cores, whose OpenMP threads spin while they wait: the inner loop took 132.7 s, not 116.4
if os.environ.get("PYTEST_XDIST_WORKER"):
    _share = max(1, (os.cpu_count() or 1) // int(os.environ.get("PYTEST_XDIST_WORKER_COUNT",
                                                               "1")))
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, str(_share))
# tests/shims/ first, here and in every subprocess: wandb left out (1.1 s of every
# process importing open_clip, through timm; tests/shims/wandb.py says why)
SHIMS = str(Path(__file__).resolve().parent / "shims")
sys.path.insert(0, SHIMS)
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, (SHIMS, os.environ.get("PYTHONPATH"))))

import pytest  # noqa: E402

from autocomp.concepts.load import load_task  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def tasks():
    return {name: load_task(name) for name in ("color", "position", "shape_color",
                                                "relative_size")}


def hf_cached(repo: str) -> bool:
    """Whether the Hugging Face cache holds `repo` (nothing is downloaded)."""
    try:
        from huggingface_hub import snapshot_download

        snapshot_download(repo, local_files_only=True)
        return True
    except Exception:
        return False


def built_run(folder, config: str, name: str = "run"):
    """A run made from config text in `folder`, every stage of the embedded pipeline done."""
    from autocomp.config import load_config
    from autocomp.pipeline import run_pipeline
    from autocomp.run import Run

    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.yaml").write_text(config)
    r = Run.create(load_config(folder / f"{name}.yaml"), folder / name)
    run_pipeline(r, progress=False)
    return r


def scored_cell(tmp_path, model: str, rows: list[dict]) -> dict:
    """A report's result cell for `model` on shape_color-n2/minimal-swap whose run is gone,
    with `rows` as its predictions file."""
    import json

    from autocomp.eval.cells import result_file

    cell = {"model": model, "benchmark": "shape_color-n2/minimal-swap",
            "folder": str(tmp_path / "results"), "run": str(tmp_path / "gone"),
            "format": "run"}
    pred = result_file(tmp_path / "results", model, cell["benchmark"]).with_suffix(
        ".predictions.jsonl")
    pred.parent.mkdir(parents=True)
    pred.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return cell


def all_passed(run) -> None:
    """Every image counts as validated (stand-in images: this is about the items)."""
    from autocomp.core.records import write_jsonl

    write_jsonl(run.dir / "validation" / "merged.jsonl", [
        {"id": r["id"], "concept": r["concept"], "task": r["task"], "n": r["n"],
         "track": r["track"], "image": r["image"], "passed": True, "failed_at": None,
         "checks": []} for r in run.records("images")])


def shape_color_run(tmp_path, stages=("concepts", "captions", "images", "validation", "build"),
              concept=None):
    """A small shape_color run through `stages`; "validation" marks every image validated
    (stand-in: these tests are about damaged files, not faithfulness)."""
    from autocomp.config import parse_config
    from autocomp.pipeline import run_pipeline
    from autocomp.run import Run

    cfg = parse_config({"name": "r", "concepts": [concept or {"task": "shape_color",
                                                              "n": [2], "count": 3}],
                        "generate": {"options": {"size": 64}}})
    run = Run.create(cfg, tmp_path / "run")
    run_pipeline(run, stages=[s for s in stages if s not in ("validation", "build")],
                 progress=False)
    if "validation" in stages:
        all_passed(run)
    if "build" in stages:
        run_pipeline(run, stages=("build",), progress=False)
    return run


def read_only(monkeypatch, folder):
    """Writes under `folder` fail as on a read-only mount (root writes anywhere here)."""
    import builtins
    import errno
    import os

    real_open, real_os_open = builtins.open, os.open
    root = str(folder)

    def refuse(path):
        if os.path.abspath(str(path)).startswith(root):
            raise OSError(errno.EROFS, "Read-only file system", str(path))

    def fake_open(file, mode="r", *args, **kwargs):
        if isinstance(file, (str, os.PathLike)) and any(c in mode for c in "wax+"):
            refuse(file)
        return real_open(file, mode, *args, **kwargs)

    def fake_os_open(path, flags, *args, **kwargs):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            refuse(path)
        return real_os_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", fake_open)
    monkeypatch.setattr(os, "open", fake_os_open)


@pytest.mark.slow


def write_result(folder, model: str, bench: str, right: int, items: int,
                 **more) -> Path:
    """A result of `model` on `bench` as eval writes it (every field of the results schema),
    `right` of `items` right (items i0..i{items-1}; which ones drawn per model and benchmark,
    so no model's right items hold another's), with its predictions file."""
    import numpy as np

    from autocomp.eval.cells import result_file

    path = result_file(folder, model, bench)
    path.parent.mkdir(parents=True, exist_ok=True)
    fmt = more.pop("format", bench.split("/")[0])
    path.write_text(json.dumps({
        "benchmark": bench, "model": model, "format": fmt, "n_items": items, "ties": "strict",
        "metrics": {"accuracy": 100.0 * right / items,
                    "accuracy_tie_aware": 100.0 * right / items,
                    "chance": 50.0}, "chance": 50.0, "precision": "fp32",
        "benchmark_fingerprint": "f" * 32, "autocomp_version": "0.1.0",
        "weights": {"source": model, "kind": "rule"}, "seed": None, "prompt_template": None,
        "hardware": {"device": "cpu"},
        "task": None, "n": None, "track": None, "kind": bench.split("/")[-1], **more}))
    rng = np.random.default_rng(list((model + bench).encode()))
    hits = set(rng.permutation(items)[:right].tolist())
    path.with_suffix(".predictions.jsonl").write_text(
        "".join(json.dumps({"id": f"i{k}", "correct": k in hits}) + "\n" for k in range(items)))
    return path


def assert_file_error(load, tmp_path, body: str, needle: str) -> None:
    """Loading `body` from a file fails with one line naming the file and the problem."""
    from autocomp.core.errors import AutocompError

    path = tmp_path / "bad.yaml"
    path.write_text(body)
    with pytest.raises(AutocompError) as err:
        load(str(path))
    message = str(err.value)
    assert message.startswith(str(path)) and needle in message and "\n" not in message


def dead_pid(start: int = 2 ** 22) -> int:
    """A pid no process of this host has now (a killed writer's, for temp files and locks)."""
    pid = start
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        except PermissionError:
            pass
        pid += 1


def shared_folder(tmp_path_factory, name: str, build) -> Path:
    """A folder built once per test run, whatever the number of pytest-xdist workers: the
    first worker to ask calls `build(folder)` under a file lock, the others wait for it and
    reuse the result. A build that failed halfway is redone (no `.built` mark). Tests must
    treat the folder as read-only (copy it to change it)."""
    from filelock import FileLock

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the folder every worker of this run shares
    folder = root / f"shared-{name}"
    with FileLock(str(folder) + ".lock"):
        if not (folder / ".built").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            build(folder)
            (folder / ".built").touch()
    return folder


@pytest.fixture(scope="session")
def tiny_backends(tmp_path_factory):
    """Tiny random SD3, Gemma-3 (text and vision), GroundingDINO and SAM2, saved to folders
    (built once per test run)."""
    from tiny_models import tiny_backends as build

    def make(folder):
        made = {k: Path(v).relative_to(folder).as_posix() for k, v in build(folder).items()}
        (folder / "names.json").write_text(json.dumps(made))

    folder = shared_folder(tmp_path_factory, "tiny-backends", make)
    return {k: folder / v for k, v in json.loads((folder / "names.json").read_text()).items()}


@pytest.fixture(scope="session")
def tiny_clips(tmp_path_factory) -> list[Path]:
    """Four tiny random open_clip CLIPs (seeds 0-3), saved once per test run: their
    weights folders, for open_clip:local-dir: specs (read-only)."""
    from tiny_models import tiny_open_clip

    folder = shared_folder(tmp_path_factory, "tiny-clips",
                           lambda f: [tiny_open_clip(f / f"oc{s}", seed=s) for s in range(4)])
    return [folder / f"oc{s}" / "weights" for s in range(4)]


@pytest.fixture(scope="session")
def tiny_scorers(tmp_path_factory, tiny_clips) -> dict[str, Path]:
    """Tiny random scorer models, saved once per test run (read-only): an open_clip CLIP
    (its weights folder), a transformers CLIP and SigLIP, and a causal LM."""
    from tiny_models import tiny_causal_lm, tiny_hf_clip, tiny_hf_siglip

    builds = {"clip": tiny_hf_clip, "siglip": tiny_hf_siglip, "lm": tiny_causal_lm}
    folder = shared_folder(tmp_path_factory, "tiny-scorers",
                           lambda f: [build(f / k) for k, build in builds.items()])
    return {"open_clip": tiny_clips[0], **{k: folder / k for k in builds}}


def shipped_run(tmp_path_factory, name: str) -> Path:
    """`autocomp run configs/NAME.yaml --output runs/NAME`, done once per test run, its
    benchmarks read once (so the cache of their negatives is in every copy); the run
    folder is read-only (copy_run it to eval into it: eval caches vectors under the run)."""
    from click.testing import CliRunner

    from autocomp.cli import main

    def make(folder):
        from autocomp.formats.runs import find_benchmarks

        got = CliRunner().invoke(main, ["run", str(ROOT / "configs" / f"{name}.yaml"),
                                        "--output", str(folder / name), "--no-progress"])
        assert got.exit_code == 0, got.output
        for bench in find_benchmarks(folder / name):  # negatives enumerated once, for
            for _ in bench.items():                  # every copy (bench/expanded.py)
                pass

    return shared_folder(tmp_path_factory, name, make) / name


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory) -> Path:
    """configs/demo.yaml's run (README's first command), built once per test run."""
    return shipped_run(tmp_path_factory, "demo")


@pytest.fixture(scope="session")
def winoground_run(tmp_path_factory) -> Path:
    """configs/winoground.yaml's run (docs/formats.md), built once per test run."""
    return shipped_run(tmp_path_factory, "winoground")


def copy_run(run_dir: Path, dest: Path) -> Path:
    """A private copy of a shared run, to change as a test likes."""
    shutil.copytree(run_dir, dest, symlinks=True)
    return dest


@pytest.fixture
def fake_openai():
    from fake_openai import FakeServer

    server = FakeServer()
    yield server
    server.close()


def kill_after_records(cmd, stage_dir, at_least: int, env, timeout: float = 240) -> int:
    """Start `cmd` in its own process group, SIGKILL the group once the stage's part files
    hold `at_least` complete records; returns how many there were. Fails if it ended alone."""
    import signal
    import subprocess
    import time

    from autocomp.runtime.parts import part_files, read_part

    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True, env=env)
    written, deadline = 0, time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        written = sum(1 for p in part_files(stage_dir) for _ in read_part(p))
        if written >= at_least:
            os.killpg(proc.pid, signal.SIGKILL)
            break
        time.sleep(0.005)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read().decode()[-3000:]
    return written


@pytest.fixture
def browser():
    """Headless Debian chromium driven by selenium (skipped, saying why, without it)."""
    import shutil

    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver_path):
        pytest.skip("Debian's chromium and chromium-driver are not installed (apt-get install "
                    "chromium chromium-driver; .ci/run installs them)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1100,800"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(driver_path), options=opts)
    yield driver
    driver.quit()


@pytest.fixture
def logged(caplog):
    """`logged()`: autocomp's log lines (INFO and up) since the last call, as the CLI's
    handler would show them (core/log.py)."""
    import logging

    caplog.set_level(logging.INFO, logger="autocomp")

    def lines() -> list[str]:
        out = [r.getMessage() for r in caplog.records if r.name.startswith("autocomp")]
        caplog.clear()
        return out

    return lines


def _builds_per_module(path: Path) -> bool:
    """Whether a test file builds something once for the module (a module- or class-scoped
    fixture; test_contracts.py, which imports other files' fixtures, has its own too)."""
    text = path.read_text(encoding="utf-8")
    return 'scope="module"' in text or 'scope="class"' in text


# the test files whose tests pytest-xdist may hand to different workers one by one
SPLIT = frozenset(p.name for p in Path(__file__).parent.glob("test_*.py")
                  if not _builds_per_module(p))


def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist's `--dist loadscope` (pyproject.toml's addopts), with the files that build
    nothing per module dealt test by test: a file with a module-scoped fixture runs on one
    worker, so it builds once (a module fixture is built once per worker that runs its tests);
    the others, the guides of test_docs.py above all, go to whichever worker is free."""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class Scheduler(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return nodeid if Path(module).name in SPLIT else module

    return Scheduler(config, log)


def pytest_collection_modifyitems(config, items):
    """Longest first, so the last minutes are not one long test on one worker while the
    others wait: the guides, then the other slow tests dealt one by one, then the files that
    run on one worker and hold a slow test, then the rest (a file's tests stay in order)."""
    slow_files = {i.nodeid.split("::")[0] for i in items if i.get_closest_marker("slow")}

    def rank(item) -> int:
        module = item.nodeid.split("::")[0]
        if Path(module).name not in SPLIT:  # one scope: every test of it where its first is
            return 2 if module in slow_files else 3
        if not item.get_closest_marker("slow"):
            return 3
        return 0 if Path(module).name == "test_docs.py" else 1

    items.sort(key=rank)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """With $AUTOCOMP_TIMELINE set to a file: one line per test (worker, start, end, CPU
    seconds of the worker and the processes it waited for, node id) appended to it, to see
    which tests wait rather than work."""
    path = os.environ.get("AUTOCOMP_TIMELINE")
    if not path:
        yield
        return
    import resource
    import time

    def cpu() -> float:
        own, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF,
                                                      resource.RUSAGE_CHILDREN))
        return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

    start, used = time.time(), cpu()
    yield
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')} {start:.3f} "
                 f"{time.time():.3f} {cpu() - used:.3f} {item.nodeid}\n")


@pytest.fixture
def registered():
    """register() for this test only: every name it adds is taken out afterwards, with
    every cache that holds it (registry.unregister)."""
    from autocomp.core import registry

    added = []

    def add(family, name, target, **where):
        registry.register(family, name, target, **where)
        added.append((family, name))

    yield add
    for family, name in added:
        registry.unregister(family, name)


def docs_examples(tmp_path, monkeypatch) -> None:
    """docs/extending.md's `# file:` blocks (Python modules and YAML files), written to
    tmp_path, the modules importable."""
    from test_docs import FILE, ROOT, blocks

    for lang, body in blocks(ROOT / "docs" / "extending.md"):
        first, _, rest = body.partition("\n")
        named = FILE.match(first)
        if lang in ("python", "yaml") and named and not named.group(2) and named.group(1) != \
                "my_plugins.py":
            (tmp_path / named.group(1)).write_text(rest)
    monkeypatch.syspath_prepend(str(tmp_path))
