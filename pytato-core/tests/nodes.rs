//! Validation of every node kind's constructor: shapes and dtypes computed, bad input rejected with
//! a typed error that shows what was wrong.

use std::collections::BTreeMap;
use std::sync::Arc;

use pytato_core::array::{Einsum, collect_inputs};
use pytato_core::expr::{BinaryOp, Expr, ReduceOp, ReductionBounds};
use pytato_core::tags::{AssumeNonNegative, ImplInlined, ImplStored, Tag};
use pytato_core::{
    Array, ArrayData, DType, DictOfNamedArrays, Dim, EinsumAxis, Error, IndexItem, NodeKind, NormalizedSlice, Order,
    ReductionDescriptor, Shape,
};

fn n() -> Dim {
    Dim::param("n")
}

fn ph(name: &str, shape: impl Into<Shape>, dtype: DType) -> Array {
    Array::new_placeholder(Some(name), shape.into(), dtype).unwrap()
}

fn bindings(pairs: &[(&str, &Array)]) -> BTreeMap<Arc<str>, Array> {
    pairs.iter().map(|(k, v)| (Arc::<str>::from(*k), (*v).clone())).collect()
}

fn slice(start: i64, stop: i64, step: i64) -> IndexItem {
    IndexItem::Slice(NormalizedSlice { start: Dim::new(start), stop: Dim::new(stop), step })
}

#[test]
fn placeholder() {
    let x = Array::new_placeholder(Some("x"), Shape::from(vec![n(), Dim::new(3)]), DType::F32).unwrap();
    assert_eq!((x.shape().to_string(), x.dtype(), x.name()), ("(n, 3)".into(), DType::F32, Some("x")));
    assert_eq!(x.axes().len(), 2);
    assert!(Array::new_placeholder(None, Shape::from([2]), DType::I8).unwrap().name().is_none());
    let err = Array::new_placeholder(Some("x"), Shape::from([2, -1]), DType::F64).unwrap_err();
    assert!(matches!(err, Error::NegativeLength { .. }), "{err}");
    assert!(matches!(Array::new_placeholder(Some("1x"), Shape::scalar(), DType::F64), Err(Error::InvalidName { .. })));
    // The seed's reserved prefixes are a convention users may use; iname shapes are not.
    assert!(Array::new_placeholder(Some("_pt_in0"), Shape::scalar(), DType::F64).is_ok());
    assert!(matches!(Array::new_placeholder(Some("_0"), Shape::scalar(), DType::F64), Err(Error::ReservedName { .. })));
}

#[test]
fn size_param() {
    let p = Array::new_size_param("n").unwrap();
    assert_eq!((p.ndim(), p.dtype(), p.name()), (0, DType::I64, Some("n")));
    assert!(matches!(Array::new_size_param("_0"), Err(Error::ReservedName { .. })));
}

#[test]
fn data_wrapper() {
    let data = ArrayData::from(ndarray::ArrayD::<u16>::zeros(vec![4, 0]));
    let d = Array::new_data_wrapper(data, Some("table")).unwrap();
    assert_eq!((d.shape().clone(), d.dtype()), (Shape::from([4, 0]), DType::U16));
    assert!(matches!(
        Array::new_data_wrapper(ArrayData::zeros(DType::F64, &[1]), Some("a b")),
        Err(Error::InvalidName { .. })
    ));
}

#[test]
fn index_lambda() {
    let a = ph("a", Shape::from(vec![n(), Dim::new(4)]), DType::F64);
    let p = Array::new_size_param("n").unwrap();
    // result[i] = sum_j a[i, j] * n
    let body = Expr::subscript("_in0", vec![Expr::iname(0), Expr::var("_r0")])
        .binary(BinaryOp::Mul, Expr::var("_in1").cast(DType::F64));
    let bounds = vec![ReductionBounds { iname: "_r0".into(), lower: Dim::new(0), upper: Dim::new(4) }];
    let expr = Expr::reduce(ReduceOp::Sum, bounds, body);
    let descr = BTreeMap::from([(Arc::<str>::from("_r0"), ReductionDescriptor::default())]);
    let il = Array::new_index_lambda(
        expr.clone(),
        Shape::from(vec![n()]),
        bindings(&[("_in0", &a), ("_in1", &p)]),
        descr.clone(),
    )
    .unwrap();
    assert_eq!((il.shape().to_string(), il.dtype()), ("(n,)".into(), DType::F64));
    assert_eq!(il.children().len(), 2);

    // Missing descriptor, stray descriptor.
    let err = Array::new_index_lambda(
        expr.clone(),
        Shape::from(vec![n()]),
        bindings(&[("_in0", &a), ("_in1", &p)]),
        BTreeMap::new(),
    )
    .unwrap_err();
    assert_eq!(err, Error::MissingReductionDescriptor { iname: "_r0".into() });
    let stray = BTreeMap::from([(Arc::<str>::from("_r5"), ReductionDescriptor::default())]);
    assert!(Array::new_index_lambda(Expr::f64(1.0), Shape::scalar(), BTreeMap::new(), stray).is_err());
    // Unknown binding; an iname beyond the result's axes.
    let err = Array::new_index_lambda(expr, Shape::from(vec![n()]), bindings(&[("_in0", &a)]), descr).unwrap_err();
    assert!(matches!(&err, Error::UnknownVariable { name, .. } if name == "_in1"), "{err}");
    assert!(
        Array::new_index_lambda(Expr::iname(1).cast(DType::F64), Shape::from([3]), BTreeMap::new(), BTreeMap::new())
            .is_err()
    );
    // Binding names in the iname namespaces.
    let err = Array::new_index_lambda(Expr::var("_0"), Shape::scalar(), bindings(&[("_0", &p)]), BTreeMap::new())
        .unwrap_err();
    assert!(matches!(err, Error::ReservedName { .. }));
}

