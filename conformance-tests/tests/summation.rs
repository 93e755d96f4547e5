//! Sums follow one summation scheme (`pytato_runtime::math`, "Summation": blocks of 128 terms in 8
//! lanes, the blocks' totals in a pairwise tree) on every backend: the interpreter sums as the
//! scheme, written out here, says, and long float64 and complex128 sums, over one axis and several, with
//! lengths that leave every remainder of a lane group and of a block, must be the interpreter's
//! bits on every linked backend (except matrix products on backends with a GEMM, which are
//! not sums of this kind: see `backend-cranelift/tests/gemm.rs`).

use pytato_core::{Array, ArrayData, DType, Dim, Scalar};
use pytato_frontend as pt;
use pytato_runtime::backend::NamedData;

/// Values whose sums round at every step (no exact cancellation), of both signs.
fn values(shape: &[usize], dtype: DType) -> ArrayData {
    let n: usize = shape.iter().product();
    let f = |i: usize| ((i * 7919 % 1009) as f64 - 504.3) / 7.1 + 1e-3 * (i as f64).sqrt();
    let scalars = (0..n).map(|i| match dtype {
        DType::C128 => Scalar::C128(num_complex::Complex64::new(f(i), f(i + 17) * 1e3)),
        _ => Scalar::F64(f(i) * 1e5),
    });
    ArrayData::from_scalars(dtype, shape, scalars).expect("float data")
}

fn sums(dtype: DType) -> Vec<(&'static str, Array)> {
    sums_of_shape(dtype, [Dim::param("n"), Dim::param("m")])
}

fn sums_of_shape(dtype: DType, shape: [Dim; 2]) -> Vec<(&'static str, Array)> {
    let x = pt::placeholder("x", shape, dtype).unwrap();
    vec![
        ("sum", pt::sum(&x, pt::Axes::All).unwrap()),
        ("sum axis 0", pt::sum(&x, 0).unwrap()),
        ("sum axis 1", pt::sum(&(&x * 1.5), 1).unwrap()),
        ("mean axis 0", pt::mean(&x, 0).unwrap()),
    ]
}

type Instances = Vec<(String, Box<dyn pytato_runtime::backend::Backend>)>;

fn backends() -> Instances {
    let (instances, skipped) = pytato_conformance::instantiate(&[]).unwrap_or_else(|e| panic!("{e}"));
    for line in &skipped {
        eprintln!("{line}");
    }
    assert!(instances.iter().any(|(n, _)| n == "interp"), "the interpreter is linked");
    instances
}

/// The bits of every element (complex parts apart; integers through their complex value, exact
/// below 2^53, and compared as well through their text). Every NaN counts as one: its sign and
/// payload are the hardware's (x86's fused multiply-subtract keeps a NaN's sign where a negation
/// then an add flips it), not numpy's promise.
fn bits(a: &ArrayData) -> Vec<(u64, u64, String)> {
    let part = |v: f64| if v.is_nan() { f64::NAN.to_bits() } else { v.to_bits() };
    a.to_scalars()
        .iter()
        .map(|s| {
            let z = s.to_complex64();
            (part(z.re), part(z.im), s.to_string())
        })
        .collect()
}

/// `e` on every backend, for each of `inputs`, must give the interpreter's bits (or its error).
fn assert_interpreters_bits(instances: &Instances, what: &str, e: &Array, inputs: &[NamedData]) {
    assert_interpreters_bits_or_refused(instances, what, e, inputs, false);
}

