"""core/masks.py gives scipy.ndimage's arrays: holes filled, erosion and dilation, on
random blobs (touching the border or not, with holes, empty)."""

import numpy as np
import pytest
from scipy import ndimage

from autocomp.core.masks import dilate, erode, fill_holes


def _masks():
    rng = np.random.default_rng(0)
    yield np.zeros((20, 30), bool)
    yield np.ones((20, 30), bool)
    for _ in range(60):
        h, w = rng.integers(5, 60, 2)
        m = ndimage.binary_dilation(rng.random((h, w)) < rng.uniform(0.01, 0.2),
                                    iterations=int(rng.integers(0, 4)))
        m &= ~(rng.random((h, w)) < 0.05)  # pinholes
        yield m


@pytest.mark.parametrize("k", [1, 2, 3, 6])
def test_masks_equal_scipy(k):
    for m in _masks():
        assert np.array_equal(fill_holes(m), ndimage.binary_fill_holes(m))
        assert np.array_equal(erode(m, k), ndimage.binary_erosion(m, iterations=k))
        assert np.array_equal(dilate(m, k), ndimage.binary_dilation(m, iterations=k))


def test_channel_max_and_min_equal_numpys_reductions():
    from autocomp.core.pixel_minmax import channel_max, channel_min

    rng = np.random.default_rng(1)
    for a in (rng.integers(0, 256, (9, 7, 3)).astype(np.uint8),
              rng.integers(-20, 20, (5, 4, 3)), rng.random((6, 6, 1))):
        assert np.array_equal(channel_max(a), a.max(axis=-1))
        assert np.array_equal(channel_min(a), a.min(axis=-1))
