//! Functions and calls on every linked backend (`pytato_core::function`): traced calls give the
//! values of the computation written out (a plain Rust loop here), equal definitions are one,
//! calls nest, a call's results share one inlined body, calls hold selections, and bad calls are
//! typed errors.

use pytato_conformance::linked_backends as backends;
use pytato_core::function::{Function, InlineRule, inline_calls, trace_call};
use pytato_core::{Array, ArrayData, DType, DictOfNamedArrays, Error, TagSet, s};
use pytato_frontend as pt;
use pytato_runtime::backend::WithInlineRule;
use pytato_runtime::backend::{Backend, NamedData, Outputs};
use pytato_transform::analysis::{num_call_sites, num_nodes};

fn f64s(values: &[f64]) -> ArrayData {
    ArrayData::from(ndarray::Array1::from(values.to_vec()).into_dyn())
}

fn values(data: &ArrayData) -> Vec<f64> {
    data.to_scalars().iter().map(|s| s.to_f64()).collect()
}

/// f(a, b) = (a * b + 1, a - b)
fn f(args: &[Array]) -> pytato_core::Result<Vec<Array>> {
    Ok(vec![&(&args[0] * &args[1]) + 1.0, &args[0] - &args[1]])
}

#[test]
fn calls_compute_their_bodies_on_every_backend() {
    let x = pt::placeholder("x", [4], DType::F64).unwrap();
    let y = pt::placeholder("y", [4], DType::F64).unwrap();
    let first = trace_call(f, &[&x, &y]).unwrap();
    // g(a) = f(a, a)[0] * 2: a call inside a function.
    let g = |args: &[Array]| Ok(vec![&trace_call(f, &[&args[0], &args[0]])?[0] * 2.0]);
    let second = trace_call(g, &[&first[1]]).unwrap();
    let outputs = Outputs::Named(
        DictOfNamedArrays::new([("p", first[0].clone()), ("d", first[1].clone()), ("g", second[0].clone())]).unwrap(),
    );
    let (xs, ys) = ([1.0, -2.0, 0.5, 3.0], [2.0, 4.0, -1.0, 0.0]);
    let data = NamedData::from([("x".to_string(), f64s(&xs)), ("y".to_string(), f64s(&ys))]);
    let p: Vec<f64> = xs.iter().zip(&ys).map(|(a, b)| a * b + 1.0).collect();
    let d: Vec<f64> = xs.iter().zip(&ys).map(|(a, b)| a - b).collect();
    let gv: Vec<f64> = d.iter().map(|a| (a * a + 1.0) * 2.0).collect();
    for (name, backend) in backends() {
        let got = backend.compile(&outputs).unwrap().run(&data).unwrap();
        assert_eq!(
            (values(&got["p"]), values(&got["d"]), values(&got["g"])),
            (p.clone(), d.clone(), gv.clone()),
            "{name}"
        );
    }
    assert_eq!(num_call_sites(&outputs), 3); // f(x, y), g(d), and f(a, a) in g's body
}

#[test]
fn equal_definitions_are_one_and_results_of_one_call_share_its_body() {
    let x = pt::placeholder("x", [4], DType::F64).unwrap();
    let y = pt::placeholder("y", [4], DType::F64).unwrap();
    let (a, b) = (trace_call(f, &[&x, &y]).unwrap(), trace_call(f, &[&x, &y]).unwrap());
    assert_eq!(a, b);
    let NodeKindCall { function: fa } = call_of(&a[0]);
    let NodeKindCall { function: fb } = call_of(&b[0]);
    assert_eq!(fa, fb);
    // Other arguments: the same function, another call site.
    let c = trace_call(f, &[&y, &x]).unwrap();
    assert_eq!(call_of(&c[0]).function, fa);
    let both = Outputs::Named(DictOfNamedArrays::new([("p", a[0].clone()), ("d", a[1].clone())]).unwrap());
    assert_eq!(num_call_sites(&both), 1);
    // Inlined, both results read one x and one y: the body is copied once.
    let inlined = inline_calls(&both).unwrap();
    assert_eq!(num_nodes(&inlined), 2 + 3); // x, y; x * y, + 1, x - y
}

struct NodeKindCall {
    function: Function,
}

fn call_of(a: &Array) -> NodeKindCall {
    match a.kind() {
        pytato_core::NodeKind::CallResult { function, .. } => NodeKindCall { function: function.clone() },
        other => panic!("{}", other.name()),
    }
}

