//! The error type of the core crate.
//!
//! Every message names the operation that failed and shows the shapes, dtypes, axes or names involved,
//! so that a user can find the offending call without a debugger.

use crate::dtype::DType;
use crate::shape::Shape;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong while building or checking an array expression.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Shapes that numpy broadcasting cannot combine.
    #[error("{op}: shapes {} cannot be broadcast together", fmt_shapes(.shapes))]
    BroadcastMismatch {
        /// The operation.
        op: String,
        /// The operand shapes.
        shapes: Vec<Shape>,
    },
    /// A shape that does not have the length or layout an operation needs.
    #[error("{op}: shape mismatch: expected {expected}, got {got}")]
    ShapeMismatch {
        /// The operation.
        op: String,
        /// What was expected, in words or as a shape.
        expected: String,
        /// The offending shape.
        got: Shape,
    },
    /// An axis length that is, or would be, negative.
    #[error("{op}: axis length {length} is negative")]
    NegativeLength {
        /// The operation.
        op: String,
        /// The length, as written.
        length: String,
    },
    /// Arithmetic on axis lengths that leaves the affine expressions shapes are made of.
    #[error("{op}: `{lhs}` and `{rhs}` give a non-affine axis length (shapes must be affine in size parameters)")]
    NonAffine {
        /// The arithmetic operation.
        op: String,
        /// Left operand.
        lhs: String,
        /// Right operand.
        rhs: String,
    },
    /// An integer overflow in shape or index arithmetic.
    #[error("{op}: integer overflow computing {what}")]
    Overflow {
        /// The operation.
        op: String,
        /// What was being computed.
        what: String,
    },
    /// An axis number outside `-ndim..ndim`.
    #[error("{op}: axis {axis} is out of range for an array of shape {shape}")]
    AxisOutOfRange {
        /// The operation.
        op: String,
        /// The axis as given.
        axis: i64,
        /// The array's shape.
        shape: Shape,
    },
    /// An integer index outside its axis.
    #[error("{op}: index {index} is out of range for axis {axis} of length {length} (shape {shape})")]
    IndexOutOfRange {
        /// The operation.
        op: String,
        /// The index as given.
        index: i64,
        /// The axis.
        axis: usize,
        /// The axis length.
        length: String,
        /// The array's shape.
        shape: Shape,
    },
    /// A dtype an operation does not accept.
    #[error("{op}: unsupported dtype {dtype}{}", fmt_detail(.detail))]
    UnsupportedDType {
        /// The operation.
        op: String,
        /// The offending dtype.
        dtype: DType,
        /// Why, or what would be accepted.
        detail: String,
    },
    /// Operands whose dtypes must agree and do not.
    #[error("{op}: dtype mismatch: {lhs} and {rhs}")]
    DTypeMismatch {
        /// The operation.
        op: String,
        /// First dtype.
        lhs: DType,
        /// Second dtype.
        rhs: DType,
    },
    /// A Python-style scalar that does not fit the dtype it must take (numpy 2 raises `OverflowError`).
    #[error("Python integer {value} out of bounds for {dtype}")]
    ScalarOutOfRange {
        /// The value, as written.
        value: String,
        /// The dtype it had to fit.
        dtype: DType,
    },
    /// A string that is not an identifier where one is needed.
    #[error("{what} name {name:?} is not an identifier")]
    InvalidName {
        /// What was being named.
        what: String,
        /// The name as given.
        name: String,
    },
    /// A name in one of the reserved namespaces.
    #[error("{what} name {name:?} is reserved: {reason}")]
    ReservedName {
        /// What was being named.
        what: String,
        /// The name as given.
        name: String,
        /// Which reserved pattern it matches.
        reason: String,
    },
    /// Two different input arrays with one name in one DAG.
    #[error("two different inputs share the name {name:?}: {first} and {second}")]
    DuplicateName {
        /// The shared name.
        name: String,
        /// A description of the first input.
        first: String,
        /// A description of the second input.
        second: String,
    },
    /// A variable in a scalar expression that refers to nothing.
    #[error("{op}: unknown variable {name:?} ({detail})")]
    UnknownVariable {
        /// The operation.
        op: String,
        /// The variable.
        name: String,
        /// What names are known.
        detail: String,
    },
    /// A reduction iname used in an index lambda with no reduction descriptor.
    #[error("IndexLambda: reduction iname {iname:?} has no reduction descriptor")]
    MissingReductionDescriptor {
        /// The iname.
        iname: String,
    },
    /// A scalar expression whose operand types do not fit its operation.
    #[error("{op}: {detail}")]
    ExprType {
        /// The operation in the scalar expression language.
        op: String,
        /// The operand dtypes and what was expected.
        detail: String,
    },
    /// Two tags of one unique family on the same node.
    #[error("tags {existing} and {new} both belong to the unique tag family {family}")]
    UniqueTagConflict {
        /// The family.
        family: String,
        /// The tag already present.
        existing: String,
        /// The tag being added.
        new: String,
    },
    /// A program input that was not supplied.
    #[error("missing input {name:?} ({expected})")]
    MissingInput {
        /// The input's name.
        name: String,
        /// Its declared shape and dtype.
        expected: String,
    },
    /// A supplied input that the program does not have.
    #[error("unknown input {name:?}; the program's inputs are [{}]", .known.join(", "))]
    UnknownInput {
        /// The name supplied.
        name: String,
        /// The inputs the program has.
        known: Vec<String>,
    },
    /// An input of the wrong dtype.
    #[error("input {name:?}: expected dtype {expected}, got {got}")]
    InputDType {
        /// The input.
        name: String,
        /// Its declared dtype.
        expected: DType,
        /// The supplied dtype.
        got: DType,
    },
    /// An input whose shape does not fit its declaration (or the sizes already bound).
    #[error("input {name:?}: expected shape {expected}, got {got:?}{}", fmt_detail(.detail))]
    InputShape {
        /// The input.
        name: String,
        /// Its declared shape.
        expected: Shape,
        /// The supplied shape.
        got: Vec<usize>,
        /// Which size made it not fit.
        detail: String,
    },
    /// An array given to `Program::run_into` for an output whose dtype or shape it does not have.
    #[error(
        "run_into: output {name:?} is {expected_dtype} of shape {expected_shape:?}, the array provided is {got_dtype} of shape {got_shape:?}"
    )]
    OutputArray {
        /// The output.
        name: String,
        /// The output's dtype.
        expected_dtype: DType,
        /// The output's shape for these inputs.
        expected_shape: Vec<usize>,
        /// The dtype of the array provided.
        got_dtype: DType,
        /// The shape of the array provided.
        got_shape: Vec<usize>,
    },
    /// `Program::run_into` given no array for some outputs, or arrays for names that are not outputs.
    #[error("run_into: the program's outputs are [{}]; {}", .known.join(", "), fmt_output_names(.missing, .unknown))]
    OutputNames {
        /// Outputs with no array.
        missing: Vec<String>,
        /// Names given that are not outputs.
        unknown: Vec<String>,
        /// The program's outputs.
        known: Vec<String>,
    },
    /// A size parameter that the inputs give two different values, or that has a value no
    /// input determines and none was passed.
    #[error("size parameter {param:?}: {detail}")]
    SizeBinding {
        /// The size parameter.
        param: String,
        /// What went wrong.
        detail: String,
    },
    /// A shape or index of the DAG that is invalid for the sizes bound at run time.
    #[error("{op}: {detail}")]
    InvalidForSizes {
        /// The node kind.
        op: String,
        /// What is invalid, with the bound values.
        detail: String,
    },
    /// A value of an index array (or a subscript) outside the indexed axis, found at run time.
    #[error("{op}: index {index} is out of bounds for axis {axis} with size {length}")]
    IndexOutOfBounds {
        /// The operation.
        op: String,
        /// The offending value.
        index: i64,
        /// The axis indexed.
        axis: usize,
        /// The axis length.
        length: usize,
    },
    /// Memory for an array that could not be had: the program refuses before it runs out of
    /// memory half way (Python's `MemoryError`).
    #[error("{op}: cannot allocate {bytes} bytes for {what}")]
    OutOfMemory {
        /// The operation that needed the memory.
        op: String,
        /// How many bytes.
        bytes: u64,
        /// What the memory was for (an array of which dtype and shape).
        what: String,
    },
    /// Something the backend cannot do (on this device); the reason says what.
    #[error("backend {backend}: unsupported: {reason}")]
    Unsupported {
        /// The backend.
        backend: String,
        /// Why.
        reason: String,
    },
    /// A backend name that is not linked into this binary.
    #[error("unknown backend {name:?}; linked backends: [{}]", .available.join(", "))]
    UnknownBackend {
        /// The name asked for.
        name: String,
        /// The linked backends.
        available: Vec<String>,
    },
    /// A bug in a backend: an invariant it relies on did not hold.
    #[error("internal error in backend {backend}: {message}")]
    Internal {
        /// The backend.
        backend: String,
        /// What happened.
        message: String,
    },
    /// Sends and receives that do not match across ranks (rank, tag, shape, dtype), or a cycle of
    /// waits between ranks; see `pytato_distributed::verify_distributed_partition`.
    #[error("{op} on rank {rank}: {message}")]
    DistributedMismatch {
        /// The operation.
        op: String,
        /// The rank that reports it.
        rank: usize,
        /// What kind of mismatch (pytato's verification errors tell them apart).
        problem: Mismatch,
        /// Which ranks, tags and arrays, and what differs.
        message: String,
    },
    /// A message that could not be sent or received: a peer that does not exist, a failed or
    /// timed-out receive, bytes that are not a message.
    #[error("{op} on rank {rank}: {message}")]
    Communication {
        /// The operation.
        op: String,
        /// The rank that reports it.
        rank: usize,
        /// What happened.
        message: String,
    },
    /// A run stopped because a stop was requested while it ran (`pytato_runtime::interrupt`:
    /// Ctrl-C in Python). Outputs written in place may be partly written.
    #[error("{op}: interrupted (a stop was requested while it ran)")]
    Interrupted {
        /// The operation that stopped.
        op: String,
    },
    /// Any other invalid argument; the message says which and why.
    #[error("{op}: {message}")]
    InvalidArgument {
        /// The operation.
        op: String,
        /// What is wrong.
        message: String,
    },
    /// Datashape text that does not parse (line, column, a caret and what was expected).
    #[error("{0}")]
    DatashapeSyntax(ParseError),
    /// A datashape construct that has no array meaning in this library (a ranged length, a stream,
    /// a union, a pointer, `char`, ...). It parses and prints; it cannot type an array.
    #[error("datashape: {construct} at {position} of `{datashape}` has no array meaning here")]
    DatashapeUnsupported {
        /// The construct, named and printed.
        construct: String,
        /// Where it is (`dimension 2 of field `x``).
        position: String,
        /// The whole datashape.
        datashape: String,
    },
}

