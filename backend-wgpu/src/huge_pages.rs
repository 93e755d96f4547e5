//! Readbacks into memory backed by transparent huge pages.
//!
//! A readback's array is fresh memory, handed to the caller: the allocator maps it page by page
//! as the copy out of the staging buffer first writes it. For 80 MB, about 20,000 faults of
//! 4 KiB cost more than the copy itself. Asked before the copy, Linux backs the memory with
//! 2 MiB pages instead. The Cranelift backend advises its fresh outputs the same way, with its
//! own copy of this call (`run::advise_huge_pages`; the pages it covers are
//! `pytato_runtime::spare::whole_huge_pages`): `unsafe` stays in the backend crates, at the JIT
//! and GPU boundaries, and no crate below both may hold it.

/// Asks Linux to back the whole 2 MiB pages within the `bytes` at `address` (memory the caller
/// owns and has not written yet) with transparent huge pages, where the memory is large
/// (`pytato_runtime::spare::whole_huge_pages`). Linux follows the advice where transparent huge
/// pages are `madvise` or `always` (`/sys/kernel/mm/transparent_hugepage/enabled`), the common
/// defaults.
#[cfg(target_os = "linux")]
pub(crate) fn advise_huge_pages(address: *mut u8, bytes: usize) {
    if let Some(pages) = pytato_runtime::spare::whole_huge_pages(address, bytes) {
        // SAFETY: `pages` lies within the `bytes` bytes at `address` (rounded inward to whole
        // huge pages), which the caller owns. `MADV_HUGEPAGE` changes only how the kernel backs
        // those pages: it reads, writes and unmaps nothing, so no Rust value sees a difference
        // (a range not mapped is an error return). A failure (a kernel without transparent huge
        // pages) leaves the pages as they were, which is correct too.
        unsafe { libc::madvise(pages.start as *mut libc::c_void, pages.len(), libc::MADV_HUGEPAGE) };
    }
}

/// Elsewhere than Linux, readbacks keep the allocator's pages.
#[cfg(not(target_os = "linux"))]
pub(crate) fn advise_huge_pages(_address: *mut u8, _bytes: usize) {}