/// As [`assert_interpreters_bits`]; with `refusable`, a backend may instead refuse a run as
/// `Unsupported` (a driver's limit), but never give other values.
fn assert_interpreters_bits_or_refused(
    instances: &Instances,
    what: &str,
    e: &Array,
    inputs: &[NamedData],
    refusable: bool,
) {
    let interp = &instances.iter().find(|(n, _)| n == "interp").expect("the interpreter is linked").1;
    let reference_program = interp.compile(&e.into()).unwrap();
    for (name, backend) in instances.iter().filter(|(n, _)| n != "interp") {
        let program = backend.compile(&e.into()).unwrap();
        for input in inputs {
            // The inputs the program takes (a case may leave some of the data unused).
            let mut input = input.clone();
            input.retain(|name, _| reference_program.input_names().contains(name));
            let input = &input;
            let (want, got) = match (reference_program.run(input), program.run(input)) {
                (Ok(mut want), Ok(mut got)) => (want.remove("_pt_out").unwrap(), got.remove("_pt_out").unwrap()),
                (Err(want), Err(got)) if want.kind() == got.kind() => continue,
                (Ok(_), Err(got)) if refusable && got.kind() == "Unsupported" => {
                    let shapes: Vec<_> = input.iter().map(|(k, v)| format!("{k}: {:?}", v.shape())).collect();
                    eprintln!("{what} ({shapes:?}) on {name}: refused: {got}");
                    continue;
                }
                (want, got) => panic!("{what} on {name}: the interpreter gives {want:?}, {name} {got:?}"),
            };
            let (g, w) = (bits(&got), bits(&want));
            let first = g.iter().zip(&w).position(|(a, b)| a != b);
            let shapes: Vec<_> = input.iter().map(|(k, v)| format!("{k}: {:?}", v.shape())).collect();
            assert!(
                g.len() == w.len() && first.is_none(),
                "{what} ({shapes:?}) on {name}: first difference at {first:?}: {} vs {}",
                got.to_scalars()[first.unwrap_or(0)],
                want.to_scalars()[first.unwrap_or(0)]
            );
        }
    }
}

#[test]
fn long_sums_are_the_interpreters_bits_on_every_backend() {
    let instances = backends();
    for dtype in [DType::F64, DType::C128, DType::F32, DType::C64] {
        for (what, e) in sums(dtype) {
            let inputs: Vec<NamedData> = [
                (1, 7),
                (1, 9),
                (3, 43),
                (2, 128),
                (1, 129),
                (5, 300),
                (300, 5),
                (257, 3),
                (0, 4),
                (3, 8),
                (2, 16),
                (5, 136),
                (4, 256),
                (300, 8),
            ]
            .into_iter()
            .map(|(n, m)| NamedData::from([("x".to_string(), values(&[n, m], dtype))]))
            .collect();
            assert_interpreters_bits(&instances, &format!("{what} ({dtype})"), &e, &inputs);
        }
    }
}

/// The summation scheme of `pytato_runtime::math`, written out from its definition: each block
/// of 128 terms in 8 lanes combined `((l0 + l2) + (l4 + l6)) + ((l1 + l3) + (l5 + l7))`, then the
/// block totals level by level, `(b0 + b1), (b2 + b3), …`, an unpaired last one passing up.
fn scheme_sum(terms: &[f64]) -> f64 {
    let mut level: Vec<f64> = terms
        .chunks(128)
        .map(|block| {
            let mut l = [0.0f64; 8];
            for (t, x) in block.iter().enumerate() {
                l[t % 8] += x;
            }
            ((l[0] + l[2]) + (l[4] + l[6])) + ((l[1] + l[3]) + (l[5] + l[7]))
        })
        .collect();
    while level.len() > 1 {
        level = level.chunks(2).map(|p| if let [a, b] = p { a + b } else { p[0] }).collect();
    }
    level.first().copied().unwrap_or(0.0)
}

/// Lengths of whole-array sums with every shape of the block tree: one block, a power of two of
/// blocks, one more, an odd number at every level, and more than a workgroup's 256 runs.
const TREE_LENGTHS: [usize; 8] = [0, 1, 129, 128 * 64, 128 * 64 + 1, 40_000, 100_003, 128 * 1000 - 5];

#[test]
fn the_interpreter_sums_in_the_documented_order() {
    let instances = backends();
    let interp = &instances.iter().find(|(n, _)| n == "interp").expect("the interpreter is linked").1;
    let x = pt::placeholder("x", [Dim::param("n")], DType::F64).unwrap();
    let program = interp.compile(&pt::sum(&x, pt::Axes::All).unwrap().into()).unwrap();
    for n in TREE_LENGTHS {
        let data = values(&[1, n], DType::F64);
        let terms: Vec<f64> = data.to_scalars().iter().map(|s| s.to_complex64().re).collect();
        let flat = ArrayData::from_scalars(DType::F64, &[n], data.to_scalars()).unwrap();
        let input = NamedData::from([("x".to_string(), flat)]);
        let got = program.run(&input).unwrap().remove("_pt_out").unwrap().to_scalars()[0].to_complex64().re;
        assert_eq!(got.to_bits(), scheme_sum(&terms).to_bits(), "sum of {n} terms: {got} vs {}", scheme_sum(&terms));
    }
    // float32: the terms summed in float64 as above, rounded once.
    let x32 = pt::placeholder("x", [Dim::param("n")], DType::F32).unwrap();
    let program = interp.compile(&pt::sum(&x32, pt::Axes::All).unwrap().into()).unwrap();
    for n in TREE_LENGTHS {
        let terms: Vec<f32> =
            values(&[1, n], DType::F64).to_scalars().iter().map(|s| s.to_complex64().re as f32).collect();
        let flat = ArrayData::from_scalars(DType::F32, &[n], terms.iter().map(|&t| Scalar::F32(t))).unwrap();
        let got = program.run(&NamedData::from([("x".to_string(), flat)])).unwrap().remove("_pt_out").unwrap();
        let want = scheme_sum(&terms.iter().map(|&t| t as f64).collect::<Vec<_>>()) as f32;
        assert_eq!(got.to_scalars()[0], Scalar::F32(want), "float32 sum of {n} terms");
    }
}

