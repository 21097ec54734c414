"""``triton.language`` on paper: block tensors as numpy arrays, memory through ``blk``.

Layout (stated, simple): a program instance is one block of ``num_warps * 32`` threads.
A tensor's elements, taken in row-major order (last axis fastest), are dealt to the
threads round-robin: element ``e`` is held by thread ``e % T`` in repetition ``e // T``
(``T = num_warps * 32``). So lanes run along the contiguous (last) axis, warps tile the
rest, one element per thread per repetition. This is Triton's blocked layout with
``sizePerThread = 1``; Triton's default vectorises up to 16 bytes per thread, which this
front end does not model yet (requests per warp are the same sectors, more requests).

Every ``tl.load``/``tl.store``/``tl.atomic_*`` becomes one engine access (``blk._memory``)
per repetition, on the lanes holding the elements, with the mask; masked-off elements are
not accessed, so sectors and requests come from the engine's own counters, per the
reader's source line. Reductions, ``tl.dot`` and elementwise math are computed with numpy
and not counted (no shuffles, shared-memory exchange or MMA counts yet).
"""

from __future__ import annotations

import linecache
import math
import os
import sys
import threading

import numpy as np

from ..diagnostics import Site

_HERE = os.path.dirname(os.path.abspath(__file__))
_ctx = threading.local()


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
                                          float16, float32, float64) }


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


def _wrap(v):
    return tensor(np.asarray(v))


def _trunc_div(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind in "iu" and np.result_type(a, b).kind in "iu":
        if np.any(b == 0):
            _unsupported("integer division by zero")
        q = a // b
        fix = (a % b != 0) & ((a < 0) ^ (b < 0))
        return (q + fix).astype(q.dtype)
    return np.floor_divide(a, b)


def _trunc_mod(a, b):
    return np.fmod(np.asarray(a), np.asarray(b))  # the remainder takes the dividend's sign, as in C


def _truediv(a, b):
    a, b = np.asarray(a), np.asarray(b)
    r = np.true_divide(a, b)
    if a.dtype.kind in "iub" and (b.dtype.kind in "iub"):
        r = r.astype(np.float32)
    elif r.dtype == np.float64 and a.dtype != np.float64 and b.dtype != np.float64:
        r = r.astype(np.float32)
    return r


class tensor:
    """A block of values: ``v`` is a numpy array of the block's shape."""

    def __init__(self, v):
        self.v = np.asarray(v)

    shape = property(lambda self: list(self.v.shape))
    numel = property(lambda self: self.v.size)

    @property
    def dtype(self):
        return _BY_NP.get(self.v.dtype, dtype(str(self.v.dtype), self.v.dtype))

    def __repr__(self):
        return f"tensor({self.v!r})"

    def to(self, dt, bitcast=False, **_):
        if bitcast:
            return tensor(self.v.view(_to_np_dtype(dt)))
        return tensor(self.v.astype(_to_np_dtype(dt)))

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        for k in key:
            if not (k is None or (isinstance(k, slice) and k == slice(None)) or k is Ellipsis):
                _unsupported(f"indexing a tensor with {k!r} (only [:, None]-style is allowed)")
        return tensor(self.v[key])

    def __bool__(self):
        if self.v.ndim:
            _unsupported("the truth value of a block tensor")
        return bool(self.v)

    def __index__(self):
        return int(self.v)

    __int__ = __index__

    def __float__(self):
        return float(self.v)

    T = property(lambda self: tensor(self.v.T))

    def _bin(f):
        def op(self, other):
            if isinstance(other, pointer):
                return NotImplemented
            return tensor(f(self.v, _val(other)))

        def rop(self, other):
            return tensor(f(_val(other), self.v))
        return op, rop

    __add__, __radd__ = _bin(np.add)
    __sub__, __rsub__ = _bin(np.subtract)
    __mul__, __rmul__ = _bin(np.multiply)
    __truediv__, __rtruediv__ = _bin(_truediv)
    __floordiv__, __rfloordiv__ = _bin(_trunc_div)
    __mod__, __rmod__ = _bin(_trunc_mod)
    __and__, __rand__ = _bin(np.bitwise_and)
    __or__, __ror__ = _bin(np.bitwise_or)
    __xor__, __rxor__ = _bin(np.bitwise_xor)
    __lshift__, __rlshift__ = _bin(np.left_shift)
    __rshift__, __rrshift__ = _bin(np.right_shift)
    __pow__, __rpow__ = _bin(np.power)
    __lt__, _ = _bin(np.less)
    __le__, _ = _bin(np.less_equal)
    __gt__, _ = _bin(np.greater)
    __ge__, _ = _bin(np.greater_equal)
    __eq__, _ = _bin(np.equal)
    __ne__, _ = _bin(np.not_equal)
    del _bin
    __hash__ = object.__hash__

    def __neg__(self):
        return tensor(-self.v)

    def __invert__(self):
        return tensor(~self.v)

    def __pos__(self):
        return self


class pointer:
    """A block of addresses: the flat array an argument points into, and element offsets."""

    def __init__(self, base, offset):
        self.base = base
        self.offset = np.asarray(offset, dtype=np.int64)

    shape = property(lambda self: list(self.offset.shape))

    @property
    def dtype(self):
        return pointer_type(_BY_NP.get(self.base.dtype))

    def _off(self, other):
        o = _val(other)
        o = np.asarray(o)
        if o.dtype.kind not in "iub":
            _unsupported(f"pointer arithmetic with {o.dtype}")
        return o.astype(np.int64)

    def __add__(self, other):
        return pointer(self.base, self.offset + self._off(other))

    __radd__ = __add__

    def __sub__(self, other):
        return pointer(self.base, self.offset - self._off(other))

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        return pointer(self.base, self.offset[key])

    def to(self, *_, **__):
        return self


class pointer_type:
    def __init__(self, element_ty):
        self.element_ty = element_ty


# -- programs -------------------------------------------------------------------------------

def program_id(axis=0):
    return tensor(np.int32(_ctx.pid[_val(axis)]))


def num_programs(axis=0):
    return tensor(np.int32(_ctx.grid[_val(axis)]))


def arange(start, end):
    start, end = int(_val(start)), int(_val(end))
    n = end - start
    if n <= 0 or n & (n - 1):
        _unsupported(f"tl.arange({start}, {end}): its length must be a power of 2")
    return tensor(np.arange(start, end, dtype=np.int32))


def _shape(shape):
    shape = _val(shape)
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(_val(s)) for s in shape)


