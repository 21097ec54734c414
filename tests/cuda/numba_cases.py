"""Kernels from numba-cuda's own tests and documentation examples, with small drivers.

Every kernel is copied from NVIDIA/numba-cuda (commit b18b944, the file named beside it,
under ``numba_cuda/numba/cuda/tests/``); the driver around it is the test's own setup,
sometimes at a smaller size (numba's simulator runs a Python thread per CUDA thread).
``run()`` returns the arrays the test checks. ``test_cuda_numba.py`` runs each case in
numba's simulator and in simtdocs.cuda and compares the results exactly.

Left out, and why: warp-level operations (test_warp_ops.py; numba's simulator has none,
numba issue 8433: tests/cuda checks ours against numpy and the reference engine instead),
cooperative groups (doc_examples/test_laplace.py, test_sessionize.py, test_cg.py:
``cuda.cg.this_grid().sync()``, not modelled), random numbers (test_random.py,
test_montecarlo.py: ``numba.cuda.random``), float16 (``cuda.fp16``, test_casting's float16
cases), records and array methods inside kernels (test_record_dtype.py, test_array.py:
``a.reshape``), ``print`` tests (output order), exceptions and debug mode, the FFI and C
pointers, ufuncs and gufuncs (``@vectorize``), IPC, streams, and the dispatcher tests
(signatures, caching, typing errors), which test numba's compiler rather than what a kernel
computes; the 64-bit bit-intrinsic tests, skipped on numba's simulator, are checked against
their expected values in test_cuda_compiler.py.
"""

import numpy as np

CASES: dict[str, tuple[str, str]] = {}
#: Cases where numba's simulator does not do what numba does on a GPU (the test compares
#: simtdocs.cuda with the values the numba test itself expects).
GPU_ONLY: dict[str, tuple[str, str, dict]] = {}
#: Cases that read memory no thread wrote: numba returns whatever is there (its simulator
#: zeros); simtdocs.cuda's sanitizer reports it, naming the line.
DIAGNOSED: dict[str, tuple[str, str, str]] = {}


def case(name: str, origin: str, source: str) -> None:
    CASES[name] = (origin, source.strip("\n") + "\n")


# -- doc_examples -------------------------------------------------------------------------------

case("vecadd", "doc_examples/test_vecadd.py", '''
@cuda.jit
def f(a, b, c):
    # like threadIdx.x + (blockIdx.x * blockDim.x)
    tid = cuda.grid(1)
    size = len(c)

    if tid < size:
        c[tid] = a[tid] + b[tid]


def run():
    np.random.seed(1)
    N = 1000
    a = cuda.to_device(np.random.random(N))
    b = cuda.to_device(np.random.random(N))
    c = cuda.device_array_like(a)
    f.forall(len(a))(a, b, c)
    first = c.copy_to_host()
    nthreads = 256
    nblocks = (len(a) // nthreads) + 1
    f[nblocks, nthreads](a, b, c)
    return {"forall": first, "launch": c.copy_to_host()}
''')

case("matmul", "doc_examples/test_matmul.py", '''
@cuda.jit
def matmul(A, B, C):
    """Perform square matrix multiplication of C = A * B."""
    i, j = cuda.grid(2)
    if i < C.shape[0] and j < C.shape[1]:
        tmp = 0.0
        for k in range(A.shape[1]):
            tmp += A[i, k] * B[k, j]
        C[i, j] = tmp


def run():
    x_d = cuda.to_device(np.arange(16).reshape([4, 4]))
    y_d = cuda.to_device(np.ones([4, 4]))
    z_d = cuda.to_device(np.zeros([4, 4]))
    threadsperblock = (16, 16)
    blockspergrid = (math.ceil(4 / threadsperblock[0]), math.ceil(4 / threadsperblock[1]))
    matmul[blockspergrid, threadsperblock](x_d, y_d, z_d)
    return {"C": z_d.copy_to_host()}
''')

FAST_MATMUL = '''
TPB = 16


@cuda.jit
def fast_matmul(A, B, C):
    """
    Perform matrix multiplication of C = A * B using CUDA shared memory.

    Reference: https://stackoverflow.com/a/64198479/13697228 by @RobertCrovella
    """
    # Define an array in the shared memory
    # The size and type of the arrays must be known at compile time
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)

    x, y = cuda.grid(2)

    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bpg = cuda.gridDim.x  # blocks per grid

    # Each thread computes one element in the result matrix.
    # The dot product is chunked into dot products of TPB-long vectors.
    tmp = float32(0.0)
    for i in range(bpg):
        # Preload data into shared memory
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]

        # Wait until all threads finish preloading
        cuda.syncthreads()

        # Computes partial product on the shared memory
        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]

        # Wait until all threads finish computing
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp
'''

case("fast_matmul_square", "doc_examples/test_matmul.py", FAST_MATMUL + '''

def run():
    x_d = cuda.to_device(np.arange(16).reshape([4, 4]))
    y_d = cuda.to_device(np.ones([4, 4]))
    z_d = cuda.to_device(np.zeros([4, 4]))
    threadsperblock = (TPB, TPB)
    blockspergrid = (math.ceil(4 / TPB), math.ceil(4 / TPB))
    fast_matmul[blockspergrid, threadsperblock](x_d, y_d, z_d)
    return {"C": z_d.copy_to_host()}
''')

case("fast_matmul_nonsquare", "doc_examples/test_matmul.py", FAST_MATMUL + '''

def run():
    x_h = np.arange(115).reshape([5, 23])
    y_h = np.ones([23, 7])
    z_h = np.zeros([5, 7])
    x_d, y_d, z_d = cuda.to_device(x_h), cuda.to_device(y_h), cuda.to_device(z_h)
    threadsperblock = (TPB, TPB)
    grid_y_max = max(x_h.shape[0], y_h.shape[0])
    grid_x_max = max(x_h.shape[1], y_h.shape[1])
    blockspergrid = (math.ceil(grid_x_max / TPB), math.ceil(grid_y_max / TPB))
    fast_matmul[blockspergrid, threadsperblock](x_d, y_d, z_d)
    return {"C": z_d.copy_to_host()}
''')

case("reduction_array_sum", "doc_examples/test_reduction.py", '''
a = cuda.to_device(np.arange(1024))
nelem = len(a)


@cuda.jit
def array_sum(data):
    tid = cuda.threadIdx.x
    size = len(data)
    if tid < size:
        i = cuda.grid(1)

        # Declare an array in shared memory
        shr = cuda.shared.array(nelem, int32)
        shr[tid] = data[i]

        # Ensure writes to shared memory are visible
        # to all threads before reducing
        cuda.syncthreads()

        s = 1
        while s < cuda.blockDim.x:
            if tid % (2 * s) == 0:
                # Stride by `s` and add
                shr[tid] += shr[tid + s]
            s *= 2
            cuda.syncthreads()

        # After the loop, the zeroth  element contains the sum
        if tid == 0:
            data[tid] = shr[tid]


def run():
    array_sum[1, nelem](a)
    return {"a": a.copy_to_host()}
''')

