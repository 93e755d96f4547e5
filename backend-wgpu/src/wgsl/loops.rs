//! The loops of a shader, recorded as the translator emits them, so that a run can count the
//! loop iterations one invocation performs for the sizes it binds, the way a driver with a loop
//! cap counts them.
//!
//! llvmpipe (lavapipe's compiler) keeps **one** iteration counter per shader invocation, shared
//! by every loop statement, starts it at 65,535 and decrements it at the end of every iteration of
//! every loop, the iteration that only tests the exit condition included; at zero, every loop
//! exits. Nothing reports it: the shader goes on with whatever the loops had done, a silent wrong
//! value. And it runs an `if` by masking lanes, not by jumping over it: a loop inside a branch
//! that no lane takes still runs its exit test. Measured (the probes are this module's tests,
//! run where the adapter is llvmpipe): a loop of `t` iterations runs whole for `t ≤ 65,535`;
//! after a loop of 3 iterations, 65,531; nested in a loop of `n`, a loop of `m` runs whole for
//! `n (m + 2) ≤ 65,535`; a loop under an `if` that no lane takes costs one per pass.
//!
//! So here a loop of `t` iterations whose body costs `c` costs `t (1 + c) + 1`, loops one after
//! another add up, nested loops multiply, and a block that runs on some passes only (a block of a
//! sum complete every `period` passes: [`LoopOp::Every`]) or a branch not taken
//! ([`LoopOp::Alternative`]) still costs each of its loop statements once per pass. Other
//! branches count as if taken. The result is an upper bound, close to the truth.
//!
//! The translator records every loop statement it opens (a `debug_assert` in `shader` holds the
//! count to the loops in the source), with its trip count in terms of the sizes ([`Trips`]); a
//! run evaluates it for its sizes ([`LoopPlan::iterations`]).

use pytato_core::{Dim, Result};
use pytato_runtime::math::SUM_BLOCK;

use super::Translator;

/// How many iterations a loop statement runs each time it is entered, for the run's sizes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Trips {
    /// At most this many.
    AtMost(u64),
    /// The terms of `ranges` (the product of their lengths `upper - lower`, a negative length
    /// counting as 0), `step` terms per iteration, rounded up.
    Terms { ranges: Vec<(Dim, Dim)>, step: u64 },
    /// The blocks of one partial result of a block-sums shader: `2^coarse` (see
    /// `reduce::Translator::partial_of_blocks`).
    BlocksPerPartial,
    /// The merges, and the test that ends them, of the tree of one partial result's blocks:
    /// `coarse + 1`.
    PartialTreeLevels,
}

impl Trips {
    /// The trips for the sizes `size` gives, with `2^coarse` blocks per partial result of a
    /// block-sums shader.
    fn eval(&self, size: &dyn Fn(&Dim) -> Result<i64>, coarse: u32) -> Result<u128> {
        let terms = |ranges: &[(Dim, Dim)]| {
            ranges.iter().try_fold(1u128, |n, (lower, upper)| {
                Ok(n.saturating_mul((size(upper)?.saturating_sub(size(lower)?)).max(0) as u128))
            })
        };
        Ok(match self {
            Trips::AtMost(n) => *n as u128,
            Trips::Terms { ranges, step } => terms(ranges)?.div_ceil(*step as u128),
            Trips::BlocksPerPartial => 1u128 << coarse.min(64),
            Trips::PartialTreeLevels => coarse as u128 + 1,
        })
    }
}

/// A condition on the sizes that chooses one branch of a choice.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Condition {
    /// `upper - lower` is a multiple of `by`.
    Divisible { lower: Dim, upper: Dim, by: u64 },
    /// No earlier branch of the choice was taken.
    Otherwise,
}

/// One step of a shader's loop structure, in the order of the source (a block's contents
/// before the op that closes it). Evaluated by a stack machine ([`LoopPlan::iterations`]), so
/// that no nesting depth can overflow a stack.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum LoopOp {
    /// A loop body, a periodic block, a branch or a choice starts.
    Enter,
    /// The loop whose body started at the matching `Enter` ends; it runs this many iterations.
    Loop(Trips),
    /// The block that started at the matching `Enter` runs once every this many passes of the
    /// innermost enclosing loop (a block of `SUM_BLOCK` terms filled `k` terms per pass).
    Every(u64),
    /// A branch of the current choice ends; it runs when the condition holds (and no earlier
    /// branch ran).
    Alternative(Condition),
    /// The choice that started at the matching `Enter` ends.
    Choice,
}

/// The loop statements of one shader (see the module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct LoopPlan {
    ops: Vec<LoopOp>,
}