/// The kinds of [`Error::DistributedMismatch`]: what pytato's `verify_distributed_partition`
/// reports as error classes of their own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Mismatch {
    /// A receive no rank sends to.
    MissingSend,
    /// A send no rank receives.
    MissingRecv,
    /// Two sends from one rank to another with one tag.
    DuplicateSend,
    /// Two receives on one rank from another with one tag.
    DuplicateRecv,
    /// A send and its receive disagree on the dtype or shape.
    Mismatched,
    /// A send or a receive names a rank the communicator does not have.
    NoSuchRank,
    /// Parts that wait for each other across ranks (a deadlock).
    Cycle,
}

impl Mismatch {
    /// The name (`"MissingSend"`, ...), as [`Error::kind`] names error kinds.
    pub fn name(self) -> &'static str {
        match self {
            Mismatch::MissingSend => "MissingSend",
            Mismatch::MissingRecv => "MissingRecv",
            Mismatch::DuplicateSend => "DuplicateSend",
            Mismatch::DuplicateRecv => "DuplicateRecv",
            Mismatch::Mismatched => "Mismatched",
            Mismatch::NoSuchRank => "NoSuchRank",
            Mismatch::Cycle => "Cycle",
        }
    }
}

/// A refusal of values that numpy makes as it computes and kernels make as they run: the
/// `check` argument of [`Func::RequireNonNegative`](crate::expr::Func::RequireNonNegative) is
/// its [`code`](ValueCheck::code), and a failed check is its [`error`](ValueCheck::error).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueCheck {
    /// `nanargmax` of a slice of NaNs only.
    AllNanSliceMax,
    /// `nanargmin` of a slice of NaNs only.
    AllNanSliceMin,
    /// `choose(a, choices, mode="raise")` with an entry of `a` outside `0..len(choices)`.
    ChoiceOutOfRange,
    /// `ravel_multi_index(..., mode="raise")` with a coordinate outside its axis.
    CoordinateOutOfRange,
    /// `bincount` of a negative value.
    BincountNegative,
    /// `bincount` of a value not below `minlength`, which would make the result's length depend
    /// on the data (numpy's is `max(x) + 1` then); not numpy's refusal but the library's.
    BincountBeyondMinlength,
    /// `unravel_index` of a flat index outside `0..size` of the shape.
    FlatIndexOutOfRange,
}

