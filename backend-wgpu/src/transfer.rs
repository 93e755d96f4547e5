//! Arrays to and from the bytes of storage buffers.
//!
//! WGSL has no 8- or 16-bit integers and no storable `bool`, so those are **widened on upload and
//! narrowed on download**: `bool` is a `u32` 0 or 1, `int8`/`int16` are sign-extended into `i32`,
//! `uint8`/`uint16` zero-extended into `u32` (shaders wrap results back into range, see
//! `wgsl`). Every other dtype keeps its layout; complex numbers are `(re, im)` pairs, which is
//! both `num_complex`'s layout and WGSL's `vec2`. Elements are in C order.

use ndarray::{ArrayD, IxDyn};
use num_complex::Complex;
use pytato_core::{ArrayData, DType};

/// The storage-buffer bytes of `data` (C order, any layout in).
pub(crate) fn to_bytes(data: &ArrayData) -> Vec<u8> {
    fn plain<T: bytemuck::Pod>(a: &ArrayD<T>) -> Vec<u8> {
        match a.as_slice() {
            Some(s) => bytemuck::cast_slice(s).to_vec(),
            None => a.iter().flat_map(|x| bytemuck::bytes_of(x).to_vec()).collect(),
        }
    }
    fn widened<T: Copy, W: bytemuck::Pod>(a: &ArrayD<T>, widen: impl Fn(T) -> W) -> Vec<u8> {
        let wide: Vec<W> = a.iter().map(|&x| widen(x)).collect();
        bytemuck::cast_slice(&wide).to_vec()
    }
    fn pairs<T: bytemuck::Pod>(a: &ArrayD<Complex<T>>) -> Vec<u8> {
        let flat: Vec<T> = a.iter().flat_map(|c| [c.re, c.im]).collect();
        bytemuck::cast_slice(&flat).to_vec()
    }
    match data {
        ArrayData::Bool(a) => widened(a, u32::from),
        ArrayData::I8(a) => widened(a, i32::from),
        ArrayData::I16(a) => widened(a, i32::from),
        ArrayData::U8(a) => widened(a, u32::from),
        ArrayData::U16(a) => widened(a, u32::from),
        ArrayData::I32(a) => plain(a),
        ArrayData::I64(a) => plain(a),
        ArrayData::U32(a) => plain(a),
        ArrayData::U64(a) => plain(a),
        ArrayData::F32(a) => plain(a),
        ArrayData::F64(a) => plain(a),
        ArrayData::C64(a) => pairs(a),
        ArrayData::C128(a) => pairs(a),
    }
}

/// The array of `dtype` and `shape` whose storage-buffer bytes are `bytes`.
pub(crate) fn from_bytes(dtype: DType, shape: &[usize], bytes: &[u8]) -> ArrayData {
    fn array<T>(shape: &[usize], values: Vec<T>) -> ArrayD<T> {
        ArrayD::from_shape_vec(IxDyn(shape), values).expect("the buffer holds exactly the shape's elements")
    }
    fn plain<T: bytemuck::Pod>(shape: &[usize], bytes: &[u8]) -> ArrayD<T> {
        array(shape, bytemuck::pod_collect_to_vec(bytes))
    }
    fn narrowed<W: bytemuck::Pod, T>(shape: &[usize], bytes: &[u8], narrow: impl Fn(W) -> T) -> ArrayD<T> {
        let wide: Vec<W> = bytemuck::pod_collect_to_vec(bytes);
        array(shape, wide.into_iter().map(narrow).collect())
    }
    fn pairs<T: bytemuck::Pod>(shape: &[usize], bytes: &[u8]) -> ArrayD<Complex<T>> {
        let flat: Vec<T> = bytemuck::pod_collect_to_vec(bytes);
        array(shape, flat.chunks_exact(2).map(|p| Complex::new(p[0], p[1])).collect())
    }
    let n: usize = shape.iter().product();
    let bytes = &bytes[..n * crate::wgsl::storage_size(dtype)];
    match dtype {
        DType::Bool => ArrayData::Bool(narrowed(shape, bytes, |w: u32| w != 0)),
        DType::I8 => ArrayData::I8(narrowed(shape, bytes, |w: i32| w as i8)),
        DType::I16 => ArrayData::I16(narrowed(shape, bytes, |w: i32| w as i16)),
        DType::U8 => ArrayData::U8(narrowed(shape, bytes, |w: u32| w as u8)),
        DType::U16 => ArrayData::U16(narrowed(shape, bytes, |w: u32| w as u16)),
        DType::I32 => ArrayData::I32(plain(shape, bytes)),
        DType::I64 => ArrayData::I64(plain(shape, bytes)),
        DType::U32 => ArrayData::U32(plain(shape, bytes)),
        DType::U64 => ArrayData::U64(plain(shape, bytes)),
        DType::F32 => ArrayData::F32(plain(shape, bytes)),
        DType::F64 => ArrayData::F64(plain(shape, bytes)),
        DType::C64 => ArrayData::C64(pairs(shape, bytes)),
        DType::C128 => ArrayData::C128(pairs(shape, bytes)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dtype_round_trips_through_storage_bytes() {
        use pytato_core::Scalar;
        for dtype in DType::ALL {
            // Values spanning each dtype's range, including negatives that widening must keep.
            let values: Vec<Scalar> =
                [-128i64, -1, 0, 1, 127, 255, 40000, -7].iter().map(|&v| Scalar::I64(v).cast(dtype)).collect();
            let data = ArrayData::from_scalars(dtype, &[2, 4], values).expect("8 values for 2x4");
            let bytes = to_bytes(&data);
            assert_eq!(bytes.len(), 8 * crate::wgsl::storage_size(dtype), "{dtype}");
            assert_eq!(from_bytes(dtype, &[2, 4], &bytes), data, "{dtype}");
            // A transposed (non-standard layout) view is written in C order of its own shape.
            let t =
                pytato_core::for_each_array_data!(&data, a => pytato_core::data::DataElement::wrap(a.t().to_owned()));
            let tv = pytato_core::for_each_array_data!(&data, a => pytato_core::data::DataElement::wrap(a.clone().reversed_axes()));
            assert_eq!(from_bytes(dtype, &[4, 2], &to_bytes(&tv)), t, "{dtype} transposed");
        }
    }
}
