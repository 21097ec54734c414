"""Random Triton block programs over the supported ops, each with a per-element numpy
reference that knows nothing of simtdocs.triton.

A program is one of two shapes: 1-D (``offs = pid * BLOCK + arange``, masked tail) or 2-D
(a tile of ``R`` rows of a row-major matrix, rows masked). Its body is a few assignments
of random expressions over the loaded blocks (float32: + - * maximum minimum where abs
exp sigmoid sqrt, division by a value at least 1; int32: + - * and Triton's truncating
// and % by a positive divisor), optionally a loop whose trip count depends on the program
id, optionally an ``if`` on the program id (both diverge between programs of a batch), a
store of one value and a reduction (sum, max, min, argmax) of another along an axis.

``make(seed)`` returns a ``Case``: the kernel's source, the inputs, the grid and
``reference()``, which evaluates the same expression trees with numpy, program by program.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
from dataclasses import dataclass, field

import numpy as np

_DIR = tempfile.mkdtemp(prefix="triton_random_")

HEADER = "from simtdocs import triton\nfrom simtdocs.triton import language as tl\n\n\n"


def _trunc_div(a, b):
    q = np.abs(a) // np.abs(b)
    return (np.sign(a) * np.sign(b) * q).astype(a.dtype)


def _trunc_mod(a, b):
    return (a - _trunc_div(a, b) * b).astype(a.dtype)


class Expr:
    def __init__(self, src, ref, kind):
        self.src, self.ref, self.kind = src, ref, kind  # ref(env) -> numpy array; kind "f" or "i"


def _leaf(rng, kind, names):
    pool = [n for n, k in names if k == kind]
    if pool and rng.random() < 0.8:
        n = pool[rng.integers(len(pool))]
        return Expr(n, lambda env, n=n: env[n], kind)
    if kind == "f":
        c = float(np.float32(rng.choice([0.5, 1.5, -2.0, 3.0, 0.25])))
        return Expr(repr(c), lambda env, c=c: np.float32(c), "f")
    c = int(rng.integers(-5, 9))  # a block, not a Python int: Python's // floors, Triton's truncates
    return Expr(f"(tl.zeros_like(ia) + {c})", lambda env, c=c: np.full(env["ia"].shape, c, np.int32), "i")


def _expr(rng, kind, names, depth):
    if depth == 0 or rng.random() < 0.25:
        return _leaf(rng, kind, names)
    if kind == "f":
        op = rng.choice(["+", "-", "*", "max", "min", "where", "abs", "exp", "sig", "sqrt", "div", "cast"])
        a = _expr(rng, "f", names, depth - 1)
        b = _expr(rng, "f", names, depth - 1)
        if op in "+-*":
            f = {"+": np.add, "-": np.subtract, "*": np.multiply}[op]
            return Expr(f"({a.src} {op} {b.src})", lambda e: np.float32(f(a.ref(e), b.ref(e))).astype(np.float32)
                        if np.ndim(f(a.ref(e), b.ref(e))) == 0 else f(a.ref(e), b.ref(e)).astype(np.float32), "f")
        if op == "max":
            return Expr(f"tl.maximum({a.src}, {b.src})", lambda e: np.maximum(a.ref(e), b.ref(e)), "f")
        if op == "min":
            return Expr(f"tl.minimum({a.src}, {b.src})", lambda e: np.minimum(a.ref(e), b.ref(e)), "f")
        if op == "where":
            c = _expr(rng, "f", names, depth - 1)
            return Expr(f"tl.where({c.src} > {a.src}, {a.src}, {b.src})",
                        lambda e: np.where(c.ref(e) > a.ref(e), a.ref(e), b.ref(e)).astype(np.float32), "f")
        if op == "abs":
            return Expr(f"tl.abs({a.src})", lambda e: np.abs(a.ref(e)), "f")
        if op == "exp":
            return Expr(f"tl.exp(-tl.abs({a.src}))", lambda e: np.exp(-np.abs(np.float32(a.ref(e)))), "f")
        if op == "sig":
            return Expr(f"tl.sigmoid({a.src})", lambda e: (1 / (1 + np.exp(-np.float32(a.ref(e))))).astype(np.float32),
                        "f")
        if op == "sqrt":
            return Expr(f"tl.sqrt(tl.abs({a.src}) + 1.0)",
                        lambda e: np.sqrt(np.abs(np.float32(a.ref(e))) + np.float32(1)), "f")
        if op == "div":
            return Expr(f"({a.src} / (tl.abs({b.src}) + 1.0))",
                        lambda e: (np.float32(a.ref(e)) / (np.abs(np.float32(b.ref(e))) + np.float32(1)))
                        .astype(np.float32), "f")
        i = _expr(rng, "i", names, depth - 1)
        return Expr(f"{i.src}.to(tl.float32)",
                    lambda e: np.float32(i.ref(e)) if np.ndim(i.ref(e)) == 0 else i.ref(e).astype(np.float32), "f")
    op = rng.choice(["+", "-", "*", "//", "%"])
    a = _expr(rng, "i", names, depth - 1)
    b = _expr(rng, "i", names, depth - 1)
    if op in ("//", "%"):
        f = _trunc_div if op == "//" else _trunc_mod
        d = int(rng.integers(1, 7))
        return Expr(f"({a.src} {op} {d})", lambda e: f(np.asarray(a.ref(e), np.int32), np.int32(d)), "i")
    f = {"+": np.add, "-": np.subtract, "*": np.multiply}[op]
    return Expr(f"({a.src} {op} {b.src})", lambda e: np.asarray(f(np.asarray(a.ref(e), np.int32),
                                                                  np.asarray(b.ref(e), np.int32)), np.int32), "i")


@dataclass
class Case:
    seed: int
    source: str
    name: str
    grid: tuple
    arrays: list
    scalars: list
    meta: dict
    ref_fn: object = None
    float_out: bool = True
    reduce_kind: str = "sum"
    outputs: tuple = (2, 3)
    module: object = field(default=None, repr=False)
    path: str = ""

    def kernel(self):
        if self.module is None:
            spec = importlib.util.spec_from_file_location(f"triton_random_{self.seed}", self.path)
            self.module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(self.module)
        return getattr(self.module, self.name)

    def reference(self):
        return self.ref_fn()


def make(seed: int) -> Case:
    rng = np.random.default_rng(seed)
    two_d = rng.random() < 0.5
    nw = int(rng.choice([1, 2, 4]))
    kind_out = "f" if rng.random() < 0.75 else "i"
    names = [("a", "f"), ("b", "f"), ("ia", "i"), ("offs", "i"), ("pid", "i")]
    lines = []
    body = []  # (name, Expr)
    for j in range(int(rng.integers(1, 4))):
        kind = "f" if j == 0 or rng.random() < 0.7 else "i"
        e = _expr(rng, kind, names, 3)
        body.append((f"v{j}", e))
        names.append((f"v{j}", kind))
    loop = rng.random() < 0.5
    branch = rng.random() < 0.5
    store_e = _expr(rng, kind_out, names + ([("acc", "f")] if loop else []) + ([("t", "f")] if branch else []), 2)
    red_kind = str(rng.choice(["sum", "max", "min", "argmax"]))
    red_e = _expr(rng, "f", names, 2)
    if two_d:
        R = int(rng.choice([2, 4, 8]))
        C = int(rng.choice([16, 32, 64]))
        M = int(rng.integers(1, 4 * R))
        grid = (-(-M // R),)
        axis = int(rng.integers(0, 2))
        shape = (M, C)
        lines += ["    pid = tl.program_id(0)",
                  "    rows = pid * R + tl.arange(0, R)",
                  "    cols = tl.arange(0, C)",
                  "    offs = rows[:, None] * C + cols[None, :]",
                  "    m = rows[:, None] < M"]
        meta = dict(R=R, C=C)
        sig = "x_ptr, y_ptr, out_ptr, red_ptr, i_ptr, M, R: tl.constexpr, C: tl.constexpr"
        scalars = [M]
    else:
        BLOCK = int(rng.choice([32, 64, 128, 256]))
        n = int(rng.integers(1, 3 * BLOCK))
        grid = (-(-n // BLOCK),)
        axis = 0
        shape = (n,)
        lines += ["    pid = tl.program_id(0)",
                  "    offs = pid * BLOCK + tl.arange(0, BLOCK)",
                  "    m = offs < n"]
        meta = dict(BLOCK=BLOCK)
        sig = "x_ptr, y_ptr, out_ptr, red_ptr, i_ptr, n, BLOCK: tl.constexpr"
        scalars = [n]
    oa, ob = float(rng.choice([0.0, 1.0, -1.5])), float(rng.choice([0.0, 2.0]))
    lines += [f"    a = tl.load(x_ptr + offs, mask=m, other={oa!r})",
              f"    b = tl.load(y_ptr + offs, mask=m, other={ob!r})",
              "    ia = tl.load(i_ptr + offs, mask=m, other=1)"]
    for nm, e in body:
        lines.append(f"    {nm} = {e.src}")
    trips = int(rng.integers(1, 4))
    if loop:
        lines += ["    acc = tl.zeros_like(a)",
                  f"    for i in range(0, pid % {trips} + 1):",
                  f"        acc = acc + {body[0][0]} * (i + 1)"]
    if branch:
        lines += ["    if pid % 2 == 0:",
                  f"        t = {body[-1][0]}{'' if body[-1][1].kind == 'f' else '.to(tl.float32)'} + 1.0",
                  "    else:",
                  "        t = a * 2.0"]
    like = "a" if kind_out == "f" else "ia"
    lines.append(f"    tl.store(out_ptr + offs, {store_e.src} + tl.zeros_like({like}), mask=m)")
    neutral = {"sum": "0.0", "max": "-1e30", "min": "1e30", "argmax": "-1e30"}[red_kind]
    red_src = f"tl.{red_kind}(tl.where(m, {red_e.src} + tl.zeros_like(a), {neutral}), axis={axis})"
    if two_d and axis == 1:
        lines.append(f"    tl.store(red_ptr + rows, {red_src}, mask=rows < M)")
    elif two_d:
        lines.append(f"    tl.store(red_ptr + pid * C + cols, {red_src})")
    else:
        lines.append(f"    tl.store(red_ptr + pid, {red_src})")
    name = f"random_kernel_{seed}"
    src = HEADER + "@triton.jit\n" + f"def {name}({sig}):\n" + "\n".join(lines) + "\n"
    path = os.path.join(_DIR, f"triton_random_{seed}.py")
    with open(path, "w") as f:
        f.write(src)

    x = rng.standard_normal(shape).astype(np.float32)
    y = rng.standard_normal(shape).astype(np.float32)
    ints = rng.integers(-20, 20, shape).astype(np.int32)
    out = np.zeros(shape, np.float32 if kind_out == "f" else np.int32)
    nred = (M if axis == 1 else grid[0] * C) if two_d else grid[0]
    red = np.zeros(nred, np.int32 if red_kind == "argmax" else np.float32)

    def ref():
        o, rd = out.copy(), red.copy()
        for p in range(grid[0]):
            if two_d:
                rows = p * R + np.arange(R, dtype=np.int32)
                offs = rows[:, None] * C + np.arange(C, dtype=np.int32)[None, :]
                m = np.broadcast_to(rows[:, None] < M, offs.shape)
            else:
                offs = p * BLOCK + np.arange(BLOCK, dtype=np.int32)
                m = offs < n
            flat = np.where(m, offs, 0)
            env = {"a": np.where(m, x.reshape(-1)[flat], np.float32(oa)).astype(np.float32),
                   "b": np.where(m, y.reshape(-1)[flat], np.float32(ob)).astype(np.float32),
                   "ia": np.where(m, ints.reshape(-1)[flat], 1).astype(np.int32),
                   "offs": offs.astype(np.int32), "pid": np.int32(p)}
            for nm, e in body:
                env[nm] = e.ref(env)
            if loop:
                acc = np.zeros_like(env["a"])
                for i in range(p % trips + 1):
                    acc = (acc + np.float32(env[body[0][0]]) * np.float32(i + 1)).astype(np.float32)
                env["acc"] = acc
            if branch:
                last = body[-1][0]
                env["t"] = (np.float32(env[last]) + np.float32(1)).astype(np.float32) if p % 2 == 0 \
                    else (env["a"] * np.float32(2)).astype(np.float32)
            v = np.broadcast_to(store_e.ref(env), offs.shape).astype(o.dtype)
            o.reshape(-1)[offs[m]] = v[m]
            r = np.where(m, np.broadcast_to(red_e.ref(env), offs.shape), np.float32(float(neutral)))
            r = r.astype(np.float32)
            f = {"sum": np.sum, "max": np.max, "min": np.min, "argmax": np.argmax}[red_kind]
            val = f(r, axis=axis)
            if two_d and axis == 1:
                keep = rows < M
                rd[rows[keep]] = np.asarray(val)[keep]
            elif two_d:
                rd[p * C:(p + 1) * C] = val
            else:
                rd[p] = val
        return o, rd

    return Case(seed, src, name, grid, [x, y, out, red, ints], scalars, dict(meta, num_warps=nw), ref,
                kind_out == "f", red_kind, (2, 3), path=path)
