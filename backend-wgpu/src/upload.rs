//! Host bytes on their way to the GPU, through a staging buffer reused from one transfer to the
//! next: one per program for its runs' inputs, one per GPU for `Backend::upload`
//! (`crate::resident`).
//!
//! `Queue::write_buffer` allocates a fresh staging buffer for every call, which the host then
//! faults in page by page and frees again: on lavapipe that was most of the time a run on 400 MB of
//! host inputs spent moving them, and on a discrete GPU each fresh allocation is pinned memory. An
//! [`UploadStaging`] keeps one `MAP_WRITE | COPY_SRC` buffer: a transfer writes its host bytes into
//! it at 8-byte-aligned offsets, in 4 MiB tasks on rayon's pool (one thread's `memcpy` does not
//! fill a server's memory bandwidth), records one copy from it into each destination buffer, and
//! after submitting asks for it to be mapped again ([`UploadStaging::remap`]). A run on host data
//! waits for its own results, so the mapping has completed by then and the next run finds the
//! buffer mapped. One that finds it unmapped (the previous run only enqueued, or failed before
//! submitting) replaces it with a fresh buffer mapped at creation rather than wait: runs on device
//! data must not wait, and the old buffer lives until the GPU is done with it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use pytato_core::{Error, Result};

use crate::device::Gpu;
use crate::transfer::COPY_TASK_BYTES;

/// A reusable `MAP_WRITE | COPY_SRC` buffer and whether it is mapped now (a handle: clones share
/// both).
#[derive(Clone)]
pub(crate) struct UploadStaging {
    buffer: wgpu::Buffer,
    /// Set when the buffer is mapped for writing: at creation, and by [`UploadStaging::remap`]'s
    /// callback.
    mapped: Arc<AtomicBool>,
}

/// Where each part of an upload goes in the staging buffer: 8-byte-aligned offsets (what a
/// mapped range's start needs; copies need 4), and the total size.
fn layout(parts: &[(&wgpu::Buffer, &[u8])]) -> (Vec<u64>, u64) {
    let mut offsets = Vec::with_capacity(parts.len());
    let mut total = 0u64;
    for (_, bytes) in parts {
        offsets.push(total);
        total += (bytes.len() as u64).next_multiple_of(wgpu::MAP_ALIGNMENT);
    }
    (offsets, total)
}

/// Writes each `(destination, bytes)` of `parts` through the staging buffer in `slot` (made or
/// replaced as needed, see the module documentation) and records the copies into the
/// destinations at offset 0 in `encoder`. Returns the staging buffer when it was used: after
/// submitting `encoder`, call [`UploadStaging::remap`] on it. Every part's length is a multiple
/// of 4 (storage elements are 4, 8 or 16 bytes) and fits its destination.
pub(crate) fn upload(
    gpu: &Gpu,
    slot: &mut Option<UploadStaging>,
    encoder: &mut wgpu::CommandEncoder,
    parts: &[(&wgpu::Buffer, &[u8])],
) -> Result<Option<UploadStaging>> {
    let (offsets, total) = layout(parts);
    if total == 0 {
        return Ok(None);
    }
    let reusable = slot.as_ref().is_some_and(|s| s.buffer.size() >= total && s.mapped.load(Ordering::Acquire));
    if !reusable {
        *slot = None; // the old buffer goes before the new one comes
        let buffer = gpu.staging_buffer(total, wgpu::MapMode::Write, "pytato upload staging")?;
        *slot = Some(UploadStaging { buffer, mapped: Arc::new(AtomicBool::new(true)) });
    }
    let staging = slot.clone().expect("just ensured");
    if let Err(e) = write_parts(&staging.buffer, parts, &offsets) {
        // Not expected (the buffer is mapped over at least `total` bytes); never reuse it.
        *slot = None;
        return Err(e);
    }
    staging.buffer.unmap();
    staging.mapped.store(false, Ordering::Release);
    for ((destination, bytes), &at) in parts.iter().zip(&offsets) {
        if !bytes.is_empty() {
            encoder.copy_buffer_to_buffer(&staging.buffer, at, destination, 0, bytes.len() as u64);
        }
    }
    Ok(Some(staging))
}

/// Writes each part's bytes at its offset in the mapped `buffer`: in tasks of
/// [`COPY_TASK_BYTES`] on rayon's pool when there is more than one task's worth, each through its
/// own view of the mapping (disjoint ranges may be viewed at once; one view cannot be shared).
fn write_parts(buffer: &wgpu::Buffer, parts: &[(&wgpu::Buffer, &[u8])], offsets: &[u64]) -> Result<()> {
    use rayon::prelude::*;
    let tasks: Vec<(u64, &[u8])> = parts
        .iter()
        .zip(offsets)
        .flat_map(|((_, bytes), &at)| {
            bytes.chunks(COPY_TASK_BYTES).enumerate().map(move |(k, chunk)| (at + (k * COPY_TASK_BYTES) as u64, chunk))
        })
        .collect();
    let write = |&(at, bytes): &(u64, &[u8])| -> Result<()> {
        let mut view = buffer.get_mapped_range_mut(at..at + bytes.len() as u64).map_err(|e| Error::Internal {
            backend: "wgpu".into(),
            message: format!("writing the upload staging buffer: {e}"),
        })?;
        view.copy_from_slice(bytes);
        Ok(())
    };
    match tasks.len() {
        0 | 1 => tasks.iter().try_for_each(write),
        _ => tasks.par_iter().try_for_each(write),
    }
}

