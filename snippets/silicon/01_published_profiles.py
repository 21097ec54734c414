# %% [markdown]
# # 代码 01：发表的计数与模拟器的计数 · Code 01: published counts and the simulator's
#
# 把公开发表的 Nsight Compute 计数放在 simtdocs 对同一内核算出的计数旁边。
# 每个内核都按来源自己的代码改写；每个发表的数字都注明出处，并钉在一个提交或日期上。
# Published Nsight Compute counts beside the counts simtdocs computes for the same kernels.
# Each kernel is rewritten from the source's own code; each published number names its
# source, pinned to a commit or a date.
#
# Run it alone: `python snippets/silicon/01_published_profiles.py`

# %%
# --8<-- [start:setup]
import numpy as np

from simtdocs import launch
from simtdocs.devices import A100_40GB, V100
from simtdocs.display import show
from simtdocs.i18n import _
from simtdocs.lectures import silicon as lecture  # the tables of this page
from simtdocs.lectures.silicon import Published, Source
# --8<-- [end:setup]


# %% [markdown]
# ## 来源 · Sources
#
# 每个来源都读过原文：提交里的文件，或论坛帖子本身。
# Every source was read in full: the files of the commit, or the forum post itself.

# %%
# --8<-- [start:sources]
HW8 = Source(
    "A", "eduardo4jesus/cuda-training-series",
    "https://github.com/eduardo4jesus/cuda-training-series/tree/2cce63d99119d0aee2bb78e331497ff6abca9492/exercises/hw8",
    "2cce63d (2022-06-08)", "RTX 3070 Laptop GPU (GA104)",
    _("ncu output of hw8 task1, task2, task3 (task*.profile); the GPU is named in all_metrics.md"))
HW8_B = Source(
    "B", "SeungjaeLim/cuda-training-series",
    "https://github.com/SeungjaeLim/cuda-training-series/blob/873248e492987fbd460ee5348f6c57404c69f0b9/exercises/hw8/result.md",
    "873248e", _("not stated"),
    _("ncu results of hw8 (result.md); the kernel in task2/task2.cu at c691d83"))
LDS128 = Source(
    "C", "forums.developer.nvidia.com, “bank_conflicts metric vs wavefronts for shared memory LDS.128”",
    "https://forums.developer.nvidia.com/t/clarification-bank-conflicts-metric-vs-wavefronts-for-shared-memory-lds-128/359822",
    _("thread 359822, read 2026-12-01"), _("not stated"),
    _("the question's table of ncu counts for two shared-memory layouts"))
NERSC = Source(
    "D", "mgawan/nersc_cuda_tutorial",
    "https://github.com/mgawan/nersc_cuda_tutorial/tree/a667b5ac6c3b43ce47739ea854356038bdf10e8c/Session-2",
    "a667b5a (2020-07-01)", "V100",
    _("Session-2: README.md (the counts it says to expect), vec_add.cu, transactions.sh"))
INSPECTOR = Source(
    "E", "pc2/GPUInspector.jl",
    "https://github.com/pc2/GPUInspector.jl/tree/83ce4ac3476e1afe96aa89a6a4e8adb723559087/docs/src/devices",
    "83ce4ac (2022-03-10)", "A100-SXM4-40GB, V100-SXM2-32GB",
    _("docs/src/devices/a100_sxm2.md and v100_sxm2.md; src/memory_bandwidth_saxpy.jl"))
SOURCES = (HW8, HW8_B, LDS128, NERSC, INSPECTOR)
show(lecture.sources_table(SOURCES))
# --8<-- [end:sources]


# %% [markdown]
# ## A：hw8 的矩阵转置 · A: the transposes of hw8
#
# OLCF CUDA 培训第 8 次作业：4096×4096 的 double 矩阵，32×32 的线程块。
# INDX(row, col, ld) 是按列存储的下标，和 C 源码里的宏一样。
# Homework 8 of the OLCF CUDA training series: a 4096×4096 matrix of doubles, 32×32
# threads per block. INDX(row, col, ld) is the column-major index of the C macro.

