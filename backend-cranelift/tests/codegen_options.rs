//! User control of code generation (`Cranelift::with_codegen`): inlining limits and a
//! transformation of each kernel program before translation, checked, and cached apart from
//! programs compiled under other options.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use ndarray::Array1;
use pytato_backend_cranelift::Cranelift;
use pytato_core::expr::{BinaryOp, Expr};
use pytato_core::{Array, ArrayData, DType, Error};
use pytato_frontend as pt;
use pytato_runtime::backend::{Backend, NamedData};
use pytato_transform::kernel::{CodegenOptions, KernelOptions, KernelTransform};

fn dag(salt: f64) -> Array {
    // A chain long enough that tiny inlining limits store intermediates.
    let x = pt::placeholder("x", [4], DType::F64).unwrap();
    let mut y = pt::sin(&x).unwrap();
    for k in 0..6 {
        y = pt::cos(&(&y + (k as f64 + salt))).unwrap();
    }
    y
}

fn data() -> NamedData {
    NamedData::from([("x".to_string(), ArrayData::from(Array1::from(vec![0.5, -1.0, 2.0, 3.5]).into_dyn()))])
}

fn values(backend: &Cranelift, y: &Array) -> pytato_core::Result<Vec<f64>> {
    let out = backend.compile(&y.into())?.run(&data())?;
    Ok(out["_pt_out"].to_scalars().iter().map(|s| s.to_f64()).collect())
}

/// A transformation that counts the kernels it sees and leaves them as they are.
fn counting() -> (KernelTransform, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let (calls, kernels) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (c, k) = (calls.clone(), kernels.clone());
    let t = KernelTransform::new(move |program| {
        c.fetch_add(1, Ordering::SeqCst);
        k.store(program.kernels.len(), Ordering::SeqCst);
        Ok(program)
    });
    (t, calls, kernels)
}

#[test]
fn the_transformation_sees_each_new_program_once_and_inlining_limits_store_more() {
    let y = dag(0.125);
    let plain = values(&Cranelift::new(), &y).unwrap();
    let (t, calls, kernels) = counting();
    let watched = Cranelift::new().with_codegen(CodegenOptions { transform: Some(t.clone()), ..Default::default() });
    assert_eq!(values(&watched, &y).unwrap(), plain);
    assert_eq!((calls.load(Ordering::SeqCst), kernels.load(Ordering::SeqCst)), (1, 1));
    // The same DAG and options again: the cached program, no second call.
    assert_eq!(values(&watched, &y).unwrap(), plain);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // Tiny inlining limits: other options, another program, intermediates stored.
    let tiny = KernelOptions { max_inline_depth: 2, max_inline_size: 4, ..KernelOptions::default() };
    let stored =
        Cranelift::new().with_codegen(CodegenOptions { kernel: tiny, transform: Some(t), ..Default::default() });
    assert_eq!(values(&stored, &y).unwrap(), plain);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert!(kernels.load(Ordering::SeqCst) > 1, "{} kernels", kernels.load(Ordering::SeqCst));
}

#[test]
fn a_transformation_may_change_the_code_and_must_keep_the_invariants() {
    let y = dag(0.25);
    let plain = values(&Cranelift::new(), &y).unwrap();
    // Doubling what the last kernel stores doubles the result.
    let double = KernelTransform::new(|mut program| {
        let last = program.kernels.last_mut().expect("one kernel");
        last.expr = last.expr.clone().binary(BinaryOp::Mul, Expr::f64(2.0));
        Ok(program)
    });
    let doubled =
        values(&Cranelift::new().with_codegen(CodegenOptions { transform: Some(double), ..Default::default() }), &y);
    assert_eq!(doubled.unwrap(), plain.iter().map(|v| v * 2.0).collect::<Vec<_>>());
    // Dropping the kernels leaves the output unwritten: refused when compiling.
    let broken = KernelTransform::new(|mut program| {
        program.kernels.clear();
        Ok(program)
    });
    let err =
        values(&Cranelift::new().with_codegen(CodegenOptions { transform: Some(broken), ..Default::default() }), &y)
            .unwrap_err();
    assert!(matches!(&err, Error::InvalidArgument { op, .. } if op == "kernel transform"), "{err}");
    // A transformation's own error comes back as it is.
    let refusing = KernelTransform::new(|_| Err(Error::invalid("my pass", "not today")));
    let err =
        values(&Cranelift::new().with_codegen(CodegenOptions { transform: Some(refusing), ..Default::default() }), &y)
            .unwrap_err();
    assert!(matches!(&err, Error::InvalidArgument { op, .. } if op == "my pass"), "{err}");
}

#[test]
fn storing_every_node_gives_a_kernel_per_operation_and_the_same_bits() {
    use pytato_transform::kernel::Materialization;
    let y = dag(0.375);
    let plain = values(&Cranelift::new(), &y).unwrap();
    let (t, _, kernels) = counting();
    let every = KernelOptions { materialization: Materialization::StoreAll, ..KernelOptions::default() };
    let stored =
        Cranelift::new().with_codegen(CodegenOptions { kernel: every, transform: Some(t), ..Default::default() });
    assert_eq!(values(&stored, &y).unwrap(), plain);
    // sin, then an addition and a cosine per step.
    assert_eq!(kernels.load(Ordering::SeqCst), 1 + 2 * 6);
}