impl ValueCheck {
    /// Every check, in the order of their codes.
    pub const ALL: [ValueCheck; 7] = [
        ValueCheck::AllNanSliceMax,
        ValueCheck::AllNanSliceMin,
        ValueCheck::ChoiceOutOfRange,
        ValueCheck::CoordinateOutOfRange,
        ValueCheck::BincountNegative,
        ValueCheck::BincountBeyondMinlength,
        ValueCheck::FlatIndexOutOfRange,
    ];

    /// The check's code: its position in [`ValueCheck::ALL`].
    pub fn code(self) -> i64 {
        ValueCheck::ALL.iter().position(|&c| c == self).expect("every check is in ALL") as i64
    }

    /// The check whose code is `code`.
    pub fn from_code(code: i64) -> Option<ValueCheck> {
        usize::try_from(code).ok().and_then(|k| ValueCheck::ALL.get(k).copied())
    }

    /// numpy's error where the check fails (a `ValueError` in numpy, and in Python here).
    pub fn error(self) -> Error {
        let (op, message) = match self {
            ValueCheck::AllNanSliceMax => ("nanargmax", "All-NaN slice encountered"),
            ValueCheck::AllNanSliceMin => ("nanargmin", "All-NaN slice encountered"),
            ValueCheck::ChoiceOutOfRange => ("choose", "invalid entry in choice array"),
            ValueCheck::CoordinateOutOfRange => ("ravel_multi_index", "invalid entry in coordinates array"),
            ValueCheck::BincountNegative => ("bincount", "'list' argument must have no negative elements"),
            ValueCheck::BincountBeyondMinlength => (
                "bincount",
                "a value is not below minlength, so the result's length would depend on the data \
                 (numpy gives max(x) + 1 bins); give a minlength above every value",
            ),
            ValueCheck::FlatIndexOutOfRange => {
                ("unravel_index", "an index is out of bounds for an array with the shape's size")
            }
        };
        Error::invalid(op, message)
    }
}

