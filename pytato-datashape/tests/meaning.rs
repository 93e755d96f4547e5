//! What datashapes mean: the seed's aliases (fresh variables at each use), parametric
//! constructors and equations; arrays and records of arrays; constructs without an array meaning.

use pytato_core::{ArrayData, DType, Error, Shape};
use pytato_datashape::{self as datashape, ArrayType, Scope, Statement, parse_module, parse_type};
use pytato_runtime::backend::{NamedViews, Outputs};
use pytato_runtime::binding::Signature;

/// Seed 003's definitions and claims. The seed composes `Dim` with `Dim2` and counts four lengths:
/// `Dim` is read as a second two-length alias.
const SEED: &str = "
Dim  = N, M
Dim2 = N, M
Quaternion = 4, 4, int32
{x: Quaternion, y: Quaternion}
Dim, Dim2, int32 = a, b, c, d, int32
RGBA = {r: int32, g: int32, b: int32, a: int8}
Lengths = {1,2,3}
Lengths * 3
ShortStrings = Var(0, 5)*char
5*ShortStrings
Stream(RGBA)
MaybeFloat = Either float nan
A, B, ( A, B -> Var(A, B) ), int32
Point T = {x: T, y: T}
Point int32 = {x: int32, y: int32}
ctensor4 A B C D = A, B, C, D, complex64
x = ctensor4 A B C D
rank x     = 4
outerdim x = A
innerdim x = D
";

#[test]
fn the_seeds_claims_hold_and_its_wrong_reading_does_not() {
    let module = parse_module(SEED).unwrap();
    let scope = Scope::check(&module).unwrap_or_else(|e| panic!("{e}"));
    // NOT THIS: composing the aliases does not make two rigid lengths.
    let wrong = pytato_datashape::parse_statement("Dim, Dim2, int32 = a, b, a, b, int32").unwrap();
    let Statement::Equation(lhs, rhs) = &wrong else { panic!("an equation") };
    assert!(!scope.equivalent(lhs, rhs).unwrap());
    let mut with_wrong = module.clone();
    with_wrong.statements.push(wrong);
    let err = Scope::check(&with_wrong).unwrap_err();
    assert!(err.to_string().contains("does not hold") && err.to_string().contains("a, b, a, b"), "{err}");
    // Each use of an alias has variables of its own.
    let expanded = scope.expand_text("Dim2, Dim2, int32").unwrap();
    let Some(pytato_datashape::Type::Seq(items)) = Some(expanded.clone()) else { panic!("{expanded}") };
    assert_eq!(items.len(), 5);
    let names: std::collections::BTreeSet<String> = items[..4].iter().map(ToString::to_string).collect();
    assert_eq!(names.len(), 4, "{expanded}");
    assert_eq!(scope.expand_text("Point float32").unwrap(), parse_type("{x: float32, y: float32}").unwrap());
    assert_eq!(scope.expand_text("5*ShortStrings").unwrap().to_string(), "5, Var(0, 5), char");
}

#[test]
fn definitions_that_cannot_expand_are_errors() {
    for (text, part) in [
        ("Point int32", "no constructor `Point`"),
        ("P T = {x: T}\nP int32 float32", "takes 1 argument(s), given 2"),
        ("P T = {x: T}\nP", "takes 1 argument(s)"),
        ("A = A, int32\nA", "recursive"),
        ("D = 2\nD = 3", "defined twice"),
        ("rank int32 int32", "one type"),
    ] {
        let err = Scope::check(&parse_module(text).unwrap()).unwrap_err();
        assert!(err.to_string().contains(part), "{text}: {err}");
    }
}

