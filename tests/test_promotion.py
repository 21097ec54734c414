"""C's integer promotion at loads: narrow integers arrive as int32 on both engines."""

import numpy as np
import pytest

from simtdocs import launch, reference

ENGINES = [pytest.param(launch, id="fast"), pytest.param(reference.launch, id="reference")]
RNG = np.random.default_rng(7)


@pytest.mark.parametrize("run", ENGINES)
def test_a_uint8_index_times_4_addresses_element_4i(run):
    def gather4(blk, idx, a, out):
        t = blk.tx
        j = blk.load(idx, t)  # unsigned char j = idx[t];
        blk.store(out, t, blk.load(a, j * 4))  # a[j * 4]: computed in int, as C promotes j

    idx = RNG.permutation(256).astype(np.uint8)
    a = RNG.random(1024).astype(np.float32)
    out = np.zeros(256, np.float32)
    run(gather4, grid=1, block=256, args=(idx, a, out))
    np.testing.assert_array_equal(out, a[idx.astype(np.int64) * 4])  # all 256, not 64 of them


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16])
@pytest.mark.parametrize("run", ENGINES)
def test_narrow_loads_and_atomics_return_int32_and_stores_convert_back(run, dtype):
    seen = {}

    def widen(blk, a, out, counts):
        t = blk.tx
        v = blk.load(a, t)
        seen["load"] = v.dtype
        blk.store(out, t, v * 300)  # int32 arithmetic, converted to out's type on the store
        seen["atomic"] = blk.atomic_add(counts, t % 4, 1).dtype

    info = np.iinfo(dtype)
    a = RNG.integers(info.min, info.max, 64, endpoint=True).astype(dtype)
    out = np.zeros(64, dtype)
    counts = np.zeros(4, dtype)
    run(widen, grid=1, block=64, args=(a, out, counts))
    assert seen == {"load": np.int32, "atomic": np.int32}
    np.testing.assert_array_equal(out, (a.astype(np.int32) * 300).astype(dtype))  # C's conversion: modulo 2^n
    np.testing.assert_array_equal(counts, [16, 16, 16, 16])


@pytest.mark.parametrize("run", ENGINES)
def test_wide_and_float_loads_keep_their_type(run):
    seen = []

    def keep(blk, *arrays):
        seen.extend(blk.load(a, blk.tx).dtype for a in arrays)

    arrays = [np.zeros(32, d) for d in (np.int32, np.uint32, np.int64, np.float16, np.float32, np.float64)]
    run(keep, grid=1, block=32, args=tuple(arrays))
    assert seen == [a.dtype for a in arrays]