/// Long sums, whose block totals make trees of every shape, are the interpreter's bits
/// everywhere, along either axis.
#[test]
fn sums_of_many_blocks_are_the_interpreters_bits_on_every_backend() {
    let instances = backends();
    for (what, e) in sums(DType::F64) {
        let inputs: Vec<NamedData> = TREE_LENGTHS
            .into_iter()
            .flat_map(|n| [(1, n), (n / 3, 3)])
            .map(|(n, m)| NamedData::from([("x".to_string(), values(&[n, m], DType::F64))]))
            .collect();
        assert_interpreters_bits(&instances, &format!("{what} of many blocks"), &e, &inputs);
    }
    for dtype in [DType::C128, DType::F32, DType::C64] {
        let x = pt::placeholder("x", [Dim::param("n"), Dim::param("m")], dtype).unwrap();
        let inputs = [
            NamedData::from([("x".to_string(), values(&[2, 40_000], dtype))]),
            NamedData::from([("x".to_string(), values(&[1, 100_003], dtype))]),
        ];
        assert_interpreters_bits(&instances, &format!("{dtype} sum of many blocks"), &pt::sum(&x, 1).unwrap(), &inputs);
    }
}

/// Float and complex products, multiplied in order (as numpy does): the interpreter's bits
/// everywhere, along either axis, over many blocks' worth of terms.
#[test]
fn long_products_are_the_interpreters_bits_on_every_backend() {
    let instances = backends();
    for dtype in [DType::F64, DType::F32, DType::C128, DType::C64] {
        let x = pt::placeholder("x", [Dim::param("n"), Dim::param("m")], dtype).unwrap();
        let near_one = |shape: [usize; 2]| {
            let n = shape[0] * shape[1];
            let f = |i: usize| 1.0 + ((i * 7919 % 1009) as f64 - 504.3) * 1e-7;
            let scalars = (0..n).map(|i| Scalar::C128(num_complex::Complex64::new(f(i), f(i + 3) - 1.0)).cast(dtype));
            NamedData::from([("x".to_string(), ArrayData::from_scalars(dtype, &shape, scalars).unwrap())])
        };
        let inputs: Vec<NamedData> =
            [[1, 1], [3, 129], [1, 40_000], [16_000, 2], [0, 3]].into_iter().map(near_one).collect();
        for (what, e) in [("prod", pt::prod(&x, pt::Axes::All).unwrap()), ("prod axis 0", pt::prod(&x, 0).unwrap())] {
            assert_interpreters_bits(&instances, &format!("{what} ({dtype})"), &e, &inputs);
        }
    }
}

/// Sums whose lengths are known when compiling (short ones may be compiled without a loop).
#[test]
fn sums_of_fixed_shapes_are_the_interpreters_bits_on_every_backend() {
    let instances = backends();
    for dtype in [DType::F64, DType::C128] {
        for (n, m) in [(1, 1), (3, 7), (2, 16), (1, 32), (4, 9), (5, 30), (2, 33)] {
            let inputs = [NamedData::from([("x".to_string(), values(&[n, m], dtype))])];
            for (what, e) in sums_of_shape(dtype, [Dim::new(n as i64), Dim::new(m as i64)]) {
                assert_interpreters_bits(&instances, &format!("{what} ({dtype}) of fixed shape"), &e, &inputs);
            }
        }
    }
}