#[test]
fn einsum() {
    use EinsumAxis::{Elementwise as E, Reduction as R};
    let a = ph("a", Shape::from(vec![n(), Dim::new(3)]), DType::F32);
    let b = ph("b", [3, 5], DType::F64);
    // ij,jk->ik
    let mm = Array::new_einsum(vec![vec![E(0), R(0)], vec![R(0), E(1)]], vec![a.clone(), b.clone()], BTreeMap::new())
        .unwrap();
    assert_eq!((mm.shape().to_string(), mm.dtype()), ("(n, 5)".into(), DType::F64));
    let NodeKind::Einsum(Einsum { reduction_descriptors, .. }) = mm.kind() else { panic!() };
    assert_eq!(reduction_descriptors.len(), 1, "a default descriptor per reduction index");
    // Length-1 axes broadcast.
    let c = ph("c", [1, 5], DType::F64);
    assert_eq!(
        Array::new_einsum(vec![vec![E(0), E(1)], vec![E(0), E(1)]], vec![b.clone(), c], BTreeMap::new())
            .unwrap()
            .shape(),
        &Shape::from([3, 5])
    );
    // Mismatched lengths, wrong arity, gaps in numbering, an index used twice by one operand.
    let err = Array::new_einsum(vec![vec![E(0), R(0)], vec![E(1), R(0)]], vec![a.clone(), b.clone()], BTreeMap::new())
        .unwrap_err();
    assert!(matches!(err, Error::ShapeMismatch { .. }), "{err}");
    assert!(Array::new_einsum(vec![vec![E(0)]], vec![a.clone()], BTreeMap::new()).is_err());
    assert!(Array::new_einsum(vec![vec![E(1), R(0)]], vec![a.clone()], BTreeMap::new()).is_err());
    // An index used twice by one operand reads a diagonal; the lengths must still agree.
    let sq = ph("sq", [4, 4], DType::F64);
    assert_eq!(
        Array::new_einsum(vec![vec![E(0), E(0)]], vec![sq], BTreeMap::new()).unwrap().shape(),
        &Shape::from([4])
    );
    assert!(Array::new_einsum(vec![vec![E(0), E(0)]], vec![b.clone()], BTreeMap::new()).is_err());
    assert!(Array::new_einsum(vec![], vec![], BTreeMap::new()).is_err());
    let stray = BTreeMap::from([(3, ReductionDescriptor::default())]);
    assert!(Array::new_einsum(vec![vec![E(0), R(0)]], vec![a], stray).is_err());
}

#[test]
fn reshape() {
    let a = ph("a", Shape::from(vec![n(), Dim::new(6)]), DType::I32);
    let r = Array::new_reshape(&a, Shape::from(vec![n().mul_int(2).unwrap(), Dim::new(3)]), Order::F).unwrap();
    assert_eq!(r.shape().to_string(), "(2*n, 3)");
    let err = Array::new_reshape(&a, Shape::from(vec![n(), Dim::new(5)]), Order::C).unwrap_err();
    assert!(matches!(err, Error::ShapeMismatch { .. }));
    assert!(err.to_string().contains("(n, 6)"), "{err}");
    let z = ph("z", [0, 4], DType::F64);
    assert!(Array::new_reshape(&z, Shape::from([2, 0, 7]), Order::C).is_ok());
    let s = ph("s", Shape::scalar(), DType::F64);
    assert!(Array::new_reshape(&s, Shape::from([1, 1]), Order::C).is_ok());
}