def zeros(shape, dtype):
    return tensor(np.zeros(_shape(shape), _to_np_dtype(dtype)))


def full(shape, value, dtype):
    return tensor(np.full(_shape(shape), _val(value), _to_np_dtype(dtype)))


def zeros_like(x):
    return tensor(np.zeros_like(_val(x)))


def full_like(x, value):
    return tensor(np.full_like(_val(x), _val(value)))


def cdiv(a, b):
    return _trunc_div(np.asarray(_val(a)) + _val(b) - 1, _val(b)) if isinstance(a, tensor) or isinstance(b, tensor) \
        else -(-int(_val(a)) // int(_val(b)))


def next_power_of_2(n):
    n = int(_val(n))
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def multiple_of(x, values):
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
    c = np.asarray(_val(cond))
    if mask is not None:
        c = c | ~np.asarray(_val(mask))
    if not c.all():
        raise AssertionError(f"{_where_msg()}: device_assert failed in program {_ctx.pid}: {msg}")


def static_print(*args, **kw):
    print(*args)


def device_print(prefix, *args, **kw):
    print(prefix, *[_val(a) for a in args])


class static_range:
    def __init__(self, *args):
        self.r = builtin_range(*(int(_val(a)) for a in args))

    def __iter__(self):
        return iter(self.r)


class range:  # noqa: A001 - Triton's name
    def __init__(self, *args, num_stages=None, loop_unroll_factor=None, disallow_acc_multi_buffer=False,
                 flatten=False, warp_specialize=False, **kw):
        import builtins
        self.r = builtins.range(*(int(_val(a)) for a in args))

    def __iter__(self):
        return (tensor(np.int32(i)) for i in self.r)


# -- math -----------------------------------------------------------------------------------

def _unary(f, float_only=True):
    def op(x, **_):
        v = np.asarray(_val(x))
        if float_only and v.dtype.kind != "f":
            v = v.astype(np.float32)
        with np.errstate(all="ignore"):
            r = f(v)
        return tensor(r.astype(v.dtype) if float_only else r)
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


def fdiv(x, y, ieee_rounding=False):
    return tensor(_truediv(_val(x), _val(y)))


div_rn = fdiv


def _np2(a, b):
    return np.asarray(_val(a)), np.asarray(_val(b))


def maximum(x, y, propagate_nan=None):
    return tensor(np.maximum(*_np2(x, y)))


def minimum(x, y, propagate_nan=None):
    return tensor(np.minimum(*_np2(x, y)))


def clamp(x, lo, hi, propagate_nan=None):
    return tensor(np.clip(_val(x), _val(lo), _val(hi)))


def where(cond, x, y):
    return tensor(np.where(np.asarray(_val(cond)), _val(x), _val(y)))


def fma(x, y, z):
    return tensor(np.asarray(_val(x)) * _val(y) + _val(z))


def _reduce(f):
    def op(x, axis=None, keep_dims=False, **_):
        v = np.asarray(_val(x))
        axis = _val(axis)
        r = f(v, axis=axis, keepdims=keep_dims)
        return tensor(np.asarray(r))
    return op


def _sum(v, axis, keepdims):
    r = np.sum(v, axis=axis, keepdims=keepdims)
    if v.dtype.kind in "iub" and v.dtype.itemsize < 4:
        r = r.astype(np.int32)
    return r.astype(v.dtype) if v.dtype.kind == "f" else r


sum = _reduce(_sum)  # noqa: A001
max = _reduce(np.max)  # noqa: A001
min = _reduce(np.min)  # noqa: A001


def argmax(x, axis, tie_break_left=True, keep_dims=False):
    r = np.argmax(np.asarray(_val(x)), axis=_val(axis), keepdims=keep_dims)
    return tensor(np.asarray(r, dtype=np.int32))


def argmin(x, axis, tie_break_left=True, keep_dims=False):
    r = np.argmin(np.asarray(_val(x)), axis=_val(axis), keepdims=keep_dims)
    return tensor(np.asarray(r, dtype=np.int32))


def cumsum(x, axis=0, reverse=False):
    v = np.asarray(_val(x))
    if reverse:
        v = np.flip(v, axis)
    r = np.cumsum(v, axis=_val(axis), dtype=v.dtype if v.dtype.kind == "f" else None)
    if reverse:
        r = np.flip(r, axis)
    return tensor(r)


def reduce(*a, **k):
    _unsupported("tl.reduce with a combine function")


def associative_scan(*a, **k):
    _unsupported("tl.associative_scan")


def dot(a, b, acc=None, input_precision=None, allow_tf32=None, max_num_imprecise_acc=None, out_dtype=float32):
    a, b = np.asarray(_val(a)), np.asarray(_val(b))
    if a.ndim != 2 or b.ndim != 2:
        _unsupported("tl.dot on tensors that are not 2-D")
    out = _to_np_dtype(out_dtype) if acc is None else np.asarray(_val(acc)).dtype
    if a.dtype.kind in "iu":
        r = a.astype(np.int64) @ b.astype(np.int64)
        out = np.int32 if acc is None else out
    else:
        r = a.astype(np.float32) @ b.astype(np.float32)
    if acc is not None:
        r = r + np.asarray(_val(acc))
    return tensor(r.astype(out))


def trans(x, *dims):
    v = np.asarray(_val(x))
    return tensor(np.transpose(v, dims or None) if dims else v.T)


permute = trans


def reshape(x, *shape, can_reorder=False):
    if len(shape) == 1 and not isinstance(_val(shape[0]), (int, np.integer)):
        shape = shape[0]
    return tensor(np.reshape(_val(x), _shape(shape)))


view = reshape


def broadcast_to(x, *shape):
    if len(shape) == 1 and not isinstance(_val(shape[0]), (int, np.integer)):
        shape = shape[0]
    x_ = x
    if isinstance(x_, pointer):
        return pointer(x_.base, np.broadcast_to(x_.offset, _shape(shape)))
    return tensor(np.broadcast_to(_val(x), _shape(shape)).copy())


def expand_dims(x, axis):
    if isinstance(x, pointer):
        return pointer(x.base, np.expand_dims(x.offset, _val(axis)))
    return tensor(np.expand_dims(_val(x), _val(axis)))


def ravel(x):
    return tensor(np.ravel(_val(x)))


def cast(x, dt, **_):
    return _wrap(_val(x)).to(dt)


def make_block_ptr(*a, **k):
    _unsupported("tl.make_block_ptr (block pointers)")


def advance(*a, **k):
    _unsupported("tl.advance (block pointers)")


def make_tensor_descriptor(*a, **k):
    _unsupported("tl.make_tensor_descriptor")


def debug_barrier():
    _ctx.blk.sync()


# -- memory ---------------------------------------------------------------------------------

def _prepare(ptr, mask, value=None):
    if isinstance(ptr, tensor) or not isinstance(ptr, pointer):
        _unsupported(f"a memory access through {type(ptr).__name__} (not a pointer)")
    m = None if mask is None else np.asarray(_val(mask)).astype(bool)
    shapes = [ptr.offset.shape] + ([] if m is None else [m.shape]) + ([] if value is None else [np.shape(value)])
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        _unsupported(f"a memory access whose pointer, mask and value shapes {shapes} do not broadcast")
    if m is not None:
        m = np.broadcast_to(m, shape).ravel()
    off = np.broadcast_to(ptr.offset, shape).ravel()
    return shape, off, m


def _access(kind, ptr, mask, value=None, op=None, compare=None):
    blk = _ctx.blk
    site = _site(blk)
    shape, off, m = _prepare(ptr, mask, value)
    arr = ptr.base
    if value is not None:
        value = np.broadcast_to(np.asarray(value), shape).ravel().astype(arr.dtype)
        if compare is not None:
            compare = np.broadcast_to(np.asarray(compare), shape).ravel().astype(arr.dtype)
    n = off.size
    T = blk.nthreads
    out = np.zeros(n, arr.dtype)
    for r in builtin_range(0, n, T):
        k = builtins_min(T, n - r)
        idx = np.zeros((1, T), np.int64)
        idx[0, :k] = off[r:r + k]
        lanes = np.zeros((1, T), bool)
        lanes[0, :k] = True if m is None else m[r:r + k]
        if not lanes.any():
            continue
        val = cmp = None
        if value is not None:
            val = np.zeros((1, T), arr.dtype)
            val[0, :k] = value[r:r + k]
        if compare is not None:
            cmp = np.zeros((1, T), arr.dtype)
            cmp[0, :k] = compare[r:r + k]
        res = blk._memory(kind, site, arr, idx, lanes, 1, val, op, cmp)
        if res is not None:
            out[r:r + k] = np.asarray(res).reshape(-1)[:k]
    return out.reshape(shape)


import builtins as _b  # noqa: E402
builtin_range = _b.range
builtins_min = _b.min


def load(pointer, mask=None, other=None, boundary_check=(), padding_option="", cache_modifier="",
         eviction_policy="", volatile=False):
    """Reads the elements the mask allows; the others take ``other`` (0 without it).
    ``cache_modifier``, ``eviction_policy`` and ``volatile`` are accepted and change no count."""
    out = _access("read", pointer, mask)
    if mask is not None and other is not None:
        m = np.broadcast_to(np.asarray(_val(mask)), out.shape)
        out = np.where(m, out, np.asarray(_val(other)).astype(out.dtype))
    return tensor(out)


def store(pointer, value, mask=None, boundary_check=(), cache_modifier="", eviction_policy=""):
    _access("write", pointer, mask, np.asarray(_val(value)))


def _atomic(op):
    def f(pointer, val, mask=None, sem=None, scope=None):
        return tensor(_access("atomic", pointer, mask, np.asarray(_val(val)), op))
    f.__name__ = f"atomic_{op}"
    return f


atomic_add = _atomic("add")
atomic_max = _atomic("max")
atomic_min = _atomic("min")
atomic_xchg = _atomic("exch")


def atomic_cas(pointer, cmp, val, sem=None, scope=None):
    return tensor(_access("atomic", pointer, None, np.asarray(_val(val)), "cas", np.asarray(_val(cmp))))


def atomic_and(*a, **k):
    _unsupported("tl.atomic_and")


atomic_or = atomic_xor = atomic_and


# Triton tensors carry many language functions as methods (``x.reshape(R, C)``, ``x.sum(axis=0)``).
for _name in ("reshape", "view", "trans", "permute", "broadcast_to", "expand_dims", "ravel", "sum", "max", "min",
              "argmax", "argmin", "cumsum", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sigmoid", "abs", "sin", "cos",
              "floor", "ceil"):
    setattr(tensor, _name, globals()[_name])
del _name