/// Short sums of known length (which a backend may unroll, and may start from their first term
/// rather than from +0: see `backend-cranelift`'s `codegen::short_sum`) over special values: every
/// term -0.0 (the scheme gives +0.0), zeros of both signs, subnormals, a NaN, infinities of both
/// signs, a cancellation, at every length from 0 to 33, summed whole, along either axis (the
/// outputs one at a time, or a vector of them at once), in single and double precision, real and
/// complex, and as a DG-like contraction inside an elementwise expression: the interpreter's bits.
#[test]
fn short_sums_of_special_values_are_the_interpreters_bits() {
    let instances = backends();
    // -0.0; zeros of both signs; subnormals; a NaN; +inf; both infinities; a cancellation.
    let patterns: [fn(usize) -> f64; 7] = [
        |_| -0.0,
        |i| if i % 3 == 1 { 0.0 } else { -0.0 },
        |i| if i % 2 == 0 { 5e-324 * (i + 1) as f64 } else { -2.5e-322 },
        |i| if i == 3 { f64::NAN } else { i as f64 - 1.5 },
        |i| if i % 5 == 2 { f64::INFINITY } else { -0.0 },
        |i| [f64::INFINITY, 1.0, f64::NEG_INFINITY][i % 3],
        |i| [1e16, 1.0, -1e16, 1.0, 3.0][i % 5],
    ];
    for dtype in [DType::F64, DType::F32, DType::C128, DType::C64] {
        // Both axes of every length that changes the lanes' or vectors' shape, 0 to 33.
        let shapes = [(1, 0), (4, 1), (5, 2), (8, 3), (17, 5), (33, 8), (1, 9), (4, 16), (5, 17), (2, 32), (3, 33)];
        for (n, m) in shapes {
            let inputs: Vec<NamedData> = patterns
                .iter()
                .map(|f| {
                    let scalars = (0..n * m).map(|i| match dtype {
                        DType::C128 | DType::C64 => {
                            Scalar::C128(num_complex::Complex64::new(f(i), f(i + 1))).cast(dtype)
                        }
                        _ => Scalar::F64(f(i)).cast(dtype),
                    });
                    NamedData::from([("x".to_string(), ArrayData::from_scalars(dtype, &[n, m], scalars).unwrap())])
                })
                .collect();
            for (what, e) in sums_of_shape(dtype, [Dim::new(n as i64), Dim::new(m as i64)]) {
                assert_interpreters_bits(
                    &instances,
                    &format!("{what} ({dtype}, {n}x{m}) of special values"),
                    &e,
                    &inputs,
                );
            }
        }
    }
    // DG's volume term: `D[i, r] u[e, r, j]` summed over `r` for every `(e, i, j)`, added to `u`.
    for np in [2, 5, 9] {
        let u = pt::placeholder("x", [Dim::param("e"), Dim::new(np), Dim::new(np)], DType::F64).unwrap();
        let d = pt::placeholder("d", [Dim::new(np), Dim::new(np)], DType::F64).unwrap();
        let e = pt::add(&u, pt::einsum("ik,ekj->eij", &[&d, &u]).unwrap()).unwrap();
        let inputs: Vec<NamedData> = patterns
            .iter()
            .map(|f| {
                let len = (np * np) as usize;
                let x = (0..3 * len).map(|i| Scalar::F64(f(i)));
                let d = (0..len).map(|i| Scalar::F64(if i % 4 == 0 { -1.0 } else { f(i + 7) }));
                NamedData::from([
                    ("x".to_string(), ArrayData::from_scalars(DType::F64, &[3, np as usize, np as usize], x).unwrap()),
                    ("d".to_string(), ArrayData::from_scalars(DType::F64, &[np as usize, np as usize], d).unwrap()),
                ])
            })
            .collect();
        assert_interpreters_bits(&instances, &format!("u + einsum(ik,ekj->eij) with {np} nodes"), &e, &inputs);
    }
}