#[test]
fn arrays_and_records_of_arrays() {
    let scope = Scope::check(&parse_module("Quaternion = 4, 4, int32\nDim2 = N, M").unwrap()).unwrap();
    assert_eq!(
        scope.array_type("2, 3, int32").unwrap(),
        ArrayType::Array { shape: Shape::from([2, 3]), dtype: DType::I32, bounds: vec![] }
    );
    assert_eq!(
        scope.array_type("2, float16").unwrap(),
        ArrayType::Array { shape: Shape::from([2]), dtype: DType::F16, bounds: vec![] }
    );
    let q = scope.placeholders("{x: Quaternion, y: Quaternion}").unwrap();
    assert_eq!(q.get("y").unwrap().shape(), &Shape::from([4, 4]));
    assert_eq!(q.get("x").unwrap().dtype(), DType::I32);
    let m = scope.placeholder("m", "Dim2, float").unwrap();
    // Fresh names: `N` and `M` with this use's number.
    let dims: Vec<String> = m.shape().dims().iter().map(ToString::to_string).collect();
    assert!(dims[0].starts_with("N_") && dims[1].starts_with("M_") && dims[0][2..] == dims[1][2..], "{dims:?}");
    assert_eq!(m.dtype(), DType::F64);
    // Lengths in front of a record are every field's.
    let fields = datashape::placeholders("n, {u: float64, v: 2, complex64}").unwrap();
    assert_eq!(fields.get("v").unwrap().shape().to_string(), "(n, 2)");
    assert_eq!(datashape::placeholder("s", "uint8").unwrap().shape(), &Shape::scalar());
    let err = datashape::placeholder("r", "{a: int8}").unwrap_err();
    assert!(err.to_string().contains("placeholders"), "{err}");
    let err = datashape::placeholders("3, int8").unwrap_err();
    assert!(err.to_string().contains("placeholder"), "{err}");
}

#[test]
fn a_repeated_type_variable_is_a_constraint_when_inputs_are_bound() {
    let m = datashape::placeholder("m", "A, A, float64").unwrap();
    let signature = Signature::new(&Outputs::from(&m)).unwrap();
    let square = ArrayData::from(ndarray::ArrayD::<f64>::zeros(vec![3, 3]));
    let inputs: NamedViews<'_> = [("m", square.view())].into_iter().collect();
    assert!(signature.bind(&inputs).is_ok());
    let oblong = ArrayData::from(ndarray::ArrayD::<f64>::zeros(vec![3, 2]));
    let inputs: NamedViews<'_> = [("m", oblong.view())].into_iter().collect();
    let err = signature.bind(&inputs).err().expect("3 x 2 is not square");
    assert!(err.to_string().contains('A'), "{err}");
}

#[test]
fn constructs_without_an_array_meaning_say_what_and_where() {
    let scope = Scope::check(&parse_module("Lengths = {1,2,3}\nP = *int32").unwrap()).unwrap();
    for (text, construct, position) in [
        ("3, Var(0, 5)", "a ranged length (Var) as an element `Var(0, 5)`", "the element type of the whole type"),
        ("3, Lengths, int32", "an enumeration dimension `{1, 2, 3}`", "dimension 2 of the whole type"),
        ("3, Stream(int32)", "a stream `Stream(int32)`", "the element type of the whole type"),
        ("Union(int32, char)", "a union", "the element type"),
        ("{x: (2, P)}", "a pointer `*int32`", "the element type of field `x`"),
        ("n, {y: char}", "a machine type `char`", "the element type of field `y`"),
        ("Either float nan", "a nullable type (Either)", "the element type"),
        ("A, B, (A, B -> Var(A, B)), int32", "a function type", "dimension 3"),
    ] {
        let err = scope.array_type(text).unwrap_err();
        let Error::DatashapeUnsupported { construct: c, position: p, .. } = &err else { panic!("{text}: {err}") };
        assert!(c.starts_with(construct), "{text}: {c}");
        assert!(p.starts_with(position), "{text}: {p}");
        assert!(err.to_string().contains("has no array meaning"), "{err}");
    }
    let err = scope.array_type("3, n").unwrap_err();
    assert!(err.to_string().contains("element type"), "{err}");
    let err = datashape::placeholder("x", "3, int32,").unwrap_err();
    assert_eq!(err.kind(), "DatashapeSyntax");
}

