//! The bind groups of a program's recent runs, kept for the next runs.
//!
//! A dispatch binds the control block and the kernel's buffers in a bind group, and creating one
//! costs the host more than the rest of the dispatch (wgpu checks every binding and tracks every
//! buffer; 23% of a DG time loop's host instructions on wgpu went there). A time loop on device
//! data binds the same few buffers again and again: its arrays cycle through the spare buffers of
//! the arrays it drops (`crate::spare`), and the program's own buffers stay. So each program keeps
//! the bind groups of its last [`RUNS`] runs, by pipeline and buffers, and a dispatch takes one
//! from there where it binds the same buffers.
//!
//! A kept bind group keeps its buffers alive. Those of the last few runs were in use a moment ago,
//! and one bound a buffer of more than [`MAX_KEPT_BUFFER`] is not kept: a run on a large array
//! that the caller then drops does not hold its memory (and at that size a dispatch's host cost
//! is small beside the GPU's work).

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use crate::device::{Gpu, Pipeline};

/// The runs whose bind groups are kept: enough for the arrays of a time loop to come back to
/// buffers bound before (a step's inputs are the last step's outputs, its outputs the buffers of
/// arrays dropped a step or two ago, and arrays of one size may trade buffers).
const RUNS: usize = 4;

/// The largest buffer a kept bind group may bind.
const MAX_KEPT_BUFFER: u64 = 64 << 20;

/// A pipeline and the buffers bound to it, in binding order. wgpu's handles hash and compare by
/// the identity of what they handle, which never changes (clippy's `mutable_key_type` sees their
/// interior mutability, which hashing does not read).
type Key = (wgpu::ComputePipeline, Vec<wgpu::Buffer>);

/// The bind groups of one program's last [`RUNS`] runs.
#[derive(Default)]
#[allow(clippy::mutable_key_type)] // See `Key`.
pub(crate) struct BindGroups {
    /// The runs begun.
    runs: u64,
    /// Each bind group kept, with the last run that used it.
    kept: HashMap<Key, (wgpu::BindGroup, u64)>,
}

impl BindGroups {
    /// Starts a new run, forgetting the bind groups that the last [`RUNS`] runs did not use.
    pub(crate) fn begin_run(&mut self) {
        self.runs += 1;
        let runs = self.runs;
        self.kept.retain(|_, (_, used)| runs - *used < RUNS as u64);
    }

    /// A bind group of `pipeline` with the control block at binding 0 and `buffers` after it:
    /// one this or a recent run created, or a new one.
    #[allow(clippy::mutable_key_type)] // See `Key`.
    pub(crate) fn get(
        &mut self,
        gpu: &Gpu,
        pipeline: &Pipeline,
        control: &wgpu::Buffer,
        buffers: &[wgpu::Buffer],
    ) -> wgpu::BindGroup {
        let bound: Vec<wgpu::Buffer> = std::iter::once(control).chain(buffers).cloned().collect();
        if bound.iter().any(|b| b.size() > MAX_KEPT_BUFFER) {
            return create(gpu, pipeline, &bound);
        }
        match self.kept.entry((pipeline.pipeline.clone(), bound)) {
            Entry::Occupied(mut kept) => {
                kept.get_mut().1 = self.runs;
                kept.get().0.clone()
            }
            Entry::Vacant(slot) => {
                let group = create(gpu, pipeline, &slot.key().1);
                slot.insert((group.clone(), self.runs));
                group
            }
        }
    }
}

/// A new bind group of `pipeline` binding `bound` at bindings 0, 1, ...
pub(crate) fn create(gpu: &Gpu, pipeline: &Pipeline, bound: &[wgpu::Buffer]) -> wgpu::BindGroup {
    gpu.bind_groups_created.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let entries: Vec<wgpu::BindGroupEntry<'_>> = bound
        .iter()
        .enumerate()
        .map(|(k, buffer)| wgpu::BindGroupEntry { binding: k as u32, resource: buffer.as_entire_binding() })
        .collect();
    gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.layout,
        entries: &entries,
    })
}
