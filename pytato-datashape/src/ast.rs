//! The datashape syntax tree, and its printer (`Display`).
//!
//! The tree records what was written, not what it means: a [`Type::Name`] may be an alias, a
//! parametric constructor or a type variable, and that is decided when a [`Module`]'s
//! definitions are in scope. Printing writes one canonical form (`,` between dimensions, a
//! pointer's `*` in front, parentheses only where the parser needs them), so that parsing the
//! printed text gives back the same tree.

use std::fmt;

/// A machine type: an element type of fixed size. numpy's dtypes, and the seed's `char` and
/// `string`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MachineType {
    /// `bool`
    Bool,
    /// `int8`
    Int8,
    /// `int16`
    Int16,
    /// `int32`
    Int32,
    /// `int64`
    Int64,
    /// `uint8`
    UInt8,
    /// `uint16`
    UInt16,
    /// `uint32`
    UInt32,
    /// `uint64`
    UInt64,
    /// `float16`
    Float16,
    /// `float32`
    Float32,
    /// `float64`, also written `float` (the seed's spelling) or `double`
    Float64,
    /// `complex64`
    Complex64,
    /// `complex128`, also written `complex`
    Complex128,
    /// `char`: one character
    Char,
    /// `string`: text of any length
    String,
}

impl MachineType {
    /// Every machine type, with its canonical name.
    pub const ALL: [(MachineType, &'static str); 16] = [
        (MachineType::Bool, "bool"),
        (MachineType::Int8, "int8"),
        (MachineType::Int16, "int16"),
        (MachineType::Int32, "int32"),
        (MachineType::Int64, "int64"),
        (MachineType::UInt8, "uint8"),
        (MachineType::UInt16, "uint16"),
        (MachineType::UInt32, "uint32"),
        (MachineType::UInt64, "uint64"),
        (MachineType::Float16, "float16"),
        (MachineType::Float32, "float32"),
        (MachineType::Float64, "float64"),
        (MachineType::Complex64, "complex64"),
        (MachineType::Complex128, "complex128"),
        (MachineType::Char, "char"),
        (MachineType::String, "string"),
    ];

    /// The machine type a name denotes: the canonical names and the aliases `float`, `double`
    /// and `complex`.
    pub fn from_name(name: &str) -> Option<MachineType> {
        match name {
            "float" | "double" => Some(MachineType::Float64),
            "complex" => Some(MachineType::Complex128),
            _ => MachineType::ALL.iter().find(|(_, n)| *n == name).map(|(t, _)| *t),
        }
    }

    /// The canonical name.
    pub fn name(self) -> &'static str {
        MachineType::ALL.iter().find(|(t, _)| *t == self).map(|(_, n)| *n).expect("every type is listed")
    }
}

/// One bound of a `Var(lo, hi)` length: a number or a type variable.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Bound {
    /// A fixed number.
    Int(u64),
    /// A type variable (a length bound elsewhere).
    Name(String),
}

/// Where a pointer points: `(shm 'foo')`, `(rmt array://bar)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AddressSpace {
    /// The kind of memory (`shm`, `rmt`, ...).
    pub kind: String,
    /// Which one: the text after the kind.
    pub target: String,
    /// Whether the target was quoted (`'foo'`), as it is printed again.
    pub quoted: bool,
}

/// A datashape: a type of arrays, of their elements or of their dimensions.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// A machine type (`int32`).
    Machine(MachineType),
    /// A fixed length (`3`).
    Fixed(u64),
    /// A name: an alias or constructor defined in the module, or else a type variable.
    Name(String),
    /// A constructor applied to arguments, by juxtaposition (`Point int32`, `Either float nan`,
    /// `ctensor4 A B C D`, `rank x`).
    Apply(String, Vec<Type>),
    /// Dimensions and then (usually) an element type: `2, 3, int32` (also written `2 * 3 * int32`).
    /// At least two items.
    Seq(Vec<Type>),
    /// A record of labelled fields (`{x: int32, y: float64}`).
    Record(Vec<(String, Type)>),
    /// An enumeration dimension: its possible lengths (`{1, 2, 3}`).
    Enum(Vec<u64>),
    /// A ranged length, `Var(lo, hi)`.
    Var(Bound, Bound),
    /// A potentially infinite stream of elements, `Stream(T)`.
    Stream(Box<Type>),
    /// Exactly one of several types, `Union(T, U, ...)`.
    Union(Vec<Type>),
    /// A dimension computed from others: `(A, B -> Var(A, B))`.
    Function(Vec<Type>, Box<Type>),
    /// A reference to data of the target type (`*int32`, `int32*`), in an address space.
    Pointer(Box<Type>, Option<AddressSpace>),
    /// A length computed from type variables, `n - 2` or `2*n + 1`: only the result of a
    /// [`Type::Function`] (`(n -> n - 2)`, the seed's notation for a dimension given by logic),
    /// and never a bare variable or number (those are [`Type::Name`] and [`Type::Fixed`]).
    Length(pytato_core::shape::Dim),
}

