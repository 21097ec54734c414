# %% [markdown]
# # P2 · 代码 09：按 CUDA 的写法写内核 · Code 09: writing it the CUDA way
#
# 同一个内核的三种写法：按线程写的 Python（`@cuda.jit`，numba.cuda 的写法），warp 实际执行的掩码形式，
# 以及用 `blk` 亲手写的同一组掩码；两者的计数器完全相同。最后用谜题的 `check` 评判一个按线程写的答案。
# One kernel three ways: per-thread Python (`@cuda.jit`, as numba.cuda writes it), the mask form the
# warp executes, and the same masks written by hand with `blk`; their counters are identical. Last,
# a puzzle's `check` grades an answer written per thread.
#
# Run it alone: `python snippets/p2/09_cuda_way.py`

# %%
# --8<-- [start:setup]
import numpy as np

from simtdocs import cdiv, cuda, launch
from simtdocs.cuda import RawModule
from simtdocs.display import show
from simtdocs.lectures.p2 import cuda_way as lecture
# --8<-- [end:setup]


# %% [markdown]
# ## CUDA C

# %%
# --8<-- [start:inputs]
n, threads = 1000, 256
a = np.random.default_rng(0).random(n, dtype=np.float32)
b = np.random.default_rng(1).random(n, dtype=np.float32)
# --8<-- [end:inputs]


# %%
# --8<-- [start:c_launch]
add_or_sub_c = RawModule(path="snippets/p2/cuda_way.cu").get_function("add_or_sub")  # the C above
c_c = np.zeros(n, np.float32)
from_c = add_or_sub_c((cdiv(n, threads),), (threads,), (a, b, c_c, np.int32(n)))
assert np.array_equal(c_c, np.where(np.arange(n) % 2 == 0, a + b, a - b))
print(f"```text\n{from_c}\n```")
# --8<-- [end:c_launch]


# %% [markdown]
# ## 按线程写 · Per thread

# %%
# --8<-- [start:kernel]
@cuda.jit
def add_or_sub(a, b, c, n):
    i = cuda.grid(1)
    if i < n:
        x = a[i]
        y = b[i]
        if i % 2 == 0:
            c[i] = x + y
        else:
            c[i] = x - y
# --8<-- [end:kernel]


# %%
# --8<-- [start:launch]
c = np.zeros(n, np.float32)
stats = add_or_sub[cdiv(n, threads), threads](a, b, c, n)
assert np.array_equal(c, c_c)  # the same result as the C's
# --8<-- [end:launch]


# %% [markdown]
# ## warp 执行的掩码形式 · The mask form the warp executes

# %%
# --8<-- [start:masks]
print("```text", add_or_sub.as_masks().rstrip(), "```", sep="\n")
# --8<-- [end:masks]


# %% [markdown]
# ## 用 blk 亲手写 · By hand with blk

# %%
# --8<-- [start:twin]
def add_or_sub_blk(blk, a, b, c, n):
    i = blk.bx * blk.bdx + blk.tx
    inside = blk.branch(i < n)
    x = blk.load(a, i, mask=inside)
    y = blk.load(b, i, mask=inside)
    even = blk.branch(i % 2 == 0, mask=inside)
    blk.store(c, i, x + y, mask=even)
    odd = inside & ~even
    blk.store(c, i, x - y, mask=odd)


c_blk = np.zeros(n, np.float32)
twin = launch(add_or_sub_blk, grid=cdiv(n, threads), block=threads,
              args=(a, b, c_blk, n))
assert np.array_equal(c_blk, c)
show(lecture.twin_table(stats, twin, from_c))
# --8<-- [end:twin]

# %%
# --8<-- [start:twin_glue]
from simtdocs.display import glue

glue("cw_n", n)
glue("cw_threads", threads)
glue("cw_blocks", stats.blocks)
glue("cw_warps", stats.warps)
glue("cw_divergent", stats.divergent_branches)
glue("cw_sectors", stats.sectors)
glue("cw_sectors_array", cdiv(n * a.itemsize, 32))  # one array read or written once, sector by sector
stores = [line.counters for line in stats.lines if line.site.source.startswith("c[i] =")]
glue("cw_store_sectors", sum(st.sectors for st in stores))
glue("cw_coalescing", stats.coalescing_efficiency, ".0%")
glue("cw_simt", stats.simt_efficiency, ".0%")
fields = list(vars(stats.totals))
glue("cw_compared", len(fields))
glue("cw_differ", sum(len({getattr(s.totals, f) for s in (stats, twin, from_c)}) > 1 for f in fields))
# --8<-- [end:twin_glue]


# %% [markdown]
# ## 谜题的 check 接受两种写法 · A puzzle's check takes either dialect

# %%
# --8<-- [start:check]
from simtdocs.puzzles import PUZZLES


