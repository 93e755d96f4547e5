//! Readbacks into memory backed by transparent huge pages.
//!
//! A readback's array is fresh memory, handed to the caller: the allocator maps it page by page
//! as the copy out of the staging buffer first writes it. For 80 MB, about 20,000 faults of
//! 4 KiB cost more than the copy itself. Asked before the copy, Linux backs the memory with
//! 2 MiB pages instead. The Cranelift backend advises its fresh outputs the same way, with its
//! own copy of this function (`run::advise_huge_pages`): `unsafe` stays in the backend crates, at
//! the JIT and GPU boundaries, and no crate below both may hold it.

/// The smallest readback whose memory is asked to be backed by huge pages.
#[cfg(target_os = "linux")]
const ADVISED_BYTES: usize = 4 << 20;

/// The size of a transparent huge page on x86-64 and AArch64 (with 4 KiB base pages).
#[cfg(target_os = "linux")]
const HUGE_PAGE_BYTES: usize = 2 << 20;

/// Asks Linux to back the whole 2 MiB pages within the `bytes` at `address` (memory the caller
/// owns and has not written yet) with transparent huge pages, where the memory is large
/// ([`ADVISED_BYTES`]). Linux follows the advice where transparent huge pages are `madvise` or
/// `always` (`/sys/kernel/mm/transparent_hugepage/enabled`), the common defaults.
#[cfg(target_os = "linux")]
pub(crate) fn advise_huge_pages(address: *mut u8, bytes: usize) {
    if bytes < ADVISED_BYTES {
        return;
    }
    let first = (address as usize).next_multiple_of(HUGE_PAGE_BYTES);
    let end = (address as usize).saturating_add(bytes) / HUGE_PAGE_BYTES * HUGE_PAGE_BYTES;
    if end > first {
        // SAFETY: `[first, end)` lies within the `bytes` bytes at `address` (rounded inward to
        // whole huge pages), which the caller owns. `MADV_HUGEPAGE` changes only how the kernel
        // backs those pages: it reads, writes and unmaps nothing, so no Rust value sees a
        // difference (a range not mapped is an error return). A failure (a kernel without
        // transparent huge pages) leaves the pages as they were, which is correct too.
        unsafe { libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE) };
    }
}

/// Elsewhere than Linux, readbacks keep the allocator's pages.
#[cfg(not(target_os = "linux"))]
pub(crate) fn advise_huge_pages(_address: *mut u8, _bytes: usize) {}
