//! `std::ops` for arrays: `+ - * / % & | ^`, unary `-` and `!`, between arrays and with Rust scalars
//! on either side.
//!
//! Any Rust scalar works on the right (`&a * 2_u8`, `&a + 0.5_f32`); on the left, `i64`, `f64` and
//! `Complex64` do, so that literals infer (`2 * &a`, `0.5 * &a`). Other scalar types on the left go
//! through the functions (`pt::multiply(2_u8, &a)`).
//!
//! The operators call the frontend functions ([`add`](crate::arith::add), ...) and **panic** with the same
//! message those return as an error (as ndarray's operators do on shape mismatch). Use the
//! functions where bad input is possible and should be handled.
//!
//! ```
//! use pytato_core::DType;
//! use pytato_frontend as pt;
//! let a = pt::placeholder("a", [3], DType::F64).unwrap();
//! let b = pt::placeholder("b", [2, 3], DType::F64).unwrap();
//! let c = &a * 2.0 + &b / (&a + 1.5);
//! assert_eq!(c.shape().to_string(), "(2, 3)");
//! let d = 1.0 - -&a;
//! assert_eq!(d.dtype(), DType::F64);
//! ```

use std::ops::{Add, BitAnd, BitOr, BitXor, Div, Mul, Neg, Not, Rem, Sub};

use num_complex::{Complex32, Complex64};

use crate::array::Array;
use crate::dtype::WeakScalar;

use crate::arith as ew;

fn unwrap_or_panic(result: crate::error::Result<Array>) -> Array {
    result.unwrap_or_else(|e| panic!("{e}"))
}

macro_rules! binary_ops {
    ($($trait:ident :: $method:ident => $func:path;)*) => {$(
        impl $trait<&Array> for &Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: &Array) -> Array {
                let _site = crate::created_at::enter();
                unwrap_or_panic($func(self, rhs))
            }
        }
        impl $trait<Array> for &Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: Array) -> Array {
                let _site = crate::created_at::enter();
                unwrap_or_panic($func(self, rhs))
            }
        }
        impl $trait<&Array> for Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: &Array) -> Array {
                let _site = crate::created_at::enter();
                unwrap_or_panic($func(self, rhs))
            }
        }
        impl $trait<Array> for Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: Array) -> Array {
                let _site = crate::created_at::enter();
                unwrap_or_panic($func(self, rhs))
            }
        }
        impl<T: ScalarOperand> $trait<T> for &Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: T) -> Array {
                let _site = crate::created_at::enter();
                unwrap_or_panic($func(self, crate::operand::Operand::Scalar(rhs.into())))
            }
        }
        impl<T: ScalarOperand> $trait<T> for Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: T) -> Array {
                let _site = crate::created_at::enter();
                unwrap_or_panic($func(self, crate::operand::Operand::Scalar(rhs.into())))
            }
        }
        binary_ops!(@scalars $trait::$method => $func; i64, f64, Complex64);
    )*};
    (@scalars $trait:ident :: $method:ident => $func:path; $($t:ty),*) => {$(
        impl $trait<&Array> for $t {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: &Array) -> Array {
                let _site = crate::created_at::enter();
                unwrap_or_panic($func(self, rhs))
            }
        }
        impl $trait<Array> for $t {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: Array) -> Array {
                let _site = crate::created_at::enter();
                unwrap_or_panic($func(self, rhs))
            }
        }
    )*};
}

/// Rust scalars that mix with arrays in operators (as weak, Python-style scalars). One generic
/// impl per operator on the right-hand side keeps `(&a * 2).shape()` inferable.
pub trait ScalarOperand: Into<WeakScalar> + Copy {}
macro_rules! scalar_operands {
    ($($t:ty),*) => {$( impl ScalarOperand for $t {} )*};
}
scalar_operands!(bool, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, Complex32, Complex64);

binary_ops! {
    Add::add => ew::add;
    Sub::sub => ew::subtract;
    Mul::mul => ew::multiply;
    Div::div => ew::divide;
    Rem::rem => ew::remainder;
    BitAnd::bitand => ew::bitwise_and;
    BitOr::bitor => ew::bitwise_or;
    BitXor::bitxor => ew::bitwise_xor;
}

impl Neg for &Array {
    type Output = Array;
    #[track_caller]
    fn neg(self) -> Array {
        let _site = crate::created_at::enter();
        unwrap_or_panic(ew::negative(self))
    }
}
impl Neg for Array {
    type Output = Array;
    #[track_caller]
    fn neg(self) -> Array {
        let _site = crate::created_at::enter();
        -&self
    }
}

/// `!a` is numpy's `~a` ([`invert`](crate::arith::invert)): bitwise not of integers, logical not of bools.
impl Not for &Array {
    type Output = Array;
    #[track_caller]
    fn not(self) -> Array {
        let _site = crate::created_at::enter();
        unwrap_or_panic(ew::invert(self))
    }
}
impl Not for Array {
    type Output = Array;
    #[track_caller]
    fn not(self) -> Array {
        let _site = crate::created_at::enter();
        !&self
    }
}

#[cfg(test)]
mod tests {
    use crate::pt;
    use crate::{DType, Shape};

    #[test]
    #[should_panic(expected = "add: shapes (2,) and (3,) cannot be broadcast together")]
    fn operators_panic_with_the_function_error() {
        let a = pt::placeholder("a", [2], DType::F64).unwrap();
        let b = pt::placeholder("b", [3], DType::F64).unwrap();
        let _ = &a + &b;
    }

    #[test]
    fn operators_equal_functions() {
        let a = pt::placeholder("a", [2], DType::I32).unwrap();
        assert_eq!(&a + 1, pt::add(&a, 1).unwrap());
        assert_eq!(2 * &a, pt::multiply(2, &a).unwrap());
        assert_eq!(!&a, pt::invert(&a).unwrap());
        assert_eq!((&a % 3).shape(), &Shape::from([2]));
    }
}
