//! Names the library generates never collide with the user's, on every linked backend.
//!
//! The seed makes the reserved prefixes (`_pt_in`, `_pt_out`, `_pt_data`, `_pt_shp`, `_pt_dist`)
//! a convention, not a rule: a user may name inputs and outputs in them (arraycontext does). The
//! library generates names in the same namespaces (unnamed placeholders `_pt_in<k>`, data
//! wrappers compiled as inputs `_pt_data<k>`, kernel buffers `_pt_out<k>`, `_pt_out_tmp<k>`,
//! host steps' results `_pt_in_step<k>`), so each program below takes every such name for a
//! user input while also making the library generate it, and checks the values against loops.

use pytato_conformance::linked_backends as backends;
use pytato_core::{Array, ArrayData, DType, DictOfNamedArrays, s};
use pytato_frontend as pt;
use pytato_runtime::backend::{NamedData, Outputs};

fn f64s(values: &[f64]) -> ArrayData {
    ArrayData::from(ndarray::Array1::from(values.to_vec()).into_dyn())
}

fn values(data: &ArrayData) -> Vec<f64> {
    data.to_scalars().iter().map(|s| s.to_f64()).collect()
}

/// The names the library draws from, each taken by a user placeholder.
const TAKEN: [&str; 8] =
    ["_pt_in0", "_pt_in1", "_pt_data0", "_pt_out0", "_pt_out_tmp1", "_pt_in_step0", "_pt_out", "_in0"];

#[test]
fn user_inputs_in_the_reserved_namespaces_never_meet_generated_names() {
    let user: Vec<Array> = TAKEN.iter().map(|n| pt::placeholder(n, [3], DType::F64).unwrap()).collect();
    // Unnamed placeholders (`_pt_in<k>`), a data wrapper (`_pt_data<k>`), a mask (a host step:
    // `_pt_in_step<k>` and a count), stored temporaries and outputs (`_pt_out<k>`, `_pt_out_tmp<k>`).
    let unnamed = [
        pytato_core::Array::new_placeholder(None, [3].into(), DType::F64).unwrap(),
        pytato_core::Array::new_placeholder(None, [3].into(), DType::F64).unwrap(),
    ];
    let data = pt::data_wrapper(f64s(&[100.0, 200.0, 300.0]), None).unwrap();
    let mut total = &unnamed[0] + &(2.0 * &unnamed[1]);
    total = &total + &data;
    for (k, u) in user.iter().enumerate() {
        total = &total + &(10f64.powi(k as i32 + 3) * u);
    }
    let positive = total.index(s![&pt::greater(&total, 0.0).unwrap()]).unwrap();
    let outputs = Outputs::Named(
        DictOfNamedArrays::new([
            ("_pt_out0", pt::sum(&positive, None).unwrap()),
            ("_pt_in0", &total * 0.5),
            ("total", total.clone()),
        ])
        .unwrap(),
    );
    for (name, backend) in backends() {
        let program = backend.compile(&outputs).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut inputs = program.input_names();
        inputs.sort();
        let mut expected_inputs: Vec<String> = TAKEN.iter().map(|n| n.to_string()).collect();
        // The unnamed placeholders' names go around the taken `_pt_in0` and `_pt_in1`.
        expected_inputs.extend(["_pt_in2".to_string(), "_pt_in3".to_string()]);
        expected_inputs.sort();
        assert_eq!(inputs, expected_inputs, "{name}");

        let mut given = NamedData::new();
        for (k, n) in TAKEN.iter().enumerate() {
            given.insert(n.to_string(), f64s(&[k as f64 + 1.0, -(k as f64) - 1.0, 0.5]));
        }
        given.insert("_pt_in2".into(), f64s(&[1.0, 2.0, 3.0]));
        given.insert("_pt_in3".into(), f64s(&[4.0, -5.0, 6.0]));
        let got = program.run(&given).unwrap_or_else(|e| panic!("{name}: {e}"));

        let expect: Vec<f64> = (0..3)
            .map(|i| {
                let mut t = [1.0, 2.0, 3.0][i] + 2.0 * [4.0, -5.0, 6.0][i] + [100.0, 200.0, 300.0][i];
                for k in 0..TAKEN.len() {
                    let v = [k as f64 + 1.0, -(k as f64) - 1.0, 0.5][i];
                    t += 10f64.powi(k as i32 + 3) * v;
                }
                t
            })
            .collect();
        assert_eq!(values(&got["total"]), expect, "{name}");
        let positive_sum: f64 = expect.iter().filter(|v| **v > 0.0).sum();
        assert_eq!(values(&got["_pt_out0"]), [positive_sum], "{name}");
        let half: Vec<f64> = expect.iter().map(|v| v * 0.5).collect();
        assert_eq!(values(&got["_pt_in0"]), half, "{name}");
    }
}

#[test]
fn iname_shapes_stay_reserved() {
    for name in ["_0", "_7", "_r0", "_r12"] {
        let err = pt::placeholder(name, [2], DType::F64).unwrap_err();
        assert_eq!(err.kind(), "ReservedName", "{name}: {err}");
        assert!(pt::size_param(name).is_err(), "{name}");
    }
    for name in ["_pt_in0", "_pt_shp_mine", "_pt_data7", "_pt_dist_recv0", "_in3", "_r", "_rx"] {
        assert!(pt::placeholder(name, [2], DType::F64).is_ok(), "{name}");
    }
}
