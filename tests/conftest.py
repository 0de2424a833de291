import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import pytest  # noqa: E402

from autocomp.concepts.task import load_task  # noqa: E402


@pytest.fixture(scope="session")
def tasks():
    return {name: load_task(name) for name in ("color", "position", "shape_color",
                                                "relative_size")}


def assert_file_error(load, tmp_path, body: str, needle: str) -> None:
    """Loading `body` from a file fails with one line naming the file and the problem."""
    from autocomp.errors import AutocompError

    path = tmp_path / "bad.yaml"
    path.write_text(body)
    with pytest.raises(AutocompError) as err:
        load(str(path))
    message = str(err.value)
    assert message.startswith(str(path)) and needle in message and "\n" not in message


@pytest.fixture(scope="session")
def tiny_backends(tmp_path_factory):
    """Tiny random SD3, Gemma-3 (text and vision), GroundingDINO and SAM2, saved to folders."""
    from tiny_models import tiny_backends as build

    return build(tmp_path_factory.mktemp("tiny-backends"))


@pytest.fixture
def fake_openai():
    from fake_openai import FakeServer

    server = FakeServer()
    yield server
    server.close()
