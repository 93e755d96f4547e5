//! Every conformance case on every linked backend (the same run as `cargo xtask conformance`).

#[test]
fn every_case_passes_on_every_linked_backend() {
    let (instances, skipped) = pytato_conformance::instantiate(&[]).unwrap_or_else(|e| panic!("{e}"));
    for line in &skipped {
        eprintln!("{line}");
    }
    assert!(instances.iter().any(|(n, _)| n == "interp"), "the interpreter is always linked");
    let matrix = pytato_conformance::report::run_all(&instances);
    assert!(matrix.rows.len() >= 200, "only {} cases", matrix.rows.len());
    let text = matrix.to_text();
    let failures: Vec<&str> = text.lines().filter(|l| l.starts_with("FAIL ")).collect();
    assert!(matrix.all_passed(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}
