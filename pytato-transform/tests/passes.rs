//! What each pass does, on small DAGs whose expected form is written out by hand.

use std::sync::Arc;

use pytato_core::{Array, ArrayData, DType, DictOfNamedArrays, NodeKind};
use pytato_frontend as pt;
use pytato_runtime::backend::Outputs;
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

#[test]
fn reshapes_of_unit_axes_lower_to_plain_reads() {
    use pytato_core::expr::Expr;
    let read = |reshaped: &Array| -> Expr {
        let lowered = pytato_transform::lower::lower_node(reshaped).unwrap();
        let NodeKind::IndexLambda(lambda) = lowered.kind() else { panic!("an index lambda") };
        lambda.expr.clone()
    };
    let x = pt::placeholder("x", [10, 4], DType::F64).unwrap();
    // axes of length 1 inserted: the input axes read the inames of their output axes
    let inserted = pt::reshape(&x, [10, 1, 1, 4], pytato_core::Order::C).unwrap();
    assert_eq!(read(&inserted), Expr::subscript("_in0", vec![Expr::iname(0), Expr::iname(3)]));
    // and removed, in F order too (unit axes do not change either order's flattening)
    let y = pt::placeholder("y", [1, 10, 1, 4, 1], DType::F64).unwrap();
    let removed = pt::reshape(&y, [10, 4], pytato_core::Order::F).unwrap();
    let zero = Expr::i64(0);
    assert_eq!(
        read(&removed),
        Expr::subscript("_in0", vec![zero.clone(), Expr::iname(0), zero.clone(), Expr::iname(1), zero])
    );
    // a reshape that merges axes still divides
    let merged = pt::reshape(&x, [40], pytato_core::Order::C).unwrap();
    assert!(read(&merged).to_string().contains("//"), "{}", read(&merged));
}

mod materialization {
    use super::*;
    use pytato_core::tags::{ImplInlined, ImplStored};
    use pytato_transform::analysis::materialized;
    use pytato_transform::materialize::{Mpms, StoreShared, materialize};

    fn stored_names(o: &Outputs) -> usize {
        materialized(o).len()
    }

    #[test]
    fn mpms_stores_shared_nodes_with_several_materialized_predecessors() {
        let x = pt::placeholder("x", [3], DType::F64).unwrap();
        let y = pt::placeholder("y", [3], DType::F64).unwrap();
        // s has one materialized predecessor (x) and two users: inlined under MPMS.
        let s = pt::sin(&x).unwrap();
        // t has two (x, y) and two users: stored.
        let t = &x * &y;
        let out = &(&(&s + &t) * &s) - &t;
        let o = materialize(&(&out).into(), &mut Mpms).unwrap();
        let stored = materialized(&o);
        assert_eq!(stored.len(), 2, "t and the output");
        assert!(stored.iter().any(|a| a.shape() == t.shape() && matches!(a.kind(), NodeKind::IndexLambda(il) if il.expr.to_string().contains('*') && il.bindings.len() == 2 && il.bindings.values().all(Array::is_input))));
        // Storing every shared node stores s as well.
        assert_eq!(stored_names(&materialize(&(&out).into(), &mut StoreShared).unwrap()), 3);
    }

    #[test]
    fn explicit_tags_win() {
        let x = pt::placeholder("x", [3], DType::F64).unwrap();
        let y = pt::placeholder("y", [3], DType::F64).unwrap();
        let t = (&x * &y).tagged(ImplInlined).unwrap();
        let u = pt::exp(&x).unwrap().tagged(ImplStored).unwrap();
        let out = &(&t + &t) + &u;
        let stored = materialized(&materialize(&(&out).into(), &mut StoreShared).unwrap());
        assert_eq!(stored.len(), 2, "u (tagged) and the output; t is tagged inlined");
    }
}

mod tag_unification {
    use super::*;
    use pytato_core::Tag;
    use pytato_transform::unify_tags::{IgnoredForPropagation, unify_axes_tags};

    #[derive(Debug, PartialEq, Eq, Hash)]
    struct ElementAxis;
    impl Tag for ElementAxis {}
    #[derive(Debug, PartialEq, Eq, Hash)]
    struct DofAxis;
    impl Tag for DofAxis {}

    fn only_element(t: &pytato_core::tags::TagRef) -> bool {
        t.downcast_ref::<ElementAxis>().is_some()
    }

