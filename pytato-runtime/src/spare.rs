//! The memory of host-step results, reused from one run of a program to the next.
//!
//! A step result that only later phases read (the positions of `sum(x[x > 0])`, which the next
//! phase gathers from) is dropped at the end of a run. Fresh memory is mapped page by page as it
//! is first written, so the next run's step would fault all of it in again: for the 10^7 int64
//! positions of `sum(x[x > 0])`, about 20,000 page faults, which cost more than finding the
//! positions. A program of phases therefore keeps such results as spares, by name, and the next
//! run's step of that name writes its result into their memory.
//!
//! Results the program hands to its caller cannot be kept, so each run's are fresh memory. A
//! backend may advise how that memory is mapped before it is first written
//! ([`Backend::fresh_memory_advice`](crate::backend::Backend::fresh_memory_advice)): the Cranelift
//! backend asks Linux for transparent huge pages, as for its own outputs. On a 2-vCPU virtual
//! machine, a running sum of 10^7 float64 values into fresh memory took 42 ms, 16 ms with the
//! advice, and 8 ms into memory already mapped.

use std::sync::atomic::{AtomicUsize, Ordering};

use bytemuck::Zeroable;
use ndarray::{ArrayD, ArrayViewD, CowArray, IxDyn};
use pytato_core::data::{ArrayData, DataElement};
use pytato_core::error::Result;

static REUSED: AtomicUsize = AtomicUsize::new(0);

/// How many host-step results this process has written into an earlier run's memory: for tests
/// and diagnostics.
pub fn results_reused() -> usize {
    REUSED.load(Ordering::Relaxed)
}

/// Advice for fresh memory before it is first written: called with the address and length in
/// bytes of an allocation its caller owns and has not written yet. It must neither read nor
/// write that memory, only change how it is mapped (see
/// [`Backend::fresh_memory_advice`](crate::backend::Backend::fresh_memory_advice)).
pub type FreshMemoryAdvice = fn(address: *mut u8, bytes: usize);

/// The smallest fresh allocation that a backend asks to be backed by transparent huge pages.
pub const HUGE_PAGE_ADVICE_BYTES: usize = 4 << 20;

/// The size of a transparent huge page on x86-64 and AArch64 (with 4 KiB base pages).
pub const HUGE_PAGE_BYTES: usize = 2 << 20;

/// The addresses of the whole huge pages within the `bytes` at `address` (rounded inward), where
/// the memory is at least [`HUGE_PAGE_ADVICE_BYTES`] and holds one: what a backend's advice into
/// transparent huge pages covers (the `madvise` itself is in the backends, at their `unsafe`
/// boundaries). `None` otherwise.
pub fn whole_huge_pages(address: *const u8, bytes: usize) -> Option<std::ops::Range<usize>> {
    if bytes < HUGE_PAGE_ADVICE_BYTES {
        return None;
    }
    let first = (address as usize).next_multiple_of(HUGE_PAGE_BYTES);
    let end = (address as usize).saturating_add(bytes) / HUGE_PAGE_BYTES * HUGE_PAGE_BYTES;
    (end > first).then_some(first..end)
}

/// Whether the 2 MiB page after `start` (inside an array of at least 4 MiB) was advised into
/// transparent huge pages, as [`FreshMemoryAdvice`]s do: the `hg` flag of its mapping in
/// `/proc/self/smaps`. `None` where Linux does not show it (another system, a kernel without
/// transparent huge pages, or `/proc` not readable). For tests and diagnostics.
pub fn advised_into_huge_pages(start: *const u8) -> Option<bool> {
    if !std::path::Path::new("/sys/kernel/mm/transparent_hugepage/enabled").exists() {
        return None;
    }
    let inside = (start as usize).next_multiple_of(HUGE_PAGE_BYTES);
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    // Each mapping is a header line `lo-hi perms ...` followed by fields, `VmFlags:` among them.
    let mut holds = false;
    for line in smaps.lines() {
        let range = line.split_whitespace().next().and_then(|r| r.split_once('-'));
        if let Some((lo, hi)) =
            range.and_then(|(lo, hi)| Some((usize::from_str_radix(lo, 16).ok()?, usize::from_str_radix(hi, 16).ok()?)))
        {
            holds = (lo..hi).contains(&inside);
        } else if let Some(flags) = line.strip_prefix("VmFlags:").filter(|_| holds) {
            return Some(flags.split_whitespace().any(|f| f == "hg"));
        }
    }
    // No mapping holds it: not memory of this process, so not advised.
    Some(false)
}

/// Where a host step's result takes its memory: an earlier run's result of the step where it
/// fits ([`reuse`]), else fresh memory, advised as the backend asks.
#[derive(Default)]
pub(crate) struct ResultMemory {
    /// An earlier run's result of the step, if the program kept one.
    pub(crate) spare: Option<ArrayData>,
    /// The backend's advice for fresh memory.
    pub(crate) advice: Option<FreshMemoryAdvice>,
}

impl ResultMemory {
    /// The memory of a step that writes a working array and, where that is not its result (a
    /// sort or scan along another axis than the last), copies it into the result: the spare goes
    /// to the working array where `work_is_result`, else to the copy; both take advised fresh
    /// memory otherwise.
    pub(crate) fn split(self, work_is_result: bool) -> (ResultMemory, ResultMemory) {
        let advice = self.advice;
        let (work, result) = if work_is_result { (self.spare, None) } else { (None, self.spare) };
        (ResultMemory { spare: work, advice }, ResultMemory { spare: result, advice })
    }
}

