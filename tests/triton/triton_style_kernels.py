"""Kernels written by the team in the style of Triton's tutorials (not copied from them)."""

from simtdocs import triton
from simtdocs.triton import language as tl


@triton.jit
def vec_add(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    keep = offs < n
    a = tl.load(a_ptr + offs, mask=keep)
    b = tl.load(b_ptr + offs, mask=keep)
    tl.store(out_ptr + offs, a + b, mask=keep)


@triton.jit
def row_softmax(out_ptr, in_ptr, in_stride, out_stride, n_rows, n_cols, BLOCK: tl.constexpr):
    first = tl.program_id(0)
    step = tl.num_programs(0)
    for r in tl.range(first, n_rows, step, num_stages=2):
        row_ptr = in_ptr + r * in_stride
        cols = tl.arange(0, BLOCK)
        x = tl.load(row_ptr + cols, mask=cols < n_cols, other=-float("inf"))
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        y = e / tl.sum(e, axis=0)
        tl.store(out_ptr + r * out_stride + cols, y, mask=cols < n_cols)


@triton.jit
def layer_norm_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        acc += x * x
    var = tl.sum(acc, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        m = cols < N
        w = tl.load(W + cols, mask=m)
        b = tl.load(B + cols, mask=m)
        x = tl.load(X + cols, mask=m, other=0.).to(tl.float32)
        tl.store(Y + cols, (x - mean) * rstd * w + b, mask=m)


@triton.jit
def leaky(x):
    return tl.where(x >= 0, x, 0.01 * x)


@triton.autotune(configs=[triton.Config({"BM": 32, "BN": 32, "BK": 16, "GROUP": 4}, num_warps=4)], key=["M", "N", "K"])
@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, s_am, s_ak, s_bk, s_bn, s_cm, s_cn,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr, ACT: tl.constexpr = ""):
    pid = tl.program_id(axis=0)
    n_m = tl.cdiv(M, BM)
    n_n = tl.cdiv(N, BN)
    in_group = GROUP * n_n
    gid = pid // in_group
    first_m = gid * GROUP
    gsize = tl.minimum(n_m - first_m, GROUP)
    pid_m = first_m + ((pid % in_group) % gsize)
    pid_n = (pid % in_group) // gsize
    rm = (pid_m * BM + tl.arange(0, BM)) % M
    rn = (pid_n * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + (rm[:, None] * s_am + rk[None, :] * s_ak)
    b_ptrs = b_ptr + (rk[:, None] * s_bk + rn[None, :] * s_bn)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK * s_ak
        b_ptrs += BK * s_bk
    if ACT == "leaky":
        acc = leaky(acc)
    c = acc.to(tl.float16)
    cm = pid_m * BM + tl.arange(0, BM)
    cn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + s_cm * cm[:, None] + s_cn * cn[None, :], c, mask=(cm[:, None] < M) & (cn[None, :] < N))


@triton.jit
def int_and_reduce(a_ptr, b_ptr, q_ptr, r_ptr, red_ptr, am_ptr, cs_ptr, n, R: tl.constexpr, C: tl.constexpr):
    offs = tl.arange(0, R * C)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m, other=1)
    b = tl.load(b_ptr + offs, mask=m, other=1)
    tl.store(q_ptr + offs, a // b, mask=m)
    tl.store(r_ptr + offs, a % b, mask=m)
    rows = tl.arange(0, R)
    cols = tl.arange(0, C)
    x = tl.load(a_ptr + rows[:, None] * C + cols[None, :]).to(tl.float32) * 0.25
    tl.store(red_ptr + rows * 3 + 0, tl.sum(tl.sigmoid(x) + tl.exp2(tl.minimum(x, 1.0)), axis=1))
    tl.store(red_ptr + rows * 3 + 1, tl.max(tl.abs(x), axis=1))
    tl.store(red_ptr + rows * 3 + 2, tl.min(tl.sqrt(tl.abs(x) + 1.0), axis=1))
    tl.store(am_ptr + rows, tl.argmax(x, axis=1))
    tl.store(cs_ptr + rows[:, None] * C + cols[None, :], tl.cumsum(a.to(tl.int32).reshape(R, C), axis=1))
