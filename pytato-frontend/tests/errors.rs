//! Misuse of each frontend function gives a typed error whose message names the operation and
//! shows the shapes, dtypes, axes or values involved.

use pytato_core::{Array, DType, Dim, Error, Order, Result, Shape, s};
use pytato_frontend::{self as pt, Idx, ReduceOptions, TensordotAxes};

fn ph(name: &str, shape: impl Into<Shape>, dtype: DType) -> Array {
    pt::placeholder(name, shape, dtype).unwrap()
}

/// The call failed with an error matching `kind` whose message contains every one of `parts`.
#[track_caller]
fn expect_err(result: Result<Array>, kind: fn(&Error) -> bool, parts: &[&str]) {
    let err = match result {
        Ok(a) => panic!("expected an error, got {a:?}"),
        Err(e) => e,
    };
    assert!(kind(&err), "unexpected error kind: {err:?}");
    let msg = err.to_string();
    for p in parts {
        assert!(msg.contains(p), "message {msg:?} lacks {p:?}");
    }
}

fn broadcast(e: &Error) -> bool {
    matches!(e, Error::BroadcastMismatch { .. })
}
fn dtype(e: &Error) -> bool {
    matches!(e, Error::UnsupportedDType { .. })
}
fn invalid(e: &Error) -> bool {
    matches!(e, Error::InvalidArgument { .. })
}
fn axis(e: &Error) -> bool {
    matches!(e, Error::AxisOutOfRange { .. })
}
fn shape(e: &Error) -> bool {
    matches!(e, Error::ShapeMismatch { .. })
}
fn index(e: &Error) -> bool {
    matches!(e, Error::IndexOutOfRange { .. })
}
fn overflow(e: &Error) -> bool {
    matches!(e, Error::ScalarOutOfRange { .. })
}

#[test]
fn arithmetic() {
    let a = ph("a", [2, 3], DType::F64);
    let b = ph("b", [4], DType::F64);
    expect_err(pt::add(&a, &b), broadcast, &["add", "(2, 3)", "(4,)"]);
    expect_err(pt::multiply(&a, &b), broadcast, &["multiply"]);
    let flags = ph("flags", [3], DType::Bool);
    expect_err(pt::subtract(&flags, &flags), dtype, &["subtract", "bool", "(3,)"]);
    expect_err(pt::negative(&flags), dtype, &["negative", "bool"]);
    let c = ph("c", [3], DType::C64);
    expect_err(pt::floor_divide(&c, 2), dtype, &["floor_divide", "complex64"]);
    expect_err(pt::remainder(&c, &c), dtype, &["remainder", "complex64"]);
    let u = ph("u", [3], DType::U8);
    expect_err(pt::add(&u, 300), overflow, &["300", "uint8"]);
    expect_err(pt::power(&u, -1), overflow, &["-1", "uint8"]);
    let n = ph("n", [Dim::param("n")], DType::F32);
    let m = ph("m", [Dim::param("m")], DType::F32);
    expect_err(pt::divide(&n, &m), broadcast, &["divide", "(n,)", "(m,)"]);
}

#[test]
fn bitwise_and_logic() {
    let f = ph("f", [3], DType::F32);
    expect_err(pt::bitwise_and(&f, 1), dtype, &["bitwise_and", "float32", "(3,)"]);
    expect_err(pt::bitwise_or(&f, &f), dtype, &["bitwise_or"]);
    expect_err(pt::bitwise_xor(1.5, &f), dtype, &["bitwise_xor"]);
    expect_err(pt::invert(&f), dtype, &["invert", "float32"]);
    let g = ph("g", [4], DType::F32);
    expect_err(pt::logical_and(&f, &g), broadcast, &["logical_and", "(3,)", "(4,)"]);
    expect_err(pt::less(&f, &g), broadcast, &["less"]);
    expect_err(pt::where_(&f, &f, &g), broadcast, &["where", "(3,)", "(4,)"]);
}

#[test]
fn math_functions() {
    let c = ph("c", [3], DType::C128);
    expect_err(pt::floor(&c), dtype, &["floor", "complex128"]);
    expect_err(pt::ceil(&c), dtype, &["ceil"]);
    expect_err(pt::arctan2(&c, 1.0), dtype, &["arctan2", "complex128"]);
    let a = ph("a", [3], DType::F64);
    expect_err(pt::maximum(&a, ph("b", [2], DType::F64)), broadcast, &["maximum"]);
}

