//! The reference interpreter: evaluates a DAG node by node on `ndarray`, with numpy's semantics.
//!
//! It is the oracle of last resort, so it stays simple: every node kind is evaluated directly from
//! its definition (no lowering, no fusion), one element at a time through [`pytato_core::Scalar`].
//! It is slow by design; the compiled backends are for speed.
//!
//! Semantics worth knowing (they are numpy's): integer division and remainder by zero give 0,
//! integer overflow wraps, NaN propagates through `maximum`/`minimum` and `max`/`min` reductions,
//! empty and 0-d arrays work, and a value outside its axis in an index array is
//! [`Error::IndexOutOfBounds`].
//!
//! ```
//! use pytato_core::{DType, ArrayData};
//! use pytato_runtime::{backend::{Backend, NamedData}};
//! use pytato_frontend as pt;
//! use pytato_backend_interp::Interpreter;
//! let x = pt::placeholder("x", [3], DType::I64).unwrap();
//! let y = pt::floor_divide(&x, 2).unwrap();
//! let program = Interpreter.compile(&(&y).into()).unwrap();
//! let inputs = NamedData::from([("x".to_string(), ArrayData::from(ndarray::arr1(&[-3i64, 4, 5]).into_dyn()))]);
//! let out = program.run(&inputs).unwrap();
//! assert_eq!(out["_pt_out"].as_array::<i64>().unwrap().as_slice().unwrap(), &[-2, 2, 2]);
//! ```

mod index;
mod lambda;
mod nodes;
mod scalar_ops;

use pytato_core::{Error, Result};
use pytato_runtime::backend::{Backend, BackendRegistration, NamedData, NamedViews, NamedViewsMut, Outputs, Program};
use pytato_runtime::binding::{Bound, Signature};

/// The reference interpreter backend, registered as `"interp"`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Interpreter;

inventory::submit! {
    BackendRegistration {
        name: "interp",
        description: "reference interpreter on ndarray (simple, slow, every node kind)",
        priority: 10,
        constructor: || Ok(Box::new(Interpreter)),
    }
}

impl Backend for Interpreter {
    fn name(&self) -> &str {
        "interp"
    }

    /// The interpreter runs each call as a call (its function's body evaluated on the arguments),
    /// inlining only functions tagged [`pytato_core::function::InlineCall`].
    fn inline_rule(&self) -> pytato_core::function::InlineRule {
        pytato_core::function::InlineRule::Never
    }

    fn compile(&self, outputs: &Outputs) -> Result<Box<dyn Program>> {
        if let Some(program) = pytato_runtime::backend::compile_calls_and_phases(self, outputs) {
            return program;
        }
        Ok(Box::new(InterpProgram { signature: Signature::new(outputs)? }))
    }
}

struct InterpProgram {
    signature: Signature,
}

impl Program for InterpProgram {
    fn input_names(&self) -> Vec<String> {
        self.signature.input_names()
    }

    fn output_names(&self) -> Vec<String> {
        self.signature.outputs().iter().map(|(n, _)| n.clone()).collect()
    }

    fn datashape(&self) -> Option<pytato_datashape::Type> {
        Some(self.signature.datashape_with_inputs(&self.signature.input_names()))
    }

    fn run_views(&self, inputs: &NamedViews<'_>) -> Result<NamedData> {
        let bound = self.signature.bind(inputs)?;
        self.evaluate(&bound)
    }

    fn run_into(&self, inputs: &NamedViews<'_>, outputs: &mut NamedViewsMut<'_>) -> Result<()> {
        let bound = self.signature.bind(inputs)?;
        self.signature.check_outputs(&bound, outputs)?;
        for (name, value) in self.evaluate(&bound)? {
            let target = outputs.get_mut(name.as_str()).expect("checked by check_outputs");
            target.assign(&value.view()).ok_or_else(|| Error::Internal {
                backend: "interp".into(),
                message: format!("output {name} does not fit the checked array"),
            })?;
        }
        Ok(())
    }
}

impl InterpProgram {
    /// Every node the outputs need, in order; the outputs by name.
    fn evaluate(&self, bound: &Bound<'_>) -> Result<NamedData> {
        let mut values = nodes::Values::new();
        for node in self.signature.nodes() {
            pytato_runtime::interrupt::check("interp run")?;
            let v = nodes::evaluate(node, &values, bound)?;
            values.insert(node.id(), v);
        }
        self.signature
            .outputs()
            .iter()
            .map(|(name, a)| {
                let v = values.get(&a.id()).ok_or_else(|| Error::Internal {
                    backend: "interp".into(),
                    message: format!("output {name} was not evaluated"),
                })?;
                Ok((name.clone(), v.clone().into_data()?))
            })
            .collect()
    }
}
