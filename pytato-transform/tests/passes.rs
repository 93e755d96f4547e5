//! What each pass does, on small DAGs whose expected form is written out by hand.

use std::sync::Arc;

use pytato_core::backend::Outputs;
use pytato_core::frontend as pt;
use pytato_core::{Array, ArrayData, DType, DictOfNamedArrays, NodeKind};
use pytato_transform::analysis::{depth, node_type_counts, num_nodes, num_nodes_deduplicated, num_users};
use pytato_transform::cse::deduplicate;
use pytato_transform::dce::eliminate_dead_code;
use pytato_transform::mapper::{inputs, topological_sort, users};

fn single(o: Outputs) -> Array {
    match o {
        Outputs::Single(a) => a,
        Outputs::Named(_) => panic!("expected one output"),
    }
}

#[test]
fn cse_merges_equal_subexpressions_across_outputs() {
    let x = pt::placeholder("x", [4], DType::F64).unwrap();
    let a = pt::exp(&pt::sin(&x).unwrap()).unwrap();
    let b = pt::exp(&pt::sin(&x).unwrap()).unwrap();
    let dict = DictOfNamedArrays::new([("a", a.clone()), ("b", b.clone())]).unwrap();
    let outputs = Outputs::from(dict);
    assert_eq!(num_nodes(&outputs), 5);
    assert_eq!(num_nodes_deduplicated(&outputs), 3);
    let Outputs::Named(d) = deduplicate(&outputs).unwrap() else { panic!() };
    assert!(d.get("a").unwrap().ptr_eq(d.get("b").unwrap()), "both outputs are one node");
    assert_eq!(num_nodes(&Outputs::Named(d)), 3);
}

#[test]
fn cse_merges_data_wrappers_over_one_buffer_only() {
    let buffer = Arc::new(ArrayData::from(ndarray::arr1(&[1.0, 2.0]).into_dyn()));
    let w1 = pt::data_wrapper(buffer.clone(), None).unwrap();
    let w2 = pt::data_wrapper(buffer.clone(), None).unwrap();
    let other = pt::data_wrapper(Arc::new((*buffer).clone()), None).unwrap();
    let y = single(deduplicate(&(&(&(&w1 + &w2) + &other)).into()).unwrap());
    let wrappers: Vec<Array> = inputs([&y]).into_iter().collect();
    assert_eq!(wrappers.len(), 2, "w1 and w2 merge; the copy of the data stays separate");
}

#[test]
fn dce_cuts_zero_links_and_keeps_tags() {
    let x = pt::placeholder("x", [3], DType::F64).unwrap();
    let y = pt::placeholder("y", [3], DType::F64).unwrap();
    let z = (&pt::zeros_like(&pt::exp(&x).unwrap(), None).unwrap() + &y).tagged(pytato_core::tags::ImplStored).unwrap();
    assert_eq!(inputs([&z]).len(), 2);
    let cleaned = single(eliminate_dead_code(&(&z).into()).unwrap());
    assert_eq!(inputs([&cleaned]).iter().map(|a| a.name().unwrap()).collect::<Vec<_>>(), ["y"]);
    assert!(cleaned.tags().contains(&pytato_core::tags::ImplStored));
    assert_eq!(num_nodes(&(&cleaned).into()), 3, "y, the zero constant plus y, and nothing of x");
}

#[test]
fn users_and_topological_order() {
    let x = pt::placeholder("x", [3], DType::F64).unwrap();
    let s = pt::sin(&x).unwrap();
    let y = &(&s * &s) + &x;
    let order = topological_sort([&y]);
    let pos = |a: &Array| order.iter().position(|n| n.ptr_eq(a)).unwrap();
    for node in &order {
        for child in node.children() {
            assert!(pos(child) < pos(node), "children come first");
        }
    }
    let u = users([&y]);
    assert_eq!(u[&x.id()].len(), 2, "sin(x) and the sum use x");
    assert_eq!(u[&s.id()].len(), 1, "s * s is one user");
    assert_eq!(num_users(&(&y).into())[&y.id()], 1, "the output counts as a use");
    assert_eq!(depth(&(&y).into()), 4);
    let counts = node_type_counts(&(&y).into());
    assert_eq!((counts["Placeholder"], counts["IndexLambda"]), (1, 3));
}

#[test]
fn lowering_keeps_metadata() {
    #[derive(Debug, PartialEq, Eq, Hash)]
    struct ElementAxis;
    impl pytato_core::Tag for ElementAxis {}
    let a = pt::placeholder("a", [2, 3], DType::F64).unwrap();
    let t = pt::transpose(&a, None)
        .unwrap()
        .with_tagged_axis(1, ElementAxis)
        .unwrap()
        .tagged(pytato_core::tags::ImplStored)
        .unwrap();
    let lowered = single(pytato_transform::lower::lower_to_index_lambdas(&(&t).into()).unwrap());
    assert!(matches!(lowered.kind(), NodeKind::IndexLambda(_)));
    assert!(lowered.axes()[1].tags.contains(&ElementAxis));
    assert!(lowered.tags().contains(&pytato_core::tags::ImplStored));
}
