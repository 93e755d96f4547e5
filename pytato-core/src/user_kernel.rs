//! User kernels: loops the user writes in the kernel IR's expression language, called from a DAG
//! (upstream pytato's `call_loopy`).
//!
//! Some work has no numpy form, or a clumsy one: element-local operators, stencils with
//! irregular index arithmetic, small loops with early reductions. A [`UserKernel`] states it
//! directly, as the compiled backends' kernel IR does: named, typed, shaped inputs, then
//! statements `target[_0, …] = expr` in order, each over the target's shape, reading the inputs
//! and the targets of earlier statements through [`Expr::Subscript`] (`_k` are the target's
//! indices, `_rN` reduction indices bound by an [`Expr::Reduce`], a plain name that is neither an
//! input nor a target is a size parameter). Some targets are the kernel's outputs.
//!
//! A kernel is a [`Function`] (tagged [`KernelName`]) whose body has one stored node per statement
//! ([`ImplStored`], so each statement is one loop nest of the compiled program, named
//! `<kernel>_<target>` in dumps), and calling it gives [`NodeKind::CallResult`](crate::NodeKind)
//! nodes: every backend runs it, the interpreter included, inlined or outlined like any call, and
//! every pass sees it as a call. Equal kernels are one function.
//!
//! ```
//! use pytato_core::user_kernel::{Statement, UserKernel};
//! use pytato_core::{DType, Dim, Expr, Shape};
//! use pytato_frontend as pt;
//! use pytato_core::expr::{BinaryOp, ReduceOp, ReductionBounds};
//! // y[i] = sum_j a[i, j] * x[j] + b[(i + 1) % n]: a matrix-vector product with a shifted bias.
//! let n = Dim::param("n");
//! let row = Expr::binary(
//!     Expr::subscript("a", vec![Expr::iname(0), Expr::var("_r0")]),
//!     BinaryOp::Mul,
//!     Expr::subscript("x", vec![Expr::var("_r0")]),
//! );
//! let sum = Expr::reduce(ReduceOp::Sum, vec![ReductionBounds { iname: "_r0".into(), lower: Dim::new(0), upper: n.clone() }], row);
//! let shifted = Expr::binary(Expr::binary(Expr::iname(0), BinaryOp::Add, Expr::i64(1)), BinaryOp::Rem, Expr::var("n"));
//! let y = Expr::binary(sum, BinaryOp::Add, Expr::subscript("b", vec![shifted]));
//! let kernel = UserKernel::new(
//!     "matvec",
//!     vec![
//!         ("a", Shape::from(vec![n.clone(), n.clone()]), DType::F64),
//!         ("x", Shape::from(vec![n.clone()]), DType::F64),
//!         ("b", Shape::from(vec![n.clone()]), DType::F64),
//!     ],
//!     vec![Statement::new("y", vec![n.clone()], y)],
//!     &["y"],
//! )?;
//! let a = pt::placeholder("A", [Dim::param("n"), Dim::param("n")], DType::F64)?;
//! let x = pt::placeholder("v", [Dim::param("n")], DType::F64)?;
//! let results = kernel.call(&[("a", &a), ("x", &x), ("b", &x)])?;
//! assert_eq!(results["y"].shape().to_string(), "(n,)");
//! # Ok::<(), pytato_core::Error>(())
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::array::{Array, ReductionDescriptor};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::expr::Expr;
use crate::function::Function;
use crate::names::{self, Reserved, classify};
use crate::shape::Shape;
use crate::tags::{ImplStored, PrefixNamed, Tag, TagSet};

/// The tag of a [`UserKernel`]'s function: the kernel's name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KernelName(pub String);
impl Tag for KernelName {}

/// One statement of a [`UserKernel`]: `target[_0, …, _{d-1}] = expr` for every index of `shape`
/// (`d` axes).
#[derive(Clone, Debug)]
pub struct Statement {
    /// The buffer written; later statements and the outputs refer to it by this name.
    pub target: String,
    /// The shape of `target`.
    pub shape: Shape,
    /// The value of each element.
    pub expr: Expr,
}

impl Statement {
    /// `target[...] = expr` over `shape`.
    pub fn new(target: &str, shape: impl Into<Shape>, expr: Expr) -> Statement {
        Statement { target: target.to_string(), shape: shape.into(), expr }
    }
}

/// A kernel written in the kernel IR's expression language; see the [module docs](self).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct UserKernel {
    name: String,
    function: Function,
}

