"""C's integer promotion, where the simulator hands a kernel a value.

In C every integer narrower than ``int`` is promoted to ``int`` before any arithmetic:
``pixel * 4`` with an ``unsigned char pixel`` is computed in 32 bits. numpy keeps the
narrow type instead, so ``uint8 * 4`` wraps around at 256 without a word. The engine owns
one boundary where it can follow C: what a load (or an atomic's old value) returns. A
value read from an ``int8``, ``uint8``, ``int16`` or ``uint16`` array arrives as ``int32``,
as the C expression ``a[i]`` would; storing it back into a narrow array converts it, as
the C assignment does. Arithmetic on arrays a kernel builds itself stays numpy's.
"""

from __future__ import annotations

import numpy as np


def promoted(values):
    """``values`` as C would compute with them: narrow integers widened to ``int32``."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu" and values.dtype.itemsize < 4:
        return values.astype(np.int32)
    return values
