//! Structural equality on heavily shared DAGs, deep chains, and the lifetime of wrapped data.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Weak};

use pytato_core::expr::{BinaryOp, Expr};
use pytato_core::{Array, ArrayData, DType, Shape};

fn placeholder(name: &str) -> Array {
    Array::new_placeholder(Some(name), Shape::from([4]), DType::F64).unwrap()
}

/// `a + b`, elementwise, as an index lambda.
fn add(a: &Array, b: &Array) -> Array {
    let expr = Expr::subscript("_in0", vec![Expr::iname(0)])
        .binary(BinaryOp::Add, Expr::subscript("_in1", vec![Expr::iname(0)]));
    let bindings = BTreeMap::from([(Arc::<str>::from("_in0"), a.clone()), (Arc::<str>::from("_in1"), b.clone())]);
    Array::new_index_lambda(expr, a.shape().clone(), bindings, BTreeMap::new()).unwrap()
}

/// `a + 1`, elementwise.
fn add_one(a: &Array) -> Array {
    let expr = Expr::subscript("_in0", vec![Expr::iname(0)]).binary(BinaryOp::Add, Expr::f64(1.0));
    let bindings = BTreeMap::from([(Arc::<str>::from("_in0"), a.clone())]);
    Array::new_index_lambda(expr, a.shape().clone(), bindings, BTreeMap::new()).unwrap()
}

/// x, x + x, (x + x) + (x + x), ...: `levels` nodes, 2^levels paths from the top to `x`.
fn doubling(leaf: &str, levels: usize) -> Array {
    let mut a = placeholder(leaf);
    for _ in 0..levels {
        a = add(&a, &a);
    }
    a
}

fn hash_of(a: &Array) -> u64 {
    let mut h = DefaultHasher::new();
    a.hash(&mut h);
    h.finish()
}

#[test]
fn equality_on_shared_dags_is_linear() {
    // Two separately built copies share no node; a naive comparison would walk 2^60 paths.
    let a = doubling("x", 60);
    let b = doubling("x", 60);
    assert!(!a.ptr_eq(&b));
    assert_eq!(hash_of(&a), hash_of(&b));
    assert_eq!(a, b);
    assert_ne!(a, doubling("y", 60));
    // Differences at the bottom that keep the hash of the leaves apart are still found.
    let c = {
        let mut c = placeholder("x");
        for level in 0..60 {
            c = if level == 0 {
                add(&c, &placeholder("x").tagged(pytato_core::tags::AssumeNonNegative).unwrap())
            } else {
                add(&c, &c)
            };
        }
        c
    };
    assert_ne!(a, c);
}

const CHAIN: usize = 1_000_000;

fn chain(len: usize) -> Array {
    let mut a = placeholder("x");
    for _ in 0..len {
        a = add_one(&a);
    }
    a
}

fn build_hash_compare_drop() {
    let a = chain(CHAIN);
    let b = chain(CHAIN);
    assert_eq!(hash_of(&a), hash_of(&b));
    assert_eq!(a, b);
    assert_eq!(a.repr(2).matches("IndexLambda").count(), 2, "repr is truncated, not recursive");
    drop(a);
    drop(b);
}

#[test]
fn million_node_chain_on_the_main_thread() {
    build_hash_compare_drop();
}

#[test]
fn million_node_chain_on_a_2mib_stack() {
    std::thread::Builder::new().stack_size(2 << 20).spawn(build_hash_compare_drop).unwrap().join().unwrap();
}

#[test]
fn data_wrapper_data_is_freed_with_the_last_handle() {
    let data = Arc::new(ArrayData::from(ndarray::ArrayD::<f64>::zeros(vec![1000])));
    let weak: Weak<ArrayData> = Arc::downgrade(&data);
    let wrapper = Array::new_data_wrapper(data, Some("d")).unwrap();
    let user = add_one(&wrapper);
    let tagged = wrapper.tagged(pytato_core::tags::ImplStored).unwrap();
    drop(wrapper);
    drop(tagged);
    assert!(weak.upgrade().is_some(), "the DAG still uses the data");
    drop(user);
    assert!(weak.upgrade().is_none(), "no node is left to hold the data");
}

#[test]
fn data_wrappers_are_equal_only_over_the_same_buffer() {
    let data = Arc::new(ArrayData::from(ndarray::ArrayD::<f64>::zeros(vec![3])));
    let a = Array::new_data_wrapper(data.clone(), None).unwrap();
    let b = Array::new_data_wrapper(data.clone(), None).unwrap();
    let c = Array::new_data_wrapper(Arc::new((*data).clone()), None).unwrap();
    assert_eq!(a, b, "same buffer");
    assert_ne!(a, c, "equal contents in another buffer");
}

