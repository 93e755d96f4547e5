//! The numpy-like frontend: how users build array expressions.
//!
//! Import it as `pt` and call functions the way you would call numpy's:
//!
//! ```
//! use pytato_core::{s, DType, Dim};
//! use pytato_frontend as pt;
//! let n = Dim::param("n");
//! let u = pt::placeholder("u", [n.clone()], DType::F64).unwrap();
//! // A centred difference on the interior points.
//! let du = (&u.index(s![2..]).unwrap() - &u.index(s![..-2]).unwrap()) * 0.5;
//! assert_eq!(du.shape().to_string(), "(n - 2,)");
//! ```
//!
//! Every function returns `Result`: bad shapes, dtypes, axes, indices or specs are an
//! [`Error`](pytato_core::Error) that names the operation and shows what was wrong. Shapes and dtypes
//! follow numpy 2 (checked against numpy by a generated table); where this library departs from
//! numpy the function's docs say so. The operators (`+`, `*`, ...) are in [`ops`] (`pytato_core::ops`) and panic
//! with the error message instead.
//!
//! Names are numpy's; where the Python Array API standard spells a function differently, both
//! names are here (`acos` is [`arccos`], `concat` is [`concatenate`], `pow` is [`power`],
//! `bitwise_left_shift` is [`left_shift`], ...), so code written against either ports directly:
//!
//! ```
//! use pytato_core::DType;
//! use pytato_frontend as pt;
//! let x = pt::placeholder("x", [3], DType::F32).unwrap();
//! assert_eq!(pt::acos(&x).unwrap(), pt::arccos(&x).unwrap());
//! assert_eq!(pt::concat(&[x.clone(), x.clone()], 0).unwrap().shape().to_string(), "(6,)");
//! ```
//!
//! Each function builds the highest-level node that captures the operation (seed, "Computation
//! and Results"): elementwise operations and reductions are `IndexLambda`s, `einsum`/`matmul`/`dot`
//! are `Einsum`s, `reshape` is a `Reshape`, indexing is one of the index nodes.

mod creation;
mod elementwise;
mod linalg;
mod reductions;
mod scans;
mod selection;
mod shape_ops;
mod sorting;

// The constructors that `pytato-core` holds because the operators and `Array`'s methods need them,
// under their numpy names with the rest.
pub use creation::{
    Indexing, PadMode, PadWidth, arange, arange_symbolic, asarray, data_wrapper, empty, empty_like, eye, full_like,
    linspace, linspace_computed_in, meshgrid, meshgrid_sparse, ones, ones_like, pad, pad_with, placeholder, size_param,
    tril, triu, zeros_like,
};
pub use elementwise::{
    abs, arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh, cbrt, ceil, clip, complex_from_parts, conj,
    copysign, cos, cosh, exp, exp2, expm1, floor, fmax, fmin, fmod, frexp, gcd, hypot, imag, isfinite, isinf, isnan,
    lcm, ldexp, left_shift, log, log1p, log2, log10, logaddexp, logaddexp2, logical_xor, maximum, minimum, modf,
    nextafter, positive, real, reciprocal, require_non_negative, right_shift, rint, round, round_decimals, sign,
    signbit, sin, sinh, spacing, sqrt, square, tan, tanh, trunc, where_,
};
/// The Array API standard's spellings of functions numpy names differently.
pub use elementwise::{
    arccos as acos, arccosh as acosh, arcsin as asin, arcsinh as asinh, arctan as atan, arctan2 as atan2,
    arctanh as atanh, left_shift as bitwise_left_shift, right_shift as bitwise_right_shift,
};
pub use linalg::{
    TensordotAxes, check_einsum_subscripts, diagonal, dot, einsum, matmul, tensordot, trace, vdot, vecdot,
};
pub use pytato_core::arith::{
    add, astype, bitwise_and, bitwise_or, bitwise_xor, divide, equal, floor_divide, greater, greater_equal, invert,
    less, less_equal, logical_and, logical_not, logical_or, multiply, negative, not_equal, power, remainder, subtract,
};
/// The Array API standard's spellings of functions numpy names differently.
pub use pytato_core::arith::{invert as bitwise_invert, power as pow};
pub use pytato_core::assign::{add_at, set_index};
pub use pytato_core::basic::{broadcast_to, full, ravel, reshape, zeros};
pub use pytato_core::indexing::{Ellipsis, Idx, NewAxis, index, take, take_along_axis};
pub use pytato_core::operand::{LambdaBuilder, Operand, promote};
pub use pytato_core::ops;
pub use reductions::{
    Axes, ReduceOptions, all, any, argmax, argmin, max, mean, min, nanargmax, nanargmin, prod, std, std_about, sum,
    var, var_about,
};
pub use scans::{ScanOptions, cumprod, cumsum, cumulative_prod, cumulative_sum};
pub use selection::{
    COUNT_PREFIX, Side, argwhere, compress, count_nonzero, extract, flatnonzero, nonzero, searchsorted,
};
/// The Array API standard's name for [`concatenate`].
pub use shape_ops::concatenate as concat;
pub use shape_ops::{
    Split, broadcast_arrays, concatenate, diff, diff_with, expand_dims, flip, matrix_transpose, moveaxis, permute_dims,
    repeat, roll, roll_axes, split, squeeze, stack, swapaxes, tile, transpose, unstack,
};
pub use sorting::{
    SortOptions, UniqueAll, UniqueCounts, UniqueInverse, argsort, sort, unique, unique_all, unique_counts,
    unique_inverse, unique_values, unique_values_equal_nan,
};
