"""Kernel arguments: where a numpy array sits in the memory it belongs to.

A view such as ``a[1:]`` starts inside its base array's allocation, which decides its
sectors. A kernel sees its arrays read-only (``a[i] = v`` in a kernel would bypass the
simulator); ``blk.store`` and the atomics write through ``writable``.
"""

from __future__ import annotations

import numpy as np


def _root(array: np.ndarray) -> np.ndarray:
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def byte_offset(array: np.ndarray) -> int:
    """Where ``array`` starts inside the allocation it belongs to, in bytes."""
    root = _root(array)
    return array.__array_interface__["data"][0] - root.__array_interface__["data"][0]


def read_only(array):
    """A kernel argument as the kernel sees it: numpy arrays become read-only views."""
    if isinstance(array, np.ndarray) and array.flags.writeable:
        view = array.view()
        view.flags.writeable = False
        return view
    return array


def writable(array: np.ndarray) -> np.ndarray:
    """The same memory as ``array`` (a read-only argument view), writable."""
    if array.flags.writeable:
        return array
    owner = array
    while not owner.flags.writeable and isinstance(owner.base, np.ndarray):
        owner = owner.base
    start = array.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
    flat = owner.reshape(-1).view(np.uint8)
    return flat[start:start + array.nbytes].view(array.dtype).reshape(array.shape)
