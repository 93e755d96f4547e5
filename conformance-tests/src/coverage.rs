//! The Array API coverage table: for every function and constant of the Python Array API
//! standard's main namespace (revision 2024.12, listed in `data/array_api_2024_12.txt`), the
//! conformance cases whose numpy expressions use it and, per backend, whether all of them pass.
//!
//! A function counts as covered on a backend only when it has cases and they all pass there:
//! the table is derived from the cases and the run, never from a list of claims. A case "uses" a
//! function when its expression spells it the way numpy code does (`np.arccos(` for `acos`,
//! ` + ` for `add`, `.astype(` for `astype`; see [`spellings`]).

use std::fmt::Write as _;

use crate::Outcome;
use crate::golden::Case;
use crate::report::Matrix;

/// The standard's main namespace: `(category, name)` in the order of the specification.
pub fn standard() -> Vec<(String, String)> {
    include_str!("../data/array_api_2024_12.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split_once(' ').map(|(c, n)| (c.to_string(), n.trim().to_string())))
        .collect()
}

/// numpy's name for a standard function, where they differ.
pub fn numpy_name(name: &str) -> Option<&'static str> {
    Some(match name {
        "acos" => "arccos",
        "acosh" => "arccosh",
        "asin" => "arcsin",
        "asinh" => "arcsinh",
        "atan" => "arctan",
        "atan2" => "arctan2",
        "atanh" => "arctanh",
        "bitwise_invert" => "invert",
        "bitwise_left_shift" => "left_shift",
        "bitwise_right_shift" => "right_shift",
        "concat" => "concatenate",
        "permute_dims" => "transpose",
        "pow" => "power",
        _ => return None,
    })
}

/// How numpy code in a case's expression spells a use of the standard's `name`.
pub fn spellings(category: &str, name: &str) -> Vec<String> {
    let mut out = Vec::new();
    if category == "constants" {
        out.push(format!("np.{name}"));
        if name == "newaxis" {
            out.push("None]".into());
            out.push("None,".into());
        }
        return out;
    }
    out.push(format!("np.{name}("));
    if let Some(np) = numpy_name(name) {
        out.push(format!("np.{np}("));
    }
    let operator = match name {
        "add" => Some(" + "),
        "subtract" => Some(" - "),
        "multiply" => Some(" * "),
        "divide" => Some(" / "),
        "floor_divide" => Some(" // "),
        "remainder" => Some(" % "),
        "pow" => Some(" ** "),
        "equal" => Some(" == "),
        "not_equal" => Some(" != "),
        "less" => Some(" < "),
        "less_equal" => Some(" <= "),
        "greater" => Some(" > "),
        "greater_equal" => Some(" >= "),
        "bitwise_and" => Some(" & "),
        "bitwise_or" => Some(" | "),
        "bitwise_xor" => Some(" ^ "),
        "bitwise_left_shift" => Some(" << "),
        "bitwise_right_shift" => Some(" >> "),
        "bitwise_invert" => Some("~"),
        "matmul" => Some(" @ "),
        _ => None,
    };
    out.extend(operator.map(str::to_string));
    match name {
        "astype" | "reshape" | "sum" | "prod" | "max" | "min" | "mean" | "all" | "any" => out.push(format!(".{name}(")),
        "permute_dims" => out.push(".T".into()),
        "matrix_transpose" => out.push(".mT".into()),
        _ => {}
    }
    out
}

