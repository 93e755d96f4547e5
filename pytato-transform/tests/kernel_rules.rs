//! What the kernel builder guarantees whatever the DAG: bounded work (a reduction is never
//! recomputed for every element of its consumer), index arrays checked in full, unique buffer
//! names. Work is counted in the kernel program (operations per element times elements), never
//! timed.

use std::collections::BTreeMap;

use pytato_core::expr::{Expr, Func};
use pytato_core::{DType, DictOfNamedArrays, Dim, Error, Result, s};
use pytato_frontend as pt;
use pytato_runtime::backend::Outputs;
use pytato_transform::kernel::{KernelOptions, KernelProgram, build_kernel_program};

/// Total operations of `program` with the size parameters set to `sizes`.
fn total_work(program: &KernelProgram, sizes: &[(&str, i64)]) -> u128 {
    let sizes: BTreeMap<&str, i64> = sizes.iter().copied().collect();
    let eval = |d: &Dim| -> Result<i64> {
        d.eval(|p| sizes.get(p).copied())
            .map_err(|e| Error::Internal { backend: "test".into(), message: format!("{e:?}") })
    };
    program
        .kernels
        .iter()
        .map(|k| {
            let buffer = &program.buffers[k.output.0];
            let elements: i64 = buffer.shape.dims().iter().map(|d| eval(d).unwrap()).product();
            elements as u128 * k.work(&eval).unwrap().operations
        })
        .sum()
}

fn program(outputs: impl Into<Outputs>) -> KernelProgram {
    build_kernel_program(&outputs.into(), KernelOptions::default()).unwrap()
}

/// Work at size `n` and `2n` (for every size parameter): linear work doubles.
fn growth(program: &KernelProgram, params: &[&str], n: i64) -> f64 {
    let at = |v: i64| total_work(program, &params.iter().map(|p| (*p, v)).collect::<Vec<_>>()) as f64;
    at(2 * n) / at(n)
}

#[test]
fn a_reduction_read_by_every_element_is_computed_once() {
    // x / x.sum(): the sum is read by all n elements; inlined it would cost n² operations.
    let x = pt::placeholder("x", [Dim::param("n")], DType::F64).unwrap();
    let normalized = &x / &pt::sum(&x, None).unwrap();
    let p = program(&normalized);
    assert_eq!(p.kernels.len(), 2, "the sum is a kernel of its own:\n{p}");
    let g = growth(&p, &["n"], 1000);
    assert!(g < 2.01, "work grows by {g} when n doubles (linear: 2)\n{p}");
}

#[test]
fn a_reduction_read_inside_a_reduction_is_computed_once() {
    // m @ x.sum(1): every product term reads the row sums; inlined that is cubic.
    let m = pt::placeholder("m", [Dim::param("n"), Dim::param("n")], DType::F64).unwrap();
    let x = pt::placeholder("x", [Dim::param("n"), Dim::param("n")], DType::F64).unwrap();
    let mv = pt::matmul(&m, &pt::sum(&x, pt::ReduceOptions::axes(1)).unwrap()).unwrap();
    let p = program(&mv);
    let g = growth(&p, &["n"], 200);
    assert!(g < 4.05, "work grows by {g} when n doubles (quadratic: 4)\n{p}");
}

#[test]
fn a_reduction_read_through_a_broadcast_chain_is_computed_once() {
    // The row means are read at their own index by `mean + 1`, which every column then reads.
    let x = pt::placeholder("x", [Dim::param("n"), Dim::param("n")], DType::F64).unwrap();
    let shifted = pt::mean(&x, pt::ReduceOptions::axes(1).keepdims(true)).unwrap() + 1.0;
    let centered = &x - &shifted;
    let p = program(&centered);
    let g = growth(&p, &["n"], 200);
    assert!(g < 4.05, "work grows by {g} when n doubles (quadratic output: 4)\n{p}");
}

#[test]
fn a_reduction_read_once_per_element_is_still_fused() {
    let x = pt::placeholder("x", [Dim::param("n"), 8.into()], DType::F64).unwrap();
    let y = pt::sum(&x, pt::ReduceOptions::axes(1)).unwrap() * 2.0 + 1.0;
    assert_eq!(program(&y).kernels.len(), 1, "one identity read: fused");
}

#[test]
fn index_arrays_are_checked_by_a_kernel_of_their_own() {
    // full(n, 7)[i] reads no element of `full`: the index check must not disappear with it.
    let i = pt::placeholder("i", [2], DType::I64).unwrap();
    let g = pt::full([Dim::param("n")], 7.0, None).unwrap().index(s![&i]).unwrap();
    let p = program(&g);
    let checks = p
        .kernels
        .iter()
        .filter(|k| {
            let mut found = false;
            k.expr.walk(&mut |e| found |= matches!(e, Expr::Call(Func::NormalizeIndex, _)));
            found
        })
        .count();
    assert_eq!(checks, 1, "{p}");
}

