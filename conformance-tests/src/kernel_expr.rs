//! The statements of user kernels in conformance cases: index expressions in Python syntax,
//! parsed into the kernel IR's [`Expr`] (the generator evaluates the same text with numpy over
//! index grids).
//!
//! `_0`, `_1`, … are the target's indices; `sum(_r0, N, body)` and `amax(_r0, N, body)` reduce
//! `body` as `_r0` runs over `0..N` (`N` an integer or a size name); `x[i, j]` reads an input or
//! an earlier target; a plain name is a size parameter (`int64`); `+ - * / // % **`, comparisons,
//! unary `-`, and the functions `sin cos exp sqrt abs tanh floor maximum minimum where`. Number
//! literals take the dtype of the other operand, as numpy's Python scalars do.

use std::collections::BTreeMap;

use pytato_core::expr::{BinaryOp, CompareOp, Func, ReduceOp, ReductionBounds, TypeEnv};
use pytato_core::{DType, Dim, Expr, Scalar};

use crate::numpy_expr::{Tok, tokenize};

/// The buffers a statement may read: name -> (dtype, number of axes).
pub type Buffers = BTreeMap<String, (DType, usize)>;

/// Parses `src`, a statement over `ndim` target indices reading `buffers`.
pub fn parse_statement(src: &str, ndim: usize, buffers: &Buffers) -> Result<Expr, String> {
    let toks = tokenize(src)?;
    let mut p = Parser { toks, pos: 0, env: Env { ndim, buffers }, reductions: Vec::new() };
    let e = p.comparison()?;
    if p.pos != p.toks.len() {
        return Err(format!("unexpected {:?} in {src:?}", p.toks[p.pos]));
    }
    p.typed(e, None)
}

/// The dtype of a parsed statement.
pub fn statement_dtype(expr: &Expr, ndim: usize, buffers: &Buffers) -> Result<DType, String> {
    expr.dtype(&Env { ndim, buffers }).map_err(|e| e.to_string())
}

struct Env<'a> {
    ndim: usize,
    buffers: &'a Buffers,
}

impl TypeEnv for Env<'_> {
    fn ndim(&self) -> usize {
        self.ndim
    }
    fn binding(&self, name: &str) -> Option<(DType, usize)> {
        // A plain name that is no buffer is a size parameter.
        Some(self.buffers.get(name).copied().unwrap_or((DType::I64, 0)))
    }
    fn describe(&self) -> String {
        format!("buffers {:?}", self.buffers.keys().collect::<Vec<_>>())
    }
}

/// A parsed operand: an expression, or a number literal whose dtype its partner decides.
enum P {
    E(Expr),
    Int(i64),
    Float(f64),
}

struct Parser<'a> {
    toks: Vec<Tok>,
    pos: usize,
    env: Env<'a>,
    /// The reduction inames around the current position.
    reductions: Vec<String>,
}