/// The memory of `spare` as a vector of `len` elements of `T`, for a result whose every element
/// the caller writes (the values in it are stale). `None` where there is no spare, or it holds
/// another dtype, has room for fewer than `len` elements, or for more than twice as many (plus
/// a page): a program keeps no memory far beyond what its latest runs needed.
pub(crate) fn reuse<T: DataElement + Zeroable>(spare: Option<ArrayData>, len: usize) -> Option<Vec<T>> {
    let (mut values, _) = T::unwrap(spare?).ok()?.into_raw_vec_and_offset();
    let room = values.capacity();
    let at_most = len.saturating_mul(2).saturating_add(4096 / std::mem::size_of::<T>().max(1));
    if room < len || room > at_most {
        return None;
    }
    // Only elements beyond the spare's length are written here; the caller overwrites all.
    values.truncate(len);
    values.resize(len, T::zeroed());
    REUSED.fetch_add(1, Ordering::Relaxed);
    Some(values)
}

/// A row-major array of `T` of `shape` whose every element the caller writes (its values are
/// stale or zeros): in the memory of `memory`'s spare where it fits ([`reuse`]), else in fresh
/// memory (zeros not yet written, then advised), or [`OutOfMemory`](pytato_core::Error::OutOfMemory)
/// naming `op` where none can be had (a step never aborts the process for its result's memory).
pub(crate) fn result_memory<T: DataElement + Zeroable>(
    shape: &[usize],
    op: &str,
    memory: ResultMemory,
) -> Result<ArrayD<T>> {
    let len = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
    if let Some(values) = len.and_then(|len| reuse::<T>(memory.spare, len)) {
        return Ok(ArrayD::from_shape_vec(shape, values).expect("as many values as elements"));
    }
    // Zeroed by the allocator: a large allocation is fresh pages, mapped when first written.
    let mut fresh = T::unwrap(ArrayData::try_zeros(op, T::DTYPE, shape)?).expect("zeros of the dtype");
    if let Some(advise) = memory.advice {
        advise(fresh.as_mut_ptr().cast::<u8>(), fresh.len() * std::mem::size_of::<T>());
    }
    Ok(fresh)
}

/// A row-major copy of `view` ([`result_memory`] for its memory).
pub(crate) fn row_major_copy<T: DataElement + Zeroable>(
    view: ArrayViewD<'_, T>,
    op: &str,
    memory: ResultMemory,
) -> Result<ArrayD<T>> {
    let mut copy = result_memory::<T>(view.shape(), op, memory)?;
    copy.assign(&view);
    Ok(copy)
}

/// `view` itself where it is row-major, else a row-major copy in fresh memory, or
/// [`OutOfMemory`](pytato_core::Error::OutOfMemory) naming `op` (ndarray's `as_standard_layout`
/// would abort the process where the copy's memory cannot be had).
pub(crate) fn row_major<'a, T: DataElement + Zeroable>(
    view: ArrayViewD<'a, T>,
    op: &str,
) -> Result<CowArray<'a, T, IxDyn>> {
    if view.is_standard_layout() {
        Ok(CowArray::from(view))
    } else {
        Ok(CowArray::from(row_major_copy(view, op, ResultMemory::default())?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{ArrayD, IxDyn};

    #[test]
    fn a_spare_is_reused_where_its_dtype_and_room_fit() {
        let spare = |n: usize| Some(ArrayData::from(ArrayD::<i64>::zeros(IxDyn(&[n]))));
        let reused = reuse::<i64>(spare(1000), 700).unwrap();
        assert_eq!((reused.len(), reused.capacity()), (700, 1000));
        // Grown within its room: the new elements are zeros, the old ones stale.
        let mut shorter = ArrayD::<i64>::from_elem(IxDyn(&[1000]), 7).into_raw_vec_and_offset().0;
        shorter.truncate(600);
        let grown = reuse::<i64>(Some(ArrayData::from(ArrayD::from_shape_vec(IxDyn(&[600]), shorter).unwrap())), 900);
        let grown = grown.unwrap();
        assert_eq!(grown.len(), 900);
        assert!(grown[..600].iter().all(|&v| v == 7) && grown[600..].iter().all(|&v| v == 0));
        assert!(reuse::<i64>(spare(1000), 1001).is_none(), "too small");
        assert!(reuse::<i64>(spare(100_000), 10).is_none(), "far too large to keep");
        assert!(reuse::<f64>(spare(1000), 700).is_none(), "another dtype");
        assert!(reuse::<i64>(None, 10).is_none());
    }

    #[test]
    fn advice_covers_the_whole_huge_pages_inside_large_memory() {
        const MIB: usize = 1 << 20;
        let at = |a: usize| a as *const u8;
        // 8 MiB from one byte past a 2 MiB boundary: the pages from 4 MiB up to 10 MiB.
        assert_eq!(whole_huge_pages(at(2 * MIB + 1), 8 * MIB), Some(4 * MIB..10 * MIB));
        // Aligned at both ends: every page.
        assert_eq!(whole_huge_pages(at(6 * MIB), 4 * MIB), Some(6 * MIB..10 * MIB));
        // Under 4 MiB: not advised, though it holds a whole page.
        assert_eq!(whole_huge_pages(at(2 * MIB), 4 * MIB - 1), None);
        // At the top of the address space the end saturates instead of wrapping: from 2^64 - 5 MiB,
        // the one page from 2^64 - 4 MiB to 2^64 - 2 MiB.
        let top = |mib_below: usize| (usize::MAX - mib_below * MIB) + 1;
        assert_eq!(whole_huge_pages(at(top(5)), 8 * MIB), Some(top(4)..top(2)));
    }
}