#[test]
fn outputs_named_like_inputs_get_buffers_of_their_own() {
    let u = pt::placeholder("u", [3], DType::F64).unwrap();
    let outputs = DictOfNamedArrays::new([("u", &u * 2.0), ("v", u.clone())]).unwrap();
    let p = program(Outputs::Named(outputs));
    p.check().unwrap();
    let names: Vec<&str> = p.buffers.iter().map(|b| &*b.name).collect();
    assert_eq!(names.iter().filter(|n| **n == "u").count(), 1, "{p}");
    let (_, out) = p.outputs.iter().find(|(n, _)| n == "u").unwrap();
    assert_ne!(&*p.buffers[out.0].name, "u", "{p}");
}

#[test]
fn naming_tags_name_buffers_and_kernels() {
    use pytato_core::tags::{ImplStored, Named, PrefixNamed};
    let x = pt::placeholder("x", [4], DType::F64).unwrap();
    let flux = pt::exp(&x).unwrap().tagged(PrefixNamed("flux".into())).unwrap().tagged(ImplStored).unwrap();
    let other = pt::sin(&x).unwrap().tagged(PrefixNamed("flux".into())).unwrap().tagged(ImplStored).unwrap();
    let result = (&(&flux * 2.0) + &other).tagged(Named("result".into())).unwrap();
    let outputs = Outputs::Named(DictOfNamedArrays::new([("out", result)]).unwrap());
    let program = build_kernel_program(&outputs, KernelOptions::default()).unwrap();
    let mut names: Vec<&str> = program.buffers.iter().map(|b| &*b.name).collect();
    names.sort();
    assert_eq!(names, ["flux_0", "flux_1", "result", "x"]);
    let shown = program.to_string();
    assert!(shown.contains("flux_0") && shown.contains("result"), "{shown}");
    let temp = program.buffers.iter().position(|b| &*b.name == "flux_1").unwrap();
    assert_eq!(program.describe_buffer(pytato_transform::kernel::BufferId(temp)), "temporary flux_1");

    // A name taken by an input, a reserved name, and a name that is no identifier are errors.
    let named = |name: &str| {
        let y = (&x * 3.0).tagged(Named(name.into())).unwrap();
        build_kernel_program(&(&y).into(), KernelOptions::default())
    };
    assert!(matches!(named("x"), Err(Error::DuplicateName { .. })));
    assert!(matches!(named("_3"), Err(Error::ReservedName { .. })));
    // A tag may take a name of the library's namespace: generated buffer names go around it.
    let tagged = (&x * 3.0).tagged(Named("_pt_out0".into())).unwrap();
    let plain = pt::sin(&x).unwrap();
    let outputs = Outputs::Named(DictOfNamedArrays::new([("a", plain), ("b", tagged)]).unwrap());
    let program = build_kernel_program(&outputs, KernelOptions::default()).unwrap();
    let names: std::collections::BTreeSet<&str> = program.buffers.iter().map(|b| &*b.name).collect();
    assert_eq!(names.len(), program.buffers.len(), "buffer names are unique: {names:?}");
    assert!(names.contains("_pt_out0"), "{names:?}");
    assert!(matches!(named("not a name"), Err(Error::InvalidName { .. })));
    assert!(named("fine").is_ok());
}

/// Fused stencil steps read each step three times (`roll(u, 1)`, `u`, `roll(u, -1)`): inlined into
/// each other they would compute the first step `3^k` times per element. A node read more than
/// once is stored once its inlined expression passes `InlineLimit::MAX_REPEATED_SIZE`, so the
/// work per element and step stays that of a few steps, however many steps the DAG has.
#[test]
fn fused_stencil_steps_are_not_recomputed_per_element() {
    let per_element_and_step = |steps: usize| {
        let mut u = pt::placeholder("u", [1000], DType::F64).unwrap();
        for _ in 0..steps {
            let laplacian = pt::roll(&u, 1, Some(0)).unwrap() - 2.0 * &u + pt::roll(&u, -1, Some(0)).unwrap();
            u = &u + 0.25 * &laplacian;
        }
        total_work(&program(&u), &[]) as f64 / (1000.0 * steps as f64)
    };
    let one = per_element_and_step(1);
    for steps in [2, 5, 10, 40] {
        let work = per_element_and_step(steps);
        assert!(work <= 4.0 * one, "{steps} steps: {work} operations per element and step, one step alone {one}");
    }
}

