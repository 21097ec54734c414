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


@triton.jit
def causal_attention(q_ptr, k_ptr, v_ptr, o_ptr, seq, scale, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    # one query block per program; it attends to key blocks 0..start_m only, so the trip count
    # of the loop depends on tl.program_id (the programs of one batch run different counts)
    start_m = tl.program_id(0)
    offs_m = start_m * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_d = tl.arange(0, D)
    q = tl.load(q_ptr + offs_m[:, None] * D + offs_d[None, :], mask=offs_m[:, None] < seq, other=0.0)
    m_i = tl.full([BM], -float("inf"), tl.float32)
    l_i = tl.zeros([BM], dtype=tl.float32)
    acc = tl.zeros([BM, D], dtype=tl.float32)
    hi = tl.minimum((start_m + 1) * BM, seq)
    for start_n in range(0, hi, BN):
        cols = start_n + offs_n
        kt = tl.load(k_ptr + cols[None, :] * D + offs_d[:, None], mask=cols[None, :] < seq, other=0.0)
        s = tl.dot(q, kt) * scale
        s = tl.where((offs_m[:, None] >= cols[None, :]) & (cols[None, :] < seq), s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + cols[:, None] * D + offs_d[None, :], mask=cols[:, None] < seq, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(o_ptr + offs_m[:, None] * D + offs_d[None, :], acc.to(tl.float16), mask=offs_m[:, None] < seq)


@triton.jit
def ragged_rows(x_ptr, out_ptr, lens_ptr, n_rows, C: tl.constexpr):
    # programs past n_rows return; the others branch and loop on a length each loads
    row = tl.program_id(0)
    if row >= n_rows:
        return
    n = tl.load(lens_ptr + row)
    cols = tl.arange(0, C)
    total = 0.0
    if n > C // 2:
        x = tl.load(x_ptr + row * C + cols, mask=cols < n, other=0.0)
        total = tl.sum(x, axis=0)
    else:
        total = -1.0
    i = 0
    while i < n:
        tl.store(out_ptr + n_rows + row * C + i, i * 1.0)
        i += 4
    tl.store(out_ptr + row, total + i)


@triton.jit
def block_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + tl.program_id(0), tl.sum(x, axis=0))


@triton.jit
def tile_reduce(x_ptr, s_ptr, m_ptr, a_ptr, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    x = tl.load(x_ptr + tl.program_id(0) * R * C + r[:, None] * C + c[None, :])
    base = tl.program_id(0) * R
    tl.store(s_ptr + base + r, tl.sum(x, axis=1))
    tl.store(m_ptr + base + r, tl.max(x, axis=1))
    tl.store(a_ptr + base + r, tl.argmax(x, axis=1))


@triton.jit
def one_dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    c = tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c)


@triton.jit
def matmul_block_ptr(a_ptr, b_ptr, c_ptr, M, N, K, s_am, s_ak, s_bk, s_bn, s_cm, s_cn,
                     BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_bp = tl.make_block_ptr(a_ptr, (M, K), (s_am, s_ak), (pid_m * BM, 0), (BM, BK), (1, 0))
    b_bp = tl.make_block_ptr(b_ptr, (K, N), (s_bk, s_bn), (0, pid_n * BN), (BK, BN), (1, 0))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_bp, boundary_check=(0, 1))
        b = tl.load(b_bp, boundary_check=(0, 1))
        acc += tl.dot(a, b)
        a_bp = tl.advance(a_bp, (0, BK))
        b_bp = tl.advance(b_bp, (BK, 0))
    c_bp = tl.make_block_ptr(c_ptr, (M, N), (s_cm, s_cn), (pid_m * BM, pid_n * BN), (BM, BN), (1, 0))
    tl.store(c_bp, acc.to(tl.float16), boundary_check=(0, 1))


@triton.jit
def scaled_tile(x_ptr, y_ptr, M, N, sxm, sxn, sym, syn, scale, BM: tl.constexpr, BN: tl.constexpr):
    # y = scale * x, one BM x BN tile per program, through the strides the host passes: x may
    # be a transposed view (sxm = 1), whose tile runs contiguously down its columns
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    keep = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * sxm + rn[None, :] * sxn, mask=keep, other=0.)
    tl.store(y_ptr + rm[:, None] * sym + rn[None, :] * syn, x * scale, mask=keep)


@triton.jit
def grouped_tiles(x_ptr, y_ptr, who_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr, GROUP: tl.constexpr):
    # the programs walk the tiles GROUP tile-rows at a time (the matmul tutorial's order); the
    # last group is shorter, so Python's min and max see values that differ between programs
    pid = tl.program_id(0)
    n_m = tl.cdiv(M, BM)
    n_n = tl.cdiv(N, BN)
    per_group = GROUP * n_n
    first = (pid // per_group) * GROUP
    rows_here = min(n_m - first, GROUP)
    pm = first + (pid % per_group) % rows_here
    pn = (pid % per_group) // rows_here
    rm = pm * BM + tl.arange(0, min(BM, 64))
    rn = pn * BN + tl.arange(0, BN)
    keep = (rm[:, None] < M) & (rn[None, :] < N)
    offs = rm[:, None] * N + rn[None, :]
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=keep) + 1.0, mask=keep)
    tl.store(who_ptr + pid, max(pm, pn, 0) * 1000 + min(rows_here, GROUP, 99))
