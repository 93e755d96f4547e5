//! Arrays as messages: a small header (dtype, shape) and the elements in row-major order,
//! little-endian. The receiver checks the header against the receive it posted, so data of the
//! wrong shape or dtype is a typed error, never a reinterpretation of bytes.

use ndarray::{ArrayD, IxDyn};
use num_complex::{Complex32, Complex64};
use pytato_core::for_each_array_view;
use pytato_core::{ArrayData, DType};
use pytato_runtime::ArrayDataView;

/// The first bytes of every message (a format version). A dtype's code on the wire is its index in
/// [`DType::ALL`].
const MAGIC: &[u8; 4] = b"PTD2";

/// An element type's little-endian bytes.
trait Wire: Sized {
    const SIZE: usize;
    fn put(&self, out: &mut Vec<u8>);
    fn get(bytes: &[u8]) -> Self;
}

macro_rules! wire_number {
    ($($t:ty),*) => {$(
        impl Wire for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn put(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn get(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(bytes.try_into().expect("one element's bytes"))
            }
        }
    )*};
}
wire_number!(i8, i16, i32, i64, u8, u16, u32, u64, half::f16, f32, f64);

impl Wire for bool {
    const SIZE: usize = 1;
    fn put(&self, out: &mut Vec<u8>) {
        out.push(u8::from(*self));
    }
    fn get(bytes: &[u8]) -> Self {
        bytes[0] != 0
    }
}

macro_rules! wire_complex {
    ($($t:ty => $r:ty),*) => {$(
        impl Wire for $t {
            const SIZE: usize = 2 * std::mem::size_of::<$r>();
            fn put(&self, out: &mut Vec<u8>) {
                self.re.put(out);
                self.im.put(out);
            }
            fn get(bytes: &[u8]) -> Self {
                let (re, im) = bytes.split_at(Self::SIZE / 2);
                <$t>::new(<$r>::get(re), <$r>::get(im))
            }
        }
    )*};
}
wire_complex!(Complex32 => f32, Complex64 => f64);

/// The message for `data`.
pub(crate) fn encode(data: &ArrayDataView<'_>) -> Vec<u8> {
    let code = DType::ALL.iter().position(|d| *d == data.dtype()).expect("every dtype has a code");
    let mut out = Vec::with_capacity(16 + 8 * data.ndim() + data.len() * data.dtype().itemsize());
    out.extend_from_slice(MAGIC);
    out.push(code as u8);
    out.extend_from_slice(&(data.ndim() as u32).to_le_bytes());
    for &len in data.shape() {
        out.extend_from_slice(&(len as u64).to_le_bytes());
    }
    for_each_array_view!(ArrayDataView, data, a => a.iter().for_each(|x| x.put(&mut out)));
    out
}

/// What a message says it holds.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Header {
    pub dtype: DType,
    pub shape: Vec<usize>,
}