    #[test]
    fn tags_flow_through_einsum_in_both_directions() {
        // u: (e, j) with e tagged; the operator a: (i, j); result (e, i). The reduction index j
        // links u's axis 1 with a's axis 1, and DofAxis on a's axis 1 reaches u's axis 1 too.
        let u = pt::placeholder("u", [10, 4], DType::F64).unwrap().with_tagged_axis(0, ElementAxis).unwrap();
        let a = pt::placeholder("a", [4, 4], DType::F64).unwrap().with_tagged_axis(1, DofAxis).unwrap();
        let r = pt::einsum("ij,ej->ei", &[&a, &u]).unwrap();
        let out = single(unify_axes_tags(&(&r).into(), |_| true).unwrap());
        assert!(out.axes()[0].tags.contains(&ElementAxis));
        let NodeKind::Einsum(e) = out.kind() else { panic!() };
        assert!(e.args[1].axes()[1].tags.contains(&DofAxis), "u's axis 1 learned a's tag");
        // With a filter, only element tags move.
        let filtered = single(unify_axes_tags(&(&r).into(), only_element).unwrap());
        let NodeKind::Einsum(e) = filtered.kind() else { panic!() };
        assert!(!e.args[1].axes()[1].tags.contains(&DofAxis));
    }

    #[test]
    fn ignored_axes_neither_give_nor_take() {
        let u = pt::placeholder("u", [5], DType::F64).unwrap().with_tagged_axis(0, ElementAxis).unwrap();
        let blocked = pt::sin(&u).unwrap().with_tagged_axis(0, IgnoredForPropagation).unwrap();
        let after = pt::cos(&blocked).unwrap();
        let out = single(unify_axes_tags(&(&after).into(), |_| true).unwrap());
        // sin's axis is ignored, so the chain u -> sin -> cos is cut there.
        assert!(!out.axes()[0].tags.contains(&ElementAxis));
        let plain = pt::cos(&pt::sin(&u).unwrap()).unwrap();
        assert!(single(unify_axes_tags(&(&plain).into(), |_| true).unwrap()).axes()[0].tags.contains(&ElementAxis));
    }

    #[test]
    fn reductions_take_and_give_the_tags_of_the_axes_they_run_along() {
        // einsum: a's axis 1 (DofAxis) is summed over reduction 0; the descriptor learns the tag.
        let a = pt::placeholder("a", [4, 4], DType::F64).unwrap().with_tagged_axis(1, DofAxis).unwrap();
        let u = pt::placeholder("u", [10, 4], DType::F64).unwrap();
        let r = pt::einsum("ij,ej->ei", &[&a, &u]).unwrap();
        let out = single(unify_axes_tags(&(&r).into(), |_| true).unwrap());
        let NodeKind::Einsum(e) = out.kind() else { panic!() };
        assert!(e.reduction_descriptors[&0].tags.contains(&DofAxis));
        // A sum (an index lambda) over u's axis 0 (ElementAxis): its `_r0` learns the tag.
        let tagged = u.with_tagged_axis(0, ElementAxis).unwrap();
        let total = pt::sum(&tagged, 0).unwrap();
        let out = single(unify_axes_tags(&(&total).into(), |_| true).unwrap());
        let NodeKind::IndexLambda(il) = out.kind() else { panic!("{}", out.kind_name()) };
        assert!(
            il.reduction_descriptors.values().all(|d| d.tags.contains(&ElementAxis)),
            "{:?}",
            il.reduction_descriptors
        );
        // And the other way: a tag on the reduction reaches the operand axis it runs along.
        let summed = pt::sum(&u, 1).unwrap().map_reduction_tags(|_, t| t.with(DofAxis)).unwrap();
        let out = single(unify_axes_tags(&(&summed).into(), |_| true).unwrap());
        let NodeKind::IndexLambda(il) = out.kind() else { panic!() };
        let operand = il.bindings.values().next().unwrap();
        assert!(operand.axes()[1].tags.contains(&DofAxis) && !operand.axes()[0].tags.contains(&DofAxis));
    }