case("globals_device_array_capture", "doc_examples/test_globals.py", '''
PRICES = cuda.to_device(np.array([10.0, 25.0, 5.0, 15.0, 30.0], dtype=np.float32))


@cuda.jit
def compute_totals(quantities, totals):
    i = cuda.grid(1)
    if i < totals.size:
        totals[i] = quantities[i] * PRICES[i]


def run():
    d_quantities = cuda.to_device(np.array([1.0, 1.0, 1.0, 1.0, 1.0], dtype=np.float32))
    d_totals = cuda.device_array(5, dtype=np.float32)
    compute_totals[1, 32](d_quantities, d_totals)
    first = d_totals.copy_to_host()
    PRICES.copy_to_device(np.array([20.0, 50.0, 10.0, 30.0, 60.0], dtype=np.float32))
    compute_totals[1, 32](d_quantities, d_totals)
    return {"first": first, "second": d_totals.copy_to_host()}
''')

# -- cudapy/test_sync.py ------------------------------------------------------------------------

case("useless_syncthreads", "cudapy/test_sync.py", '''
@cuda.jit("void(int32[::1])")
def useless_syncthreads(ary):
    i = cuda.grid(1)
    cuda.syncthreads()
    ary[i] = i


def run():
    ary = np.empty(10, dtype=np.int32)
    useless_syncthreads[1, 10](ary)
    return {"ary": ary}
''')

case("simple_smem", "cudapy/test_sync.py", '''
N = 100


@cuda.jit("void(int32[::1])")
def simple_smem(ary):
    sm = cuda.shared.array(N, int32)
    i = cuda.grid(1)
    if i == 0:
        for j in range(N):
            sm[j] = j
    cuda.syncthreads()
    ary[i] = sm[i]


def run():
    ary = np.empty(N, dtype=np.int32)
    simple_smem[1, N](ary)
    return {"ary": ary}
''')

case("coop_smem2d", "cudapy/test_sync.py", '''
@cuda.jit("void(float32[:,::1])")
def coop_smem2d(ary):
    i, j = cuda.grid(2)
    sm = cuda.shared.array((10, 20), float32)
    sm[i, j] = (i + 1) / (j + 1)
    cuda.syncthreads()
    ary[i, j] = sm[i, j]


def run():
    ary = np.empty((10, 20), dtype=np.float32)
    coop_smem2d[1, (10, 20)](ary)
    return {"ary": ary}
''')

case("dyn_shared_memory", "cudapy/test_sync.py", '''
@cuda.jit("void(float32[::1])")
def dyn_shared_memory(ary):
    i = cuda.grid(1)
    sm = cuda.shared.array(0, float32)
    sm[i] = i * 2
    cuda.syncthreads()
    ary[i] = sm[i]


def run():
    nelem = 32
    ary = np.empty(nelem, dtype=np.float32)
    dyn_shared_memory[1, nelem, 0, ary.size * ary.dtype.itemsize](ary)
    return {"ary": ary}
''')

case("threadfences", "cudapy/test_sync.py", '''
def use_threadfence(ary):
    ary[0] += 123
    cuda.threadfence()
    ary[0] += 321


def use_threadfence_block(ary):
    ary[0] += 123
    cuda.threadfence_block()
    ary[0] += 321


def use_threadfence_system(ary):
    ary[0] += 123
    cuda.threadfence_system()
    ary[0] += 321


def run():
    out = {}
    for kernel in (use_threadfence, use_threadfence_block, use_threadfence_system):
        compiled = cuda.jit("void(int32[:])")(kernel)
        ary = np.zeros(10, dtype=np.int32)
        compiled[1, 1](ary)
        out[kernel.__name__] = ary
    return out
''')

case("syncthreads_count_and_or", "cudapy/test_sync.py", '''
def use_syncthreads_count(ary_in, ary_out):
    i = cuda.grid(1)
    ary_out[i] = cuda.syncthreads_count(ary_in[i])


def use_syncthreads_and(ary_in, ary_out):
    i = cuda.grid(1)
    ary_out[i] = cuda.syncthreads_and(ary_in[i])


def use_syncthreads_or(ary_in, ary_out):
    i = cuda.grid(1)
    ary_out[i] = cuda.syncthreads_or(ary_in[i])


def run():
    out = {}
    for kernel in (use_syncthreads_count, use_syncthreads_and, use_syncthreads_or):
        compiled = cuda.jit("void(int32[:], int32[:])")(kernel)
        for name, ary_in in (("ones", np.ones(72, dtype=np.int32)), ("one_zero", np.ones(72, dtype=np.int32))):
            if name == "one_zero":
                ary_in[31] = 0
            ary_out = np.zeros(72, dtype=np.int32)
            compiled[1, 72](ary_in, ary_out)
            out[kernel.__name__ + "_" + name] = ary_out
    return out
''')

# -- cudapy/test_localmem.py, test_constmem.py ---------------------------------------------------

case("culocal", "cudapy/test_localmem.py", '''
def culocal(A, B):
    C = cuda.local.array(1000, dtype=int32)
    for i in range(C.shape[0]):
        C[i] = A[i]
    for i in range(C.shape[0]):
        B[i] = C[i]


def culocal1tuple(A, B):
    C = cuda.local.array((5,), dtype=int32)
    for i in range(C.shape[0]):
        C[i] = A[i]
    for i in range(C.shape[0]):
        B[i] = C[i]


def run():
    jculocal = cuda.jit("void(int32[:], int32[:])")(culocal)
    A = np.arange(1000, dtype="int32")
    B = np.zeros_like(A)
    jculocal[1, 1](A, B)
    jculocal1 = cuda.jit("void(int32[:], int32[:])")(culocal1tuple)
    A1 = np.arange(5, dtype="int32")
    B1 = np.zeros_like(A1)
    jculocal1[1, 1](A1, B1)
    return {"B": B, "B1": B1}
''')

case("local_dtypes", "cudapy/test_localmem.py", '''
@cuda.jit(void(int32[::1]))
def f_numba(x):
    l = cuda.local.array(10, dtype=int32)
    l[0] = x[0]
    x[0] = l[0]


@cuda.jit(void(int32[::1]))
def f_numpy(x):
    l = cuda.local.array(10, dtype=np.int32)
    l[0] = x[0]
    x[0] = l[0]


@cuda.jit(void(int32[::1]))
def f_string(x):
    l = cuda.local.array(10, dtype="int32")
    l[0] = x[0]
    x[0] = l[0]


def run():
    out = {}
    for f in (f_numba, f_numpy, f_string):
        x = np.array([7], dtype=np.int32)
        f[1, 1](x)
        out[f.__name__] = x
    return out
''')

CONST = '''
CONST_EMPTY = np.array([])
CONST1D = np.arange(10, dtype=np.float64) / 2.0
CONST2D = np.asfortranarray(np.arange(100, dtype=np.int32).reshape(10, 10))
CONST3D = ((np.arange(5 * 5 * 5, dtype=np.complex64).reshape(5, 5, 5) + 1j) / 2j)
CONST3BYTES = np.arange(3, dtype=np.uint8)
'''

case("constmem", "cudapy/test_constmem.py", CONST + '''

def cuconstEmpty(A):
    C = cuda.const.array_like(CONST_EMPTY)
    i = cuda.grid(1)
    A[i] = len(C)


def cuconst(A):
    C = cuda.const.array_like(CONST1D)
    i = cuda.grid(1)

    # +1 or it'll be loaded & stored as a u32
    A[i] = C[i] + 1.0


def cuconst2d(A):
    C = cuda.const.array_like(CONST2D)
    i, j = cuda.grid(2)
    A[i, j] = C[i, j]


def cuconstAlign(z):
    a = cuda.const.array_like(CONST3BYTES)
    b = cuda.const.array_like(CONST1D)
    i = cuda.grid(1)
    z[i] = a[i] + b[i]


def run():
    A = np.zeros_like(CONST1D)
    cuda.jit("void(float64[:])")(cuconst)[2, 5](A)
    E = np.full(1, -1, dtype=np.int64)
    cuda.jit("void(int64[:])")(cuconstEmpty)[1, 1](E)
    A2 = np.zeros_like(CONST2D)
    cuda.jit("void(int32[:,:])")(cuconst2d)[(2, 2), (5, 5)](np.ascontiguousarray(A2))
    A2c = np.ascontiguousarray(A2)
    cuda.jit("void(int32[:,:])")(cuconst2d)[(2, 2), (5, 5)](A2c)
    Z = np.zeros(len(CONST3BYTES), dtype=np.float64)
    cuda.jit("void(float64[:])")(cuconstAlign)[1, 3](Z)
    return {"A": A, "E": E, "A2": A2c, "Z": Z}
''')