#[test]
fn reductions() {
    let a = ph("a", [2, 3], DType::F64);
    expect_err(pt::sum(&a, 2), axis, &["sum", "axis 2", "(2, 3)"]);
    expect_err(pt::prod(&a, -3), axis, &["prod", "axis -3"]);
    expect_err(pt::mean(&a, [0, -2]), invalid, &["mean", "repeated"]);
    let empty = ph("e", [0, 3], DType::F64);
    expect_err(pt::max(&empty, 0), invalid, &["max", "zero-size", "(0, 3)", "initial"]);
    expect_err(pt::min(&empty, None), invalid, &["min", "zero-size"]);
    expect_err(pt::all(&a, ReduceOptions::axes(0).initial(true)), invalid, &["all", "initial"]);
    expect_err(pt::mean(&a, ReduceOptions::axes(0).initial(1)), invalid, &["mean", "initial"]);
    let c = ph("c", [3], DType::C64);
    // numpy reduces complex values from `initial` too: no error, an array of the reduced shape
    assert_eq!(pt::max(&c, ReduceOptions::axes(None).initial(0)).expect("complex initial").shape().ndim(), 0);
    expect_err(pt::min(&ph("c0", [0, 2], DType::C128), 0), invalid, &["min", "zero-size", "(0, 2)"]);
    expect_err(pt::any(&a, 5), axis, &["any"]);
}

#[test]
fn einsum() {
    let a = ph("a", [2, 3], DType::F64);
    let b = ph("b", [4, 5], DType::F64);
    expect_err(pt::einsum("ij,jk->ik", &[&a, &b]), invalid, &["einsum", "index 'j'", "(2, 3)", "(4, 5)"]);
    expect_err(pt::einsum("ij,jk->ik", &[&a]), invalid, &["einsum", "2 operands, 1 given"]);
    expect_err(pt::einsum("i1->i", &[&a]), invalid, &["einsum", "invalid character"]);
    expect_err(pt::einsum("ijk->i", &[&a]), invalid, &["einsum", "\"ijk\"", "2 axes"]);
    expect_err(pt::einsum("ij->iz", &[&a]), invalid, &["einsum", "'z'", "no operand"]);
    expect_err(pt::einsum("ij->ii", &[&a]), invalid, &["einsum", "more than once"]);
    expect_err(pt::einsum("......i->i", &[&a]), invalid, &["einsum", "ellipsis"]);
    let row = pt::placeholder("row", [1, 3], DType::F64).unwrap();
    expect_err(pt::einsum("ii->i", &[&row]), invalid, &["einsum", "index 'i'", "repeated in operand 0", "1 and 3"]);
    expect_err(pt::einsum("...j->j", &[&a]), invalid, &["einsum", "'...' stands for 1 of the operands' axes", "\"j\""]);
}

#[test]
fn matmul_dot_vdot_tensordot() {
    let a = ph("a", [2, 3], DType::F64);
    let b = ph("b", [4, 5], DType::F64);
    let s = ph("s", Shape::scalar(), DType::F64);
    expect_err(pt::matmul(&a, &b), invalid, &["matmul", "(2, 3)", "(4, 5)"]);
    expect_err(pt::matmul(&s, &a), invalid, &["matmul", "()"]);
    let p = ph("p", [2, 2, 3], DType::F64);
    let q = ph("q", [3, 3, 2], DType::F64);
    expect_err(pt::matmul(&p, &q), broadcast, &["matmul", "(2, 2, 3)", "(3, 3, 2)"]);
    expect_err(pt::dot(&a, &b), invalid, &["dot", "not aligned", "(2, 3)", "(4, 5)"]);
    expect_err(pt::vdot(&a, &b), invalid, &["vdot", "(2, 3)", "(4, 5)"]);
    expect_err(pt::tensordot(&a, &b, 1), invalid, &["tensordot", "(2, 3)", "(4, 5)"]);
    expect_err(pt::tensordot(&a, &b, 3), invalid, &["tensordot", "3 axes"]);
    expect_err(
        pt::tensordot(&a, &b, TensordotAxes::Pairs(vec![0], vec![])),
        invalid,
        &["tensordot", "differ in length"],
    );
    expect_err(pt::tensordot(&a, &b, TensordotAxes::Pairs(vec![2], vec![0])), axis, &["tensordot", "axis 2"]);
}

