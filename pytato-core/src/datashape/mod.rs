//! Datashape: the type language of seed 003, for arrays and program signatures.
//!
//! A datashape generalizes a dtype and a shape into one small type: `2, 3, int32` is a 2 × 3
//! matrix of `int32`; `N, M, float64` is a matrix whose lengths are type variables; `A, A, int32`
//! is square. Aliases (`Quaternion = 4, 4, int32`), records (`{x: Quaternion, y: Quaternion}`),
//! ranged lengths (`Var(0, 5)`), streams, unions, nullable types (`Either float nan`), function
//! types, pointers and parametric constructors (`Point T = {x: T, y: T}`) complete the language.
//!
//! This module is the language: [`ast`] (the tree and its printer) and [`parse`] (text to tree,
//! with line, column and a caret on errors). Printing a tree and parsing the text gives the same
//! tree.
//!
//! ```
//! use pytato_core::datashape::{parse_module, parse_type};
//! let t = parse_type("A, B, (A, B -> Var(A, B)), int32").unwrap();
//! assert_eq!(parse_type(&t.to_string()).unwrap(), t);
//! let m = parse_module("Dim2 = N, M\nQuaternion = 4, 4, int32\n{x: Quaternion, y: Quaternion}").unwrap();
//! assert_eq!(m.statements.len(), 3);
//! ```

pub mod ast;
pub mod parse;

pub use ast::{AddressSpace, Bound, MachineType, Module, Statement, Type};
pub use parse::{ParseError, parse_module, parse_statement, parse_type};
