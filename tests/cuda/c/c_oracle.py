"""C's meaning for the random kernels of ``c_random``: a slow per-thread interpreter of the
program tree, in C's rules, written from the C/C++ standard (not from ``simtdocs.cuda.c``).

Every value is a ``(ctype, value)`` pair: a Python int for the integer types (already
reduced to its type's range), a numpy ``float32``/``float64`` scalar for ``float``/``double``
(numpy's scalar arithmetic is IEEE's, correctly rounded, with no contraction into FMAs).
The rules, as the standard gives them ([conv.prom], [expr.arith.conv], [expr.mul], [expr.shift]):

* integer promotion: ``bool``, ``char``, ``unsigned char``, ``short`` become ``int`` (all
  their values fit) before arithmetic, comparisons, shifts and unary operators;
* the usual arithmetic conversions: ``double`` if either is, else ``float`` if either is;
  two integers of the same signedness meet at the higher rank; an unsigned of at least the
  signed one's rank wins (``int`` with ``unsigned``: ``unsigned``); a signed type that holds
  every value of the unsigned one wins (``long long`` with ``unsigned``: ``long long``);
* integer ``/`` truncates toward zero and ``a % b == a - (a / b) * b``;
* signed overflow, undefined in C, is the two's-complement wrap (what the hardware's
  instruction gives, as ``simtdocs.cuda.c`` documents it), counted in ``events``; so are
  ``<<`` of a negative value (C++20's rule) and conversions to a narrower signed type (C++20:
  modulo 2^N); ``>>`` of a negative value is arithmetic;
* a comparison is a ``bool``; ``x ? y : z`` has the common type of ``y`` and ``z`` and
  evaluates one of them; ``&&`` and ``||`` short-circuit;
* an integer converted to ``float`` is rounded once, to nearest even, from the integer itself
  (``_int_to_float32``; going through ``double`` would round twice past 2^53); a float
  converted to an integer truncates, and must fit (else undefined: an error here).

The tree holds no shared memory, barriers, shuffles or votes in ``mode="c"`` (its threads do
not talk), so one thread after another, in block order and x fastest, gives the meaning; the
atomics on ``hist`` commute, so their order does not matter.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from c_random import E, Program, S

INTS = {  # ctype: (bits, signed, rank)
    "bool": (1, False, 0), "char": (8, True, 1), "unsigned char": (8, False, 1), "short": (16, True, 2),
    "int": (32, True, 3), "unsigned": (32, False, 3), "long long": (64, True, 5), "unsigned long long": (64, False, 5),
}
FLOATS = {"float": np.float32, "double": np.float64}
_UNSIGNED_OF = {"int": "unsigned", "long long": "unsigned long long"}

#: what the programs run into: signed wraps, negative dividends, unsigned-signed meetings, promotions
events: Counter = Counter()


class UndefinedBehaviour(Exception):
    """The program did what C leaves undefined and the front end does not model (a float out
    of an integer's range, a division by zero, a shift past the width): a generator bug."""


def _wrap(v: int, t: str) -> int:
    bits, signed, _ = INTS[t]
    if t == "bool":
        return int(v != 0)
    v &= (1 << bits) - 1
    return v - (1 << bits) if signed and v >= 1 << (bits - 1) else v


def _int_to_float32(v: int) -> np.float32:
    """``v`` rounded once to float32, to nearest, ties to even."""
    sign, m = (-1 if v < 0 else 1), abs(v)
    extra = m.bit_length() - 24
    if extra > 0:
        q, r = divmod(m, 1 << extra)
        half = 1 << (extra - 1)
        if r > half or (r == half and q & 1):
            q += 1
        m = q << extra  # exact in a double: 25 significant bits at most
    return np.float32(float(sign * m))


def promote(t: str) -> str:
    return "int" if t in INTS and INTS[t][2] < 3 else t


def common(a: str, b: str) -> str:
    if "double" in (a, b):
        return "double"
    if "float" in (a, b):
        return "float"
    a, b = promote(a), promote(b)
    if a == b:
        return a
    (_, sa, ra), (_, sb, rb) = INTS[a], INTS[b]
    if sa == sb:
        return a if ra >= rb else b
    u, s = (a, b) if not sa else (b, a)
    if INTS[u][2] >= INTS[s][2]:
        return u
    if INTS[s][0] > INTS[u][0]:
        return s
    return _UNSIGNED_OF[s]


def convert(x, t: str):
    """``(t)x``: C's conversion."""
    ft, v = x
    if ft == t:
        return x
    if t == "bool":
        return t, int(v != 0)
    if t in INTS:
        if ft in FLOATS:
            if not np.isfinite(v) or not -(2 ** 63) <= float(v) < 2 ** 63:
                raise UndefinedBehaviour(f"({t}) of {v!r}")
            i = int(v)  # truncates toward zero
            if _wrap(i, t) != i:
                raise UndefinedBehaviour(f"({t}) of {v!r}: out of range")
            return t, i
        w = _wrap(v, t)
        if w != v and INTS[t][1]:
            events["narrowing to signed"] += 1
        return t, w
    if ft in INTS:
        return t, (_int_to_float32(v) if t == "float" else np.float64(float(v)))  # float(int) rounds once
    return t, FLOATS[t](v)


def _signed_result(v: int, t: str) -> int:
    w = _wrap(v, t)
    if w != v:
        events["signed wrap" if INTS[t][1] else "unsigned wrap"] += 1
    return w


class Arr:
    """An array with its elements' C type; ``off`` for a pointer into it (a device function's parameter)."""

    def __init__(self, a: np.ndarray, t: str):
        self.a, self.t = a, t

    def load(self, i: int):
        if not 0 <= i < self.a.size:
            raise IndexError(f"index {i} of an array of {self.a.size}")
        v = self.a[i]
        return self.t, (int(v) if self.t in INTS else FLOATS[self.t](v))

    def store(self, i: int, x):
        if not 0 <= i < self.a.size:
            raise IndexError(f"index {i} of an array of {self.a.size}")
        self.a[i] = convert(x, self.t)[1]


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class _Return(Exception):
    def __init__(self, value):
        self.value = value


class Thread:
    """One thread's run of a function: its variables' C types and values."""

    def __init__(self, program: Program, env: dict, types: dict):
        self.p, self.env, self.types = program, env, types

    # -- types, before anything is evaluated (``?:`` needs both sides' types) --
    def static(self, e: E) -> str:
        k, a = e.kind, e.a
        if k == "name":
            return self.types[a[0]]
        if k == "lit":
            v, t = a
            if t == "decimal":  # a decimal literal is the first of int, long, long long that holds it
                return "int" if v < 2 ** 31 else "long long"
            return t
        if k == "load":
            return self.env[a[0]].t
        if k == "bin":
            op, l, r = a
            if op in ("<", "<=", ">", ">=", "==", "!=", "&&", "||"):
                return "bool"
            if op in ("<<", ">>"):
                return promote(self.static(l))
            return common(self.static(l), self.static(r))
        if k == "un":
            return "bool" if a[0] == "!" else promote(self.static(a[1]))
        if k == "cast":
            return a[0]
        if k == "cond":
            return common(self.static(a[1]), self.static(a[2]))
        if k == "call":
            return self.p.functions[a[0]][0]
        raise UndefinedBehaviour(f"no per-thread meaning for {k}")

    # -- values --
    def eval(self, e: E):
        k, a = e.kind, e.a
        if k == "name":
            return self.types[a[0]], self.env[a[0]]
        if k == "lit":
            return self.static(e), a[0] if self.static(e) in INTS else FLOATS[a[1]](a[0])
        if k == "load":
            return self.env[a[0]].load(self.index(a[1]))
        if k == "bin":
            return self.binary(*a)
        if k == "un":
            op, x = a
            if op == "!":
                return "bool", int(not self.truth(x))
            t = promote(self.static(x))
            _, v = convert(self.eval(x), t)
            if t in FLOATS:
                return t, -v
            if op == "-":
                return t, _signed_result(-v, t)
            return t, _wrap(~v, t)
        if k == "cast":
            return convert(self.eval(a[1]), a[0])
        if k == "cond":
            t = common(self.static(a[1]), self.static(a[2]))
            return convert(self.eval(a[1] if self.truth(a[0]) else a[2]), t)
        if k == "call":
            return self.call(a[0], [self.eval(x) if x.kind != "name" or x.a[0] not in self.env or
                                    not isinstance(self.env[x.a[0]], Arr) else self.env[x.a[0]] for x in a[1:]])
        raise UndefinedBehaviour(f"no per-thread meaning for {k}")

    def index(self, e: E) -> int:
        t, v = self.eval(e)
        if t not in INTS:
            raise UndefinedBehaviour(f"a {t} index")
        return v

    def truth(self, e: E) -> bool:
        return bool(convert(self.eval(e), "bool")[1])

    def binary(self, op, l, r):
        if op == "&&":
            return "bool", int(self.truth(l) and self.truth(r))
        if op == "||":
            return "bool", int(self.truth(l) or self.truth(r))
        x, y = self.eval(l), self.eval(r)
        if op in ("<<", ">>"):
            t = promote(x[0])
            v, c = convert(x, t)[1], convert(y, promote(y[0]))[1]
            if not 0 <= c < INTS[t][0]:
                raise UndefinedBehaviour(f"a shift by {c}")
            if op == ">>":
                return t, v >> c  # arithmetic for a negative value (Python's >> floors)
            if v < 0:
                events["<< of a negative"] += 1
            return t, _signed_result(v << c, t) if INTS[t][1] else _wrap(v << c, t)
        t = common(x[0], y[0])
        for s in (x[0], y[0]):
            if s in INTS and INTS[s][2] < 3:
                events["promotion"] += 1
        if t in INTS and not INTS[t][1] and any(s in INTS and INTS[s][1] for s in (x[0], y[0])):
            if min(x[1] if x[0] in INTS else 0, y[1] if y[0] in INTS else 0) < 0:
                events["negative signed meets unsigned"] += 1
        a, b = convert(x, t)[1], convert(y, t)[1]
        if op in ("<", "<=", ">", ">=", "==", "!="):
            return "bool", int({"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}[op])
        if t in FLOATS:
            with np.errstate(all="ignore"):
                return t, {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}[op](a, b)
        if op in ("/", "%"):
            if b == 0:
                raise UndefinedBehaviour("a division by zero")
            if a < 0 or b < 0:
                events["negative / or %"] += 1
            q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)  # toward zero
            return t, _signed_result(q, t) if op == "/" else a - b * q
        f = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
             "&": lambda: a & b, "|": lambda: a | b, "^": lambda: a ^ b}[op]
        v = f()
        return t, _signed_result(v, t) if op in "+-*" else _wrap(v, t)

    # -- statements --
    def run(self, stmts):
        for s in stmts:
            self.stmt(s)

    def stmt(self, s: S):
        k, a = s.kind, s.a
        if k == "decl":
            t, n, init = a
            self.types[n] = t
            self.env[n] = convert(self.eval(init), t)[1]
        elif k == "array":
            _, t, n, size = a
            self.env[n] = Arr(np.zeros(size, np.float32), t)
        elif k == "assign":
            target, op, value = a
            if op == "=":
                x = self.eval(value)
            else:
                x = self.binary(op[:-1], target, value)
            if target.kind == "name":
                self.env[target.a[0]] = convert(x, self.types[target.a[0]])[1]
            else:
                self.env[target.a[0]].store(self.index(target.a[1]), x)
        elif k == "if":
            arms, orelse = a
            for cond, body in arms:
                if self.truth(cond):
                    self.run(body)
                    return
            if orelse is not None:
                self.run(orelse)
        elif k == "for":
            var, bound, body, _ = a
            end = convert(self.eval(bound), "int")[1]
            self.types[var] = "int"
            self.env[var] = 0
            while self.env[var] < end:
                try:
                    self.run(body)
                except _Break:
                    break
                except _Continue:
                    pass
                self.env[var] = _signed_result(self.env[var] + 1, "int")
        elif k == "while":
            cond, body = a
            while self.truth(cond):
                try:
                    self.run(body)
                except _Break:
                    break
                except _Continue:
                    pass
        elif k == "do":
            cond, body = a
            while True:
                try:
                    self.run(body)
                except _Break:
                    break
                except _Continue:
                    pass  # to the test, as C's continue in a do loop
                if not self.truth(cond):
                    break
        elif k == "incr":
            target, op, _ = a
            x = self.binary("+" if op == "++" else "-", target, E("lit", 1, "int"))
            self.env[target.a[0]] = convert(x, self.types[target.a[0]])[1]
        elif k == "break":
            raise _Break
        elif k == "continue":
            raise _Continue
        elif k == "return":
            raise _Return(None if a[0] is None else self.eval(a[0]))
        elif k == "atomic":
            op, arr, idx, value = a
            arr, i = self.env[arr], self.index(idx)
            old = arr.load(i)
            v = convert(self.eval(value), arr.t)  # atomicAdd(int *, int): the value converts to the element type
            if op in ("add", "sub"):
                new = self.binary("+" if op == "add" else "-", E("lit", old[1], old[0]), E("lit", v[1], v[0]))
            else:
                new = arr.t, (max if op == "max" else min)(old[1], v[1])
            arr.store(i, new)
        elif k == "call":
            self.eval(E("call", *a))
        else:
            raise UndefinedBehaviour(f"no per-thread meaning for {k}")

    def call(self, fname, args):
        ret, params, body = self.p.functions[fname]
        env, types = {}, {}
        for (t, n), x in zip(params, args):
            if t.endswith("*"):
                env[n] = x  # an Arr: the pointer is the array itself
            else:
                types[n], env[n] = t, convert(x, t)[1]
        try:
            Thread(self.p, env, types).run(body)
        except _Return as r:
            if ret != "void":
                return convert(r.value, ret)
        return "void", None


def launch(program: Program, args) -> None:
    """Run ``program`` (``mode="c"``) thread by thread on ``args`` (the C arguments) in place."""
    block = tuple(program.block) + (1,) * (3 - len(program.block))
    grid = tuple(program.grid) + (1,) * (3 - len(program.grid))
    _, params, body = program.functions[program.name]
    base_env, base_types = {"TPB": program.tpb}, {"TPB": "int"}
    for (t, n), x in zip(params, args):
        if t.endswith("*"):
            base_env[n] = Arr(x, t.replace("const ", "").replace("*", "").strip())
        else:
            base_types[n], base_env[n] = t, int(x)
    for d, v in (("blockDim", block), ("gridDim", grid)):
        for axis, value in zip("xyz", v):
            base_types[f"{d}.{axis}"], base_env[f"{d}.{axis}"] = "unsigned", value
    for bz in range(grid[2]):
        for by in range(grid[1]):
            for bx in range(grid[0]):
                for tz in range(block[2]):
                    for ty in range(block[1]):
                        for tx in range(block[0]):
                            env, types = dict(base_env), dict(base_types)
                            for d, v in (("threadIdx", (tx, ty, tz)), ("blockIdx", (bx, by, bz))):
                                for axis, value in zip("xyz", v):
                                    types[f"{d}.{axis}"], env[f"{d}.{axis}"] = "unsigned", value
                            try:
                                Thread(program, env, types).run(body)
                            except _Return:
                                pass