/// `argmax` compares values with their maximum, found by another reduction: the values are
/// computed once and stored, so both reductions read the same bits (a GPU driver may compile two
/// inlined copies of `sin(x)` differently, and then no element equals the maximum).
#[test]
fn an_arg_extremum_reads_its_values_from_one_computation() {
    let x = pt::placeholder("x", [Dim::param("n"), Dim::new(3)], DType::F64).unwrap();
    for (what, e) in [
        ("argmax axis 0", pt::argmax(&pt::sin(&x).unwrap(), Some(0), false).unwrap()),
        ("argmin flattened", pt::argmin(&pt::sin(&x).unwrap(), None, true).unwrap()),
        ("complex max", pt::max(&pt::exp(&pt::astype(&x, DType::C128).unwrap()).unwrap(), 1).unwrap()),
    ] {
        let program = build_kernel_program(&(&e).into(), KernelOptions::default()).unwrap();
        let mut computed = 0;
        for k in &program.kernels {
            k.expr.walk(&mut |e| computed += matches!(e, Expr::Call(Func::Sin | Func::Exp, _)) as usize);
        }
        assert_eq!(computed, 1, "{what}: the values are computed in {computed} places\n{program}");
    }
    // An input (or a rearrangement of one) is read where it lies, not copied first.
    let program =
        build_kernel_program(&(&pt::argmax(&x, None, false).unwrap()).into(), KernelOptions::default()).unwrap();
    assert!(program.kernels.iter().all(|k| !matches!(k.expr, Expr::Subscript(..))), "{program}");
}

#[test]
fn mask_positions_index_without_a_normalizing_copy() {
    // `x[mask]` reads `x` through the positions of the mask's `true` elements, which a host step
    // computes and a later phase receives as a placeholder tagged with the mask's shape: its
    // values are in range by construction, so no kernel copies them through `normalize_index`.
    use pytato_core::tags::MaskPositions;
    let n = Dim::param("n");
    let x = pt::placeholder("x", [n.clone()], DType::F64).unwrap();
    let normalizations = |p: &KernelProgram| {
        p.kernels
            .iter()
            .filter(|k| {
                let mut found = false;
                k.expr.walk(&mut |e| found |= matches!(e, Expr::Call(Func::NormalizeIndex, _)));
                found
            })
            .count()
    };
    let count = Dim::param("count");
    let positions = |mask_len: Dim| {
        let p = pt::placeholder("_pt_in_step0", [1.into(), count.clone()], DType::I64).unwrap();
        p.tagged(MaskPositions(pytato_core::Shape::from(vec![mask_len]))).unwrap()
    };
    let gathered = |p: &pytato_core::Array| {
        pt::sum(&x.index([pt::Idx::from(&p.index([pt::Idx::Int(0), pt::Idx::full()]).unwrap())]).unwrap(), None)
            .unwrap()
    };
    let p = program(gathered(&positions(n.clone())));
    assert_eq!(normalizations(&p), 0, "{p}");
    assert_eq!(p.kernels.len(), 1, "the gather fuses into the sum: {p}");
    // Positions of a mask of another length, or an index array without the tag, are checked.
    assert_eq!(normalizations(&program(gathered(&positions(Dim::param("m"))))), 1);
    let untagged = pt::placeholder("_pt_in_step0", [1.into(), count], DType::I64).unwrap();
    assert_eq!(normalizations(&program(gathered(&untagged))), 1);
}

#[test]
fn a_chain_of_reshapes_reads_its_input_at_the_output_index() {
    // Each reshape of a reshape composes an unravelled position with its flattening: without
    // simplifying `a // c * c + a % c` the index expression doubled at every step (10,000
    // reshapes took 104 s to compile on Cranelift, now 0.45 s).
    let x = pt::placeholder("x", [Dim::param("n"), Dim::new(12)], DType::F64).unwrap();
    let mut e = x.clone();
    for k in 0..2_000 {
        let shape: Vec<Dim> = if k % 2 == 0 {
            vec![Dim::param("n"), Dim::new(3), Dim::new(4)]
        } else {
            vec![Dim::param("n"), Dim::new(12)]
        };
        e = pt::reshape(&e, shape, pytato_core::Order::C).unwrap();
    }
    let p = program(&e);
    for kernel in &p.kernels {
        let mut nodes = 0;
        kernel.expr.walk(&mut |_| nodes += 1);
        assert!(nodes <= 12, "{nodes} nodes in a kernel:\n{p}");
    }
    let g = growth(&p, &["n"], 1000);
    assert!(g < 2.01, "work grows by {g} when n doubles (linear: 2)\n{p}");
}