/// Sums of special values: -0.0 everywhere (the sum of negative zeros is +0.0 in this scheme,
/// whichever backend and however the terms are grouped into blocks), and an infinity or a NaN in
/// a late block; and one sum of 1.2 million terms.
#[test]
fn special_values_sum_to_the_interpreters_bits() {
    let instances = backends();
    let x = pt::placeholder("x", [Dim::param("n"), Dim::param("m")], DType::F64).unwrap();
    let with = |shape: [usize; 2], at: usize, v: f64| {
        let n = shape[0] * shape[1];
        let scalars = (0..n).map(|i| Scalar::F64(if i == at { v } else { -0.0 }));
        NamedData::from([("x".to_string(), ArrayData::from_scalars(DType::F64, &shape, scalars).unwrap())])
    };
    let inputs = vec![
        with([3, 300], usize::MAX, 0.0),
        with([1, 1], usize::MAX, 0.0),
        with([2, 700], 650, f64::INFINITY),
        with([2, 700], 1300, f64::NEG_INFINITY),
        with([4, 200], 799, f64::NAN),
        // Longer than a driver that stops loops after 65,535 iterations (llvmpipe) could sum in
        // one loop, even unrolled eight times.
        with([2, 600_000], 1_000_000, f64::INFINITY),
    ];
    for (what, e) in [("sum", pt::sum(&x, pt::Axes::All).unwrap()), ("sum axis 1", pt::sum(&x, 1).unwrap())] {
        assert_interpreters_bits(&instances, what, &e, &inputs);
    }
}

/// Integer reductions wrap like numpy's, in any grouping: int8 and int64 sums that overflow,
/// products, maxima and minima, long enough to be split into blocks where a backend does that.
#[test]
fn long_integer_reductions_are_the_interpreters_values() {
    let instances = backends();
    for dtype in [DType::I8, DType::U16, DType::I32, DType::I64, DType::U64] {
        let x = pt::placeholder("x", [Dim::param("n"), Dim::param("m")], dtype).unwrap();
        let inputs: Vec<NamedData> = [(1, 1), (2, 129), (3, 1000), (1000, 3), (0, 5)]
            .into_iter()
            .map(|(n, m): (usize, usize)| {
                let scalars = (0..n * m).map(|i| {
                    let v = (i as i128 * 2_654_435_761) % 1_000_003 - 500_000;
                    let big = if i % 7 == 0 { v * 9_000_000_000_000 } else { v };
                    Scalar::I64(big as i64).cast(dtype)
                });
                NamedData::from([("x".to_string(), ArrayData::from_scalars(dtype, &[n, m], scalars).unwrap())])
            })
            .collect();
        let cases = [
            ("sum", pt::sum(&x, pt::Axes::All).unwrap()),
            ("sum axis 0", pt::sum(&x, 0).unwrap()),
            ("prod axis 1", pt::prod(&x, 1).unwrap()),
            ("max", pt::max(&x, pt::Axes::All).unwrap()),
            ("min axis 0", pt::min(&x, 0).unwrap()),
        ];
        for (what, e) in cases {
            // A max or min over an axis empty at run time is an error on every backend.
            assert_interpreters_bits(&instances, &format!("{what} ({dtype})"), &e, &inputs);
            if what.starts_with("max") || what.starts_with("min") {
                let program = instances[0].1.compile(&(&e).into()).unwrap();
                assert_eq!(program.run(&inputs[4]).unwrap_err().kind(), "InvalidForSizes", "{what} over (0, 5)");
            }
        }
    }
}

/// Every reduction but float products runs at any length on every backend, with the
/// interpreter's bits: 2.1 million terms are more than a driver that stops loops after 65,535
/// iterations (llvmpipe) could combine in one loop even unrolled 32 times. (Float products stay
/// in one loop, in order, as numpy multiplies: on such a driver a product that long is
/// `Unsupported`.)
#[test]
fn reductions_of_any_length_run_on_every_backend() {
    let instances = backends();
    let n = 2_100_000;
    for dtype in [DType::F32, DType::C64, DType::F64, DType::I32, DType::Bool] {
        let x = pt::placeholder("x", [Dim::param("n")], dtype).unwrap();
        let f = |i: usize| 1.0 + ((i * 7919 % 1009) as f64 - 504.3) * 1e-7;
        let scalars = (0..n).map(|i| Scalar::F64(if dtype == DType::Bool { (i % 3 == 0) as u8 as f64 } else { f(i) }));
        let data = ArrayData::from_scalars(dtype, &[n], scalars.map(|s| s.cast(dtype))).unwrap();
        let inputs = [NamedData::from([("x".to_string(), data)])];
        let mut cases = vec![
            ("sum", pt::sum(&x, pt::Axes::All).unwrap()),
            ("max", pt::max(&x, pt::Axes::All).unwrap()),
            ("argmin", pt::argmin(&x, None, false).unwrap()),
            ("any", pt::any(&x, pt::Axes::All).unwrap()),
        ];
        if dtype.is_integer() {
            cases.push(("prod", pt::prod(&x, pt::Axes::All).unwrap()));
        }
        for (what, e) in cases {
            assert_interpreters_bits(&instances, &format!("{what} ({dtype}) of {n} terms"), &e, &inputs);
        }
    }
}