#[test]
fn roll_and_permutation() {
    let a = ph("a", [2, 3, 4], DType::F64);
    assert_eq!(Array::new_roll(&a, -7, 2).unwrap().shape(), a.shape());
    assert!(matches!(Array::new_roll(&a, 1, 3), Err(Error::AxisOutOfRange { .. })));
    assert_eq!(Array::new_axis_permutation(&a, vec![2, 0, 1]).unwrap().shape(), &Shape::from([4, 2, 3]));
    for bad in [vec![0, 1], vec![0, 1, 1], vec![0, 1, 3]] {
        assert!(Array::new_axis_permutation(&a, bad).is_err());
    }
}

#[test]
fn stack_and_concatenate() {
    let a = ph("a", Shape::from(vec![n(), Dim::new(2)]), DType::I8);
    let b = ph("b", Shape::from(vec![n(), Dim::new(2)]), DType::U8);
    let s = Array::new_stack(vec![a.clone(), b.clone()], 2).unwrap();
    assert_eq!((s.shape().to_string(), s.dtype()), ("(n, 2, 2)".into(), DType::I16));
    assert!(matches!(Array::new_stack(vec![a.clone()], 3), Err(Error::AxisOutOfRange { .. })));
    assert!(Array::new_stack(vec![], 0).is_err());
    let c = Array::new_concatenate(vec![a.clone(), b.clone(), a.clone()], 0).unwrap();
    assert_eq!(c.shape().to_string(), "(3*n, 2)");
    let d = ph("d", [5, 3], DType::I8);
    let err = Array::new_concatenate(vec![a, d], 0).unwrap_err();
    assert!(err.to_string().contains("(5, 3)"), "{err}");
}

#[test]
fn basic_index() {
    let a = ph("a", [5, 6], DType::F64);
    // a[2, 5:0:-2] selects columns 5, 3, 1.
    let r = Array::new_basic_index(&a, vec![IndexItem::Int(Dim::new(2)), slice(5, 0, -2)]).unwrap();
    assert_eq!(r.shape(), &Shape::from([3]));
    // Empty slices are fine; out-of-range ints and slices are not; step 0 is not.
    assert_eq!(Array::new_basic_index(&a, vec![slice(3, 3, 1), slice(0, 6, 1)]).unwrap().shape(), &Shape::from([0, 6]));
    let err = Array::new_basic_index(&a, vec![IndexItem::Int(Dim::new(5)), slice(0, 6, 1)]).unwrap_err();
    assert!(matches!(err, Error::IndexOutOfRange { index: 5, axis: 0, .. }), "{err}");
    assert!(Array::new_basic_index(&a, vec![slice(0, 7, 1), slice(0, 6, 1)]).is_err());
    assert!(Array::new_basic_index(&a, vec![slice(0, 5, 0), slice(0, 6, 1)]).is_err());
    assert!(Array::new_basic_index(&a, vec![slice(0, 5, 1)]).is_err(), "one index per axis");
    // Symbolic: a[1:n] on length n has length n - 1.
    let s = ph("s", Shape::from(vec![n()]), DType::F64);
    let item = IndexItem::Slice(NormalizedSlice { start: Dim::new(1), stop: n(), step: 1 });
    assert_eq!(Array::new_basic_index(&s, vec![item]).unwrap().shape().to_string(), "(n - 1,)");
    // A step that does not divide a symbolic span leaves affine shapes.
    let item = IndexItem::Slice(NormalizedSlice { start: Dim::new(0), stop: n(), step: 2 });
    assert!(matches!(Array::new_basic_index(&s, vec![item]), Err(Error::NonAffine { .. })));
}

#[test]
fn advanced_index() {
    let a = ph("a", [5, 6, 7], DType::F64);
    let i = ph("i", [2, 3], DType::I64);
    let j = ph("j", [3], DType::I32);
    // a[:, i, j]: contiguous, result (5, 2, 3).
    let c = Array::new_advanced_index_contiguous(
        &a,
        vec![slice(0, 5, 1), IndexItem::Array(i.clone()), IndexItem::Array(j.clone())],
    )
    .unwrap();
    assert_eq!(c.shape(), &Shape::from([5, 2, 3]));
    // a[i, :, j]: non-contiguous, broadcast shape first: (2, 3, 6).
    let nc = Array::new_advanced_index_noncontiguous(
        &a,
        vec![IndexItem::Array(i.clone()), slice(0, 6, 1), IndexItem::Array(j.clone())],
    )
    .unwrap();
    assert_eq!(nc.shape(), &Shape::from([2, 3, 6]));
    // a[0, :, j]: the integer counts as an advanced index, so this is non-contiguous: (3, 6).
    let mixed = vec![IndexItem::Int(Dim::new(0)), slice(0, 6, 1), IndexItem::Array(j.clone())];
    assert!(Array::new_advanced_index_contiguous(&a, mixed.clone()).is_err());
    assert_eq!(Array::new_advanced_index_noncontiguous(&a, mixed).unwrap().shape(), &Shape::from([3, 6]));
    // Index arrays must be integers and broadcast together.
    let f = ph("f", [3], DType::F64);
    let err = Array::new_advanced_index_contiguous(&a, vec![IndexItem::Array(f), slice(0, 6, 1), slice(0, 7, 1)])
        .unwrap_err();
    assert!(matches!(err, Error::UnsupportedDType { dtype: DType::F64, .. }), "{err}");
    let k = ph("k", [4], DType::I64);
    let err = Array::new_advanced_index_contiguous(&a, vec![slice(0, 5, 1), IndexItem::Array(j), IndexItem::Array(k)])
        .unwrap_err();
    assert!(matches!(err, Error::BroadcastMismatch { .. }), "{err}");
    assert!(Array::new_advanced_index_contiguous(&a, vec![slice(0, 5, 1), slice(0, 6, 1), slice(0, 7, 1)]).is_err());
}