/// The cost of a block being counted.
#[derive(Default)]
struct Count {
    /// Iterations on every pass.
    always: u128,
    /// Blocks that run once every `period` passes: `(period, cost when run, cost when not)`.
    periodic: Vec<(u64, u128, u128)>,
    /// The loop statements inside, at any depth: what the block costs when no lane runs it.
    loops: u128,
    /// For a choice: whether a branch was taken.
    decided: bool,
}

impl Count {
    /// The cost where the block runs once (its periodic parts at most once each).
    fn once(&self) -> u128 {
        self.periodic.iter().fold(self.always, |n, &(_, run, _)| n.saturating_add(run))
    }
}

impl LoopPlan {
    /// The loop statements recorded (for the check against the source).
    pub(crate) fn loops(&self) -> usize {
        self.ops.iter().filter(|op| matches!(op, LoopOp::Loop(_))).count()
    }

    /// The most loop iterations, as llvmpipe counts them (see the module docs), that one
    /// invocation runs for the sizes `size` gives, with `2^coarse` blocks per partial result of
    /// a block-sums shader.
    pub(crate) fn iterations(&self, size: &dyn Fn(&Dim) -> Result<i64>, coarse: u32) -> Result<u128> {
        // Every op but `Enter` closes a block opened inside the shader's own (the translator
        // records them in pairs): two counts on the stack, the block's and its parent's.
        let mut stack = vec![Count::default()];
        let unbalanced = || super::bug("a shader's loop plan closes a block it did not open");
        let pop = |stack: &mut Vec<Count>| (stack.len() > 1).then(|| stack.pop()).flatten().ok_or_else(unbalanced);
        for op in &self.ops {
            match op {
                LoopOp::Enter => stack.push(Count::default()),
                LoopOp::Loop(trips) => {
                    let body = pop(&mut stack)?;
                    let t = trips.eval(size, coarse)?;
                    let mut n = t.saturating_mul(body.always.saturating_add(1)).saturating_add(1);
                    for (period, run, skipped) in body.periodic {
                        let runs = t.div_ceil(period as u128);
                        n = n.saturating_add(runs.saturating_mul(run)).saturating_add(t.saturating_mul(skipped));
                    }
                    let top = stack.last_mut().ok_or_else(unbalanced)?;
                    top.always = top.always.saturating_add(n);
                    top.loops = top.loops.saturating_add(body.loops).saturating_add(1);
                }
                LoopOp::Every(period) => {
                    let block = pop(&mut stack)?;
                    let top = stack.last_mut().ok_or_else(unbalanced)?;
                    top.periodic.push((*period, block.once(), block.loops));
                    top.loops = top.loops.saturating_add(block.loops);
                }
                LoopOp::Alternative(condition) => {
                    let branch = pop(&mut stack)?;
                    let holds = match condition {
                        Condition::Divisible { lower, upper, by } => {
                            (size(upper)?.wrapping_sub(size(lower)?)).rem_euclid(*by as i64) == 0
                        }
                        Condition::Otherwise => true,
                    };
                    let choice = stack.last_mut().ok_or_else(unbalanced)?;
                    let taken = holds && !choice.decided;
                    choice.decided |= taken;
                    let cost = if taken { branch.once() } else { branch.loops };
                    choice.always = choice.always.saturating_add(cost);
                    choice.loops = choice.loops.saturating_add(branch.loops);
                }
                LoopOp::Choice => {
                    let choice = pop(&mut stack)?;
                    let top = stack.last_mut().ok_or_else(unbalanced)?;
                    top.always = top.always.saturating_add(choice.once());
                    top.loops = top.loops.saturating_add(choice.loops);
                }
            }
        }
        match stack.as_slice() {
            [shader] => Ok(shader.once()),
            _ => Err(super::bug("a shader's loop plan leaves a block open")),
        }
    }
}

/// What a block the translator opened is, for what closing it records.
#[derive(Clone, Debug)]
pub(super) enum Block {
    /// A block that runs when control reaches it (or as often as the code around it says).
    Plain,
    Loop(Trips),
    Every(u64),
    Alternative(Condition),
}

