//! The datashape language: every example of seed 003 parses and prints back to the same tree,
//! syntax errors point at the place, and random trees survive printing and parsing.

use pytato_datashape::ast::{BUILTIN_FUNCTIONS, is_keyword};
use pytato_datashape::{
    AddressSpace, Bound, MachineType, Module, Statement, Type, parse_module, parse_statement, parse_type,
};

/// Every datashape seed 003 writes, section by section, as the seed writes it.
const SEED_EXAMPLES: &str = "
uint32
int32
float
char

2, int32
2, 3, int32

Dim2       = N, M
Quaternion = 4, 4, int32
{x: Quaternion, y: Quaternion}
Dim, Dim2, int32 = a, b, c, d, int32

# NOT THIS
Dim, Dim2, int32 = a, b, a, b, int32

RGBA = {r: int32, g: int32, b: int32, a: int8}

Lengths = {1,2,3}
Lengths * 3

A, A, int32
A, B, int32

ShortStrings = Var(0, 5)*char
5*ShortStrings
Var(0,5), Var(0,5), int32

Stream(RGBA)

IntOrChar  = Union(int32, char)
StringLike = Union(char, string)

Pixel = Union(
    {r: int32, g: int32, b: int32, a: int8},
    {h: int32, s: int32, v: int32},
)

MaybeFloat = Either float nan
MaybeInt   = Either int32 nan

A, B, ( A, B -> Var(A, B) ), int32

