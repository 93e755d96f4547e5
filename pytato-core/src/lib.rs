//! The core of pytato-rs: the IR of lazy array expressions.
//!
//! Users build a DAG of array operations; nothing is computed until a backend compiles and runs it.
//! This crate holds what every other crate shares, and depends on none of them:
//!
//! - [`dtype`]: the element types and numpy 2 type promotion;
//! - [`shape`]: symbolic shapes whose lengths are affine in named size parameters;
//! - [`expr`]: the scalar expression language of index lambdas;
//! - [`array`](mod@array): the array nodes, with structural hashing and linear-time equality;
//! - [`outputs`]: what a program computes (one array, or named ones);
//! - [`tags`] and [`names`]: metadata and the reserved namespaces;
//! - [`data`], [`view`] and [`scalar`]: dynamically typed values, `ndarray` arrays (data wrappers
//!   hold them) and borrowed views of them;
//! - [`function`]: function definitions, calls, tracing and inlining;
//! - [`distributed`]: the nodes that send and receive arrays between ranks;
//! - [`user_kernel`]: kernels written as statements over index grids;
//! - [`size_check`]: what a node needs of the run-time sizes;
//! - [`error`]: the typed errors of every crate.
//!
//! It also holds the constructors Rust's coherence rules tie to [`Array`]: the operators
//! ([`ops`], built on [`arith`] and [`operand`]), `a.index(...)` ([`indexing`], the [`s!`] macro),
//! `a.set_index(...)`/`a.add_at(...)` ([`assign`]), and the few constructors they rest on
//! ([`basic`]). The rest of numpy's functions are in `pytato-frontend`; running programs is
//! `pytato-runtime`'s job. See `ARCHITECTURE.md` at the repository root for the crates' order.

pub mod arith;
pub mod array;
pub mod assign;
pub mod basic;
pub mod created_at;
pub mod data;
pub mod device;
pub mod distributed;
pub mod dtype;
pub mod error;
pub mod expr;
pub mod function;
pub mod half_float;
pub mod indexing;
pub mod names;
pub mod operand;
pub mod ops;
pub mod outputs;
pub mod scalar;
pub mod shape;
pub mod size_check;
pub mod tags;
pub mod user_kernel;
pub mod view;

pub use array::{
    Array, Axis, DictOfNamedArrays, EinsumAxis, IndexItem, NodeKind, NormalizedSlice, Order, ReductionDescriptor,
    ScanOp, Side, SortResult,
};
pub use data::ArrayData;
pub use dtype::DType;
pub use error::{Error, Result, ValueCheck};
pub use expr::Expr;
/// The `float16` element type of [`DType::F16`] arrays (the `half` crate's).
pub use half::f16;
pub use indexing::{Ellipsis, Idx, NewAxis};
pub use operand::{LambdaBuilder, Operand};
pub use outputs::Outputs;
pub use scalar::Scalar;
pub use shape::{Dim, Shape};
pub use tags::{Tag, TagSet};
pub use view::{ArrayDataView, ArrayDataViewMut};

/// The frontend's names for what this crate's unit tests build with (`pytato-frontend` is a crate
/// above this one, so they cannot import it).
#[cfg(test)]
mod pt {
    pub(crate) use crate::arith::*;
    pub(crate) fn placeholder(
        name: &str,
        shape: impl Into<crate::Shape>,
        dtype: crate::DType,
    ) -> crate::Result<crate::Array> {
        crate::Array::new_placeholder(Some(name), shape.into(), dtype)
    }
}
