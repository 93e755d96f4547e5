//! The kernel IR computes what the DAG computes: every conformance case is turned into a kernel
//! program, whose kernels are then executed one by one with the reference interpreter (each
//! kernel as an index lambda over the buffers computed so far), and compared with numpy.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use pytato_backend_interp::Interpreter;
use pytato_conformance::{build_outputs, load_cases, run_inputs, tolerance::compare};
use pytato_core::expr::Expr;
use pytato_core::{Array, ArrayData, ReductionDescriptor, Result, Scalar};
use pytato_runtime::backend::{Backend, NamedData, Outputs};
use pytato_runtime::binding::Signature;
use pytato_transform::kernel::{BufferKind, KernelOptions, KernelProgram, build_kernel_program};

/// Runs `program` kernel by kernel on the interpreter.
fn execute(program: &KernelProgram, inputs: &NamedData, sizes: &BTreeMap<String, i64>) -> Result<NamedData> {
    let mut values: HashMap<Arc<str>, Arc<ArrayData>> = HashMap::new();
    for b in &program.buffers {
        match &b.kind {
            BufferKind::Input => {
                if let Some(v) = inputs.get(&*b.name) {
                    values.insert(b.name.clone(), Arc::new(v.clone()));
                }
            }
            BufferKind::Data(d) => {
                values.insert(b.name.clone(), d.to_host()?);
            }
            _ => {}
        }
    }
    for kernel in &program.kernels {
        let out = &program.buffers[kernel.output.0];
        // Rename buffer and size-parameter reads to binding names the interpreter accepts.
        let mut bindings: BTreeMap<Arc<str>, Array> = BTreeMap::new();
        let mut renamed: HashMap<Arc<str>, Arc<str>> = HashMap::new();
        let mut rename = |name: &Arc<str>| -> Option<Arc<str>> {
            if let Some(r) = renamed.get(name) {
                return Some(r.clone());
            }
            let array = if let Some(v) = values.get(name) {
                Array::new_data_wrapper(v.clone(), None).ok()?
            } else if program.size_params.iter().any(|p| **p == **name) {
                Array::new_size_param(name).ok()?
            } else {
                return None;
            };
            let r: Arc<str> = format!("_in{}", bindings.len()).into();
            bindings.insert(r.clone(), array);
            renamed.insert(name.clone(), r.clone());
            Some(r)
        };
        let mut reductions = BTreeMap::new();
        let expr = kernel.expr.rewrite(&mut |e| match e {
            Expr::Var(n) => rename(n).map(Expr::Var),
            Expr::Subscript(n, idx) => rename(n).map(|r| Expr::Subscript(r, idx.clone())),
            Expr::Reduce(r) => {
                for b in &r.inames {
                    reductions.insert(b.iname.clone(), ReductionDescriptor::default());
                }
                None
            }
            _ => None,
        });
        let lambda = Array::new_index_lambda(expr, out.shape.clone(), bindings, reductions)?;
        let compiled = Interpreter.compile(&Outputs::from(&lambda))?;
        let size_inputs: NamedData = compiled
            .input_names()
            .into_iter()
            .map(|p| {
                let v = sizes[&p];
                (p, ArrayData::from_scalar(Scalar::I64(v)))
            })
            .collect();
        let mut result = compiled.run(&size_inputs)?;
        values.insert(out.name.clone(), Arc::new(result.remove("_pt_out").expect("one output")));
    }
    Ok(program.outputs.iter().map(|(name, b)| (name.clone(), (*values[&program.buffers[b.0].name]).clone())).collect())
}

fn check_all(options: KernelOptions) {
    let mut failures = Vec::new();
    let cases: Vec<_> = load_cases().into_iter().filter(|c| c.error.is_none()).collect();
    for case in &cases {
        // Calls are inlined before kernels are built, as backends do.
        let outputs = pytato_core::function::inline_calls(&build_outputs(case).expect("cases build")).unwrap();
        if pytato_runtime::phases::has_host_steps(&outputs) {
            // Run in phases, a kernel program each (`tests/counts.rs`, the conformance suite).
            continue;
        }
        let inputs = run_inputs(case);
        let sizes = Signature::new(&outputs)
            .and_then(|s| s.bind(&pytato_runtime::backend::views(&inputs)).map(|b| b.sizes.clone()))
            .expect("valid inputs");
        let result = build_kernel_program(&outputs, options).and_then(|p| execute(&p, &inputs, &sizes));
        match result {
            Err(e) => failures.push(format!("{}: {e}", case.name)),
            Ok(got) => {
                for (name, expected) in &case.expected {
                    if let Err(why) = compare(&got[name], expected) {
                        failures.push(format!("{} output {name}: {why}", case.name));
                    }
                }
            }
        }
    }
    assert!(cases.len() >= 300);
    assert!(failures.is_empty(), "{} of {} cases fail:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

#[test]
fn kernel_programs_compute_what_numpy_computes() {
    check_all(KernelOptions::default());
}

#[test]
fn kernel_programs_storing_shared_or_every_node_still_do() {
    use pytato_transform::kernel::Materialization;
    for materialization in [Materialization::StoreShared, Materialization::StoreAll] {
        check_all(KernelOptions { materialization, ..KernelOptions::default() });
    }
}

#[test]
fn kernel_programs_with_tiny_inline_limits_still_do() {
    // Limits this small store almost every node: the other extreme of fusion.
    check_all(KernelOptions { max_inline_depth: 2, max_inline_size: 4, ..KernelOptions::default() });
}
