//! GPU time per shader, for finding where a run spends its time on a real GPU: with
//! `PYTATO_PROFILE=gpu` (and an adapter with `TIMESTAMP_QUERY`), every dispatch (`run::Passes`
//! is the only place one is recorded, one compute pass each under the profiler) writes a
//! timestamp at the start and the end of its pass; after each submission the timestamps are
//! resolved, read back (a wait: profiling changes a run's host timing, not its GPU times) and
//! added to a table by shader label, which [`take_report`] returns and empties.
//!
//! A diagnostic for one thread at a time: passes recorded on two threads at once share the
//! pending list, so a report may mix their labels. Passes beyond 2,048 in one submission
//! are not timed (the report counts them).

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;

use crate::device::Gpu;

/// The environment variable that turns profiling on (`PYTATO_PROFILE=gpu`; a comma-separated list).
pub const PROFILE_VAR: &str = "PYTATO_PROFILE";

/// The most passes timed per submission (two timestamps each: wgpu allows 4,096 queries in a set).
const MAX_PASSES: u32 = 2048;

/// Whether `PYTATO_PROFILE` asks for GPU times.
pub(crate) fn requested() -> bool {
    std::env::var(PROFILE_VAR).is_ok_and(|v| v.split(',').any(|w| w.trim() == "gpu"))
}

/// The timestamp queries of one device.
pub(crate) struct Profiler {
    queries: wgpu::QuerySet,
    /// Where the queries are resolved (`QUERY_RESOLVE`), and the copy the host maps.
    resolved: wgpu::Buffer,
    readback: wgpu::Buffer,
    /// Nanoseconds per timestamp tick.
    period: f64,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The labels of the passes recorded since the last submission, in query order.
    pending: Vec<String>,
    /// Passes not timed because a submission had more than [`MAX_PASSES`].
    untimed: u64,
    /// Per label: the number of passes and their GPU times in nanoseconds.
    table: BTreeMap<String, Vec<f64>>,
}

impl Profiler {
    /// A profiler for `device`, which must have been created with `TIMESTAMP_QUERY`.
    pub(crate) fn new(device: &wgpu::Device, queue: &wgpu::Queue) -> Profiler {
        let bytes = 2 * MAX_PASSES as u64 * 8;
        let buffer = |label, usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes,
                usage,
                mapped_at_creation: false,
            })
        };
        Profiler {
            queries: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("pytato profile"),
                ty: wgpu::QueryType::Timestamp,
                count: 2 * MAX_PASSES,
            }),
            resolved: buffer("profile resolve", wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC),
            readback: buffer("profile readback", wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST),
            period: queue.get_timestamp_period() as f64,
            state: Mutex::new(State::default()),
        }
    }

    /// The timestamp writes of the next pass, a dispatch of a pipeline labelled `label`; `None`
    /// where this submission has used up its queries.
    pub(crate) fn next_pass(&self, label: &str) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let pass = state.pending.len() as u32;
        if pass >= MAX_PASSES {
            state.untimed += 1;
            return None;
        }
        state.pending.push(label.to_string());
        Some(wgpu::ComputePassTimestampWrites {
            query_set: &self.queries,
            beginning_of_pass_write_index: Some(2 * pass),
            end_of_pass_write_index: Some(2 * pass + 1),
        })
    }

    /// After a submission: reads the timestamps of the passes it had and adds them to the table.
    pub(crate) fn collect(&self, gpu: &Gpu) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let passes = std::mem::take(&mut state.pending);
        if passes.is_empty() {
            return;
        }
        let count = 2 * passes.len() as u32;
        let bytes = count as u64 * 8;
        let mut encoder =
            gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("profile resolve") });
        encoder.resolve_query_set(&self.queries, 0..count, &self.resolved, 0);
        encoder.copy_buffer_to_buffer(&self.resolved, 0, &self.readback, 0, bytes);
        gpu.submit_unprofiled([encoder.finish()]);
        let (sender, receiver) = std::sync::mpsc::channel();
        self.readback.slice(..bytes).map_async(wgpu::MapMode::Read, move |r| {
            let _ = sender.send(r);
        });
        let _ = gpu.poll(wgpu::PollType::Wait { submission_index: None, timeout: None });
        if !matches!(receiver.recv(), Ok(Ok(()))) {
            eprintln!("pytato wgpu profile: the timestamps could not be read back");
            return;
        }
        if let Ok(ticks) = self.readback.slice(..bytes).get_mapped_range() {
            let tick = |k: usize| u64::from_le_bytes(ticks[8 * k..8 * k + 8].try_into().expect("8 bytes"));
            for (k, label) in passes.into_iter().enumerate() {
                let (start, end) = (tick(2 * k), tick(2 * k + 1));
                // A pass recorded into an encoder that was dropped, not submitted, wrote nothing.
                if end > start {
                    state.table.entry(label).or_default().push((end - start) as f64 * self.period);
                }
            }
        }
        self.readback.unmap();
    }

    /// The table since the last report, one line per label (passes, total, median, least, most
    /// GPU time), the largest total first; emptied.
    fn report(&self) -> String {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let table = std::mem::take(&mut state.table);
        let untimed = std::mem::take(&mut state.untimed);
        let mut rows: Vec<(String, Vec<f64>)> = table.into_iter().collect();
        for (_, times) in &mut rows {
            times.sort_by(f64::total_cmp);
        }
        let total = |times: &[f64]| times.iter().sum::<f64>();
        rows.sort_by(|a, b| total(&b.1).total_cmp(&total(&a.1)));
        let mut out = format!(
            "{:>8} {:>12} {:>11} {:>11} {:>11}  shader\n",
            "passes", "total us", "median us", "least us", "most us"
        );
        for (label, times) in rows {
            let us = |ns: f64| ns / 1e3;
            let _ = writeln!(
                out,
                "{:>8} {:>12.1} {:>11.2} {:>11.2} {:>11.2}  {label}",
                times.len(),
                us(total(&times)),
                us(times[times.len() / 2]),
                us(times[0]),
                us(times[times.len() - 1])
            );
        }
        if untimed > 0 {
            let _ = writeln!(out, "({untimed} passes not timed: more than {MAX_PASSES} in one submission)");
        }
        out
    }
}

/// The GPU time per shader since the last call, as a table (see the module docs); `None` where
/// profiling is off (`PYTATO_PROFILE` does not name `gpu`), the adapter has no timestamp
/// queries, or there is no device.
pub fn take_report() -> Option<String> {
    let gpu = crate::device::gpu().ok()?;
    Some(gpu.profiler.as_ref()?.report())
}