case("constmem_3d_complex", "cudapy/test_constmem.py", CONST + '''

def cuconst3d(A):
    C = cuda.const.array_like(CONST3D)
    i = cuda.threadIdx.x
    j = cuda.threadIdx.y
    k = cuda.threadIdx.z
    A[i, j, k] = C[i, j, k]


def run():
    A = np.zeros_like(CONST3D, order="C")
    cuda.jit("void(complex64[:,:,:])")(cuconst3d)[1, (5, 5, 5)](A)
    return {"A": A}
''')

# -- small cudapy tests -------------------------------------------------------------------------

case("idiv", "cudapy/test_idiv.py", '''
@cuda.jit(void(float32[:, :], int32, int32))
def div(grid, l_x, l_y):
    for x in range(l_x):
        for y in range(l_y):
            grid[x, y] /= 2.0


@cuda.jit(void(float64[:, :], int32, int32))
def div_double(grid, l_x, l_y):
    for x in range(l_x):
        for y in range(l_y):
            grid[x, y] /= 2.0


def run():
    g32 = cuda.to_device(np.ones((2, 2), dtype=np.float32))
    div[1, 1](g32, 2, 2)
    g64 = cuda.to_device(np.ones((2, 2), dtype=np.float64))
    div_double[1, 1](g64, 2, 2)
    return {"f32": g32.copy_to_host(), "f64": g64.copy_to_host()}
''')

case("boolean", "cudapy/test_boolean.py", '''
def boolean_func(A, vertial):
    if vertial:
        A[0] = 123
    else:
        A[0] = 321


def run():
    func = cuda.jit("void(float64[:], bool_)")(boolean_func)
    A = np.array([0], dtype="float64")
    func[1, 1](A, True)
    B = np.array([0], dtype="float64")
    func[1, 1](B, False)
    return {"A": A, "B": B}
''')

# -- cudapy/test_intrinsics.py ------------------------------------------------------------------

case("threadidx", "cudapy/test_intrinsics.py", '''
def simple_threadidx(ary):
    i = cuda.threadIdx.x
    ary[0] = i


def fill_threadidx(ary):
    i = cuda.threadIdx.x
    ary[i] = i


def fill3d_threadidx(ary):
    i = cuda.threadIdx.x
    j = cuda.threadIdx.y
    k = cuda.threadIdx.z

    ary[i, j, k] = (i + 1) * (j + 1) * (k + 1)


def run():
    a = np.zeros(1, dtype=np.int32)
    cuda.jit("void(int32[:])")(simple_threadidx)[1, 1](a)
    b = np.zeros(32, dtype=np.int32)
    cuda.jit("void(int32[:])")(fill_threadidx)[1, 32](b)
    c = np.zeros((4, 5, 6), dtype=np.int32)
    cuda.jit("void(int32[:,:,:])")(fill3d_threadidx)[1, (4, 5, 6)](c)
    return {"a": a, "b": b, "c": c}
''')

case("grid_and_gridsize", "cudapy/test_intrinsics.py", '''
def simple_grid1d(ary):
    i = cuda.grid(1)
    ary[i] = i


def simple_grid2d(ary):
    i, j = cuda.grid(2)
    ary[i, j] = i + j


def simple_gridsize1d(ary):
    i = cuda.grid(1)
    x = cuda.gridsize(1)
    if i == 0:
        ary[0] = x


def simple_gridsize2d(ary):
    i, j = cuda.grid(2)
    x, y = cuda.gridsize(2)
    if i == 0 and j == 0:
        ary[0] = x
        ary[1] = y


def run():
    a = np.zeros(4 * 16, dtype=np.int32)
    cuda.jit("void(int32[::1])")(simple_grid1d)[4, 16](a)
    b = np.zeros((4 * 2, 3 * 5), dtype=np.int32)
    cuda.jit("void(int32[:,::1])")(simple_grid2d)[(4, 3), (2, 5)](b)
    c = np.zeros(1, dtype=np.int32)
    cuda.jit("void(int32[::1])")(simple_gridsize1d)[4, 16](c)
    d = np.zeros(2, dtype=np.int32)
    cuda.jit("void(int32[::1])")(simple_gridsize2d)[(4, 3), (2, 5)](d)
    return {"a": a, "b": b, "c": c, "d": d}
''')

case("intrinsic_forloop_step", "cudapy/test_intrinsics.py", '''
def intrinsic_forloop_step(c):
    startX, startY = cuda.grid(2)
    gridX = cuda.gridDim.x * cuda.blockDim.x
    gridY = cuda.gridDim.y * cuda.blockDim.y
    height, width = c.shape

    for x in range(startX, width, gridX):
        for y in range(startY, height, gridY):
            c[y, x] = x + y


def run():
    compiled = cuda.jit("void(int32[:,::1])")(intrinsic_forloop_step)
    ntid = (4, 3)
    nctaid = (5, 6)
    shape = (ntid[0] * nctaid[0], ntid[1] * nctaid[1])
    ary = np.empty(shape, dtype=np.int32)
    compiled[nctaid, ntid](ary)
    return {"ary": ary}
''')

# (the 64-bit brev/clz/ffs tests are skipped on numba's simulator, "only get given a Python
# int, assumes 32 bits": test_cuda_compiler.py checks them against the test's expected values)
case("bit_intrinsics", "cudapy/test_intrinsics.py", '''
def simple_popc(ary, c):
    ary[0] = cuda.popc(c)


def simple_brev(ary, c):
    ary[0] = cuda.brev(c)


def simple_clz(ary, c):
    ary[0] = cuda.clz(c)


def simple_ffs(ary, c):
    ary[0] = cuda.ffs(c)


def run():
    out = {}
    for name, kernel, sig, arg in (
        ("popc_u4", simple_popc, "void(int32[:], uint32)", 0xF0),
        ("popc_u8", simple_popc, "void(int32[:], uint64)", 0xF00000000000),
        ("brev_u4", simple_brev, "void(uint32[:], uint32)", 0x00000001),
        ("clz_i4", simple_clz, "void(int32[:], int32)", 0x00100000),
        ("ffs_i4", simple_ffs, "void(uint32[:], int32)", 0x00100000),
    ):
        dtype = {"int32": np.int32, "uint32": np.uint32, "uint64": np.uint64}[sig[5:sig.index("[")]]
        argtype = {"uint32": np.uint32, "uint64": np.uint64, "int32": np.int32}[sig.split(", ")[1][:-1]]
        ary = np.zeros(1, dtype=dtype)
        cuda.jit(sig)(kernel)[1, 1](ary, argtype(arg))
        out[name] = ary
    return out
''')

