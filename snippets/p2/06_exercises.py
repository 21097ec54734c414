# %% [markdown]
# # P2 · 代码 06：练习的检查代码 · Code 06: checking the exercises
#
# §12 的十道练习：带 💻 的用模拟器验证，其余用模型或几行算术算出答案。练习 1、3、4、6、7
# 用的是正文里的内核和函数，它们只在脚本 01–04 里定义一次（见下面第二个单元格）。
# The ten exercises of §12: the 💻 ones are checked with the simulator, the others computed
# with the models or a few lines of arithmetic. Exercises 1, 3, 4, 6 and 7 use the lecture's
# own kernels and helpers, defined once in scripts 01–04 (see the second cell below).
#
# Run it alone: `python snippets/p2/06_exercises.py`

# %%
# --8<-- [start:setup]
import numpy as np

from simtdocs import H100, cdiv, latency_hiding, launch, launch_overhead, occupancy, waves
from simtdocs.display import Table, _, glue, show
# --8<-- [end:setup]


# %%
# The lecture's kernels have one definition each. On the page, each answer's code block
# includes the sections it needs with --8<--; run alone, this script loads the same sections.
from simtdocs.display import expand_snippets

for part in ("01_cuda_programming_model.py:kernel",         # vector_add (exercise 1)
             "02_memory_coalescing.py:pattern_kernel",      # one warp, any index pattern (3)
             "03_shared_memory_sync_reduction.py:bank_kernel",  # column read of a shared tile (4)
             "03_shared_memory_sync_reduction.py:reduce_v2",    # reduction versions 2 and 3 (6)
             "03_shared_memory_sync_reduction.py:reduce_v3",
             "04_occupancy_latency_waves.py:setup"):        # KB, lecture.limiter_text (7)
    exec(expand_snippets(f'--8<-- "snippets/p2/{part}"'))


# %% [markdown]
# ## 练习 1：网格大小 · Exercise 1: grid size