    #[test]
    fn tags_flow_through_calls_into_bodies_and_out_to_results() {
        use pytato_core::function::trace_call;
        // f(a) = transpose(sin(a)): the argument's axis 0 is the result's axis 1.
        let u = pt::placeholder("u", [10, 3], DType::F64).unwrap().with_tagged_axis(0, ElementAxis).unwrap();
        let f = |args: &[Array]| Ok(vec![pt::transpose(&pt::sin(&args[0])?, None)?]);
        let r = trace_call(f, &[&u]).unwrap().remove(0);
        let out = single(unify_axes_tags(&(&r).into(), |_| true).unwrap());
        assert!(out.axes()[1].tags.contains(&ElementAxis) && !out.axes()[0].tags.contains(&ElementAxis));
        // The body learned it too: its parameter and the sin inside.
        let NodeKind::CallResult { function, .. } = out.kind() else { panic!("{}", out.kind_name()) };
        let (_, parameter) = function.parameters().next().unwrap();
        assert!(parameter.axes()[0].tags.contains(&ElementAxis));
        let result = function.returns().values().next().unwrap();
        assert!(result.axes()[1].tags.contains(&ElementAxis));
        // And the values are those of the untagged DAG: tags change nothing computed.
        use pytato_runtime::backend::Backend;
        let interp = pytato_backend_interp::Interpreter;
        let data = pytato_runtime::backend::NamedData::from([(
            "u".to_string(),
            ArrayData::from(ndarray::Array2::from_shape_fn((10, 3), |(i, j)| (i * 3 + j) as f64).into_dyn()),
        )]);
        let run = |a: &Array| interp.compile(&a.into()).unwrap().run(&data).unwrap();
        assert_eq!(run(&out), run(&r));
    }

    #[test]
    fn reshapes_pass_tags_only_where_they_say_which_axes_they_keep() {
        let tagged = |shape: &[i64]| {
            pt::placeholder("x", shape.to_vec(), DType::F64)
                .unwrap()
                .with_tagged_axis(0, ElementAxis)
                .unwrap()
                .with_tagged_axis(shape.len() - 1, DofAxis)
                .unwrap()
        };
        let tags_of = |a: &Array| -> Vec<(bool, bool)> {
            let out = single(unify_axes_tags(&a.into(), |_| true).unwrap());
            out.axes().iter().map(|ax| (ax.tags.contains(&ElementAxis), ax.tags.contains(&DofAxis))).collect()
        };
        // A plain reshape: even where leading or trailing lengths agree, nothing passes. (10, 4)
        // to (5, 2, 4) keeps the 4, and (5, 4) to (5, 1, 4) looks like an inserted axis, but
        // the shapes alone cannot say so (pytato's rule and its test).
        let order = pytato_core::Order::C;
        assert_eq!(tags_of(&pt::reshape(&tagged(&[10, 4]), [5, 2, 4], order).unwrap()), [(false, false); 3]);
        assert_eq!(tags_of(&pt::reshape(&tagged(&[5, 4]), [5, 1, 4], order).unwrap()), [(false, false); 3]);
        // expand_dims, a new axis in an index, and keepdims say which axes are new.
        let (e, d, none) = ((true, false), (false, true), (false, false));
        assert_eq!(tags_of(&pt::expand_dims(&tagged(&[5, 4]), 1).unwrap()), [e, none, d]);
        let x = tagged(&[5, 4]);
        assert_eq!(tags_of(&x.index(pytato_core::s![.., pytato_core::NewAxis, ..]).unwrap()), [e, none, d]);
        let kept = pt::sum(&x, pt::ReduceOptions::axes(1).keepdims(true)).unwrap();
        assert_eq!(tags_of(&kept), [e, none]);
        // squeeze is an index of position 0 along the squeezed axes, so the others keep theirs.
        assert_eq!(tags_of(&pt::squeeze(&tagged(&[5, 1, 4]), None).unwrap()), [e, d]);
        let squeezed = pt::squeeze(&tagged(&[5, 1, 4]), 1).unwrap();
        assert_eq!(squeezed.kind_name(), "BasicIndex");
    }

    #[test]
    fn broadcast_axes_are_not_identified() {
        let u = pt::placeholder("u", [1, 5], DType::F64).unwrap().with_tagged_axis(0, ElementAxis).unwrap();
        let v = pt::placeholder("v", [3, 5], DType::F64).unwrap();
        let out = single(unify_axes_tags(&(&(&u + &v)).into(), |_| true).unwrap());
        assert!(!out.axes()[0].tags.contains(&ElementAxis), "a length-1 axis broadcast to 3 is another axis");
    }
}

#[test]
fn distributive_law_respects_the_callback() {
    use pytato_transform::einsum::apply_distributive_law;
    let m = pt::placeholder("m", [3, 3], DType::F64).unwrap();
    let u = pt::placeholder("u", [3], DType::F64).unwrap();
    let v = pt::placeholder("v", [3], DType::F64).unwrap();
    let e = pt::einsum("ij,j->i", &[&m, &(&u - &v)]).unwrap();
    let kept = single(apply_distributive_law(&(&e).into(), |_| false).unwrap());
    assert!(kept.ptr_eq(&e));
    let split = apply_distributive_law(&(&e).into(), |_| true).unwrap();
    assert_eq!(node_type_counts(&split)["Einsum"], 2);
}

