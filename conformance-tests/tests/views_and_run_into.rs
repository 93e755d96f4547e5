//! Borrowed inputs of any layout (`Program::run_views`) and outputs written into arrays the caller
//! owns (`Program::run_into`), on every linked backend. Expected values come from the same program
//! run on owned, row-major copies of the inputs by the reference interpreter.

use ndarray::{Array1, Array2, ArrayD, ArrayViewD, s};
use pytato_backend_interp::Interpreter;
use pytato_conformance::linked_backends as backends;
use pytato_core::{ArrayData, DType, DictOfNamedArrays, Dim, Error};
use pytato_frontend as pt;
use pytato_runtime::backend::{Backend, NamedData, NamedViews, NamedViewsMut, Outputs};

/// Every backend that can run here (wgpu may have no adapter outside CI).
/// `y = 2 x[:, ::-1].T`-like program over a symbolic `(n, m)` input, plus a reduction, plus the
/// input itself as an output.
fn program() -> Outputs {
    let x = pt::placeholder("x", [Dim::param("n"), Dim::param("m")], DType::F64).unwrap();
    let v = pt::placeholder("v", [Dim::param("m")], DType::I32).unwrap();
    let y = pt::add(pt::multiply(&x, 2.0).unwrap(), &v).unwrap();
    let total = pt::sum(&y, None).unwrap();
    let named = DictOfNamedArrays::new([("y", y.clone()), ("total", total), ("x_again", x), ("y_again", y)]).unwrap();
    Outputs::Named(named)
}

fn owned(inputs: &NamedViews<'_>) -> NamedData {
    inputs.iter().map(|(n, v)| (n.to_string(), v.to_owned())).collect()
}

#[test]
fn inputs_of_any_layout_give_the_values_of_row_major_copies() {
    let base = Array2::from_shape_fn((5, 8), |(i, j)| (i * 8 + j) as f64 * 0.25 - 3.0);
    let row = Array1::from_shape_fn(8, |j| j as f64 - 2.5);
    let wide = Array1::from_shape_fn(12, |k| k as i32 - 4);
    let outputs = program();
    let reference = Interpreter.compile(&outputs).unwrap();
    for (name, backend) in backends() {
        let program = backend.compile(&outputs).unwrap();
        // Row-major, transposed, every other column, and a broadcast row (zero strides).
        let xs: Vec<ArrayViewD<'_, f64>> = vec![
            base.view().into_dyn(),
            base.t().into_dyn(),
            base.slice(s![.., ..;2]).into_dyn(),
            row.broadcast((4, 8)).unwrap().into_dyn(),
        ];
        for x in xs {
            // `v` reversed (a negative stride), as long as x's second axis.
            let m = x.shape()[1];
            let v = wide.slice(s![..m;-1]).into_dyn();
            let inputs = NamedViews::from([("x", x.clone().into()), ("v", v.into())]);
            let got = program.run_views(&inputs).unwrap();
            let want = reference.run(&owned(&inputs)).unwrap();
            assert_eq!(got, want, "{name}: x of shape {:?}, strides {:?}", x.shape(), x.strides());
        }
    }
}

