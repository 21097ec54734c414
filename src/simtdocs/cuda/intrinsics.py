"""The names a kernel reads from ``cuda``: markers the compiler recognises by identity.

``cuda.threadIdx``, ``cuda.syncthreads``, ``cuda.atomic.add`` … are not run as Python: the
compiler resolves the expression ``cuda.threadIdx.x`` (or ``threadIdx.x`` after
``from simtdocs.cuda import threadIdx``) to the marker object and emits what it means in
the mask form (``blk.tx``). Called outside a kernel, they say so.
"""

from __future__ import annotations


class Intrinsic:
    """A function or value that only means something inside a kernel."""

    def __init__(self, name: str, doc: str = ""):
        self.name = name
        self.__doc__ = doc or f"cuda.{name} (inside a kernel only)"

    def __repr__(self) -> str:
        return f"<cuda.{self.name}>"

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"cuda.{self.name} can only be called inside a @cuda.jit kernel or device function")


class Dim3(Intrinsic):
    """``threadIdx``, ``blockIdx``, ``blockDim``, ``gridDim``: read ``.x``, ``.y``, ``.z`` in a kernel."""

    def __getattr__(self, attr):
        if attr in ("x", "y", "z"):
            raise RuntimeError(f"cuda.{self.name}.{attr} can only be read inside a @cuda.jit kernel")
        raise AttributeError(attr)


class Namespace:
    """``cuda.shared``, ``cuda.local``, ``cuda.const``, ``cuda.atomic``: groups of intrinsics."""

    def __init__(self, name: str, members: dict[str, str]):
        self._name = name
        for member, doc in members.items():
            setattr(self, member, Intrinsic(f"{name}.{member}", doc))

    def __repr__(self) -> str:
        return f"<cuda.{self._name}>"


class Unsupported(Intrinsic):
    """A part of numba.cuda the simulator does not model (the compiler names it and the line)."""

    def __init__(self, name: str, why: str):
        super().__init__(name)
        self.why = why


threadIdx = Dim3("threadIdx")
blockIdx = Dim3("blockIdx")
blockDim = Dim3("blockDim")
gridDim = Dim3("gridDim")
laneid = Intrinsic("laneid", "the lane of the thread in its warp (threadIdx % 32 in a 1-D block)")
warpsize = Intrinsic("warpsize", "32")

FUNCTIONS = (
    "grid", "gridsize", "syncthreads", "syncthreads_count", "syncthreads_and", "syncthreads_or", "syncwarp",
    "shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync", "ballot_sync", "any_sync", "all_sync",
    "activemask", "lanemask_lt", "popc", "brev", "clz", "ffs", "fma", "cbrt", "selp",
    "threadfence", "threadfence_block", "threadfence_system", "select",
)
functions = {name: Intrinsic(name) for name in FUNCTIONS}

shared = Namespace("shared", {"array": "cuda.shared.array(shape, dtype): a __shared__ array of the block "
                                       "(shape 0: the launch's dynamic shared memory)"})
local = Namespace("local", {"array": "cuda.local.array(shape, dtype): an array of each thread's own"})
const = Namespace("const", {"array_like": "cuda.const.array_like(ary): ary in constant memory"})
atomic = Namespace("atomic", {name: f"cuda.atomic.{name}" for name in (
    "add", "sub", "max", "min", "exch", "cas", "compare_and_swap",
    "and_", "or_", "xor", "inc", "dec", "nanmax", "nanmin")})
ATOMICS_SUPPORTED = ("add", "sub", "max", "min", "exch", "cas", "compare_and_swap", "and_", "or_", "xor", "inc", "dec")

cg = Unsupported("cg", "cooperative groups (grid.sync(), this_grid()) are not modelled")

#: Vector accesses (a C ``float4`` load or store: one 8- or 16-byte access per lane, the
#: engine's ``width=``). Front ends' tree vocabulary, not numba's: ``vload(a, i, w)`` is the
#: tuple ``a[i], …, a[i + w - 1]`` read by one instruction, ``vstore(a, i, w, v0, …)`` its store.
vload = Intrinsic("vload", "vload(array, first, width): one vector load (a tuple of width values)")
vstore = Intrinsic("vstore", "vstore(array, first, width, *values): one vector store")
#: ``cuda.select(c, a, b)`` (C's ``c ? a : b``): each side evaluated for its own lanes (a load
#: masked by the condition) and no branch counted, as nvcc predicates such a choice (Python's
#: ``a if c else b`` is a branch when a side loads)
select = functions["select"]
select.__doc__ = "cuda.select(c, a, b): a per-thread choice whose sides run predicated (no branch)"
#: ``bitcast(dtype, source_dtype, *values)``: the bytes of ``values`` (of ``source_dtype``) read as
#: ``dtype`` values (one value, or a tuple when they make several): C's reinterpreting pointer casts
bitcast = Intrinsic("bitcast", "bitcast(dtype, source_dtype, *values): the same bytes as values of dtype")
#: C's printf: ``printf(format, *values)`` with ``format`` a Python %-format (the C front end converts C's)
printf = Intrinsic("printf", "printf(format, *values): each active thread's line, in block and thread order")
