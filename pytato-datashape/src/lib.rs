//! Datashape: the type language of seed 003, for arrays and program signatures.
//!
//! A datashape generalizes a dtype and a shape into one small type: `2, 3, int32` is a 2 × 3
//! matrix of `int32`; `N, M, float64` is a matrix whose lengths are type variables; `A, A, int32`
//! is square. Aliases (`Quaternion = 4, 4, int32`), records (`{x: Quaternion, y: Quaternion}`),
//! ranged lengths (`Var(0, 5)`), streams, unions, nullable types (`Either float nan`), function
//! types, pointers and parametric constructors (`Point T = {x: T, y: T}`) complete the language.
//!
//! [`ast`] is the tree and its printer, [`parse`] turns text into trees (errors carry line, column
//! and a caret); printing a tree and parsing the text gives the same tree. [`meaning`] gives
//! the trees their sense: definitions in a [`Scope`], expansion, equations, and the arrays a
//! datashape describes; [`placeholder`] and [`placeholders`] declare inputs by datashape.
//!
//! ```
//! use pytato_datashape::{parse_module, parse_type};
//! let t = parse_type("A, B, (A, B -> Var(A, B)), int32").unwrap();
//! assert_eq!(parse_type(&t.to_string()).unwrap(), t);
//! let m = parse_module("Dim2 = N, M\nQuaternion = 4, 4, int32\n{x: Quaternion, y: Quaternion}").unwrap();
//! assert_eq!(m.statements.len(), 3);
//! ```

pub mod ast;
pub mod meaning;
pub mod parse;

pub use ast::{AddressSpace, Bound, MachineType, Module, Statement, Type};
pub use meaning::{ArrayType, Scope, array_type};
pub use parse::{parse_module, parse_statement, parse_type};
pub use pytato_core::error::ParseError;

use pytato_core::array::{Array, DictOfNamedArrays};
use pytato_core::error::{Error, Result};

impl Scope {
    /// The arrays `datashape` describes, with this scope's definitions.
    pub fn array_type(&self, datashape: &str) -> Result<ArrayType> {
        array_type(&self.expand_text(datashape)?)
    }

    /// [`placeholder`] with this scope's definitions.
    pub fn placeholder(&self, name: &str, datashape: &str) -> Result<Array> {
        match self.array_type(datashape)? {
            ArrayType::Array { shape, dtype, bounds } => bounded_placeholder(name, shape, dtype, bounds),
            ArrayType::Record(_) => Err(Error::invalid(
                "datashape",
                format!("`{datashape}` is a record: declare it with `placeholders` (one input per field)"),
            )),
        }
    }

    /// [`placeholders`] with this scope's definitions.
    pub fn placeholders(&self, datashape: &str) -> Result<DictOfNamedArrays> {
        let ArrayType::Record(fields) = self.array_type(datashape)? else {
            return Err(Error::invalid(
                "datashape",
                format!("`{datashape}` is one array, not a record: declare it with `placeholder`"),
            ));
        };
        let mut entries = Vec::with_capacity(fields.len());
        for (label, field) in fields {
            let ArrayType::Array { shape, dtype, bounds } = field else {
                return Err(Error::invalid(
                    "datashape",
                    format!("field `{label}` of `{datashape}` is a record: inputs are arrays, records only group them"),
                ));
            };
            entries.push((label.clone(), bounded_placeholder(&label, shape, dtype, bounds)?));
        }
        DictOfNamedArrays::new(entries.iter().map(|(n, a)| (n.as_str(), a.clone())))
    }
}

/// A placeholder, tagged with the bounds of its ranged lengths where it has some.
fn bounded_placeholder(
    name: &str,
    shape: pytato_core::Shape,
    dtype: pytato_core::DType,
    bounds: Vec<(usize, pytato_core::Dim, pytato_core::Dim)>,
) -> Result<Array> {
    let placeholder = {
        let _site = pytato_core::created_at::enter();
        Array::new_placeholder(Some(name), shape, dtype)?
    };
    if bounds.is_empty() { Ok(placeholder) } else { placeholder.tagged(pytato_core::tags::LengthBounds(bounds)) }
}

/// A placeholder named `name` whose shape and dtype a datashape gives: fixed lengths, and type
/// variables as size parameters (`A, A, float64` is a square matrix: one size parameter `A`).
///
/// ```
/// use pytato_core::DType;
/// use pytato_datashape as datashape;
/// let u = datashape::placeholder("u", "n, 3, float64").unwrap();
/// assert_eq!((u.shape().to_string(), u.dtype()), ("(n, 3)".into(), DType::F64));
/// let err = datashape::placeholder("s", "Var(0, 5), char").unwrap_err();
/// assert_eq!(err.kind(), "DatashapeUnsupported");
/// ```
pub fn placeholder(name: &str, datashape: &str) -> Result<Array> {
    Scope::new().placeholder(name, datashape)
}

/// One placeholder per field of a record datashape, named by its label, as a dictionary;
/// dimensions in front of the record apply to every field.
///
/// ```
/// use pytato_datashape as datashape;
/// let inputs = datashape::placeholders("n, {u: float64, mask: bool}").unwrap();
/// assert_eq!(inputs.get("mask").unwrap().shape().to_string(), "(n,)");
/// ```
pub fn placeholders(datashape: &str) -> Result<DictOfNamedArrays> {
    Scope::new().placeholders(datashape)
}