#[test]
fn a_call_may_hold_a_selection() {
    let x = pt::placeholder("x", [6], DType::F64).unwrap();
    let positive_sum = |args: &[Array]| Ok(vec![pt::sum(&args[0].index(s![&pt::greater(&args[0], 0.0)?])?, None)?]);
    let total = trace_call(positive_sum, &[&x]).unwrap().remove(0);
    let data = NamedData::from([("x".to_string(), f64s(&[1.0, -1.0, 2.5, 0.0, -3.0, 4.0]))]);
    for (name, backend) in backends() {
        let got = backend.compile(&(&total).into()).unwrap().run(&data).unwrap();
        assert_eq!(values(&got["_pt_out"]), [7.5], "{name}");
    }
}

#[test]
fn bad_definitions_and_calls_are_typed_errors() {
    let x = pt::placeholder("x", [4], DType::F64).unwrap();
    let a = pt::placeholder("a", [4], DType::F64).unwrap();
    // A body reading an outer input that is not a parameter.
    let captured = Function::new(vec![a.clone()], vec![("r", &a + &x)], TagSet::new());
    assert!(matches!(captured, Err(Error::InvalidArgument { .. })));
    let double = Function::new(vec![a.clone()], vec![("r", &a * 2.0)], TagSet::new()).unwrap();
    let wrong_dtype = pt::placeholder("w", [4], DType::F32).unwrap();
    let wrong_shape = pt::placeholder("v", [5], DType::F64).unwrap();
    for bad in [&wrong_dtype, &wrong_shape] {
        match double.call(&[("a", bad)]) {
            Err(Error::InvalidArgument { op, message }) => {
                assert!(op == "call" && message.contains("\"a\""), "{message}")
            }
            other => panic!("{other:?}"),
        }
    }
    assert!(matches!(double.call(&[]), Err(Error::InvalidArgument { .. })));
    assert!(matches!(double.call(&[("a", &x), ("b", &x)]), Err(Error::InvalidArgument { .. })));
    assert!(matches!(Array::new_call_result(&double, vec![x.clone()], "nope"), Err(Error::InvalidArgument { .. })));
    let ok = double.call(&[("a", &x)]).unwrap();
    assert_eq!(ok["r"].shape(), x.shape());
}

/// Every conformance case with functions, on every backend, with the calls inlined and with every
/// function compiled once and called (outlined): numpy's values both ways.
#[test]
fn call_cases_pass_inlined_and_outlined_on_every_backend() {
    let cases: Vec<_> =
        pytato_conformance::golden::load_cases().into_iter().filter(|c| !c.functions.is_empty()).collect();
    assert!(cases.len() >= 10, "{} call cases", cases.len());
    for rule in [InlineRule::Always, InlineRule::Never] {
        for (name, backend) in backends() {
            let backend = WithInlineRule::new(backend, rule);
            for case in &cases {
                let outcome = pytato_conformance::run_case(case, &backend);
                assert_eq!(outcome, pytato_conformance::Outcome::Pass, "{} on {name}, {rule:?}", case.name);
            }
        }
    }
}

/// Records the DAGs a backend is asked to compile.
struct Recording {
    backend: Box<dyn Backend>,
    compiled: std::sync::Mutex<Vec<Outputs>>,
}

impl Backend for Recording {
    fn name(&self) -> &str {
        self.backend.name()
    }
    fn compile(&self, outputs: &Outputs) -> pytato_core::Result<Box<dyn pytato_runtime::backend::Program>> {
        self.compiled.lock().unwrap().push(outputs.clone());
        self.backend.compile(outputs)
    }
}

