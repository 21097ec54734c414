"""Random per-thread kernels: real numba-style source, generated from random choices.

A kernel gets a random mix of per-thread and uniform ``if``/``elif``/``else``, ``and``/``or``
(with loads on the short-circuited side), conditional expressions, ``for`` loops with
per-thread and uniform bounds, ``while`` loops, ``break``/``continue``/early ``return``,
global loads and stores (``=`` and ``+=``), shared memory with and without
``syncthreads``, shuffles, ballots, atomics and a device function with an early return,
over a random block shape and grid. Every index is taken modulo its array's size, so a
kernel is valid unless its control flow makes it invalid (a shuffle from a lane that left,
a barrier some threads skip): then both engines must raise the same error.
"""

from __future__ import annotations

import itertools
import linecache

import numpy as np


BLOCKS = [(32,), (64,), (48,), (7,), (33,), (16, 4), (8, 8), (128,)]
GRIDS = [(1,), (2,), (3,), (2, 2)]
SLOTS = 4
NA, NB, NH = 97, 61, 7
#: Integer variables stay below this: repeated in nested loops, ``i1 += i1 * 3`` would pass
#: int64 and wrap (as numba wraps); the oracle runs Python ints, which do not.
IMOD = 1009
_counter = itertools.count()


class Gen:
    def __init__(self, choose, private=False):
        self.private = private  # threads never talk: no shared memory, barriers, shuffles, votes
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
    def iexpr(self, depth=0):
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
        elif k == 12 and self.chance(30):
            self.emit(indent, f"if {self.cond()}:")
            self.emit(indent + 1, "return")
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


def program(choose, private=False):
    """``(source, block, grid, name)`` of a random kernel ``name(a, b, out, hist, n, flag)``."""
    g = Gen(choose, private)
    block = g.pick(BLOCKS)
    grid = g.pick(GRIDS)
    tpb = int(np.prod(block))
    name = f"random_kernel_{next(_counter)}"
    head = [
        "import numpy as np",
        "from simtdocs import cuda",
        f"TPB = {tpb}",
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
