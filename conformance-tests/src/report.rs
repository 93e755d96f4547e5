//! The case-by-backend matrix, the per-backend summary lines and the report files.

use std::fmt::Write as _;
use std::path::Path;

use crate::Outcome;

/// Outcomes of every case on every backend: `results[case][backend]`.
pub struct Matrix {
    /// Backend names, in column order.
    pub backends: Vec<String>,
    /// `(case name, one outcome per backend)`.
    pub rows: Vec<(String, Vec<Outcome>)>,
}

impl Matrix {
    /// `(passed, failed, unsupported)` for backend column `b`.
    pub fn counts(&self, b: usize) -> (usize, usize, usize) {
        let mut c = (0, 0, 0);
        for (_, outcomes) in &self.rows {
            match outcomes[b] {
                Outcome::Pass => c.0 += 1,
                Outcome::Fail(_) => c.1 += 1,
                Outcome::Unsupported(_) => c.2 += 1,
            }
        }
        c
    }

    /// The one-line summary per backend: `<backend>: N passed, N failed, N unsupported`.
    pub fn summary_lines(&self) -> Vec<String> {
        (0..self.backends.len())
            .map(|b| {
                let (p, f, u) = self.counts(b);
                format!("{}: {p} passed, {f} failed, {u} unsupported", self.backends[b])
            })
            .collect()
    }

    /// `true` when no case failed on any backend.
    pub fn all_passed(&self) -> bool {
        (0..self.backends.len()).all(|b| self.counts(b).1 == 0)
    }

    /// The matrix as aligned text, then the failures and unsupported cases with their reasons.
    pub fn to_text(&self) -> String {
        let width = self.rows.iter().map(|(n, _)| n.len()).max().unwrap_or(4).max(4);
        let mut s = format!("{:width$}  {}\n", "case", self.backends.join("  "));
        for (name, outcomes) in &self.rows {
            let cells: Vec<String> = outcomes
                .iter()
                .zip(&self.backends)
                .map(|(o, b)| {
                    let cell = match o {
                        Outcome::Pass => "pass",
                        Outcome::Fail(_) => "FAIL",
                        Outcome::Unsupported(_) => "unsupported",
                    };
                    format!("{cell:w$}", w = b.len().max(4))
                })
                .collect();
            let _ = writeln!(s, "{name:width$}  {}", cells.join("  "));
        }
        for (name, outcomes) in &self.rows {
            for (o, b) in outcomes.iter().zip(&self.backends) {
                match o {
                    Outcome::Fail(why) => {
                        let _ = writeln!(s, "FAIL {name} on {b}: {why}");
                    }
                    Outcome::Unsupported(why) => {
                        let _ = writeln!(s, "unsupported {name} on {b}: {why}");
                    }
                    Outcome::Pass => {}
                }
            }
        }
        s
    }

    /// Markdown: the summary, then a table of every case.
    pub fn to_markdown(&self) -> String {
        let mut s = String::from("# Conformance report\n\n");
        for line in self.summary_lines() {
            let _ = writeln!(s, "- {line}");
        }
        let _ = writeln!(s, "\n| case | {} |", self.backends.join(" | "));
        let _ = writeln!(s, "| --- |{}", " --- |".repeat(self.backends.len()));
        for (name, outcomes) in &self.rows {
            let cells: Vec<String> = outcomes
                .iter()
                .map(|o| match o {
                    Outcome::Pass => "pass".to_string(),
                    Outcome::Fail(why) => format!("**fail**: {}", why.replace('|', "\\|")),
                    Outcome::Unsupported(why) => format!("unsupported: {}", why.replace('|', "\\|")),
                })
                .collect();
            let _ = writeln!(s, "| {name} | {} |", cells.join(" | "));
        }
        s
    }

    /// JSON: `{"summary": {backend: {passed, failed, unsupported}}, "results": [{case, backend,
    /// outcome, detail}]}`.
    pub fn to_json(&self) -> serde_json::Value {
        let summary: serde_json::Map<String, serde_json::Value> = (0..self.backends.len())
            .map(|b| {
                let (p, f, u) = self.counts(b);
                (self.backends[b].clone(), serde_json::json!({"passed": p, "failed": f, "unsupported": u}))
            })
            .collect();
        let results: Vec<serde_json::Value> = self
            .rows
            .iter()
            .flat_map(|(name, outcomes)| {
                outcomes.iter().zip(&self.backends).map(move |(o, b)| {
                    let (outcome, detail) = match o {
                        Outcome::Pass => ("pass", String::new()),
                        Outcome::Fail(why) => ("fail", why.clone()),
                        Outcome::Unsupported(why) => ("unsupported", why.clone()),
                    };
                    serde_json::json!({"case": name, "backend": b, "outcome": outcome, "detail": detail})
                })
            })
            .collect();
        serde_json::json!({"summary": summary, "results": results})
    }

    /// Writes `report.md` and `report.json` into `dir`.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join("report.md"), self.to_markdown())?;
        std::fs::write(dir.join("report.json"), serde_json::to_string_pretty(&self.to_json())? + "\n")
    }
}

/// Runs every case on every backend in `backends` (name, instance).
pub fn run_all(backends: &[(String, Box<dyn pytato_runtime::backend::Backend>)]) -> Matrix {
    run_all_with(backends, crate::run_case)
}

/// [`run_all`] with every case's inputs uploaded and run on device data
/// ([`crate::run_case_on_device`]).
pub fn run_all_on_device(backends: &[(String, Box<dyn pytato_runtime::backend::Backend>)]) -> Matrix {
    run_all_with(backends, crate::run_case_on_device)
}

fn run_all_with(
    backends: &[(String, Box<dyn pytato_runtime::backend::Backend>)],
    run: fn(&crate::Case, &dyn pytato_runtime::backend::Backend) -> crate::Outcome,
) -> Matrix {
    let cases = crate::load_cases();
    let rows = cases
        .iter()
        .map(|case| (case.name.clone(), backends.iter().map(|(_, b)| run(case, b.as_ref())).collect()))
        .collect();
    Matrix { backends: backends.iter().map(|(n, _)| n.clone()).collect(), rows }
}