int32*
*(4, 4, int32)
*{x: int32, y:int32, label: string}
*int32 (shm 'foo')
*int32 (rmt array://bar)

# Constructor
Point T = {x: T, y: T}

# Concrete instance
Point int32 = {x: int32, y: int32}

ctensor4 A B C D = A, B, C, D, complex64

x = ctensor4 A B C D

rank x     = 4
outerdim x = A
innerdim x = D
";

fn name(n: &str) -> Type {
    Type::Name(n.into())
}

fn machine(m: MachineType) -> Type {
    Type::Machine(m)
}

#[test]
fn every_example_of_the_seed_parses_and_prints_back_to_the_same_tree() {
    let module = parse_module(SEED_EXAMPLES).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(module.statements.len(), 38);
    let printed = module.to_string();
    let again = parse_module(&printed).unwrap_or_else(|e| panic!("{e}\n{printed}"));
    assert_eq!(again, module, "{printed}");
    // The printed form is canonical: printing it again changes nothing.
    assert_eq!(again.to_string(), printed);
}

#[test]
fn the_seeds_examples_have_the_trees_they_read_as() {
    use MachineType::*;
    let module = parse_module(SEED_EXAMPLES).unwrap();
    let s = &module.statements;
    assert_eq!(s[3], Statement::Type(machine(Char)));
    assert_eq!(s[2], Statement::Type(machine(Float64)), "the seed's `float` is float64");
    assert_eq!(s[5], Statement::Type(Type::Seq(vec![Type::Fixed(2), Type::Fixed(3), machine(Int32)])));
    assert_eq!(
        s[6],
        Statement::Definition { name: "Dim2".into(), params: vec![], body: Type::Seq(vec![name("N"), name("M")]) }
    );
    assert!(matches!(&s[9], Statement::Equation(Type::Seq(l), Type::Seq(r)) if l.len() == 3 && r.len() == 5));
    assert_eq!(
        s[13],
        Statement::Type(Type::Seq(vec![name("Lengths"), Type::Fixed(3)])),
        "`Lengths * 3`: `*` separates dimensions"
    );
    let Statement::Definition { body: Type::Enum(lengths), .. } = &s[12] else { panic!("{}", s[12]) };
    assert_eq!(lengths, &[1, 2, 3]);
    assert_eq!(
        s[16],
        Statement::Definition {
            name: "ShortStrings".into(),
            params: vec![],
            body: Type::Seq(vec![Type::Var(Bound::Int(0), Bound::Int(5)), machine(Char)])
        }
    );
    let Statement::Definition { body: Type::Union(members), .. } = &s[22] else { panic!("{}", s[22]) };
    assert_eq!(members.len(), 2, "a trailing comma in a Union spanning lines");
    assert_eq!(
        s[23],
        Statement::Definition {
            name: "MaybeFloat".into(),
            params: vec![],
            body: Type::Apply("Either".into(), vec![machine(Float64), name("nan")])
        }
    );
    let Statement::Type(Type::Seq(items)) = &s[25] else { panic!("{}", s[25]) };
    assert_eq!(
        items[2],
        Type::Function(
            vec![name("A"), name("B")],
            Box::new(Type::Var(Bound::Name("A".into()), Bound::Name("B".into())))
        )
    );
    assert_eq!(s[26], Statement::Type(Type::Pointer(Box::new(machine(Int32)), None)), "`int32*`");
    let Statement::Type(Type::Pointer(_, Some(shm))) = &s[29] else { panic!("{}", s[29]) };
    assert_eq!(shm, &AddressSpace { kind: "shm".into(), target: "foo".into(), quoted: true });
    let Statement::Type(Type::Pointer(_, Some(rmt))) = &s[30] else { panic!("{}", s[30]) };
    assert_eq!(rmt, &AddressSpace { kind: "rmt".into(), target: "array://bar".into(), quoted: false });
    assert!(matches!(&s[31], Statement::Definition { name, params, .. } if name == "Point" && params == &["T"]));
    assert!(matches!(&s[32], Statement::Equation(Type::Apply(head, _), Type::Record(_)) if head == "Point"));
    assert!(matches!(&s[33], Statement::Definition { name, params, .. } if name == "ctensor4" && params.len() == 4));
    assert!(matches!(&s[34], Statement::Definition { name, params, .. } if name == "x" && params.is_empty()));
    assert!(matches!(&s[35], Statement::Equation(Type::Apply(head, _), Type::Fixed(4)) if head == "rank"));
}

#[test]
fn printing_writes_one_canonical_form() {
    for (text, printed) in [
        ("Var(0, 5)*char", "Var(0, 5), char"),
        ("int32*", "*int32"),
        ("*(4,4,int32)", "*(4, 4, int32)"),
        ("*(Point int32)", "*(Point int32)"),
        ("2, (3, int32)", "2, (3, int32)"),
        ("((2, int32))", "2, int32"),
        ("{x: (2, int32), y: *int32}", "{x: 2, int32, y: *int32}"),
        ("{u: n, float64, mask: n * bool,}", "{u: n, float64, mask: n, bool}"),
        ("{x: 2, y}", "{x: 2, y}"),
        ("Union((2, int32), char,)", "Union((2, int32), char)"),
        ("Point (Either float nan)", "Point (Either float64 nan)"),
        ("( A -> (2, int32) )", "A -> (2, int32)"),
        ("n, (n -> n - 2), float64", "n, (n -> n - 2), float64"),
        ("(n, m -> 2 * n + m - 1)", "n, m -> m + 2*n - 1"),
        ("(n -> -n+3), (k -> 2*k)", "(n -> -n + 3), (k -> 2*k)"),
        ("(n -> 2 * int32)", "n -> (2, int32)"),
        ("{u: n, float64} -> {_pt_out: n, float64}", "{u: n, float64} -> {_pt_out: n, float64}"),
        ("Stream(A -> B)", "Stream((A -> B))"),
        ("*int32 ( shm   'foo' )", "*int32 (shm 'foo')"),
        ("{}", "{}"),
        ("Stream(3, int8)", "Stream(3, int8)"),
    ] {
        let t = parse_type(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(t.to_string(), printed, "{text}");
        assert_eq!(parse_type(printed).unwrap(), t, "{printed}");
    }
}

#[test]
fn syntax_errors_say_where_and_what_was_expected() {
    let cases: [(&str, (usize, usize), &str, &str); 8] = [
        ("2, 3,", (1, 6), "a type", "end of input"),
        ("{x: int32, y: }", (1, 15), "a type", "'}'"),
        ("Var(0, int32)", (1, 8), "a length bound (a number or a type variable)", "'int32'"),
        ("Union(int32 char", (1, 13), "')'", "'char'"),
        ("A = 2, int32\nB = 3 int32", (2, 7), "',', '=' or the end of the line", "'int32'"),
        ("{1, 2, x}", (1, 8), "a number", "'x'"),
        ("99999999999999999999, int32", (1, 1), "a length below 2^64 - 1", "'99999999999999999999'"),
        ("2, int32 @", (1, 10), "',', '=' or the end of the line", "'@'"),
    ];
    for (text, (line, column), expected, found) in cases {
        let err = parse_module(text).unwrap_err();
        assert_eq!((err.line, err.column), (line, column), "{text}: {err}");
        assert_eq!(err.expected, expected, "{text}");
        assert_eq!(err.found, found, "{text}");
        let message = err.to_string();
        let caret_line = message.lines().last().unwrap();
        assert_eq!(caret_line.find('^'), Some(4 + column - 1), "{message}");
        assert!(message.contains(&format!("line {line}, column {column}")), "{message}");
    }
    assert!(parse_statement("A = 2\nB = 3").is_err(), "one statement only");
    // Deep nesting is an error, not a stack overflow.
    let deep = format!("{}int32{}", "Stream(".repeat(100_000), ")".repeat(100_000));
    let err = parse_type(&deep).unwrap_err();
    assert!(err.expected.contains("nested brackets"), "{}", err.expected);
    let fine = format!("{}int32{}", "(".repeat(150), ")".repeat(150));
    assert_eq!(parse_type(&fine).unwrap(), Type::Machine(MachineType::Int32));
}

/// A small xorshift generator: the property test needs no crate.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }

    fn name(&mut self) -> String {
        let names = ["A", "B", "N", "M", "Dim2", "x", "T", "RGBA", "ctensor4", "nan", "a_1", "Quaternion"];
        names[self.below(names.len() as u64) as usize].to_string()
    }

    fn label(&mut self) -> String {
        ["x", "y", "r", "label", "Var", "int32"][self.below(6) as usize].to_string()
    }

    fn bound(&mut self) -> Bound {
        if self.below(2) == 0 { Bound::Int(self.below(10)) } else { Bound::Name(self.name()) }
    }

    fn ty(&mut self, depth: u32) -> Type {
        let leaf = depth == 0 || self.below(3) == 0;
        let choice = if leaf { self.below(4) } else { 4 + self.below(9) };
        let list =
            |rng: &mut Rng, min: u64| -> Vec<Type> { (0..min + rng.below(3)).map(|_| rng.ty(depth - 1)).collect() };
        match choice {
            0 => Type::Machine(MachineType::ALL[self.below(16) as usize].0),
            1 => Type::Fixed(self.below(1000)),
            2 => Type::Name(self.name()),
            3 => Type::Var(self.bound(), self.bound()),
            4 => Type::Apply(self.name(), list(self, 1)),
            5 => Type::Seq(list(self, 2)),
            6 => Type::Record((0..self.below(3)).map(|_| (self.label(), self.ty(depth - 1))).collect()),
            7 => Type::Enum((0..1 + self.below(3)).map(|_| self.below(9)).collect()),
            8 => Type::Stream(Box::new(self.ty(depth - 1))),
            9 => Type::Union(list(self, 1)),
            10 if self.below(2) == 0 => {
                // A computed length: a variable times a coefficient, plus a constant.
                let dim = pytato_core::Dim::param(self.name().as_str())
                    .mul_int(1 + self.below(3) as i64)
                    .and_then(|d| d.add(&pytato_core::Dim::new(self.below(5) as i64 - 2)))
                    .unwrap();
                let simple = dim.as_int().is_some() || (dim.constant() == 0 && dim.terms().all(|(_, c)| c == 1));
                let result = if simple { Type::Fixed(7) } else { Type::Length(dim) };
                Type::Function(list(self, 1), Box::new(result))
            }
            10 => Type::Function(list(self, 1), Box::new(self.ty(depth - 1))),
            _ => {
                let space = match self.below(3) {
                    0 => None,
                    1 => Some(AddressSpace { kind: "shm".into(), target: "foo".into(), quoted: true }),
                    _ => Some(AddressSpace { kind: "rmt".into(), target: "array://bar".into(), quoted: false }),
                };
                Type::Pointer(Box::new(self.ty(depth - 1)), space)
            }
        }
    }

    fn statement(&mut self) -> Statement {
        match self.below(3) {
            0 => Statement::Type(self.ty(4)),
            1 => Statement::Definition {
                name: self.name(),
                params: (0..self.below(3)).map(|_| self.name()).collect(),
                body: self.ty(4),
            },
            _ => {
                // An equation's left side defines nothing: not a name, not a constructor of names.
                let lhs = match self.ty(3) {
                    Type::Name(_) => Type::Fixed(1),
                    Type::Apply(head, args) if !BUILTIN_FUNCTIONS.contains(&head.as_str()) => {
                        Type::Apply("rank".into(), args)
                    }
                    other => other,
                };
                Statement::Equation(lhs, self.ty(4))
            }
        }
    }
}

#[test]
fn random_trees_print_and_parse_back_to_themselves() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for case in 0..3000 {
        let module = Module { statements: (0..1 + rng.below(3)).map(|_| rng.statement()).collect() };
        let printed = module.to_string();
        let parsed = parse_module(&printed).unwrap_or_else(|e| panic!("case {case}: {e}\n{printed}"));
        assert_eq!(parsed, module, "case {case}:\n{printed}");
    }
    assert!(is_keyword("Var") && !is_keyword("Point"));
}
