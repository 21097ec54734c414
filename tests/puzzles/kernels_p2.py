"""Kernels for the P2 puzzles on threads and memory, written the way other readers would:
``CORRECT`` (styles other than the solution's: other indexing, extra guards, shuffles
instead of shared memory, broadcast reads) must pass; ``WRONG`` (index-only, missing or
misplaced sync, off by one, uncoalesced order…) must fail with the message given in
tests/puzzles/test_styles.py. Line numbers in those messages count from each kernel's def."""

import numpy as np

from simtdocs import cdiv

# -- double ---------------------------------------------------------------------------


def double_guarded(blk, a, out):
    i = blk.tid + blk.bdx * blk.bx
    m = i < a.size
    blk.store(out, i, blk.load(a, i, mask=m) * 2, mask=m)


def double_grid_stride(blk, a, out):
    for start in range(0, a.size, blk.gdx * blk.bdx):
        i = start + blk.bx * blk.bdx + blk.tx
        v = blk.load(a, i)
        blk.store(out, i, v + v)


def double_neighbour_shuffle(blk, a, out):
    i = blk.bx * blk.bdx + blk.tx
    mine = blk.shfl_xor(blk.load(a, i ^ 1), 1)
    blk.store(out, i, 2 * mine)


def double_index_only(blk, a, out):
    i = blk.bx * blk.bdx + blk.tx
    blk.store(out, i, 2.0 * i)


def double_off_by_one(blk, a, out):
    i = blk.bx * blk.bdx + blk.tx
    m = i + 1 < a.size
    blk.store(out, i, 2 * blk.load(a, i + 1, mask=m), mask=m)


# -- guard ----------------------------------------------------------------------------


def add_branch(blk, a, b, out, n):
    i = blk.bx * blk.bdx + blk.tx
    inside = blk.branch(i < n)
    blk.store(out, i, blk.load(a, i, mask=inside) + blk.load(b, i, mask=inside), mask=inside)


def add_clamped(blk, a, b, out, n):
    i = blk.bx * blk.bdx + blk.tx
    j = np.minimum(i, n - 1)
    blk.store(out, i, blk.load(a, j) + blk.load(b, j), mask=i < n)


def add_grid_stride(blk, a, b, out, n):
    for start in range(0, n, blk.gdx * blk.bdx):
        i = start + blk.bx * blk.bdx + blk.tx
        m = i < n
        blk.store(out, i, blk.load(a, i, mask=m) + blk.load(b, i, mask=m), mask=m)


def add_store_unguarded(blk, a, b, out, n):
    i = blk.bx * blk.bdx + blk.tx
    m = i < n
    v = blk.load(a, i, mask=m) + blk.load(b, i, mask=m)
    blk.store(out, i, v)


def add_index_only(blk, a, b, out, n):
    i = blk.bx * blk.bdx + blk.tx
    m = i < n
    blk.store(out, i, i + blk.load(b, i, mask=m), mask=m)


# -- add_bias -------------------------------------------------------------------------


def bias_flat(blk, a, bias, out, M, N):
    row = blk.by * blk.bdy + blk.ty
    col = blk.bx * blk.bdx + blk.tx
    m = (row < M) & (col < N)
    k = row * N + col
    blk.store(out, k, blk.load(a, k, mask=m) + blk.load(bias, col, mask=m), mask=m)


def bias_branch(blk, a, bias, out, M, N):
    col = blk.bx * blk.bdx + blk.tx
    row = blk.by * blk.bdy + blk.ty
    m = blk.branch((col < N) & (row < M))
    v = blk.load(a, (row, col), mask=m)
    blk.store(out, (row, col), v + blk.load(bias, col, mask=m), mask=m)


def bias_clamped_broadcast(blk, a, bias, out, M, N):
    row = blk.by * blk.bdy + blk.ty
    col = blk.bx * blk.bdx + blk.tx
    c = np.minimum(col, N - 1)
    b = blk.load(bias, c)
    m = (row < M) & (col < N)
    blk.store(out, (row, col), blk.load(a, (row, col), mask=m) + b, mask=m)