case("fma_cbrt_round", "cudapy/test_intrinsics.py", '''
def simple_fma(ary, a, b, c):
    ary[0] = cuda.fma(a, b, c)


def simple_cbrt(ary, a):
    ary[0] = cuda.cbrt(a)


def simple_round(ary, c):
    ary[0] = round(c)


def run():
    a = np.zeros(1, dtype=np.float32)
    cuda.jit("void(f4[:], f4, f4, f4)")(simple_fma)[1, 1](a, np.float32(2.0), np.float32(3.0), np.float32(4.0))
    b = np.zeros(1, dtype=np.float64)
    cuda.jit("void(f8[:], f8, f8, f8)")(simple_fma)[1, 1](b, 2.0, 3.0, 4.0)
    c = np.zeros(1, dtype=np.float64)
    cuda.jit("void(float64[:], float64)")(simple_cbrt)[1, 1](c, 27.0)
    r = np.zeros(6, dtype=np.int64)
    compiled = cuda.jit("void(int64[:], float64)")(simple_round)
    for k, v in enumerate((-3.5, -2.5, 0.5, 1.5, 2.4, 2.6)):
        one = np.zeros(1, dtype=np.int64)
        compiled[1, 1](one, v)
        r[k] = one[0]
    return {"fma32": a, "fma64": b, "cbrt": c, "round": r}
''')

case("branching_with_ifs_and_selps", "cudapy/test_intrinsics.py", '''
def branching_with_ifs(a, b, c):
    i = cuda.grid(1)

    if a[i] > 4:
        if b % 2 == 0:
            a[i] = c[i]
        else:
            a[i] = 13
    else:
        a[i] = 3


def branching_with_selps(a, b, c):
    i = cuda.grid(1)

    inner = cuda.selp(b % 2 == 0, c[i], 13)
    a[i] = cuda.selp(a[i] > 4, inner, 3)


def run():
    out = {}
    for kernel in (branching_with_ifs, branching_with_selps):
        for b in (0, 1):
            a = np.arange(10, dtype=np.int64)
            c = np.arange(10, 20, dtype=np.int64)
            cuda.jit("void(i8[:], i8, i8[:])")(kernel)[1, 10](a, b, c)
            out[f"{kernel.__name__}_{b}"] = a
    return out
''')

case("laneid_warpsize", "cudapy/test_intrinsics.py", '''
def simple_laneid(ary):
    i = cuda.grid(1)
    ary[i] = cuda.laneid


def simple_warpsize(ary):
    ary[0] = cuda.warpsize


def run():
    a = np.zeros(64, dtype=np.int32)
    cuda.jit("void(int32[:])")(simple_laneid)[2, 32](a)
    b = np.zeros(1, dtype=np.int32)
    cuda.jit("void(int32[:])")(simple_warpsize)[1, 1](b)
    return {"laneid": a, "warpsize": b}
''')


# -- where numba's simulator is not numba -------------------------------------------------------

GPU_ONLY["globals_constant_capture"] = ("doc_examples/test_globals.py", '''
TAX_RATE = 0.08
PRICES = np.array([10.0, 25.0, 5.0, 15.0, 30.0], dtype=np.float64)


@cuda.jit
def compute_totals(quantities, totals):
    i = cuda.grid(1)
    if i < totals.size:
        totals[i] = quantities[i] * PRICES[i] * (1 + TAX_RATE)


def run():
    global TAX_RATE
    d_quantities = cuda.to_device(np.array([1, 2, 3, 4, 5], dtype=np.float64))
    d_totals = cuda.device_array(5, dtype=np.float64)
    compute_totals[1, 32](d_quantities, d_totals)
    TAX_RATE = 0.10  # noqa: F841
    PRICES[:] = [20.0, 50.0, 10.0, 30.0, 60.0]
    compute_totals[1, 32](d_quantities, d_totals)
    return {"totals": d_totals.copy_to_host()}
''', {"totals": [10.8, 54.0, 16.2, 64.8, 162.0]})  # captured at the first compile; the simulator reads the new values


DIAGNOSED["freevar"] = ("cudapy/test_freevar.py", '''
def make():
    size = 1024
    nbtype = float32

    @cuda.jit("(float32[::1], intp)")
    def foo(A, i):
        "Dummy function"
        sdata = cuda.shared.array(
            size,  # size is freevar
            dtype=nbtype,
        )  # nbtype is freevar
        A[i] = sdata[i]
    return foo


def run():
    A = np.arange(2, dtype="float32")
    make()[1, 1](A, 0)
    return {"A": A}
''', "InitcheckError")


GPU_ONLY["py2_div_issue"] = ("cudapy/test_py2_div_issue.py", '''
@cuda.jit(void(float32[:], float32[:], float32[:], int32))
def preCalc(y, yA, yB, numDataPoints):
    i = cuda.grid(1)

    # k is unused, but may be part of the trigger for the bug this
    # tests for.
    k = i % numDataPoints  # noqa: F841

    ans = float32(1.001 * float32(i))

    y[i] = ans
    yA[i] = ans * 1.0
    yB[i] = ans / 1.0


def run():
    numDataPoints = 15
    y = np.zeros(numDataPoints, dtype=np.float32)
    yA = np.zeros(numDataPoints, dtype=np.float32)
    yB = np.zeros(numDataPoints, dtype=np.float32)
    preCalc[1, 15](y, yA, yB, numDataPoints)
    return {"y": y, "yA": yA, "yB": yB}
''', {key: [float(np.float32(1.001 * i)) for i in range(15)] for key in ("y", "yA", "yB")})
# numba types 1.001 * float32(i) as float64 (then float32(...) rounds once); its simulator
# multiplies in float32 (numpy 2 keeps a Python float "weak"), which rounds differently at 3, 6, 7 …


# -- cudapy/test_atomics.py ---------------------------------------------------------------------

ATOMIC_TEMPLATES = '''
@cuda.jit(device=True)
def atomic_cast_to_uint64(num):
    return uint64(num)


@cuda.jit(device=True)
def atomic_cast_to_int(num):
    return int(num)


@cuda.jit(device=True)
def atomic_cast_none(num):
    return num


@cuda.jit(device=True)
def atomic_binary_1dim_shared(
    ary,
    idx,
    op2,
    ary_dtype,
    ary_nelements,
    binop_func,
    cast_func,
    initializer,
    neg_idx,
):
    tid = cuda.threadIdx.x
    sm = cuda.shared.array(ary_nelements, ary_dtype)
    sm[tid] = initializer
    cuda.syncthreads()
    bin = cast_func(idx[tid] % ary_nelements)
    if neg_idx:
        bin = bin % ary_nelements
    binop_func(sm, bin, op2)
    cuda.syncthreads()
    ary[tid] = sm[tid]


@cuda.jit(device=True)
def atomic_binary_1dim_shared2(
    ary, idx, op2, ary_dtype, ary_nelements, binop_func, cast_func
):
    tid = cuda.threadIdx.x
    sm = cuda.shared.array(ary_nelements, ary_dtype)
    sm[tid] = ary[tid]
    cuda.syncthreads()
    bin = cast_func(idx[tid] % ary_nelements)
    binop_func(sm, bin, op2)
    cuda.syncthreads()
    ary[tid] = sm[tid]


@cuda.jit(device=True)
def atomic_binary_2dim_shared(
    ary, op2, ary_dtype, ary_shape, binop_func, y_cast_func, neg_idx
):
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    sm = cuda.shared.array(ary_shape, ary_dtype)
    sm[tx, ty] = ary[tx, ty]
    cuda.syncthreads()
    bin = (tx, y_cast_func(ty))
    if neg_idx:
        bin = (bin[0] % ary_shape[0], bin[1] % ary_shape[1])
    binop_func(sm, bin, op2)
    cuda.syncthreads()
    ary[tx, ty] = sm[tx, ty]


@cuda.jit(device=True)
def atomic_binary_2dim_global(ary, op2, binop_func, y_cast_func, neg_idx):
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bin = (tx, y_cast_func(ty))
    if neg_idx:
        bin = (bin[0] % ary.shape[0], bin[1] % ary.shape[1])
    binop_func(ary, bin, op2)


@cuda.jit(device=True)
def atomic_binary_1dim_global(
    ary, idx, ary_nelements, op2, binop_func, neg_idx
):
    tid = cuda.threadIdx.x
    bin = int(idx[tid] % ary_nelements)
    if neg_idx:
        bin = bin % ary_nelements
    binop_func(ary, bin, op2)
'''

