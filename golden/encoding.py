"""numpy arrays as the JSON the Rust side reads (`dtype`, `shape`, row-major `values`; NaN and
infinities as strings, complex numbers as [re, im]): one encoding for the golden files and the
fuzzer's oracle."""

import numpy as np


def enc_float(v):
    v = float(v)
    if v != v:
        return "nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    return v


def encode(a):
    a = np.asarray(a)
    flat = a.reshape(-1)
    if a.dtype.kind == "b":
        values = [bool(v) for v in flat]
    elif a.dtype.kind in "iu":
        values = [int(v) for v in flat]
    elif a.dtype.kind == "f":
        values = [enc_float(v) for v in flat]
    elif a.dtype.kind == "c":
        values = [[enc_float(v.real), enc_float(v.imag)] for v in flat]
    else:
        raise TypeError(f"numpy gives dtype {a.dtype}")
    return {"dtype": a.dtype.name, "shape": list(a.shape), "values": values}