impl Error {
    /// numpy's error for an integer raised to a negative integer power, which every backend
    /// reports where a [`Func::IntegerExponent`](crate::expr::Func::IntegerExponent) check fails.
    pub fn negative_exponent(exponent: i64) -> Error {
        Error::invalid("power", format!("integers to negative integer powers are not allowed (exponent {exponent})"))
    }

    /// The variant's name (`"MissingInput"`, `"IndexOutOfBounds"`, ...): what the conformance suite
    /// compares across backends, where messages may differ in detail.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::BroadcastMismatch { .. } => "BroadcastMismatch",
            Error::ShapeMismatch { .. } => "ShapeMismatch",
            Error::NegativeLength { .. } => "NegativeLength",
            Error::NonAffine { .. } => "NonAffine",
            Error::Overflow { .. } => "Overflow",
            Error::AxisOutOfRange { .. } => "AxisOutOfRange",
            Error::IndexOutOfRange { .. } => "IndexOutOfRange",
            Error::UnsupportedDType { .. } => "UnsupportedDType",
            Error::DTypeMismatch { .. } => "DTypeMismatch",
            Error::ScalarOutOfRange { .. } => "ScalarOutOfRange",
            Error::InvalidName { .. } => "InvalidName",
            Error::ReservedName { .. } => "ReservedName",
            Error::DuplicateName { .. } => "DuplicateName",
            Error::UnknownVariable { .. } => "UnknownVariable",
            Error::MissingReductionDescriptor { .. } => "MissingReductionDescriptor",
            Error::ExprType { .. } => "ExprType",
            Error::UniqueTagConflict { .. } => "UniqueTagConflict",
            Error::MissingInput { .. } => "MissingInput",
            Error::UnknownInput { .. } => "UnknownInput",
            Error::InputDType { .. } => "InputDType",
            Error::InputShape { .. } => "InputShape",
            Error::OutputArray { .. } => "OutputArray",
            Error::OutputNames { .. } => "OutputNames",
            Error::SizeBinding { .. } => "SizeBinding",
            Error::InvalidForSizes { .. } => "InvalidForSizes",
            Error::IndexOutOfBounds { .. } => "IndexOutOfBounds",
            Error::OutOfMemory { .. } => "OutOfMemory",
            Error::Unsupported { .. } => "Unsupported",
            Error::UnknownBackend { .. } => "UnknownBackend",
            Error::Internal { .. } => "Internal",
            Error::InvalidArgument { .. } => "InvalidArgument",
            Error::DatashapeSyntax(_) => "DatashapeSyntax",
            Error::DatashapeUnsupported { .. } => "DatashapeUnsupported",
            Error::DistributedMismatch { .. } => "DistributedMismatch",
            Error::Communication { .. } => "Communication",
            Error::Interrupted { .. } => "Interrupted",
        }
    }

    /// Shorthand for [`Error::InvalidArgument`].
    pub fn invalid(op: impl Into<String>, message: impl Into<String>) -> Error {
        Error::InvalidArgument { op: op.into(), message: message.into() }
    }

    /// Shorthand for [`Error::ExprType`].
    pub fn expr_type(op: impl Into<String>, detail: impl Into<String>) -> Error {
        Error::ExprType { op: op.into(), detail: detail.into() }
    }

    /// Shorthand for [`Error::UnsupportedDType`].
    pub fn unsupported_dtype(op: impl Into<String>, dtype: DType, detail: impl Into<String>) -> Error {
        Error::UnsupportedDType { op: op.into(), dtype, detail: detail.into() }
    }
}

