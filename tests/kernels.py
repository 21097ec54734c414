"""Kernels the tests launch: the lectures' examples, written independently of snippets/."""

import numpy as np

TILE, ROWS = 32, 8


def vector_add(blk, a, b, c, n):
    i = blk.bx * blk.bdx + blk.tx
    m = i < n
    blk.store(c, i, blk.load(a, i, mask=m) + blk.load(b, i, mask=m), mask=m)


def vector_add_unchecked(blk, a, b, c, n):
    i = blk.bx * blk.bdx + blk.tx
    blk.store(c, i, blk.load(a, i) + blk.load(b, i))


def bias_add(blk, X, bias, M, N, swapped=False):
    if swapped:  # x runs down the rows: neighbouring threads are a row apart
        r, c = blk.bx * blk.bdx + blk.tx, blk.by * blk.bdy + blk.ty
    else:
        r, c = blk.by * blk.bdy + blk.ty, blk.bx * blk.bdx + blk.tx
    m = (r < M) & (c < N)
    x = blk.load(X, r * N + c, mask=m)
    blk.store(X, r * N + c, x + blk.load(bias, r, mask=m), mask=m)


def scale_grid_stride(blk, x, y, alpha, n):
    i = blk.bx * blk.bdx + blk.tx
    while True:
        m = i < n
        if not m.any():
            break
        v = blk.load(x, i, mask=m)
        blk.store(y, i, alpha * v, mask=m)
        i = i + blk.gdx * blk.bdx


def strided_read(blk, a, stride, offset=0, width=1):
    blk.load(a, (offset + blk.tx * stride) * width, width=width)


def transpose_copy(blk, A, B, N):
    x, y = blk.bx * TILE + blk.tx, blk.by * TILE + blk.ty
    for j in range(0, TILE, ROWS):
        blk.store(B, (y + j) * N + x, blk.load(A, (y + j) * N + x))


def transpose_naive(blk, A, B, N):
    x, y = blk.bx * TILE + blk.tx, blk.by * TILE + blk.ty
    for j in range(0, TILE, ROWS):
        blk.store(B, x * N + (y + j), blk.load(A, (y + j) * N + x))


def transpose_tiled(blk, A, B, N, pad=1, sync=True, sync_every_row=False):
    tile = blk.shared((TILE, TILE + pad), np.float32, name="tile")
    x, y = blk.bx * TILE + blk.tx, blk.by * TILE + blk.ty
    for j in range(0, TILE, ROWS):
        blk.store(tile, (blk.ty + j, blk.tx), blk.load(A, (y + j) * N + x))
        if sync_every_row:
            blk.sync()
    if sync and not sync_every_row:
        blk.sync()
    x, y = blk.by * TILE + blk.tx, blk.bx * TILE + blk.ty
    for j in range(0, TILE, ROWS):
        blk.store(B, (y + j) * N + x, blk.load(tile, (blk.tx, blk.ty + j)))


def column_read(blk, row_words):
    tile = blk.shared((32, row_words), np.float32, name="tile")
    blk.store(tile, (blk.tx, 0 * blk.tx), 1.0)
    blk.load(tile, (blk.tx, 0 * blk.tx))


def reverse(blk, d, sync=True):
    s = blk.shared(256, np.float32, name="s")
    t = blk.tx
    blk.store(s, t, blk.load(d, t))
    if sync:
        blk.sync()
    blk.store(d, t, blk.load(s, 255 - t))


def _finish(blk, sd, out):
    first = blk.branch(blk.tx == 0)
    blk.store(out, blk.bx + 0 * blk.tx, blk.load(sd, 0 * blk.tx, mask=first), mask=first)


def reduce_interleaved(blk, g, out):
    """Harris version 1: tid % (2s) == 0 does the work — divergent."""
    sd, tid = blk.shared(blk.bdx, np.float32, name="sdata"), blk.tx
    blk.store(sd, tid, blk.load(g, blk.bx * blk.bdx + tid))
    blk.sync()
    s = 1
    while s < blk.bdx:
        m = blk.branch(tid % (2 * s) == 0)
        blk.store(sd, tid, blk.load(sd, tid, mask=m) + blk.load(sd, tid + s, mask=m), mask=m)
        blk.sync()
        s *= 2
    _finish(blk, sd, out)


def reduce_strided_index(blk, g, out):
    """Harris version 2: index = 2·s·tid — no divergence, bank conflicts."""
    sd, tid = blk.shared(blk.bdx, np.float32, name="sdata"), blk.tx
    blk.store(sd, tid, blk.load(g, blk.bx * blk.bdx + tid))
    blk.sync()
    s = 1
    while s < blk.bdx:
        idx = 2 * s * tid
        m = blk.branch(idx < blk.bdx)
        blk.store(sd, idx, blk.load(sd, idx, mask=m) + blk.load(sd, idx + s, mask=m), mask=m)
        blk.sync()
        s *= 2
    _finish(blk, sd, out)


def reduce_sequential(blk, g, out):
    """Harris version 3: sequential addressing — no divergence, no conflicts."""
    sd, tid = blk.shared(blk.bdx, np.float32, name="sdata"), blk.tx
    blk.store(sd, tid, blk.load(g, blk.bx * blk.bdx + tid))
    blk.sync()
    s = blk.bdx // 2
    while s > 0:
        m = blk.branch(tid < s)
        blk.store(sd, tid, blk.load(sd, tid, mask=m) + blk.load(sd, tid + s, mask=m), mask=m)
        blk.sync()
        s //= 2
    _finish(blk, sd, out)


def reduce_warp_shuffle(blk, g, out):
    """Harris version 5 in modern form: two loads per thread, a shuffle for the last warp."""
    sd, tid = blk.shared(blk.bdx, np.float32, name="sdata"), blk.tx
    i = blk.bx * 2 * blk.bdx + tid
    blk.store(sd, tid, blk.load(g, i) + blk.load(g, i + blk.bdx))
    blk.sync()
    s = blk.bdx // 2
    while s > 32:
        m = blk.branch(tid < s)
        blk.store(sd, tid, blk.load(sd, tid, mask=m) + blk.load(sd, tid + s, mask=m), mask=m)
        blk.sync()
        s //= 2
    w0 = blk.branch(tid < 32)
    v = blk.load(sd, tid, mask=w0) + blk.load(sd, tid + 32, mask=w0)
    for delta in (16, 8, 4, 2, 1):
        v = v + blk.shfl_down(v, delta, mask=w0)
    first = blk.branch(tid == 0, mask=w0)
    blk.store(out, blk.bx + 0 * tid, v, mask=first)
