//! Shrinking a failing case to a small reproducer: fewer outputs, runs, statements and inputs,
//! simpler statements, shorter axes, as long as it still fails the same way.

use super::case::{FuzzCase, Len, names_in};

/// Simpler versions of `case`, most promising first.
fn candidates(case: &FuzzCase) -> Vec<FuzzCase> {
    let mut out = Vec::new();
    if case.outputs.len() > 1 {
        for o in &case.outputs {
            out.push(FuzzCase { outputs: vec![o.clone()], ..case.clone() });
        }
    }
    if case.runs.len() > 1 {
        for r in &case.runs {
            out.push(FuzzCase { runs: vec![r.clone()], ..case.clone() });
        }
    }
    // A statement replaced by one of the names it reads.
    for (k, (name, expr)) in case.stmts.iter().enumerate() {
        for operand in names_in(expr) {
            let is_value =
                case.stmts[..k].iter().any(|(n, _)| n == operand) || case.inputs.iter().any(|i| i.name == operand);
            if is_value && expr != operand {
                let mut c = case.clone();
                c.stmts[k] = (name.clone(), operand.to_string());
                out.push(c);
            }
        }
    }
    // Shorter axes and smaller sizes.
    for (i, input) in case.inputs.iter().enumerate() {
        for (a, len) in input.shape.iter().enumerate() {
            if let Len::Fixed(n) = len
                && *n > 1
            {
                let mut c = case.clone();
                c.inputs[i].shape[a] = Len::Fixed(1);
                out.push(c);
            }
        }
    }
    for (r, run) in case.runs.iter().enumerate() {
        for (p, v) in run {
            for smaller in [0, 1, v / 2] {
                if smaller < *v {
                    let mut c = case.clone();
                    c.runs[r].insert(p.clone(), smaller);
                    out.push(c);
                }
            }
        }
    }
    out.into_iter().map(|c| c.without_dead_code()).filter(|c| c != case).collect()
}

/// The smallest case found that `still_fails`, trying at most `budget` candidates.
pub fn shrink(case: &FuzzCase, budget: usize, still_fails: &mut dyn FnMut(&FuzzCase) -> bool) -> FuzzCase {
    let mut best = case.without_dead_code();
    if best != *case && !still_fails(&best) {
        best = case.clone();
    }
    let mut tried = 0;
    'improve: while tried < budget {
        for c in candidates(&best) {
            tried += 1;
            if still_fails(&c) {
                best = c;
                continue 'improve;
            }
            if tried >= budget {
                break;
            }
        }
        break;
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::generate::generate;

    #[test]
    fn shrinking_keeps_the_failure_and_drops_the_rest() {
        // "Fails" while some live statement reads a sine: shrinks to that statement alone.
        let reads_sine = |c: &FuzzCase| c.without_dead_code().stmts.iter().any(|(_, e)| e.contains("np.sin("));
        let case = (0..200)
            .map(generate)
            .find(|c| c.stmts.len() > 3 && c.outputs.len() > 1 && c.runs.len() > 1 && reads_sine(c))
            .unwrap();
        let mut fails = |c: &FuzzCase| c.build().is_ok() && reads_sine(c);
        let small = shrink(&case, 500, &mut fails);
        assert!(fails(&small));
        assert!(small.stmts.len() <= case.stmts.len());
        assert_eq!(small.outputs.len(), 1);
        assert_eq!(small.runs.len(), 1);
    }
}
