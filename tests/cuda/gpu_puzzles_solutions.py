# The 14 puzzles of srush/GPU-Puzzles (GPU_puzzlers.py at b3c4b23), solved in the puzzles' own
# style and at their sizes: each puzzle is a function of ``cuda`` returning the kernel, run
# the way lib.CudaProblem.run_cuda runs it (``cuda.jit(fn(cuda))[blocks, threads](out, *inputs,
# *args)``) and checked against the puzzle's spec. This file is a case source (numba_cases.py):
# ``cuda``, ``numba`` and ``np`` come from the side running it, numba's simulator or simtdocs;
# ``closure_cuda()`` is the ``cuda`` a puzzle closes over (numba's simulator swaps its fake
# ``cuda`` into a kernel's globals only, so on that side it is a proxy that reads the global).


class Coord:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def tuple(self):
        return (self.x, self.y)


RESULTS = {}


def problem(name, fn, inputs, out, args=(), blockspergrid=Coord(1, 1), threadsperblock=Coord(1, 1), spec=None):
    """lib.CudaProblem(...).check(), returning what it compares."""
    jitfn = cuda.jit(fn(closure_cuda()))
    jitfn[blockspergrid.tuple(), threadsperblock.tuple()](out, *inputs, *args)
    RESULTS[name] = out
    RESULTS[name + " (spec)"] = np.asarray(spec(*inputs), dtype=np.float64)


# Puzzle 1: Map
def map_spec(a):
    return a + 10


def map_test(cuda):
    def call(out, a) -> None:
        local_i = cuda.threadIdx.x
        out[local_i] = a[local_i] + 10

    return call


# Puzzle 2: Zip
def zip_spec(a, b):
    return a + b


def zip_test(cuda):
    def call(out, a, b) -> None:
        local_i = cuda.threadIdx.x
        out[local_i] = a[local_i] + b[local_i]

    return call


# Puzzle 3: Guards
def map_guard_test(cuda):
    def call(out, a, size) -> None:
        local_i = cuda.threadIdx.x
        if local_i < size:
            out[local_i] = a[local_i] + 10

    return call


# Puzzle 4: Map 2D
def map_2D_test(cuda):
    def call(out, a, size) -> None:
        local_i = cuda.threadIdx.x
        local_j = cuda.threadIdx.y
        if local_i < size and local_j < size:
            out[local_i, local_j] = a[local_i, local_j] + 10

    return call


# Puzzle 5: Broadcast
def broadcast_test(cuda):
    def call(out, a, b, size) -> None:
        local_i = cuda.threadIdx.x
        local_j = cuda.threadIdx.y
        if local_i < size and local_j < size:
            out[local_i, local_j] = a[local_i, 0] + b[0, local_j]

    return call


# Puzzle 6: Blocks
def map_block_test(cuda):
    def call(out, a, size) -> None:
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        if i < size:
            out[i] = a[i] + 10

    return call


# Puzzle 7: Blocks 2D
def map_block2D_test(cuda):
    def call(out, a, size) -> None:
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
        if i < size and j < size:
            out[i, j] = a[i, j] + 10

    return call


# Puzzle 8: Shared
def shared_test(cuda):
    def call(out, a, size) -> None:
        shared = cuda.shared.array(TPB, numba.float32)
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        local_i = cuda.threadIdx.x

        if i < size:
            shared[local_i] = a[i]
            cuda.syncthreads()

        if i < size:
            out[i] = shared[local_i] + 10

    return call


# Puzzle 9: Pooling
def pool_spec(a):
    out = np.zeros(*a.shape)
    for i in range(a.shape[0]):
        out[i] = a[max(i - 2, 0) : i + 1].sum()
    return out


def pool_test(cuda):
    def call(out, a, size) -> None:
        shared = cuda.shared.array(TPB, numba.float32)
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        local_i = cuda.threadIdx.x
        if i < size:
            shared[local_i] = a[i]
        cuda.syncthreads()
        if i < size:
            total = shared[local_i]
            if local_i >= 1:
                total += shared[local_i - 1]
            if local_i >= 2:
                total += shared[local_i - 2]
            out[i] = total

    return call


# Puzzle 10: Dot Product
def dot_spec(a, b):
    return a @ b