# %%
# --8<-- [start:transpose_kernels]
def INDX(row, col, ld):
    return col * ld + row  # #define INDX( row, col, ld ) ( ( (col) * (ld) ) + (row) )


def naive_cuda_transpose(blk, m, a, c):
    """task1.cu: each thread copies one element across the diagonal."""
    my_row = blk.bdx * blk.bx + blk.tx
    my_col = blk.bdy * blk.by + blk.ty
    inside = (my_row < m) & (my_col < m)
    v = blk.load(a, INDX(my_col, my_row, m), mask=inside)  # neighbours read m apart
    blk.store(c, INDX(my_row, my_col, m), v, mask=inside)  # neighbours write neighbours


def smem_cuda_transpose(blk, m, a, c, pad=0):
    """task2.cu (pad=0) and task3.cu (pad=1): through a shared 32×(32+pad) tile of doubles."""
    tile = blk.shared((32, 32 + pad), np.float64, name="smemArray")
    my_row = blk.bdx * blk.bx + blk.tx
    my_col = blk.bdy * blk.by + blk.ty
    tile_x = blk.bdx * blk.bx
    tile_y = blk.bdy * blk.by
    inside = (my_row < m) & (my_col < m)
    v = blk.load(a, INDX(tile_x + blk.tx, tile_y + blk.ty, m), mask=inside)
    blk.store(tile, (blk.tx, blk.ty), v, mask=inside)  # smemArray[threadIdx.x][threadIdx.y]
    blk.sync()
    w = blk.load(tile, (blk.ty, blk.tx), mask=inside)  # smemArray[threadIdx.y][threadIdx.x]
    blk.store(c, INDX(tile_y + blk.tx, tile_x + blk.ty, m), w, mask=inside)
# --8<-- [end:transpose_kernels]