#[test]
fn run_into_writes_every_output_in_place_or_through_a_copy() {
    let x = Array2::from_shape_fn((3, 4), |(i, j)| (i as f64 - 1.5) * (j as f64 + 0.5));
    let v = Array1::from(vec![1, -2, 3, -4]);
    let outputs = program();
    for (name, backend) in backends() {
        let program = backend.compile(&outputs).unwrap();
        let inputs = NamedViews::from([("x", x.view().into_dyn().into()), ("v", v.view().into_dyn().into())]);
        let want = Interpreter.compile(&outputs).unwrap().run(&owned(&inputs)).unwrap();
        // `y` into a row-major array, `y_again` into every other column of a wider one (not
        // row-major), the scalar and the input copy into fresh arrays; run twice with the same
        // arrays, as a time-stepping loop would.
        let mut y = ArrayD::<f64>::from_elem(vec![3, 4], f64::NAN);
        let mut wide = Array2::<f64>::from_elem((3, 8), -7.0);
        let mut total = ArrayD::<f64>::zeros(vec![]);
        let mut x_again = ArrayD::<f64>::zeros(vec![3, 4]);
        for _ in 0..2 {
            let mut targets = NamedViewsMut::from([
                ("y", y.view_mut().into()),
                ("y_again", wide.slice_mut(s![.., ..;2]).into_dyn().into()),
                ("total", total.view_mut().into()),
                ("x_again", x_again.view_mut().into()),
            ]);
            program.run_into(&inputs, &mut targets).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        assert_eq!(ArrayData::from(y.clone()), want["y"], "{name}: y");
        assert_eq!(ArrayData::from(wide.slice(s![.., ..;2]).to_owned().into_dyn()), want["y_again"], "{name}");
        assert!(wide.slice(s![.., 1..;2]).iter().all(|&w| w == -7.0), "{name}: wrote outside the view");
        assert_eq!(ArrayData::from(total.clone()), want["total"], "{name}: total");
        assert_eq!(ArrayData::from(x_again.clone()), want["x_again"], "{name}: x_again");
    }
}

#[test]
fn run_into_checks_the_arrays_before_running() {
    let x = Array2::<f64>::ones((2, 3));
    let v = Array1::<i32>::zeros(3);
    let outputs = program();
    for (name, backend) in backends() {
        let program = backend.compile(&outputs).unwrap();
        let inputs = NamedViews::from([("x", x.view().into_dyn().into()), ("v", v.view().into_dyn().into())]);
        let mut y = ArrayD::<f64>::from_elem(vec![2, 3], 5.0);
        let mut y_f32 = ArrayD::<f32>::zeros(vec![2, 3]);
        let mut y_short = ArrayD::<f64>::zeros(vec![2, 2]);
        let mut total = ArrayD::<f64>::zeros(vec![]);
        let mut x_again = ArrayD::<f64>::zeros(vec![2, 3]);
        let mut other = ArrayD::<f64>::zeros(vec![2, 3]);

        // Wrong dtype, then wrong shape: typed errors naming the output; nothing is written.
        let mut targets = NamedViewsMut::from([
            ("y", y.view_mut().into()),
            ("y_again", y_f32.view_mut().into()),
            ("total", total.view_mut().into()),
            ("x_again", x_again.view_mut().into()),
        ]);
        let e = program.run_into(&inputs, &mut targets).unwrap_err();
        assert!(
            matches!(&e, Error::OutputArray { name, got_dtype: DType::F32, .. } if name == "y_again"),
            "{name}: {e}"
        );
        assert!(e.to_string().contains("float64") && e.to_string().contains("[2, 3]"), "{name}: {e}");
        drop(targets);
        assert!(y.iter().all(|&w| w == 5.0), "{name}: an output was written before the check");

        let mut targets = NamedViewsMut::from([
            ("y", y.view_mut().into()),
            ("y_again", y_short.view_mut().into()),
            ("total", total.view_mut().into()),
            ("x_again", x_again.view_mut().into()),
        ]);
        let e = program.run_into(&inputs, &mut targets).unwrap_err();
        assert!(matches!(&e, Error::OutputArray { got_shape, .. } if got_shape == &[2, 2]), "{name}: {e}");
        drop(targets);

        // A missing output and an unknown name.
        let mut targets = NamedViewsMut::from([
            ("y", y.view_mut().into()),
            ("total", total.view_mut().into()),
            ("x_again", x_again.view_mut().into()),
            ("z", other.view_mut().into()),
        ]);
        let e = program.run_into(&inputs, &mut targets).unwrap_err();
        match &e {
            Error::OutputNames { missing, unknown, .. } => {
                assert_eq!(missing, &["y_again"], "{name}");
                assert_eq!(unknown, &["z"], "{name}");
            }
            other => panic!("{name}: {other}"),
        }
        assert_eq!(e.kind(), "OutputNames");
        // Bad inputs are still the input errors.
        let bad = NamedViews::from([("x", x.view().into_dyn().into())]);
        let mut targets = NamedViewsMut::from([("y", y.view_mut().into())]);
        assert!(matches!(program.run_into(&bad, &mut targets), Err(Error::MissingInput { .. })), "{name}");
    }
}
