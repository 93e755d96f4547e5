//! The datashape parser: text to [`Module`], [`Statement`] or [`Type`], with errors that point at
//! the place.
//!
//! The grammar, from the loosest construct to the tightest:
//!
//! ```text
//! module    := (statement? newline)*                 # `#` starts a comment
//! statement := type ('=' type)?
//! type      := items ('->' (length | type))?        # a function type: A, B -> Var(A, B)
//! items     := item ((',' | '*') item)*             # two or more items: a Seq
//! item      := '*' atom space?                       # a pointer
//!            | head item-atom*                       # an application: Point int32
//!            | atom '*' space?                       # a pointer, when nothing follows the '*'
//!            | atom
//! atom      := INT | NAME | MACHINE
//!            | '(' type ')'                          # grouping; a function type inside a type
//! length    := '-'? term (('+' | '-') term)*       # n - 2, 2*n + 1: a computed length
//! term      := INT | NAME | INT '*' NAME
//!            | '{' (label ':' type),* '}' | '{' INT,+ '}'    # a field's `,` ends it before `label:`
//!            | 'Var' '(' bound ',' bound ')' | 'Stream' '(' type ')' | 'Union' '(' item,+ ','? ')'
//! space     := '(' NAME (QUOTED | text) ')'          # shm 'foo', rmt array://bar
//! ```
//!
//! Newlines end statements except inside brackets, so a `Union(...)` may span lines.

use std::fmt;

use pytato_core::error::ParseError;

use crate::ast::{AddressSpace, BUILTIN_FUNCTIONS, Bound, MachineType, Module, Statement, Type, is_keyword};

/// Parses a module: definitions, equations and types, one per line.
///
/// ```
/// use pytato_datashape::{parse_module, Statement};
/// let m = parse_module("Quaternion = 4, 4, int32\n{x: Quaternion, y: Quaternion}").unwrap();
/// assert!(matches!(&m.statements[0], Statement::Definition { name, .. } if name == "Quaternion"));
/// assert_eq!(m.statements[1].to_string(), "{x: Quaternion, y: Quaternion}");
/// ```
pub fn parse_module(text: &str) -> Result<Module, ParseError> {
    let mut p = Parser::new(text);
    let mut statements = Vec::new();
    loop {
        p.skip_blank_lines();
        if p.at_end() {
            return Ok(Module { statements });
        }
        statements.push(p.statement()?);
        p.end_of_statement()?;
    }
}

/// Parses one statement.
pub fn parse_statement(text: &str) -> Result<Statement, ParseError> {
    parse_whole(text, Parser::statement)
}

/// Parses one type.
///
/// ```
/// use pytato_datashape::{parse_type, Type};
/// let t = parse_type("Var(0, 5)*char").unwrap();
/// assert_eq!(t.to_string(), "Var(0, 5), char");
/// let err = parse_type("{x: int32, y: }").unwrap_err();
/// assert_eq!((err.line, err.column, err.expected.as_str()), (1, 15, "a type"));
/// assert!(err.to_string().ends_with("{x: int32, y: }\n                  ^"));
/// ```
pub fn parse_type(text: &str) -> Result<Type, ParseError> {
    parse_whole(text, Parser::ty)
}

/// `text` as one `part` (blank lines and comments around it allowed), or the error.
fn parse_whole<'t, T>(text: &'t str, part: fn(&mut Parser<'t>) -> Result<T, ParseError>) -> Result<T, ParseError> {
    let mut p = Parser::new(text);
    p.skip_blank_lines();
    let parsed = part(&mut p)?;
    p.skip_blank_lines();
    p.expect_end()?;
    Ok(parsed)
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Int(u64),
    Name(String),
    Quoted(String),
    Punct(&'static str),
    Newline,
    End,
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Token::Newline => f.write_str("end of line"),
            Token::End => f.write_str("end of input"),
            Token::Int(_) | Token::Name(_) | Token::Quoted(_) | Token::Punct(_) => f.write_str("a token"),
        }
    }
}

const PUNCTUATION: [&str; 11] = ["->", ",", "*", "=", "(", ")", "{", "}", ":", "+", "-"];

/// How deeply brackets may nest.
pub const MAX_NESTING: usize = 200;

struct Parser<'t> {
    text: &'t str,
    /// Byte offset of the next character.
    pos: usize,
    /// Open brackets: newlines inside them are spaces.
    depth: usize,
}

impl<'t> Parser<'t> {
    fn new(text: &'t str) -> Parser<'t> {
        Parser { text, pos: 0, depth: 0 }
    }

    fn rest(&self) -> &'t str {
        &self.text[self.pos..]
    }

