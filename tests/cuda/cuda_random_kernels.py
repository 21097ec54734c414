"""Random per-thread kernels: real numba-style source, generated from random choices.

A kernel gets a random mix of per-thread and uniform ``if``/``elif``/``else``, ``and``/``or``
(with loads on the short-circuited side), conditional expressions, ``for`` loops with
per-thread and uniform bounds, ``while`` loops, ``break``/``continue``/early ``return``,
global loads and stores (``=`` and ``+=``), shared memory with and without
``syncthreads``, shuffles, ballots, atomics and a device function with an early return,
over a random block shape and grid. Every index is taken modulo its array's size, so a
kernel is valid unless its control flow makes it invalid (a shuffle from a lane that left,
a barrier some threads that have not exited skip): then both engines must raise the same
error. ``program(..., exits=True)`` starts the kernel with a guard ``if gid >= k: return``
(the tail of the last blocks exits, as when n is not a multiple of the block), draws every
early ``return`` and follows one at the top with a barrier: threads that returned are not
waited for. Without it the draws, and so the programs, are the ones they always were.

``program(..., wide=True)`` draws integer operands beyond 32 bits: elements of constant
arrays ``W`` (int32 near ±2**31), ``U`` (uint32 near 2**32) and ``S8`` (int8 near ±127), their
products (past 32 bits, within 64: ``int32 * int32`` is int64 in numba, ``uint32 * uint32``
uint64), ``uint32 + int32`` (int64: signed wins), ``int8 + int8`` (200, not -56), floor
division and remainders of negatives, shifts, bitwise mixes, ``-uint32`` (uint64, wrapped),
``uint32 / int32`` (float64) and ``min``/``max`` of a uint64 and an int64 (float64). Integer
variables stay int64 (``% IMOD`` is int64 for any operand), so no join unifies a uint64 with
an int64. A nested product can still pass int64: there the dialect and the oracle both wrap
around (numba's signed arithmetic is undefined past int64, ``cuda_oracle``). Off, the draws
are those of before.
"""

from __future__ import annotations

import itertools
import linecache

import numpy as np


BLOCKS = [(32,), (64,), (48,), (7,), (33,), (16, 4), (8, 8), (128,)]
GRIDS = [(1,), (2,), (3,), (2, 2)]
SLOTS = 4
NA, NB, NH = 97, 61, 7
#: Integer variables stay below this (``i1 += i1 * 3`` in nested loops would pass int64 and
#: wrap, as numba and the oracle both wrap): the programs of before keep their values small.
#: ``wide=True`` draws operands past 32 bits inside the expressions.
IMOD = 1009
NW = 16  # elements of W, U and S8 (wide=True)
W_VALUES = [2147483647, -2147483648, 2147483000, -2147483000, 123456789, -987654321, 65536, 46341,
            -46341, 1999999999, -1999999999, 7, 1000000007, -1000000007, 1073741824, 3]  # no 0: a divisor
U_VALUES = [4294967295, 4294967294, 2147483648, 2147483649, 3000000000, 65536, 4000000000, 123456789,
            1, 4294967289, 16777217, 99, 3999999999, 65537, 7, 2147483647]
S8_VALUES = [127, -128, 100, 100, -100, 64, -64, 1, 127, 120, -1, 99, 50, -120, 2, 88]
_counter = itertools.count()


