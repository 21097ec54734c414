# %% [markdown]
# # P2 · 代码 08：一个 warp 的访存，逐个 lane 画出来 · Code 08: one warp's access, lane by lane
#
# `launch(..., trace=(block, warp))` 记下一个 warp 执行的每条访存指令：每个 lane 的字节地址，
# 以及它们落进的 32 字节 sector（全局内存）或 bank（共享内存）；`draw_access` 把其中一条画出来。
# `launch(..., trace=(block, warp))` records every memory instruction one warp executes: the byte
# address of each lane and the 32-byte sectors (global memory) or banks (shared memory) they fall in;
# `draw_access` draws one of them. The pictures of sections 5.2, 5.3, 6.1 and 6.3 of the lecture.
#
# Run it alone: `python snippets/p2/08_access_pictures.py`

# %%
# --8<-- [start:setup]
import numpy as np

from simtdocs import access_alt, access_caption, draw_access, launch
from simtdocs.display import Figure, _, glue, show


def picture(record, what):
    """One traced access as a figure, drawn in the page's language; ``what`` says which access
    it is, before the caption says how to read it."""
    return Figure(lambda: draw_access(record), alt=access_alt(record),
                  caption=_("{what} {how}", what=what, how=access_caption(record)))
# --8<-- [end:setup]


# %% [markdown]
# ## 合并访存：连续与跨度 2 · Coalescing: contiguous and stride 2
#
# 块 0 的 warp 0 读 32 个 float，每个 lane 一个：先是相邻的，再是隔一个读一个。
# Warp 0 of block 0 reads 32 floats, one per lane: next to each other, then every other one.

# %%
# --8<-- [start:coalescing]
def read(blk, a, stride):
    i = blk.bx * blk.bdx + blk.tx
    blk.load(a, stride * i)


STRIDE = 2
a = np.zeros(1024, np.float32)
contiguous = launch(read, grid=1, block=32, args=(a, 1), trace=(0, 0)).trace[0]  # warp 0 of block 0
strided = launch(read, grid=1, block=32, args=(a, STRIDE), trace=(0, 0)).trace[0]
contiguous_figure = picture(contiguous, _("Neighbouring lanes read neighbouring floats."))
strided_figure = picture(strided, _("Lane l reads float {stride}·l.", stride=STRIDE))
# --8<-- [end:coalescing]

# --8<-- [start:coalescing_numbers]
glue("p2_trace_stride", STRIDE)
glue("p2_trace_contiguous_sectors", len(contiguous.sectors))
glue("p2_trace_strided_sectors", len(strided.sectors))
glue("p2_trace_strided_wasted", strided.wasted_bytes)
glue("p2_trace_strided_moved", strided.moved_bytes)
# --8<-- [end:coalescing_numbers]
print(contiguous)
print(strided)

# %%
contiguous_figure  # a notebook draws the figure here; the lecture page shows it with show()

# %%
strided_figure


# %% [markdown]
# ## 朴素转置写一列 · The naive transpose writes a column
#
# 32×8 个线程的线程块转置一个 512×512 的矩阵；块 0 的 warp 0 是 ty = 0 的那一行：
# 它读 A 的一行里相邻的 32 个元素，再把它们写到 B 的一列上。
# Blocks of 32×8 threads transpose a 512×512 matrix; warp 0 of block 0 is the row ty = 0:
# it reads 32 neighbours of a row of A and writes them down a column of B.

# %%
# --8<-- [start:naive_write]
TILE, ROWS, N = 32, 8, 512


def transpose_naive(blk, A, B, N):
    x = blk.bx * TILE + blk.tx
    y = blk.by * TILE + blk.ty
    for j in range(0, TILE, ROWS):
        v = blk.load(A, (y + j) * N + x)
        blk.store(B, x * N + (y + j), v)


