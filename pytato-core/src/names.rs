//! Identifiers and the reserved namespaces of the seed ("Reserved Identifiers").
//!
//! - Names beginning with `_pt_` are reserved for the library, drawn only from the sub-regions
//!   [`PT_PREFIXES`] (`_pt_shp`, `_pt_out`, `_pt_in`, `_pt_data`, `_pt_dist`).
//! - `_N` (`_[0-9]+`) names output inames, `_rN` reduction inames, `_inN` automatically generated
//!   binding names of index lambdas.
//!
//! Where each rule applies:
//!
//! | name of | `_pt_*` | `_N` | `_rN` | `_inN` |
//! | --- | --- | --- | --- | --- |
//! | an input, output or size parameter (given by a user) | allowed | error | error | allowed |
//! | a binding of an index lambda | error | error | error | allowed |
//! | a library-generated name ([`internal_name`]) | listed sub-regions only | error | error | error |
//!
//! The seed makes the reserved prefixes a convention ("other than the iname names, these naming
//! conventions are not compulsory"): a user may name an input `_pt_out0` or `_in3`, and every
//! name the library generates is picked around the names a DAG already has ([`fresh_name`]), so
//! the two never collide. Inames are compulsory: the kernel IR reads inputs, size parameters
//! and inames (`_N`, and reduction inames `_rN`) as variables of one namespace, so an input may
//! not be named like either.

use crate::error::{Error, Result};

/// The prefix of generated count names (data-dependent lengths, see `pytato_runtime::phases`).
pub const COUNT_PREFIX: &str = "_pt_shp";

/// The sub-regions of `_pt_` the library draws generated names from.
pub const PT_PREFIXES: [&str; 5] = ["_pt_shp", "_pt_out", "_pt_in", "_pt_data", "_pt_dist"];

/// What a reserved name is reserved for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reserved {
    /// Starts with `_pt_`.
    Internal,
    /// `_N`: an output iname.
    Iname(usize),
    /// `_rN`: a reduction iname.
    ReductionIname(usize),
    /// `_inN`: a generated binding name.
    Binding(usize),
}

impl Reserved {
    fn describe(self) -> &'static str {
        match self {
            Reserved::Internal => "names starting with `_pt_` are reserved for pytato",
            Reserved::Iname(_) => "`_N` names index lambda inames",
            Reserved::ReductionIname(_) => "`_rN` names reduction inames",
            Reserved::Binding(_) => "`_inN` names generated index lambda bindings",
        }
    }
}

/// `true` for a non-empty string of letters, digits and `_` that does not start with a digit
/// (Python's `str.isidentifier` for the names this library uses).
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_alphabetic()) && chars.all(|c| c == '_' || c.is_alphanumeric())
}

fn digits_suffix(name: &str, prefix: &str) -> Option<usize> {
    let rest = name.strip_prefix(prefix)?;
    if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // A run of digits too long for usize is still an iname-shaped name.
    Some(rest.parse().unwrap_or(usize::MAX))
}

/// Which reserved namespace `name` falls in, if any.
pub fn classify(name: &str) -> Option<Reserved> {
    if name.starts_with("_pt_") {
        return Some(Reserved::Internal);
    }
    if let Some(n) = digits_suffix(name, "_") {
        return Some(Reserved::Iname(n));
    }
    if let Some(n) = digits_suffix(name, "_r") {
        return Some(Reserved::ReductionIname(n));
    }
    digits_suffix(name, "_in").map(Reserved::Binding)
}

/// The output iname of axis `axis`: `_0`, `_1`, ...
pub fn iname(axis: usize) -> String {
    format!("_{axis}")
}

/// The reduction iname number `n`: `_r0`, `_r1`, ...
pub fn reduction_iname(n: usize) -> String {
    format!("_r{n}")
}

/// The generated binding name number `n`: `_in0`, `_in1`, ...
pub fn binding_name(n: usize) -> String {
    format!("_in{n}")
}

/// Checks a user-given name for an input, output or size parameter; `what` says what is being
/// named. Only iname shapes (`_N`, `_rN`) are refused: see the [module docs](self).
pub fn check_array_name(what: &str, name: &str) -> Result<()> {
    check_identifier(what, name)?;
    match classify(name) {
        None | Some(Reserved::Internal) | Some(Reserved::Binding(_)) => Ok(()),
        Some(r) => Err(reserved(what, name, r)),
    }
}