impl Translator<'_> {
    /// Opens a loop statement (`header` is `for (…)` or `loop`) that runs `trips` iterations.
    pub(super) fn open_loop(&mut self, header: &str, trips: Trips) {
        self.loops.ops.push(LoopOp::Enter);
        self.open_block(header, Block::Loop(trips));
    }

    /// Opens a block (an `if`) that runs once every `period` iterations of the innermost
    /// enclosing loop.
    pub(super) fn open_every(&mut self, header: &str, period: u64) {
        self.loops.ops.push(LoopOp::Enter);
        self.open_block(header, Block::Every(period));
    }

    /// Starts a choice between branches of which exactly one runs (see [`Self::open_alternative`]).
    pub(super) fn begin_choice(&mut self) {
        self.loops.ops.push(LoopOp::Enter);
    }

    /// Opens one branch of the current choice (`if …`, `else`), taken when `condition` holds.
    pub(super) fn open_alternative(&mut self, header: &str, condition: Condition) {
        self.loops.ops.push(LoopOp::Enter);
        self.open_block(header, Block::Alternative(condition));
    }

    /// Ends the current choice (its branches closed).
    pub(super) fn end_choice(&mut self) {
        self.loops.ops.push(LoopOp::Choice);
    }

    /// Records the end of a block that [`Self::open_block`] opened.
    pub(super) fn record_close(&mut self, block: Block) {
        match block {
            Block::Plain => {}
            Block::Loop(trips) => self.loops.ops.push(LoopOp::Loop(trips)),
            Block::Every(period) => self.loops.ops.push(LoopOp::Every(period)),
            Block::Alternative(condition) => self.loops.ops.push(LoopOp::Alternative(condition)),
        }
    }
}

