"""Errors that name the thing: the array by the kernel's name, the axis in the reader's terms,
the index's type when it is narrow, and the thread and line — the same words on both engines."""

import numpy as np
import pytest

from simtdocs import MemcheckError, cuda, launch, reference
from simtdocs.cuda import RawKernel

ENGINES = [pytest.param(launch, id="fast"), pytest.param(reference.launch, id="reference")]


@pytest.mark.parametrize("run", ENGINES)
def test_column_minus_one_of_a_matrix_is_called_a_column(run):
    def left_neighbour(blk, A):
        r = blk.tx
        blk.load(A, (r % 10, r - 1))  # thread 0 reads A[0][-1]

    with pytest.raises(MemcheckError) as e:
        run(left_neighbour, grid=1, block=16, args=(np.zeros((10, 20), np.float32),))
    text = str(e.value)
    assert "by thread (0,0,0) in block (0,0,0)" in text
    assert "index -1 is out of bounds: column -1 of A[10][20]: A has 20 columns" in text
    assert "threads 0 read A[0][-1]" in text


@pytest.mark.parametrize("run", ENGINES)
def test_a_3d_halo_read_names_x_y_and_z(run):
    def halo(blk, u):
        x, y = blk.tx, blk.ty
        blk.load(u, (x * 0 + 3, y, x + 1))  # the last column of threads reads x = 64

    with pytest.raises(MemcheckError) as e:
        run(halo, grid=1, block=(64, 2), args=(np.zeros((4, 8, 64)),))
    text = str(e.value)
    assert "by thread (63,0,0)" in text
    assert "index 64 is out of bounds: x = 64 of u[4][8][64]: u has 64 along x" in text
    assert "threads 63, 127 read u[3][0][64]…u[3][1][64]" in text


@pytest.mark.parametrize("run", ENGINES)
def test_the_first_thread_out_of_bounds_is_reported_whichever_axis(run):
    def diagonal(blk, A):
        t = blk.tx
        blk.load(A, (t, t - 1))  # thread 0: column -1; threads 10..: row 10..

    with pytest.raises(MemcheckError) as e:
        run(diagonal, grid=1, block=32, args=(np.zeros((10, 20), np.float32),))
    assert "by thread (0,0,0)" in str(e.value) and "column -1 of A[10][20]" in str(e.value)


@pytest.mark.parametrize("run", ENGINES)
def test_a_narrow_index_that_wrapped_says_its_type(run):
    def scaled(blk, a):
        i = (blk.tx * 3).astype(np.int8)  # thread 43 computes 129, which int8 holds as -127
        blk.load(a, i)

    with pytest.raises(MemcheckError) as e:
        run(scaled, grid=1, block=64, args=(np.zeros(200),))
    text = str(e.value)
    assert "by thread (43,0,0)" in text and "index -127 is out of bounds: a has 200 elements" in text
    assert "the index is int8, which holds only -128..127" in text


    assert "numpy wraps int8 arithmetic around" in text and "widen it with .astype(np.int32)" in text


@cuda.jit
def scaled_dialect(a):
    i = np.int8(cuda.threadIdx.x * 3)  # thread 43: 129 converted to int8 is -127
    a[i] = 1.0


SCALED_C = RawKernel(r"""
__global__ void scaled(double *a) {
    signed char i = threadIdx.x * 3;  // thread 43: 129 as a signed char is -127
    a[i] = 1.0;
}""", "scaled")


@pytest.mark.parametrize("run", ENGINES)
@pytest.mark.parametrize("kernel, note", [
    (scaled_dialect, "the index is int8, which holds only -128..127: a value outside that range wrapped around "
                     "where it became int8 (numba's arithmetic is int64; convert with np.int32(…), or keep such "
                     "values in an int32 array)"),
    (SCALED_C, "the index is a signed char, which holds only -128..127: a value outside that range wrapped "
               "around where it became a signed char (C computes in int; keep such values in an int, or an "
               "int array)")], ids=["numba", "c"])
def test_a_narrow_index_is_explained_in_the_kernels_language(run, kernel, note):
    # numba computes in int64 and C in int: numpy's narrow arithmetic and .astype are not theirs
    with pytest.raises(MemcheckError) as e:
        run(kernel, grid=1, block=64, args=(np.zeros(200),))
    text = str(e.value)
    assert "by thread (43,0,0)" in text and "index -127 is out of bounds: a has 200 elements; " + note in text
    assert ".astype" not in text and "numpy" not in text


@pytest.mark.parametrize("run", ENGINES)
def test_a_strided_argument_is_named(run):
    def copy(blk, a, b):
        blk.store(b, blk.tx, blk.load(a, blk.tx))

    with pytest.raises(ValueError, match=r"global array b must be C-contiguous.*np\.ascontiguousarray\(b\)"):
        run(copy, grid=1, block=32, args=(np.zeros(32), np.zeros((32, 2))[:, 0]))
    with pytest.raises(TypeError, match=r"global memory must be a numpy array, but a is a list"):
        run(copy, grid=1, block=32, args=([0.0] * 32, np.zeros(32)))


@pytest.mark.parametrize("run", ENGINES)
@pytest.mark.parametrize("kind", ["load", "store"])
def test_the_last_lane_of_a_halo_past_the_end_is_reported(run, kind):
    # Lanes 0 and 5 of every block (the same few in each) step through a; lane 5 of the last
    # block is one element past its end. Only the last active lane of the pass is outside.
    def halo(blk, a):
        i = blk.bx * blk.bdx + blk.tx
        m = (blk.tx == 0) | (blk.tx == 5)
        if kind == "load":
            blk.load(a, i, mask=m)
        else:
            blk.store(a, i, np.float32(1), mask=m)

    with pytest.raises(MemcheckError) as e:
        run(halo, grid=4, block=8, args=(np.zeros(29, np.float32),))
    assert "by thread (5,0,0) in block (3,0,0)" in str(e.value)
