//! Property test: random DAGs, evaluated by the reference interpreter before and after every
//! transformation pipeline, give the same values.
//!
//! DAGs are drawn from a small grammar over two (3, 4) float64 inputs: elementwise math, broadcast
//! reductions, rolls, permutations, reshapes, slices with negative steps, concatenation, stacking
//! and selection, einsums, advanced indexing and `zeros_like` links. The generator is seeded by
//! proptest, so failures shrink to a small DAG and reproduce.

use proptest::prelude::*;
use pytato_backend_interp::Interpreter;
use pytato_conformance::tolerance::compare;
use pytato_core::{Array, ArrayData, DType, Order, Result, s};
use pytato_frontend as pt;
use pytato_runtime::backend::{Backend, NamedData, Outputs};
use pytato_transform::cse::deduplicate;
use pytato_transform::dce::eliminate_dead_code;
use pytato_transform::einsum::{apply_distributive_law, remove_broadcasts_in_einsums};
use pytato_transform::lower::lower_to_index_lambdas;
use pytato_transform::materialize::{Mpms, materialize};
use pytato_transform::unify_tags::unify_axes_tags;

/// One step of the grammar: an operation applied to earlier terms (by index, modulo their count).
#[derive(Clone, Debug)]
enum Step {
    Unary(u8, usize),
    Binary(u8, usize, usize),
    Shape(u8, usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0u8..6, any::<usize>()).prop_map(|(k, a)| Step::Unary(k, a)),
        (0u8..6, any::<usize>(), any::<usize>()).prop_map(|(k, a, b)| Step::Binary(k, a, b)),
        (0u8..9, any::<usize>()).prop_map(|(k, a)| Step::Shape(k, a)),
    ]
}

/// Applies the steps; every term keeps shape (3, 4).
fn build(steps: &[Step]) -> Result<Array> {
    let x = pt::placeholder("x", [3, 4], DType::F64)?;
    let y = pt::placeholder("y", [3, 4], DType::F64)?;
    let mut terms = vec![x, y];
    for st in steps {
        let pick = |i: usize| terms[i % terms.len()].clone();
        let t = match *st {
            Step::Unary(k, a) => {
                let a = pick(a);
                match k {
                    0 => pt::sin(&a)?,
                    1 => pt::exp(&-pt::abs(&a)?)?,
                    2 => pt::tanh(&a)?,
                    3 => pt::sqrt(&pt::abs(&a)?)?,
                    4 => &a * 0.5 + 1.0,
                    _ => pt::where_(&pt::greater(&a, 0.0)?, &a, -&a)?,
                }
            }
            Step::Binary(k, a, b) => {
                let (a, b) = (pick(a), pick(b));
                match k {
                    0 => &a + &b,
                    1 => &a - &b,
                    2 => &a * &b,
                    3 => pt::maximum(&a, &b)?,
                    4 => pt::einsum("ij,ij->ij", &[&a, &b])?,
                    _ => pt::zeros_like(&a, None)? + &b,
                }
            }
            Step::Shape(k, a) => {
                let a = pick(a);
                match k {
                    0 => pt::roll(&a, 1, Some(1))?,
                    1 => pt::transpose(&pt::transpose(&a, None)?, None)?,
                    2 => pt::reshape(&pt::reshape(&a, [4, 3], Order::F)?, [3, 4], Order::F)?,
                    3 => pt::sum(&a, pt::ReduceOptions::axes(0).keepdims(true))? + &a,
                    4 => a.index(s![..;-1, ..])?,
                    5 => pt::concatenate(&[a.index(s![1..])?, a.index(s![..1])?], 0)?,
                    6 => pt::stack(&[a.clone(), pt::cos(&a)?], 0)?.index(s![1])?,
                    7 => {
                        let rows = pt::data_wrapper(ArrayData::from(ndarray::arr1(&[2i64, 0, -2]).into_dyn()), None)?;
                        a.index(s![&rows, ..])?
                    }
                    _ => pt::einsum("ij,jk->ik", &[&a, &pt::eye(4, None, 1, DType::F64)?])?,
                }
            }
        };
        terms.push(t);
    }
    Ok(terms.pop().expect("at least the inputs"))
}

/// A transformation pipeline under test.
type Pipeline = fn(&Outputs) -> Result<Outputs>;

fn run(outputs: &Outputs, inputs: &NamedData) -> ArrayData {
    let program = Interpreter.compile(outputs).expect("compiles");
    let accepted = program.input_names();
    let inputs: NamedData =
        inputs.iter().filter(|(k, _)| accepted.contains(k)).map(|(k, v)| (k.clone(), v.clone())).collect();
    program.run(&inputs).expect("runs").remove("_pt_out").expect("one output")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn transformations_preserve_values(steps in prop::collection::vec(step(), 1..12), seed in any::<u64>()) {
        let dag = build(&steps).expect("the grammar builds valid DAGs");
        let outputs = Outputs::from(&dag);
        // Inputs from the seed: values in [-2, 2).
        let values = |offset: u64| -> ArrayData {
            let v: Vec<f64> = (0..12).map(|i| {
                let h = (seed ^ offset).wrapping_add(i).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                ((h >> 11) as f64 / (1u64 << 53) as f64) * 4.0 - 2.0
            }).collect();
            ArrayData::from(ndarray::Array::from_shape_vec(vec![3, 4], v).expect("12 values"))
        };
        let inputs = NamedData::from([("x".to_string(), values(1)), ("y".to_string(), values(2))]);
        let expected = run(&outputs, &inputs);
        let pipelines: [(&str, Pipeline); 4] = [
            ("lowering", lower_to_index_lambdas),
            ("cse+dce", |o| eliminate_dead_code(&deduplicate(o)?)),
            ("mpms+unify", |o| unify_axes_tags(&materialize(o, &mut Mpms)?, |_| true)),
            ("einsum rewrites+lowering", |o| lower_to_index_lambdas(&apply_distributive_law(&remove_broadcasts_in_einsums(o)?, |_| true)?)),
        ];
        for (name, pipeline) in pipelines {
            let got = run(&pipeline(&outputs).expect("the pipeline succeeds"), &inputs);
            prop_assert!(compare(&got, &expected).is_ok(), "{name} changed the values: {:?}", compare(&got, &expected));
        }
    }
}