/// Checks a binding name of an index lambda.
pub fn check_binding_name(name: &str) -> Result<()> {
    let what = "IndexLambda binding";
    check_identifier(what, name)?;
    match classify(name) {
        None | Some(Reserved::Binding(_)) => Ok(()),
        Some(r) => Err(reserved(what, name, r)),
    }
}

/// Checks a name the library generates: it must lie in one of the [`PT_PREFIXES`] sub-regions.
pub fn internal_name(name: &str) -> Result<()> {
    let what = "generated";
    check_identifier(what, name)?;
    if PT_PREFIXES.iter().any(|p| name.starts_with(p)) {
        Ok(())
    } else {
        Err(Error::ReservedName {
            what: what.into(),
            name: name.into(),
            reason: format!("generated names must start with one of {}", PT_PREFIXES.join(", ")),
        })
    }
}

/// A name the library generates, `prefix<k>` for the first `k >= from` whose name `taken` does not
/// hold; the name is added to `taken`. Users may name their arrays in the reserved namespaces
/// too (the seed makes them a convention, not a rule), so generated names are picked around the
/// names a DAG already uses and never collide with them.
pub fn fresh_name(prefix: &str, from: usize, taken: &mut std::collections::BTreeSet<String>) -> String {
    let name = (from..).map(|k| format!("{prefix}{k}")).find(|n| !taken.contains(n)).expect("a free name");
    taken.insert(name.clone());
    name
}

fn check_identifier(what: &str, name: &str) -> Result<()> {
    if is_identifier(name) { Ok(()) } else { Err(Error::InvalidName { what: what.into(), name: name.into() }) }
}

fn reserved(what: &str, name: &str, r: Reserved) -> Error {
    Error::ReservedName { what: what.into(), name: name.into(), reason: r.describe().into() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers() {
        for ok in ["x", "_x", "x1", "état", "_"] {
            assert!(is_identifier(ok), "{ok}");
        }
        for bad in ["", "1x", "a-b", "a b", "a.b"] {
            assert!(!is_identifier(bad), "{bad}");
        }
    }

    #[test]
    fn classification_follows_the_seed() {
        assert_eq!(classify("_pt_out"), Some(Reserved::Internal));
        assert_eq!(classify("_0"), Some(Reserved::Iname(0)));
        assert_eq!(classify("_12"), Some(Reserved::Iname(12)));
        assert_eq!(classify("_r3"), Some(Reserved::ReductionIname(3)));
        assert_eq!(classify("_in7"), Some(Reserved::Binding(7)));
        for free in ["_", "_r", "_in", "_x", "_0a", "_r1x", "_in_1", "x_0", "_pt", "_ptx"] {
            assert_eq!(classify(free), None, "{free}");
        }
    }

    #[test]
    fn array_names() {
        for ok in ["u", "_pt_in0", "_pt_out", "_pt_data3", "_in2", "_pt_whatever"] {
            assert!(check_array_name("Placeholder", ok).is_ok(), "{ok}");
        }
        for bad in ["_0", "_r1", "_17"] {
            let err = check_array_name("Placeholder", bad).unwrap_err();
            assert!(matches!(err, Error::ReservedName { .. }), "{bad}");
        }
        let err = check_array_name("Placeholder", "my array").unwrap_err();
        assert_eq!(err.to_string(), "Placeholder name \"my array\" is not an identifier");
    }

    #[test]
    fn binding_names() {
        assert!(check_binding_name("_in0").is_ok());
        assert!(check_binding_name("a").is_ok());
        assert!(check_binding_name("_0").is_err());
        assert!(check_binding_name("_r0").is_err());
        assert!(check_binding_name("_pt_data").is_err());
    }

    #[test]
    fn generated_names() {
        assert!(internal_name("_pt_data_3").is_ok());
        assert!(internal_name("_pt_shp0").is_ok());
        assert!(internal_name("_pt_other").is_err());
        assert!(internal_name("x").is_err());
    }
}