/// Reads a message: its header, and the array if the header is well formed and the byte count
/// matches it. `Err` says what is wrong with the bytes.
pub(crate) fn decode(bytes: &[u8]) -> Result<(Header, ArrayData), String> {
    let rest = bytes.strip_prefix(MAGIC).ok_or("not a pytato message (bad magic bytes)")?;
    let (&code, rest) = rest.split_first().ok_or("truncated header")?;
    let dtype = *DType::ALL.get(usize::from(code)).ok_or_else(|| format!("unknown dtype code {code}"))?;
    let (ndim, mut rest) = rest.split_at_checked(4).ok_or("truncated header")?;
    let ndim = u32::from_le_bytes(ndim.try_into().expect("4 bytes")) as usize;
    let mut shape = Vec::with_capacity(ndim.min(64));
    for _ in 0..ndim {
        let (len, after) = rest.split_at_checked(8).ok_or("truncated shape")?;
        shape.push(usize::try_from(u64::from_le_bytes(len.try_into().expect("8 bytes"))).map_err(|e| e.to_string())?);
        rest = after;
    }
    let count = shape.iter().try_fold(1usize, |acc, &n| acc.checked_mul(n)).ok_or("shape overflows")?;
    if Some(rest.len()) != count.checked_mul(dtype.itemsize().max(1)) {
        return Err(format!("{} bytes of data for {count} elements of {dtype} (shape {shape:?})", rest.len()));
    }
    fn read<T: Wire + Clone>(shape: &[usize], bytes: &[u8]) -> ArrayD<T> {
        let values: Vec<T> = bytes.chunks_exact(T::SIZE).map(T::get).collect();
        ArrayD::from_shape_vec(IxDyn(shape), values).expect("length checked against the shape")
    }
    let data = match dtype {
        DType::Bool => ArrayData::Bool(read(&shape, rest)),
        DType::I8 => ArrayData::I8(read(&shape, rest)),
        DType::I16 => ArrayData::I16(read(&shape, rest)),
        DType::I32 => ArrayData::I32(read(&shape, rest)),
        DType::I64 => ArrayData::I64(read(&shape, rest)),
        DType::U8 => ArrayData::U8(read(&shape, rest)),
        DType::U16 => ArrayData::U16(read(&shape, rest)),
        DType::U32 => ArrayData::U32(read(&shape, rest)),
        DType::U64 => ArrayData::U64(read(&shape, rest)),
        DType::F16 => ArrayData::F16(read(&shape, rest)),
        DType::F32 => ArrayData::F32(read(&shape, rest)),
        DType::F64 => ArrayData::F64(read(&shape, rest)),
        DType::C64 => ArrayData::C64(read(&shape, rest)),
        DType::C128 => ArrayData::C128(read(&shape, rest)),
    };
    Ok((Header { dtype, shape }, data))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    #[test]
    fn every_dtype_round_trips_bit_for_bit() {
        let cases = [
            ArrayData::from(ndarray::arr1(&[true, false, true]).into_dyn()),
            ArrayData::from(ndarray::arr1(&[i8::MIN, -1, i8::MAX]).into_dyn()),
            ArrayData::from(ndarray::arr1(&[i16::MIN, i16::MAX]).into_dyn()),
            ArrayData::from(ndarray::arr1(&[i32::MIN, 0, i32::MAX]).into_dyn()),
            ArrayData::from(ndarray::arr1(&[i64::MIN, i64::MAX]).into_dyn()),
            ArrayData::from(ndarray::arr1(&[0u8, 255]).into_dyn()),
            ArrayData::from(ndarray::arr1(&[0u16, u16::MAX]).into_dyn()),
            ArrayData::from(ndarray::arr1(&[0u32, u32::MAX]).into_dyn()),
            ArrayData::from(ndarray::arr1(&[0u64, u64::MAX]).into_dyn()),
            ArrayData::from(ndarray::arr1(&[half::f16::MIN, half::f16::NAN, half::f16::from_bits(1)]).into_dyn()),
            ArrayData::from(ndarray::arr1(&[f32::NAN, -0.0, f32::INFINITY]).into_dyn()),
            ArrayData::from(ndarray::arr1(&[f64::NAN, -0.0, f64::NEG_INFINITY, 1e-310]).into_dyn()),
            ArrayData::from(ndarray::arr1(&[Complex32::new(1.0, -0.0)]).into_dyn()),
            ArrayData::from(ndarray::arr1(&[Complex64::new(f64::NAN, 2.5)]).into_dyn()),
            ArrayData::from(ArrayD::<f64>::zeros(IxDyn(&[3, 0, 2]))),
            ArrayData::from(ArrayD::<i32>::zeros(IxDyn(&[]))),
        ];
        for data in &cases {
            let bytes = encode(&data.view());
            let (header, back) = decode(&bytes).unwrap();
            assert_eq!((header.dtype, header.shape.as_slice()), (data.dtype(), data.shape()));
            assert_eq!(encode(&back.view()), bytes, "{data:?}");
        }
    }

    #[test]
    fn views_of_any_layout_are_sent_in_row_major_order() {
        let a = Array2::from_shape_fn((3, 4), |(i, j)| (10 * i + j) as i64);
        let t = ArrayData::from(a.t().to_owned().into_dyn());
        let view = a.t().into_dyn();
        let (_, back) = decode(&encode(&ArrayDataView::from(view))).unwrap();
        assert_eq!(back, t);
    }

    #[test]
    fn bad_bytes_are_errors() {
        let bytes = encode(&ArrayData::from(ndarray::arr1(&[1.0f64, 2.0]).into_dyn()).view());
        assert!(decode(&bytes[..bytes.len() - 1]).unwrap_err().contains("bytes of data"));
        assert!(decode(&bytes[..6]).is_err());
        assert!(decode(b"nope").is_err());
        let mut bad = bytes.clone();
        bad[4] = 200;
        assert!(decode(&bad).unwrap_err().contains("dtype code"));
    }
}