type R<T> = Result<T, String>;

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn eat(&mut self, op: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Op(o)) if *o == op) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, op: &str) -> R<()> {
        if self.eat(op) { Ok(()) } else { Err(format!("expected {op:?} at token {}", self.pos)) }
    }

    fn dtype(&self, e: &Expr) -> R<DType> {
        let inames: Vec<&str> = self.reductions.iter().map(String::as_str).collect();
        e.dtype_with_reduction_inames(&self.env, &inames).map_err(|e| e.to_string())
    }

    /// `p` as an expression; a literal takes `like` (or `int64`/`float64` alone).
    fn typed(&self, p: P, like: Option<DType>) -> R<Expr> {
        Ok(match p {
            P::E(e) => e,
            P::Int(v) => Expr::constant(Scalar::I64(v).cast(like.unwrap_or(DType::I64))),
            P::Float(v) => Expr::constant(Scalar::F64(v).cast(like.unwrap_or(DType::F64))),
        })
    }

    /// Both operands as expressions of one dtype (a literal takes its partner's).
    fn pair(&self, a: P, b: P) -> R<(Expr, Expr)> {
        match (&a, &b) {
            (P::E(x), _) => {
                let d = self.dtype(x)?;
                Ok((self.typed(a, None)?, self.typed(b, Some(d))?))
            }
            (_, P::E(y)) => {
                let d = self.dtype(y)?;
                Ok((self.typed(a, Some(d))?, self.typed(b, None)?))
            }
            _ => Ok((self.typed(a, None)?, self.typed(b, None)?)),
        }
    }

    fn comparison(&mut self) -> R<P> {
        let a = self.arith()?;
        let op = match self.peek() {
            Some(Tok::Op("<")) => CompareOp::Lt,
            Some(Tok::Op("<=")) => CompareOp::Le,
            Some(Tok::Op(">")) => CompareOp::Gt,
            Some(Tok::Op(">=")) => CompareOp::Ge,
            Some(Tok::Op("==")) => CompareOp::Eq,
            Some(Tok::Op("!=")) => CompareOp::Ne,
            _ => return Ok(a),
        };
        self.pos += 1;
        let b = self.arith()?;
        let (x, y) = self.pair(a, b)?;
        Ok(P::E(x.compare(op, y)))
    }

    fn binary(&mut self, ops: &[(&str, BinaryOp)], next: fn(&mut Self) -> R<P>) -> R<P> {
        let mut a = next(self)?;
        'outer: loop {
            for &(sym, op) in ops {
                if self.eat(sym) {
                    let b = next(self)?;
                    let (x, y) = self.pair(a, b)?;
                    a = P::E(x.binary(op, y));
                    continue 'outer;
                }
            }
            return Ok(a);
        }
    }

    fn arith(&mut self) -> R<P> {
        self.binary(&[("+", BinaryOp::Add), ("-", BinaryOp::Sub)], Self::term)
    }

    fn term(&mut self) -> R<P> {
        self.binary(
            &[("*", BinaryOp::Mul), ("//", BinaryOp::FloorDiv), ("/", BinaryOp::Div), ("%", BinaryOp::Rem)],
            Self::unary,
        )
    }

    fn unary(&mut self) -> R<P> {
        if self.eat("-") {
            return Ok(match self.unary()? {
                P::Int(v) => P::Int(-v),
                P::Float(v) => P::Float(-v),
                P::E(e) => P::E(e.unary(pytato_core::expr::UnaryOp::Neg)),
            });
        }
        let base = self.atom()?;
        if self.eat("**") {
            let exponent = self.unary()?;
            let (x, y) = self.pair(base, exponent)?;
            return Ok(P::E(x.binary(BinaryOp::Pow, y)));
        }
        Ok(base)
    }

    fn args(&mut self) -> R<Vec<P>> {
        let mut args = Vec::new();
        if !self.eat(")") {
            loop {
                args.push(self.comparison()?);
                if self.eat(")") {
                    break;
                }
                self.expect(",")?;
            }
        }
        Ok(args)
    }

    fn atom(&mut self) -> R<P> {
        let tok = self.peek().cloned().ok_or("unexpected end")?;
        self.pos += 1;
        match tok {
            Tok::Int(v) => Ok(P::Int(v)),
            Tok::Float(v) => Ok(P::Float(v)),
            Tok::Op("(") => {
                let e = self.comparison()?;
                self.expect(")")?;
                Ok(e)
            }
            Tok::Name(name) if self.eat("[") => {
                let mut indices = Vec::new();
                loop {
                    let index = self.comparison()?;
                    indices.push(self.typed(index, None)?);
                    if self.eat("]") {
                        break;
                    }
                    self.expect(",")?;
                }
                Ok(P::E(Expr::subscript(&name, indices)))
            }
            Tok::Name(name) if matches!(name.as_str(), "sum" | "amax") && self.eat("(") => {
                let iname = match self.atom()? {
                    P::E(Expr::Var(v)) if v.starts_with("_r") => v.to_string(),
                    _ => return Err(format!("{name}: the first argument is a reduction index _rN")),
                };
                self.expect(",")?;
                let upper = match self.toks.get(self.pos).cloned() {
                    Some(Tok::Int(n)) => Dim::new(n),
                    Some(Tok::Name(n)) => Dim::param(n.as_str()),
                    other => return Err(format!("{name}: bound {other:?}")),
                };
                self.pos += 1;
                self.expect(",")?;
                // The body sees the index: typing inside it (literals' partners) needs it bound.
                self.reductions.push(iname.clone());
                let body = self.comparison().and_then(|b| self.typed(b, None));
                self.reductions.pop();
                let body = body?;
                self.expect(")")?;
                let op = if name == "sum" { ReduceOp::Sum } else { ReduceOp::Max };
                let bounds = ReductionBounds { iname: iname.as_str().into(), lower: Dim::new(0), upper };
                Ok(P::E(Expr::reduce(op, vec![bounds], body)))
            }
            Tok::Name(name) if self.eat("(") => {
                let args = self.args()?;
                let func = match name.as_str() {
                    "sin" => Func::Sin,
                    "cos" => Func::Cos,
                    "exp" => Func::Exp,
                    "sqrt" => Func::Sqrt,
                    "abs" => Func::Abs,
                    "tanh" => Func::Tanh,
                    "floor" => Func::Floor,
                    "maximum" => Func::Maximum,
                    "minimum" => Func::Minimum,
                    "where" if args.len() == 3 => {
                        let mut args = args.into_iter();
                        let cond = self.typed(args.next().expect("3"), None)?;
                        let (a, b) = self.pair(args.next().expect("3"), args.next().expect("3"))?;
                        return Ok(P::E(Expr::if_then_else(cond, a, b)));
                    }
                    other => return Err(format!("unknown function {other}")),
                };
                let mut args = args.into_iter();
                let exprs = match (args.next(), args.next(), args.next()) {
                    (Some(a), None, None) => vec![self.typed(a, None)?],
                    (Some(a), Some(b), None) => {
                        let (x, y) = self.pair(a, b)?;
                        vec![x, y]
                    }
                    _ => return Err(format!("{name}: one or two arguments")),
                };
                Ok(P::E(Expr::call(func, exprs)))
            }
            Tok::Name(name) => Ok(P::E(match name.strip_prefix('_').and_then(|k| k.parse::<usize>().ok()) {
                Some(k) => Expr::iname(k),
                None => Expr::var(&name),
            })),
            other => Err(format!("unexpected {other:?}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_take_their_partners_dtype_and_reductions_bind_their_index() {
        let buffers = Buffers::from([("a".to_string(), (DType::F32, 2)), ("x".to_string(), (DType::F32, 1))]);
        let e = parse_statement("sum(_r0, n, a[_0, _r0] * x[_r0]) * 2 + 1.5", 1, &buffers).unwrap();
        let env = Env { ndim: 1, buffers: &buffers };
        assert_eq!(e.dtype(&env).unwrap(), DType::F32);
        let shifted = parse_statement("x[(_0 + 1) % n]", 1, &buffers).unwrap();
        assert_eq!(
            shifted.to_string(),
            Expr::subscript(
                "x",
                vec![Expr::iname(0).binary(BinaryOp::Add, Expr::i64(1)).binary(BinaryOp::Rem, Expr::var("n"))]
            )
            .to_string()
        );
        assert!(parse_statement("x[_0] +", 1, &buffers).is_err());
        assert!(parse_statement("nope(x[_0])", 1, &buffers).is_err());
    }
}
