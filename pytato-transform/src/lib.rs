//! Transformations of array DAGs.
//!
//! - [`mapper`]: the Mapper family users write their own passes with (bottom-up, memoized,
//!   iterative), and gatherers built on it.
//! - [`context`]: mappers that pass a context down, walks that skip or stop, memo caches shared
//!   between runs.
//! - [`cse`]: common-subexpression elimination.
//! - [`dce`]: dead-code elimination of the `zero(…)` links.
//! - [`lower`]: every node kind to an equivalent `IndexLambda`.
//! - [`data_inputs`]: data wrappers as program inputs (programs that do not depend on the data).
//! - [`einsum`]: removing broadcast axes from einsums, and the distributive law.
//! - [`unify_tags`]: axis tags spread along the axes the computation identifies.
//! - [`materialize`]: which nodes are stored, by a pluggable policy (default: MPMS).
//! - [`kernel`]: the kernel IR compiled backends translate (fusion of everything not stored).
//! - [`contraction`]: kernels that are (batched) matrix products, for backends with a GEMM.
//! - [`split_reductions`]: whole-array reductions in parts that threads compute side by side,
//!   with the bits of one loop.
//! - [`analysis`]: node counts and multiplicities, users (direct and transitive), depth, tag
//!   counts, einsum similarity.
//! - [`draw`]: DOT, SVG (pure Rust) and HTML drawings.
//!
//! Every pass takes and returns [`Outputs`](pytato_runtime::backend::Outputs) and leaves its input
//! untouched (DAGs are immutable); a pass that changes nothing returns the very same nodes.

pub mod analysis;
pub mod bounds;
pub mod context;
pub mod contraction;
pub mod cse;
pub mod data_inputs;
pub mod dce;
pub mod draw;
pub mod einsum;
pub mod kernel;
pub mod lower;
pub mod mapper;
pub mod materialize;
pub mod split_reductions;
pub mod unify_tags;
