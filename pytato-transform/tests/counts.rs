//! Every pass takes DAGs with counts and scatters (host steps, `pytato_runtime::phases`): CSE merges
//! equal selections, DCE keeps them, lowering leaves host steps as they are (no kernel computes
//! them), tag unification and drawing see them, and the kernel builder refuses them with a typed
//! error that says to compile through a backend.

use pytato_core::{DType, DictOfNamedArrays, Dim, Error, s};
use pytato_frontend as pt;
use pytato_runtime::backend::Outputs;
use pytato_transform::analysis::{node_type_counts, num_nodes};
use pytato_transform::cse::deduplicate;
use pytato_transform::dce::eliminate_dead_code;
use pytato_transform::draw::to_dot;
use pytato_transform::kernel::{KernelOptions, build_kernel_program};
use pytato_transform::lower::lower_to_index_lambdas;

fn selections() -> Outputs {
    let x = pt::placeholder("x", [Dim::param("n"), Dim::new(3)], DType::F64).unwrap();
    let i = pt::placeholder("i", [4], DType::I64).unwrap();
    // The same selection built twice, and a scatter into the array.
    let a = x.index(s![&pt::greater(&x, 0.0).unwrap()]).unwrap();
    let b = x.index(s![&pt::greater(&x, 0.0).unwrap()]).unwrap();
    let scattered = x.add_at(s![&i], 1.0).unwrap();
    Outputs::Named(DictOfNamedArrays::new([("a", a), ("b", b), ("scattered", scattered)]).unwrap())
}

#[test]
fn cse_merges_equal_selections_and_dce_keeps_them() {
    let outputs = selections();
    let merged = deduplicate(&outputs).unwrap();
    assert!(num_nodes(&merged) < num_nodes(&outputs));
    assert_eq!(node_type_counts(&merged)["Nonzero"], 1);
    assert_eq!(node_type_counts(&merged)["Scatter"], 1);
    let kept = eliminate_dead_code(&merged).unwrap();
    assert_eq!(node_type_counts(&kept)["Nonzero"], 1);
    // Materialization tags what is stored; host steps stay host steps.
    let stored = pytato_transform::materialize::materialize(&kept, &mut pytato_transform::materialize::Mpms).unwrap();
    assert_eq!(node_type_counts(&stored)["Nonzero"], 1);
}

#[test]
fn lowering_leaves_host_steps_and_the_kernel_builder_refuses_them() {
    let lowered = lower_to_index_lambdas(&selections()).unwrap();
    let counts = node_type_counts(&lowered);
    assert_eq!((counts["Nonzero"], counts["Scatter"]), (2, 1));
    match build_kernel_program(&selections(), KernelOptions::default()) {
        Err(Error::Unsupported { reason, .. }) => assert!(reason.contains("host step"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn tag_unification_and_drawing_see_counts() {
    #[derive(Debug, PartialEq, Eq, Hash)]
    struct Columns;
    impl pytato_core::Tag for Columns {}
    // A scatter's axes are its array's axes: a tag spreads from the result to the input.
    let x = pt::placeholder("x", [5, 3], DType::F64).unwrap();
    let i = pt::placeholder("i", [2], DType::I64).unwrap();
    let scattered = x.set_index(s![&i], 0.0).unwrap().with_tagged_axis(1, Columns).unwrap();
    let unified = pytato_transform::unify_tags::unify_axes_tags(&(&scattered).into(), |_| true).unwrap();
    let Outputs::Single(out) = unified else { panic!("one output") };
    let pytato_core::NodeKind::Scatter { array, .. } = out.kind() else { panic!("{}", out.kind_name()) };
    assert!(array.axes()[1].tags.contains(&Columns));

    let outputs = selections();
    let dot = to_dot(&outputs);
    assert!(dot.contains("Nonzero") && dot.contains("count _pt_shp") && dot.contains("mode Add"), "{dot}");
}

#[test]
fn dce_keeps_the_link_of_a_like_array_whose_length_is_a_count() {
    // zeros_like and full_like of a selection: their length is the selection's count, which only
    // the selection's step binds, so DCE keeps that link (found by fuzzing the passes, seed
    // 9612185: the program asked for the count as an input); of a fixed-length array it cuts it.
    let x = pt::placeholder("x", [5], DType::F64).unwrap();
    let selected = x.index(s![&pt::greater(&x, 0.0).unwrap()]).unwrap();
    let like = pt::full_like(&selected, 7.0, None).unwrap();
    let fixed = pt::zeros_like(&x.index(s![1..3]).unwrap(), None).unwrap();
    let outputs = Outputs::Named(DictOfNamedArrays::new([("like", like), ("fixed", fixed)]).unwrap());
    let cleaned = eliminate_dead_code(&outputs).unwrap();
    assert_eq!(node_type_counts(&cleaned)["Nonzero"], 1);
    let Outputs::Named(named) = &cleaned else { unreachable!("named outputs") };
    let fixed = named.get("fixed").expect("the output");
    assert!(pytato_transform::mapper::inputs([fixed]).is_empty(), "the fixed-length link is cut");
    use pytato_runtime::backend::Backend;
    let program = pytato_backend_interp::Interpreter.compile(&cleaned).unwrap();
    let data = ndarray::arr1(&[1.0, -2.0, 3.0, 0.0, 5.0]).into_dyn();
    let got = program.run(&[("x".to_string(), pytato_core::ArrayData::from(data))].into()).unwrap();
    let like = got["like"].as_array::<f64>().unwrap();
    assert_eq!(like.iter().copied().collect::<Vec<_>>(), [7.0, 7.0, 7.0], "one 7 per positive element");
    assert_eq!(got["fixed"].shape(), [2]);
}