/// Reductions at lengths around a driver's loop cap (llvmpipe stops every loop after 65,535
/// iterations in all, nested and exit tests included): float products, which multiply in order,
/// run at every length with the interpreter's bits (chunk by chunk on the wgpu backend);
/// reductions that stay in one loop (under a `where`) give those bits or `Unsupported` where the
/// cap would cut the loop short, never a product of the first terms only. (A product over
/// `(20000, 2)` in two nested loops once gave the product of its first 32,766 terms.)
#[test]
fn loops_near_a_drivers_cap_are_whole_or_refused() {
    let instances = backends();
    let x = pt::placeholder("x", [Dim::param("n"), Dim::param("m")], DType::F64).unwrap();
    let y = pt::placeholder("y", [Dim::param("n")], DType::F64).unwrap();
    let near_one = |[n, m]: [usize; 2], with_y: bool| {
        let f = |i: usize| 1.0 + ((i * 7919 % 1009) as f64 - 504.3) * 1e-7;
        let x = ArrayData::from_scalars(DType::F64, &[n, m], (0..n * m).map(|i| Scalar::F64(f(i)))).unwrap();
        let y = ArrayData::from_scalars(DType::F64, &[n], (0..n).map(|i| Scalar::F64(i as f64 - 0.5))).unwrap();
        let mut inputs = NamedData::from([("x".to_string(), x)]);
        if with_y {
            inputs.insert("y".to_string(), y);
        }
        inputs
    };
    let shapes = [
        [20_000, 2],
        [16_384, 2],
        [21_845, 3],
        [32_767, 2],
        [65_534, 1],
        [65_536, 1],
        [1, 65_533],
        [1, 65_536],
        [4_096, 16],
        [65_533, 16],
        [2, 32_767],
        [2, 40_000],
        [3, 40_001],
    ];
    let product = pt::prod(&x, pt::Axes::All).unwrap();
    let sum_in_where =
        pt::where_(pt::greater(&y, 0.0).unwrap(), pt::sum(&x, 1).unwrap(), pt::prod(&x, 1).unwrap()).unwrap();
    for (what, e, with_y) in [("prod", product, false), ("where(y > 0, sum axis 1, prod axis 1)", sum_in_where, true)] {
        let inputs: Vec<NamedData> = shapes.into_iter().map(|shape| near_one(shape, with_y)).collect();
        assert_interpreters_bits(&instances, what, &e, &inputs);
    }
}

/// Long reductions in a branch (of a `where`, of a concatenation) run in stages where the branch
/// is taken only: a concatenation of two row sums reads each operand's rows in its own range (a
/// stage that summed the other rows too would read out of range), conditions that are long
/// reductions themselves guard a long product and sum, and one reduction read in both
/// branches; the interpreter's bits at every size, the same programs run at each.
#[test]
fn long_reductions_in_branches_run_where_the_branch_is_taken() {
    let instances = backends();
    let x = pt::placeholder("x", [Dim::param("n"), Dim::param("m")], DType::F64).unwrap();
    let z = pt::placeholder("z", [Dim::param("k"), Dim::param("m")], DType::F64).unwrap();
    let rows_x = pt::sum(&x, 1).unwrap();
    let cases = [
        ("concatenate(sum(x, 1), max(z, 1))", pt::concatenate(&[rows_x.clone(), pt::max(&z, 1).unwrap()], 0).unwrap()),
        (
            "where(sum(x, 1) > 0, prod(x, 1), sum(abs(x), 1))",
            pt::where_(
                pt::greater(&rows_x, 0.0).unwrap(),
                pt::prod(&x, 1).unwrap(),
                pt::sum(&pt::abs(&x).unwrap(), 1).unwrap(),
            )
            .unwrap(),
        ),
        (
            "where(x[:, 0] > 1, sum(x, 1), -sum(x, 1))",
            pt::where_(
                pt::greater(x.index([pt::Idx::Ellipsis, pt::Idx::Int(0)]).unwrap(), 1.0).unwrap(),
                &rows_x,
                pt::negative(&rows_x).unwrap(),
            )
            .unwrap(),
        ),
    ];
    let data = |n: usize, k: usize, m: usize| -> NamedData {
        // Each row in five stripes of alternating signs, starting with + in even rows and - in odd
        // ones: both branches of each `where` are taken, and a row's parts (its blocks) have
        // other signs than its total.
        let f = |i: usize| 1.0 + ((i * 7919 % 1009) as f64 - 504.3) * 1e-5;
        let sign = |i: usize| if ((i % m) * 5 / m + i / m).is_multiple_of(2) { 1.0 } else { -1.0 };
        let x = ArrayData::from_scalars(DType::F64, &[n, m], (0..n * m).map(|i| Scalar::F64(sign(i) * f(i)))).unwrap();
        let z = ArrayData::from_scalars(DType::F64, &[k, m], (0..k * m).map(|i| Scalar::F64(-f(i + 3)))).unwrap();
        NamedData::from([("x".to_string(), x), ("z".to_string(), z)])
    };
    let inputs = [data(3, 1, 70_001), data(1, 4, 40_000), data(2, 2, 129), data(5, 3, 1)];
    for (what, e) in cases {
        assert_interpreters_bits(&instances, what, &e, &inputs);
    }
}