case("atomic_add_shared", "cudapy/test_atomics.py", ATOMIC_TEMPLATES + '''

def atomic_add(ary):
    atomic_binary_1dim_shared(
        ary, ary, 1, uint32, 32, cuda.atomic.add, atomic_cast_none, 0, False
    )


def atomic_add_wrap(ary):
    atomic_binary_1dim_shared(
        ary, ary, 1, uint32, 32, cuda.atomic.add, atomic_cast_none, 0, True
    )


def atomic_add2(ary):
    atomic_binary_2dim_shared(
        ary, 1, uint32, (4, 8), cuda.atomic.add, atomic_cast_none, False
    )


def atomic_add3(ary):
    atomic_binary_2dim_shared(
        ary, 1, uint32, (4, 8), cuda.atomic.add, atomic_cast_to_uint64, False
    )


def run():
    np.random.seed(0)
    ary = np.random.randint(0, 32, size=32).astype(np.uint32)
    ary_wrap = ary.copy()
    cuda.jit("void(uint32[:])")(atomic_add)[1, 32](ary)
    cuda.jit("void(uint32[:])")(atomic_add_wrap)[1, 32](ary_wrap)
    ary2 = np.random.randint(0, 32, size=32).astype(np.uint32).reshape(4, 8)
    ary3 = ary2.copy()
    cuda.jit("void(uint32[:,:])")(atomic_add2)[1, (4, 8)](ary2)
    cuda.jit("void(uint32[:,:])")(atomic_add3)[1, (4, 8)](ary3)
    return {"add": ary, "add_wrap": ary_wrap, "add2": ary2, "add3": ary3}
''')

case("atomic_add_float_and_double", "cudapy/test_atomics.py", ATOMIC_TEMPLATES + '''

def atomic_add_float(ary):
    atomic_binary_1dim_shared(
        ary,
        ary,
        1.0,
        float32,
        32,
        cuda.atomic.add,
        atomic_cast_to_int,
        0.0,
        False,
    )


def atomic_add_double_global(idx, ary):
    atomic_binary_1dim_global(ary, idx, 32, 1.0, cuda.atomic.add, False)


def atomic_add_double_global_2(ary):
    atomic_binary_2dim_global(ary, 1, cuda.atomic.add, atomic_cast_none, False)


def run():
    np.random.seed(1)
    ary = np.random.randint(0, 32, size=32).astype(np.float32)
    cuda.jit("void(float32[:])")(atomic_add_float)[1, 32](ary)
    idx = np.random.randint(0, 32, size=32).astype(np.int64)
    ary2 = np.zeros(32, np.float64)
    cuda.jit("void(int64[:], float64[:])")(atomic_add_double_global)[1, 32](idx, ary2)
    ary3 = np.random.randint(0, 32, size=32).astype(np.float64).reshape(4, 8)
    cuda.jit("void(float64[:,:])")(atomic_add_double_global_2)[1, (4, 8)](ary3)
    return {"float": ary, "double_global": ary2, "double_global_2": ary3}
''')

case("atomic_sub_exch", "cudapy/test_atomics.py", ATOMIC_TEMPLATES + '''

def atomic_sub(ary):
    atomic_binary_1dim_shared(
        ary, ary, 1, int32, 32, cuda.atomic.sub, atomic_cast_none, 0, False
    )


def atomic_sub2(ary):
    atomic_binary_2dim_shared(
        ary, 1, int32, (4, 8), cuda.atomic.sub, atomic_cast_none, False
    )


def atomic_exch(ary, idx, op2):
    atomic_binary_1dim_shared2(
        ary, idx, op2, uint32, 32, cuda.atomic.exch, atomic_cast_none
    )


def atomic_exch_global(idx, ary, op2):
    atomic_binary_1dim_global(ary, idx, 32, op2, cuda.atomic.exch, False)


def run():
    np.random.seed(2)
    ary = np.random.randint(0, 32, size=32).astype(np.int32)
    cuda.jit("void(int32[:])")(atomic_sub)[1, 32](ary)
    ary2 = np.random.randint(0, 32, size=32).astype(np.int32).reshape(4, 8)
    cuda.jit("void(int32[:,:])")(atomic_sub2)[1, (4, 8)](ary2)
    ary3 = np.random.randint(0, 32, size=32).astype(np.uint32)
    idx = np.arange(32, dtype=np.uint32)
    cuda.jit("void(uint32[:], uint32[:], uint32)")(atomic_exch)[1, 32](ary3, idx, np.uint32(42))
    ary4 = np.zeros(32, np.uint32)
    cuda.jit("void(uint32[:], uint32[:], uint32)")(atomic_exch_global)[1, 32](idx, ary4, np.uint32(7))
    return {"sub": ary, "sub2": ary2, "exch": ary3, "exch_global": ary4}
''')

case("atomic_max_min", "cudapy/test_atomics.py", '''
def atomic_max(res, ary):
    tx = cuda.threadIdx.x
    bx = cuda.blockIdx.x
    cuda.atomic.max(res, 0, ary[tx, bx])


def atomic_min(res, ary):
    tx = cuda.threadIdx.x
    bx = cuda.blockIdx.x
    cuda.atomic.min(res, 0, ary[tx, bx])


def atomic_max_double_normalizedindex(res, ary):
    tx = cuda.threadIdx.x
    bx = cuda.blockIdx.x
    cuda.atomic.max(res, 0, ary[tx, uint64(bx)])


def atomic_max_double_shared(res, ary):
    tid = cuda.threadIdx.x
    smary = cuda.shared.array(32, float64)
    smary[tid] = ary[tid]
    smres = cuda.shared.array(1, float64)
    if tid == 0:
        smres[0] = res[0]
    cuda.syncthreads()
    cuda.atomic.max(smres, 0, smary[tid])
    cuda.syncthreads()
    if tid == 0:
        res[0] = smres[0]


def run():
    np.random.seed(3)
    out = {}
    for name, kernel, dtype, sig in (("max_i32", atomic_max, np.int32, "void(int32[:], int32[:,:])"),
                                     ("min_f64", atomic_min, np.float64, "void(float64[:], float64[:,:])"),
                                     ("max_norm", atomic_max_double_normalizedindex, np.float64,
                                      "void(float64[:], float64[:,:])")):
        vals = (np.random.randint(-100, 100, size=(32, 3)) * 1.5).astype(dtype)
        res = np.zeros(1, dtype) + (dtype(1000) if "min" in name else dtype(-1000))
        cuda.jit(sig)(kernel)[3, 32](res, vals)
        out[name] = res
    vals = np.random.randint(0, 32, size=32).astype(np.float64)
    res = np.zeros(1, np.float64)
    cuda.jit("void(float64[:], float64[:])")(atomic_max_double_shared)[1, 32](res, vals)
    out["max_shared"] = res
    return out
''')