class Gen:
    def __init__(self, choose, private=False, atomics_mix=False, exits=False, wide=False):
        self.wide = wide  # integer operands beyond 32 bits (the module's docstring); off, the draws of before
        self.private = private  # threads never talk: no shared memory, barriers, shuffles, votes
        self.exits = exits  # early returns before barriers (see the module's docstring); off, the draws of before
        # shared atomics mixed with plain reads and writes of sh (racecheck's atomic pairs);
        # off, the draws are those of before, so old seeds write the programs they wrote
        self.atomics_mix = atomics_mix
        self.c = choose  # choose(kind, *args): "int" lo hi → int, "pick" seq → element, "chance" pct → bool
        self.lines: list[str] = []
        self.ints = ["tid", "gid", "lane"]
        self.floats = ["f0", "f1"]
        self.ivars = ["i0", "i1"]
        self.loop_depth = 0
        self.size = 0

    def pick(self, seq):
        return seq[self.c("int", 0, len(seq) - 1)]

    def chance(self, pct):
        return self.c("int", 0, 99) < pct

    def emit(self, indent, text):
        self.lines.append("    " * indent + text)
        self.size += 1

    # expressions
    def element(self, array):
        return f"{array}[{self.pick(self.ints + self.ivars)} % {NW}]"

    def wide_iexpr(self, depth):
        """An integer past 32 bits, as numba types it (the module's docstring)."""
        w, u, s8 = (lambda: self.element("W")), (lambda: self.element("U")), (lambda: self.element("S8"))
        k = self.c("int", 0, 10)
        if k == 0:
            return w()
        if k == 1:
            return u()
        if k == 2:
            return f"({w()} * {w()})"
        if k == 3:
            return f"({u()} * {u()})"
        if k == 4:
            return f"({u()} + {w()})"
        if k == 5:
            return f"({s8()} + {s8()})"
        if k == 6:
            return f"({w()} {self.pick(['//', '%'])} {self.pick(['7', '-5', '1000'])})"
        if k == 7:
            return self.pick([f"({u()} >> {self.c('int', 0, 31)})", f"({w()} << {self.c('int', 0, 31)})"])
        if k == 8:
            return f"({w()} {self.pick(['^', '&', '|'])} {u()})"
        if k == 9:
            return f"(-{u()})"
        return f"({self.iexpr(depth + 1)} * {w()})"

    def iexpr(self, depth=0):
        if self.wide and self.chance(30):
            return self.wide_iexpr(depth)
        k = self.c("int", 0, 9 if depth < 2 else 3)
        if k <= 1:
            return self.pick(self.ints + self.ivars)
        if k == 2:
            return str(self.c("int", 0, 9))
        if k == 3:
            return "n"
        if k == 4:
            return f"({self.iexpr(depth + 1)} + {self.iexpr(depth + 1)})"
        if k == 5:
            return f"({self.iexpr(depth + 1)} * 3)"
        if k == 6:
            return f"({self.iexpr(depth + 1)} % {self.c('int', 2, 5)})"
        if k == 7:
            return f"({self.iexpr(depth + 1)} // 2)"
        if k == 8:
            return f"b[{self.iexpr(depth + 1)} % {NB}]"
        return f"(-{self.iexpr(depth + 1)})"

    def fexpr(self, depth=0):
        if self.wide and self.chance(15):
            k = self.c("int", 0, 2)
            if k == 0:
                return f"({self.element('U')} / {self.element('W')})"  # float64
            if k == 1:  # a uint64 with an int64: numba's min and max are float64
                return f"{self.pick(['min', 'max'])}({self.element('U')} * {self.element('U')}, {self.element('W')} - 1)"
            return f"({self.element('W')} * {self.element('W')} - {self.fexpr(depth + 1)})"
        k = self.c("int", 0, 6 if depth < 2 else 2)
        if k == 0:
            return self.pick(self.floats)
        if k == 1:
            return f"a[{self.iexpr(depth + 1)} % {NA}]"
        if k == 2:
            return self.pick(["0.5", "1.0", "2.0", "-1.5"])
        if k == 3:
            return f"({self.fexpr(depth + 1)} + {self.fexpr(depth + 1)})"
        if k == 4:
            return f"({self.fexpr(depth + 1)} * 0.5)"
        if k == 5:
            return f"({self.fexpr(depth + 1)} if {self.cond(depth + 1)} else {self.fexpr(depth + 1)})"
        return f"({self.fexpr(depth + 1)} - {self.iexpr(depth + 1)})"

    def cond(self, depth=0):
        k = self.c("int", 0, 8 if depth < 2 else 4)
        if k == 0:
            return f"{self.iexpr(depth + 1)} < {self.iexpr(depth + 1)}"
        if k == 1:
            return f"{self.iexpr(depth + 1)} % 2 == 0"
        if k == 2:
            return f"{self.fexpr(depth + 1)} > 0.5"
        if k == 3:
            return self.pick(["flag", "n > 3", "not flag"])
        if k == 4:
            return f"lane < {self.c('int', 0, 33)}"
        if k == 5:
            return f"{self.cond(depth + 1)} and {self.cond(depth + 1)}"
        if k == 6:
            return f"{self.cond(depth + 1)} or a[{self.iexpr(depth + 1)} % {NA}] < 0.3"
        if k == 7:
            return f"not ({self.cond(depth + 1)})"
        return f"{self.iexpr(depth + 1)} == {self.c('int', 0, 3)}"

    # statements
    def block(self, indent, depth, top):
        for k in range(self.c("int", 1, 4 if depth else 7)):
            if self.size > 60:
                if k == 0:
                    self.emit(indent, f"{self.pick(self.floats)} = {self.fexpr(2)}")
                return
            self.stmt(indent, depth, top)

    def stmt(self, indent, depth, top):
        k = self.c("int", 0, 20 if depth < 3 else 6)
        if k <= 1:
            self.emit(indent, f"{self.pick(self.floats)} = {self.fexpr()}")
        elif k == 2:
            self.emit(indent, f"{self.pick(self.ivars)} = ({self.iexpr()}) % {IMOD}")
        elif k == 3:
            self.emit(indent, f"out[gid * {SLOTS} + {self.c('int', 0, SLOTS - 1)}] = {self.fexpr()}")
        elif k == 4:
            self.emit(indent, f"out[gid * {SLOTS} + {self.c('int', 0, SLOTS - 1)}] += {self.fexpr()}")
        elif k == 5:
            self.emit(indent, f"{self.pick(self.floats)} += {self.fexpr()}")
        elif k == 6:
            var = self.pick(self.ivars)
            self.emit(indent, f"{var} += {self.iexpr()}")
            self.lines.append("    " * indent + f"{var} %= {IMOD}")
        elif k in (7, 8):
            self.emit(indent, f"if {self.cond()}:")
            self.block(indent + 1, depth + 1, False)
            if self.chance(30):
                self.emit(indent, f"elif {self.cond()}:")
                self.block(indent + 1, depth + 1, False)
            if self.chance(50):
                self.emit(indent, "else:")
                self.block(indent + 1, depth + 1, False)
        elif k == 9:
            var = f"k{depth}"
            bound = self.pick([f"{self.iexpr()} % 4", "3", "n % 5"])
            self.emit(indent, f"for {var} in range({bound}):")
            self.ints.append(var)
            self.loop_depth += 1
            self.block(indent + 1, depth + 1, False)
            self.loop_depth -= 1
            self.ints.remove(var)
        elif k == 10:
            var = f"w{depth}"
            self.emit(indent, f"{var} = 0")
            self.emit(indent, f"while {var} < {self.iexpr()} % 3:")
            self.emit(indent + 1, f"{var} += 1")
            self.loop_depth += 1
            self.block(indent + 1, depth + 1, False)
            self.loop_depth -= 1
        elif k == 11 and self.loop_depth:
            self.emit(indent, f"if {self.cond()}:")
            self.emit(indent + 1, self.pick(["break", "continue"]))
        elif k == 12 and (self.exits or self.chance(30)):
            self.emit(indent, f"if {self.cond()}:")
            self.emit(indent + 1, "return")
            if self.exits and top and not self.private and self.chance(60):  # the barrier after the exit
                self.emit(indent, f"sh[tid] = {self.fexpr()}")
                self.emit(indent, "cuda.syncthreads()")
                self.emit(indent, f"{self.pick(self.floats)} = sh[({self.iexpr()}) % TPB]")
        elif k in (13, 14, 15) and self.private:
            self.emit(indent, f"{self.pick(self.floats)} = {self.fexpr()}")
        elif k == 13:
            self.emit(indent, f"sh[tid] = {self.fexpr()}")
            if top or self.chance(10):
                self.emit(indent, "cuda.syncthreads()")
            self.emit(indent, f"{self.pick(self.floats)} = sh[({self.iexpr()}) % TPB]")
        elif k == 14 and (top or self.chance(20)):
            self.emit(indent, f"{self.pick(self.floats)} = cuda.{self.pick(['shfl_down_sync', 'shfl_up_sync', 'shfl_xor_sync'])}"
                              f"(0xFFFFFFFF, {self.pick(self.floats)}, {self.c('int', 1, 16)})")
        elif k == 15:
            self.emit(indent, f"{self.pick(self.ivars)} = cuda.popc(cuda.ballot_sync(0xFFFFFFFF, {self.cond()}))")
        elif k == 16 and self.atomics_mix and not self.private and self.chance(70):
            # a shared histogram's steps: atomics on sh, then (a barrier, sometimes) a plain read
            # of sh or a plain write, as a read-out or a reset would be
            self.emit(indent, f"cuda.atomic.{self.pick(['add', 'add', 'max', 'min'])}(sh, ({self.iexpr()}) % TPB, "
                              f"{self.fexpr()})")
            if top and self.chance(50):
                self.emit(indent, "cuda.syncthreads()")
            elif self.chance(20):
                self.emit(indent, "cuda.syncwarp()")
            if self.chance(60):
                self.emit(indent, f"{self.pick(self.floats)} = sh[({self.iexpr()}) % TPB]")
            else:
                self.emit(indent, f"sh[({self.pick(['tid', self.iexpr()])}) % TPB] = {self.fexpr()}")
        elif k == 16:
            # the old value depends on the order blocks run in (batched or one at a time), as on a GPU
            self.emit(indent, f"cuda.atomic.add(hist, ({self.iexpr()}) % {NH}, 1)")
        elif k == 17:
            self.emit(indent, f"{self.pick(self.floats)} = clamp({self.pick(self.floats)}, {self.pick(self.ivars)})")
        elif k == 18:
            self.emit(indent, f"loc[({self.iexpr()}) % 4] = {self.fexpr()}")
            self.emit(indent, f"{self.pick(self.floats)} += loc[({self.iexpr()}) % 4]")
        elif k == 19:
            self.emit(indent, f"bump(out, gid * {SLOTS} + {self.c('int', 0, SLOTS - 1)}, {self.fexpr()})")
        else:
            var = f"w{depth}"
            self.emit(indent, f"{var} = 0")
            self.emit(indent, f"while {var} < 3 and a[({self.iexpr()}) % {NA}] > 0.2:")
            self.emit(indent + 1, f"{var} += 1")
            self.loop_depth += 1
            self.block(indent + 1, depth + 1, False)
            self.loop_depth -= 1