#[test]
fn drawings_show_every_node_and_edge() {
    use pytato_transform::draw::{to_dot, to_html, to_svg};
    let x = pt::placeholder("x", [3], DType::F64).unwrap();
    let y = pt::exp(&pt::sin(&x).unwrap()).unwrap().tagged(pytato_core::tags::ImplStored).unwrap();
    let dict = DictOfNamedArrays::new([("a", y.clone()), ("b", x.clone())]).unwrap();
    let outputs = Outputs::from(dict);
    let dot = to_dot(&outputs);
    assert_eq!(dot.matches(" [label=").count(), 3 + 2, "three nodes and two output boxes");
    assert_eq!(dot.matches(" -> ").count(), 2 + 2, "x -> sin -> exp, and one edge per output");
    assert!(dot.contains("Placeholder x") && dot.contains("(3,) float64") && dot.contains("ImplStored"));
    let svg = to_svg(&outputs).unwrap();
    assert!(svg.contains("<svg") && svg.contains("Placeholder x"));
    let html = to_html(&outputs, "a <test>").unwrap();
    assert!(html.contains("a &lt;test&gt;") && html.contains("<svg"));
}

#[test]
fn a_data_flow_from_no_placeholders_draws_an_empty_picture() {
    use pytato_transform::draw::{dot_to_svg, placeholder_data_flow_dot};
    // A DAG of constants has no placeholder data flow: the layout engine asserts on empty graphs.
    let outputs = Outputs::from(pt::ones([3], DType::F64).unwrap());
    let svg = dot_to_svg(&placeholder_data_flow_dot(&outputs)).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"), "{svg}");
}

#[test]
fn cse_never_merges_distinct_unnamed_inputs() {
    let a = pytato_core::Array::new_placeholder(None, pytato_core::Shape::from([3]), DType::F64).unwrap();
    let b = pytato_core::Array::new_placeholder(None, pytato_core::Shape::from([3]), DType::F64).unwrap();
    assert_ne!(a, b);
    assert_eq!(a, a.clone());
    let y = single(deduplicate(&(&(&a + &b)).into()).unwrap());
    assert_eq!(inputs([&y]).len(), 2);
}

mod analysis_questions {
    use pytato_core::{DType, Error};
    use pytato_frontend as pt;
    use pytato_transform::analysis::{
        is_einsum_similar_to_subscript, node_multiplicities, num_nodes, num_nodes_deduplicated, transitive_users,
    };

    #[test]
    fn einsum_similarity_is_up_to_letter_names_and_nothing_else() {
        let a = pt::placeholder("a", [3, 4], DType::F64).unwrap();
        let b = pt::placeholder("b", [4, 5], DType::F64).unwrap();
        let mm = pt::einsum("ij,jk->ik", &[&a, &b]).unwrap();
        for (spec, expected) in [
            ("ij,jk->ik", true),
            ("xy,yz->xz", true),
            ("ij,jk->ki", false),  // transposed output
            ("ij,kj->ik", false),  // b read transposed
            ("ij,jk->i", false),   // k summed
            ("ij,jk->ikl", false), // an output axis too many
            ("ij->ij", false),     // one operand
            ("ij,jkl->ik", false), // b has two axes
        ] {
            assert_eq!(is_einsum_similar_to_subscript(&mm, spec).unwrap(), expected, "{spec}");
        }
        // Two summed indices must stay two.
        let t = pt::placeholder("t", [3, 4, 5], DType::F64).unwrap();
        let full = pt::einsum("ijk->", &[&t]).unwrap();
        assert!(is_einsum_similar_to_subscript(&full, "abc->").unwrap());
        assert!(!is_einsum_similar_to_subscript(&full, "aab->").unwrap());
        for bad in ["ij,jk", "...j,jk->k", "ij,jk->ii"] {
            assert!(matches!(is_einsum_similar_to_subscript(&mm, bad), Err(Error::InvalidArgument { .. })), "{bad}");
        }
        assert!(is_einsum_similar_to_subscript(&a, "ij->ij").is_err());
    }

    #[test]
    fn multiplicities_count_the_copies_cse_would_merge() {
        let x = pt::placeholder("x", [3], DType::F64).unwrap();
        let copies: Vec<_> = (0..4).map(|_| pt::exp(&x).unwrap()).collect();
        let total = copies.iter().skip(1).fold(copies[0].clone(), |acc, c| &acc + c);
        let outputs = (&total).into();
        let multiplicities = node_multiplicities(&outputs);
        let exp = multiplicities.iter().find(|(n, _)| n == &copies[0]).unwrap().1;
        assert_eq!(exp, 4);
        assert_eq!(multiplicities.iter().map(|(_, m)| m).sum::<usize>(), num_nodes(&outputs));
        assert_eq!(multiplicities.len(), num_nodes_deduplicated(&outputs));
    }