impl UserKernel {
    /// A kernel `name` of `inputs` (name, shape, dtype), running `statements` in order and
    /// returning the targets named in `outputs`. Every name an expression reads must be an input,
    /// an earlier target, an index (`_k`, `_rN` bound by a reduction) or a size parameter; the
    /// expressions must type-check (operands of one dtype: cast where needed). Errors name the
    /// kernel and the statement.
    pub fn new(
        name: &str,
        inputs: Vec<(&str, Shape, DType)>,
        statements: Vec<Statement>,
        outputs: &[&str],
    ) -> Result<UserKernel> {
        names::check_array_name("UserKernel", name)?;
        let op = format!("UserKernel {name}");
        let mut scope: BTreeMap<String, Array> = BTreeMap::new();
        let mut parameters = Vec::with_capacity(inputs.len());
        for (input, shape, dtype) in inputs {
            let placeholder = Array::new_placeholder(Some(input), shape, dtype)?;
            if scope.insert(input.to_string(), placeholder.clone()).is_some() {
                return Err(Error::invalid(op, format!("two inputs are named {input:?}")));
            }
            parameters.push(placeholder);
        }
        for statement in statements {
            let target = &statement.target;
            names::check_binding_name(target)?;
            if scope.contains_key(target) {
                return Err(Error::invalid(
                    &op,
                    format!("statement {target:?} writes a name already taken by an input or an earlier statement"),
                ));
            }
            let mut bindings: BTreeMap<Arc<str>, Array> = BTreeMap::new();
            for read in statement.expr.binding_names() {
                let array = match scope.get(&*read) {
                    Some(array) => array.clone(),
                    None if is_subscripted(&statement.expr, &read) => {
                        let known: Vec<&str> = scope.keys().map(String::as_str).collect();
                        return Err(Error::invalid(
                            &op,
                            format!(
                                "statement {target:?} reads {read:?}, which is neither an input nor an earlier statement (known: {})",
                                known.join(", ")
                            ),
                        ));
                    }
                    // A plain name that is not a buffer: a size parameter.
                    None => Array::new_size_param(&read)?,
                };
                bindings.insert(read, array);
            }
            let mut reductions: BTreeSet<Arc<str>> = BTreeSet::new();
            statement.expr.walk(&mut |e| {
                if let Expr::Reduce(r) = e {
                    reductions.extend(r.inames.iter().map(|b| b.iname.clone()));
                }
            });
            let descriptors = reductions.into_iter().map(|i| (i, ReductionDescriptor::default())).collect();
            let node = Array::new_index_lambda(statement.expr.clone(), statement.shape.clone(), bindings, descriptors)
                .map_err(|e| Error::invalid(&op, format!("statement {target:?}: {e}")))?
                .tagged(ImplStored)?
                .tagged(PrefixNamed(format!("{name}_{target}")))?;
            scope.insert(target.clone(), node);
        }
        let mut returns = Vec::with_capacity(outputs.len());
        for &output in outputs {
            match scope.get(output) {
                Some(array) if !matches!(array.kind(), crate::NodeKind::Placeholder { .. }) => {
                    returns.push((output, array.clone()))
                }
                _ => {
                    return Err(Error::invalid(&op, format!("output {output:?} is not the target of a statement")));
                }
            }
        }
        let function = Function::new(parameters, returns, TagSet::new().with(KernelName(name.to_string()))?)?;
        Ok(UserKernel { name: name.to_string(), function })
    }

    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The function the kernel is: what calls refer to.
    pub fn function(&self) -> &Function {
        &self.function
    }

    /// Runs the kernel on `arguments` (one per input, by name, of the input's dtype and shape):
    /// each output, by name, as a [`NodeKind::CallResult`](crate::NodeKind) node.
    pub fn call(&self, arguments: &[(&str, &Array)]) -> Result<BTreeMap<String, Array>> {
        self.function.call(arguments)
    }
}

/// Whether `expr` reads `name` through a subscript (a buffer) rather than as a plain name.
fn is_subscripted(expr: &Expr, name: &str) -> bool {
    let mut found = false;
    expr.walk(&mut |e| {
        found |= matches!(e, Expr::Subscript(n, _) if &**n == name)
            || matches!(e, Expr::Var(n) if &**n == name && classify(n).is_some_and(|r| matches!(r, Reserved::Binding(_))));
    });
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Dim;
    use crate::expr::BinaryOp;

    fn double(source: &str) -> Expr {
        Expr::binary(Expr::subscript(source, vec![Expr::iname(0)]), BinaryOp::Mul, Expr::f64(2.0))
    }

    #[test]
    fn statements_read_inputs_and_earlier_targets_and_bad_ones_are_typed_errors() {
        let shape = Shape::from(vec![Dim::new(3)]);
        let input = || vec![("x", shape.clone(), DType::F64)];
        let build = || {
            UserKernel::new(
                "k",
                input(),
                vec![Statement::new("t", shape.clone(), double("x")), Statement::new("y", shape.clone(), double("t"))],
                &["y"],
            )
            .unwrap()
        };
        let ok = build();
        assert_eq!(ok.function().returns().len(), 1);
        // The same kernel built again is the same function.
        assert_eq!(ok, build());
        let message = |r: Result<UserKernel>| match r {
            Err(Error::InvalidArgument { op, message }) => format!("{op}: {message}"),
            other => panic!("{other:?}"),
        };
        // Reading a later target, an unknown buffer, writing an input, an unknown output.
        let later = UserKernel::new(
            "k",
            input(),
            vec![Statement::new("t", shape.clone(), double("y")), Statement::new("y", shape.clone(), double("x"))],
            &["y"],
        );
        assert!(message(later).contains("statement \"t\" reads \"y\""));
        let overwrite = UserKernel::new("k", input(), vec![Statement::new("x", shape.clone(), double("x"))], &["x"]);
        assert!(message(overwrite).contains("already taken"));
        let unknown = UserKernel::new("k", input(), vec![Statement::new("y", shape.clone(), double("x"))], &["z"]);
        assert!(message(unknown).contains("output \"z\""));
        let input_out = UserKernel::new("k", input(), vec![Statement::new("y", shape.clone(), double("x"))], &["x"]);
        assert!(message(input_out).contains("output \"x\""));
        // A type error names the statement: float64 * int64.
        let mixed = Expr::binary(Expr::subscript("x", vec![Expr::iname(0)]), BinaryOp::Mul, Expr::i64(2));
        let typed = UserKernel::new("k", input(), vec![Statement::new("y", shape.clone(), mixed)], &["y"]);
        assert!(message(typed).contains("statement \"y\""));
        // Too many indices for the target's axes.
        let deep = Expr::subscript("x", vec![Expr::iname(1)]);
        assert!(UserKernel::new("k", input(), vec![Statement::new("y", shape, deep)], &["y"]).is_err());
    }
}