    /// Skips spaces, comments and (inside brackets) newlines.
    fn skip_space(&mut self) {
        loop {
            let rest = self.rest();
            let Some(c) = rest.chars().next() else { return };
            if c == '#' {
                self.pos += rest.find('\n').unwrap_or(rest.len());
            } else if c == ' ' || c == '\t' || c == '\r' || (c == '\n' && self.depth > 0) {
                self.pos += c.len_utf8();
            } else {
                return;
            }
        }
    }

    fn skip_blank_lines(&mut self) {
        loop {
            self.skip_space();
            if self.rest().starts_with('\n') {
                self.pos += 1;
            } else {
                return;
            }
        }
    }

    fn at_end(&self) -> bool {
        self.rest().is_empty()
    }

    /// The next token and the byte offset after it, without consuming it.
    fn peek_at(&mut self) -> (Token, usize) {
        self.skip_space();
        let rest = self.rest();
        let Some(c) = rest.chars().next() else { return (Token::End, self.pos) };
        if c == '\n' {
            return (Token::Newline, self.pos + 1);
        }
        if c.is_ascii_digit() {
            let len = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
            // Too large a number is an error where it is read (see `int`).
            let value = rest[..len].parse().unwrap_or(u64::MAX);
            return (Token::Int(value), self.pos + len);
        }
        if c.is_alphabetic() || c == '_' {
            let len = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
            return (Token::Name(rest[..len].to_string()), self.pos + len);
        }
        if c == '\''
            && let Some(end) = rest[1..].find('\'')
        {
            return (Token::Quoted(rest[1..1 + end].to_string()), self.pos + end + 2);
        }
        for p in PUNCTUATION {
            if rest.starts_with(p) {
                return (Token::Punct(p), self.pos + p.len());
            }
        }
        (Token::Punct("?"), self.pos + c.len_utf8())
    }

    fn peek(&mut self) -> Token {
        self.peek_at().0
    }

    fn next(&mut self) -> Token {
        let (token, end) = self.peek_at();
        match token {
            Token::Punct("(" | "{") => self.depth += 1,
            Token::Punct(")" | "}") => self.depth = self.depth.saturating_sub(1),
            _ => {}
        }
        self.pos = end;
        token
    }

    fn is(&mut self, punct: &str) -> bool {
        matches!(self.peek(), Token::Punct(p) if p == punct)
    }

    fn eat(&mut self, punct: &str) -> bool {
        let found = self.is(punct);
        if found {
            self.next();
        }
        found
    }

    /// An error at the next token.
    fn error(&mut self, expected: impl Into<String>) -> ParseError {
        self.skip_space();
        let (token, end) = self.peek_at();
        let found = match token {
            Token::End | Token::Newline => token.to_string(),
            // The text as written (a number too large to read included).
            _ => format!("'{}'", &self.text[self.pos..end]),
        };
        let line_start = self.text[..self.pos].rfind('\n').map_or(0, |i| i + 1);
        let line_end = self.text[self.pos..].find('\n').map_or(self.text.len(), |i| self.pos + i);
        ParseError {
            line: self.text[..self.pos].matches('\n').count() + 1,
            column: self.text[line_start..self.pos].chars().count() + 1,
            expected: expected.into(),
            found,
            source_line: self.text[line_start..line_end].to_string(),
        }
    }

    fn expect(&mut self, punct: &str) -> Result<(), ParseError> {
        if self.eat(punct) { Ok(()) } else { Err(self.error(format!("'{punct}'"))) }
    }

    fn expect_end(&mut self) -> Result<(), ParseError> {
        if self.at_end() { Ok(()) } else { Err(self.error("end of input")) }
    }

    fn end_of_statement(&mut self) -> Result<(), ParseError> {
        match self.peek() {
            Token::Newline => {
                self.next();
                Ok(())
            }
            Token::End => Ok(()),
            _ => Err(self.error("',', '=' or the end of the line")),
        }
    }

    fn statement(&mut self) -> Result<Statement, ParseError> {
        let lhs = self.ty()?;
        if !self.eat("=") {
            return Ok(Statement::Type(lhs));
        }
        let rhs = self.ty()?;
        // A name, or a constructor applied to names, is being defined; anything else is a claim.
        let definition = match &lhs {
            Type::Name(name) => Some((name.clone(), Vec::new())),
            Type::Apply(head, args) if !BUILTIN_FUNCTIONS.contains(&head.as_str()) => args
                .iter()
                .map(|a| match a {
                    Type::Name(p) => Some(p.clone()),
                    _ => None,
                })
                .collect::<Option<Vec<String>>>()
                .map(|params| (head.clone(), params)),
            _ => None,
        };
        Ok(match definition {
            Some((name, params)) => Statement::Definition { name, params, body: rhs },
            None => Statement::Equation(lhs, rhs),
        })
    }