impl UploadStaging {
    /// Asks for the buffer to be mapped for writing again once the GPU is done with the copies
    /// submitted from it; the mapping completes at the next poll that sees them done.
    pub(crate) fn remap(&self) {
        let mapped = Arc::clone(&self.mapped);
        self.buffer.map_async(wgpu::MapMode::Write, .., move |result| mapped.store(result.is_ok(), Ordering::Release));
    }

    /// Whether the buffer is mapped now, ready for the next run's bytes.
    pub(crate) fn is_mapped(&self) -> bool {
        self.mapped.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn destination(gpu: &Gpu, size: u64) -> wgpu::Buffer {
        gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: size.max(4),
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        })
    }

    /// The first `size` bytes of `buffer`, copied back through a buffer of their own.
    fn read_back(gpu: &Gpu, buffer: &wgpu::Buffer, size: u64) -> Vec<u8> {
        if size == 0 {
            return Vec::new();
        }
        let staging = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size,
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
            mapped_at_creation: false,
        });
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, size);
        gpu.submit(encoder).unwrap();
        crate::resident::map_for_reading(gpu, &staging, size).unwrap();
        let bytes = staging.get_mapped_range(..size).unwrap().to_vec();
        staging.unmap();
        bytes
    }

    /// Distinct bytes for part `seed` (every 4-byte word differs between parts and positions).
    fn pattern(len: usize, seed: u8) -> Vec<u8> {
        (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed.wrapping_mul(97)) ^ (i >> 8) as u8).collect()
    }

    /// Uploads parts of these lengths through `slot`, submits, waits, and checks every
    /// destination's bytes. Returns the staging buffer used.
    fn upload_and_check(gpu: &Gpu, slot: &mut Option<UploadStaging>, lengths: &[usize], remap: bool) -> UploadStaging {
        let sources: Vec<Vec<u8>> = lengths.iter().enumerate().map(|(k, &n)| pattern(n, k as u8 + 1)).collect();
        let destinations: Vec<wgpu::Buffer> = lengths.iter().map(|&n| destination(gpu, n as u64)).collect();
        let parts: Vec<(&wgpu::Buffer, &[u8])> = destinations.iter().zip(&sources).map(|(d, s)| (d, &s[..])).collect();
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        let staging = upload(gpu, slot, &mut encoder, &parts).unwrap().expect("bytes to upload");
        assert!(!staging.is_mapped(), "unmapped while its copies are pending");
        gpu.submit(encoder).unwrap();
        if remap {
            staging.remap();
        }
        for ((d, s), &n) in destinations.iter().zip(&sources).zip(lengths) {
            assert_eq!(read_back(gpu, d, n as u64), *s, "a part of {n} bytes");
        }
        staging
    }

    #[test]
    fn runs_reuse_one_staging_buffer_that_is_mapped_again_by_their_wait() {
        let Some(gpu) = crate::device::test_gpu() else { return };
        let mut slot = None;
        // Parts of 4 bytes, none, several copy tasks with a ragged last one, and one task's worth.
        let big = 2 * COPY_TASK_BYTES + 12;
        let first = upload_and_check(gpu, &mut slot, &[4, 0, big, COPY_TASK_BYTES, 20], true);
        // `read_back` waited for the GPU: the buffer is mapped again, and the next (smaller)
        // upload writes into it.
        assert!(first.is_mapped(), "the wait after the copies did not map the staging buffer again");
        let second = upload_and_check(gpu, &mut slot, &[big - 4, 8], true);
        assert_eq!(first.buffer, second.buffer, "a staging buffer large enough was not reused");
        // A larger upload takes a larger buffer.
        let third = upload_and_check(gpu, &mut slot, &[big, big], true);
        assert_ne!(third.buffer, second.buffer);
        assert!(third.buffer.size() >= 2 * big as u64);
    }

    #[test]
    fn a_staging_buffer_not_mapped_again_is_replaced_not_waited_for() {
        let Some(gpu) = crate::device::test_gpu() else { return };
        let mut slot = None;
        // As after a run that only enqueued (or failed before submitting): no remap.
        let first = upload_and_check(gpu, &mut slot, &[64, 4096], false);
        let second = upload_and_check(gpu, &mut slot, &[64], true);
        assert_ne!(first.buffer, second.buffer, "an unmapped staging buffer was written into");
        assert!(
            upload(gpu, &mut slot, &mut gpu.device.create_command_encoder(&Default::default()), &[]).unwrap().is_none()
        );
    }
}
