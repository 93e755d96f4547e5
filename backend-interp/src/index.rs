//! Iterating over multi-indices, and building arrays by gathering elements.

use pytato_core::{ArrayData, DType, Error, Result, Scalar};

use crate::nodes::Value;

/// Indices [`for_each_index`] visits (and terms a reduction adds) between two checks for an
/// interrupt ([`pytato_runtime::interrupt`]): about a millisecond of the interpreter's work.
pub(crate) const INDICES_PER_CHECK: u32 = 1 << 12;

/// Calls `f` with every index of `shape` in C order (once for a 0-d shape, never for an empty one),
/// checking for an interrupt now and then.
pub(crate) fn for_each_index(shape: &[usize], mut f: impl FnMut(&[usize]) -> Result<()>) -> Result<()> {
    if shape.contains(&0) {
        return Ok(());
    }
    let mut idx = vec![0usize; shape.len()];
    let mut until_check = INDICES_PER_CHECK;
    loop {
        until_check -= 1;
        if until_check == 0 {
            pytato_runtime::interrupt::check("interp run")?;
            until_check = INDICES_PER_CHECK;
        }
        f(&idx)?;
        let mut axis = shape.len();
        loop {
            if axis == 0 {
                return Ok(());
            }
            axis -= 1;
            idx[axis] += 1;
            if idx[axis] < shape[axis] {
                break;
            }
            idx[axis] = 0;
        }
    }
}

/// An array of `shape` whose element at `i` is `sources[k][j]` where `locate(i) = (k, j)`; values
/// are cast to `dtype`.
pub(crate) fn gather(
    dtype: DType,
    shape: &[usize],
    sources: &[&Value<'_, '_>],
    mut locate: impl FnMut(&[usize], &mut Vec<usize>) -> Result<usize>,
) -> Result<ArrayData> {
    let mut at = Vec::new();
    build(dtype, shape, |i| {
        at.clear();
        let k = locate(i, &mut at)?;
        sources[k].get(&at).ok_or_else(|| Error::Internal {
            backend: "interp".into(),
            message: format!("gather index {at:?} outside shape {:?}", sources[k].shape()),
        })
    })
}

/// An array of `dtype` and `shape` whose element at each index (visited in C order) `value`
/// gives, cast to `dtype`. The array's memory is taken once, before any value is computed, and
/// fallibly ([`Error::OutOfMemory`]): no list of scalars on the side.
pub(crate) fn build(
    dtype: DType,
    shape: &[usize],
    mut value: impl FnMut(&[usize]) -> Result<Scalar>,
) -> Result<ArrayData> {
    let mut out = ArrayData::try_zeros("interp", dtype, shape)?;
    let mut k = 0;
    for_each_index(shape, |i| {
        out.set_flat(k, value(i)?).ok_or_else(|| Error::Internal {
            backend: "interp".into(),
            message: "a fresh array is row-major".into(),
        })?;
        k += 1;
        Ok(())
    })?;
    Ok(out)
}

/// The flat position of `idx` in `shape`, C order (last axis fastest) or F order (first fastest).
pub(crate) fn ravel(idx: &[usize], shape: &[usize], fortran: bool) -> usize {
    let mut flat = 0;
    let axes: Box<dyn Iterator<Item = usize>> =
        if fortran { Box::new((0..shape.len()).rev()) } else { Box::new(0..shape.len()) };
    for a in axes {
        flat = flat * shape[a] + idx[a];
    }
    flat
}

/// The index of flat position `flat` in `shape`, C or F order.
pub(crate) fn unravel(mut flat: usize, shape: &[usize], fortran: bool, out: &mut Vec<usize>) {
    out.clear();
    out.resize(shape.len(), 0);
    let axes: Box<dyn Iterator<Item = usize>> =
        if fortran { Box::new(0..shape.len()) } else { Box::new((0..shape.len()).rev()) };
    for a in axes {
        out[a] = flat % shape[a];
        flat /= shape[a];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iteration_order_and_edge_cases() {
        let mut seen = Vec::new();
        for_each_index(&[2, 3], |i| {
            seen.push(i.to_vec());
            Ok(())
        })
        .unwrap();
        assert_eq!(seen.len(), 6);
        assert_eq!(seen[1], vec![0, 1], "last axis fastest");
        let mut count = 0;
        for_each_index(&[], |_| {
            count += 1;
            Ok(())
        })
        .unwrap();
        for_each_index(&[3, 0], |_| {
            count += 10;
            Ok(())
        })
        .unwrap();
        assert_eq!(count, 1, "one element for 0-d, none for empty");
    }

    #[test]
    fn ravel_round_trips() {
        let shape = [2, 3, 4];
        let mut out = Vec::new();
        for fortran in [false, true] {
            for flat in 0..24 {
                unravel(flat, &shape, fortran, &mut out);
                assert_eq!(ravel(&out, &shape, fortran), flat);
            }
        }
        unravel(1, &shape, true, &mut out);
        assert_eq!(out, vec![1, 0, 0], "F order: first axis fastest");
    }
}