case("atomic_cas", "cudapy/test_atomics.py", '''
def atomic_cas_1dim(res, old, ary, fill_val):
    gid = cuda.grid(1)
    if gid < res.size:
        old[gid] = cuda.atomic.cas(res, gid, fill_val, ary[gid])


def atomic_cas_2dim(res, old, ary, fill_val):
    gid = cuda.grid(2)
    if gid[0] < res.shape[0] and gid[1] < res.shape[1]:
        old[gid] = cuda.atomic.cas(res, gid, fill_val, ary[gid])


def run():
    np.random.seed(4)
    n = 100
    res = np.random.randint(0, 2, size=n).astype(np.int32)
    res_orig = res.copy()
    old = np.zeros_like(res)
    ary = np.random.randint(100, 200, size=n).astype(np.int32)
    cuda.jit(atomic_cas_1dim)[10, 10](res, old, ary, np.int32(1))
    res2 = np.random.randint(0, 2, size=(10, 12)).astype(np.uint64)
    old2 = np.zeros_like(res2)
    ary2 = np.random.randint(100, 200, size=(10, 12)).astype(np.uint64)
    cuda.jit(atomic_cas_2dim)[(3, 3), (4, 5)](res2, old2, ary2, np.uint64(0))
    return {"res": res, "old": old, "res_orig": res_orig, "res2": res2, "old2": old2}
''')

# -- cudapy: laplace, minmax, powi, black-scholes, device functions ---------------------------------

case("laplace_small", "cudapy/test_laplace.py", '''
tpb = 4  # the test's size for the simulator
SM_SIZE = tpb, tpb


@cuda.jit(float64(float64, float64), device=True, inline="always")
def get_max(a, b):
    if a > b:
        return a
    else:
        return b


@cuda.jit(void(float64[:, :], float64[:, :], float64[:, :]))
def jocabi_relax_core(A, Anew, error):
    err_sm = cuda.shared.array(SM_SIZE, dtype=float64)

    ty = cuda.threadIdx.x
    tx = cuda.threadIdx.y
    bx = cuda.blockIdx.x
    by = cuda.blockIdx.y

    n = A.shape[0]
    m = A.shape[1]

    i, j = cuda.grid(2)

    err_sm[ty, tx] = 0
    if j >= 1 and j < n - 1 and i >= 1 and i < m - 1:
        Anew[j, i] = 0.25 * (
            A[j, i + 1] + A[j, i - 1] + A[j - 1, i] + A[j + 1, i]
        )
        err_sm[ty, tx] = Anew[j, i] - A[j, i]

    cuda.syncthreads()

    # max-reduce err_sm vertically
    t = tpb // 2
    while t > 0:
        if ty < t:
            err_sm[ty, tx] = get_max(err_sm[ty, tx], err_sm[ty + t, tx])
        t //= 2
        cuda.syncthreads()

    # max-reduce err_sm horizontally
    t = tpb // 2
    while t > 0:
        if tx < t and ty == 0:
            err_sm[ty, tx] = get_max(err_sm[ty, tx], err_sm[ty, tx + t])
        t //= 2
        cuda.syncthreads()

    if tx == 0 and ty == 0:
        error[by, bx] = err_sm[0, 0]


def run():
    NN, NM = 4, 4
    iter_max = 20
    A = np.zeros((NN, NM), dtype=np.float64)
    Anew = np.zeros((NN, NM), dtype=np.float64)
    n = NN
    tol = 1.0e-6
    error = 1.0
    for j in range(n):
        A[j, 0] = 1.0
        Anew[j, 0] = 1.0
    iter = 0
    blockdim = (tpb, tpb)
    griddim = (NN // blockdim[0], NM // blockdim[1])
    error_grid = np.zeros(griddim)
    stream = cuda.stream()
    dA = cuda.to_device(A, stream)
    dAnew = cuda.to_device(Anew, stream)
    derror_grid = cuda.to_device(error_grid, stream)
    errors = []
    while error > tol and iter < iter_max:
        jocabi_relax_core[griddim, blockdim, stream](dA, dAnew, derror_grid)
        derror_grid.copy_to_host(error_grid, stream=stream)
        stream.synchronize()
        error = np.abs(error_grid).max()
        errors.append(error)
        iter += 1
        tmp = dA
        dA = dAnew
        dAnew = tmp
    return {"A": dA.copy_to_host(), "errors": np.array(errors)}
''')

case("minmax", "cudapy/test_minmax.py", '''
def builtin_max(A, B, C):
    i = cuda.grid(1)

    if i >= len(C):
        return

    C[i] = float64(max(A[i], B[i]))


def builtin_min(A, B, C):
    i = cuda.grid(1)

    if i >= len(C):
        return

    C[i] = float64(min(A[i], B[i]))


def run():
    out = {}
    for kernel in (builtin_max, builtin_min):
        k = cuda.jit(kernel)
        for left, right in ((np.float64, np.float64), (np.float32, np.float64), (np.float64, np.float32),
                            (np.float32, np.float32)):
            n = 5
            c = np.zeros(n, dtype=np.float64)
            a = np.arange(n, dtype=left) + 0.5
            b = np.full(n, fill_value=2, dtype=right)
            k[1, c.shape](a, b, c)
            out[f"{kernel.__name__}_{np.dtype(left).char}{np.dtype(right).char}"] = c
    return out
''')

case("powi", "cudapy/test_powi.py", '''
def cu_mat_power(A, power, power_A):
    y, x = cuda.grid(2)

    m, n = power_A.shape
    if x >= n or y >= m:
        return

    power_A[y, x] = math.pow(A[y, x], int32(power))


def cu_mat_power_binop(A, power, power_A):
    y, x = cuda.grid(2)

    m, n = power_A.shape
    if x >= n or y >= m:
        return

    power_A[y, x] = A[y, x] ** power


def vec_pow(r, x, y):
    i = cuda.grid(1)

    if i < len(r):
        r[i] = pow(x[i], y[i])


def vec_pow_binop(r, x, y):
    i = cuda.grid(1)

    if i < len(r):
        r[i] = x[i] ** y[i]


def vec_pow_inplace_binop(r, x):
    i = cuda.grid(1)

    if i < len(r):
        r[i] **= x[i]


def run():
    out = {}
    for kernel in (cu_mat_power, cu_mat_power_binop):
        A = np.arange(10, dtype=np.float64).reshape(2, 5)
        Aout = np.empty_like(A)
        cuda.jit(void(float64[:, :], int8, float64[:, :]))(kernel)[1, A.shape](A, 2, Aout)
        out[kernel.__name__] = Aout
    for kernel in (vec_pow, vec_pow_binop):
        x = np.arange(1, 9, dtype=np.float64)
        y = np.arange(8, dtype=np.float64) / 2
        r = np.zeros_like(x)
        cuda.jit(kernel)[1, 8](r, x, y)
        out[kernel.__name__] = r
    r = np.arange(1, 9, dtype=np.float64)
    x = np.full(8, 2.0)
    cuda.jit(vec_pow_inplace_binop)[1, 8](r, x)
    out["inplace"] = r
    return out
''')