#[test]
fn shape_manipulation() {
    let a = ph("a", [2, 6], DType::F64);
    expect_err(pt::reshape(&a, [5, -1], Order::C), shape, &["reshape", "(5, -1)", "(2, 6)"]);
    expect_err(pt::reshape(&a, [-1, -1], Order::C), invalid, &["reshape", "one unknown"]);
    expect_err(pt::reshape(&a, [7], Order::F), shape, &["reshape", "(7,)"]);
    expect_err(pt::transpose(&a, Some(&[0])), invalid, &["transpose", "(2, 6)"]);
    expect_err(pt::transpose(&a, Some(&[0, 0])), invalid, &["transpose", "(2, 6)"]);
    expect_err(pt::swapaxes(&a, 0, 2), axis, &["swapaxes", "axis 2"]);
    expect_err(pt::moveaxis(&a, &[0], &[0, 1]), invalid, &["moveaxis", "differ in length"]);
    expect_err(pt::moveaxis(&a, &[0, 0], &[0, 1]), invalid, &["moveaxis", "repeated"]);
    expect_err(pt::roll(&a, 1, Some(2)), axis, &["roll", "axis 2", "(2, 6)"]);
    expect_err(pt::stack(&[], 0), invalid, &["stack", "at least one"]);
    expect_err(pt::stack(&[a.clone(), ph("b", [2, 5], DType::F64)], 0), shape, &["stack", "(2, 6)", "(2, 5)"]);
    expect_err(pt::stack(std::slice::from_ref(&a), 3), axis, &["stack", "axis 3"]);
    expect_err(pt::concatenate(&[a.clone(), ph("c", [3, 5], DType::F64)], 0), shape, &["concatenate", "(3, 5)"]);
    let s = ph("s", Shape::scalar(), DType::F64);
    expect_err(pt::concatenate(&[s.clone(), s], 0), invalid, &["concatenate", "zero-dimensional"]);
    expect_err(pt::broadcast_to(&a, [3, 6]), broadcast, &["broadcast_to", "(2, 6)", "(3, 6)"]);
    expect_err(pt::broadcast_to(&a, [6]), broadcast, &["broadcast_to"]);
    expect_err(pt::squeeze(&a, 0), invalid, &["squeeze", "axis 0", "(2, 6)"]);
    expect_err(pt::expand_dims(&a, [3]), axis, &["expand_dims", "axis 3", "(2, 6)"]);
    expect_err(pt::expand_dims(&a, [1, 1]), invalid, &["expand_dims", "repeated"]);
    let nm = ph("nm", [Dim::param("n"), Dim::param("m")], DType::F64);
    expect_err(pt::ravel(&nm), shape, &["reshape", "(n, m)"]);
}

#[test]
fn creation() {
    expect_err(pt::full([2], 300, DType::U8), overflow, &["300", "uint8"]);
    expect_err(pt::zeros([2, -1], DType::F64), |e| matches!(e, Error::NegativeLength { .. }), &["full", "-1"]);
    expect_err(pt::arange(0, 10, 0, None), invalid, &["arange", "zero"]);
    expect_err(pt::arange(0.0, 1.0, 0.0, None), invalid, &["arange", "zero"]);
    // A complex step needs a complex dtype (numpy: TypeError); numpy's complex arange(0, 1, 1j) is
    // empty (min(ceil(re), ceil(im)) of 1/1j = -1j).
    let i = num_complex::Complex64::new(0.0, 1.0);
    expect_err(pt::arange(0, 1, i, Some(DType::F64)), dtype, &["arange", "float64", "complex"]);
    let empty = pt::arange(0, 1, i, None).expect("numpy's complex arange");
    assert_eq!((empty.shape().to_string(), empty.dtype()), ("(0,)".to_string(), DType::C128));
    let a = ph("a", [2, 3], DType::F64);
    expect_err(pt::pad(&a, vec![(1, 1)], 0.0), invalid, &["pad", "1 pad widths", "(2, 3)"]);
    let u = ph("u", [2], DType::U8);
    expect_err(pt::full_like(&u, -1, None), overflow, &["-1", "uint8"]);
}

#[test]
fn indexing() {
    let a = ph("a", [5, 6], DType::F64);
    expect_err(a.index(s![0, 0, 0]), invalid, &["index", "too many indices", "(5, 6)", "3 were indexed"]);
    expect_err(a.index(s![5]), index, &["index", "index 5", "axis 0", "(5, 6)"]);
    expect_err(a.index(s![.., -7]), index, &["index", "index -7", "axis 1"]);
    expect_err(a.index(s![..;0]), invalid, &["index", "step cannot be zero", "(5, 6)"]);
    expect_err(a.index(vec![Idx::Ellipsis, Idx::Ellipsis]), invalid, &["index", "single ellipsis"]);
    let f = ph("f", [2], DType::F32);
    expect_err(a.index(s![&f]), dtype, &["index", "float32", "integer"]);
    let mask = ph("mask", [6], DType::Bool);
    expect_err(a.index(s![&mask]), shape, &["index", "(6,)", "axes 0..1", "(5, 6)"]);
    expect_err(a.index(s![.., .., &mask]), invalid, &["index", "too many indices"]);
    let i = ph("i", [2], DType::I64);
    let j = ph("j", [3], DType::I64);
    expect_err(a.index(s![&i, &j]), broadcast, &["index", "(2,)", "(3,)"]);
}