    #[test]
    fn transitive_users_follow_every_path_once() {
        let x = pt::placeholder("x", [3], DType::F64).unwrap();
        let y = pt::placeholder("y", [3], DType::F64).unwrap();
        let s = pt::sin(&x).unwrap();
        let (a, b) = (&s * 2.0, &s + &y);
        let out = &a * &b;
        let users = transitive_users(&(&out).into(), &s);
        assert_eq!(users.len(), 3);
        assert!(users.iter().any(|u| u.ptr_eq(&a)) && users.iter().any(|u| u.ptr_eq(&out)));
        assert!(transitive_users(&(&out).into(), &out).is_empty());
        assert_eq!(transitive_users(&(&out).into(), &y).len(), 2);
    }
}

mod mapping_through_calls {
    use pytato_core::function::trace_call;
    use pytato_core::{Array, DType, Result};
    use pytato_frontend as pt;
    use pytato_transform::analysis::num_call_sites;
    use pytato_transform::context::map_copy_through_calls;
    use pytato_transform::mapper::CopyMapper;

    /// Counts the index lambdas it rebuilds (unchanged).
    struct Count(usize);
    impl CopyMapper for Count {
        fn map_index_lambda(&mut self, node: &Array, children: &[Array]) -> Result<Array> {
            self.0 += 1;
            node.with_children(children.to_vec())
        }
    }

    #[test]
    fn each_function_body_is_mapped_once_however_often_it_is_called() {
        let x = pt::placeholder("x", [3], DType::F64).unwrap();
        let f = |a: &[Array]| Ok(vec![pt::exp(&(&a[0] * 2.0))?]); // two lambdas in the body
        let once = trace_call(f, &[&x]).unwrap().remove(0);
        let twice = trace_call(f, &[&once]).unwrap().remove(0);
        // g calls f inside: f's body is one function wherever it is called from.
        let g = |a: &[Array]| Ok(vec![&trace_call(f, &[&a[0]])?[0] + 1.0]);
        let third = trace_call(g, &[&twice]).unwrap().remove(0);
        let outputs = (&third).into();
        assert_eq!(num_call_sites(&outputs), 4); // f(x), f(f(x)), g(.), f(a) in g
        let mut count = Count(0);
        let mapped = map_copy_through_calls(&mut count, &outputs).unwrap();
        // f's body (2 lambdas) once, g's body (the `+ 1`) once; the caller has no lambdas.
        assert_eq!(count.0, 3);
        // Nothing changed: the very same nodes (equal functions, equal calls).
        assert!(matches!(mapped, pytato_runtime::backend::Outputs::Single(a) if a == third));
    }
}

#[test]
fn stacks_and_concatenations_of_many_arrays_lower_to_shallow_expressions() {
    let parts: Vec<Array> = (0..5000).map(|k| pt::placeholder(&format!("x{k}"), [2], DType::F64).unwrap()).collect();
    for joined in [pt::stack(&parts, 0).unwrap(), pt::concatenate(&parts, 0).unwrap()] {
        let lowered = pytato_transform::lower::lower_node(&joined).unwrap();
        let NodeKind::IndexLambda(lambda) = lowered.kind() else { panic!("an index lambda") };
        // a balanced tree of conditionals: 13 levels for 5000 parts, and a read and its index
        assert!(lambda.expr.depth() <= 20, "depth {}", lambda.expr.depth());
    }
}

#[test]
fn dead_code_elimination_turns_zeros_like_into_zeros() {
    let x = pt::placeholder("x", [10, 4], DType::F64).unwrap();
    let b = pt::placeholder("b", [3], DType::Bool).unwrap();
    for (like, plain) in [
        (pt::zeros_like(&x, None).unwrap(), pt::zeros([10, 4], DType::F64).unwrap()),
        (pt::full_like(&x, -0.0, None).unwrap(), pt::full([10, 4], -0.0, DType::F64).unwrap()),
        (pt::ones_like(&b, None).unwrap(), pt::ones([3], DType::Bool).unwrap()),
    ] {
        let cleaned = single(eliminate_dead_code(&(&like).into()).unwrap());
        assert_eq!(cleaned, plain, "{like:?}");
    }
}