def program(choose, private=False, atomics_mix=False, exits=False, wide=False):
    """``(source, block, grid, name)`` of a random kernel ``name(a, b, out, hist, n, flag)``;
    ``atomics_mix``: with shared atomics mixed into plain accesses of ``sh`` (``sh`` zeroed first);
    ``exits``: with early returns before barriers; ``wide``: with integer operands beyond 32
    bits (the module's docstring)."""
    g = Gen(choose, private, atomics_mix, exits, wide)
    block = g.pick(BLOCKS)
    grid = g.pick(GRIDS)
    tpb = int(np.prod(block))
    name = f"random_kernel_{next(_counter)}"
    head = [
        "import numpy as np",
        "from simtdocs import cuda",
        f"TPB = {tpb}",
        *([f"W = np.array({W_VALUES}, np.int32)", f"U = np.array({U_VALUES}, np.uint32)",
           f"S8 = np.array({S8_VALUES}, np.int8)"] if wide else []),
        "",
        "@cuda.jit(device=True)",
        "def clamp(x, k):",
        "    if x > 2.0:",
        "        return 2.0",
        "    if k % 3 == 1:",
        "        return x - 1.0",
        "    return x * 0.5",
        "",
        "@cuda.jit(device=True)",
        "def bump(arr, idx, v):",
        "    if v > 1.0:",
        "        arr[idx] += v",
        "        return",
        "    arr[idx] -= 1.0",
        "",
        "@cuda.jit",
        f"def {name}(a, b, out, hist, n, flag):",
        "    sh = cuda.shared.array(TPB, np.float32)",
        "    tid = cuda.threadIdx.x + cuda.blockDim.x * cuda.threadIdx.y",
        "    gid = tid + TPB * (cuda.blockIdx.x + cuda.gridDim.x * cuda.blockIdx.y)",
        "    lane = cuda.laneid",
        "    f0 = a[gid % 97]",
        "    f1 = 0.0",
        "    i0 = b[gid % 61]",
        "    i1 = 1",
        "    loc = cuda.local.array(4, np.float32)",
    ]
    if atomics_mix:
        head += ["    sh[tid] = 0.0", "    cuda.syncthreads()"]
    if exits:  # the guard of a launch whose last block runs past the data
        g.emit(1, f"if gid >= {g.c('int', 0, tpb * int(np.prod(grid)))}:")
        g.emit(2, "return")
    g.block(1, 0, True)
    g.emit(1, f"out[gid * {SLOTS}] += f0 + f1 + i0 + i1")
    source = "\n".join(head + g.lines) + "\n"
    return source, block, grid, name


def load(source: str, name: str):
    """The kernel ``name`` of ``source``, compiled with a file name linecache knows."""
    filename = f"<{name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace: dict = {"__name__": name}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]


def arguments(block, grid, seed=0):
    rng = np.random.default_rng(seed)
    threads = int(np.prod(block)) * int(np.prod(grid))
    a = rng.random(NA, dtype=np.float32)
    b = rng.integers(0, 9, NB).astype(np.int32)
    out = np.zeros(threads * SLOTS, np.float32)
    hist = np.zeros(NH, np.int32)
    return a, b, out, hist, int(rng.integers(1, 9)), bool(rng.integers(0, 2))
