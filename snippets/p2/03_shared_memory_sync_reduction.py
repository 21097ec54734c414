# %% [markdown]
# # P2 · 代码 03：共享内存、同步与归约 · Code 03: shared memory, synchronization and reduction
#
# bank 冲突与跨度；漏写 `__syncthreads()` 的数组反转；并行归约的五个版本；warp shuffle。
# Bank conflicts by stride; reversing an array without `__syncthreads()`; five versions of a
# parallel reduction; warp shuffles. Every counter below is computed by simtdocs.
#
# Run it alone: `python snippets/p2/03_shared_memory_sync_reduction.py`

# %%
# --8<-- [start:setup]
import numpy as np

from simtdocs import launch
from simtdocs.docs import show
# --8<-- [end:setup]


# %% [markdown]
# ## 演示 1：bank 冲突 · Demo 1: bank conflicts

# %%
# --8<-- [start:bank_kernel]
def bank_kernel(blk, row_words):
    """One warp reads one column of a shared tile whose rows are `row_words` words long."""
    tile = blk.shared((32, row_words), np.float32, name="tile")
    for r in range(32):                              # fill the tile (row by row) first,
        blk.store(tile, (r, blk.tx % row_words), 1.0, mask=blk.tx < row_words)
    blk.sync()                                       # so that every word has been written
    blk.load(tile, (blk.tx, 0))                      # lane l reads tile[l][0]: word l * row_words
# --8<-- [end:bank_kernel]


# %%
# --8<-- [start:bank_table]
import numpy as np

from simtdocs.docs import Table, _, glue


def column_ways(stats):
    """Wavefronts per request of the column read: the kernel's last line using shared memory."""
    c = [ln.counters for ln in stats.lines if ln.counters.shared_requests][-1]
    return c.shared_wavefronts / c.shared_requests  # 4-byte accesses: wavefronts per request = ways


def bank_table(runs, examples):
    """The table of §6.1 from {row length: stats}; glues the three examples ({name: row length})
    the prose (and exercise 4) discusses."""
    lane = np.arange(32)
    rows = [(s, s % 32, len(np.unique(lane * s % 32)), column_ways(st)) for s, st in runs.items()]
    for key, s in examples.items():
        glue(f"p2_stride_{key}", s)
        glue(f"p2_ways_{key}", column_ways(runs[s]), ".0f")
    glue("p2_stride_even_mod", examples["even"] % 32)
    return Table(rows, [_("row length = stride (words)"), _("stride mod 32"), _("banks used"),
                        _("ways (wavefronts per request)")], fmt=[None, None, None, ".0f"])
# --8<-- [end:bank_table]


# %%
# --8<-- [start:banks]
EXAMPLES = {"pow2": 64, "odd": 65, "even": 66}  # the three row lengths the prose (and exercise 4) discusses
runs = {s: launch(bank_kernel, grid=1, block=32, args=(s,)) for s in (1, 2, 3, 4, 8, 16, 32, 33, *EXAMPLES.values())}
show(bank_table(runs, EXAMPLES))
# --8<-- [end:banks]


# %%
# --8<-- [start:bank_figure]
from simtdocs.docs import Figure, _, figure
from simtdocs.i18n import Listing

BANK_MAP = (1, 2, 32, 33)  # the strides drawn
lane = np.arange(32)
ways = {s: column_ways(runs[s]) for s in BANK_MAP}


def draw_bank_map(shown=BANK_MAP):
    from matplotlib.colors import LogNorm

    fig, axes = figure(1, len(shown), figsize=(2.3 * len(shown), 3.2), sharey=True)
    for ax, s in zip(axes, shown):
        bank = lane * s % 32
        hits = np.bincount(bank, minlength=32)
        assert hits.max() == ways[s]  # the picture shows the simulator's count
        ax.scatter(bank, lane, s=14, c=hits[bank], cmap="Blues", norm=LogNorm(0.25, 32), edgecolors="k", linewidths=0.3)
        ax.set_xlim(-1, 32)
        ax.set_ylim(-1, 32)
        ax.set_xticks([0, 8, 16, 24, 31])
        ax.set_title(str(_("stride {s}: {ways:.0f}-way", s=s, ways=ways[s])), fontsize=9)
        ax.set_xlabel("bank")
    axes[0].set_ylabel("lane")
    fig.tight_layout()
    return fig