@cuda.jit
def add(a, b, out, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = a[i] + b[i]


verdict = PUZZLES["guard"].check(add)
show(verdict)
# --8<-- [end:check]

# %%
# --8<-- [start:check_glue]
from simtdocs.display import glue

glue("cw_check_divergent", verdict.stats.divergent_branches)
# --8<-- [end:check_glue]


# %% [markdown]
# ## 整数规则随语言而定 · Integers follow the language

# %%
# --8<-- [start:integers]
from simtdocs import triton
from simtdocs.triton import language as tl

dividend = np.array([-7, 7], np.int32)
divisor = np.array([2, -2], np.int32)
big = np.array([2**31 - 1], np.int32)  # the largest int32, added to itself


def divide_blk(blk, a, b, q, r, x, s):  # the mask API: numpy's operators
    t = blk.tx
    u, v = blk.load(a, t), blk.load(b, t)
    blk.store(q, t, u // v)
    blk.store(r, t, u % v)
    w = blk.load(x, 0 * t)
    blk.store(s, 0 * t, w + w, mask=t == 0)


@cuda.jit
def divide_numba(a, b, q, r, x, s):  # the numba dialect: numba's
    t = cuda.threadIdx.x
    q[t] = a[t] // b[t]
    r[t] = a[t] % b[t]
    if t == 0:
        s[0] = x[0] + x[0]


divide_c = RawModule(path="snippets/p2/cuda_way.cu").get_function("divide")  # CUDA C: C's


@triton.jit
def divide_triton(a_ptr, b_ptr, q_ptr, r_ptr, x_ptr, s_ptr, N: tl.constexpr):  # Triton: Triton's
    k = tl.arange(0, N)
    u, v = tl.load(a_ptr + k), tl.load(b_ptr + k)
    tl.store(q_ptr + k, u // v)
    tl.store(r_ptr + k, u % v)
    w = tl.load(x_ptr)
    tl.store(s_ptr, w + w)
# --8<-- [end:integers]


# %%
# --8<-- [start:integers_run]
from simtdocs.display import Table
from simtdocs.i18n import _


def integer_table(a, b, big, results):
    """What each way of writing a kernel computed (``results``: per front end, the quotients
    and remainders of ``a`` by ``b`` and the sum ``big + big``), one column each; which way
    a quotient rounds is read off the values, against numpy's floor and C's truncation."""
    def rounds(q):
        if np.array_equal(q, np.floor_divide(a, b)):
            return _("down (floor)")
        if np.array_equal(q, np.trunc(a / b).astype(q.dtype)):
            return _("toward zero (truncation)")
        return "?"

    cols = list(results.values())
    rows = [(_("whose rules"), _("numpy's"), _("numba's"), _("C's"), _("Triton's")),
            (_("operators"), "`//` `%`", "`//` `%`", "`/` `%`", "`//` `%`")]
    for k in range(a.size):
        rows.append((f"{a[k]} ÷ {b[k]}", *(int(q[k]) for q, _r, _s in cols)))
        rows.append((f"{a[k]} mod {b[k]}", *(int(r[k]) for _q, r, _s in cols)))
    rows.append((_("the quotient rounds"), *(rounds(q) for q, _r, _s in cols)))
    rows.append((f"{int(big[0]):,} + {int(big[0]):,}", *(s for _q, _r, s in cols)))
    return Table(rows, [_("integers"), _("the mask API (`blk`)"), _("the numba dialect (`@cuda.jit`)"),
                        _("CUDA C (`RawModule`)"), _("Triton (`@triton.jit`)")], align="lrrrr")


n_ops = dividend.size
launches = {  # each writes quotients q, remainders r and the sum s
    "blk": lambda *out: launch(divide_blk, 1, n_ops, args=(dividend, divisor, *out)),
    "numba": lambda *out: divide_numba[1, n_ops](dividend, divisor, *out),
    "C": lambda *out: divide_c((1,), (n_ops,), (dividend, divisor, *out)),
    "Triton": lambda *out: divide_triton[(1,)](dividend, divisor, *out, N=n_ops),
}
results = {}
for name, run in launches.items():
    q, r, s = np.zeros_like(dividend), np.zeros_like(dividend), np.zeros(1, np.int64)
    run(q, r, big, s)
    results[name] = q, r, int(s[0])
for name in ("blk", "numba"):  # numpy's floor, Python's
    assert np.array_equal(results[name][0], dividend // divisor)
    assert np.array_equal(results[name][1], dividend % divisor)
for name in ("C", "Triton"):  # truncation: numpy's fmod is C's %
    assert np.array_equal(results[name][1], np.fmod(dividend, divisor))
assert results["numba"][2] == 2 * int(big[0])  # 64-bit: no wrap-around
show(integer_table(dividend, divisor, big, results))
# --8<-- [end:integers_run]

# %%
# --8<-- [start:integers_glue]
from simtdocs.display import glue

glue("ir_a", int(dividend[0]))
glue("ir_b", int(divisor[0]))
glue("ir_floor_q", int(results["blk"][0][0]))
glue("ir_floor_r", int(results["blk"][1][0]))
glue("ir_trunc_q", int(results["C"][0][0]))
glue("ir_trunc_r", int(results["C"][1][0]))
glue("ir_big", int(big[0]))
glue("ir_wrapped", results["blk"][2])
glue("ir_numba_sum", results["numba"][2])
# --8<-- [end:integers_glue]