# %%
# --8<-- [start:transpose_launch]
SIZE, THREADS = 4096, 32  # #define SIZE 4096; THREADS_PER_BLOCK_X = _Y = 32
a = np.random.default_rng(26).random(SIZE * SIZE)  # doubles, as in the source
expected = a.reshape(SIZE, SIZE).T.reshape(-1)
grid = (SIZE // THREADS, SIZE // THREADS)


def run(kernel, *extra):
    c = np.zeros_like(a)
    stats = launch(kernel, grid=grid, block=(THREADS, THREADS), args=(SIZE, a, c, *extra), device=A100_40GB)
    assert np.array_equal(c, expected), kernel.__name__
    return stats


def line(stats, text):
    """The counters of the kernel line that contains ``text`` (one line per SASS instruction here)."""
    found = [lc.counters for lc in stats.lines if text in lc.site.source]
    assert len(found) == 1, text
    return found[0]


naive = run(naive_cuda_transpose)
tiled = run(smem_cuda_transpose, 0)
padded = run(smem_cuda_transpose, 1)
# --8<-- [end:transpose_launch]


# %%
# --8<-- [start:transpose_figures]
def bytes_per_wavefront(stats):
    """smsp__sass_average_data_bytes_per_wavefront_mem_shared.pct: bytes the lanes moved over
    128 bytes per wavefront, over every shared instruction of the kernel (8-byte doubles here)."""
    shared = [lc.counters for lc in stats.lines if lc.counters.shared_requests]
    moved = sum(c.active_lanes for c in shared) * 8
    return round(100 * moved / (128 * sum(c.shared_wavefronts for c in shared)), 2)


naive_ld, naive_st = line(naive, "blk.load(a"), line(naive, "blk.store(c")
figures = [  # published values: task1/task1.profile, task2/task2.profile, task3/task3.profile (source A)
    Published(HW8, _("naive transpose"), "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
              524_288, naive_ld.requests),
    Published(HW8, _("naive transpose"), "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
              16_777_216, naive_ld.sectors),
    Published(HW8, _("naive transpose"), "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
              4_194_304, naive_st.sectors),
    Published(HW8, _("naive transpose"), "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct",
              25, round(100 * naive_ld.coalescing_efficiency, 2)),
    Published(HW8, _("shared tile 32×32"), "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
              17_061_038, line(tiled, "blk.store(tile").shared_wavefronts),
    Published(HW8, _("shared tile 32×32"), "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
              16_012_462, line(tiled, "blk.store(tile").shared_bank_conflicts),
    Published(HW8, _("shared tile 32×32"), "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
              1_048_664, line(tiled, "blk.load(tile").shared_wavefronts),
    Published(HW8, _("shared tile 32×32"), "smsp__sass_average_data_bytes_per_wavefront_mem_shared.pct",
              11.76, bytes_per_wavefront(tiled)),
    Published(HW8, _("shared tile 32×33"), "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
              1_048_576, line(padded, "blk.load(tile").shared_wavefronts),
    Published(HW8, _("shared tile 32×33"), "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
              241_690, line(padded, "blk.store(tile").shared_bank_conflicts),
    Published(HW8, _("shared tile 32×33"), "smsp__sass_average_data_bytes_per_wavefront_mem_shared.pct",
              100, bytes_per_wavefront(padded)),
]
# --8<-- [end:transpose_figures]


# %% [markdown]
# ## A，用 CUDA 的写法 · A, written the CUDA way
#
# 同样三个内核，按 numba.cuda 的逐线程写法，由 simtdocs.cuda 编译到同一个引擎上；
# 计数必须和上面的 blk 版本一样。
# The same three kernels in numba.cuda's per-thread dialect, compiled by simtdocs.cuda onto
# the same engine; their counts must be those of the blk versions above.

# %%
# --8<-- [start:cuda_dialect]
from numpy import float64

from simtdocs import cuda


@cuda.jit
def naive_transpose_cuda(m, a, c):
    myRow = cuda.blockDim.x * cuda.blockIdx.x + cuda.threadIdx.x
    myCol = cuda.blockDim.y * cuda.blockIdx.y + cuda.threadIdx.y
    if myRow < m and myCol < m:
        c[myCol * m + myRow] = a[myRow * m + myCol]  # c[INDX(myRow, myCol, m)] = a[INDX(myCol, myRow, m)]


@cuda.jit
def smem_transpose_cuda(m, a, c):
    smemArray = cuda.shared.array((32, 32), float64)
    myRow = cuda.blockDim.x * cuda.blockIdx.x + cuda.threadIdx.x
    myCol = cuda.blockDim.y * cuda.blockIdx.y + cuda.threadIdx.y
    tileX = cuda.blockDim.x * cuda.blockIdx.x
    tileY = cuda.blockDim.y * cuda.blockIdx.y
    if myRow < m and myCol < m:
        smemArray[cuda.threadIdx.x, cuda.threadIdx.y] = a[(tileY + cuda.threadIdx.y) * m + tileX + cuda.threadIdx.x]
    cuda.syncthreads()
    if myRow < m and myCol < m:
        c[(tileX + cuda.threadIdx.y) * m + tileY + cuda.threadIdx.x] = smemArray[cuda.threadIdx.y, cuda.threadIdx.x]


@cuda.jit
def padded_transpose_cuda(m, a, c):
    smemArray = cuda.shared.array((32, 33), float64)  # THREADS_PER_BLOCK_Y+1
    myRow = cuda.blockDim.x * cuda.blockIdx.x + cuda.threadIdx.x
    myCol = cuda.blockDim.y * cuda.blockIdx.y + cuda.threadIdx.y
    tileX = cuda.blockDim.x * cuda.blockIdx.x
    tileY = cuda.blockDim.y * cuda.blockIdx.y
    if myRow < m and myCol < m:
        smemArray[cuda.threadIdx.x, cuda.threadIdx.y] = a[(tileY + cuda.threadIdx.y) * m + tileX + cuda.threadIdx.x]
    cuda.syncthreads()
    if myRow < m and myCol < m:
        c[(tileX + cuda.threadIdx.y) * m + tileY + cuda.threadIdx.x] = smemArray[cuda.threadIdx.y, cuda.threadIdx.x]


pairs = []
for label, by_blk, kernel in ((_("naive transpose"), naive, naive_transpose_cuda),
                              (_("shared tile 32×32"), tiled, smem_transpose_cuda),
                              (_("shared tile 32×33"), padded, padded_transpose_cuda)):
    c = np.zeros_like(a)
    by_cuda = kernel[grid, (THREADS, THREADS)](SIZE, a, c)  # the launch returns its Stats
    assert np.array_equal(c, expected), label
    pairs.append((label, by_blk, by_cuda))
show(lecture.dialect_table(pairs))
# --8<-- [end:cuda_dialect]


# %% [markdown]
# ## B：同一作业的另一次运行 · B: another run of the same homework
#
# 这份解答在读共享内存时转置（smemArray[threadIdx.x][threadIdx.y]），网格多启动一行一列
# 什么也不做的线程块；每个 32×32 的块留在原位，只在块内转置。计数与这些无关。
# This solution transposes on the shared read (smemArray[threadIdx.x][threadIdx.y]) and
# launches one extra row and column of blocks that do nothing; each 32×32 tile stays in
# place and is transposed within itself. None of this changes a count.

# %%
# --8<-- [start:transpose_on_read]
def smem_transpose_on_read(blk, m, a, c):
    """SeungjaeLim's task2.cu: the tile is written by rows and read down its columns."""
    tile = blk.shared((32, 32), np.float64, name="smemArray")
    my_row = blk.bdx * blk.bx + blk.tx
    my_col = blk.bdy * blk.by + blk.ty
    tile_x = blk.bdx * blk.bx
    tile_y = blk.bdy * blk.by
    inside = (my_row < m) & (my_col < m)
    v = blk.load(a, INDX(tile_x + blk.tx, tile_y + blk.ty, m), mask=inside)
    blk.store(tile, (blk.ty, blk.tx), v, mask=inside)  # smemArray[threadIdx.y][threadIdx.x]
    blk.sync()
    w = blk.load(tile, (blk.tx, blk.ty), mask=inside)  # smemArray[threadIdx.x][threadIdx.y]
    blk.store(c, INDX(tile_x + blk.tx, tile_y + blk.ty, m), w, mask=inside)


c = np.zeros_like(a)
on_read = launch(smem_transpose_on_read, grid=(SIZE // THREADS + 1, SIZE // THREADS + 1),
                 block=(THREADS, THREADS), args=(SIZE, a, c), device=A100_40GB)
tiles = a.reshape(SIZE // THREADS, THREADS, SIZE // THREADS, THREADS)
assert np.array_equal(c, tiles.transpose(0, 3, 2, 1).reshape(-1))  # every tile transposed in place
figures += [  # published values: result.md, column "Task 2" (source B)
    Published(HW8_B, _("shared tile 32×32, read by columns"), "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
              16_841_523, line(on_read, "blk.load(tile").shared_wavefronts),
    Published(HW8_B, _("shared tile 32×32, read by columns"), "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
              15_792_947, line(on_read, "blk.load(tile").shared_bank_conflicts),
]
# --8<-- [end:transpose_on_read]


# %% [markdown]
# ## C：LDS.128 的 wavefront · C: the wavefronts of LDS.128
#
# 帖子只给了计数，没有给代码：每个线程从共享内存读一个 float4（16 字节），两种布局。
# 这里的内核是我们按它的描述写的：相邻 lane 相隔 16 字节，或者相隔 128 字节。
# The post gives counts, not code: each thread reads one float4 (16 bytes) from shared
# memory, in two layouts. The kernel here is ours, after its description: neighbouring
# lanes 16 bytes apart, or 128 bytes apart.

# %%
# --8<-- [start:lds128]
def lds128(blk, out, floats_apart):
    """Each lane reads a float4 (LDS.128) starting floats_apart floats after its neighbour's."""
    buf = blk.shared(32 * 32, np.float32, name="buf")
    for k in range(8):  # fill the buffer, 32 float4 at a time
        blk.store(buf, (32 * k + blk.tx) * 4, np.full((1, 32, 4), k, np.float32), width=4)
    blk.sync()
    v = blk.load(buf, blk.tx * floats_apart, width=4)  # the LDS.128 of the post
    blk.store(out, blk.tx * 4, v, width=4)


def lds128_per_instruction(floats_apart):
    out = np.zeros(32 * 4, np.float32)
    counts = line(launch(lds128, grid=1, block=32, args=(out, floats_apart)), "blk.load(buf")
    return counts.shared_wavefronts / counts.shared_requests, counts.shared_bank_conflicts / counts.shared_requests


INSTRUCTIONS = 8_844_480  # sass__inst_executed_shared_loads, both layouts (source C)
bad, good = lds128_per_instruction(32), lds128_per_instruction(4)
figures += [  # published: the post's counts of each layout over its 8,844,480 instructions (source C)
    Published(LDS128, _("LDS.128, lanes 128 B apart"), "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld / inst",
              283_023_360 / INSTRUCTIONS, bad[0]),
    Published(LDS128, _("LDS.128, lanes 128 B apart"), "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld / inst",
              247_645_440 / INSTRUCTIONS, bad[1]),
    Published(LDS128, _("LDS.128, lanes 16 B apart"), "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld / inst",
              35_377_920 / INSTRUCTIONS, good[0]),
]
# --8<-- [end:lds128]


# %% [markdown]
# ## D：跨步的向量加法 · D: a strided vector add
#
# NERSC 教程的 vector_add_kernel_memory：每个线程处理 stride_size 个相邻元素。
# 教程用 2^25 个元素；这里用 2^15 个，每次迭代里 warp 的访问模式与规模无关。
# The NERSC tutorial's vector_add_kernel_memory: each thread handles stride_size
# neighbouring elements. The tutorial uses 2^25 elements; 2^15 here: a warp's accesses in
# each iteration are the same at any size.

# %%
# --8<-- [start:strided]
def vector_add_kernel_memory(blk, A, B, C, size, stride_size):
    idx = blk.tx + blk.bx * blk.bdx
    total_threads = blk.gdx * blk.bdx
    strides_per_thread = size // (total_threads * stride_size)
    for j in range(strides_per_thread):
        stride_begin = stride_size * idx + j * stride_size * total_threads
        for k in range(stride_size):  # for (i = stride_begin; i < stride_end; i++)
            i = stride_begin + k
            x = blk.load(A, i)
            y = blk.load(B, i)
            blk.store(C, i, x + y)


BLOCKS, THREADS_1D, DATA_SIZE = 4, 256, 2**15  # blocks = 4, threads = 256 as the README sets them
SOURCE_DATA_SIZE = 1024 * 1024 * 32  # #define DATA_SIZE 1024*1024*32 in vec_add.cu


def load_sectors_per_request(stride):
    rng = np.random.default_rng(stride)
    A, B = rng.random(DATA_SIZE, np.float32), rng.random(DATA_SIZE, np.float32)
    C = np.zeros(DATA_SIZE, np.float32)
    stats = launch(vector_add_kernel_memory, grid=BLOCKS, block=THREADS_1D, args=(A, B, C, DATA_SIZE, stride),
                   device=V100)
    assert np.array_equal(C, A + B)
    loads = [lc.counters for lc in stats.lines if "blk.load" in lc.site.source]
    return sum(c.sectors for c in loads) / sum(c.requests for c in loads)


figures += [  # published: Session-2/README.md (source D): 32 at stride 8, "halved" at stride 4
    Published(NERSC, _("strided vector add, stride 8"), "l1tex__t_sectors…_ld.sum / l1tex__t_requests…_ld.sum",
              32, load_sectors_per_request(8)),
    Published(NERSC, _("strided vector add, stride 4"), "l1tex__t_sectors…_ld.sum / l1tex__t_requests…_ld.sum",
              32 / 2, load_sectors_per_request(4)),
]
# --8<-- [end:strided]


# %% [markdown]
# ## E：SAXPY 的实测带宽 · E: the measured bandwidth of SAXPY
#
# GPUInspector.jl 的 memory_bandwidth_saxpy：z = a·x + y，带宽按 3 × 4 字节 × n 除以最短时间算（GiB/s）。
# simtdocs 的时间估计假设内存以标称峰值带宽工作。
# GPUInspector.jl's memory_bandwidth_saxpy: z = a·x + y, its bandwidth 3 × 4 bytes × n over
# the best time (GiB/s). simtdocs' time estimate assumes memory runs at its rated peak.

# %%
# --8<-- [start:saxpy]
def saxpy_gpu_kernel(blk, z, a, x, y):
    i = blk.bx * blk.bdx + blk.tx  # Julia's (blockIdx().x - 1) * blockDim().x + threadIdx().x, from 0
    inside = i < z.size
    blk.store(z, i, a * blk.load(x, i, mask=inside) + blk.load(y, i, mask=inside), mask=inside)


N_SAXPY = 2**20 * 10  # size=2^20 * 10, the default of memory_bandwidth_saxpy


def saxpy_gib_per_s(device):
    rng = np.random.default_rng(10)
    x, y = rng.random(N_SAXPY, np.float32), rng.random(N_SAXPY, np.float32)
    z = np.zeros(N_SAXPY, np.float32)
    a = np.float32(np.pi)
    stats = launch(saxpy_gpu_kernel, grid=-(-N_SAXPY // 1024), block=1024, args=(z, a, x, y), device=device)
    assert np.allclose(z, a * x + y)
    return 3 * 4 * N_SAXPY / 2**30 / stats.estimate_time().seconds


figures += [  # published: memory_bandwidth_saxpy() in a100_sxm2.md, and in v100_sxm2.md at size=2^20*200 (source E)
    Published(INSPECTOR, _("SAXPY, A100 SXM4 40GB preset"), _("3 × 4 B × n / time, GiB/s"),
              1192.09, round(saxpy_gib_per_s(A100_40GB), 2), gpu="A100-SXM4-40GB"),
    Published(INSPECTOR, _("SAXPY, V100 SXM2 preset"), _("3 × 4 B × n / time, GiB/s"),
              754.39, round(saxpy_gib_per_s(V100), 2), gpu="V100-SXM2-32GB"),
]
# --8<-- [end:saxpy]


# %%
# --8<-- [start:comparison]
show(lecture.comparison_table(figures))
# --8<-- [end:comparison]


# %%
# --8<-- [start:comparison_glue]
from simtdocs.display import glue

matched = [f for f in figures if f.exact]
glue("si_figures", len(figures))
glue("si_sources", len(SOURCES))
glue("si_matched", len(matched))
glue("si_unmatched", len(figures) - len(matched))
glue("si_size", f"{SIZE}×{SIZE}")
glue("si_block", f"{THREADS}×{THREADS}")
glue("si_warps", SIZE * SIZE // 32)  # one load and one store instruction per warp
glue("si_st_wavefronts", figures[4].published)
glue("si_st_wavefronts_sim", figures[4].simulated)
glue("si_st_conflicts", figures[5].published)
glue("si_st_conflicts_sim", figures[5].simulated)
glue("si_st_extra", figures[4].published - figures[4].simulated)
glue("si_pad_conflicts", figures[9].published)
glue("si_ld_extra_b", figures[11].published - figures[11].simulated)
glue("si_sass_pct", figures[7].published, ".2f")
glue("si_lds_bad", figures[13].published, ".0f")
glue("si_lds_good", figures[15].published, ".0f")
glue("si_lds_instructions", INSTRUCTIONS)
glue("si_nersc_size", f"{DATA_SIZE:,}")
glue("si_nersc_source_size", f"{SOURCE_DATA_SIZE:,}")
glue("si_col_bytes", THREADS * a.itemsize)  # a column step of the 32×32 tile of doubles
glue("si_lds_near", 4 * 4)  # float4 after float4
glue("si_lds_far", 32 * 4)  # 32 floats
glue("si_nersc_blocks", BLOCKS)
glue("si_nersc_threads", THREADS_1D)
glue("si_saxpy_n", "2^20 × 10")
glue("si_saxpy_a100", figures[18].published, ",.2f")
glue("si_saxpy_a100_sim", figures[18].simulated, ",.2f")
glue("si_saxpy_a100_over", figures[18].simulated / figures[18].published - 1, ".0%")
glue("si_saxpy_v100_over", figures[19].simulated / figures[19].published - 1, ".0%")
glue("si_a100_gbs", A100_40GB.memory_bandwidth / 1e9, ",.0f")
glue("si_v100_gbs", V100.memory_bandwidth / 1e9, ",.0f")
# --8<-- [end:comparison_glue]


# %% [markdown]
# ## 模型省略了什么 · What the model leaves out
#
# 同一仓库（来源 A）里，同一块 GPU 的两个公开数字：朴素转置不被分析器打扰时的用时，
# 以及 CUDA 示例 bandwidthTest 测到的设备内拷贝带宽。
# Two more public numbers of source A, on the same GPU: the naive transpose's time when no
# profiler is attached, and the device-to-device copy bandwidth of the CUDA sample bandwidthTest.

# %%
# --8<-- [start:caches]
TASK1_GPU_S = 0.000862  # task1/task1.output: "Total time GPU is 0.000862 sec" (source A)
COPY_GB_S = 351.6  # hw5/outputs-rtx-3070/bandwidthTest.output: Device to Device, 32,000,000 bytes (source A)
l1_bytes = 32 * (naive_ld.sectors + naive_st.sectors)  # what simtdocs counts at L1, loads and stores
matrix_bytes = 2 * SIZE * SIZE * a.itemsize  # read A once, write C once
l1_rate = l1_bytes / TASK1_GPU_S / 1e9  # GB/s, if every L1 sector had come from DRAM
# --8<-- [end:caches]

# %%
# --8<-- [start:caches_glue]
glue("si_task1_ms", TASK1_GPU_S * 1e3, ".3f")
glue("si_copy_gbs", COPY_GB_S, ".1f")
glue("si_l1_mb", l1_bytes / 1e6, ",.0f")
glue("si_matrix_mb", matrix_bytes / 1e6, ",.0f")
glue("si_l1_rate", l1_rate, ",.0f")
glue("si_l1_over_copy", l1_rate / COPY_GB_S, ".1f")
glue("si_matrix_rate", matrix_bytes / TASK1_GPU_S / 1e9, ",.0f")
glue("si_unused", 1 - naive_ld.coalescing_efficiency, ".0%")  # of each sector a naive load brings in
# --8<-- [end:caches_glue]


# %% [markdown]
# Nsight Compute 报告里的时钟与调度（来源 A，hw4 的 row_sums 内核）。
# Clocks and scheduling in an Nsight Compute report (source A, hw4's row_sums kernel).

# %%
# --8<-- [start:clocks]
# hw4/Profile Output - RTX 3070/matrix_sums.profile1-simple.output, row_sums (source A):
SM_MHZ = 775.67  # SM Frequency, cycle/usecond
DRAM_PCT = 23.52  # DRAM Throughput, %
ROW_SUMS_GRID, ROW_SUMS_BLOCK = 64, 256  # Grid Size, Block Size
THEORETICAL_PCT, ACHIEVED_PCT = 100, 27.92  # Theoretical and Achieved Occupancy, %
# --8<-- [end:clocks]


# %%
# --8<-- [start:clocks_glue]
glue("si_sm_mhz", SM_MHZ, ".2f")
glue("si_dram_pct", DRAM_PCT, ".2f")
glue("si_rs_grid", ROW_SUMS_GRID)
glue("si_rs_block", ROW_SUMS_BLOCK)
glue("si_rs_theoretical", THEORETICAL_PCT)
glue("si_rs_achieved", ACHIEVED_PCT, ".2f")
# --8<-- [end:clocks_glue]