case("device_functions", "cudapy/test_device_func.py", '''
@cuda.jit("float32(float32, float32)", device=True)
def add2f(a, b):
    return a + b


@cuda.jit("float32(float32, float32)", device=True)
def indirect(a, b):
    return add2f(a, b)


def use_add2f(ary):
    i = cuda.grid(1)
    ary[i] = add2f(ary[i], ary[i])


def indirect_add2f(ary):
    i = cuda.grid(1)
    ary[i] = indirect(ary[i], ary[i])


def run():
    a = np.arange(10, dtype=np.float32)
    cuda.jit("void(float32[:])")(use_add2f)[1, 10](a)
    b = np.arange(10, dtype=np.float32)
    cuda.jit("void(float32[:])")(indirect_add2f)[1, 10](b)
    return {"use_add2f": a, "indirect_add2f": b}
''')

case("cpu_dispatcher", "cudapy/test_device_func.py", '''
@numba.jit
def add(a, b):
    return a + b


@cuda.jit
def add_kernel(ary):
    i = cuda.grid(1)
    ary[i] = add(ary[i], 1)


def run():
    ary = np.arange(10)
    add_kernel[1, ary.size](ary)
    return {"ary": ary}
''')


# -- srush/GPU-Puzzles ----------------------------------------------------------------------------

with open(__file__.replace("numba_cases.py", "gpu_puzzles_solutions.py")) as _f:
    case("gpu_puzzles", "srush/GPU-Puzzles GPU_puzzlers.py (our solutions)", _f.read())


# -- cudapy/test_math.py, test_blackscholes.py: libm against numpy ---------------------------------

#: Cases compared to a relative tolerance, and why: numba's simulator calls Python's ``math``
#: (the C library) per thread; simtdocs computes with numpy's ufuncs, whose float64
#: exp/log/sin… may round the last bit differently (and the GPU's libdevice differs from both).
TOLERANCE: dict[str, float] = {"math_unary": 4e-16, "blackscholes": 1e-13}

case("math_unary", "cudapy/test_math.py", '''
def math_acos(A, B):
    i = cuda.grid(1)
    B[i] = math.acos(A[i])


def math_asin(A, B):
    i = cuda.grid(1)
    B[i] = math.asin(A[i])


def math_atan(A, B):
    i = cuda.grid(1)
    B[i] = math.atan(A[i])


def math_cos(A, B):
    i = cuda.grid(1)
    B[i] = math.cos(A[i])


def math_sin(A, B):
    i = cuda.grid(1)
    B[i] = math.sin(A[i])


def math_tan(A, B):
    i = cuda.grid(1)
    B[i] = math.tan(A[i])


def math_tanh(A, B):
    i = cuda.grid(1)
    B[i] = math.tanh(A[i])


def math_exp(A, B):
    i = cuda.grid(1)
    B[i] = math.exp(A[i])


def math_expm1(A, B):
    i = cuda.grid(1)
    B[i] = math.expm1(A[i])


def math_fabs(A, B):
    i = cuda.grid(1)
    B[i] = math.fabs(A[i])


def math_log(A, B):
    i = cuda.grid(1)
    B[i] = math.log(A[i])


def math_log2(A, B):
    i = cuda.grid(1)
    B[i] = math.log2(A[i])


def math_log10(A, B):
    i = cuda.grid(1)
    B[i] = math.log10(A[i])


def math_log1p(A, B):
    i = cuda.grid(1)
    B[i] = math.log1p(A[i])


def math_sqrt(A, B):
    i = cuda.grid(1)
    B[i] = math.sqrt(A[i])


def math_erf(A, B):
    i = cuda.grid(1)
    B[i] = math.erf(A[i])


def math_atan2(A, B, C):
    i = cuda.grid(1)
    C[i] = math.atan2(A[i], B[i])


def math_hypot(A, B, C):
    i = cuda.grid(1)
    C[i] = math.hypot(A[i], B[i])


def math_floor(A, B):
    i = cuda.grid(1)
    B[i] = math.floor(A[i])


def math_ceil(A, B):
    i = cuda.grid(1)
    B[i] = math.ceil(A[i])


def run():
    out = {}
    A = np.linspace(0.05, 0.95, 16)
    for f in (math_acos, math_asin, math_atan, math_cos, math_sin, math_tan, math_tanh, math_exp, math_expm1,
              math_fabs, math_log, math_log2, math_log10, math_log1p, math_sqrt, math_erf):
        B = np.zeros_like(A)
        cuda.jit(void(float64[::1], float64[::1]))(f)[1, 16](A, B)
        out[f.__name__] = B
    for f in (math_atan2, math_hypot):
        C = np.zeros_like(A)
        cuda.jit(void(float64[::1], float64[::1], float64[::1]))(f)[1, 16](A, A[::-1].copy(), C)
        out[f.__name__] = C
    for f in (math_floor, math_ceil):
        B = np.zeros(16, np.int64)
        cuda.jit(void(float64[::1], int64[::1]))(f)[1, 16](A * 10 - 5, B)
        out[f.__name__] = B
    return out
''')

case("blackscholes", "cudapy/test_blackscholes.py", '''
RISKFREE = 0.02
VOLATILITY = 0.30

A1 = 0.31938153
A2 = -0.356563782
A3 = 1.781477937
A4 = -1.821255978
A5 = 1.330274429
RSQRT2PI = 0.39894228040143267793994605993438


def randfloat(rand_var, low, high):
    return (1.0 - rand_var) * low + rand_var * high


@cuda.jit(double(double), device=True, inline="always")
def cnd_cuda(d):
    K = 1.0 / (1.0 + 0.2316419 * math.fabs(d))
    ret_val = (
        RSQRT2PI
        * math.exp(-0.5 * d * d)
        * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))))
    )
    if d > 0:
        ret_val = 1.0 - ret_val
    return ret_val


@cuda.jit(
    void(
        double[:],
        double[:],
        double[:],
        double[:],
        double[:],
        double,
        double,
    )
)
def black_scholes_cuda(callResult, putResult, S, X, T, R, V):
    i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    if i >= S.shape[0]:
        return
    sqrtT = math.sqrt(T[i])
    d1 = (math.log(S[i] / X[i]) + (R + 0.5 * V * V) * T[i]) / (
        V * sqrtT
    )
    d2 = d1 - V * sqrtT
    cndd1 = cnd_cuda(d1)
    cndd2 = cnd_cuda(d2)

    expRT = math.exp((-1.0 * R) * T[i])
    callResult[i] = S[i] * cndd1 - X[i] * expRT * cndd2
    putResult[i] = X[i] * expRT * (1.0 - cndd2) - S[i] * (1.0 - cndd1)


def run():
    OPT_N = 400
    iterations = 2
    rng = np.random.RandomState(0)
    stockPrice = randfloat(rng.random_sample(OPT_N), 5.0, 30.0)
    optionStrike = randfloat(rng.random_sample(OPT_N), 1.0, 100.0)
    optionYears = randfloat(rng.random_sample(OPT_N), 0.25, 10.0)
    callResultNumba = np.zeros(OPT_N)
    putResultNumba = -np.ones(OPT_N)
    blockdim = 512, 1
    griddim = int(math.ceil(float(OPT_N) / blockdim[0])), 1
    stream = cuda.stream()
    d_callResult = cuda.to_device(callResultNumba, stream)
    d_putResult = cuda.to_device(putResultNumba, stream)
    d_stockPrice = cuda.to_device(stockPrice, stream)
    d_optionStrike = cuda.to_device(optionStrike, stream)
    d_optionYears = cuda.to_device(optionYears, stream)
    for i in range(iterations):
        black_scholes_cuda[griddim, blockdim, stream](
            d_callResult,
            d_putResult,
            d_stockPrice,
            d_optionStrike,
            d_optionYears,
            RISKFREE,
            VOLATILITY,
        )
    d_callResult.copy_to_host(callResultNumba, stream)
    d_putResult.copy_to_host(putResultNumba, stream)
    stream.synchronize()
    return {"call": callResultNumba, "put": putResultNumba}
''')


