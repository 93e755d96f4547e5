//! `conformance [--backend NAME]... [--report-dir DIR]`: runs every case on every linked backend
//! (or the ones named), prints the matrix and one summary line per backend, writes
//! `report.md`, `report.json` and the Array API coverage table `array_api_coverage.md`
//! (`pytato_conformance::coverage`), and exits non-zero on any failure.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut names: Vec<String> = Vec::new();
    let mut report_dir = PathBuf::from("target/conformance");
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--backend" => names.extend(args.next()),
            "--report-dir" => report_dir = args.next().map(PathBuf::from).unwrap_or(report_dir),
            other => {
                eprintln!("unknown argument {other}; usage: conformance [--backend NAME]... [--report-dir DIR]");
                return ExitCode::from(2);
            }
        }
    }
    let (instances, skipped) = match pytato_conformance::instantiate(&names) {
        Ok(found) => found,
        Err(e) => {
            eprintln!("conformance: {e}");
            return ExitCode::FAILURE;
        }
    };
    let matrix = pytato_conformance::report::run_all(&instances);
    print!("{}", matrix.to_text());
    for line in matrix.summary_lines() {
        println!("{line}");
    }
    for line in &skipped {
        println!("{line}");
    }
    if let Err(e) = matrix.write(&report_dir) {
        eprintln!("conformance: writing reports to {}: {e}", report_dir.display());
        return ExitCode::FAILURE;
    }
    let coverage = pytato_conformance::coverage::coverage_markdown(&matrix, &pytato_conformance::load_cases());
    if let Err(e) = std::fs::write(report_dir.join("array_api_coverage.md"), &coverage) {
        eprintln!("conformance: writing the coverage table to {}: {e}", report_dir.display());
        return ExitCode::FAILURE;
    }
    println!(
        "reports: {dir}/report.md, {dir}/report.json, {dir}/array_api_coverage.md ({})",
        coverage.lines().find(|l| l.starts_with("**")).unwrap_or("").replace("**", ""),
        dir = report_dir.display()
    );
    if matrix.all_passed() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}
