//! Running compiled array programs: what every backend shares below the IR.
//!
//! - [`backend`]: the [`Backend`](backend::Backend) and [`Program`](backend::Program) traits and
//!   the registry of linked backends;
//! - [`binding`]: a program's [`Signature`](binding::Signature) and the binding of inputs and
//!   sizes to it, with every check on run-time sizes;
//! - `view` (re-exported from `pytato-core`, where `ArrayData` lends them): borrowed `ndarray`
//!   views of any dtype, the form inputs and outputs travel in;
//! - [`device`]: arrays kept on a backend's device between runs;
//! - [`interrupt`]: stopping runs in progress (Ctrl-C);
//! - [`phases`]: programs with data-dependent lengths and scatters, run in phases with host steps
//!   between them ([`sort`], [`scan`]) on the threads [`host_threads`] picks, in the memory of an
//!   earlier run's results where it can ([`spare`]);
//! - [`math`]: numpy's scalar math where Rust differs, and the summation order every backend
//!   follows.
//!
//! It depends on `pytato-core` (the IR) and `pytato-datashape` (signatures as datashapes), never on
//! the frontend.

pub mod backend;
pub mod binding;
pub mod device;
pub mod host_threads;
pub mod interrupt;
pub mod math;
pub mod phases;
pub mod scan;
pub mod sort;
pub mod spare;

pub use pytato_core::view::{self, ArrayDataView, ArrayDataViewMut};