#[test]
fn every_seed_type_maps_to_arrays_or_says_why_not() {
    let module = parse_module(SEED).unwrap();
    let scope = Scope::check(&module).unwrap();
    // (datashape, what it means here): "array", "record", or the error kind.
    let expected = [
        ("uint32", "array"),
        ("float", "array"),
        ("char", "DatashapeUnsupported"),
        ("2, int32", "array"),
        ("2, 3, int32", "array"),
        ("Quaternion", "array"),
        ("{x: Quaternion, y: Quaternion}", "record"),
        ("RGBA", "record"),
        ("Dim2", "InvalidArgument"), // lengths only: no element type
        ("Lengths * 3", "DatashapeUnsupported"),
        ("A, A, int32", "array"),
        ("A, B, int32", "array"),
        ("ShortStrings", "DatashapeUnsupported"), // of char
        ("5*ShortStrings", "DatashapeUnsupported"),
        ("Var(0,5), Var(0,5), int32", "array"), // lengths in range, one rectangle
        ("Stream(RGBA)", "DatashapeUnsupported"),
        ("Union(int32, char)", "DatashapeUnsupported"),
        ("MaybeFloat", "DatashapeUnsupported"),
        ("A, B, ( A, B -> Var(A, B) ), int32", "DatashapeUnsupported"),
        ("int32*", "DatashapeUnsupported"),
        ("*int32 (shm 'foo')", "DatashapeUnsupported"),
        ("Point int32", "record"),
        ("x", "array"),
        ("n, (n -> n - 2), float64", "array"),
    ];
    for (text, meaning) in expected {
        let got = match scope.array_type(text) {
            Ok(ArrayType::Array { .. }) => "array",
            Ok(ArrayType::Record(_)) => "record",
            Err(e) => e.kind(),
        };
        assert_eq!(got, meaning, "{text}");
    }
    // The ctensor4 instance: four lengths of its own, complex64.
    let ArrayType::Array { shape, dtype, .. } = scope.array_type("x").unwrap() else { panic!("an array") };
    assert_eq!((shape.ndim(), dtype), (4, DType::C64));
}

#[test]
fn ranged_lengths_are_size_variables_bounded_when_inputs_are_bound() {
    let t = datashape::placeholder("t", "Var(1, 5), Var(0, n), int32").unwrap();
    let signature = Signature::new(&Outputs::from(&t)).unwrap();
    // The signature writes the ranges again.
    let Some((inputs, _)) =
        signature.datashape().to_string().split_once(" -> ").map(|(a, b)| (a.to_string(), b.to_string()))
    else {
        panic!("a function type")
    };
    assert_eq!(inputs, "{n: int64, t: Var(1, 5), Var(0, n), int32}");
    let bind = |rows: usize, cols: usize, n: i64| {
        let data = ArrayData::from(ndarray::ArrayD::<i32>::zeros(vec![rows, cols]));
        let n = ArrayData::from_scalar(pytato_core::Scalar::I64(n));
        let inputs: NamedViews<'_> = [("t", data.view()), ("n", n.view())].into_iter().collect();
        signature.bind(&inputs).map(|_| ()).map_err(|e| e.to_string())
    };
    assert!(bind(5, 3, 3).is_ok());
    assert!(bind(1, 0, 0).is_ok());
    let err = bind(6, 2, 3).unwrap_err();
    assert!(err.contains("dimension 1 is 6, outside `Var(1, 5)`"), "{err}");
    assert!(err.contains("`Var(1, 5), Var(0, n), int32`"), "{err}");
    let err = bind(2, 4, 3).unwrap_err();
    assert!(err.contains("dimension 2 is 4, outside `Var(0, n)` = 0..=3"), "{err}");
    // Two ranged lengths are two variables: a 2 x 3 table binds.
    assert!(bind(2, 3, 3).is_ok());
}