def bias_by_row(blk, a, bias, out, M, N):
    row = blk.by * blk.bdy + blk.ty
    col = blk.bx * blk.bdx + blk.tx
    m = (row < M) & (col < N)
    blk.store(out, (row, col), blk.load(a, (row, col), mask=m) + blk.load(bias, row, mask=m), mask=m)


def bias_unguarded(blk, a, bias, out, M, N):
    row = blk.by * blk.bdy + blk.ty
    col = blk.bx * blk.bdx + blk.tx
    blk.store(out, (row, col), blk.load(a, (row, col)) + blk.load(bias, col))


# -- grid_stride ----------------------------------------------------------------------


def square_while(blk, a, out, n):
    i = blk.bx * blk.bdx + blk.tx
    m = i < n
    while m.any():
        v = blk.load(a, i, mask=m)
        blk.store(out, i, v * v, mask=m)
        i = i + blk.gdx * blk.bdx
        m = i < n


def square_counted(blk, a, out, n):
    stride = blk.gdx * blk.bdx
    for k in range(cdiv(n, stride)):
        i = k * stride + blk.bx * blk.bdx + blk.tx
        m = blk.branch(i < n)
        blk.store(out, i, blk.load(a, i, mask=m) ** 2, mask=m)


def square_two_per_trip(blk, a, out, n):
    stride = blk.gdx * blk.bdx
    for start in range(0, n, 2 * stride):
        for i in (start + blk.bx * blk.bdx + blk.tx, start + stride + blk.bx * blk.bdx + blk.tx):
            m = i < n
            v = blk.load(a, i, mask=m)
            blk.store(out, i, v * v, mask=m)


def square_one_pass(blk, a, out, n):
    i = blk.bx * blk.bdx + blk.tx
    m = i < n
    v = blk.load(a, i, mask=m)
    blk.store(out, i, v * v, mask=m)


def square_last_left_out(blk, a, out, n):
    stride = blk.gdx * blk.bdx
    for start in range(0, n, stride):
        i = start + blk.bx * blk.bdx + blk.tx
        m = i < n - 1
        v = blk.load(a, i, mask=m)
        blk.store(out, i, v * v, mask=m)


# -- warp_sum -------------------------------------------------------------------------


