//! The DG flagship (`examples/dg`) on every linked backend, small: orders 1 to 4 on meshes of
//! 4², 8² and 16² squares (8² to 32² for order 1) to t = 0.05. The observed order on the finest pair must be within 0.25
//! of `p + 1`, the textbook rate of upwind DG for a smooth solution; the errors must be those of
//! the interpreter to round-off. The reference matrices are checked against exact properties.

#[path = "../../pytato/examples/dg/solver.rs"]
mod solver;

use solver::{Mesh, Reference, Solver, Unit, observed_orders};

#[test]
fn reference_matrices_are_exact_on_polynomials() {
    for order in 1..=6 {
        let r = Reference::new(order);
        // D differentiates x^m exactly for m <= order; M integrates products exactly.
        for m in 0..=order {
            let f = ndarray::Array1::from_iter(r.nodes.iter().map(|x| x.powi(m as i32)));
            let df = r.diff.dot(&f);
            for (x, d) in r.nodes.iter().zip(&df) {
                let want = if m == 0 { 0.0 } else { m as f64 * x.powi(m as i32 - 1) };
                assert!((d - want).abs() < 1e-11, "order {order}: d/dx x^{m} at {x}: {d} vs {want}");
            }
            let integral = f.dot(&r.mass.dot(&ndarray::Array1::ones(order + 1)));
            let want = if m % 2 == 0 { 2.0 / (m + 1) as f64 } else { 0.0 };
            assert!((integral - want).abs() < 1e-12, "order {order}: ∫ x^{m} = {integral}, not {want}");
        }
        assert!(r.nodes.windows(2).all(|w| w[0] < w[1]) && r.nodes[0] == -1.0 && r.nodes[order] == 1.0);
    }
}

#[test]
fn convergence_approaches_p_plus_one_on_every_backend() {
    let (mut instances, skipped) = pytato_conformance::instantiate(&[]).unwrap_or_else(|e| panic!("{e}"));
    // The interpreter first: the compiled backends are compared with it.
    instances.sort_by_key(|(name, _)| name != "interp");
    for line in &skipped {
        eprintln!("{line}");
    }
    let mut reference_errors: Option<Vec<Vec<f64>>> = None;
    for (name, backend) in &instances {
        let mut all = Vec::new();
        for order in 1..=4 {
            let solver = Solver::new(backend.as_ref(), order).unwrap_or_else(|e| panic!("{name}: {e}"));
            // Order 1 reaches its asymptotic rate on finer meshes than the others.
            let meshes = if order == 1 { [8, 16, 32] } else { [4, 8, 16] };
            let errors: Vec<f64> = meshes
                .iter()
                .map(|&k| {
                    solver
                        .run_on(backend.as_ref(), &Mesh { k }, 0.05, 0.5, &mut |_, _| {})
                        .unwrap_or_else(|e| panic!("{name}: {e}"))
                        .error
                })
                .collect();
            let orders = observed_orders(&errors);
            let finest = *orders.last().unwrap();
            let shown: Vec<String> = errors.iter().map(|e| format!("{e:.3e}")).collect();
            eprintln!("{name}: p = {order}: errors {shown:?}, orders {orders:.2?}");
            assert!(
                (finest - (order + 1) as f64).abs() < 0.25,
                "{name}: order {order}: observed {finest:.2} on the finest meshes, theory {} (errors {errors:?})",
                order + 1
            );
            all.push(errors);
        }
        match &reference_errors {
            None => reference_errors = Some(all),
            Some(expected) => {
                for (got, want) in all.iter().flatten().zip(expected.iter().flatten()) {
                    assert!((got - want).abs() <= 1e-9 * want, "{name}: error {got:e}, the first backend {want:e}");
                }
            }
        }
    }
}

/// A whole step as one program (`Unit::Step`, what the device backends run) computes what five
/// runs of the stage program compute, bit for bit, on every backend.
#[test]
fn a_step_program_computes_what_five_stage_runs_compute() {
    let (instances, skipped) = pytato_conformance::instantiate(&[]).unwrap_or_else(|e| panic!("{e}"));
    for line in &skipped {
        eprintln!("{line}");
    }
    for (name, backend) in &instances {
        for (order, k) in [(1, 5), (3, 4)] {
            let [by_stage, by_step] = [Unit::Stage, Unit::Step].map(|unit| {
                let solver = Solver::with_unit(backend.as_ref(), order, unit).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(solver.unit, unit);
                let run = solver.run_on(backend.as_ref(), &Mesh { k }, 0.05, 0.5, &mut |_, _| {});
                run.unwrap_or_else(|e| panic!("{name}: {e}"))
            });
            assert!(by_step.steps > 1, "{name}: {} steps", by_step.steps);
            let bits = |u: &ndarray::Array3<f64>| u.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert!(bits(&by_stage.u) == bits(&by_step.u), "{name}: order {order}: the step program's fields differ");
        }
    }
}
