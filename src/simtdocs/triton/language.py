"""``triton.language`` on paper: block tensors as numpy arrays, memory through ``blk``.

**Programs and batches.** A program instance is one block of ``num_warps * 32`` threads.
The programs of one engine pass run together: every tensor's numpy array has a leading
axis over the programs of the batch (length 1 when all of them hold the same values, as
``tl.arange`` does), and control flow that differs between programs is rewritten
(``simtdocs.triton._rewrite``) so each program runs its own iterations and branches. No
counter depends on how programs are batched.

**Layout (stated), as Triton's coalescing pass decides it.** For each ``tl.load``/
``tl.store`` the block's elements, in row-major order (last axis fastest), are cut into
chunks of ``spt`` contiguous elements; chunk ``c`` is held by thread ``c % T`` in
repetition ``c // T`` (``T = num_warps * 32``): lanes along the contiguous axis, warps
tiling the rest (Triton's ``#blocked`` encoding with ``sizePerThread = [1, …, spt]``).
The axis the lanes run along is the pointer's most contiguous one, as Triton's
``getOrderFromContiguity`` orders the layout (ties to the later axis): a tile read through a
transposed view (unit stride down its columns) takes its elements column by column
(``order = [0, 1]``), everything above then applying along that axis (``_layout_order``).
``spt`` is the largest power of 2 up to 16 bytes, the elements per thread and the last
axis that the pointer's proved alignment and contiguity allow; each thread then issues its
chunk as vectors of ``w`` elements, ``w`` cut further to the mask's proved constancy
(``_vector_plan``). What is "proved" follows Triton's ``AxisInfo``: pointer arguments are
16-byte aligned, integer arguments divisible by 16 are known to be (Triton specialises
them; others are not), divisibility goes through ``+ - * %`` and ``tl.multiple_of``, per axis
of a 2-D block (``x[:, None]`` has, along its new axis, the gcd of its values: 1 for a
contiguous run, AxisInfo's ExpandDims rule, so a row stride not divisible by 16 proves no row
aligned), loaded values prove nothing; contiguity is read off the offsets' values (what the analysis would
find for ``arange`` arithmetic). So ``offs < n`` with ``n`` not divisible by 16 gives scalar
accesses, as on a GPU. A tensor of fewer than ``T`` elements leaves the higher threads empty
(Triton replicates it). Elementwise results keep the layout of the load they come from
(Triton's layout propagation), and reductions run on it. ``kernel.layout(shape,
num_warps, dtype)`` returns the map of an aligned, unmasked access.
tests/triton/test_vs_compiler.py checks ``sizePerThread``, vector widths and reduction
shuffles against Triton 3.9's own TTGIR/PTX for sm_90 (compiled here without a GPU).

**What reaches the engine.** Every ``tl.load``/``tl.store``/``tl.atomic_*`` is one engine
access per repetition, on the lanes holding the elements, with the mask (masked-off
elements are not accessed). Reductions (``tl.sum/max/min/argmax/argmin``) run as Triton
3.9 lowers them (``_reduce_values``): each thread combines its own elements in registers,
the lanes holding the axis combine by a butterfly of ``shfl.sync.bfly`` (one shuffle per
step, per register), and when the axis spans warps the partials go through shared memory
(the lanes at axis-lane 0 store them, a barrier, every thread loads partials so that each
output's sit in neighbouring lanes, and a butterfly folds them). ``tl.dot`` converts both
operands to the MMA operand layout through shared memory (16-byte stores into a swizzled
tile, a barrier, the warps' 16-byte row reads as ``ldmatrix`` does; swizzled tiles are
conflict-free) and issues MMA instructions at the device preset's instruction shape
(``MMA_SHAPES``); FLOPs and MMA counts are kept in ``stats.dots``. Shared scratch is
reused, with a barrier before it is written again after a read (Triton's membar pass).
A reduction's result stored to memory first goes from its slice layout to a blocked one
through shared memory (Triton's ``convert_layout``; ``_convert_slice``). Not counted:
elementwise arithmetic; other layout conversions (a slice-layout value combined with a
blocked one; the accumulator's MMA layout and its conversion before the store). No L2, no pipelining (``num_stages`` is accepted; operands travel global →
registers → shared). ``cache_modifier``, ``eviction_policy``, ``volatile`` change nothing.
Block pointers (``tl.make_block_ptr``/``tl.advance``) lower to plain pointers and masks.
"""

from __future__ import annotations

import builtins as _b
import linecache
import math
import os
import sys
import threading

import numpy as np

from ..diagnostics import Site
from . import _rewrite

_HERE = os.path.dirname(os.path.abspath(__file__))
_ctx = threading.local()
builtin_range, builtins_min, builtins_max = _b.range, _b.min, _b.max
WARP = 32


class TritonError(Exception):
    """An unsupported construct or a misuse, naming the reader's line."""


def _reader_frame():
    f = sys._getframe(1)
    while f is not None and os.path.dirname(os.path.abspath(f.f_code.co_filename)) == _HERE:
        f = f.f_back
    return f


def _where_msg():
    f = _reader_frame()
    if f is None:
        return "<unknown>"
    return f"{f.f_code.co_filename}:{f.f_lineno}: {linecache.getline(f.f_code.co_filename, f.f_lineno).strip()}"


def _unsupported(what):
    raise NotImplementedError(f"{_where_msg()}: {what} is not supported by simtdocs.triton")


def _site(blk):
    f = _reader_frame()
    key = (f.f_code.co_filename, f.f_lineno)
    site = blk._L.sites.get(key)
    if site is None:
        src = linecache.getline(*key).strip()
        site = Site(blk._L.kernel_name, key[0], key[1], src)
        blk._L.sites[key] = site
    return site


# -- dtypes ---------------------------------------------------------------------------------

class dtype:
    def __init__(self, name, np_type):
        self.name = name
        self._np = np_type

    @property
    def np(self):
        if self._np is None:
            _unsupported(f"tl.{self.name} (install ml_dtypes)")
        return np.dtype(self._np)

    def __repr__(self):
        return f"triton.language.{self.name}"

    def is_floating(self):
        return self.np.kind == "f" or self.name == "bfloat16"

    primitive_bitwidth = property(lambda self: self.np.itemsize * 8)


try:
    import ml_dtypes
    _bf16 = ml_dtypes.bfloat16
except ImportError:  # pragma: no cover
    _bf16 = None

int1 = dtype("int1", np.bool_)
int8, int16, int32, int64 = (dtype(f"int{b}", getattr(np, f"int{b}")) for b in (8, 16, 32, 64))
uint8, uint16, uint32, uint64 = (dtype(f"uint{b}", getattr(np, f"uint{b}")) for b in (8, 16, 32, 64))
float16, float32, float64 = dtype("float16", np.float16), dtype("float32", np.float32), dtype("float64", np.float64)
bfloat16 = dtype("bfloat16", _bf16)
float8e4nv = float8e5 = None
_BY_NP = {np.dtype(d._np): d for d in (int1, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                                          float16, float32, float64)}
if _bf16 is not None:
    _BY_NP[np.dtype(_bf16)] = bfloat16


def _to_np_dtype(d):
    if isinstance(d, dtype):
        return d.np
    return np.dtype(d)


class constexpr:
    """``tl.constexpr``: an annotation; a constexpr argument is a plain Python value."""

    def __init__(self, value=None):
        self.value = value

    def __repr__(self):
        return f"constexpr({self.value!r})"


# -- tensors --------------------------------------------------------------------------------

def _val(x):
    if isinstance(x, tensor):
        return x.v
    if isinstance(x, constexpr):
        return x.value
    return x


def _batched(x):
    """``x`` as a batched numpy array: a leading program axis (1: alike in every program)."""
    if isinstance(x, tensor):
        return x.v
    if isinstance(x, constexpr):
        x = x.value
    if isinstance(x, float):
        return np.full(1, x, np.float32)  # a Python float becomes float32 in Triton, an int int32
    if isinstance(x, int) and not isinstance(x, bool) and -2**31 <= x < 2**31:
        return np.full(1, x, np.int32)
    return np.asarray(x)[None]


def _align(a, b):
    """Two batched arrays with the same number of axes: block shapes broadcast from the right."""
    if a.ndim < b.ndim:
        a = a.reshape(a.shape[:1] + (1,) * (b.ndim - a.ndim) + a.shape[1:])
    elif b.ndim < a.ndim:
        b = b.reshape(b.shape[:1] + (1,) * (a.ndim - b.ndim) + b.shape[1:])
    return a, b


def _fix_float(r, a, b):
    # numpy turns int32 * 0.5 into float64; Triton's literal is float32
    if r.dtype == np.float64 and getattr(a, "dtype", None) != np.float64 and getattr(b, "dtype", None) != np.float64:
        return r.astype(np.float32)
    return r


def _kind(x):
    """numpy's kind letter of an operand; Python scalars stay weak (numpy 2 and Triton agree)."""
    if isinstance(x, np.ndarray) or isinstance(x, np.generic):
        return x.dtype.kind
    return "b" if isinstance(x, bool) else "i" if isinstance(x, int) else "f"


def _arr(x):
    return x if isinstance(x, (np.ndarray, np.generic, bool, int, float)) else np.asarray(x)


def _trunc_div(a, b):
    a, b = _arr(a), _arr(b)
    if _kind(a) in "iub" and _kind(b) in "iub":
        if np.any(np.asarray(b) == 0):
            _unsupported("integer division by zero")
        q = np.floor_divide(a, b)
        fix = (np.remainder(a, b) != 0) & ((np.asarray(a) < 0) ^ (np.asarray(b) < 0))
        return (q + fix).astype(np.result_type(q), copy=False)
    return np.floor_divide(a, b)


def _trunc_mod(a, b):
    return np.fmod(_arr(a), _arr(b))  # the remainder takes the dividend's sign, as in C


def _truediv(a, b):
    a, b = _arr(a), _arr(b)
    r = np.true_divide(a, b)
    if _kind(a) in "iub" and _kind(b) in "iub":
        r = r.astype(np.float32)
    elif r.dtype == np.float64 and getattr(a, "dtype", None) != np.float64 and getattr(b, "dtype", None) != np.float64:
        r = r.astype(np.float32)
    return r


def _lift(v):
    """A Python or numpy scalar as a weakly typed operand (numpy 2's rules = Triton's for literals)."""
    if isinstance(v, (bool, int, float)):
        return v
    if isinstance(v, constexpr):
        return v.value
    return np.asarray(v)[None]


BIG = 1 << 20  # the divisibility of 0 (a constant 0 is divisible by anything)


def _pow2(x):
    """The largest power of 2 dividing the integer ``x`` (capped at ``BIG``)."""
    x = int(x)
    return BIG if x == 0 else builtins_min(BIG, x & -x)


def _div_of(x):
    """Triton's static divisibility of an operand (``AxisInfo``): known for tensors built from
    constants, ranges and integer arguments (16 when divisible by 16, as Triton specialises
    them, else 1); a Python int's own."""
    if isinstance(x, tensor):
        return x.div
    if isinstance(x, constexpr):
        x = x.value
    if isinstance(x, (bool, np.bool_)):
        return 1
    if isinstance(x, (int, np.integer)):
        return _pow2(x)
    return 1