# -- cudapy/test_lang.py, test_iterators.py, test_casting.py -----------------------------------------

case("lang", "cudapy/test_lang.py", '''
tup = (1.0, 2.5, 3.0)
t1 = (1, 2, 3)
t2 = (4.5, 5.6, 6.7)


@cuda.jit("void(float64[:])")
def foo_enumerate(a):
    for i, v in enumerate(tup):
        a[i] = v


@cuda.jit("void(float64[:])")
def foo_zip(a):
    c = 0
    for i, j in zip(t1, t2):
        c += i + j
    a[0] = c


@cuda.jit("void(float64[:,:])")
def cuda_kernel_api_in_multiple_blocks(ary):
    for i in range(2):
        tx = cuda.threadIdx.x
    for j in range(3):
        ty = cuda.threadIdx.y
    sm = cuda.shared.array((2, 3), float64)
    sm[tx, ty] = 1.0
    ary[tx, ty] = sm[tx, ty]


def run():
    a = np.zeros(len(tup))
    foo_enumerate[1, 1](a)
    b = np.zeros(1)
    foo_zip[1, 1](b)
    c = np.zeros((2, 3))
    cuda_kernel_api_in_multiple_blocks[1, (2, 3)](c)
    return {"enumerate": a, "zip": b, "issue_872": c}
''')

case("iterators", "cudapy/test_iterators.py", '''
@cuda.jit
def enumerator(x, error):
    count = 0
    for i, v in enumerate(x):
        if count != i:
            error[0] = 1
        if v != x[i]:
            error[0] = 2
        count += 1
    if count != len(x):
        error[0] = 3


@cuda.jit
def zipper(x, y, error):
    i = 0
    for xv, yv in zip(x, y):
        if xv != x[i]:
            error[0] = 1
        if yv != y[i]:
            error[0] = 2
        i += 1
    if i != len(x):
        error[0] = 3


@cuda.jit
def enumerator_zipper(x, y, error):
    count = 0
    for i, (xv, yv) in enumerate(zip(x, y)):
        if i != count:
            error[0] = 1
        if xv != x[i]:
            error[0] = 2
        if yv != y[i]:
            error[0] = 3
        count += 1
    if count != len(x):
        error[0] = 4


@cuda.jit
def zipper_enumerator(x, y, error):
    count = 0
    for (i, xv), yv in zip(enumerate(x), y):
        if i != count:
            error[0] = 1
        if xv != x[i]:
            error[0] = 2
        if yv != y[i]:
            error[0] = 3
        count += 1
    if count != len(x):
        error[0] = 4


def run():
    x = np.asarray((10, 9, 8, 7, 6))
    y = np.asarray((1, 2, 3, 4, 5))
    out = {}
    error = np.zeros(1, dtype=np.int32)
    enumerator[1, 1](x, error)
    out["enumerator"] = error
    for f in (zipper, enumerator_zipper, zipper_enumerator):
        error = np.zeros(1, dtype=np.int32)
        f[1, 1](x, y, error)
        out[f.__name__] = error
    return out
''')

case("casting", "cudapy/test_casting.py", '''
def native_cast(x):
    return float(x)


def to_int8(x):
    return np.int8(x)


def to_int16(x):
    return np.int16(x)


def to_int32(x):
    return np.int32(x)


def to_int64(x):
    return np.int64(x)


def to_uint8(x):
    return np.uint8(x)


def to_uint16(x):
    return np.uint16(x)


def to_uint32(x):
    return types.uint32(x)


def to_uint64(x):
    return types.uint64(x)


def to_float32(x):
    return np.float32(x) / np.float32(2)


def to_float64(x):
    return np.float64(x) / np.float64(2)


def to_complex64(x):
    return np.complex64(x)


def to_complex128(x):
    return np.complex128(x)


def _create_wrapped(pyfunc, intype, outtype):
    wrapped_func = cuda.jit(device=True)(pyfunc)

    @cuda.jit
    def cuda_wrapper_fn(arg, res):
        res[0] = wrapped_func(arg[0])

    def wrapper_fn(arg):
        argarray = np.zeros(1, dtype=intype)
        argarray[0] = arg
        resarray = np.zeros(1, dtype=outtype)
        cuda_wrapper_fn[1, 1](argarray, resarray)
        return resarray[0]

    return wrapper_fn


def run():
    out = {}
    for pyfunc, toty in zip((to_int8, to_int16, to_int32, to_int64), (np.int8, np.int16, np.int32, np.int64)):
        for fromty in (np.float32, np.float64):
            cfunc = _create_wrapped(pyfunc, fromty, toty)
            out[f"{pyfunc.__name__}_{np.dtype(fromty).name}"] = np.array([cfunc(12.3), cfunc(-12.3)])
    for pyfunc, toty in zip((to_uint8, to_uint16, to_uint32, to_uint64), (np.uint8, np.uint16, np.uint32, np.uint64)):
        for fromty in (np.float32, np.float64):
            cfunc = _create_wrapped(pyfunc, fromty, toty)
            out[f"{pyfunc.__name__}_{np.dtype(fromty).name}"] = np.array([cfunc(12.3)])
    for pyfunc, toty in zip((to_float32, to_float64), (np.float32, np.float64)):
        cfunc = _create_wrapped(pyfunc, np.int64, toty)
        out[pyfunc.__name__] = np.array([cfunc(321)])
    for pyfunc, toty in zip((to_complex64, to_complex128), (np.complex64, np.complex128)):
        for fromty in (np.float32, np.float64):
            cfunc = _create_wrapped(pyfunc, fromty, toty)
            out[f"{pyfunc.__name__}_{np.dtype(fromty).name}"] = np.array([cfunc(3.21)])
    cfunc = _create_wrapped(native_cast, np.float32, np.float64)
    out["native_cast"] = np.array([cfunc(12.3)])
    return out
''')


# -- cudapy/test_mandel.py: numba only compiles it; here it runs, on both sides ---------------------

case("mandel", "cudapy/test_mandel.py (its device function; the kernel around it is ours)", '''
@cuda.jit(device=True)
def mandel(tid, min_x, max_x, min_y, max_y, width, height, iters):
    pixel_size_x = (max_x - min_x) / width
    pixel_size_y = (max_y - min_y) / height

    x = tid % width
    y = tid / width

    real = min_x + x * pixel_size_x
    imag = min_y + y * pixel_size_y

    c = complex(real, imag)
    z = 0.0j

    for i in range(iters):
        z = z * z + c
        if (z.real * z.real + z.imag * z.imag) >= 4:
            return i
    return iters


@cuda.jit
def mandel_kernel(out, width, height, iters):
    tid = cuda.grid(1)
    if tid < out.size:
        out[tid] = mandel(tid, -2.0, 1.0, -1.0, 1.0, width, height, iters)


def run():
    width, height = 24, 16
    out = np.zeros(width * height, np.uint32)
    mandel_kernel[(width * height + 63) // 64, 64](out, width, height, 40)
    return {"iterations": out}
''')