/// How many passes of a loop that adds `per_pass` terms per pass fill a block of `SUM_BLOCK`
/// terms (how often a sum's block is complete).
pub(super) fn passes_per_block(per_pass: usize) -> u64 {
    (SUM_BLOCK / per_pass as u64).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use LoopOp::{Enter, Every};

    /// The sizes of these tests: the size parameter `n` (any other is 0).
    fn sizes(n: i64) -> impl Fn(&Dim) -> Result<i64> {
        move |d: &Dim| Ok(d.constant() + d.terms().map(|(p, c)| if p == "n" { c * n } else { 0 }).sum::<i64>())
    }

    fn count(ops: &[LoopOp], n: i64) -> u128 {
        LoopPlan { ops: ops.to_vec() }.iterations(&sizes(n), 0).unwrap()
    }

    fn at_most(t: u64) -> LoopOp {
        LoopOp::Loop(Trips::AtMost(t))
    }

    fn over_n(step: u64) -> LoopOp {
        LoopOp::Loop(Trips::Terms { ranges: vec![(Dim::new(0), Dim::param("n"))], step })
    }

    #[test]
    fn nested_loops_multiply_and_loops_in_sequence_add() {
        // Nested in a loop of n, a loop of m: n (m + 2) + 1.
        for m in 0..4 {
            assert_eq!(count(&[Enter, Enter, at_most(m), over_n(1)], 1000), 1000 * (m as u128 + 2) + 1);
        }
        // A loop of 10, then an empty one (its exit test still runs).
        assert_eq!(count(&[Enter, at_most(10), Enter, at_most(0)], 0), 11 + 1);
    }

    #[test]
    fn a_choice_costs_its_taken_branch_and_the_exit_tests_of_the_others() {
        let divisible = Condition::Divisible { lower: Dim::new(0), upper: Dim::param("n"), by: 16 };
        let ops = [
            Enter,
            Enter,
            Enter,
            over_n(16),
            LoopOp::Alternative(divisible),
            Enter,
            Enter,
            over_n(1),
            LoopOp::Alternative(Condition::Otherwise),
            LoopOp::Choice,
        ];
        assert_eq!(count(&ops, 1600), (100 + 1) + 1);
        assert_eq!(count(&ops, 1601), 1 + (1601 + 1));
    }

    #[test]
    fn periodic_blocks_cost_their_loops_on_every_pass() {
        // A loop of n passes that runs a loop of one iteration every 128 passes (2 when it runs,
        // its exit test on the others).
        let ops = [Enter, Enter, Enter, at_most(1), Every(128), over_n(1)];
        assert_eq!(count(&ops, 1000), 1001 + 8 * 2 + 1000);
    }

    #[test]
    fn trips_of_terms() {
        let d = Dim::new;
        let size = sizes(0);
        let terms = Trips::Terms { ranges: vec![(d(0), d(10)), (d(2), d(9))], step: 8 };
        assert_eq!(terms.eval(&size, 0).unwrap(), 70u128.div_ceil(8));
        let empty = Trips::Terms { ranges: vec![(d(5), d(3)), (d(0), d(9))], step: 1 };
        assert_eq!(empty.eval(&size, 0).unwrap(), 0);
        assert_eq!(Trips::BlocksPerPartial.eval(&size, 0).unwrap(), 1);
        assert_eq!(Trips::BlocksPerPartial.eval(&size, 6).unwrap(), 64);
        assert_eq!(Trips::PartialTreeLevels.eval(&size, 6).unwrap(), 7);
    }

    /// Runs `body` (WGSL statements that count passes in `done` and read `n` and `params`) in one
    /// invocation; returns `done`.
    fn run_probe(gpu: &crate::device::Gpu, body: &str, params: [u32; 4]) -> u32 {
        use wgpu::util::DeviceExt;
        let source = format!(
            "@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;
@compute @workgroup_size(1)
fn main() {{
    var done: u32 = 0u;
    let n = params[0];
    {body}
    out[0] = done;
}}"
        );
        let device = &gpu.device;
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("loop probe"),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("loop probe"),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        let storage = |usage| wgpu::BufferDescriptor { label: None, size: 16, usage, mapped_at_creation: false };
        let out = device.create_buffer(&storage(wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC));
        let staging = device.create_buffer(&storage(wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST));
        let params = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: None,
            contents: &params.iter().flat_map(|p| p.to_le_bytes()).collect::<Vec<u8>>(),
            usage: wgpu::BufferUsages::STORAGE,
        });
        let bindings = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: out.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: params.as_entire_binding() },
            ],
        });
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &bindings, &[]);
            pass.dispatch_workgroups(1, 1, 1);
        }
        encoder.copy_buffer_to_buffer(&out, 0, &staging, 0, 16);
        gpu.submit(encoder).expect("the probe is submitted");
        staging.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        gpu.poll(wgpu::PollType::wait_indefinitely()).expect("the probe finishes");
        let bytes = staging.slice(..).get_mapped_range().expect("mapped");
        u32::from_le_bytes(bytes[..4].try_into().expect("four bytes"))
    }

    /// The driver against the model: for each loop shape (a probe shader and its plan), with the
    /// most passes `n` that the model allows under the driver's cap, every pass runs; with 3% more,
    /// the driver stops early (so the probe sees the cap, and the model is not far from it).
    /// Runs where the adapter has a loop cap (llvmpipe); trip counts come from a buffer so that
    /// no compiler unrolls the loops.
    #[test]
    fn llvmpipe_stops_loops_no_earlier_than_the_model_says() {
        let gpu = match crate::device::gpu() {
            Ok(gpu) if gpu.loop_limit.is_some() => gpu,
            Ok(gpu) => return eprintln!("SKIPPED: adapter {} has no loop cap", gpu.info.name),
            Err(e) => return eprintln!("SKIPPED: no adapter ({e})"),
        };
        let limit = gpu.loop_limit.expect("a cap") as u128;
        // params: n, then 1, 0 and 3 (trip counts and flags the compiler cannot see).
        let probes: Vec<(&str, &str, Vec<LoopOp>)> = vec![
            ("one loop", "for (var i: u32 = 0u; i < n; i = i + 1u) { done = done + 1u; }", vec![Enter, over_n(1)]),
            (
                "after a loop of 3",
                "for (var i: u32 = 0u; i < params[3]; i = i + 1u) { done = done + 7u; }
                 for (var i: u32 = 0u; i < n; i = i + 1u) { done = done + 1u; }
                 done = done - 21u;",
                vec![Enter, at_most(3), Enter, over_n(1)],
            ),
            (
                "nested loops",
                "for (var i: u32 = 0u; i < n; i = i + 1u) {
                     for (var j: u32 = 0u; j < params[3]; j = j + 1u) { done = done + 1u; }
                 }
                 done = done / 3u;",
                vec![Enter, Enter, at_most(3), over_n(1)],
            ),
            (
                "a loop every 128 passes",
                "for (var i: u32 = 0u; i < n; i = i + 1u) {
                     if (i & 127u) == 127u {
                         var k: u32 = 0u;
                         loop { if k >= params[1] { break; } k = k + 1u; }
                     }
                     done = done + 1u;
                 }",
                vec![Enter, Enter, Enter, at_most(1), Every(128), over_n(1)],
            ),
            (
                // The branch taken depends on params[2] (0: the `else`); the plan's condition,
                // 1 divisible by 2, is false likewise, so the model takes the `else` too.
                "a choice",
                "if params[2] != 0u {
                     for (var i: u32 = 0u; i < n; i = i + 1u) { done = done + 2u; }
                 } else {
                     for (var i: u32 = 0u; i < n; i = i + 1u) { done = done + 1u; }
                 }",
                vec![
                    Enter,
                    Enter,
                    Enter,
                    over_n(1),
                    LoopOp::Alternative(Condition::Divisible { lower: Dim::new(0), upper: Dim::new(1), by: 2 }),
                    Enter,
                    Enter,
                    over_n(1),
                    LoopOp::Alternative(Condition::Otherwise),
                    LoopOp::Choice,
                ],
            ),
        ];
        for (what, body, ops) in probes {
            let most = (1..=limit as i64).rev().find(|&n| count(&ops, n) <= limit).expect("some n fits");
            let done = run_probe(gpu, body, [most as u32, 1, 0, 3]);
            assert_eq!(done as i64, most, "{what}: the model allows {most} passes; the driver ran {done}");
            let more = most + most / 33;
            let done = run_probe(gpu, body, [more as u32, 1, 0, 3]);
            assert!((done as i64) < more, "{what}: {more} passes ran whole; the probe does not reach the cap");
        }
    }
}
