"""C structs and CUDA's vector types (``float4``, ``int2``, ``uint4`` …) as the lowering sees them.

A struct variable has no Python object of its own: each scalar member is a variable of its
own (``p.x`` is ``p__x``), each array member a local array, a nested struct its members in
turn, so the per-thread compiler sees only the scalars and arrays it knows. A vector type is
a struct whose members are ``x``, ``y``, ``z``, ``w`` of one type; an array or pointer of
one (``float4 *``, ``__shared__ float4 s[64]``) is an array of that scalar type, four
elements per vector, and reading or writing a whole vector is one 8- or 16-byte access per
lane (the engine's ``width=``), as the hardware's ``LDG.128`` is.
"""

from __future__ import annotations

import numpy as np


class Struct:
    """A struct type: its name and its members in order, each ``(name, CType)``."""

    def __init__(self, name: str, fields: list, vector: bool = False, aligned: int = 1):
        self.name, self.fields, self.vector = name, fields, vector
        self.aligned = aligned  # __align__(n): the alignment the declaration asks for

    def leaves(self, prefix=()):
        """``(path, CType)`` of every scalar or array member, nested structs flattened, in order."""
        for name, ct in self.fields:
            if ct.kind == "struct":
                yield from ct.struct.leaves(prefix + (name,))
            else:
                yield prefix + (name,), ct

    @property
    def element(self):
        """The one scalar type of every member (a vector type's), else None."""
        kinds = {(ct.kind, ct.dtype) for _, ct in self.leaves()}
        if len(kinds) == 1 and next(iter(kinds))[0] == "scalar":
            return next(iter(kinds))[1]
        return None

    @property
    def width(self) -> int:
        return len(list(self.leaves()))

    @property
    def itemsize(self) -> int:
        """sizeof: members at their natural alignment, the whole padded to the largest."""
        size, align = 0, 1
        for _, ct in self.fields:
            if ct.kind == "struct":
                a, n = ct.struct.alignment, ct.struct.itemsize
            else:
                a = ct.dtype.itemsize
                n = a * int(np.prod(ct.shape)) if ct.kind == "array" else a
            size = -(-size // a) * a + n
            align = max(align, a)
        if self.vector:  # float4, int2 …: aligned to their whole size (float3 to its member)
            align = max(align, size if size in (2, 4, 8, 16) else align)
        align = max(align, self.aligned)
        return -(-size // align) * align

    @property
    def alignment(self) -> int:
        if self.vector and self.itemsize in (2, 4, 8, 16):
            return self.itemsize
        return max([self.aligned] + [ct.struct.alignment if ct.kind == "struct" else ct.dtype.itemsize
                                     for _, ct in self.fields])

    def numpy_dtype(self) -> np.dtype:
        """The numpy structured dtype of the same layout (for a kernel argument)."""
        names, formats, offsets, off = [], [], [], 0
        for name, ct in self.fields:
            if ct.kind == "struct":
                dt, a = ct.struct.numpy_dtype(), ct.struct.alignment
            elif ct.kind == "array":
                dt, a = np.dtype((ct.dtype, tuple(ct.shape))), ct.dtype.itemsize
            else:
                dt, a = ct.dtype, ct.dtype.itemsize
            off = -(-off // a) * a
            names.append(name)
            formats.append(dt)
            offsets.append(off)
            off += dt.itemsize
        return np.dtype({"names": names, "formats": formats, "offsets": offsets, "itemsize": self.itemsize})

    def __repr__(self):
        return f"Struct({self.name})"


class StructArg(str):
    """A template type argument that is a struct or a vector type (``testKernel<RGBA32>``,
    ``load<float4>``): its name, by which the lowering looks the struct up."""


_VECTOR_BASES = {
    "char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16, "int": np.int32, "uint": np.uint32,
    "long": np.int64, "ulong": np.uint64, "longlong": np.int64, "ulonglong": np.uint64, "float": np.float32,
    "double": np.float64,
}


def vector_types(CType) -> dict:
    """``float4`` … ``ulonglong2``, ``__half2``: name -> Struct (members x, y, z, w)."""
    out = {}
    for base, dt in _VECTOR_BASES.items():
        for n in (1, 2, 3, 4):
            name = f"{base}{n}"
            out[name] = Struct(name, [(m, CType("scalar", dt)) for m in "xyzw"[:n]], vector=True)
    out["__half2"] = out["half2"] = Struct("__half2", [(m, CType("scalar", np.float16)) for m in "xy"], vector=True)
    return out


#: __half2 functions of cuda_fp16.h computed member by member: name -> (arguments, operator)
HALF2_OPS = {"__hadd2": (2, "+"), "__hsub2": (2, "-"), "__hmul2": (2, "*"), "__h2div": (2, "/"), "__hfma2": (3, "fma"),
             "__hneg2": (1, "neg")}
