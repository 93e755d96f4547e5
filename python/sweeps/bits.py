"""What the sweeps count as numpy's result: the same dtype, shape and values, NaN equal to NaN
and the sign of every zero kept (complex numbers part by part)."""

from __future__ import annotations

import numpy as np


def same(got, exp):
    """Whether ``got`` is ``exp``, bit for bit but for NaN payloads."""
    got, exp = np.asarray(got), np.asarray(exp)
    if got.dtype != exp.dtype or got.shape != exp.shape:
        return False
    if exp.dtype.kind == "c":
        return same(got.real.copy(), exp.real.copy()) and same(got.imag.copy(), exp.imag.copy())
    if exp.dtype.kind == "f":
        return bool(np.all((np.isnan(got) & np.isnan(exp)) | ((got == exp) & (np.signbit(got) == np.signbit(exp)))))
    return bool(np.all(got == exp))