impl Error {
    /// The same error reported under `op` when it came from the node constructor `node`: the
    /// frontend function a user called is the name that helps them.
    pub fn renamed(self, node: &str, op: &str) -> Error {
        let rename = |o: String| if o == node { op.to_string() } else { o };
        match self {
            Error::BroadcastMismatch { op, shapes } => Error::BroadcastMismatch { op: rename(op), shapes },
            Error::ShapeMismatch { op, expected, got } => Error::ShapeMismatch { op: rename(op), expected, got },
            Error::AxisOutOfRange { op, axis, shape } => Error::AxisOutOfRange { op: rename(op), axis, shape },
            Error::IndexOutOfRange { op, index, axis, length, shape } => {
                Error::IndexOutOfRange { op: rename(op), index, axis, length, shape }
            }
            Error::UnsupportedDType { op, dtype, detail } => Error::UnsupportedDType { op: rename(op), dtype, detail },
            Error::InvalidArgument { op, message } => Error::InvalidArgument { op: rename(op), message },
            Error::NonAffine { op, lhs, rhs } => Error::NonAffine { op: rename(op), lhs, rhs },
            Error::NegativeLength { op, length } => Error::NegativeLength { op: rename(op), length },
            other => other,
        }
    }
}

fn fmt_shapes(shapes: &[Shape]) -> String {
    let parts: Vec<String> = shapes.iter().map(ToString::to_string).collect();
    parts.join(" and ")
}

fn fmt_output_names(missing: &[String], unknown: &[String]) -> String {
    let mut parts = Vec::new();
    if !missing.is_empty() {
        parts.push(format!("no array for [{}]", missing.join(", ")));
    }
    if !unknown.is_empty() {
        parts.push(format!("arrays for unknown names [{}]", unknown.join(", ")));
    }
    parts.join(", ")
}

fn fmt_detail(detail: &str) -> String {
    if detail.is_empty() { String::new() } else { format!(" ({detail})") }
}

/// A syntax error of the datashape parser (`pytato-datashape`): where, what was expected, what was found, and the line with a caret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
    /// What the parser expected there.
    pub expected: String,
    /// What it found (a token, or "end of input").
    pub found: String,
    /// The text of the line.
    pub source_line: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "datashape: line {}, column {}: expected {}, found {}",
            self.line, self.column, self.expected, self.found
        )?;
        writeln!(f, "    {}", self.source_line)?;
        write!(f, "    {}^", " ".repeat(self.column.saturating_sub(1)))
    }
}

impl std::error::Error for ParseError {}