A, B = np.zeros(N * N, np.float32), np.zeros(N * N, np.float32)
stats = launch(transpose_naive, grid=(N // TILE, N // TILE), block=(TILE, ROWS), args=(A, B, N),
               trace=(0, 0))  # warp 0 of block (0, 0): the 32 threads with ty = 0
row_read, column_write = stats.trace[:2]  # the loop's first pass: one load, one store
column_figure = picture(column_write, _("The naive transpose's store: lane l writes row l of a column of B."))
# --8<-- [end:naive_write]

# --8<-- [start:naive_write_numbers]
glue("p2_trace_naive_read_sectors", len(row_read.sectors))
glue("p2_trace_naive_write_sectors", len(column_write.sectors))
glue("p2_trace_naive_write_used", column_write.used_bytes)
glue("p2_trace_naive_write_moved", column_write.moved_bytes)
glue("p2_trace_naive_write_gap", column_write.sectors[1] - column_write.sectors[0])
# --8<-- [end:naive_write_numbers]
print(column_write)

# %%
column_figure


# %% [markdown]
# ## bank 冲突与补位 · A bank conflict, and the padding that removes it
#
# lane l 先读 32×32 tile 的 tile[l][0]（一列：第 32·l 个字，全在 bank 0），
# 再读 32×33 tile 的（第 33·l 个字，在 bank l）。
# Lane l reads tile[l][0] of a 32×32 tile (a column: word 32·l, all in bank 0), then of a
# 32×33 tile (word 33·l, bank l).

# %%
# --8<-- [start:banks]
def column_read(blk, row_words):
    tile = blk.shared((32, row_words), np.float32, name="tile")
    blk.store(tile, (blk.tx, 0), 1.0)  # lane l fills the word it reads below
    blk.sync()
    blk.load(tile, (blk.tx, 0))  # lane l reads tile[l][0]: word l · row_words


ROW, PADDED_ROW = 32, 33  # words per row of the tile: tile[32][32] and tile[32][33]
conflict = launch(column_read, grid=1, block=32, args=(ROW,), trace=(0, 0)).trace[-1]  # the load
padded = launch(column_read, grid=1, block=32, args=(PADDED_ROW,), trace=(0, 0)).trace[-1]
conflict_figure = picture(conflict, _("Rows of {row} words: lane l reads word {row}·l.", row=ROW))
padded_figure = picture(padded, _("Rows of {row} words: lane l reads word {row}·l.", row=PADDED_ROW))
# --8<-- [end:banks]

# --8<-- [start:banks_numbers]
glue("p2_trace_padded_row", PADDED_ROW)
glue("p2_trace_conflict_wavefronts", len(conflict.wavefronts))
glue("p2_trace_conflict_bank", conflict.banks[0])
glue("p2_trace_padded_wavefronts", len(padded.wavefronts))
glue("p2_trace_padded_banks", len(set(padded.banks)))
# --8<-- [end:banks_numbers]
print(conflict)
print(padded)

# %%
conflict_figure

# %%
padded_figure


# %% [markdown]
# ## 归约版本 2 的跨步下标 · The strided index of reduction version 2
#
# 代码 03 的 reduce_v2：第一步（s = 1）里，warp 0 的 lane l 把 sdata[2l + 1] 加到
# sdata[2l] 上。lane l 和 lane l + 16 向同一个 bank 要两个不同的字。
# reduce_v2 of code 03: in its first step (s = 1) lane l of warp 0 adds sdata[2l + 1] onto
# sdata[2l]. Lanes l and l + 16 ask one bank for two different words.

# %%
# The kernel has one definition, in code 03; the page includes that section, and run alone
# this script loads it.
from simtdocs.display import expand_snippets

exec(expand_snippets('--8<-- "snippets/p2/03_shared_memory_sync_reduction.py:reduce_v2"'))

# %%
# --8<-- [start:reduce_trace]
x = np.ones(512, np.float32)
reduction = launch(reduce_v2, grid=2, block=256, args=(x, np.zeros(2, np.float32)), trace=(0, 0))
first_step = reduction.trace[2:5]  # after x's load and sdata[tid]'s store: s = 1 loads twice, stores once
reduce_access = max(first_step, key=lambda r: len(r.wavefronts))  # the first of the worst: sdata[2 * tid]
reduce_figure = picture(reduce_access, _("Reduction version 2, first step: lane l reads sdata[2l]."))
# --8<-- [end:reduce_trace]

# --8<-- [start:reduce_v2_numbers]
glue("p2_trace_reduce_lanes", len(reduce_access.lanes))
glue("p2_trace_reduce_wavefronts", len(reduce_access.wavefronts))
glue("p2_trace_reduce_ways", reduce_access.ways, ".0f")
glue("p2_trace_reduce_banks", len(set(reduce_access.banks)))
bank_of_lane_0 = reduce_access.banks[0]
glue("p2_trace_reduce_partner", reduce_access.lanes[reduce_access.banks.index(bank_of_lane_0, 1)])  # its next lane
# --8<-- [end:reduce_v2_numbers]
print(reduce_access)

# %%
reduce_figure
