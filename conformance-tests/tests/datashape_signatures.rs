//! Compiled programs state their signatures as datashapes on every backend, and inputs declared
//! by datashape bind (and fail to bind) as their datashape says.

use pytato_core::{ArrayData, DictOfNamedArrays, s};
use pytato_datashape as datashape;
use pytato_frontend::{self as pt};
use pytato_runtime::backend::NamedData;

#[test]
fn every_backend_states_the_programs_datashape() {
    let inputs = datashape::placeholders("n, {u: float64, mask: bool}").unwrap();
    let (u, mask) = (inputs.get("u").unwrap().clone(), inputs.get("mask").unwrap().clone());
    let data = pt::data_wrapper(ArrayData::from(ndarray::ArrayD::<f64>::zeros(vec![3])), None).unwrap();
    let outputs = DictOfNamedArrays::new([
        // An output named like an input, a computed length, a data wrapper (never an input to
        // pass), and a length the data decides.
        ("u", (&u.index(s![1..]).unwrap() * 2.0)),
        ("total", pt::sum(&data, None).unwrap()),
        ("kept", u.index(s![&mask]).unwrap()),
    ])
    .unwrap();
    let (instances, _) = pytato_conformance::instantiate(&[]).unwrap_or_else(|e| panic!("{e}"));
    for (name, backend) in instances {
        let program = backend.compile(&(&outputs).into()).unwrap();
        let shape = program.datashape().unwrap_or_else(|| panic!("{name}: no datashape"));
        let text = shape.to_string();
        let (inputs, outputs) = text.split_once(" -> ").unwrap_or_else(|| panic!("{name}: {text}"));
        assert_eq!(inputs, "{mask: n, bool, u: n, float64}", "{name}");
        assert!(
            outputs.starts_with("{kept: _pt_shp")
                && outputs.ends_with(", float64, total: float64, u: (n -> n - 1), float64}"),
            "{name}: {text}"
        );
        assert_eq!(datashape::parse_type(&text).unwrap(), shape, "{name}: {text}");
    }
}

#[test]
fn a_square_datashape_refuses_an_oblong_input_naming_the_variable() {
    let m = datashape::placeholder("m", "A, A, float64").unwrap();
    let trace = pt::sum(&pt::einsum("ii->i", &[&m]).unwrap(), None).unwrap();
    let (instances, _) = pytato_conformance::instantiate(&[]).unwrap_or_else(|e| panic!("{e}"));
    for (name, backend) in instances {
        let program = backend.compile(&(&trace).into()).unwrap();
        assert_eq!(program.datashape().unwrap().to_string(), "{m: A, A, float64} -> {_pt_out: float64}", "{name}");
        let oblong = ArrayData::from(ndarray::ArrayD::<f64>::zeros(vec![2, 3]));
        let err = program.run(&NamedData::from([("m".to_string(), oblong)])).unwrap_err();
        let message = err.to_string();
        for part in [
            "input \"m\"",
            "dimension 2 (type variable A) is 3",
            "A = 2 (from dimension 1 of \"m\")",
            "datashape is `A, A, float64`",
        ] {
            assert!(message.contains(part), "{name}: {message} lacks {part}");
        }
    }
}

#[test]
fn ranged_lengths_are_checked_on_every_backend() {
    let t = datashape::placeholder("t", "Var(1, 4), n, float32").unwrap();
    let total = pt::sum(&t, None).unwrap();
    let (instances, _) = pytato_conformance::instantiate(&[]).unwrap_or_else(|e| panic!("{e}"));
    for (name, backend) in instances {
        let program = backend.compile(&(&total).into()).unwrap();
        assert_eq!(program.datashape().unwrap().to_string(), "{t: Var(1, 4), n, float32} -> {_pt_out: float32}");
        let run = |rows: usize| {
            let data = ArrayData::from(ndarray::ArrayD::<f32>::ones(vec![rows, 2]));
            program.run(&NamedData::from([("t".to_string(), data)]))
        };
        let sum = run(4).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(sum["_pt_out"].to_scalars()[0].to_f64(), 8.0, "{name}");
        for rows in [0, 5] {
            let err = run(rows).expect_err("outside Var(1, 4)").to_string();
            assert!(err.contains(&format!("dimension 1 is {rows}, outside `Var(1, 4)`")), "{name}: {err}");
        }
    }
}
