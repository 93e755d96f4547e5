//! Arrays to and from the bytes of storage buffers.
//!
//! WGSL has no 8- or 16-bit integers and no storable `bool`, so those are **widened on upload and
//! narrowed on download**: `bool` is a `u32` 0 or 1, `int8`/`int16` are sign-extended into `i32`,
//! `uint8`/`uint16` zero-extended into `u32` (shaders wrap results back into range, see
//! `wgsl`), `float16` is its bits zero-extended into a `u32`. Every other dtype keeps its layout; complex numbers are `(re, im)` pairs, which is
//! both `num_complex`'s layout and WGSL's `vec2`. Elements are in C order.

use ndarray::{ArrayViewD, ArrayViewMutD};
use pytato_core::{ArrayData, DType};
use pytato_runtime::{ArrayDataView, ArrayDataViewMut};

/// The storage-buffer bytes of an array (see [`to_bytes`]): its own memory where that is already
/// their layout, else a copy in C order, kept as the stored element type (no second copy into
/// bytes).
pub(crate) enum StorageBytes<'a> {
    Borrowed(&'a [u8]),
    Copied(Box<dyn ElementBytes>),
}

/// A copy's elements as bytes.
pub(crate) trait ElementBytes {
    fn bytes(&self) -> &[u8];
}

impl<W: bytemuck::Pod> ElementBytes for Vec<W> {
    fn bytes(&self) -> &[u8] {
        bytemuck::cast_slice(self)
    }
}

impl std::ops::Deref for StorageBytes<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            StorageBytes::Borrowed(bytes) => bytes,
            StorageBytes::Copied(elements) => elements.bytes(),
        }
    }
}

/// The storage-buffer bytes of `data` (C order, any layout in): borrowed where `data` is already
/// row-major storage, else a copy, or [`pytato_core::Error::OutOfMemory`] where the copy cannot
/// be had (a broadcast view of a few bytes may stand for terabytes).
pub(crate) fn to_bytes<'a>(data: &ArrayDataView<'a>) -> pytato_core::Result<StorageBytes<'a>> {
    /// Every element as stored, in C order: row by row, each row a fast 1-d walk (a walk of the
    /// n-d index per element took 40 ns an element for a strided vector).
    fn elements<T: Copy, W: bytemuck::Pod>(
        a: &ArrayViewD<'_, T>,
        as_stored: impl Fn(T) -> W,
    ) -> pytato_core::Result<StorageBytes<'static>> {
        let mut stored: Vec<W> = Vec::new();
        stored.try_reserve_exact(a.len()).map_err(|_| pytato_core::Error::OutOfMemory {
            op: "wgpu".into(),
            bytes: (a.len() as u64).saturating_mul(std::mem::size_of::<W>() as u64),
            what: format!("the storage-buffer copy of an array of shape {:?}", a.shape()),
        })?;
        if a.ndim() == 0 {
            stored.extend(a.iter().map(|&x| as_stored(x)));
        } else {
            for row in a.rows() {
                stored.extend(row.iter().map(|&x| as_stored(x)));
            }
        }
        Ok(StorageBytes::Copied(Box::new(stored)))
    }
    // Complex numbers too: `num_complex`'s `(re, im)` is the buffer's layout.
    fn plain<'a, T: bytemuck::Pod>(a: &ArrayViewD<'a, T>) -> pytato_core::Result<StorageBytes<'a>> {
        match a.to_slice() {
            Some(s) => Ok(StorageBytes::Borrowed(bytemuck::cast_slice(s))),
            None => elements(a, |x| x),
        }
    }
    match data {
        ArrayDataView::Bool(a) => elements(a, u32::from),
        ArrayDataView::I8(a) => elements(a, i32::from),
        ArrayDataView::I16(a) => elements(a, i32::from),
        ArrayDataView::U8(a) => elements(a, u32::from),
        ArrayDataView::U16(a) => elements(a, u32::from),
        ArrayDataView::F16(a) => elements(a, |x: half::f16| u32::from(x.to_bits())),
        ArrayDataView::I32(a) => plain(a),
        ArrayDataView::I64(a) => plain(a),
        ArrayDataView::U32(a) => plain(a),
        ArrayDataView::U64(a) => plain(a),
        ArrayDataView::F32(a) => plain(a),
        ArrayDataView::F64(a) => plain(a),
        ArrayDataView::C64(a) => plain(a),
        ArrayDataView::C128(a) => plain(a),
    }
}

/// Bytes one task of a large copy moves: far more than rayon's scheduling costs (microseconds),
/// few enough to spread 80 MB over many cores. One thread's `memcpy` fills neither a server's
/// memory bandwidth nor the PCIe link a GPU's staging memory sits behind.
pub(crate) const COPY_TASK_BYTES: usize = 4 << 20;

/// `into.copy_from_slice(from)`, in tasks of [`COPY_TASK_BYTES`] on rayon's pool when larger.
pub(crate) fn copy_bytes(into: &mut [u8], from: &[u8]) {
    use rayon::prelude::*;
    if from.len() <= COPY_TASK_BYTES {
        into.copy_from_slice(from);
    } else {
        assert_eq!(into.len(), from.len(), "copy_bytes between slices of different lengths");
        into.par_chunks_mut(COPY_TASK_BYTES)
            .zip(from.par_chunks(COPY_TASK_BYTES))
            .for_each(|(i, f)| i.copy_from_slice(f));
    }
}

