//! The core of pytato-rs: lazy array expressions.
//!
//! Users build a DAG of array operations; nothing is computed until a backend compiles and runs it.
//! This crate holds what every other crate shares:
//!
//! - [`dtype`]: the thirteen element types and numpy 2 type promotion;
//! - [`shape`]: symbolic shapes whose lengths are affine in named size parameters;
//! - [`expr`]: the scalar expression language of index lambdas;
//! - [`array`]: the array nodes, with structural hashing and linear-time equality;
//! - [`tags`] and [`names`]: metadata and the reserved namespaces;
//! - [`data`] and [`scalar`]: dynamically typed values and `ndarray` arrays;
//! - [`function`]: function definitions, calls, tracing and inlining;
//! - [`distributed`]: the nodes that send and receive arrays between ranks;
//! - [`phases`]: programs with data-dependent lengths (counts) and scatters, run in phases;
//! - [`math`]: numpy's scalar math where Rust differs (float `//` and `%`, casts, complex functions).
//!
//! See `ARCHITECTURE.md` at the repository root for how a DAG travels through the crates.

pub mod array;
pub mod backend;
pub mod binding;
pub mod created_at;
pub mod data;
pub mod datashape;
pub mod device;
pub mod distributed;
pub mod dtype;
pub mod error;
pub mod expr;
pub mod frontend;
pub mod function;
pub mod half_float;
pub mod math;
pub mod names;
pub mod phases;
pub mod scalar;
pub mod scan;
pub mod shape;
pub mod size_check;
pub mod sort;
pub mod tags;
pub mod user_kernel;
pub mod view;

pub use array::{
    Array, Axis, DictOfNamedArrays, EinsumAxis, IndexItem, NodeKind, NormalizedSlice, Order, ReductionDescriptor,
    ScanOp, Side, SortResult,
};
pub use data::ArrayData;
pub use dtype::DType;
pub use error::{Error, Result};
pub use expr::Expr;
/// The `float16` element type of [`DType::F16`] arrays (the `half` crate's).
pub use half::f16;
pub use scalar::Scalar;
pub use shape::{Dim, Shape};
pub use tags::{Tag, TagSet};
pub use view::{ArrayDataView, ArrayDataViewMut};
