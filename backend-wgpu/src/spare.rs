//! Storage buffers recycled from dropped device arrays.
//!
//! A time loop on device data (`Program::run_device`) makes new output arrays at every step and
//! drops those of the step before. A fresh wgpu buffer costs more than its allocation: wgpu
//! zero-fills a buffer before its first use in a binding (it cannot know that a shader writes
//! every element before reading any), one more write of every output at every step, and on
//! lavapipe the host faults its pages in too. So the buffer of a dropped device array goes to the
//! GPU's [`SpareBuffers`], and the next storage buffer of the same size is taken from there
//! ([`crate::device::Gpu::storage_buffer`]).
//!
//! Reusing a buffer that work still pending reads is safe: every submission goes to the one
//! queue, which runs them in order, and wgpu orders a later write after earlier reads with
//! barriers (as a program's own buffers are reused from one run to the next).

use std::collections::HashMap;

use crate::device::Gpu;

/// The most bytes the spares hold.
const MAX_BYTES: u64 = 512 << 20;
/// The most spares of one size: a time loop cycles through a few arrays of each size.
const MAX_PER_SIZE: usize = 4;

/// Buffers of dropped device arrays (all of `crate::resident::STORAGE_USAGE`), by size.
#[derive(Default)]
pub(crate) struct SpareBuffers {
    by_size: HashMap<u64, Vec<wgpu::Buffer>>,
    bytes: u64,
}

impl SpareBuffers {
    /// A spare of exactly `size` bytes, if there is one.
    pub(crate) fn take(&mut self, size: u64) -> Option<wgpu::Buffer> {
        let spares = self.by_size.get_mut(&size)?;
        let buffer = spares.pop()?;
        if spares.is_empty() {
            self.by_size.remove(&size);
        }
        self.bytes -= size;
        Some(buffer)
    }

    /// Keeps `buffer` for a later [`SpareBuffers::take`], or frees it where the spares are full.
    fn put(&mut self, buffer: wgpu::Buffer) {
        let size = buffer.size();
        let spares = self.by_size.entry(size).or_default();
        if spares.len() < MAX_PER_SIZE && self.bytes + size <= MAX_BYTES {
            spares.push(buffer);
            self.bytes += size;
        } else if spares.is_empty() {
            self.by_size.remove(&size);
        }
    }

    /// How many buffers the spares hold.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.by_size.values().map(Vec::len).sum()
    }
}

/// The storage buffer of device arrays (shared by those over the same elements), which goes to
/// its GPU's spares when the last of them is dropped.
pub(crate) struct StorageBuffer {
    gpu: &'static Gpu,
    buffer: wgpu::Buffer,
}

impl StorageBuffer {
    /// `buffer`, a storage buffer of `gpu` that nothing else holds, as a device array's storage.
    pub(crate) fn new(gpu: &'static Gpu, buffer: wgpu::Buffer) -> StorageBuffer {
        StorageBuffer { gpu, buffer }
    }
}

impl std::ops::Deref for StorageBuffer {
    type Target = wgpu::Buffer;
    fn deref(&self) -> &wgpu::Buffer {
        &self.buffer
    }
}

impl Drop for StorageBuffer {
    fn drop(&mut self) {
        let mut spares = self.gpu.spares.lock().unwrap_or_else(|p| p.into_inner());
        spares.put(self.buffer.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spares_are_kept_by_exact_size_within_their_bounds() {
        let Some(gpu) = crate::device::test_gpu() else { return };
        let new = |size: u64| {
            gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size,
                usage: crate::resident::STORAGE_USAGE,
                mapped_at_creation: false,
            })
        };
        let mut spares = SpareBuffers::default();
        for _ in 0..MAX_PER_SIZE + 2 {
            spares.put(new(256));
        }
        assert_eq!(spares.len(), MAX_PER_SIZE, "more spares of one size than a loop cycles through");
        assert!(spares.take(128).is_none() && spares.take(512).is_none(), "only the exact size is reused");
        let taken = spares.take(256).expect("a spare of that size");
        assert_eq!(taken.size(), 256);
        assert_eq!((spares.len(), spares.bytes), (MAX_PER_SIZE - 1, 256 * (MAX_PER_SIZE as u64 - 1)));
        // A buffer beyond what the spares may hold is freed, not kept.
        let mut full = SpareBuffers { bytes: MAX_BYTES - 100, ..SpareBuffers::default() };
        full.put(new(256));
        assert_eq!(full.len(), 0);
        assert!(full.by_size.is_empty());
    }
}