    fn ty(&mut self) -> Result<Type, ParseError> {
        let mut items = self.items()?;
        if self.eat("->") {
            let result = match self.length()? {
                Some(dim) => Type::Length(dim),
                None => self.ty()?,
            };
            return Ok(Type::Function(items, Box::new(result)));
        }
        Ok(if items.len() == 1 { items.pop().expect("one item") } else { Type::Seq(items) })
    }

    /// The items of a type, separated by `,` or `*` (a parenthesized sequence is one item).
    fn items(&mut self) -> Result<Vec<Type>, ParseError> {
        let mut items = vec![self.item()?];
        while self.is(",") || self.is("*") {
            self.next();
            items.push(self.item()?);
        }
        Ok(items)
    }

    /// Whether the next token can start an atom (so juxtaposition continues an application).
    fn starts_atom(&mut self) -> bool {
        match self.peek() {
            Token::Int(_) | Token::Name(_) => true,
            Token::Punct(p) => p == "(" || p == "{",
            _ => false,
        }
    }

    /// Whether the next token ends an item (so a `*` before it is a postfix pointer).
    fn ends_item(&mut self) -> bool {
        matches!(self.peek(), Token::End | Token::Newline | Token::Punct("," | ")" | "}" | "=" | "->"))
            || self.is("(") && self.address_space_follows()
    }

    /// Whether the next `(` opens an address space (`(shm 'foo')`) rather than a type.
    fn address_space_follows(&mut self) -> bool {
        let saved = (self.pos, self.depth);
        self.next();
        let kind = matches!(self.peek(), Token::Name(_));
        if kind {
            self.next();
        }
        let verdict = kind && !matches!(self.peek(), Token::Punct("," | ")" | "->" | "*"));
        (self.pos, self.depth) = saved;
        verdict
    }

    fn item(&mut self) -> Result<Type, ParseError> {
        if self.eat("*") {
            let target = self.atom()?;
            return self.pointer(target);
        }
        let first = self.atom()?;
        let item = match first {
            Type::Name(head) if self.starts_atom() => {
                let mut args = Vec::new();
                while self.starts_atom() {
                    args.push(self.atom()?);
                }
                Type::Apply(head, args)
            }
            other => other,
        };
        if self.is("*") {
            let saved = (self.pos, self.depth);
            self.next();
            if self.ends_item() {
                return self.pointer(item);
            }
            (self.pos, self.depth) = saved;
        }
        Ok(item)
    }

    /// A pointer to `target`, with the address space that may follow.
    fn pointer(&mut self, target: Type) -> Result<Type, ParseError> {
        if !(self.is("(") && self.address_space_follows()) {
            return Ok(Type::Pointer(Box::new(target), None));
        }
        self.expect("(")?;
        let Token::Name(kind) = self.next() else { unreachable!("checked by address_space_follows") };
        self.skip_space();
        let space = if let Token::Quoted(target) = self.peek() {
            self.next();
            AddressSpace { kind, target, quoted: true }
        } else {
            let rest = self.rest();
            let len = rest.find([')', '\n']).unwrap_or(rest.len());
            let target = rest[..len].trim_end().to_string();
            if target.is_empty() {
                return Err(self.error("an address (a quoted name or a location)"));
            }
            self.pos += len;
            AddressSpace { kind, target, quoted: false }
        };
        self.expect(")")?;
        Ok(Type::Pointer(Box::new(target), Some(space)))
    }

    fn atom(&mut self) -> Result<Type, ParseError> {
        // The parser recurses once per bracket: a bound keeps hostile input off the stack's end.
        if self.depth >= MAX_NESTING {
            return Err(self.error(format!("at most {MAX_NESTING} nested brackets")));
        }
        match self.peek() {
            Token::Int(_) => Ok(Type::Fixed(self.int()?)),
            Token::Name(name) if is_keyword(&name) => {
                self.next();
                self.keyword(&name)
            }
            Token::Name(name) => {
                self.next();
                Ok(MachineType::from_name(&name).map_or(Type::Name(name), Type::Machine))
            }
            Token::Punct("(") => {
                self.next();
                let inner = self.ty()?;
                self.expect(")")?;
                Ok(inner)
            }
            Token::Punct("{") => {
                self.next();
                self.braces()
            }
            _ => Err(self.error("a type")),
        }
    }