def dot_test(cuda):
    def call(out, a, b, size) -> None:
        shared = cuda.shared.array(TPB, numba.float32)
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        local_i = cuda.threadIdx.x
        if i < size:
            shared[local_i] = a[i] * b[i]
        else:
            shared[local_i] = 0
        cuda.syncthreads()
        step = 1
        while step < TPB:
            if local_i % (2 * step) == 0:
                shared[local_i] += shared[local_i + step]
            step *= 2
            cuda.syncthreads()
        if local_i == 0:
            out[0] = shared[0]

    return call


# Puzzle 11: 1D Convolution
def conv_spec(a, b):
    out = np.zeros(*a.shape)
    len = b.shape[0]
    for i in range(a.shape[0]):
        out[i] = sum([a[i + j] * b[j] for j in range(len) if i + j < a.shape[0]])
    return out


def conv_test(cuda):
    def call(out, a, b, a_size, b_size) -> None:
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        local_i = cuda.threadIdx.x
        shared_a = cuda.shared.array(TPB_MAX_CONV, numba.float32)
        shared_b = cuda.shared.array(MAX_CONV, numba.float32)
        if i < a_size:
            shared_a[local_i] = a[i]
        if local_i < b_size - 1 and i + TPB < a_size:
            shared_a[local_i + TPB] = a[i + TPB]
        if local_i < b_size:
            shared_b[local_i] = b[local_i]
        cuda.syncthreads()
        if i < a_size:
            acc = 0.0
            for j in range(b_size):
                if i + j < a_size:
                    acc += shared_a[local_i + j] * shared_b[j]
            out[i] = acc

    return call


# Puzzle 12: Prefix Sum
def sum_test(cuda):
    def call(out, a, size: int) -> None:
        cache = cuda.shared.array(TPB, numba.float32)
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        local_i = cuda.threadIdx.x
        if i < size:
            cache[local_i] = a[i]
        else:
            cache[local_i] = 0
        cuda.syncthreads()
        step = 1
        while step < TPB:
            if local_i % (2 * step) == 0:
                cache[local_i] += cache[local_i + step]
            step *= 2
            cuda.syncthreads()
        if local_i == 0:
            out[cuda.blockIdx.x] = cache[0]

    return call


# Puzzle 13: Axis Sum
def axis_sum_test(cuda):
    def call(out, a, size: int) -> None:
        cache = cuda.shared.array(TPB, numba.float32)
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        local_i = cuda.threadIdx.x
        batch = cuda.blockIdx.y
        if i < size:
            cache[local_i] = a[batch, i]
        else:
            cache[local_i] = 0
        cuda.syncthreads()
        step = 1
        while step < TPB:
            if local_i % (2 * step) == 0:
                cache[local_i] += cache[local_i + step]
            step *= 2
            cuda.syncthreads()
        if local_i == 0:
            out[batch, 0] = cache[0]

    return call


# Puzzle 14: Matrix Multiply
def matmul_spec(a, b):
    return a @ b


def mm_oneblock_test(cuda):
    def call(out, a, b, size: int) -> None:
        a_shared = cuda.shared.array((TPB, TPB), numba.float32)
        b_shared = cuda.shared.array((TPB, TPB), numba.float32)

        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
        local_i = cuda.threadIdx.x
        local_j = cuda.threadIdx.y
        acc = 0.0
        for k in range(0, size, TPB):
            if i < size and k + local_j < size:
                a_shared[local_i, local_j] = a[i, k + local_j]
            if j < size and k + local_i < size:
                b_shared[local_i, local_j] = b[k + local_i, j]
            cuda.syncthreads()
            if i < size and j < size:
                for local_k in range(min(TPB, size - k)):
                    acc += a_shared[local_i, local_k] * b_shared[local_k, local_j]
            cuda.syncthreads()
        if i < size and j < size:
            out[i, j] = acc

    return call


