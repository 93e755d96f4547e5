//! The differential fuzzer: random programs, run on every backend and compared with the
//! interpreter, and the interpreter compared with numpy.
//!
//! A [`FuzzCase`] is a pure function of its seed ([`generate`]): inputs of every dtype and rank 0
//! to 3 (some with symbolic lengths, some wrapped data), statements in the conformance suite's
//! numpy language (so numpy can run the same program), outputs often named like inputs, and two
//! runs of the one compiled program with other sizes and data. [`check`] judges a case (the
//! DAG passes are judged as a backend too: [`PassesThenInterp`]; the DAG built twice must be
//! structurally equal to itself);
//! [`shrink`] reduces a failing one. The `fuzz` binary (`cargo xtask fuzz`) runs cases in worker
//! processes, so that a crash or a hang is caught, recorded and shrunk rather than ending the run.

mod case;
mod check;
mod generate;
mod oracle;
mod passes;
mod rng;
mod shrink;

pub use case::{FuzzCase, InputSpec, Len};
pub use check::{Verdict, check};
pub use generate::generate;
pub use oracle::{NumpyAnswer, Oracle};
pub use passes::{PassesThenInterp, run_passes};
pub use rng::Rng;
pub use shrink::shrink;