/// Writes the storage-buffer bytes `bytes` (C order) into `target`, of any layout. `None` if
/// `bytes` holds fewer elements than `target`.
pub(crate) fn bytes_into(bytes: &[u8], target: &mut ArrayDataViewMut<'_>) -> Option<()> {
    fn plain<T: bytemuck::Pod>(bytes: &[u8], t: &mut ArrayViewMutD<'_, T>) {
        match t.as_slice_mut() {
            Some(s) => {
                let n = size_of_val(s);
                copy_bytes(bytemuck::cast_slice_mut::<T, u8>(s), &bytes[..n]);
            }
            None => narrowed(bytes, t, |x: T| x),
        }
    }
    /// Each stored element `W`, in C order, narrowed into `t`: row by row, each row a fast 1-d
    /// walk (as `to_bytes` reads).
    fn narrowed<W: bytemuck::Pod, T>(bytes: &[u8], t: &mut ArrayViewMutD<'_, T>, narrow: impl Fn(W) -> T) {
        let mut stored = bytes.chunks_exact(size_of::<W>()).map(|c| narrow(bytemuck::pod_read_unaligned(c)));
        if t.ndim() == 0 {
            t.iter_mut().zip(stored).for_each(|(x, v)| *x = v);
            return;
        }
        for mut row in t.rows_mut() {
            row.iter_mut().zip(&mut stored).for_each(|(x, v)| *x = v);
        }
    }
    let n: usize = target.shape().iter().product();
    let bytes = bytes.get(..n * crate::wgsl::storage_size(target.dtype()))?;
    match target {
        ArrayDataViewMut::Bool(t) => narrowed(bytes, t, |w: u32| w != 0),
        ArrayDataViewMut::I8(t) => narrowed(bytes, t, |w: i32| w as i8),
        ArrayDataViewMut::I16(t) => narrowed(bytes, t, |w: i32| w as i16),
        ArrayDataViewMut::U8(t) => narrowed(bytes, t, |w: u32| w as u8),
        ArrayDataViewMut::U16(t) => narrowed(bytes, t, |w: u32| w as u16),
        ArrayDataViewMut::F16(t) => narrowed(bytes, t, |w: u32| half::f16::from_bits(w as u16)),
        ArrayDataViewMut::I32(t) => plain(bytes, t),
        ArrayDataViewMut::I64(t) => plain(bytes, t),
        ArrayDataViewMut::U32(t) => plain(bytes, t),
        ArrayDataViewMut::U64(t) => plain(bytes, t),
        ArrayDataViewMut::F32(t) => plain(bytes, t),
        ArrayDataViewMut::F64(t) => plain(bytes, t),
        ArrayDataViewMut::C64(t) => plain(bytes, t),
        ArrayDataViewMut::C128(t) => plain(bytes, t),
    }
    Some(())
}

/// The array of `dtype` and `shape` whose storage-buffer bytes are `bytes` (host memory for it
/// taken fallibly: [`pytato_core::Error::OutOfMemory`]). Large arrays are advised into huge pages
/// before the copy writes them (`huge_pages`).
pub(crate) fn from_bytes(dtype: DType, shape: &[usize], bytes: &[u8]) -> pytato_core::Result<ArrayData> {
    // Zeroed by the allocator: a large allocation is fresh pages, mapped when first written.
    let mut data = ArrayData::try_zeros("wgpu readback", dtype, shape)?;
    let (address, len) = pytato_core::for_each_array_data!(&mut data, a => (a.as_mut_ptr().cast::<u8>(), a.len()));
    crate::huge_pages::advise_huge_pages(address, len * dtype.itemsize());
    bytes_into(bytes, &mut data.view_mut()).expect("the buffer holds exactly the shape's elements");
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_major_data_of_the_buffers_layout_is_uploaded_from_where_it_lies() {
        // Every dtype whose storage is its own layout, complex numbers included, is read in place;
        // the widened ones are copied.
        for dtype in DType::ALL {
            let data = ArrayData::zeros(dtype, &[3, 5]);
            let view = data.view();
            let in_place = matches!(to_bytes(&view).unwrap(), StorageBytes::Borrowed(_));
            let own_layout = crate::wgsl::storage_size(dtype) == dtype.itemsize();
            assert_eq!(in_place, own_layout, "{dtype}");
        }
    }

    #[test]
    fn every_dtype_round_trips_through_storage_bytes() {
        use pytato_core::Scalar;
        for dtype in DType::ALL {
            // Values spanning each dtype's range, including negatives that widening must keep.
            let values: Vec<Scalar> =
                [-128i64, -1, 0, 1, 127, 255, 40000, -7].iter().map(|&v| Scalar::I64(v).cast(dtype)).collect();
            let data = ArrayData::from_scalars(dtype, &[2, 4], values).expect("8 values for 2x4");
            let bytes = to_bytes(&data.view()).unwrap();
            assert_eq!(bytes.len(), 8 * crate::wgsl::storage_size(dtype), "{dtype}");
            assert_eq!(from_bytes(dtype, &[2, 4], &bytes).unwrap(), data, "{dtype}");
            // A transposed (non-standard layout) view is written in C order of its own shape.
            let t =
                pytato_core::for_each_array_data!(&data, a => pytato_core::data::DataElement::wrap(a.t().to_owned()));
            let tv = pytato_core::for_each_array_data!(&data, a => pytato_core::data::DataElement::wrap(a.clone().reversed_axes()));
            assert_eq!(from_bytes(dtype, &[4, 2], &to_bytes(&tv.view()).unwrap()).unwrap(), t, "{dtype} transposed");
            // And read back into a transposed array (a strided output of `run_into`).
            let zeros = ArrayData::zeros(dtype, &[2, 4]);
            let mut target = pytato_core::for_each_array_data!(&zeros, a => pytato_core::data::DataElement::wrap(a.clone().reversed_axes()));
            bytes_into(&to_bytes(&t.view()).unwrap(), &mut target.view_mut()).unwrap();
            assert_eq!(target, t, "{dtype} into a transposed array");
        }
    }
}