def warp_sum_butterfly(blk, x, out):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(x, i)
    for m in (1, 2, 4, 8, 16):
        v = v + blk.shfl_xor(v, m)
    blk.store(out, i // 32, v, mask=blk.lane == 0)


def warp_sum_while(blk, x, out):
    v = blk.load(x, blk.bx * blk.bdx + blk.tx)
    d = 16
    while d:
        v = v + blk.shfl_down(v, d)
        d //= 2
    blk.store(out, blk.bx * (blk.bdx // 32) + blk.warp, v, mask=blk.lane == 0)


def warp_sum_last_lane(blk, x, out):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(x, i)
    for d in (1, 2, 4, 8, 16):
        up = blk.shfl_up(v, d)
        v = np.where(blk.lane >= d, v + up, v)
    blk.store(out, i // 32, v, mask=blk.lane == 31)


def warp_sum_every_lane_stores(blk, x, out):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(x, i)
    for delta in (16, 8, 4, 2, 1):
        v = v + blk.shfl_down(v, delta)
    blk.store(out, i // 32, v)


# -- window_sum -----------------------------------------------------------------------


def window_halo_from_last_threads(blk, a, out, n):
    tile = blk.shared(blk.bdx + 2, np.float32, name="tile")
    t = blk.tx
    i = blk.bx * blk.bdx + t
    blk.store(tile, t, blk.load(a, i))
    last = t >= blk.bdx - 2
    inside = last & (i + 2 < n)
    blk.store(tile, t + 2, blk.load(a, i + 2, mask=inside), mask=last)
    blk.sync()
    blk.store(out, i, blk.load(tile, t) + blk.load(tile, t + 1) + blk.load(tile, t + 2))


def window_clamped_halo(blk, a, out, n):
    tile = blk.shared(blk.bdx + 2, np.float32, name="tile")
    t = blk.tx
    i = blk.bx * blk.bdx + t
    blk.store(tile, t, blk.load(a, i))
    halo = blk.branch(t < 2)
    j = np.minimum(i + blk.bdx, n - 1)
    v = np.where(i + blk.bdx < n, blk.load(a, j, mask=halo), 0)
    blk.store(tile, t + blk.bdx, v, mask=halo)
    blk.sync()
    total = blk.load(tile, t)
    for k in (1, 2):
        total = total + blk.load(tile, t + k)
    blk.store(out, i, total)


def window_tile_sum_first(blk, a, out, n):
    tile = blk.shared(blk.bdx + 2, np.float32, name="tile")
    t = blk.tx
    i = blk.bx * blk.bdx + t
    halo = t < 2
    blk.store(tile, t + blk.bdx, blk.load(a, i + blk.bdx, mask=halo & (i + blk.bdx < n)), mask=halo)
    blk.store(tile, t, blk.load(a, i))
    blk.sync()
    pair = blk.load(tile, t + 1) + blk.load(tile, t + 2)
    blk.store(out, i, blk.load(tile, t) + pair)


# -- reverse_blocks -------------------------------------------------------------------


def reverse_write_reversed(blk, a, out):
    tile = blk.shared(blk.bdx, np.float32, name="tile")
    t = blk.tx
    blk.store(tile, t, blk.load(a, blk.bx * blk.bdx + t))
    blk.sync()
    blk.store(out, blk.bx * blk.bdx + blk.bdx - 1 - t, blk.load(tile, t))


def reverse_global_only(blk, a, out):
    t = blk.tx
    blk.store(out, blk.bx * blk.bdx + t, blk.load(a, blk.bx * blk.bdx + blk.bdx - 1 - t))


def reverse_warps_and_shuffle(blk, a, out):
    mirror = blk.bdx - 32 * (blk.warp + 1)
    v = blk.load(a, blk.bx * blk.bdx + mirror + blk.lane)
    blk.store(out, blk.bx * blk.bdx + blk.tx, blk.shfl(v, 31 - blk.lane))


def reverse_syncwarp(blk, a, out):
    tile = blk.shared(blk.bdx, np.float32, name="tile")
    t = blk.tx
    i = blk.bx * blk.bdx + t
    blk.store(tile, t, blk.load(a, i))
    blk.syncwarp()
    blk.store(out, i, blk.load(tile, blk.bdx - 1 - t))


# -- scale ----------------------------------------------------------------------------


def scale_flat(blk, A, B, N):
    k = (blk.by * blk.bdy + blk.ty) * N + blk.bx * blk.bdx + blk.tx
    blk.store(B, k, 3 * blk.load(A, k))


def scale_guarded(blk, A, B, N):
    row = blk.by * blk.bdy + blk.ty
    col = blk.bx * blk.bdx + blk.tx
    m = (row < N) & (col < N)
    v = blk.load(A, (row, col), mask=m)
    blk.store(B, (row, col), v + v + v, mask=m)


def scale_lanes(blk, A, B, N):
    col = blk.bx * 32 + blk.lane
    row = blk.by * blk.bdy + blk.ty
    blk.store(B, (row, col), 3 * blk.load(A, (row, col)))


def scale_index_only(blk, A, B, N):
    row = blk.by * blk.bdy + blk.ty
    col = blk.bx * blk.bdx + blk.tx
    blk.store(B, (row, col), 3.0 * (row * N + col))


def scale_transposed_store(blk, A, B, N):
    row = blk.by * blk.bdy + blk.ty
    col = blk.bx * blk.bdx + blk.tx
    blk.store(B, (col, row), 3 * blk.load(A, (row, col)))


# -- transpose ------------------------------------------------------------------------


def transpose_flat_tile(blk, A, B, N):
    tile = blk.shared(32 * 33, np.float32, name="tile")
    x = blk.bx * 32 + blk.tx
    y = blk.by * 32 + blk.ty
    for j in range(0, 32, 8):
        blk.store(tile, (blk.ty + j) * 33 + blk.tx, blk.load(A, (y + j) * N + x))
    blk.sync()
    x = blk.by * 32 + blk.tx
    y = blk.bx * 32 + blk.ty
    for j in range(0, 32, 8):
        blk.store(B, (y + j) * N + x, blk.load(tile, blk.tx * 33 + blk.ty + j))


def transpose_swizzled(blk, A, B, N):
    tile = blk.shared((32, 32), np.float32, name="tile")
    x = blk.bx * 32 + blk.tx
    y = blk.by * 32 + blk.ty
    for j in range(0, 32, 8):
        r = blk.ty + j
        blk.store(tile, (r, blk.tx ^ r), blk.load(A, (y + j) * N + x))
    blk.sync()
    x = blk.by * 32 + blk.tx
    y = blk.bx * 32 + blk.ty
    for j in range(0, 32, 8):
        c = blk.ty + j
        blk.store(B, (y + j) * N + x, blk.load(tile, (blk.tx, c ^ blk.tx)))


def transpose_shuffles(blk, A, B, N):
    x0, y0 = blk.bx * 32, blk.by * 32
    me = blk.ty == 0
    lane = blk.lane
    col = [blk.load(A, (y0 + r) * N + x0 + lane, mask=me) for r in range(32)]
    row = [0 * col[0] for _ in range(32)]
    for k in range(32):
        pick = (lane - k) % 32
        send = sum(np.where(pick == r, col[r], 0) for r in range(32))
        got = blk.shfl(send, (lane + k) % 32, mask=me)
        dest = (lane + k) % 32
        row = [np.where(dest == c, got, row[c]) for c in range(32)]
    for c in range(32):
        blk.store(B, (x0 + c) * N + y0 + lane, row[c], mask=me)


def transpose_no_sync(blk, A, B, N):
    tile = blk.shared((32, 33), np.float32, name="tile")
    x = blk.bx * 32 + blk.tx
    y = blk.by * 32 + blk.ty
    for j in range(0, 32, 8):
        blk.store(tile, (blk.ty + j, blk.tx), blk.load(A, (y + j) * N + x))
    x = blk.by * 32 + blk.tx
    y = blk.bx * 32 + blk.ty
    for j in range(0, 32, 8):
        blk.store(B, (y + j) * N + x, blk.load(tile, (blk.tx, blk.ty + j)))


# -- pair_sum -------------------------------------------------------------------------


def pair_shuffles(blk, a, out):
    i = blk.bx * blk.bdx + blk.tx
    base = 2 * (i - blk.lane)
    low = blk.load(a, base + blk.lane)
    high = blk.load(a, base + 32 + blk.lane)
    src = (2 * blk.lane) % 32
    first = np.where(blk.lane < 16, blk.shfl(low, src), blk.shfl(high, src))
    second = np.where(blk.lane < 16, blk.shfl(low, src + 1), blk.shfl(high, src + 1))
    blk.store(out, i, first + second)


def pair_vector_sum(blk, a, out):
    i = blk.tid + blk.bx * blk.bdx
    m = 2 * i + 1 < a.size
    blk.store(out, i, blk.load(a, 2 * i, mask=m, width=2).sum(axis=-1), mask=m)


def pair_shared_staging(blk, a, out):
    tile = blk.shared(2 * blk.bdx, np.float32, name="tile")
    t = blk.tx
    start = 2 * blk.bx * blk.bdx
    blk.store(tile, t, blk.load(a, start + t))
    blk.store(tile, t + blk.bdx, blk.load(a, start + blk.bdx + t))
    blk.sync()
    blk.store(out, blk.bx * blk.bdx + t, blk.load(tile, 2 * t) + blk.load(tile, 2 * t + 1))


def pair_index_only(blk, a, out):
    i = blk.bx * blk.bdx + blk.tx
    pair = blk.load(a, 2 * i, width=2)
    blk.store(out, i, 0 * pair[..., 0] + 4.0 * i + 1)


def pair_off_by_one(blk, a, out):
    i = blk.bx * blk.bdx + blk.tx
    pair = blk.load(a, 2 * i + 1, width=2)
    blk.store(out, i, pair[..., 0] + pair[..., 1])


# -- block_sum ------------------------------------------------------------------------


def block_sum_shuffles(blk, x, out):
    partial = blk.shared(blk.bdx // 32, np.float32, name="partial")
    v = blk.load(x, blk.bx * blk.bdx + blk.tx)
    for d in (16, 8, 4, 2, 1):
        v = v + blk.shfl_down(v, d)
    blk.store(partial, blk.warp, v, mask=blk.lane == 0)
    blk.sync()
    first = blk.warp == 0
    w = blk.lane < blk.bdx // 32
    v = np.where(w, blk.load(partial, blk.lane, mask=first & w), 0)
    for d in (4, 2, 1):
        v = v + blk.shfl_down(v, d, mask=first)
    blk.store(out, blk.bx, v, mask=blk.tx == 0)


def block_sum_warp_broadcast(blk, x, out):
    sdata = blk.shared(blk.bdx, np.float32, name="sdata")
    tid = blk.tx
    blk.store(sdata, tid, blk.load(x, blk.bx * blk.bdx + tid))
    blk.sync()
    s = blk.bdx // 2
    while s > 0:
        w = tid < s
        v = blk.load(sdata, tid, mask=w) + blk.load(sdata, tid + s, mask=w)
        blk.store(sdata, tid, v, mask=w)
        blk.sync()
        s //= 2
    total = blk.load(sdata, 0 * tid, mask=tid < 32)
    blk.store(out, blk.bx, total, mask=tid == 0)


def block_sum_for_loop(blk, x, out):
    sdata = blk.shared(blk.bdx, np.float32, name="sdata")
    tid = blk.tx
    blk.store(sdata, tid, blk.load(x, blk.bx * blk.bdx + tid))
    blk.sync()
    for s in (128, 64, 32, 16, 8, 4, 2, 1):
        w = blk.branch(tid < s)
        top = blk.load(sdata, tid + s, mask=w)
        blk.store(sdata, tid, blk.load(sdata, tid, mask=w) + top, mask=w)
        blk.sync()
    blk.store(out, blk.bx, blk.load(sdata, 0 * tid, mask=tid == 0), mask=tid == 0)


def block_sum_everyone_reads_the_total(blk, x, out):
    sdata = blk.shared(blk.bdx, np.float32, name="sdata")
    tid = blk.tx
    blk.store(sdata, tid, blk.load(x, blk.bx * blk.bdx + tid))
    blk.sync()
    s = blk.bdx // 2
    while s > 0:
        w = tid < s
        v = blk.load(sdata, tid, mask=w) + blk.load(sdata, tid + s, mask=w)
        blk.store(sdata, tid, v, mask=w)
        blk.sync()
        s //= 2
    total = blk.load(sdata, 0 * tid)
    blk.store(out, blk.bx, total, mask=tid == 0)


CORRECT = {
    "double": [double_guarded, double_grid_stride, double_neighbour_shuffle],
    "guard": [add_branch, add_clamped, add_grid_stride],
    "add_bias": [bias_flat, bias_branch, bias_clamped_broadcast],
    "grid_stride": [square_while, square_counted, square_two_per_trip],
    "warp_sum": [warp_sum_butterfly, warp_sum_while, warp_sum_last_lane],
    "window_sum": [window_halo_from_last_threads, window_clamped_halo, window_tile_sum_first],
    "reverse_blocks": [reverse_write_reversed, reverse_global_only, reverse_warps_and_shuffle],
    "scale": [scale_flat, scale_guarded, scale_lanes],
    "transpose": [transpose_flat_tile, transpose_swizzled, transpose_shuffles],
    "pair_sum": [pair_shuffles, pair_vector_sum, pair_shared_staging],
    "block_sum": [block_sum_shuffles, block_sum_warp_broadcast, block_sum_for_loop],
}

WRONG = {
    "double": [double_index_only, double_off_by_one],
    "guard": [add_store_unguarded, add_index_only],
    "add_bias": [bias_by_row, bias_unguarded],
    "grid_stride": [square_one_pass, square_last_left_out],
    "warp_sum": [warp_sum_every_lane_stores],
    "reverse_blocks": [reverse_syncwarp],
    "scale": [scale_index_only, scale_transposed_store],
    "transpose": [transpose_no_sync],
    "pair_sum": [pair_index_only, pair_off_by_one],
    "block_sum": [block_sum_everyone_reads_the_total],
}
