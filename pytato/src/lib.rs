//! # pytato-rs
//!
//! Lazy array expressions with a numpy-like API. Build a DAG of array operations (nothing is
//! computed), then compile it for a backend and run it on real data, as often as you like.
//!
//! ```
//! use pytato as pt;
//! use pytato::{ArrayData, DType, backend::NamedData};
//!
//! let x = pt::placeholder("x", [4], DType::F64).unwrap();
//! let y = pt::sum(&(&x * &x), None).unwrap();          // nothing runs yet
//! let program = pt::default_backend().unwrap().compile(&(&y).into()).unwrap();
//! let inputs = NamedData::from([("x".into(), ArrayData::from(ndarray::arr1(&[1.0, 2.0, 3.0, 4.0]).into_dyn()))]);
//! let out = program.run(&inputs).unwrap();
//! assert_eq!(out["_pt_out"].as_array::<f64>().unwrap().sum(), 30.0);
//! ```
//!
//! ## Data in and out without copies
//!
//! [`Program::run`](backend::Program::run) takes owned arrays and returns fresh ones: simple.
//! A program run in a loop can instead borrow its inputs ([`ArrayDataView`], any strides: a
//! compiled backend copies a view only where it is not row-major) and write its outputs into
//! arrays it keeps ([`ArrayDataViewMut`]); a wrong dtype or shape is a typed error before
//! anything runs.
//!
//! ```
//! use pytato as pt;
//! use pytato::{DType, Dim, backend::{NamedViews, NamedViewsMut}};
//! use ndarray::{Array1, s};
//!
//! let u = pt::placeholder("u", [Dim::param("n")], DType::F64).unwrap();
//! let step = pt::add(&u, &pt::multiply(&u, 0.5).unwrap()).unwrap();
//! let program = pt::default_backend().unwrap().compile(&(&step).into()).unwrap();
//!
//! let data = Array1::from_shape_fn(10, |i| i as f64);
//! let mut next = Array1::<f64>::zeros(5);
//! // Every other element of `data` (a strided view), into `next` (allocated once).
//! let inputs = NamedViews::from([("u", data.slice(s![..;2]).into_dyn().into())]);
//! let mut outputs = NamedViewsMut::from([("_pt_out", next.view_mut().into_dyn().into())]);
//! program.run_into(&inputs, &mut outputs).unwrap();
//! assert_eq!(next.to_vec(), vec![0.0, 3.0, 6.0, 9.0, 12.0]);
//!
//! // The wrong dtype is an error that names the output, not a panic.
//! let mut wrong = Array1::<f32>::zeros(5);
//! let mut outputs = NamedViewsMut::from([("_pt_out", wrong.view_mut().into_dyn().into())]);
//! assert!(matches!(program.run_into(&inputs, &mut outputs), Err(pt::Error::OutputArray { .. })));
//! ```
//!
//! ## Backends and features
//!
//! Each backend is a crate that registers itself when it is linked; a cargo feature of this crate
//! links it:
//!
//! | feature | backend | |
//! | --- | --- | --- |
//! | `interp` (default) | `"interp"` | the reference interpreter on `ndarray`: simple, slow, every node kind |
//! | `cranelift` (default) | `"cranelift"` | fused kernels JIT-compiled with Cranelift: threaded, cached, the default backend |
//! | `distributed` | | `run_distributed`: DAGs with sends and receives run over ranks (threads as ranks without MPI) |
//! | `mpi` | | `distributed` over MPI (rsmpi; needs Open MPI and libclang to build) |
//! | `wgpu` | `"wgpu"` | fused kernels as WGSL compute shaders through wgpu (Vulkan, Metal, DX12); needs a GPU driver at run time (Mesa's lavapipe runs on the CPU) |
//!
//! [`backends`]
//! lists what is linked, [`backend`](fn@backend) picks one by name, and [`default_backend`] picks the most
//! preferred (cranelift > wgpu > interp); the environment variable `PYTATO_BACKEND` overrides it.
//!
//! ## Where things are
//!
//! The numpy-like functions are at the crate root (`pt::add`, `pt::einsum`, `pt::sum`, ...,
//! from [`pytato_frontend`]); the array model is in [`array`](mod@array), [`dtype`], [`shape`],
//! [`expr`] and [`tags`]; the backend interface in [`backend`](mod@backend); passes (CSE, DCE, tag
//! unification, lowering, materialization, drawing) and the Mapper framework for writing your own
//! are in [`transform`].

pub use pytato_core::function::{Function, trace_call};
pub use pytato_core::{
    Array, ArrayData, Axis, DType, DictOfNamedArrays, Dim, EinsumAxis, Error, Expr, IndexItem, NodeKind,
    NormalizedSlice, Order, ReductionDescriptor, Result, Scalar, Shape, Tag, TagSet, ValueCheck, array, data,
    distributed, dtype, error, expr, f16, function, half_float, names, s, scalar, shape, size_check, tags, user_kernel,
};
pub use pytato_datashape as datashape;
pub use pytato_frontend::*;
pub use pytato_runtime::backend::{backend, backends, default_backend};
pub use pytato_runtime::{ArrayDataView, ArrayDataViewMut, backend, binding, device, interrupt, math, phases, view};

/// Running DAGs with sends and receives ([`distributed`]) over MPI or threads: partitioning,
/// verification across ranks, [`DistributedProgram`](pytato_distributed::DistributedProgram)
/// (the `distributed` feature; `mpi` adds `MpiCommunicator`).
#[cfg(feature = "distributed")]
pub use pytato_distributed as run_distributed;

/// Transformations of array DAGs: the Mapper family, CSE, DCE, tag unification, lowering,
/// materialization, einsum rewrites, analysis and drawing (the `pytato-transform` crate).
pub use pytato_transform as transform;

// Link the backends the features ask for: registration happens through `inventory`, which only
// sees crates that are linked.
/// The Cranelift JIT backend, for its settings (`Cranelift::new().with_threads(n)`) and its cache
/// counters; feature `cranelift`.
#[cfg(feature = "cranelift")]
pub use pytato_backend_cranelift as cranelift;
#[cfg(feature = "interp")]
use pytato_backend_interp as _;
/// The wgpu backend, for its adapter and capabilities (`Wgpu::new()?.adapter()`) and its WGSL
/// (`Wgpu::wgsl`); feature `wgpu`.
#[cfg(feature = "wgpu")]
pub use pytato_backend_wgpu as wgpu;

// The README's example is compiled and run as a doc test, so that it stays true.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