# %%
# --8<-- [start:ex1]
n = 1_000_000  # vector_add is the kernel of §3.2
a = np.ones(n, np.float32)
b = np.ones(n, np.float32)
rows = []
SIZES = (256, 1000, 1024)  # threads per block asked about: a multiple of 32, a round number, the limit
for threads in SIZES:
    c = np.zeros(n, np.float32)
    blocks = cdiv(n, threads)
    st = launch(vector_add, grid=(blocks,), block=(threads,), args=(a, b, c, n), device=H100)
    assert np.array_equal(c, a + b)
    rows.append((threads, blocks, blocks * threads - n, cdiv(threads, 32), st.simt_efficiency))
    glue(f"p2b_e1_blocks_{threads}", blocks, ",")
    glue(f"p2b_e1_idle_{threads}", blocks * threads - n, ",")
    glue(f"p2b_e1_simt_{threads}", st.simt_efficiency, ".1%")
    glue(f"p2b_e1_idle_warps_{threads}", (blocks * threads - n) // 32)  # warps with no thread below n
show(Table(rows, columns=[
    _("threads/block"), _("blocks"), _("idle threads"),
    _("warps/block"), _("SIMT efficiency")],
    fmt=[",", ",", ",", ",", ".1%"]))
glue("p2b_e1_last_warp", SIZES[1] % 32)  # threads in the last warp of a 1000-thread block
glue("p2b_e1_full_warps", SIZES[1] // 32)
for k, threads in enumerate(SIZES):
    glue(f"p2b_e1_t{k}", threads)
glue("p2b_e1_n", n, ",")
# --8<-- [end:ex1]


# %% [markdown]
# ## 练习 2：二维下标 · Exercise 2: 2-D indices

# %%
# --8<-- [start:ex2]
def who_am_i(blk, owner, M, N):
    """Every thread writes its own (bx, by, tx, ty), packed in one number, into its element."""
    r = blk.by * blk.bdy + blk.ty
    c = blk.bx * blk.bdx + blk.tx
    m = (r < M) & (c < N)
    me = ((blk.bx * 1000 + blk.by) * 100 + blk.tx) * 100 + blk.ty
    blk.store(owner, r * N + c, me, mask=m)


M = N = 1000
BX, BY = 32, 8  # the block shape
THREAD = {"bx": 3, "by": 5, "tx": 7, "ty": 2}  # the thread the question asks about
owner = np.full(M * N, -1, np.int64)
grid = (cdiv(N, BX), cdiv(M, BY))
launch(who_am_i, grid=grid, block=(BX, BY), args=(owner, M, N), device=H100)
assert (owner >= 0).all()  # every element has exactly one owner
flat = int(np.flatnonzero(owner == ((THREAD["bx"] * 1000 + THREAD["by"]) * 100 + THREAD["tx"]) * 100 + THREAD["ty"])[0])
glue("p2b_e2_n", N)
glue("p2b_e2_shape", f"{M}×{N}")
glue("p2b_e2_block", f"{BX}×{BY}")
glue("p2b_e2_bx_dim", BX)
glue("p2b_e2_by_dim", BY)
for k, v in THREAD.items():
    glue(f"p2b_e2_{k}", v)
row, col = divmod(flat, N)
show(Table([(f"{grid[0]} × {grid[1]}", "(3, 5, 7, 2)", row, col, flat)], columns=[
    _("grid (x × y)"), "(bx, by, tx, ty)", _("row"), _("column"),
    _("flat index")], fmt=[None, None, ",", ",", ","]))
glue("p2b_e2_gx", grid[0])
glue("p2b_e2_gy", grid[1])
glue("p2b_e2_row", row)
glue("p2b_e2_col", col)
glue("p2b_e2_flat", flat, ",")
# --8<-- [end:ex2]


# %% [markdown]
# ## 练习 3：跨度 3 的 warp · Exercise 3: a stride-3 warp

# %%
# --8<-- [start:ex3]
STRIDE = 3  # thread i reads element STRIDE * i
a = np.zeros(1024, np.float32)
rows = []
for stride in (1, STRIDE):  # pattern_kernel of §5.2: lane l reads a[index[l]]
    read = launch(pattern_kernel, grid=1, block=32, args=(a, stride * np.arange(32)), device=H100)
    rows.append((stride, read.sectors, read.requested_bytes, read.bytes_moved, read.coalescing_efficiency))
show(Table(rows, columns=[
    _("stride"), _("sectors"), _("bytes requested"),
    _("bytes moved"), _("coalescing efficiency")],
    fmt=[",", ",", ",", ",", ".0%"]))
glue("p2b_e3_sectors", read.sectors)
glue("p2b_e3_moved", read.bytes_moved)
glue("p2b_e3_needed", read.requested_bytes)
glue("p2b_e3_eff", read.coalescing_efficiency, ".0%")
glue("p2b_e3_stride", STRIDE)
glue("p2b_e3_addr1", STRIDE * 4)  # byte address of lane 1's element
glue("p2b_e3_addr2", 2 * STRIDE * 4)
glue("p2b_e3_last_addr", 31 * STRIDE * 4)  # lane 31's first byte
glue("p2b_e3_last_byte", 31 * STRIDE * 4 + 3)
# --8<-- [end:ex3]


# %% [markdown]
# ## 练习 4：按列读共享内存 · Exercise 4: reading a shared column

# %%
# --8<-- [start:ex4]
rows = []
ROW_LENGTHS = {"pow2": 64, "odd": 65, "even": 66}  # a power of two, an odd number, 2 mod 32
for key, row_len in ROW_LENGTHS.items():  # bank_kernel of §6.1: lane l reads tile[l][0]
    st = launch(bank_kernel, grid=1, block=32, args=(row_len,), device=H100)
    read = [ln.counters for ln in st.lines if ln.counters.shared_requests][-1]  # the column read
    ways = read.shared_wavefronts / read.shared_requests
    banks = len({(r * row_len) % 32 for r in range(32)})  # distinct banks the 32 rows start in
    rows.append((row_len, row_len % 32, banks, ways))
    glue(f"p2b_e4_len_{key}", row_len)
    glue(f"p2b_e4_mod_{key}", row_len % 32)
    glue(f"p2b_e4_ways_{key}", ways, ".0f")
    glue(f"p2b_e4_banks_{key}", banks)
show(Table(rows, columns=[
    _("elements per row"), _("row distance mod 32"),
    _("banks used"), _("ways (wavefronts per request)")],
    fmt=[",", ",", ",", ".0f"]))
# --8<-- [end:ex4]


# %% [markdown]
# ## 练习 5：把 sync 放进循环 · Exercise 5: sync inside the loop

# %%
# --8<-- [start:ex5]
TILE, ROWS = 32, 8


def transpose_tiled(blk, A, B, N, where="after"):
    """B = A.T through a padded 32×33 tile; ``where`` places the barrier."""
    tile = blk.shared((TILE, TILE + 1), np.float32, name="tile")
    x = blk.bx * TILE + blk.tx
    y = blk.by * TILE + blk.ty
    for j in range(0, TILE, ROWS):
        blk.store(tile, (blk.ty + j, blk.tx), blk.load(A, (y + j) * N + x))
        if where == "inside":
            blk.sync()  # after every 8 rows
    if where == "after":
        blk.sync()  # once, when the whole tile is in
    x = blk.by * TILE + blk.tx
    y = blk.bx * TILE + blk.ty
    for j in range(0, TILE, ROWS):
        blk.store(B, (y + j) * N + x, blk.load(tile, (blk.tx, blk.ty + j)))


N = 512  # the matrix of §5.3
glue("p2b_e5_size", f"{N}×{N}")
A = np.random.default_rng(0).random((N, N), dtype=np.float32)
placements = [("after", _("after the loop (original)")),
              ("inside", _("inside the first loop")),
              ("none", _("no sync at all"))]
rows = []
for where, name in placements:
    B = np.zeros_like(A)
    st = launch(transpose_tiled, grid=(N // TILE, N // TILE), block=(TILE, ROWS),
                args=(A.reshape(-1), B.reshape(-1), N, where), device=H100)
    ok = np.array_equal(B, A.T)
    rows.append((name, _("yes") if ok else _("no"), st.barriers / st.blocks, len(st.races)))
    glue(f"p2b_e5_barriers_{where}", st.barriers // st.blocks)
    glue(f"p2b_e5_races_{where}", len(st.races), ",")
show(Table(rows, columns=[
    _("where the sync is"), _("correct"),
    _("barriers per block"), _("races")],
    fmt=[None, None, ".0f", ","]))
# --8<-- [end:ex5]


# %% [markdown]
# ## 练习 6：归约版本 2 和 3 · Exercise 6: reduction versions 2 and 3

# %%
# --8<-- [start:ex6]
# reduce_v2 and reduce_v3 are the kernels of §6.3, counted the way §6.3 explains.
n, threads = 2**18, 256
x = np.random.default_rng(1).integers(0, 10, n).astype(np.float32)  # small integers: exact sums
rows, runs = [], {}
for name, kernel in (("v2", reduce_v2), ("v3", reduce_v3)):
    partial = np.zeros(n // threads, np.float32)
    st = launch(kernel, grid=n // threads, block=threads, args=(x, partial), device=H100)
    assert partial.sum() == x.sum()
    runs[name] = st
    rows.append((name, st.warp_instructions, st.shared_requests, st.shared_wavefronts,
                 st.shared_ways, st.estimate_time().issue_s * 1e9))
show(Table(rows, columns=[
    _("version"), _("warp instructions"), _("shared requests"),
    _("shared wavefronts"), _("wavefronts per request"),
    _("estimated issue time (ns)")],
    fmt=[None, ",", ",", ",", ".2f", ".0f"]))
glue("p2b_e6_instructions", runs["v2"].warp_instructions, ",")
glue("p2b_e6_threads", threads)
glue("p2b_e6_ways_v2", runs["v2"].shared_ways, ".2f")
glue("p2b_e6_ways_v3", runs["v3"].shared_ways, ".2f")
glue("p2b_e6_issue_v2", runs["v2"].estimate_time().issue_s * 1e9, ".0f")
glue("p2b_e6_issue_v3", runs["v3"].estimate_time().issue_s * 1e9, ".0f")
# --8<-- [end:ex6]


# %% [markdown]
# ## 练习 7：占用率 · Exercise 7: occupancy

# %%
# --8<-- [start:ex7]
THREADS, REGS, SMEM, SMEM_CUT = 128, 96, 32 * KB, 16 * KB  # the kernel of the question
rows = []  # KB and lecture (simtdocs.lectures.p2.occupancy) come from the setup of code 04
for smem in (SMEM, SMEM_CUT):
    occ = occupancy(THREADS, REGS, smem, device=H100)
    lim = occ.limits
    caps = f'{lim["warps"]} / {lim["registers"]} / {lim["shared memory"]}'
    rows.append((smem // KB, occ.registers_per_warp, occ.shared_per_block_allocated, caps,
                 occ.blocks_per_sm, occ.occupancy, lecture.limiter_text(occ)))
show(Table(rows, columns=[
    _("shared/block (KB)"), _("registers/warp (rounded)"),
    _("shared/block (bytes, with reserve)"),
    _("block limits: warps / registers / shared"),
    _("blocks/SM"), _("occupancy"), _("limiter")],
    fmt=[",", ",", ",", None, ",", ".1%", None], align="rrrrrrl"))
occ = occupancy(THREADS, REGS, SMEM, device=H100)
glue("p2b_e7_threads", THREADS)
glue("p2b_e7_regs", REGS)
glue("p2b_e7_smem_kb", SMEM // KB)
glue("p2b_e7_smem16_kb", SMEM_CUT // KB)
glue("p2b_e7_block_warps", THREADS // 32)
glue("p2b_reg_unit", H100.register_allocation_unit)
glue("p2b_smem_reserved_kb", H100.reserved_shared_per_block // KB)
per_part = H100.registers_per_sm // H100.sub_partitions_per_sm
glue("p2b_e7_regs_warp", occ.registers_per_warp, ",")
glue("p2b_e7_parts", H100.sub_partitions_per_sm)
glue("p2b_e7_regs_part", per_part, ",")
glue("p2b_e7_warps_part", per_part // occ.registers_per_warp)
glue("p2b_e7_reg_warps", per_part // occ.registers_per_warp * H100.sub_partitions_per_sm)
glue("p2b_e7_reg_blocks", occ.limits["registers"])
glue("p2b_e7_smem_alloc", occ.shared_per_block_allocated, ",")
glue("p2b_e7_smem_sm", H100.shared_per_sm, ",")
glue("p2b_e7_smem_blocks", occ.limits["shared memory"])
glue("p2b_e7_blocks", occ.blocks_per_sm)
glue("p2b_e7_warps", occ.warps_per_sm)
glue("p2b_e7_occ", occ.occupancy, ".1%")
glue("p2b_e7_smem16_blocks", occupancy(THREADS, REGS, SMEM_CUT, device=H100).limits["shared memory"])
# --8<-- [end:ex7]


# %% [markdown]
# ## 练习 8：利特尔定律与向量化 · Exercise 8: Little's law and vector loads

# %%
# --8<-- [start:ex8]
WARPS, REQUESTS = 16, 2  # active warps per SM; independent requests per warp after unrolling
before = latency_hiding(WARPS, requests_per_warp=1, bytes_per_request=32 * 4, device=H100)
after = latency_hiding(WARPS, requests_per_warp=REQUESTS, bytes_per_request=32 * 16, device=H100)
glue("p2b_e8_warps", WARPS)
glue("p2b_e8_requests", REQUESTS)
glue("p2b_e8_req_float", before.bytes_per_request)
glue("p2b_e8_req_float4", after.bytes_per_request)
show(Table([(_("float, 1 request"), before.in_flight_bytes, before.fraction),
            (_("float4, 2 requests"), after.in_flight_bytes, after.fraction)],
           columns=[_("version"), _("bytes in flight/SM"),
                    _("fraction of bandwidth")], fmt=[None, ",", ".0%"]))
glue("p2b_e8_need", before.needed_bytes / 1e3, ".1f")
glue("p2b_e8_before_bytes", before.in_flight_bytes, ",")
glue("p2b_e8_before", before.fraction, ".0%")
glue("p2b_e8_after_bytes", after.in_flight_bytes, ",")
glue("p2b_e8_after", after.fraction, ".0%")
# --8<-- [end:ex8]


# %% [markdown]
# ## 练习 9：波 · Exercise 9: waves

# %%
# --8<-- [start:ex9]
rows = []
SIZE = 1024  # C is SIZE × SIZE
glue("p2b_e9_c", f"{SIZE}×{SIZE}")
for tile, per_sm in ((128, 2), (64, 4)):
    wv = waves(cdiv(SIZE, tile) ** 2, blocks_per_sm=per_sm, device=H100)
    glue(f"p2b_e9_shape_{tile}", f"{tile}×{tile}")
    glue(f"p2b_e9_per_sm_{tile}", per_sm)
    rows.append((f"{tile}×{tile}", per_sm, wv.blocks, wv.capacity, wv.waves, wv.utilisation))
    glue(f"p2b_e9_blocks_{tile}", wv.blocks, ",")
    glue(f"p2b_e9_capacity_{tile}", wv.capacity, ",")
    glue(f"p2b_e9_waves_{tile}", wv.waves)
    glue(f"p2b_e9_util_{tile}", wv.utilisation, ".0%")
show(Table(rows, columns=[
    _("tile"), _("blocks/SM"), _("blocks"),
    _("blocks per wave"), _("waves"), _("SM utilisation")],
    fmt=[None, ",", ",", ",", ",", ".0%"]))
# --8<-- [end:ex9]


# %% [markdown]
# ## 练习 10：启动开销 · Exercise 10: launch overhead

# %%
# --8<-- [start:ex10]
KERNELS, GPU_MS = 300, 2  # kernels per decode step; GPU work per step in ms
glue("p2b_e10_kernels", KERNELS)
glue("p2b_e10_gpu_ms", GPU_MS)
rows = []
for us in (5, 1):
    glue(f"p2b_e10_us_{us}", us)
    step = launch_overhead(kernels=KERNELS, gpu_s=GPU_MS * 1e-3, overhead_s=us * 1e-6)
    rows.append((us, step.launch_s * 1e3, step.serial_s * 1e3, step.overlapped_s * 1e3))
    glue(f"p2b_e10_launch_{us}", step.launch_s * 1e3, ".1f")
    glue(f"p2b_e10_serial_{us}", step.serial_s * 1e3, ".1f")
    glue(f"p2b_e10_overlap_{us}", step.overlapped_s * 1e3, ".0f")
show(Table(rows, columns=[
    _("per launch (µs)"), _("launching (ms)"),
    _("serial (ms)"), _("overlapped (ms)")],
    fmt=[",", ".1f", ".1f", ".1f"]))
# --8<-- [end:ex10]