#[test]
fn named_arrays() {
    let x = ph("x", [3], DType::F64);
    let y = ph("y", [2, 2], DType::I64);
    let d = DictOfNamedArrays::new([("u", x.clone()), ("v", y.clone())]).unwrap();
    assert_eq!(d.names().collect::<Vec<_>>(), ["u", "v"]);
    let v = Array::new_named_array(&d, "v").unwrap();
    assert_eq!((v.shape().clone(), v.dtype()), (Shape::from([2, 2]), DType::I64));
    assert!(Array::new_named_array(&d, "w").is_err());
    assert!(DictOfNamedArrays::new([("u", x.clone()), ("u", y.clone())]).is_err());
    assert!(DictOfNamedArrays::new([("_pt_out", x.clone())]).is_ok(), "a user may name an output _pt_out");
    assert!(DictOfNamedArrays::new([("_1", x.clone())]).is_err());
    assert_eq!(d, DictOfNamedArrays::new([("v", y), ("u", x)]).unwrap());
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct ElementAxis;
impl Tag for ElementAxis {}

#[test]
fn tags_on_arrays_and_axes() {
    let x = ph("x", [3, 4], DType::F64);
    let t = x.tagged(ImplStored).unwrap().tagged(AssumeNonNegative).unwrap();
    assert_eq!(t.tags().len(), 2);
    assert_ne!(t, x, "tags take part in equality");
    assert!(matches!(t.tagged(ImplInlined), Err(Error::UniqueTagConflict { .. })));
    assert_eq!(t.tags_of_type::<ImplStored>().count(), 1);
    assert_eq!(t.without_tags(t.tags()), x);
    let ax = x.with_tagged_axis(1, ElementAxis).unwrap();
    assert!(ax.axes()[1].tags.contains(&ElementAxis));
    assert!(ax.axes()[0].tags.is_empty());
    assert_ne!(ax, x);
    assert!(matches!(x.with_tagged_axis(2, ElementAxis), Err(Error::AxisOutOfRange { .. })));
}

#[test]
fn duplicate_input_names_are_reported() {
    let a = ph("x", [3], DType::F64);
    let b = ph("x", [4], DType::F64);
    let same = ph("x", [3], DType::F64);
    let sum = |p: &Array, q: &Array| {
        let e = Expr::subscript("_in0", vec![Expr::iname(0)])
            .binary(BinaryOp::Add, Expr::subscript("_in1", vec![Expr::iname(0)]));
        Array::new_index_lambda(e, p.shape().clone(), bindings(&[("_in0", p), ("_in1", q)]), BTreeMap::new())
    };
    // The same declaration twice is one input.
    let ok = sum(&a, &same).unwrap();
    assert_eq!(collect_inputs([&ok]).unwrap().named.len(), 1);
    // Different inputs with one name: the error names both.
    let c = Array::new_concatenate(vec![a, b], 0).unwrap();
    let err = collect_inputs([&c]).err().expect("duplicate name");
    let msg = err.to_string();
    assert!(matches!(err, Error::DuplicateName { .. }));
    assert!(msg.contains("shape=(3,)") && msg.contains("shape=(4,)"), "{msg}");
}

#[test]
fn display_is_deterministic_and_truncated() {
    let x = ph("x", [3], DType::F64);
    let mut y = x.clone();
    for _ in 0..6 {
        y = Array::new_roll(&y, 1, 0).unwrap();
    }
    let repr = format!("{y:?}");
    assert_eq!(repr, format!("{y}"));
    assert!(
        repr.starts_with("Roll(shift=1, axis=0, array=Roll(shift=1, axis=0, array=Roll(shift=1, axis=0, array=…"),
        "{repr}"
    );
    assert_eq!(format!("{x:?}"), "Placeholder(name=\"x\", shape=(3,), dtype=float64)");
    assert_eq!(y.repr(10).matches("Roll(").count(), 6);
}