#[test]
fn expressions_deeper_than_the_limit_are_refused_when_built() {
    use pytato_core::expr::MAX_DEPTH;
    let x = placeholder("x");
    let bindings = move || BTreeMap::from([(Arc::<str>::from("_in0"), x.clone())]);
    // _in0[_0] + 1 + 1 + ...: `levels` levels
    let sum = |levels: usize| {
        let mut e = Expr::subscript("_in0", vec![Expr::iname(0)]);
        for _ in 1..levels {
            e = e.binary(BinaryOp::Add, Expr::f64(1.0));
        }
        e
    };
    // The subscript's index is one level below it.
    let at_limit = sum(MAX_DEPTH - 1);
    assert_eq!(at_limit.depth(), MAX_DEPTH);
    assert!(Array::new_index_lambda(at_limit, Shape::from([4]), bindings(), BTreeMap::new()).is_ok());
    // Far beyond: an error naming the depth, not a stack overflow in a pass (built and dropped
    // on a thread with a large stack, as a deep expression is dropped recursively).
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let deep = sum(200_000);
            let err = Array::new_index_lambda(deep, Shape::from([4]), bindings(), BTreeMap::new()).unwrap_err();
            assert!(err.to_string().contains("200001 levels deep"), "{err}");
        })
        .unwrap()
        .join()
        .unwrap();
}

/// One node of each kind the frontend builds from plain inputs, built anew on every call.
fn one_of_each_kind() -> Vec<Array> {
    use pytato_core::array::Side;
    use pytato_core::s;
    use pytato_frontend as pt;
    let m = Array::new_placeholder(Some("m"), Shape::from([3, 4]), DType::F64).unwrap();
    let v = pt::placeholder("v", [4], DType::F64).unwrap();
    let i = pt::placeholder("i", [2], DType::I64).unwrap();
    let mask = pt::greater(&v, 0.0).unwrap();
    vec![
        m.clone(),
        pt::size_param("n").unwrap(),
        add_one(&v),
        pt::einsum("ij,j->i", &[&m, &v]).unwrap(),
        pt::reshape(&m, [4, 3], pytato_core::Order::C).unwrap(),
        pt::roll(&m, 2, Some(1)).unwrap(),
        pt::transpose(&m, None).unwrap(),
        pt::stack(&[v.clone(), v.clone()], 0).unwrap(),
        pt::concatenate(&[v.clone(), v.clone()], 0).unwrap(),
        m.index(s![1..3, ..]).unwrap(),
        m.index(s![.., &i]).unwrap(),
        pt::placeholder("t", [2, 3, 4], DType::F64).unwrap().index(s![&i, .., &i]).unwrap(),
        pt::nonzero(&mask).unwrap().remove(0),
        pt::add_at(&v, &[pytato_core::indexing::Idx::from(&i)], 1.0).unwrap(),
        pt::sort(&m, pt::SortOptions::default()).unwrap(),
        pt::cumulative_sum(&v, pt::ScanOptions::default()).unwrap(),
        pt::searchsorted(&v, &m, Side::Right, None).unwrap(),
    ]
}

#[test]
fn every_kind_built_twice_is_equal_and_hashes_alike() {
    let (first, second) = (one_of_each_kind(), one_of_each_kind());
    let mut kinds = std::collections::BTreeSet::new();
    for (a, b) in first.iter().zip(&second) {
        assert!(!a.ptr_eq(b) || a.kind_name() == "SizeParam" || a.kind_name() == "Placeholder");
        assert_eq!(hash_of(a), hash_of(b), "{}", a.kind_name());
        assert_eq!(a, b, "{} built twice", a.kind_name());
        // The DAGs below each node too, as a whole (`a[mask]` of two equal masks shares a count).
        kinds.extend(pytato_core::array::post_order([a], Array::children).iter().map(|n| n.kind_name()));
    }
    for kind in ["Scan", "SearchSorted", "Sort", "Nonzero", "Scatter", "Einsum", "AdvancedIndexInNoncontiguousAxes"] {
        assert!(kinds.contains(kind), "{kind} is not covered");
    }
    // Nodes of one kind with other parameters stay apart.
    use pytato_frontend as pt;
    let v = pt::placeholder("v", [4], DType::F64).unwrap();
    assert_ne!(
        pt::cumulative_sum(&v, pt::ScanOptions::default()).unwrap(),
        pt::cumulative_prod(&v, pt::ScanOptions::default()).unwrap()
    );
    let sorted = pt::sort(&v, pt::SortOptions::default()).unwrap();
    assert_ne!(
        pt::searchsorted(&sorted, &v, pytato_core::array::Side::Left, None).unwrap(),
        pt::searchsorted(&sorted, &v, pytato_core::array::Side::Right, None).unwrap()
    );
}