#[test]
fn lengths_that_overflow() {
    expect_err(pt::linspace(0.0, 1.0, usize::MAX, true, None), |e| matches!(e, Error::Overflow { .. }), &["linspace"]);
    expect_err(pt::arange(0, i64::MAX, 1, None).and_then(|a| pt::reshape(&a, [-1, 2], Order::C)), shape, &["reshape"]);
    // (2^62, 4) has 2^64 elements: flattening it overflows int64 rather than mismatching sizes
    let huge = ph("huge", [1i64 << 62, 4], DType::F64);
    expect_err(
        pt::reshape(&huge, [-1], Order::C),
        |e| matches!(e, Error::Overflow { .. }),
        &["reshape", "18446744073709551616", "(4611686018427387904, 4)"],
    );
    expect_err(pt::reshape(&huge, [-1, 3], Order::C), shape, &["reshape", "(-1, 3)"]);
}

#[test]
fn an_index_array_into_an_axis_of_length_zero_must_be_empty() {
    let n = Dim::param("n");
    for length in [Dim::new(0), n.sub(&n).unwrap()] {
        let a = ph("a", [length, Dim::new(10)], DType::F64);
        let five = pt::zeros([5], DType::I64).unwrap();
        expect_err(a.index([Idx::Array(five)]), invalid, &["index", "(5,)", "length 0", "out of"]);
        // An empty index array selects nothing (numpy too); one of unknown length is checked when
        // the program runs.
        let empty = pt::zeros([0], DType::I64).unwrap();
        assert_eq!(a.index([Idx::Array(empty)]).unwrap().shape().to_string(), "(0, 10)");
        let m = ph("i", [Dim::param("m")], DType::I64);
        assert!(a.index([Idx::Array(m)]).is_ok());
    }
}

#[test]
fn einsum_checks_its_subscripts_before_its_operands() {
    let x = ph("x", [2, 2], DType::F64);
    expect_err(pt::einsum("ij,j->jj", &[&x, &x]), invalid, &["'j'", "more than once"]);
    expect_err(pt::einsum("ij,j->j", &[&x]), invalid, &["name 2 operands, 1 given"]);
    expect_err(pt::einsum("ij->k", &[&x]), invalid, &["'k'", "no operand"]);
    expect_err(pt::einsum("i1->i", &[&x]), invalid, &["invalid character '1'"]);
    expect_err(pt::einsum("......i->i", &[&x]), invalid, &["more than one ellipsis"]);
}

#[test]
fn operands_are_bound_by_position_and_numpy_scalar_exponents_are_checked_when_built() {
    let x = ph("x", [3], DType::I64);
    let names = |a: &Array| match a.kind() {
        pytato_core::NodeKind::IndexLambda(il) => il.bindings.keys().map(|k| k.to_string()).collect::<Vec<_>>(),
        other => panic!("{}", other.name()),
    };
    assert_eq!(names(&pt::multiply(3, &x).unwrap()), ["_in1"]);
    assert_eq!(names(&pt::multiply(&x, 3).unwrap()), ["_in0"]);
    let cond = pt::greater(&x, 0).unwrap();
    assert_eq!(names(&pt::where_(&cond, 1, &x).unwrap()), ["_in0", "_in2"]);
    // A size parameter read in an expression takes the first free name after the operands'.
    let m = Dim::param("m");
    let y = ph("y", [m.clone()], DType::I64);
    let with_size = pt::add(pt::multiply(3, &y).unwrap(), pt::full([m], 1i64, DType::I64).unwrap()).unwrap();
    assert_eq!(names(&with_size).len(), 2);
    // A 0-d constant exponent (a numpy scalar) is read in place, and refused now where negative.
    let two = pt::full(Shape::scalar(), 2i64, DType::I64).unwrap();
    assert_eq!(names(&pt::power(&x, &two).unwrap()), ["_in0"]);
    let minus = pt::full(Shape::scalar(), -2i64, DType::I64).unwrap();
    expect_err(pt::power(&x, &minus), invalid, &["negative integer powers", "-2"]);
    // numpy refuses them per element it computes: none where the result surely has no elements;
    // where only a run knows, that run decides (conformance: power_negative_constant_*).
    let empty = ph("empty", [2, 0], DType::I64);
    assert_eq!(pt::power(&empty, -1).unwrap().shape().to_string(), "(2, 0)");
    assert_eq!(pt::power(&empty, &minus).unwrap().shape().to_string(), "(2, 0)");
    let some = ph("some", [Dim::param("k")], DType::I32);
    assert_eq!(pt::power(&some, -1).unwrap().shape().to_string(), "(k,)");
    // An array exponent is checked when the program runs: it stays a binding.
    let e = ph("e", [3], DType::I64);
    assert_eq!(names(&pt::power(&x, &e).unwrap()).len(), 2);
}