    /// A computed length ending the function type (`n - 2`, `2*n + 1`, `-n + 3`), or `None`
    /// (nothing consumed) where the result is a type: a bare name or number, `2, n`, `2 * int32`.
    fn length(&mut self) -> Result<Option<pytato_core::shape::Dim>, ParseError> {
        use pytato_core::shape::Dim;
        let saved = (self.pos, self.depth);
        let restore = |p: &mut Self| {
            (p.pos, p.depth) = saved;
            Ok(None)
        };
        let mut total = Dim::new(0);
        let mut operators = 0;
        let mut sign = if self.eat("-") {
            operators += 1;
            -1
        } else {
            1
        };
        loop {
            let term = match self.peek() {
                Token::Int(n) if n < u64::MAX => {
                    self.next();
                    let n = i64::try_from(n).map_err(|_| self.error("a coefficient below 2^63"))?;
                    if self.is("*") {
                        self.next();
                        let Token::Name(name) = self.peek() else { return restore(self) };
                        if MachineType::from_name(&name).is_some() || is_keyword(&name) {
                            return restore(self);
                        }
                        self.next();
                        operators += 1;
                        Dim::param(name.as_str()).mul_int(n)
                    } else {
                        Ok(Dim::new(n))
                    }
                }
                Token::Name(name) if MachineType::from_name(&name).is_none() && !is_keyword(&name) => {
                    self.next();
                    Ok(Dim::param(name.as_str()))
                }
                _ => return restore(self),
            };
            let term = term.and_then(|t| t.mul_int(sign)).map_err(|_| self.error("a length that fits in 64 bits"))?;
            total = total.add(&term).map_err(|_| self.error("a length that fits in 64 bits"))?;
            if self.is("+") || self.is("-") {
                sign = if self.is("-") { -1 } else { 1 };
                self.next();
                operators += 1;
            } else {
                break;
            }
        }
        // A bare name or number is a type; anything with an operator is a length.
        if operators == 0
            || !matches!(self.peek(), Token::Punct(")" | "=") | Token::End | Token::Newline)
            || total.as_int().is_some()
            || total.terms().count() == 1 && total.constant() == 0 && total.terms().all(|(_, c)| c == 1)
        {
            return restore(self);
        }
        Ok(Some(total))
    }

    fn int(&mut self) -> Result<u64, ParseError> {
        match self.peek() {
            Token::Int(u64::MAX) => Err(self.error("a length below 2^64 - 1")),
            Token::Int(n) => {
                self.next();
                Ok(n)
            }
            _ => Err(self.error("a number")),
        }
    }

    /// After `{`: a record or an enumeration.
    fn braces(&mut self) -> Result<Type, ParseError> {
        if let Token::Int(_) = self.peek() {
            let mut lengths = vec![self.int()?];
            while self.eat(",") {
                lengths.push(self.int()?);
            }
            self.expect("}")?;
            return Ok(Type::Enum(lengths));
        }
        let mut fields = Vec::new();
        while !self.eat("}") {
            if !fields.is_empty() {
                self.expect(",")?;
                if self.eat("}") {
                    break;
                }
            }
            let Token::Name(label) = self.peek() else { return Err(self.error("a field label")) };
            self.next();
            self.expect(":")?;
            fields.push((label, self.field_type()?));
        }
        Ok(Type::Record(fields))
    }

    /// A field's type: a whole type, whose `,` ends the field only where a label (`name:`) or the
    /// closing `}` follows (`{u: n, float64, mask: n, bool}`).
    fn field_type(&mut self) -> Result<Type, ParseError> {
        let mut items = vec![self.item()?];
        loop {
            if self.is("*") || (self.is(",") && !self.field_ends()) {
                self.next();
                items.push(self.item()?);
            } else {
                break;
            }
        }
        Ok(if items.len() == 1 { items.pop().expect("one item") } else { Type::Seq(items) })
    }

    /// Whether the `,` ahead ends a field: a label and `:`, or `}`, follow it.
    fn field_ends(&mut self) -> bool {
        let saved = (self.pos, self.depth);
        self.next();
        let verdict = match self.peek() {
            Token::Punct("}") => true,
            Token::Name(_) => {
                self.next();
                self.is(":")
            }
            _ => false,
        };
        (self.pos, self.depth) = saved;
        verdict
    }

    fn keyword(&mut self, name: &str) -> Result<Type, ParseError> {
        self.expect("(")?;
        let t = match name {
            "Var" => {
                let lo = self.bound()?;
                self.expect(",")?;
                let hi = self.bound()?;
                Type::Var(lo, hi)
            }
            "Stream" => Type::Stream(Box::new(self.ty()?)),
            _ => {
                let mut types = vec![self.item()?];
                while self.eat(",") {
                    if self.is(")") {
                        break;
                    }
                    types.push(self.item()?);
                }
                Type::Union(types)
            }
        };
        self.expect(")")?;
        Ok(t)
    }

    fn bound(&mut self) -> Result<Bound, ParseError> {
        match self.peek() {
            Token::Int(_) => Ok(Bound::Int(self.int()?)),
            Token::Name(n) if !is_keyword(&n) && MachineType::from_name(&n).is_none() => {
                self.next();
                Ok(Bound::Name(n))
            }
            _ => Err(self.error("a length bound (a number or a type variable)")),
        }
    }
}