def _opaque(x):
    return isinstance(x, tensor) and x.opaque


def _spt_of(r, *operands):
    """The layout a result takes: that of an operand of the result's own shape (Triton's
    layout propagation keeps a load's layout through elementwise work), the widest; a
    reduction's slice layout (a tuple, see ``_reduce_front``) when no operand has a blocked one."""
    best, sl = 1, None
    for x in operands:
        if isinstance(x, tensor) and x.v.shape[1:] == r.shape[1:]:
            if isinstance(x.spt, tuple):
                sl = sl or x.spt
            elif x.spt > best:
                best = x.spt
    return best if best > 1 or sl is None else sl


def _div0_of(x, nd):
    """An operand's bound along the first axis of a 2-D block (``nd`` = 3 with the program
    axis): a value that does not vary along it (a broadcast row, a scalar) bounds nothing."""
    if isinstance(x, tensor):
        if x.v.ndim < nd or x.v.shape[1] == 1:
            return BIG
        return x.div if x.div0 is None else x.div0
    return _div_of(x)


def _contiguous1(x):
    """Whether a 1-D integer tensor steps by 1 over aligned pairs in every program (AxisInfo's
    contiguity > 1, read off the values as the front end reads contiguity)."""
    v = x.v
    if x.opaque or v.ndim != 2 or v.shape[1] < 2 or v.shape[1] % 2 or v.dtype.kind not in "iu":
        return False
    g = v.reshape(v.shape[0], -1, 2)
    return bool((g[:, :, 1] - g[:, :, 0] == 1).all())


def _int_div0(x):
    """An integer operand's divisibility along the first axis of a 2-D block (AxisInfo's per-axis
    divisibility): a 2-D tensor's ``div0`` (unknown: 1), a 1-D one broadcast along that axis by the
    ExpandDims rule, a per-program scalar's or a Python int's own."""
    if isinstance(x, tensor):
        if x.v.ndim == 3:
            return 1 if x.div0 is None else x.div0
        if x.v.ndim == 2:
            return 1 if _contiguous1(x) else x.div
        return x.div
    return _div_of(x)


def _div0_rule(r, div, a, b):
    """``div0`` of a 2-D result: for a boolean one (a comparison, ``&``, ``|``) its constancy
    along the first axis (BIG when it does not vary along it), for an integer one its
    divisibility there; each by the operation's rule. None for anything else."""
    if r.ndim != 3:
        return None
    if r.dtype == np.bool_:
        if r.shape[1] == 1:
            return BIG
        return 1 if div is None else div(_div0_of(a, 3), _div0_of(b, 3))
    if r.dtype.kind in "iu" and div is not None:
        return div(_int_div0(a), _int_div0(b))
    return None


class tensor:
    """A block of values: ``v`` is a numpy array (programs of the batch, *block shape).

    ``div`` and ``opaque`` are what Triton's axis analysis knows without the values: the
    divisibility of an integer tensor (its alignment), and whether it comes from memory
    (loaded data: no contiguity or constancy can be proved). They decide vector widths."""

    __slots__ = ("v", "div", "opaque", "spt", "div0")

    def __init__(self, v, div=1, opaque=False, spt=1, div0=None):
        self.v = v if isinstance(v, np.ndarray) else np.asarray(v)
        self.div = div
        self.opaque = opaque
        self.spt = spt  # elements per thread along the last axis of its layout (a load's; else 1)
        # a 2-D mask's constancy bound along its first axis (``div`` is the last axis's): what
        # a load whose contiguous axis is the first (a transposed tile) may vectorise by
        self.div0 = div0

    shape = property(lambda self: list(self.v.shape[1:]))
    numel = property(lambda self: int(np.prod(self.v.shape[1:], dtype=np.int64)))

    @property
    def dtype(self):
        return _BY_NP.get(self.v.dtype) or dtype(str(self.v.dtype), self.v.dtype)

    def __repr__(self):
        return f"tensor({self.v!r})"

    def to(self, dt, bitcast=False, **_):
        if bitcast:
            return tensor(self.v.view(_to_np_dtype(dt)), 1, self.opaque)
        d = _to_np_dtype(dt)
        return tensor(self.v.astype(d), self.div if d.kind in "iu" else 1, self.opaque, self.spt,
                      self.div0 if d.kind in "iub" else None)

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        for k in key:
            if not (k is None or (isinstance(k, slice) and k == slice(None))):
                _unsupported(f"indexing a tensor with {k!r} (only [:, None]-style is allowed)")
        r = self.v[(slice(None),) + key]
        if self.v.ndim == 2 and r.ndim == 3 and key.count(None) == 1 and self.v.dtype.kind in "iub":
            # a 1-D tensor made 2-D: its own axis keeps its divisibility; along the new one
            # (size 1) AxisInfo's ExpandDims rule gives the gcd of the values, 1 for a
            # contiguous run ("treat [2^n, 2^n+1, ...] as 1"), a mask's constancy there unbounded
            new = BIG if r.dtype == np.bool_ else (1 if _contiguous1(self) else self.div)
            if key.index(None) == 1:  # x[:, None]: (S, 1)
                return tensor(r, new if r.dtype != np.bool_ else self.div, self.opaque, 1, self.div)
            return tensor(r, self.div, self.opaque, 1, new)  # x[None, :]: (1, S)
        return tensor(r, self.div, self.opaque)

    def _scalar(self):
        if self.v.ndim != 1:
            _unsupported("the truth value of a block tensor")
        m = _mask()
        vals = self.v if m is None or self.v.shape[0] == 1 else self.v[m]
        if vals.size == 0:
            return self.v.reshape(-1)[0]
        first = vals.reshape(-1)[0]
        if (vals != first).any():
            _unsupported("a Python value (a constexpr, a shape, a static_range bound) that differs between programs")
        return first

    def __bool__(self):
        return bool(self._scalar())

    def __index__(self):
        return int(self._scalar())

    __int__ = __index__

    def __float__(self):
        return float(self._scalar())

    @property
    def T(self):
        return trans(self)

    def _bin(f, fix=False, div=None):
        # div(da, db): the result's divisibility (AxisInfo's rule for the op); None: unknown (1).
        # For comparisons and &, | it is the constancy bound Triton proves for a mask.
        def op(self, other):
            if isinstance(other, pointer):
                return NotImplemented
            a = self.v
            if isinstance(other, tensor):
                a, b = _align(a, other.v)
            else:
                b = _lift(other)
                if isinstance(b, np.ndarray):
                    a, b = _align(a, b)
            r = f(a, b)
            d = 1 if div is None else div(self.div, _div_of(other))
            if r.dtype == np.bool_ and r.ndim > 1 and r.shape[-1] == 1:
                d = BIG  # constant along the contiguous axis (a row mask broadcast over columns)
            d0 = _div0_rule(r, div, self, other)
            return tensor(_fix_float(r, a, b) if fix else r, d, self.opaque or _opaque(other), _spt_of(r, self, other),
                          d0)

        def rop(self, other):
            a = self.v
            b = _lift(other)
            if isinstance(b, np.ndarray):
                b, a = _align(b, a)
            r = f(b, a)
            d = 1 if div is None else div(_div_of(other), self.div)
            if r.dtype == np.bool_ and r.ndim > 1 and r.shape[-1] == 1:
                d = BIG
            d0 = _div0_rule(r, div, other, self)
            return tensor(_fix_float(r, a, b) if fix else r, d, self.opaque or _opaque(other), _spt_of(r, self, other),
                          d0)
        return op, rop

    _gcd = staticmethod(lambda a, b: math.gcd(int(a), int(b)))
    _prod = staticmethod(lambda a, b: builtins_min(BIG, int(a) * int(b)))
    __add__, __radd__ = _bin(np.add, True, _gcd)
    __sub__, __rsub__ = _bin(np.subtract, True, _gcd)
    __mul__, __rmul__ = _bin(np.multiply, True, _prod)
    __truediv__, __rtruediv__ = _bin(_truediv)
    __floordiv__, __rfloordiv__ = _bin(_trunc_div)
    __mod__, __rmod__ = _bin(_trunc_mod, True, _gcd)  # AxisInfo: gcd of the divisibilities
    __and__, __rand__ = _bin(np.bitwise_and, False, _gcd)
    __or__, __ror__ = _bin(np.bitwise_or, False, _gcd)
    __xor__, __rxor__ = _bin(np.bitwise_xor)
    __lshift__, __rlshift__ = _bin(np.left_shift)
    __rshift__, __rrshift__ = _bin(np.right_shift)
    __pow__, __rpow__ = _bin(np.power, True)
    __lt__, _ = _bin(np.less, False, _gcd)
    __le__, _ = _bin(np.less_equal, False, _gcd)
    __gt__, _ = _bin(np.greater, False, _gcd)
    __ge__, _ = _bin(np.greater_equal, False, _gcd)
    __eq__, _ = _bin(np.equal)
    __ne__, _ = _bin(np.not_equal)
    del _bin, _gcd, _prod
    __hash__ = object.__hash__

    def __neg__(self):
        return tensor(-self.v, self.div, self.opaque, self.spt)

    def __invert__(self):
        return tensor(~self.v)

    def __pos__(self):
        return self


class pointer:
    """A block of addresses: the flat array an argument points into, and element offsets,
    batched like a tensor's values. The offsets are kept as a per-program scalar ``s``
    (shape (P,)) plus a block ``blk`` (shape (P', *block)): ``X += row * stride`` then
    ``X + cols`` never builds a (programs × block) array until an access needs its rows."""

    __slots__ = ("base", "s", "blk", "name", "div", "opaque", "div0")

    def __init__(self, base, offset, name=None, s=None, div=BIG, opaque=False, div0=None):
        self.base = base
        self.blk = offset if isinstance(offset, np.ndarray) and offset.dtype == np.int64 \
            else np.asarray(offset, dtype=np.int64)
        self.s = _ZERO if s is None else s
        self.name = name
        self.div = div  # of the element offset, as Triton's analysis knows it (along the last axis)
        self.opaque = opaque
        self.div0 = div0  # along the first axis of a 2-D block (None: as ``div``)

    @property
    def offset(self):
        s, b = self.s, self.blk
        return s.reshape(s.shape + (1,) * (b.ndim - 1)) + b

    shape = property(lambda self: list(self.blk.shape[1:]))

    @property
    def dtype(self):
        return pointer_type(_BY_NP.get(self.base.dtype))

    def _off(self, other):
        o = _batched(other)
        if o.dtype.kind not in "iub":
            _unsupported(f"pointer arithmetic with {o.dtype}")
        return o.astype(np.int64, copy=False)

    def _plus(self, o, other):
        d, q = math.gcd(self.div, _div_of(other)), self.opaque or _opaque(other)
        d0 = math.gcd(self.div if self.div0 is None else self.div0, _int_div0(other))
        if o.ndim == 1:  # a scalar per program
            return pointer(self.base, self.blk, self.name, self.s + o, d, q, d0)
        a, b = _align(self.blk, o)
        return pointer(self.base, a + b, self.name, self.s, d, q, d0)

    def __add__(self, other):
        return self._plus(self._off(other), other)

    __radd__ = __add__

    def __sub__(self, other):
        return self._plus(-self._off(other), other)

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        return pointer(self.base, self.blk[(slice(None),) + key], self.name, self.s, self.div, self.opaque)

    def to(self, *_, **__):
        return self