def run():
    global TPB, MAX_CONV, TPB_MAX_CONV
    RESULTS.clear()
    SIZE = 4
    problem("Map", map_test, [np.arange(SIZE)], np.zeros((SIZE,)), threadsperblock=Coord(SIZE, 1), spec=map_spec)
    problem("Zip", zip_test, [np.arange(SIZE), np.arange(SIZE)], np.zeros((SIZE,)), threadsperblock=Coord(SIZE, 1),
            spec=zip_spec)
    problem("Guard", map_guard_test, [np.arange(SIZE)], np.zeros((SIZE,)), [SIZE], threadsperblock=Coord(8, 1),
            spec=map_spec)
    SIZE = 2
    problem("Map 2D", map_2D_test, [np.arange(SIZE * SIZE).reshape((SIZE, SIZE))], np.zeros((SIZE, SIZE)), [SIZE],
            threadsperblock=Coord(3, 3), spec=map_spec)
    problem("Broadcast", broadcast_test, [np.arange(SIZE).reshape(SIZE, 1), np.arange(SIZE).reshape(1, SIZE)],
            np.zeros((SIZE, SIZE)), [SIZE], threadsperblock=Coord(3, 3), spec=zip_spec)
    SIZE = 9
    problem("Blocks", map_block_test, [np.arange(SIZE)], np.zeros((SIZE,)), [SIZE], threadsperblock=Coord(4, 1),
            blockspergrid=Coord(3, 1), spec=map_spec)
    SIZE = 5
    problem("Blocks 2D", map_block2D_test, [np.ones((SIZE, SIZE))], np.zeros((SIZE, SIZE)), [SIZE],
            threadsperblock=Coord(3, 3), blockspergrid=Coord(2, 2), spec=map_spec)
    TPB = 4
    SIZE = 8
    problem("Shared", shared_test, [np.ones(SIZE)], np.zeros(SIZE), [SIZE], threadsperblock=Coord(TPB, 1),
            blockspergrid=Coord(2, 1), spec=map_spec)
    TPB = 8
    problem("Pooling", pool_test, [np.arange(SIZE)], np.zeros(SIZE), [SIZE], threadsperblock=Coord(TPB, 1),
            blockspergrid=Coord(1, 1), spec=pool_spec)
    problem("Dot", dot_test, [np.arange(SIZE), np.arange(SIZE)], np.zeros(1), [SIZE], threadsperblock=Coord(SIZE, 1),
            blockspergrid=Coord(1, 1), spec=dot_spec)
    MAX_CONV, TPB = 4, 8
    TPB_MAX_CONV = TPB + MAX_CONV
    problem("1D Conv (Simple)", conv_test, [np.arange(6), np.arange(3)], np.zeros(6), [6, 3], Coord(1, 1),
            Coord(TPB, 1), spec=conv_spec)
    problem("1D Conv (Full)", conv_test, [np.arange(15), np.arange(4)], np.zeros(15), [15, 4], Coord(2, 1),
            Coord(TPB, 1), spec=conv_spec)
    TPB = 8

    def sum_spec(a):
        out = np.zeros((a.shape[0] + TPB - 1) // TPB)
        for j, i in enumerate(range(0, a.shape[-1], TPB)):
            out[j] = a[i : i + TPB].sum()
        return out
    problem("Sum (Simple)", sum_test, [np.arange(8)], np.zeros(1), [8], Coord(1, 1), Coord(TPB, 1), spec=sum_spec)
    problem("Sum (Full)", sum_test, [np.arange(15)], np.zeros(2), [15], Coord(2, 1), Coord(TPB, 1), spec=sum_spec)

    def axis_spec(a):
        out = np.zeros((a.shape[0], (a.shape[1] + TPB - 1) // TPB))
        for j, i in enumerate(range(0, a.shape[-1], TPB)):
            out[..., j] = a[..., i : i + TPB].sum(-1)
        return out
    BATCH, SIZE = 4, 6
    problem("Axis Sum", axis_sum_test, [np.arange(BATCH * SIZE).reshape((BATCH, SIZE))], np.zeros((BATCH, 1)), [SIZE],
            Coord(1, BATCH), Coord(TPB, 1), spec=axis_spec)
    TPB = 3
    SIZE = 2
    problem("Matmul (Simple)", mm_oneblock_test,
            [np.arange(SIZE * SIZE).reshape((SIZE, SIZE)), np.arange(SIZE * SIZE).reshape((SIZE, SIZE)).T],
            np.zeros((SIZE, SIZE)), [SIZE], Coord(1, 1), Coord(TPB, TPB), spec=matmul_spec)
    SIZE = 8
    problem("Matmul (Full)", mm_oneblock_test,
            [np.arange(SIZE * SIZE).reshape((SIZE, SIZE)), np.arange(SIZE * SIZE).reshape((SIZE, SIZE)).T],
            np.zeros((SIZE, SIZE)), [SIZE], Coord(3, 3), Coord(TPB, TPB), spec=matmul_spec)
    return dict(RESULTS)