banks_used = {s: len(np.unique(lane * s % 32)) for s in BANK_MAP}
used = Listing(_("{banks} ({ways:.0f}-way) for stride {s}", banks=banks_used[s], ways=ways[s], s=s) for s in BANK_MAP)
bank_figure = Figure(
    draw_bank_map,
    alt=_("Which bank each of a warp's {lanes} lanes lands in, for strides of {strides} words. Banks used: {used}.",
          lanes=lane.size, strides=Listing(BANK_MAP), used=used),
    caption=_("Each dot is the bank (across) one lane (up) reads; the darker, the more lanes crowd into that "
              "bank. Stride 2 uses half the banks ({w2:.0f}-way); stride 32 puts every lane in bank 0 "
              "({w32:.0f}-way); one word of padding (stride 33) spreads the 32 lanes over {b33} banks again.",
              w2=ways[2], w32=ways[32], b33=banks_used[33]),
)
# --8<-- [end:bank_figure]


# %%
bank_figure  # a notebook draws the figure here; the lecture page shows it with show()


# %% [markdown]
# ## 演示 2：忘了 `__syncthreads()` · Demo 2: the missing `__syncthreads()`

# %%
# --8<-- [start:reverse_table]
from simtdocs.docs import Table, _, glue


def reverse_table(threads, runs):
    """The table of §6.2 from {sync: (stats, result correct)}; glues the race and the numbers the prose quotes."""
    rows = [(_("present") if sync else _("missing"), _("yes") if ok else _("no"), len(st.races))
            for sync, (st, ok) in runs.items()]
    glue("p2_reverse_race", runs[False][0].races[0].message)
    glue("p2_rev_threads", threads)
    glue("p2_rev_warps", threads // 32)
    glue("p2_rev_last", threads - 1)  # thread 0 reads what this thread wrote
    glue("p2_rev_last_warp", (threads - 1) // 32)
    return Table(rows, ["__syncthreads()", _("correct"), _("races")])
# --8<-- [end:reverse_table]


# %%
# --8<-- [start:reverse]
def reverse(blk, d, sync):
    buf = blk.shared(256, np.float32, name="buf")
    t = blk.tx
    blk.store(buf, t, blk.load(d, t))
    if sync:
        blk.sync()                                   # the line the buggy version forgets
    mirror = 255 - t                                 # written by another warp, for every t
    blk.store(d, t, blk.load(buf, mirror))


threads = 256  # the size of buf in the kernel
runs = {}
for sync in (True, False):
    d = np.arange(threads, dtype=np.float32)
    st = launch(reverse, grid=1, block=threads, args=(d, sync))
    runs[sync] = (st, np.array_equal(d, np.arange(threads)[::-1]))
show(reverse_table(threads, runs))
print("```text", *st.races, "```", sep="\n")  # the races of the run without sync
# --8<-- [end:reverse]


# %% [markdown]
# ## 演示 3：并行归约的五个版本 · Demo 3: five versions of a parallel reduction
#
# Each block reduces its part of `x` to one partial sum in `out`; the host adds the partial
# sums. Besides the loads, stores, branches and barriers the simulator sees, every version
# declares its arithmetic with `blk.alu`: per step, one instruction of index arithmetic for
# every thread (the modulo of v1, `2*s*tid` of v2, `tid + s` of v3–v5) and one add for the
# threads that work. Loop control and address arithmetic the compiler folds into the load
# are not counted.

# %%
# --8<-- [start:reduce_v1]
def reduce_v1(blk, x, out):
    """Interleaved addressing: thread tid works when tid is a multiple of 2s (divergent)."""
    sdata = blk.shared(256, np.float32, name="sdata")
    tid = blk.tx
    blk.store(sdata, tid, blk.load(x, blk.bx * blk.bdx + tid))
    blk.sync()
    s = 1
    while s < blk.bdx:
        blk.alu(1)                                   # tid % (2 * s)
        w = blk.branch(tid % (2 * s) == 0)           # if (tid % (2*s) == 0)
        v = blk.load(sdata, tid, mask=w) + blk.load(sdata, tid + s, mask=w)
        blk.alu(1, mask=w)                           # the add
        blk.store(sdata, tid, v, mask=w)
        blk.sync()
        s *= 2
    blk.store(out, blk.bx, blk.load(sdata, 0 * tid, mask=tid == 0), mask=tid == 0)
# --8<-- [end:reduce_v1]


# %%
# --8<-- [start:reduce_v2]
def reduce_v2(blk, x, out):
    """Strided index: contiguous threads work (no divergence), but with a stride of 2s words."""
    sdata = blk.shared(256, np.float32, name="sdata")
    tid = blk.tx
    blk.store(sdata, tid, blk.load(x, blk.bx * blk.bdx + tid))
    blk.sync()
    s = 1
    while s < blk.bdx:
        index = 2 * s * tid
        blk.alu(1)                                   # index = 2 * s * tid
        w = blk.branch(index < blk.bdx)              # if (index < blockDim.x)
        v = blk.load(sdata, index, mask=w) + blk.load(sdata, index + s, mask=w)
        blk.alu(1, mask=w)
        blk.store(sdata, index, v, mask=w)
        blk.sync()
        s *= 2
    blk.store(out, blk.bx, blk.load(sdata, 0 * tid, mask=tid == 0), mask=tid == 0)
# --8<-- [end:reduce_v2]


# %%
# --8<-- [start:reduce_v3]
def reduce_v3(blk, x, out):
    """Sequential addressing: the first s threads add the upper half onto the lower half."""
    sdata = blk.shared(256, np.float32, name="sdata")
    tid = blk.tx
    blk.store(sdata, tid, blk.load(x, blk.bx * blk.bdx + tid))
    blk.sync()
    s = blk.bdx // 2
    while s > 0:
        blk.alu(1)                                   # tid + s
        w = blk.branch(tid < s)                      # if (tid < s)
        v = blk.load(sdata, tid, mask=w) + blk.load(sdata, tid + s, mask=w)
        blk.alu(1, mask=w)
        blk.store(sdata, tid, v, mask=w)
        blk.sync()
        s //= 2
    blk.store(out, blk.bx, blk.load(sdata, 0 * tid, mask=tid == 0), mask=tid == 0)
# --8<-- [end:reduce_v3]


# %%
# --8<-- [start:reduce_v4]
def reduce_v4(blk, x, out):
    """First add during the load: each block sums 2 × 256 elements, half the blocks."""
    sdata = blk.shared(256, np.float32, name="sdata")
    tid = blk.tx
    i = blk.bx * (2 * blk.bdx) + tid
    v = blk.load(x, i) + blk.load(x, i + blk.bdx)
    blk.alu(1)                                       # the first add
    blk.store(sdata, tid, v)
    blk.sync()
    s = blk.bdx // 2
    while s > 0:
        blk.alu(1)
        w = blk.branch(tid < s)
        v = blk.load(sdata, tid, mask=w) + blk.load(sdata, tid + s, mask=w)
        blk.alu(1, mask=w)
        blk.store(sdata, tid, v, mask=w)
        blk.sync()
        s //= 2
    blk.store(out, blk.bx, blk.load(sdata, 0 * tid, mask=tid == 0), mask=tid == 0)
# --8<-- [end:reduce_v4]


# %%
# --8<-- [start:reduce_v5]
def reduce_v5(blk, x, out):
    """As v4 down to 64 partial sums; then warp 0 finishes in registers with shuffles."""
    sdata = blk.shared(256, np.float32, name="sdata")
    tid = blk.tx
    i = blk.bx * (2 * blk.bdx) + tid
    v = blk.load(x, i) + blk.load(x, i + blk.bdx)
    blk.alu(1)
    blk.store(sdata, tid, v)
    blk.sync()
    s = blk.bdx // 2
    while s > 32:
        blk.alu(1)
        w = blk.branch(tid < s)
        v = blk.load(sdata, tid, mask=w) + blk.load(sdata, tid + s, mask=w)
        blk.alu(1, mask=w)
        blk.store(sdata, tid, v, mask=w)
        blk.sync()
        s //= 2
    w = blk.branch(tid < 32)                         # warp 0 only: a warp-uniform branch
    v = blk.load(sdata, tid, mask=w) + blk.load(sdata, tid + 32, mask=w)
    blk.alu(1, mask=w)
    for delta in (16, 8, 4, 2, 1):                   # __shfl_down_sync(FULL_MASK, v, delta)
        v = v + blk.shfl_down(v, delta, mask=w)
        blk.alu(1, mask=w)
    blk.store(out, blk.bx, v, mask=tid == 0)
# --8<-- [end:reduce_v5]


# %%
# --8<-- [start:reduction_table]
from simtdocs import H100
from simtdocs.docs import Table, _, glue

VERSION = {"v1": _("v1 interleaved (divergent)"), "v2": _("v2 strided index (bank conflicts)"),
           "v3": _("v3 sequential addressing"), "v4": _("v4 first add during load"),
           "v5": _("v5 last warp with shuffles")}


def reduction_table(x, threads, runs):
    """The table of §6.3 from {version: (stats, sum correct)} of a reduction of x with blocks of
    `threads`; glues the numbers the prose quotes."""
    read_input_s = x.nbytes / H100.memory_bandwidth      # the floor: read every input byte once
    rows = []
    for name, (st, ok) in runs.items():
        t = st.estimate_time()
        rows.append((VERSION[name], st.blocks, st.warp_instructions, st.divergent_branches, st.shared_ways,
                     t.issue_s * 1e9, t.issue_s / read_input_s,
                     _("instruction issue") if t.issue_s > read_input_s else _("bandwidth"),
                     _("yes") if ok else _("no")))
    red = {name: st for name, (st, ok) in runs.items()}
    assert red["v2"].warp_instructions == red["v3"].warp_instructions
    glue("p2_red_read_ns", read_input_s * 1e9, ",.0f")
    glue("p2_red_mib", x.nbytes / 2**20, ".0f")
    glue("p2_red_log2n", int(np.log2(x.size)))
    glue("p2_red_threads", threads)
    glue("p2_red_s0", threads // 2)  # the first step of versions 3-5
    glue("p2_red_v4_elems", 2 * threads)  # elements per block from version 4 on
    glue("p2_red_v5_left", 2 * 32)  # version 5 hands the last 64 partial sums to warp 0
    for v, st in red.items():
        glue(f"p2_red_{v}_instr", st.warp_instructions)
        glue(f"p2_red_{v}_issue_ns", st.estimate_time().issue_s * 1e9, ",.0f")
        glue(f"p2_red_{v}_ways", st.shared_ways, ".2f")
        glue(f"p2_red_{v}_div", st.divergent_branches)
    glue("p2_red_div_removed", 1 - red["v2"].divergent_branches / red["v1"].divergent_branches, ".0%")
    glue("p2_red_v5_share", red["v5"].warp_instructions / red["v1"].warp_instructions, ".0%")
    return Table(rows, [_("version"), _("blocks"), _("warp instructions"), _("divergent branches"),
                        _("shared wavefronts per request"), _("estimated issue time (ns)"),
                        _("issue time / time to read the input"), _("bound by"), _("correct")],
                 fmt=[None, ",", ",", ",", ".2f", ",.0f", ".2f", None, None])
# --8<-- [end:reduction_table]


# %%
# --8<-- [start:reduction_launch]
LOG2_N, threads = 18, 256  # 2^18 inputs; blocks of 256 threads (the size of sdata in the kernels)
n = 1 << LOG2_N
x = np.random.default_rng(6).random(n, dtype=np.float32)
versions = {"v1": (reduce_v1, 1), "v2": (reduce_v2, 1), "v3": (reduce_v3, 1),  # kernel, elements per thread
            "v4": (reduce_v4, 2), "v5": (reduce_v5, 2)}
runs = {}
for name, (kernel, per_thread) in versions.items():
    out = np.zeros(n // (threads * per_thread), np.float32)
    st = launch(kernel, grid=out.size, block=threads, args=(x, out))
    runs[name] = (st, np.isclose(out.astype(np.float64).sum(), x.astype(np.float64).sum(), rtol=1e-5))
show(reduction_table(x, threads, runs))
# --8<-- [end:reduction_launch]


# %% [markdown]
# ## 演示 4：warp shuffle · Demo 4: warp shuffles

# %%
# --8<-- [start:shuffle_table]
from simtdocs.docs import Table, _, glue

DELTAS = (16, 8, 4, 2, 1)  # the shfl_down distances of shuffle_steps


def shuffle_table(trace, stats):
    """The table of §6.4: lanes 0-3 and 31 after each round (trace has one row per round, the first
    the start); glues the sum and the shuffles."""
    rows = [(_("start") if k == 0 else f"shfl_down {d}", *trace[k, :4].astype(int), int(trace[k, 31]))
            for k, d in enumerate((0, *DELTAS))]
    glue("p2_shfl_sum", int(trace[-1, 0]))
    glue("p2_shfl_shuffles", stats.shuffles)
    return Table(rows, [_("step"), "lane 0", "lane 1", "lane 2", "lane 3", "lane 31"])
# --8<-- [end:shuffle_table]


# %%
# --8<-- [start:shuffle]
def shuffle_steps(blk, x, trace):
    v = blk.load(x, blk.tx)
    blk.store(trace, blk.tx, v)
    for step, delta in enumerate((16, 8, 4, 2, 1), start=1):
        v = v + blk.shfl_down(v, delta)              # lane l adds the value of lane l + delta
        blk.store(trace, step * 32 + blk.tx, v)


x = np.arange(32, dtype=np.float32)
trace = np.zeros(6 * 32, np.float32)
st = launch(shuffle_steps, grid=1, block=32, args=(x, trace))
trace = trace.reshape(6, 32)  # one row per round, the first the start
assert trace[-1, 0] == x.sum()  # lane 0 holds the sum
show(shuffle_table(trace, st))
# --8<-- [end:shuffle]