/// Float and complex products of any length multiply in order on every backend: the
/// interpreter's bits (its loop in order is the reference), never `Unsupported`, at lengths on
/// both sides of the wgpu backend's chunks (2^15 terms) and of llvmpipe's loop cap, along either
/// axis, inside a broadcast, with NaN, infinities, -0.0 and an overflow that a later zero turns
/// into NaN (grouped differently, the zero would come first and the result be 0 or inf), the same
/// program run at every size.
#[test]
fn float_products_of_any_length_are_in_order() {
    let instances = backends();
    let lengths = [0usize, 1, 32_767, 32_768, 32_769, 65_536, 70_001, 200_000];
    for dtype in [DType::F64, DType::F32, DType::C128, DType::C64] {
        let x = pt::placeholder("x", [Dim::param("n"), Dim::param("m")], dtype).unwrap();
        let y = pt::placeholder("y", [Dim::param("n")], dtype).unwrap();
        let cases = [
            ("prod", pt::prod(&x, pt::Axes::All).unwrap()),
            ("prod axis 0", pt::prod(&x, 0).unwrap()),
            ("prod axis 1 * y", &pt::prod(&x, 1).unwrap() * &y),
        ];
        // Terms near 1 (the product stays finite over every length), with the special values at
        // fixed places: NaN and -0.0 from the middle of the longest rows, huge terms early and a
        // zero after them.
        let term = |i: usize, len: usize| -> f64 {
            match i {
                _ if len > 100_000 && i == len / 2 => f64::NAN,
                _ if len > 60_000 && i == 40_000 => -0.0,
                _ if len > 32_768 && (10..20).contains(&i) => 1e35,
                _ if len > 32_768 && i == 33_000 => 0.0,
                _ if len == 32_769 && i == 32_768 => f64::INFINITY,
                _ => 1.0 + ((i * 7919 % 1009) as f64 - 504.3) * 1e-7,
            }
        };
        let data = |[n, m]: [usize; 2]| -> NamedData {
            let scalars = (0..n * m).map(|i| match dtype {
                DType::C128 | DType::C64 => {
                    Scalar::C128(num_complex::Complex64::new(term(i, n * m), ((i % 13) as f64 - 6.0) * 1e-6))
                }
                _ => Scalar::F64(term(i, n * m)),
            });
            let x = ArrayData::from_scalars(dtype, &[n, m], scalars).unwrap();
            let y = ArrayData::from_scalars(dtype, &[n], (0..n).map(|i| Scalar::F64(i as f64 - 0.5))).unwrap();
            NamedData::from([("x".to_string(), x), ("y".to_string(), y)])
        };
        let mut inputs: Vec<NamedData> = Vec::new();
        for len in lengths {
            inputs.push(data([1, len]));
            inputs.push(data([len, 1]));
        }
        inputs.push(data([3, 40_001]));
        inputs.push(data([40_001, 3]));
        for (what, e) in cases {
            assert_interpreters_bits(&instances, &format!("{what} ({dtype})"), &e, &inputs);
        }
    }
}
