//! Fresh output arrays are not zeroed before their kernel writes them (`run::UnwrittenOutput`):
//! every element must be written by the kernel, whatever the dtype, the shape (empty, size 1,
//! 0-d), the path (JIT loops, a launch group, a reduction split over threads, the GEMM cut into
//! a grid of blocks) and the number of threads. Before each run the heap is filled with a
//! pattern, freed again, so that an element no kernel wrote would likely hold it; every output
//! is compared with the interpreter's, bit for bit.

use ndarray::{ArrayD, IxDyn};
use pytato_backend_cranelift::Cranelift;
use pytato_backend_interp::Interpreter;
use pytato_core::{Array, ArrayData, DType, DictOfNamedArrays, Dim, Scalar};
use pytato_frontend as pt;
use pytato_runtime::backend::{Backend, NamedData};

/// Ordinary values of both signs, some zeros, none NaN (so that equal means equal bits).
fn values(shape: &[usize], seed: usize) -> ArrayData {
    let mut state = seed;
    ArrayData::from(ArrayD::from_shape_fn(IxDyn(shape), |_| {
        state = (state * 1_103_515_245 + 12_345) % (1 << 31);
        ((state % 2001) as f64 - 1000.0) / 37.0
    }))
}

/// Allocates and frees blocks of many sizes filled with a byte pattern, so that the allocator
/// has patterned memory at hand for the next allocations.
fn dirty_the_heap() {
    let blocks: Vec<Vec<u8>> = (4..22).map(|log| vec![0xA5u8; 1 << log]).collect();
    std::hint::black_box(&blocks);
}

fn bits(data: &ArrayData) -> Vec<(u64, u64)> {
    data.to_scalars()
        .iter()
        .map(|s: &Scalar| {
            let z = s.to_complex64();
            (z.re.to_bits(), z.im.to_bits())
        })
        .collect()
}

fn assert_written(outputs: &DictOfNamedArrays, inputs: &NamedData, what: &str) {
    let reference = Interpreter.compile(&outputs.into()).unwrap().run(inputs).unwrap();
    for threads in [1, 2, 3, 7] {
        let program = Cranelift::new().with_threads(threads).compile(&outputs.into()).unwrap();
        for round in 0..2 {
            dirty_the_heap();
            let got = program.run(inputs).unwrap();
            for (name, expected) in &reference {
                assert_eq!(got[name].dtype(), expected.dtype(), "{what}: {name}");
                assert_eq!(got[name].shape(), expected.shape(), "{what}: {name}");
                let same = if name == "product" {
                    // The GEMM sums in its own order: to rounding (these sums are of a few
                    // hundred terms of magnitude at most 30^2; the pattern's float64 is -3.7e-53).
                    let (a, b) = (got[name].to_scalars(), expected.to_scalars());
                    a.iter().zip(&b).all(|(g, w)| (g.to_f64() - w.to_f64()).abs() <= 1e-9 * (1.0 + w.to_f64().abs()))
                } else {
                    bits(&got[name]) == bits(expected)
                };
                assert!(same, "{what}: {name} on {threads} threads, run {round}, differs from the interpreter's");
            }
        }
    }
}

/// Every dtype as an output, from a float64 input of every shape.
#[test]
fn outputs_of_every_dtype_and_shape_are_written_whole() {
    for shape in [vec![], vec![0], vec![1], vec![3, 0], vec![1, 1], vec![257], vec![33, 129]] {
        let dims: Vec<Dim> = (0..shape.len()).map(|k| Dim::param(format!("n{k}"))).collect();
        let x = pt::placeholder("x", dims, DType::F64).unwrap();
        let mut entries: Vec<(String, Array)> =
            DType::ALL.iter().map(|&dtype| (format!("as_{dtype}"), pt::astype(&(&x * 3.0), dtype).unwrap())).collect();
        entries.push(("positive".into(), pt::greater(&x, 0.0).unwrap()));
        let outputs = DictOfNamedArrays::new(entries.iter().map(|(n, a)| (n.as_str(), a.clone()))).unwrap();
        let inputs = NamedData::from([("x".to_string(), values(&shape, 1))]);
        assert_written(&outputs, &inputs, &format!("casts of shape {shape:?}"));
    }
}

/// Outputs of reductions (a long one split over threads), a launch group, and GEMMs cut by rows,
/// by columns and both.
#[test]
fn outputs_of_reductions_groups_and_products_are_written_whole() {
    let n = Dim::param("n");
    let m = Dim::param("m");
    let x = pt::placeholder("x", [n.clone(), m.clone()], DType::F64).unwrap();
    let y = pt::placeholder("y", [m, Dim::param("p")], DType::F64).unwrap();
    let v = pt::placeholder("v", [Dim::param("long")], DType::F64).unwrap();
    let outputs = DictOfNamedArrays::new([
        ("row_sums", pt::sum(&x, 1).unwrap()),
        ("total", pt::sum(&v, None).unwrap()),
        ("scaled", &x * 2.0),
        ("shifted", &(&x * 2.0) + 1.0),
        ("product", pt::einsum("ij,jk->ik", &[&x, &y]).unwrap()),
    ])
    .unwrap();
    for (rows, terms, columns) in [(0, 3, 2), (1, 1, 1), (5, 7, 3), (300, 40, 170), (40, 600, 300), (2000, 20, 20)] {
        let inputs = NamedData::from([
            ("x".to_string(), values(&[rows, terms], 2)),
            ("y".to_string(), values(&[terms, columns], 3)),
            ("v".to_string(), values(&[300_000], 4)),
        ]);
        assert_written(&outputs, &inputs, &format!("{rows}x{terms}x{columns}"));
    }
}