_ZERO = np.zeros(1, np.int64)


class pointer_type:
    def __init__(self, element_ty):
        self.element_ty = element_ty


# -- the batch of programs and its control flow (what the rewritten kernel calls) ----------------

class _Batch:
    """The programs of one engine pass: their ids, which of them run now, which have ended."""

    def __init__(self, blk, grid):
        self.blk = blk
        self.B = blk.nblocks
        ids = np.arange(blk.first, blk.first + self.B, dtype=np.int64)
        self.pid = tuple(a.astype(np.int32) for a in
                         (ids % grid[0], (ids // grid[0]) % grid[1], ids // (grid[0] * grid[1])))
        if self.B == 1:
            self.pid = tuple(p.reshape(1) for p in self.pid)
        self.grid = grid
        self.active = None  # (B,) bool of the programs running the current statement; None: all
        self.alive = None  # (B,) bool of the programs that have not returned; None: all
        self.scratch = {}
        self.last_spt = 1
        self.plan_memo = {}  # _vector_plan's checks, keyed by the (immutable) arrays they read
        self.dirty = False  # the shared scratch was read since its last barrier: a new write needs one


def _mask():
    """(B,) bool of the programs running now, or None for all of them."""
    b = _ctx.batch
    if b.alive is None:
        return b.active
    if b.active is None:
        return b.alive
    return b.active & b.alive


class _Loop:
    def __init__(self, *args, **_):
        if len(args) == 1:
            args = (0,) + args
        if len(args) == 2:
            args = args + (1,)
        self.args = [_batched(a) for a in args]
        self.div = math.gcd(_div_of(args[0]), _div_of(args[2]))  # the induction variable's, as AxisInfo has it
        for a in self.args:
            if a.ndim != 1 or a.dtype.kind not in "iub":
                _unsupported("a loop bound that is not an integer scalar")
        self.saved = None
        self.diverged = False

    def __iter__(self):
        batch = _ctx.batch
        start, stop, step = self.args
        if start.shape[0] == stop.shape[0] == step.shape[0] == 1:
            for i in builtin_range(int(start[0]), int(stop[0]), int(step[0])):
                yield tensor(np.full(1, i, np.int32), self.div)
            return
        if (step == 0).any():
            _unsupported("a loop step of 0")
        outer = batch.active
        base = np.ones(batch.B, bool) if outer is None else outer
        k = 0
        try:
            while True:
                i = start + k * step
                act = base & np.where(step > 0, i < stop, i > stop)
                alive = batch.alive
                if not (act if alive is None else act & alive).any():
                    break
                self.diverged = self.diverged or not np.array_equal(act, base)
                self.act = act
                batch.active = None if act.all() else act
                yield tensor(np.broadcast_to(i, (batch.B,)).astype(np.int32), self.div)
                k += 1
        finally:
            batch.active = outer

    def save(self, loc):
        self.saved = dict(loc) if self.diverged else None  # locals() is one dict, refreshed per call

    def merge(self, loc, names):
        if self.saved is None:
            return tuple(loc.get(n, _rewrite.UNDEFINED) for n in names)
        return tuple(_rewrite.merge_values(self.act, loc.get(n, _rewrite.UNDEFINED),
                                           self.saved.get(n, _rewrite.UNDEFINED)) for n in names)


class _While:
    def __init__(self):
        batch = _ctx.batch
        self.outer = batch.active
        self.act = np.ones(batch.B, bool) if self.outer is None else self.outer.copy()
        self.diverged = False
        self.saved = None

    def test(self, cond):
        batch = _ctx.batch
        c = cond
        if isinstance(c, tensor):
            if c.v.ndim != 1:
                _unsupported("a while condition that is a block tensor")
            new = self.act & c.v.astype(bool)
        else:
            new = self.act & bool(_val(c))
        alive = batch.alive
        self.diverged = self.diverged or not np.array_equal(new, self.act)
        self.act = new
        if not (new if alive is None else new & alive).any():
            batch.active = self.outer
            return False
        batch.active = None if new.all() else new
        return True

    save = _Loop.save
    merge = _Loop.merge


class _Branch:
    def __init__(self, cond):
        self.uniform = True
        self.value = False
        if isinstance(cond, tensor):
            v = cond.v
            if v.ndim != 1:
                _unsupported("the truth value of a block tensor (an if on a tensor that is not a scalar)")
            if v.shape[0] == 1:
                self.value = bool(v[0])
                return
            c = v.astype(bool)
            m = _mask()
            seen = c if m is None else c[m]
            if seen.size == 0 or seen.all() or not seen.any():
                self.value = bool(seen.size and seen[0])
                return
            self.uniform = False
            self.c = c
        else:
            self.value = bool(_val(cond))

    def save(self, loc, names):
        self.names = names
        self.before = {n: loc.get(n, _rewrite.UNDEFINED) for n in names}
        self.outer = _ctx.batch.active

    def _run(self, side):
        batch = _ctx.batch
        base = np.ones(batch.B, bool) if self.outer is None else self.outer
        act = base & side
        alive = batch.alive
        if not (act if alive is None else act & alive).any():
            return False
        batch.active = act
        return True

    def then(self):
        return self._run(self.c)

    def mid(self, loc):
        self.after_then = {n: loc.get(n, _rewrite.UNDEFINED) for n in self.names}
        _ctx.batch.active = self.outer

    def restore(self):
        return tuple(self.before[n] for n in self.names)

    def else_(self):
        return self._run(~self.c)

    def merge(self, loc):
        _ctx.batch.active = self.outer
        if not self.names:
            return None
        return tuple(_rewrite.merge_values(self.c, self.after_then[n], loc.get(n, _rewrite.UNDEFINED))
                     for n in self.names)


class _Runtime:
    """What the rewritten kernels call (``simtdocs.triton._rewrite``)."""

    loop = _Loop
    while_ = _While
    branch = _Branch
    builtin_min = staticmethod(lambda *a, **k: builtin_min(*a, **k))
    builtin_max = staticmethod(lambda *a, **k: builtin_max(*a, **k))

    @staticmethod
    def exit():
        batch = _ctx.batch
        m = _mask()
        if m is None:
            batch.alive = np.zeros(batch.B, bool)
        else:
            batch.alive = ~m if batch.alive is None else batch.alive & ~m
        return not batch.alive.any()

    @staticmethod
    def divergent_return():
        _unsupported("a return with a value inside an if or loop whose condition differs between programs")

    @staticmethod
    def and_(a, *rest):
        for f in rest:
            if not isinstance(a, tensor) and not a:
                return a
            b = f()
            a = tensor(np.logical_and(*_align(_batched(a), _batched(b))))
        return a

    @staticmethod
    def or_(a, *rest):
        for f in rest:
            if not isinstance(a, tensor) and a:
                return a
            b = f()
            a = tensor(np.logical_or(*_align(_batched(a), _batched(b))))
        return a

    @staticmethod
    def not_(a):
        if isinstance(a, tensor):
            return tensor(np.logical_not(a.v))
        return not a


RUNTIME = _Runtime()


# -- programs -------------------------------------------------------------------------------

def program_id(axis=0):
    return tensor(_ctx.batch.pid[_val(axis)])


def num_programs(axis=0):
    g = _ctx.batch.grid[_val(axis)]
    return tensor(np.full(1, g, np.int32), 16 if g % 16 == 0 else 1)


def arange(start, end):
    start, end = int(_val(start)), int(_val(end))
    n = end - start
    if n <= 0 or n & (n - 1):
        _unsupported(f"tl.arange({start}, {end}): its length must be a power of 2")
    return tensor(np.arange(start, end, dtype=np.int32)[None], _pow2(start))


def _shape(shape):
    shape = _val(shape)
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(_val(s)) for s in shape)


def zeros(shape, dtype):
    return tensor(np.zeros((1,) + _shape(shape), _to_np_dtype(dtype)), BIG)


def full(shape, value, dtype):
    v = _batched(value)
    return tensor(np.broadcast_to(v.reshape(v.shape[:1] + (1,) * len(_shape(shape))),
                                  (v.shape[0],) + _shape(shape)).astype(_to_np_dtype(dtype)), _div_of(value),
                  _opaque(value))


def zeros_like(x):
    return tensor(np.zeros_like(_batched(x)))


def full_like(x, value):
    return full(_batched(x).shape[1:], value, _batched(x).dtype)


def cdiv(a, b):
    if isinstance(a, tensor) or isinstance(b, tensor):
        return (a + b - 1) // b
    return -(-int(_val(a)) // int(_val(b)))


def next_power_of_2(n):
    n = int(_val(n))
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def multiple_of(x, values):
    """``tl.multiple_of``: the compiler may assume every element divisible by ``values``."""
    v = _val(values)
    v = v[-1] if isinstance(v, (tuple, list)) else v
    if isinstance(x, tensor):
        return tensor(x.v, builtins_max(x.div, _pow2(int(_val(v)))), x.opaque)
    return x


def max_contiguous(x, values):
    return x


def max_constancy(x, values):
    return x


def assume(cond):
    return None


def static_assert(cond, msg=""):
    if not bool(_val(cond)):
        raise AssertionError(f"{_where_msg()}: static_assert failed {msg}")


def device_assert(cond, msg="", mask=None):
    c = _batched(cond).astype(bool)
    if mask is not None:
        c, m = _align(c, _batched(mask).astype(bool))
        c = c | ~m
    m = _mask()
    if m is not None:
        c = np.broadcast_to(c, (m.shape[0],) + c.shape[1:])[m]
    if not c.all():
        raise AssertionError(f"{_where_msg()}: device_assert failed: {msg}")


def static_print(*args, **kw):
    print(*args)


def device_print(prefix, *args, **kw):
    print(prefix, *[_val(a) for a in args])


class static_range:
    def __init__(self, *args):
        self.r = builtin_range(*(int(_val(a)) for a in args))

    def __iter__(self):
        return iter(self.r)


class range:  # noqa: A001 - Triton's name; the rewritten kernel iterates it through _Loop
    def __init__(self, *args, num_stages=None, loop_unroll_factor=None, disallow_acc_multi_buffer=False,
                 flatten=False, warp_specialize=False, **kw):
        self.args = args

    def __iter__(self):
        return iter(_Loop(*self.args))


# -- math -----------------------------------------------------------------------------------

def _unary(f, float_only=True):
    def op(x, **_):
        v = _batched(x)
        if float_only and (v.dtype.kind != "f" or (not isinstance(x, tensor) and v.dtype == np.float64)):
            v = v.astype(np.float32)  # a Python float becomes a float32 scalar, as in Triton
        with np.errstate(all="ignore"):
            r = f(v)
        return tensor(r.astype(v.dtype, copy=False) if float_only else r, 1, True, getattr(x, "spt", 1))
    return op


exp = _unary(np.exp)
exp2 = _unary(np.exp2)
log = _unary(np.log)
log2 = _unary(np.log2)
sqrt = _unary(np.sqrt)
sqrt_rn = sqrt
rsqrt = _unary(lambda v: 1 / np.sqrt(v))
sigmoid = _unary(lambda v: 1 / (1 + np.exp(-v)))
sin = _unary(np.sin)
cos = _unary(np.cos)
floor = _unary(np.floor)
ceil = _unary(np.ceil)
erf = _unary(np.vectorize(math.erf, otypes=[np.float64]))
abs = _unary(np.abs, float_only=False)  # noqa: A001


def _pair(x, y):
    """Two operands; a Python scalar stays weakly typed (``maximum(x16, 0.0)`` is float16)."""
    a = x.v if isinstance(x, tensor) else _lift(x)
    b = y.v if isinstance(y, tensor) else _lift(y)
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return _align(a, b)
    if not isinstance(a, np.ndarray) and not isinstance(b, np.ndarray):
        return _batched(a), _batched(b)
    return a, b


def fdiv(x, y, ieee_rounding=False):
    return tensor(_truediv(*_pair(x, y)))


div_rn = fdiv


def maximum(x, y, propagate_nan=None):
    r = np.maximum(*_pair(x, y))
    return tensor(r, 1, _opaque(x) or _opaque(y), _spt_of(np.asarray(r), x, y))


def minimum(x, y, propagate_nan=None):
    r = np.minimum(*_pair(x, y))
    return tensor(r, 1, _opaque(x) or _opaque(y), _spt_of(np.asarray(r), x, y))


def _builtin_min_max(fold, py):
    def f(*args, propagate_nan=None):
        # Python's min/max in a kernel, as Triton's code generator treats them
        # (``language.core.builtin_min``): on constants Python's own, on tensors a fold of
        # tl.minimum/tl.maximum, so a bound that differs between programs (the tutorial
        # matmul's ``min(num_pid_m - first_pid_m, GROUP_SIZE_M)``) is a per-program value.
        if not any(isinstance(a, (tensor, pointer)) for a in args):
            vals = [_val(a) for a in args]
            return py(*vals) if len(vals) > 1 else py(vals[0])
        if len(args) < 2:
            _unsupported(f"{py.__name__}() of one tensor (Triton needs at least 2 values; tl.{py.__name__} reduces)")
        r = args[0]
        for a in args[1:]:
            r = fold(r, a)
        return r
    f.__name__ = f"builtin_{py.__name__}"
    return f


def clamp(x, lo, hi, propagate_nan=None):
    return minimum(maximum(x, lo), hi)


def where(cond, x, y):
    c = _batched(cond).astype(bool)
    xv, yv = (x.v if isinstance(x, tensor) else _lift(x)), (y.v if isinstance(y, tensor) else _lift(y))
    if isinstance(x, pointer) or isinstance(y, pointer):
        _unsupported("tl.where between pointers")
    nd = builtins_max(c.ndim, np.ndim(xv) if isinstance(xv, np.ndarray) else 1,
                      np.ndim(yv) if isinstance(yv, np.ndarray) else 1)
    c = c.reshape(c.shape[:1] + (1,) * (nd - c.ndim) + c.shape[1:])
    if isinstance(xv, np.ndarray):
        xv = xv.reshape(xv.shape[:1] + (1,) * (nd - xv.ndim) + xv.shape[1:])
    if isinstance(yv, np.ndarray):
        yv = yv.reshape(yv.shape[:1] + (1,) * (nd - yv.ndim) + yv.shape[1:])
    r = np.where(c, xv, yv)
    if isinstance(x, tensor) and not isinstance(y, tensor) and r.dtype != x.v.dtype and x.v.dtype.kind == "f":
        r = r.astype(x.v.dtype)
    elif isinstance(y, tensor) and not isinstance(x, tensor) and r.dtype != y.v.dtype and y.v.dtype.kind == "f":
        r = r.astype(y.v.dtype)
    return tensor(_fix_float(r, xv, yv), 1, _opaque(cond) or _opaque(x) or _opaque(y), _spt_of(r, cond, x, y))


def fma(x, y, z):
    return x * y + z


# -- layout -----------------------------------------------------------------------------------

def layout(shape, num_warps=4, dtype=float32):
    """Which thread holds which element of a block of ``shape`` loaded through an aligned,
    contiguous, unmasked pointer (the stated layout, module docstring): two int arrays of
    ``shape``, the thread (``warp * 32 + lane``) of each element and its register number
    (repetition × elements per thread + position in the vector)."""
    shape = _shape(shape)
    T = int(num_warps) * WARP
    n = int(np.prod(shape))
    itemsize = _to_np_dtype(dtype).itemsize
    spt = builtins_min(16 // itemsize, shape[-1], builtins_max(n // T, 1))
    spt = 1 << (spt.bit_length() - 1)
    e = np.arange(n, dtype=np.int64).reshape(shape)
    chunk = e // spt
    return chunk % T, (chunk // T) * spt + e % spt


# -- reductions ---------------------------------------------------------------------------------

def _scratch(blk, name, size, dt):
    """A shared-memory scratch array of the pass (Triton reuses its shared memory between
    operations; so does this: one per name and dtype, grown when a bigger one is needed)."""
    from ..shared_memory import Shared
    batch = _ctx.batch
    key = (name, np.dtype(dt))
    arr = batch.scratch.get(key)
    if arr is None or arr.shape[0] < size:
        arr = Shared(f"triton_{name}", (int(size),), dt, blk.nblocks)
        blk._shared.append(arr)
        batch.scratch[key] = arr
    return arr


def _thread_lanes(T, held):
    """(1, T) bool: the threads that hold an element of a tensor of ``held`` elements."""
    m = np.zeros((1, T), bool)
    m[0, :builtins_min(T, held)] = True
    return m


def _program_lanes(lanes):
    """``lanes`` ((1, T) or (B, T)) for the programs running now."""
    m = _mask()
    if m is None:
        return lanes
    return lanes & m[:, None]


def _bits(x):
    return int(x).bit_length() - 1


class _Counted:
    """Issue one engine instruction ``k`` times for ``k`` registers: the call is made once
    with the registers as a trailing axis and the counts of the other ``k - 1`` added."""

    def __init__(self, c):
        self.c = c
        self.before = (c.warp_instructions, c.active_lanes, c.shuffles, c.shared_requests, c.shared_wavefronts,
                       c.shared_ideal_wavefronts)

    def times(self, k):
        c, b = self.c, self.before
        if k == 1:
            return
        d = [c.warp_instructions - b[0], c.active_lanes - b[1], c.shuffles - b[2], c.shared_requests - b[3],
             c.shared_wavefronts - b[4], c.shared_ideal_wavefronts - b[5]]
        c.warp_instructions += (k - 1) * d[0]
        c.active_lanes += (k - 1) * d[1]
        c.shuffles += (k - 1) * d[2]
        c.shared_requests += (k - 1) * d[3]
        c.shared_wavefronts += (k - 1) * d[4]
        c.shared_ideal_wavefronts += (k - 1) * d[5]


def _shuffle_xor(blk, site, lanes, value, bit):
    """One ``shfl.sync.bfly`` per register of ``value`` (B, T, k): lane l gets lane l ^ bit."""
    from .. import warp_ops
    c = blk._counters(site)
    count = _Counted(c)
    lane = np.arange(blk.nthreads) % WARP
    out = warp_ops.shuffle(blk, site, c, blk._lanes(lanes, site), value, (lane ^ bit)[None, :], "__shfl_xor_sync")
    count.times(value.shape[2] if value.ndim > 2 else 1)
    return out


def _sync(blk, site):
    from .. import control
    lanes = _program_lanes(np.ones((1, blk.nthreads), bool))
    control.sync(blk, site, blk._counters(site), blk._lanes(np.broadcast_to(lanes, (blk.nblocks, blk.nthreads))
                                                            if lanes.shape[0] > 1 else lanes, site))


def _shared_access(blk, site, kind, arr, index, lanes, value=None, width=1):
    """Shared loads or stores of ``index`` (B|1, T, k): one engine call per register."""
    k = index.shape[2]
    out = []
    for r in builtin_range(k):
        idx = index[:, :, r] if index.shape[0] == 1 else np.ascontiguousarray(index[:, :, r])
        val = None if value is None else np.broadcast_to(value[:, :, r], (blk.nblocks, blk.nthreads))
        res = blk._memory(kind, site, arr, idx, lanes, width, val)
        if res is not None:
            out.append(np.asarray(res))
    return np.stack(out, axis=2) if out else None


def _combine(kind, a, b):
    """Combine two partials (for argmax/argmin: (value, index) pairs, ties to the lower index)."""
    if kind == "sum":
        return a + b
    if kind == "max":
        return np.maximum(a, b)
    if kind == "min":
        return np.minimum(a, b)
    (va, ia), (vb, ib) = a, b
    better = (vb > va) if kind == "argmax" else (vb < va)
    take = better | ((vb == va) & (ib < ia))
    return np.where(take, vb, va), np.where(take, ib, ia)


def _scratch_write_barrier(blk, site):
    """Triton's membar pass puts a barrier before shared scratch is written again after it
    was read; the first use needs none."""
    batch = _ctx.batch
    if batch.dirty:
        _sync(blk, site)
        batch.dirty = False


def _reduce_values(x, axis, kind):
    """Reduce ``x`` along ``axis`` as Triton 3.9 lowers ``tt.reduce`` on the tensor's blocked
    layout (``spt`` elements per thread along the last axis, chunks dealt round-robin),
    issuing every shuffle and shared access to the engine; returns the batched result (for
    argmax/argmin, the indices).

    1. Each thread combines the elements it holds along the axis, in registers.
    2. The lanes that hold the axis fold by a butterfly of ``shfl.sync.bfly`` (one per step
       and register).
    3. When the axis spans ``Wa`` warps: the lanes at axis-lane 0 store their partials to
       shared memory, a barrier, every thread loads the ``Wa`` partials of its outputs (lane
       ``l`` loads partial ``l % Wa``) and every warp folds them by ``log2 Wa`` butterfly steps.
    """
    batch = _ctx.batch
    blk = batch.blk
    site = _site(blk)
    v = x.v
    shape = v.shape[1:]
    spt = x.spt if axis is not None and isinstance(x.spt, int) else 1
    if axis is None:
        v = v.reshape(v.shape[0], -1)
        shape, axis = v.shape[1:], 0
    axis = int(axis) % len(shape)
    n = int(np.prod(shape))
    for sz in shape:
        if sz & (sz - 1):
            _unsupported(f"a reduction of a block of shape {list(shape)} (sizes must be powers of 2)")
    T = blk.nthreads
    spt = builtins_max(1, builtins_min(spt, shape[-1], n))
    nc = n // spt  # chunks
    Tp = builtins_min(T, nc)
    R = nc // Tp
    stride = int(np.prod(shape[axis + 1:]))
    size = shape[axis]
    lo, hi = _bits(stride), _bits(stride * size)  # the axis' bits of the flat element index
    ls, tb = _bits(spt), _bits(Tp)
    P = v.shape[0]
    arg = kind in ("argmax", "argmin")
    # registers: element e = (rep * Tp + t) * spt + j -> (rep, j) of thread t
    vals = v.reshape(P, R, Tp, spt).transpose(0, 1, 3, 2)  # (P, R, spt, Tp)
    e_all = np.arange(n, dtype=np.int64).reshape(R, Tp, spt).transpose(0, 2, 1)  # (R, spt, Tp)
    coord = ((e_all // stride) % size).astype(np.int32)

    def fold(vv, cc, ee, dim, b0, b1):
        """Combine, in registers, along bits [b0, b1) of axis ``dim`` (1: rep, 2: j)."""
        if b1 <= b0:
            return vv, cc, ee
        full = vv.shape[dim]
        m_, lo_ = 1 << (b1 - b0), 1 << b0
        hi_ = full // (m_ * lo_)
        sh = vv.shape
        vv = vv.reshape(sh[:dim] + (hi_, m_, lo_) + sh[dim + 1:])
        cc = np.broadcast_to(cc, sh[:0] + sh).reshape(vv.shape) if cc is not None else None
        ee = ee.reshape(ee.shape[:dim - 1] + (hi_, m_, lo_) + ee.shape[dim:])
        take = (slice(None),) * (dim + 1)
        acc = (vv[take + (0,)], cc[take + (0,)]) if arg else vv[take + (0,)]
        for j in builtin_range(1, m_):
            acc = _combine(kind, acc, (vv[take + (j,)], cc[take + (j,)]) if arg else vv[take + (j,)])
        ee = ee[(slice(None),) * dim + (0,)]
        if arg:
            out_v = acc[0]
            out_c = np.broadcast_to(acc[1], out_v.shape)
            nsh = out_v.shape[:dim] + (hi_ * lo_,) + out_v.shape[dim + 2:]
            return out_v.reshape(nsh), out_c.reshape(nsh), ee.reshape(ee.shape[:dim - 1] + (hi_ * lo_,) + ee.shape[dim + 1:])
        nsh = acc.shape[:dim] + (hi_ * lo_,) + acc.shape[dim + 2:]
        return acc.reshape(nsh), None, ee.reshape(ee.shape[:dim - 1] + (hi_ * lo_,) + ee.shape[dim + 1:])

    cc0 = np.broadcast_to(coord[None], vals.shape) if arg else None
    # 1. within each thread: the vector bits [0, ls) and the repetition bits of the axis
    vals, cc0, e_all = fold(vals, cc0, e_all, 2, builtins_max(lo, 0), builtins_min(hi, ls))
    rb = ls + tb
    vals, cc0, e_all = fold(vals, cc0, e_all, 1, builtins_max(lo, rb) - rb, builtins_max(hi, rb) - rb)
    k = e_all.shape[0] * e_all.shape[1]  # registers left per thread
    e_rep = e_all.reshape(k, Tp)

    def regs(a):
        out = np.zeros((blk.nblocks, T, k), a.dtype)
        out[:, :Tp] = np.broadcast_to(np.swapaxes(a.reshape(a.shape[0], k, Tp), 1, 2),
                                      (blk.nblocks, Tp, k))
        return out
    acc = (regs(vals), regs(cc0)) if arg else regs(vals)
    holding = _program_lanes(_thread_lanes(T, nc))
    # 2. within each warp: a butterfly over the lane bits of the axis (thread-index bits)
    t_axis = [b_ - ls for b_ in builtin_range(builtins_max(lo, ls), builtins_min(hi, ls + tb))]
    lane_bits = [b_ for b_ in t_axis if b_ < 5]
    warp_bits = [b_ for b_ in t_axis if b_ >= 5]
    for bit in lane_bits:
        if arg:
            ov = _shuffle_xor(blk, site, holding, acc[0], 1 << bit)
            oi = _shuffle_xor(blk, site, holding, acc[1], 1 << bit)
            acc = _combine(kind, acc, (ov, oi))
        else:
            acc = _combine(kind, acc, _shuffle_xor(blk, site, holding, acc, 1 << bit))
    e_out = (e_rep // (stride * size)) * stride + e_rep % stride  # (k, Tp): each register's output
    n_out = n // size
    if warp_bits:
        Wa = 1 << len(warp_bits)
        wa = np.zeros((1, T, 1), np.int64)
        wa[0, :Tp, 0] = (np.arange(Tp) >> warp_bits[0]) & (Wa - 1)
        outs = np.zeros((1, T, k), np.int64)
        outs[0, :Tp] = e_out.T
        lane_axis = np.zeros((1, T), bool)
        axis_lane_mask = _b.sum(1 << b_ for b_ in lane_bits)
        lane_axis[0, :Tp] = (np.arange(Tp) & axis_lane_mask) == 0
        parts = list(acc) if arg else [acc]
        arrs = [_scratch(blk, f"reduce{j}", n_out * Wa, p_.dtype) for j, p_ in enumerate(parts)]
        _scratch_write_barrier(blk, site)
        writers = _program_lanes(lane_axis & _thread_lanes(T, nc))
        for arr, p_ in zip(arrs, parts):
            _shared_access(blk, site, "write", arr, outs * Wa + wa, writers, p_)
        _sync(blk, site)
        # the partials, Wa per output at o * Wa + w, are dealt over every thread (thread t loads
        # partial t, t + T, …; all threads repeat them when there are fewer than T), so each
        # output's Wa partials sit in Wa neighbouring lanes, which fold by log2 Wa butterfly steps
        E = n_out * Wa
        rounds = builtins_max(1, E // T)
        src = (np.arange(T)[None, :, None] + T * np.arange(rounds)[None, None, :]) % E
        everyone = _program_lanes(np.ones((1, T), bool))
        got = [_shared_access(blk, site, "read", arr, src, everyone) for arr in arrs]
        acc2 = (got[0], got[1]) if arg else got[0]
        for b_ in builtin_range(_bits(Wa)):
            if arg:
                ov = _shuffle_xor(blk, site, everyone, acc2[0], 1 << b_)
                oi = _shuffle_xor(blk, site, everyone, acc2[1], 1 << b_)
                acc2 = _combine(kind, acc2, (ov, oi))
            else:
                acc2 = _combine(kind, acc2, _shuffle_xor(blk, site, everyone, acc2, 1 << b_))
        batch.dirty = True
        final = acc2[1] if arg else acc2  # (B, T, rounds): output o at flat position o * Wa
        flat = np.swapaxes(final, 1, 2).reshape(blk.nblocks, -1)[:, :E] if E >= T else final[:, :E, 0]
        out = flat[:, ::Wa]
        out_shape = shape[:axis] + shape[axis + 1:]
        return np.ascontiguousarray(out).reshape((blk.nblocks,) + out_shape)
    result_regs = (acc[1] if arg else acc)[:, :Tp]  # (B, Tp, k)
    out = np.zeros((blk.nblocks, n_out), result_regs.dtype)
    out[:, e_out.T.reshape(-1)] = result_regs.reshape(blk.nblocks, -1)
    out_shape = shape[:axis] + shape[axis + 1:]
    return out.reshape((blk.nblocks,) + out_shape)


def _reduce_front(kind):
    def op(x, axis=None, keep_dims=False, **kw):
        x = x if isinstance(x, tensor) else tensor(_batched(x))
        ax = _val(axis)
        v = x.v
        if kind == "sum" and v.dtype.kind in "iub" and v.dtype.itemsize < 4:
            x = tensor(v.astype(np.int32 if v.dtype.kind != "u" else np.uint32))
        if kind == "sum" and kw.get("dtype") is not None:
            x = x.to(kw["dtype"])
        layout = 1
        if x.v.ndim == 1:  # a scalar: nothing to reduce
            r = x.v.copy() if kind not in ("argmax", "argmin") else np.zeros_like(x.v, np.int32)
        else:
            r = _reduce_values(x, ax, kind)
            if kind in ("argmax", "argmin"):
                r = r.astype(np.int32)
            elif r.dtype != x.v.dtype:
                r = r.astype(x.v.dtype)
        layout = 1
        if x.v.ndim > 2 and ax is not None and not keep_dims:
            # the result sits in the parent's slice layout: every lane that held its axis holds it
            parent = x.v.shape[1:]
            used = builtins_max(1, builtins_min(x.spt if isinstance(x.spt, int) else 1, parent[-1]))
            layout = ("slice", used, parent, int(ax) % len(parent))
        if keep_dims:
            nd = x.v.ndim - 1
            if ax is None:
                r = r.reshape(r.shape[:1] + (1,) * nd)
            else:
                r = np.expand_dims(r, int(ax) % nd + 1)
        return tensor(r, 1, True, layout if not keep_dims else 1)
    op.__name__ = kind
    return op


sum = _reduce_front("sum")  # noqa: A001
max = _reduce_front("max")  # noqa: A001
min = _reduce_front("min")  # noqa: A001
builtin_min = _builtin_min_max(minimum, builtins_min)
builtin_max = _builtin_min_max(maximum, builtins_max)
_argmax = _reduce_front("argmax")
_argmin = _reduce_front("argmin")


def argmax(x, axis, tie_break_left=True, keep_dims=False):
    return _argmax(x, axis, keep_dims)


def argmin(x, axis, tie_break_left=True, keep_dims=False):
    return _argmin(x, axis, keep_dims)


def cumsum(x, axis=0, reverse=False):
    """Computed in numpy, not counted (a scan's shuffles are not modelled yet)."""
    v = _batched(x)
    ax = int(_val(axis)) % (v.ndim - 1) + 1
    if reverse:
        v = np.flip(v, ax)
    r = np.cumsum(v, axis=ax, dtype=v.dtype if v.dtype.kind == "f" else None)
    if v.dtype.kind in "iu" and v.dtype.itemsize < 4:
        r = r.astype(np.int32)
    if reverse:
        r = np.flip(r, ax)
    return tensor(r, 1, True)


def reduce(*a, **k):
    _unsupported("tl.reduce with a combine function")


def associative_scan(*a, **k):
    _unsupported("tl.associative_scan")


# -- dot --------------------------------------------------------------------------------------

#: The MMA instruction each device preset's compute capability gives ``tl.dot`` (Triton's
#: choice for 16-bit operands; 32-bit ones run as tf32 with half the k, 8-bit with twice):
#: (name, m, n, k) of one warp-level instruction. Hopper's ``wgmma`` is issued per warp group
#: of 4 warps over an m64 × n × k16 tile; it is counted here as its four warps' share,
#: m16 × n8 × k16 per warp instruction, so the count matches Ampere's for the same tile.
MMA_SHAPES = {
    (7, 0): ("mma.sync.m8n8k4 (HMMA.884)", 8, 8, 4),
    (8, 0): ("mma.sync.m16n8k16", 16, 8, 16),
    (8, 6): ("mma.sync.m16n8k16", 16, 8, 16),
    (8, 9): ("mma.sync.m16n8k16", 16, 8, 16),
    (9, 0): ("wgmma.m64nNk16 (counted per warp as m16n8k16)", 16, 8, 16),
}


class DotCounters:
    """What ``tl.dot`` adds that the engine's counters have no field for, per reader's line."""

    def __init__(self, instruction):
        self.instruction = instruction
        self.flops = 0
        self.mma = 0
        self.calls = 0

    def __repr__(self):
        return f"DotCounters({self.instruction}: flops={self.flops}, mma={self.mma}, calls={self.calls})"


def _swizzled(rows, cols, itemsize):
    """Element (r, c) of a rows × cols tile -> its slot in a shared tile with Triton's XOR
    swizzle of 16-byte chunks (so the warps' 16-byte row reads are conflict-free)."""
    vec = builtins_max(1, 16 // itemsize)
    chunks = builtins_max(1, cols // vec)
    row_bytes = cols * itemsize
    per_phase = builtins_max(1, 128 // builtins_max(1, row_bytes))
    max_phase = builtins_max(1, builtins_min(8 // per_phase, chunks))
    r = np.arange(rows)[:, None]
    c = np.arange(cols)[None, :]
    phase = (r // per_phase) % max_phase
    chunk = (c // vec) ^ phase if chunks > 1 else c // vec
    return r * cols + chunk * vec + c % vec


_DOT_PLANS: dict = {}


def _warps_per_tile(M, N, W, m=16, n=8):
    """Warps over the output tile as Triton's ``warpsPerTileV2`` chooses them for MMA v2:
    double the side whose tile per warp is still the longer, in units of the instruction."""
    ret = [1, 1]
    while ret[0] * ret[1] < W:
        if M // (m * 2) // ret[0] >= N // (n * 2) // ret[1]:
            if ret[0] < M // m:
                ret[0] *= 2
            else:
                ret[1] *= 2
        else:
            ret[1] *= 2
    return ret[0], ret[1]


def _dot_plan(M, N, K, itemsize, T, wm, wn):
    """The shared-memory instructions of one ``tl.dot``, the same for every call of this
    shape: per operand, the 16-byte vector stores of its tile (thread ``t`` stores chunk
    ``t + T·i`` in row-major order, as the blocked layout of a 16-byte-vectorised load holds
    it) into a swizzled tile, and the warps' 16-byte row reads (``ldmatrix``: one row
    address per lane, 32 rows an instruction). Arrays of (1, T, instructions)."""
    key = (M, N, K, itemsize, T, wm, wn)
    plan = _DOT_PLANS.get(key)
    if plan is not None:
        return plan
    vec = builtins_max(1, 16 // itemsize)
    W = T // WARP

    def stores(R, C):
        v = builtins_min(vec, C)
        slots = _swizzled(R, C, itemsize)
        chunks = R * C // v
        n_i = -(-chunks // T)
        c = np.arange(n_i * T).reshape(n_i, T).T  # (T, n_i): chunk of thread t, instruction i
        ok = c < chunks
        c = np.where(ok, c, 0)
        r, ch = divmod(c, C // v)
        first = r * C + ch * v  # logical first element of the chunk
        idx = slots.reshape(-1)[first][None]
        # per instruction, made once: its (1, T) slots and lanes, contiguous and read-only
        # (the engine takes them as they are; an instruction with every lane has lanes None)
        per = [(_frozen(idx[:, :, i]), None if ok[:, i].all() else _frozen(ok[None, :, i])) for i in builtin_range(n_i)]
        return slots, idx, ok[None], first[None], v, per

    def reads(R, C, rows_of_warp, cols_of_warp):
        """Warp w reads rows ``rows_of_warp(w)`` × the 16-byte chunks of columns ``cols_of_warp(w)``."""
        v = builtins_min(vec, C)
        slots = _swizzled(R, C, itemsize)
        per = []
        for w in builtin_range(W):
            rows, cols = rows_of_warp(w), cols_of_warp(w)
            if cols[1] > cols[0]:  # a slab narrower than 16 bytes reads the whole chunk (warps share it)
                cols = ((cols[0] // v) * v, builtins_max((cols[0] // v) * v + v, cols[1]))
            pieces = [(r, c0) for c0 in builtin_range(cols[0], cols[1], v) for r in builtin_range(*rows)]
            per.append(pieces)
        n_i = builtins_max(1, -(-builtins_max(len(p) for p in per) // WARP))
        idx = np.zeros((1, T, n_i), np.int64)
        act = np.zeros((1, T, n_i), bool)
        for w, pieces in enumerate(per):
            for j, (r, c0) in enumerate(pieces):
                i, lane = divmod(j, WARP)
                idx[0, w * WARP + lane, i] = slots[r, c0]
                act[0, w * WARP + lane, i] = True
        per = [(_frozen(idx[:, :, i]), None if act[:, :, i].all() else _frozen(act[:, :, i]))
               for i in builtin_range(n_i) if act[:, :, i].any()]
        return idx, act, v, per

    in_tile = lambda w: w < wm * wn  # noqa: E731
    a_rows = lambda w: ((w % wm) * (M // wm), (w % wm + 1) * (M // wm)) if in_tile(w) else (0, 0)  # noqa: E731
    b_cols = lambda w: ((w // wm) * (N // wn), (w // wm + 1) * (N // wn)) if in_tile(w) else (0, 0)  # noqa: E731
    plan = {
        "a_store": stores(M, K), "b_store": stores(K, N),
        "a_read": reads(M, K, a_rows, lambda w: (0, K)),
        "b_read": reads(K, N, lambda w: (0, K) if in_tile(w) else (0, 0), b_cols),
    }
    _DOT_PLANS[key] = plan
    return plan


def _frozen(a):
    a = np.ascontiguousarray(a)
    a.flags.writeable = False
    return a


def _lanes_now(lanes, T):
    """An instruction's lanes (None: every thread) for the programs running now."""
    if _mask() is None:
        return lanes
    return _program_lanes(np.ones((1, T), bool) if lanes is None else lanes)


def _stage(blk, site, name, v, plan):
    """Store a (P, R, C) operand tile into its swizzled shared tile, 16 bytes a lane: thread
    t's instruction i stores chunk t + T·i (row-major chunks of ``width`` elements)."""
    slots, idx, ok, first, width, per = plan
    R, C = v.shape[1:]
    arr = _scratch(blk, name, R * C, v.dtype)
    chunks = R * C // width
    flat = v.reshape(v.shape[0], chunks, width)
    T = blk.nthreads
    for i, (index, lanes) in enumerate(per):
        k = builtins_min(T, chunks - i * T)
        vals = flat[:, i * T:i * T + k]
        if k < T:
            vals = np.concatenate([vals, np.zeros((vals.shape[0], T - k, width), v.dtype)], axis=1)
        if vals.shape[0] != blk.nblocks:
            vals = np.broadcast_to(vals, (blk.nblocks,) + vals.shape[1:])
        blk._memory("write", site, arr, index, _lanes_now(lanes, T), width,
                    vals if width > 1 else vals[:, :, 0])
    return arr


def _operand_reads(blk, site, arr, plan):
    width, per = plan[2], plan[3]
    T = blk.nthreads
    for index, lanes in per:
        blk._memory("read", site, arr, index, _lanes_now(lanes, T), width)


def dot(a, b, acc=None, input_precision=None, allow_tf32=None, max_num_imprecise_acc=None, out_dtype=float32):
    """``a @ b (+ acc)`` for 2-D blocks (M×K times K×N), counted: each operand's trip through
    shared memory (16-byte stores into a swizzled tile, a barrier, the warps' 16-byte row
    reads as ``ldmatrix``), MMA instructions at the device's shape (``MMA_SHAPES``) as warp
    instructions, and 2·M·N·K FLOPs per program in ``stats.dots``."""
    av, bv = _batched(a), _batched(b)
    if av.ndim != 3 or bv.ndim != 3:
        _unsupported("tl.dot on tensors that are not 2-D")
    M, K = av.shape[1:]
    K2, N = bv.shape[1:]
    if K != K2:
        _unsupported(f"tl.dot of {M}x{K} and {K2}x{N} blocks")
    if builtins_min(M, N, K) < 16:
        _unsupported(f"tl.dot of {M}x{K} and {K}x{N} blocks (Triton needs every size ≥ 16)")
    if av.dtype != bv.dtype:
        _unsupported(f"tl.dot of {av.dtype} and {bv.dtype} blocks (convert one with .to())")
    batch = _ctx.batch
    blk = batch.blk
    site = _site(blk)
    out = _to_np_dtype(out_dtype) if acc is None else _batched(acc).dtype
    if av.dtype.kind in "iu":
        r = np.matmul(av.astype(np.int64), bv.astype(np.int64))
        out = np.dtype(np.int32) if acc is None else out
    else:
        r = np.matmul(av.astype(np.float32), bv.astype(np.float32))
    if acc is not None:
        r = r + _batched(acc)
    # -- the counted work --
    name, m, n, k = MMA_SHAPES.get(tuple(blk._L.device.compute_capability), MMA_SHAPES[(8, 0)])
    isz = av.dtype.itemsize
    if isz == 4:
        k = builtins_max(4, k // 2)
    elif isz == 1:
        k = k * 2
    T = blk.nthreads
    wm, wn = _warps_per_tile(M, N, T // WARP, 16, 8)
    plan = _dot_plan(M, N, K, isz, T, wm, wn)
    _scratch_write_barrier(blk, site)
    arr_a = _stage(blk, site, "dot_a", av, plan["a_store"])
    arr_b = _stage(blk, site, "dot_b", bv, plan["b_store"])
    _sync(blk, site)
    _operand_reads(blk, site, arr_a, plan["a_read"])
    _operand_reads(blk, site, arr_b, plan["b_read"])
    batch.dirty = True  # the next write of the scratch waits for these reads
    pm = _mask()
    programs = blk.nblocks if pm is None else int(np.count_nonzero(pm))
    mma_per_program = builtins_max(1, M // m) * builtins_max(1, N // n) * builtins_max(1, K // k)
    c = blk._counters(site)
    c.warp_instructions += mma_per_program * programs
    c.active_lanes += mma_per_program * programs * WARP
    dots = blk._L.stats.__dict__.setdefault("dots", {})
    d = dots.get(site)
    if d is None:
        d = dots[site] = DotCounters(name)
    d.flops += 2 * M * N * K * programs
    d.mma += mma_per_program * programs
    d.calls += programs
    return tensor(r.astype(out), 1, True)


def trans(x, *dims):
    v = _batched(x)
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    if dims:
        return tensor(np.transpose(v, (0,) + tuple(int(_val(d)) + 1 for d in dims)))
    return tensor(np.transpose(v, (0,) + tuple(builtin_range(v.ndim - 1, 0, -1))))


permute = trans


def reshape(x, *shape, can_reorder=False):
    if len(shape) == 1 and not isinstance(_val(shape[0]), (int, np.integer)):
        shape = shape[0]
    v = _batched(x)
    return tensor(np.reshape(v, v.shape[:1] + _shape(shape)), _div_of(x), _opaque(x))


view = reshape


def broadcast_to(x, *shape):
    if len(shape) == 1 and not isinstance(_val(shape[0]), (int, np.integer)):
        shape = shape[0]
    shape = _shape(shape)
    if isinstance(x, pointer):
        o = x.blk
        o = o.reshape(o.shape[:1] + (1,) * (len(shape) + 1 - o.ndim) + o.shape[1:])
        return pointer(x.base, np.broadcast_to(o, o.shape[:1] + shape), x.name, x.s, x.div, x.opaque)
    v = _batched(x)
    v = v.reshape(v.shape[:1] + (1,) * (len(shape) + 1 - v.ndim) + v.shape[1:])
    return tensor(np.broadcast_to(v, v.shape[:1] + shape), _div_of(x), _opaque(x))


def expand_dims(x, axis):
    ax = int(_val(axis))
    if isinstance(x, pointer):
        nd = x.blk.ndim - 1
        return pointer(x.base, np.expand_dims(x.blk, (ax % (nd + 1)) + 1), x.name, x.s, x.div, x.opaque)
    v = _batched(x)
    return tensor(np.expand_dims(v, (ax % v.ndim) + 1), _div_of(x), _opaque(x))


def ravel(x):
    v = _batched(x)
    return tensor(v.reshape(v.shape[0], -1))


def cast(x, dt, **_):
    return tensor(_batched(x)).to(dt)


class block_ptr:
    """``tl.make_block_ptr``: a block of ``block_shape`` at ``offsets`` inside a tensor of
    ``shape`` with ``strides``. A load or store through it is lowered as Triton lowers block
    pointers when it has no TMA path (its RewriteTensorPointer pass): to a block of plain
    pointers ``base + Σ (offset_d + arange_d) · stride_d`` and, for the dimensions named in
    ``boundary_check``, the mask ``0 <= index_d < shape_d``; so it is counted like those."""

    def __init__(self, base, shape, strides, offsets, block_shape, order):
        self.base, self.shape, self.strides = base, tuple(shape), tuple(strides)
        self.offsets, self.block_shape, self.order = tuple(offsets), tuple(int(_val(b)) for b in block_shape), order

    def _indices(self):
        nd = len(self.block_shape)
        out = []
        for d in builtin_range(nd):
            idx = arange(0, self.block_shape[d]) + self.offsets[d]
            for _ in builtin_range(d):
                idx = expand_dims(idx, 0)
            for _ in builtin_range(nd - 1 - d):
                idx = expand_dims(idx, -1)
            out.append(idx)
        return out

    def pointers(self, boundary_check=()):
        idx = self._indices()
        ptr = self.base
        for d, i in enumerate(idx):
            ptr = ptr + i * self.strides[d]
        ptr = broadcast_to(ptr, self.block_shape)
        mask = None
        for d in (boundary_check or ()):
            d = int(_val(d))
            m = (idx[d] >= 0) & (idx[d] < self.shape[d])
            mask = m if mask is None else mask & m
        if mask is not None:
            mask = broadcast_to(mask, self.block_shape)
        return ptr, mask


def make_block_ptr(base, shape, strides, offsets, block_shape, order):
    if not isinstance(base, pointer):
        _unsupported("tl.make_block_ptr on something that is not a pointer argument")
    if not (len(shape) == len(strides) == len(offsets) == len(block_shape)):
        _unsupported("tl.make_block_ptr with shape, strides, offsets and block_shape of different ranks")
    return block_ptr(base, shape, strides, offsets, block_shape, order)


def advance(base, offsets):
    """``tl.advance``: the same block pointer moved by ``offsets`` (one per dimension)."""
    if not isinstance(base, block_ptr):
        _unsupported("tl.advance of something that is not a block pointer")
    moved = tuple(o + _val(d) if not isinstance(d, tensor) else d + o for o, d in zip(base.offsets, offsets))
    return block_ptr(base.base, base.shape, base.strides, moved, base.block_shape, base.order)


def make_tensor_descriptor(*a, **k):
    _unsupported("tl.make_tensor_descriptor")


def debug_barrier():
    blk = _ctx.batch.blk
    _sync(blk, _site(blk))


# -- memory ---------------------------------------------------------------------------------

def _contiguity(a, axis):
    """The contiguity of offsets ``a`` (P, *block) along block axis ``axis``, read off the
    values as Triton's AxisInfo would prove it: the largest power of 2 ``v`` such that every
    aligned run of ``v`` elements along the axis steps by 1, in every program."""
    a = np.moveaxis(a, axis + 1, -1)
    L = a.shape[-1]
    v = 1
    while v * 2 <= L and L % (v * 2) == 0:
        g = a.reshape(a.shape[:-1] + (L // (v * 2), v * 2))
        if not ((g - g[..., :1]) == np.arange(v * 2)).all():
            break
        v *= 2
    return v


def _layout_order(ptr, o, shape):
    """Triton's coalescing pass orders a memory op's layout by the pointer's contiguity
    (``getOrderFromContiguity``: axes sorted by contiguity, most contiguous first, ties to the
    later axis): lanes and each thread's vector go along ``order[0]``. Returns the permutation
    of the block axes that puts ``order[0]`` last (slowest axis first), or None when that is
    the block's own row-major order (the last axis is the most contiguous)."""
    if len(shape) < 2 or ptr.opaque:
        return None
    memo = _ctx.batch.plan_memo
    key = ("order", id(ptr.blk), shape)
    hit = memo.get(key)
    if hit is not None and hit[0] is ptr.blk:
        return hit[1]
    a = o.reshape((o.shape[0],) + tuple(shape))
    cont = [_contiguity(a, d) if shape[d] > 1 else 1 for d in builtin_range(len(shape))]
    order = sorted(builtin_range(len(shape) - 1, -1, -1), key=lambda d: -cont[d])  # stable: ties keep the later axis first
    perm = tuple(reversed(order))
    perm = None if perm == tuple(builtin_range(len(shape))) else perm
    memo[key] = (ptr.blk, perm)
    return perm


def _vector_plan(blk, arr, ptr, o, mask_t, mm, shape, n, kind, perm=None):
    """Elements per thread (``spt``) and the width of each instruction (``w``), per program,
    as Triton's coalescing pass and load/store lowering decide them: ``spt`` is the largest
    power of 2 up to 16 bytes, the tensor's elements per thread and the last axis, that the
    pointer's proved alignment (``div``: arguments 16-byte aligned, integer arguments
    divisible by 16 specialised) and its contiguity along the last axis allow; ``w`` is cut
    further to the mask's constancy (Triton's bound from the divisibility of what it compares,
    and the mask's values). Loaded offsets or masks (``opaque``) give 1.

    Contiguity and constancy are read off the values program by program (so an access's
    counts never depend on the batching); the layout a loaded tensor keeps for later
    reductions is the batch's common ``spt`` (1 if its programs differ, which takes offsets
    whose contiguity differs between programs: Triton would prove the smaller for all)."""
    B, T = blk.nblocks, blk.nthreads
    one = np.ones(1, np.int64)
    if kind == "atomic" or not shape or ptr.opaque:
        return one, one
    itemsize = arr.dtype.itemsize
    base = blk._L.byte_offset(arr)
    pdiv = ptr.div  # the offsets' proved divisibility along the layout's contiguous axis
    if perm is not None:
        pdiv = (ptr.div if ptr.div0 is None else ptr.div0) if len(shape) == 2 and perm[-1] == 0 else 1
    align = builtins_min(16 // itemsize, pdiv, _pow2(base // itemsize) if base % itemsize == 0 else 1)
    vmax = builtins_min(16 // itemsize, shape[-1], builtins_max(n // T, 1), align)
    vmax = 1 << (builtins_max(vmax, 1).bit_length() - 1)
    if vmax == 1:
        return one, one
    P = o.shape[0]
    memo = _ctx.batch.plan_memo  # the same offsets or mask in several accesses (x, y, out of one block)
    key = ("offsets", id(ptr.blk), n, vmax, perm, tuple(shape))
    hit = memo.get(key)
    if hit is not None and hit[0] is ptr.blk:
        spt = hit[1]
    else:
        spt = np.ones(P, np.int64)
        v = vmax
        while v > 1:
            g = o.reshape(P, n // v, v)
            ok = ((g - g[:, :, :1]) == np.arange(v)).all(axis=(1, 2))
            spt = np.where(ok & (spt == 1), v, spt)
            if ok.all():
                break
            v //= 2
        memo[key] = (ptr.blk, spt)
    if mm is None:
        return spt, spt
    if mask_t is not None and _opaque(mask_t):
        return spt, one
    cap = 1 << (builtins_min(_mask_cap(mask_t, shape, perm), BIG).bit_length() - 1)
    Pm = mm.shape[0]
    P2 = builtins_max(P, Pm)
    w = np.minimum(np.broadcast_to(spt, (P2,)), cap).copy()
    key = ("mask", id(mask_t), n, w.tobytes(), perm)
    hit = memo.get(key)
    if mask_t is not None and hit is not None and hit[0] is mask_t:
        return spt, hit[1]
    v = int(w.max())
    while v > 1:
        g = mm.reshape(Pm, n // v, v)
        ok = (g[:, :, 1:] == g[:, :, :1]).all(axis=(1, 2))
        if ok.all():
            break  # constant over groups of v: over every smaller group too
        w = np.where(~np.broadcast_to(ok, (P2,)) & (w >= v), v // 2, w)
        v //= 2
    if mask_t is not None:
        memo[key] = (mask_t, w)
    return spt, w


def _mask_cap(mask_t, shape, perm):
    """The constancy Triton proves for a mask along the access's contiguous axis (the last
    one of ``shape``, which is already in the layout's order): ``div`` along the block's last
    axis, ``div0`` along the first of a 2-D block; unbounded where the mask does not vary."""
    if mask_t is None:
        return 1
    if perm is None:
        return _div_of(mask_t)
    axis = perm[-1]  # the block axis the lanes run along
    nd = len(perm)
    mshape = mask_t.v.shape[1:]
    k = axis - (nd - len(mshape))  # the mask's own axis (it broadcasts from the right)
    if k < 0 or mshape[k] == 1:
        return BIG
    if nd == 2 and axis == 0:
        return _div0_of(mask_t, 3)
    return 1


def _access(kind, ptr, mask, value=None, op=None, compare=None):
    if not isinstance(ptr, pointer):
        _unsupported(f"a memory access through {type(ptr).__name__} (not a pointer)")
    batch = _ctx.batch
    blk = batch.blk
    site = _site(blk)
    arr = ptr.base
    off = ptr.blk
    parts = [off]
    m = None
    if mask is not None:
        m = _batched(mask).astype(bool, copy=False)
        parts.append(m)
    if value is not None:
        parts.append(value)
    if compare is not None:
        parts.append(compare)
    nd = builtins_max(p.ndim for p in parts)
    parts = [p.reshape(p.shape[:1] + (1,) * (nd - p.ndim) + p.shape[1:]) for p in parts]
    try:
        full_shape = np.broadcast_shapes(*[p.shape for p in parts], (ptr.s.shape[0],) + (1,) * (nd - 1))
    except ValueError:
        _unsupported(f"a memory access whose pointer, mask and value shapes {[list(p.shape[1:]) for p in parts]} "
                     "do not broadcast")
    shape = full_shape[1:]
    n = int(np.prod(shape, dtype=np.int64))
    programs = _mask()
    B = blk.nblocks

    def flat(p, dt=None):
        p = np.broadcast_to(p, p.shape[:1] + shape).reshape(p.shape[0], n)
        return p if dt is None else p.astype(dt, copy=False)

    o = flat(parts[0])
    s0 = ptr.s[:, None]
    mm = flat(parts[1]) if m is not None else None
    val = flat(parts[1 + (m is not None)], arr.dtype) if value is not None else None
    cmp = flat(parts[-1], arr.dtype) if compare is not None else None
    # the layout's order: lanes along the pointer's most contiguous axis (a transposed tile:
    # the first); the elements are then taken in that order, and the result put back
    perm = None if kind == "atomic" else _layout_order(ptr, o, shape)
    if perm is not None:
        shape_t = tuple(shape[d] for d in perm)
        axes = (0,) + tuple(d + 1 for d in perm)

        def tr(a):
            return None if a is None else a.reshape((a.shape[0],) + tuple(shape)).transpose(axes).reshape(a.shape[0], n)

        o, mm, val, cmp = tr(o), tr(mm), tr(val), tr(cmp)
    spt, w = _vector_plan(blk, arr, ptr, o, mask if isinstance(mask, tensor) else None, mm,
                          shape if perm is None else shape_t, n, kind, perm)
    if programs is not None:
        pm = programs[:, None]
        mm = np.broadcast_to(pm, (B, n)) if mm is None else (mm & pm)
    reads = kind != "write"
    out = np.zeros((B, n), arr.dtype) if reads else None
    pairs = np.stack(np.broadcast_arrays(spt, w), axis=1)
    if pairs.shape[0] == 1 or (pairs == pairs[:1]).all():
        groups = [(int(pairs[0, 0]), int(pairs[0, 1]), None)]
    else:
        groups = [(int(a_), int(b_), (pairs[:, 0] == a_) & (pairs[:, 1] == b_))
                  for a_, b_ in sorted({tuple(p_) for p_ in pairs.tolist()}, reverse=True)]
    # the layout a loaded tensor keeps (for reductions): its elements per thread along the last
    # axis; a load laid out along another axis is counted there as a plain row-major one
    batch.last_spt = groups[0][0] if len(groups) == 1 and perm is None else 1
    for g_spt, g_w, members in groups:
        gm = mm
        if members is not None:
            sel = np.broadcast_to(members[:, None], (B, n))
            gm = sel if gm is None else gm & sel
        if g_spt == 1:
            _issue_scalar(blk, site, kind, arr, o, s0, gm, val, cmp, op, n, out)
        else:
            _issue_vector(blk, site, kind, arr, o, s0, gm, val, n, g_spt, g_w, out)
    if out is None:
        return None
    if perm is not None:
        return np.ascontiguousarray(out.reshape((B,) + shape_t).transpose((0,) + tuple(int(i) + 1 for i in np.argsort(perm))))
    return out.reshape((B,) + shape)


def _issue_scalar(blk, site, kind, arr, o, s0, mm, val, cmp, op, n, out):
    """One element per thread per repetition: element e on thread e % T."""
    T, B = blk.nthreads, blk.nblocks
    reads = out is not None
    for r in builtin_range(0, n, T):
        k = builtins_min(T, n - r)
        if k == T:
            idx = o[:, r:r + T] + s0
            lanes = None if mm is None else mm[:, r:r + T]
            v_ = None if val is None else val[:, r:r + T]
            c_ = None if cmp is None else cmp[:, r:r + T]
        else:
            idx = np.zeros((builtins_max(o.shape[0], s0.shape[0]), T), np.int64)
            idx[:, :k] = o[:, r:r + k] + s0
            lanes = np.zeros((1 if mm is None else mm.shape[0], T), bool)
            lanes[:, :k] = True if mm is None else mm[:, r:r + k]
            v_ = c_ = None
            if val is not None:
                v_ = np.zeros((val.shape[0], T), arr.dtype)
                v_[:, :k] = val[:, r:r + k]
            if cmp is not None:
                c_ = np.zeros((cmp.shape[0], T), arr.dtype)
                c_[:, :k] = cmp[:, r:r + k]
        if lanes is not None:
            if not lanes.any():
                continue
            if lanes.all():
                lanes = None
        if v_ is not None and v_.shape[0] != B:
            v_ = np.broadcast_to(v_, (B, T))
        if c_ is not None and c_.shape[0] != B:
            c_ = np.broadcast_to(c_, (B, T))
        res = blk._memory(kind, site, arr, idx, lanes, 1, v_, op, c_)
        if reads and res is not None:
            out[:, r:r + k] = np.asarray(res)[:, :k]


def _issue_vector(blk, site, kind, arr, o, s0, mm, val, n, spt, w, out):
    """``spt`` contiguous elements per thread (chunk c = e // spt on thread c % T), each
    thread's chunk issued as ``spt / w`` instructions of ``w`` elements."""
    T, B = blk.nthreads, blk.nblocks
    chunks = n // spt
    o3 = o.reshape(o.shape[0], chunks, spt)
    m3 = None if mm is None else mm.reshape(mm.shape[0], chunks, spt)
    v3 = None if val is None else val.reshape(val.shape[0], chunks, spt)
    out3 = None if out is None else out.reshape(B, chunks, spt)
    for r in builtin_range(0, chunks, T):
        k = builtins_min(T, chunks - r)
        for j in builtin_range(0, spt, w):
            first = o3[:, r:r + k, j] + s0
            if k == T:
                idx = first
            else:
                idx = np.zeros((first.shape[0], T), np.int64)
                idx[:, :k] = first
            if m3 is None and k == T:
                lanes = None
            else:
                lanes = np.zeros((1 if m3 is None else m3.shape[0], T), bool)
                lanes[:, :k] = True if m3 is None else m3[:, r:r + k, j]
                if not lanes.any():
                    continue
                if lanes.all():
                    lanes = None
            v_ = None
            if v3 is not None:
                part = v3[:, r:r + k, j:j + w]
                if k == T:
                    v_ = part
                else:
                    v_ = np.zeros((part.shape[0], T, w), arr.dtype)
                    v_[:, :k] = part
                if v_.shape[0] != B:
                    v_ = np.broadcast_to(v_, (B, T, w))
                if w == 1:
                    v_ = v_[:, :, 0]
            res = blk._memory(kind, site, arr, idx, lanes, w, v_)
            if out3 is not None and res is not None:
                out3[:, r:r + k, j:j + w] = np.asarray(res).reshape(B, T, w)[:, :k]


def load(pointer, mask=None, other=None, boundary_check=(), padding_option="", cache_modifier="",
         eviction_policy="", volatile=False):
    """Reads the elements the mask allows; the others take ``other`` (0 without it).
    ``cache_modifier``, ``eviction_policy`` and ``volatile`` are accepted and change no count."""
    if isinstance(pointer, block_ptr):
        if mask is not None:
            _unsupported("a mask on a load through a block pointer (use boundary_check)")
        pointer, mask = pointer.pointers(boundary_check)
        if mask is not None:
            other = float("nan") if padding_option == "nan" else 0
    out = _access("read", pointer, mask)
    if mask is not None and other is not None and not (np.ndim(_val(other)) == 0 and _val(other) == 0):
        mv = _batched(mask).astype(bool)
        mv = mv.reshape(mv.shape[:1] + (1,) * (out.ndim - mv.ndim) + mv.shape[1:])
        ov = _batched(other)
        ov = ov.reshape(ov.shape[:1] + (1,) * (out.ndim - ov.ndim) + ov.shape[1:])
        out = np.where(mv, out, ov.astype(out.dtype))
    return tensor(out, 1, True, _ctx.batch.last_spt)


def _convert_slice(blk, site, sl, out_shape, dt):
    """``ttg.convert_layout`` of a reduction's result from its slice layout to the blocked
    layout a store wants, through shared memory: one representative thread per element (the
    one that held the element's axis coordinate 0) stores it, a barrier, and every thread
    loads its elements of the blocked layout (element e on thread e % T)."""
    _, spt, parent, axis = sl
    T = blk.nthreads
    n = int(np.prod(parent))
    nc = n // spt
    Tp = builtins_min(T, nc)
    stride = int(np.prod(parent[axis + 1:]))
    size = parent[axis]
    e = np.arange(n, dtype=np.int64)
    first = ((e // stride) % size) == 0
    e0 = e[first]
    o = (e0 // (stride * size)) * stride + e0 % stride
    thread = (e0 // spt) % Tp
    n_out = int(np.prod(out_shape)) if out_shape else 1
    per = np.bincount(thread, minlength=T)
    k = int(per.max())
    idx = np.zeros((1, T, k), np.int64)
    act = np.zeros((1, T, k), bool)
    order = np.argsort(thread, kind="stable")
    th, oo = thread[order], o[order]
    slot = np.arange(th.size) - np.searchsorted(th, th)
    idx[0, th, slot] = oo
    act[0, th, slot] = True
    arr = _scratch(blk, "convert", n_out, dt)
    _scratch_write_barrier(blk, site)
    for i in builtin_range(k):
        blk._memory("write", site, arr, idx[:, :, i], _program_lanes(act[:, :, i]),
                    1, np.zeros((blk.nblocks, T), dt))
    _sync(blk, site)
    for r in builtin_range(0, n_out, T):
        kk = builtins_min(T, n_out - r)
        ridx = np.zeros((1, T), np.int64)
        ridx[0, :kk] = np.arange(r, r + kk)
        lanes = np.zeros((1, T), bool)
        lanes[0, :kk] = True
        blk._memory("read", site, arr, ridx, _program_lanes(lanes), 1)
    _ctx.batch.dirty = True


def store(pointer, value, mask=None, boundary_check=(), cache_modifier="", eviction_policy=""):
    if isinstance(value, tensor) and isinstance(value.spt, tuple):
        blk = _ctx.batch.blk
        _convert_slice(blk, _site(blk), value.spt, value.v.shape[1:], value.v.dtype)
    if isinstance(pointer, block_ptr):
        if mask is not None:
            _unsupported("a mask on a store through a block pointer (use boundary_check)")
        pointer, mask = pointer.pointers(boundary_check)
    _access("write", pointer, mask, _batched(value))


def _atomic(op):
    def f(pointer, val, mask=None, sem=None, scope=None):
        return tensor(_access("atomic", pointer, mask, _batched(val), op), 1, True)
    f.__name__ = f"atomic_{op}"
    return f


atomic_add = _atomic("add")
atomic_max = _atomic("max")
atomic_min = _atomic("min")
atomic_xchg = _atomic("exch")


def atomic_cas(pointer, cmp, val, sem=None, scope=None):
    return tensor(_access("atomic", pointer, None, _batched(val), "cas", _batched(cmp)), 1, True)


def atomic_and(*a, **k):
    _unsupported("tl.atomic_and")


atomic_or = atomic_xor = atomic_and


# Triton tensors carry many language functions as methods (``x.reshape(R, C)``, ``x.sum(axis=0)``).
for _name in ("reshape", "view", "trans", "permute", "broadcast_to", "expand_dims", "ravel", "sum", "max", "min",
              "argmax", "argmin", "cumsum", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sigmoid", "abs", "sin", "cos",
              "floor", "ceil"):
    setattr(tensor, _name, globals()[_name])
del _name