/// One line of a datashape module.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Statement {
    /// `Name = type` or, with parameters, `Point T = {x: T, y: T}`.
    Definition {
        /// The name defined.
        name: String,
        /// Parameters, fresh type variables of each use.
        params: Vec<String>,
        /// What the name stands for.
        body: Type,
    },
    /// `lhs = rhs` that defines nothing: a claim that both sides are the same type
    /// (`Point int32 = {x: int32, y: int32}`, `rank x = 4`).
    Equation(Type, Type),
    /// A type on its own.
    Type(Type),
}

/// A sequence of statements: definitions, equations and types, one per line.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Module {
    /// The statements in order.
    pub statements: Vec<Statement>,
}

/// Names that are functions of a type rather than constructors: `rank x`, `outerdim x`,
/// `innerdim x` (and `Either`, the nullable constructor). An application of one of these on the
/// left of `=` is an equation, never a definition.
pub const BUILTIN_FUNCTIONS: [&str; 4] = ["rank", "outerdim", "innerdim", "Either"];

/// Whether `name` is written with call syntax (`Var(…)`, `Stream(…)`, `Union(…)`) and so is
/// not a plain name.
pub fn is_keyword(name: &str) -> bool {
    matches!(name, "Var" | "Stream" | "Union")
}

/// How much of a type a position in the grammar takes without parentheses.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Context {
    /// An argument of an application, a pointer's target: a single atom.
    Atom,
    /// An item of a sequence, a field, an argument of `Union`: anything but a sequence.
    Item,
    /// A whole type inside brackets.
    Whole,
    /// A whole statement's type: a function type needs no parentheses.
    Top,
}

impl Type {
    fn needs_parens(&self, context: Context) -> bool {
        match self {
            Type::Seq(_) => context < Context::Whole,
            Type::Apply(..) | Type::Pointer(..) => context == Context::Atom,
            Type::Function(..) => context < Context::Top,
            _ => false,
        }
    }

    fn write_in(&self, f: &mut fmt::Formatter<'_>, context: Context) -> fmt::Result {
        if self.needs_parens(context) {
            f.write_str("(")?;
            self.write_in(f, Context::Top)?;
            return f.write_str(")");
        }
        match self {
            Type::Machine(m) => f.write_str(m.name()),
            Type::Fixed(n) => write!(f, "{n}"),
            Type::Name(n) => f.write_str(n),
            Type::Apply(head, args) => {
                f.write_str(head)?;
                for arg in args {
                    f.write_str(" ")?;
                    arg.write_in(f, Context::Atom)?;
                }
                Ok(())
            }
            Type::Seq(items) => list(f, items, ", ", Context::Item),
            Type::Record(fields) => {
                f.write_str("{")?;
                for (k, (label, ty)) in fields.iter().enumerate() {
                    if k > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{label}: ")?;
                    ty.write_in(f, Context::Whole)?;
                }
                f.write_str("}")
            }
            Type::Enum(lengths) => {
                let lengths: Vec<String> = lengths.iter().map(u64::to_string).collect();
                write!(f, "{{{}}}", lengths.join(", "))
            }
            Type::Var(lo, hi) => write!(f, "Var({lo}, {hi})"),
            Type::Stream(t) => {
                f.write_str("Stream(")?;
                t.write_in(f, Context::Whole)?;
                f.write_str(")")
            }
            Type::Union(types) => {
                f.write_str("Union(")?;
                list(f, types, ", ", Context::Item)?;
                f.write_str(")")
            }
            Type::Function(params, result) => {
                list(f, params, ", ", Context::Item)?;
                f.write_str(" -> ")?;
                result.write_in(f, Context::Item)
            }
            Type::Length(dim) => write!(f, "{dim}"),
            Type::Pointer(target, space) => {
                f.write_str("*")?;
                target.write_in(f, Context::Atom)?;
                match space {
                    Some(AddressSpace { kind, target, quoted: true }) => write!(f, " ({kind} '{target}')"),
                    Some(AddressSpace { kind, target, quoted: false }) => write!(f, " ({kind} {target})"),
                    None => Ok(()),
                }
            }
        }
    }
}

fn list(f: &mut fmt::Formatter<'_>, items: &[Type], separator: &str, context: Context) -> fmt::Result {
    for (k, item) in items.iter().enumerate() {
        if k > 0 {
            f.write_str(separator)?;
        }
        item.write_in(f, context)?;
    }
    Ok(())
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bound::Int(n) => write!(f, "{n}"),
            Bound::Name(n) => f.write_str(n),
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_in(f, Context::Top)
    }
}

impl fmt::Display for Statement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Statement::Definition { name, params, body } => {
                f.write_str(name)?;
                for p in params {
                    write!(f, " {p}")?;
                }
                write!(f, " = {body}")
            }
            Statement::Equation(lhs, rhs) => write!(f, "{lhs} = {rhs}"),
            Statement::Type(t) => write!(f, "{t}"),
        }
    }
}

impl fmt::Display for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for statement in &self.statements {
            writeln!(f, "{statement}")?;
        }
        Ok(())
    }
}