/// Asserts that the mapping of the whole 2 MiB page after `start` (an array of at least 4 MiB)
/// was advised into transparent huge pages (`hg` in its `VmFlags`), where Linux has them.
fn assert_advised_into_huge_pages(start: *const u8, what: &str) {
    match pytato_runtime::spare::advised_into_huge_pages(start) {
        Some(advised) => assert!(advised, "{what}: not advised into huge pages"),
        None => eprintln!("skipped the huge page check of {what}: no transparent huge pages here"),
    }
}

/// A large fresh output (8 MiB here) is asked to be backed by transparent huge pages
/// (`run::advise_huge_pages`: `madvise(MADV_HUGEPAGE)` over the whole 2 MiB pages inside it),
/// which spares its first writes a page fault per 4 KiB; its values are still every element the
/// kernel wrote, as they are for a small output (which is not advised). The advice shows as
/// `hg` in the mapping's `VmFlags`.
#[test]
fn large_fresh_outputs_are_advised_into_huge_pages() {
    let n = 1024;
    let x = pt::placeholder("x", [Dim::param("n"), Dim::param("n")], DType::F64).unwrap();
    let y = &(&x * 2.0) + 1.0;
    let program = Cranelift::new().with_threads(2).compile(&(&y).into()).unwrap();
    for n in [n, 16] {
        let input = values(&[n, n], 3);
        let got = program.run(&NamedData::from([("x".to_string(), input.clone())])).unwrap();
        let (ArrayData::F64(got), ArrayData::F64(input)) = (&got["_pt_out"], &input) else { panic!("float64") };
        let expected = input.mapv(|v| v * 2.0 + 1.0);
        assert!(got.iter().zip(&expected).all(|(g, e)| g.to_bits() == e.to_bits()), "{n}x{n}: values");
        if n * n * 8 >= 4 << 20 {
            assert_advised_into_huge_pages(got.as_ptr().cast(), &format!("{n}x{n}"));
        }
    }
}

/// The large fresh results of host steps (scans and sorts, which run between a program's
/// kernels) are advised into transparent huge pages too (`Backend::fresh_memory_advice`): along
/// the last axis the result is the memory the step wrote, along another the copy back into place.
/// Their values are the running sums and the sorted rows, computed here by hand (int64: the
/// running sums wrap, as numpy's, and are exact whatever the order).
#[test]
fn large_fresh_results_of_host_steps_are_advised_into_huge_pages() {
    let x = pt::placeholder("x", [Dim::param("n"), Dim::param("n")], DType::I64).unwrap();
    let outputs = DictOfNamedArrays::new([
        ("along_rows", pt::cumulative_sum(&x, pt::ScanOptions::axis(1)).unwrap()),
        ("along_columns", pt::cumulative_sum(&x, pt::ScanOptions::axis(0)).unwrap()),
        ("sorted", pt::sort(&x, pt::SortOptions::default()).unwrap()),
    ])
    .unwrap();
    let program = Cranelift::new().with_threads(2).compile(&outputs.into()).unwrap();
    for n in [1024, 16] {
        // Values spread over the whole int64 range, so that sums wrap.
        let input = ndarray::Array2::from_shape_fn((n, n), |(i, j)| {
            ((i * n + j) as i64).wrapping_mul(0x9E37_79B9_7F4A_7C15_u64 as i64)
        });
        let data = ArrayData::from(input.clone().into_dyn());
        let got = program.run(&NamedData::from([("x".to_string(), data)])).unwrap();
        let mut along_rows = input.clone();
        let mut along_columns = input.clone();
        let mut sorted = input.clone();
        for i in 0..n {
            for j in 1..n {
                along_rows[[i, j]] = along_rows[[i, j - 1]].wrapping_add(along_rows[[i, j]]);
                along_columns[[j, i]] = along_columns[[j - 1, i]].wrapping_add(along_columns[[j, i]]);
            }
            let mut row: Vec<i64> = sorted.row(i).to_vec();
            row.sort();
            sorted.row_mut(i).assign(&ndarray::Array1::from(row));
        }
        for (name, expected) in [("along_rows", along_rows), ("along_columns", along_columns), ("sorted", sorted)] {
            let ArrayData::I64(result) = &got[name] else { panic!("{name}: int64") };
            assert_eq!(result, &expected.into_dyn(), "{n}x{n}: {name}");
            if n * n * 8 >= 4 << 20 {
                assert_advised_into_huge_pages(result.as_ptr().cast(), &format!("{n}x{n}: {name}"));
            }
        }
    }
}
