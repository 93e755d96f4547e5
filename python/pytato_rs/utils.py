"""pytato's ``pytato.utils``: the helpers on shapes that code ported from pytato calls."""

from __future__ import annotations


def are_shape_components_equal(dim1, dim2):
    """Whether two lengths (ints, size parameters, affine expressions of them, the lengths a
    shape holds) are the same for every value of the size parameters."""
    from ._native import _length

    return bool(_length(dim1) == _length(dim2))


def are_shapes_equal(shape1, shape2):
    """Whether two shapes have the same lengths, axis by axis (see
    :func:`are_shape_components_equal`)."""
    return len(shape1) == len(shape2) and all(
        are_shape_components_equal(a, b) for a, b in zip(shape1, shape2, strict=True)
    )


__all__ = ["are_shape_components_equal", "are_shapes_equal"]