/// Whether `expr` holds `spelling`; a spelling that ends in a name (`np.e`) must not continue
/// as a longer name (`np.exp`).
fn uses(expr: &str, spelling: &str) -> bool {
    let ends_in_name = spelling.chars().last().is_some_and(|c| c.is_alphanumeric() || c == '_');
    expr.match_indices(spelling).any(|(at, _)| {
        !ends_in_name || !expr[at + spelling.len()..].chars().next().is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// The coverage table in Markdown, from the cases and one conformance run.
pub fn coverage_markdown(matrix: &Matrix, cases: &[Case]) -> String {
    let standard = standard();
    let mut s = String::from(
        "# Python Array API coverage\n\nThe main namespace of the Array API standard (revision 2024.12, \
         `conformance-tests/data/array_api_2024_12.txt`), against the conformance cases: a function is \
         covered on a backend when cases use it and all of them pass there. Written by `cargo xtask \
         conformance` (`target/conformance/array_api_coverage.md`).\n\n",
    );
    let mut rows = String::new();
    let mut covered = 0;
    for (category, name) in &standard {
        let spelled = spellings(category, name);
        let using: Vec<usize> = cases
            .iter()
            .enumerate()
            .filter(|(_, c)| c.exprs.values().any(|e| spelled.iter().any(|sp| uses(e, sp))))
            .map(|(k, _)| k)
            .collect();
        let mut cells = Vec::new();
        let mut all_pass = !using.is_empty();
        for b in 0..matrix.backends.len() {
            let failed = using
                .iter()
                .filter(|&&k| {
                    let row = matrix.rows.iter().find(|(n, _)| *n == cases[k].name);
                    !matches!(row.map(|(_, o)| &o[b]), Some(Outcome::Pass))
                })
                .count();
            all_pass &= failed == 0;
            cells.push(if using.is_empty() {
                "–".to_string()
            } else if failed == 0 {
                "pass".to_string()
            } else {
                format!("{failed} not passing")
            });
        }
        if all_pass {
            covered += 1;
        }
        let numpy = numpy_name(name).map_or(String::new(), |n| format!("`{n}`"));
        let _ = writeln!(rows, "| {category} | `{name}` | {numpy} | {} | {} |", using.len(), cells.join(" | "));
    }
    let _ = writeln!(
        s,
        "**{covered} of {} names covered on every backend** ({}).\n",
        standard.len(),
        matrix.backends.join(", ")
    );
    let _ = writeln!(s, "| category | name | numpy name | cases | {} |", matrix.backends.join(" | "));
    let _ = writeln!(s, "| --- | --- | --- | --- |{}", " --- |".repeat(matrix.backends.len()));
    s.push_str(&rows);
    s.push_str(&dtype_markdown(matrix, cases));
    s
}

/// The dtypes section: for each dtype, the cases with an input or an output of it and how many
/// of them pass on each backend.
fn dtype_markdown(matrix: &Matrix, cases: &[Case]) -> String {
    let mut s = String::from(
        "\n## Data types\n\nCases with an input or an output of each dtype, and how many of them pass on each backend.\n\n",
    );
    let _ = writeln!(s, "| dtype | cases | {} |", matrix.backends.join(" | "));
    let _ = writeln!(s, "| --- | --- |{}", " --- |".repeat(matrix.backends.len()));
    for dtype in pytato_core::DType::ALL {
        let using: Vec<&Case> = cases
            .iter()
            .filter(|c| c.inputs.values().any(|i| i.dtype == dtype) || c.expected.values().any(|e| e.dtype() == dtype))
            .collect();
        let cells: Vec<String> = (0..matrix.backends.len())
            .map(|b| {
                let passing = using
                    .iter()
                    .filter(|c| {
                        let row = matrix.rows.iter().find(|(n, _)| *n == c.name);
                        matches!(row.map(|(_, o)| &o[b]), Some(Outcome::Pass))
                    })
                    .count();
                format!("{passing} pass")
            })
            .collect();
        let _ = writeln!(s, "| `{dtype}` | {} | {} |", using.len(), cells.join(" | "));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_standard_list_is_complete() {
        let names = standard();
        assert_eq!(names.len(), 138, "67 elementwise functions, 71 others and constants");
        for expected in ["argmax", "cumulative_sum", "unique_all", "take_along_axis", "newaxis", "vecdot"] {
            assert!(names.iter().any(|(_, n)| n == expected), "{expected}");
        }
    }

    #[test]
    fn spellings_follow_numpy() {
        assert!(spellings("elementwise", "acos").contains(&"np.arccos(".to_string()));
        assert!(spellings("elementwise", "less").contains(&" < ".to_string()));
        assert!(!spellings("elementwise", "less").iter().any(|s| "x << y".contains(s.as_str())));
        assert!(spellings("constants", "pi").contains(&"np.pi".to_string()));
        assert!(uses("x * np.e", "np.e") && uses("np.e + 1", "np.e"));
        assert!(!uses("np.exp(x) + np.eye(3)", "np.e"));
    }
}
