import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import pytest  # noqa: E402

from autocomp.concepts.task import load_task  # noqa: E402


@pytest.fixture(scope="session")
def tasks():
    return {name: load_task(name) for name in ("color", "position", "shape_color",
                                                "relative_size")}