#[test]
fn an_outlined_function_is_compiled_once_for_all_its_call_sites() {
    let x = pt::placeholder("x", [3], DType::F64).unwrap();
    let step = |args: &[Array]| Ok(vec![&(&args[0] * 0.5) + 1.0]);
    let mut y = x.clone();
    for _ in 0..10 {
        y = trace_call(step, &[&y]).unwrap().remove(0);
    }
    let y = &y * 2.0;
    let function = call_of(&trace_call(step, &[&x]).unwrap()[0]).function;
    let data = NamedData::from([("x".to_string(), f64s(&[0.0, 2.0, -4.0]))]);
    let want: Vec<f64> = [0.0f64, 2.0, -4.0]
        .iter()
        .map(|&v| {
            let mut v = v;
            for _ in 0..10 {
                v = v * 0.5 + 1.0;
            }
            v * 2.0
        })
        .collect();
    for (name, backend) in backends() {
        let recording = Recording { backend, compiled: Default::default() };
        let outlining = WithInlineRule::new(Box::new(recording), InlineRule::Never);
        let got = outlining.compile(&(&y).into()).unwrap().run(&data).unwrap();
        assert_eq!(values(&got["_pt_out"]), want, "{name}");
        // The run again: the same program, other data.
        let other = NamedData::from([("x".to_string(), f64s(&[1.0, 1.0, 1.0]))]);
        let again = outlining.compile(&(&y).into()).unwrap().run(&other).unwrap();
        assert_eq!(values(&again["_pt_out"])[0], values(&again["_pt_out"])[2], "{name}");
    }
    // Which DAGs reach the backend: the body once, and the program after the last call.
    let recording =
        Recording { backend: pytato_runtime::backend::backend("interp").unwrap(), compiled: Default::default() };
    let shared = std::sync::Arc::new(recording);
    let outlining = WithInlineRule::new(Box::new(Shared(shared.clone())), InlineRule::Never);
    outlining.compile(&(&y).into()).unwrap();
    let compiled = shared.compiled.lock().unwrap();
    let body = function.body().unwrap();
    assert_eq!(compiled.iter().filter(|o| o.entries() == body.entries()).count(), 1, "the body, once");
    assert_eq!(compiled.len(), 2, "the body and the last program: {compiled:?}");
}

/// A shared [`Recording`], so the test can read it after handing it to a backend.
struct Shared(std::sync::Arc<Recording>);

impl Backend for Shared {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn compile(&self, outputs: &Outputs) -> pytato_core::Result<Box<dyn pytato_runtime::backend::Program>> {
        self.0.compile(outputs)
    }
}

#[test]
fn calls_tagged_to_be_inlined_are_inlined_under_any_rule_and_stay_calls_in_the_dag() {
    use pytato_core::function::{InlineCall, tag_all_calls_to_be_inlined};
    let x = pt::placeholder("x", [3], DType::F64).unwrap();
    // g(a) = f(a, a)[1] + 3: a call inside a function's body is tagged too.
    let g = |args: &[Array]| Ok(vec![&trace_call(f, &[&args[0], &args[0]])?[1] + 3.0]);
    let once = trace_call(f, &[&x, &x]).unwrap();
    let y = &trace_call(g, &[&once[0]]).unwrap()[0] * &once[1];
    let tagged = tag_all_calls_to_be_inlined(&(&y).into()).unwrap();
    assert_eq!(num_call_sites(&tagged), num_call_sites(&(&y).into()), "the calls stay");
    let (outer, inner) = (call_of(tagged.entries()[0].1.children()[0]).function, call_of(&once[0]).function);
    assert!(outer.tags().contains(&InlineCall));
    let inner_in_body = outer.returns().values().next().unwrap().children()[0].clone();
    assert!(call_of(&inner_in_body).function.tags().contains(&InlineCall), "the body's calls too");
    assert!(!inner.tags().contains(&InlineCall), "the original is unchanged");
    let xs = [1.5, -0.0, 4.0];
    let data = NamedData::from([("x".to_string(), f64s(&xs))]);
    // y = ((x*x + 1) - (x*x + 1) + 3) * (x - x), written out.
    let want: Vec<f64> = xs.iter().map(|v| (v * v + 1.0 - (v * v + 1.0) + 3.0) * (v - v)).collect();
    let recording =
        Recording { backend: pytato_runtime::backend::backend("interp").unwrap(), compiled: Default::default() };
    let shared = std::sync::Arc::new(recording);
    let never = WithInlineRule::new(Box::new(Shared(shared.clone())), InlineRule::Never);
    let got = never.compile(&tagged).unwrap().run(&data).unwrap();
    assert_eq!(values(&got["_pt_out"]), want);
    assert_eq!(shared.compiled.lock().unwrap().len(), 1, "one program: no function body compiled on its own");
    for (name, backend) in backends() {
        let got = WithInlineRule::new(backend, InlineRule::Never).compile(&tagged).unwrap().run(&data).unwrap();
        assert_eq!(values(&got["_pt_out"]), want, "{name}");
    }
}
