//! A 1,000,000-node chain goes through every mapper and pass on a thread with a 2 MiB stack: no
//! traversal may recurse along the depth of the DAG.

use pytato_core::{Array, DType, Result};
use pytato_frontend as pt;
use pytato_runtime::backend::Outputs;
use pytato_transform::analysis::{depth, is_lowered, node_type_counts, num_nodes, num_users};
use pytato_transform::cse::deduplicate;
use pytato_transform::dce::eliminate_dead_code;
use pytato_transform::lower::lower_to_index_lambdas;
use pytato_transform::mapper::{
    CopyMapper, Mapper, dependencies, inputs, map_copy, map_dag, size_params, topological_sort, users, walk,
};

const LENGTH: usize = 1_000_000;

/// x, x + 1, roll(x + 1), roll(x + 1) + 1, ...: alternating index lambdas and rolls.
fn chain() -> Result<Array> {
    let mut a = pt::placeholder("x", [pytato_core::Dim::param("n")], DType::F64)?;
    for k in 0..LENGTH - 1 {
        a = if k % 2 == 0 { pt::add(&a, 1.0)? } else { pt::roll(&a, 1, Some(0))? };
    }
    Ok(a)
}

struct Identity;
impl CopyMapper for Identity {}

/// A combine mapper: the longest path below each node.
struct Longest;
impl Mapper for Longest {
    type Output = usize;
    fn map_node(&mut self, _: &Array, children: &[usize]) -> Result<usize> {
        Ok(1 + children.iter().copied().max().unwrap_or(0))
    }
}

fn everything() -> Result<()> {
    let top = chain()?;
    let roots = [top.clone()];
    let outputs = Outputs::from(&top);

    let mut visited = 0;
    walk(&roots, |_| visited += 1);
    assert_eq!(visited, LENGTH);
    assert_eq!(topological_sort(&roots).len(), LENGTH);
    assert_eq!(dependencies(&roots).len(), LENGTH);
    assert_eq!(inputs(&roots).len(), 1);
    assert_eq!(size_params(&roots).len(), 1);
    assert_eq!(users(&roots).len(), LENGTH);
    assert_eq!(map_dag(&mut Longest, &roots)?, vec![LENGTH]);
    assert_eq!(depth(&outputs), LENGTH);
    assert_eq!(num_nodes(&outputs), LENGTH);
    assert_eq!(num_users(&outputs).len(), LENGTH);
    assert_eq!(node_type_counts(&outputs)["Roll"], LENGTH / 2 - 1);

    // A copy mapper that changes nothing returns the very same node.
    let Outputs::Single(same) = map_copy(&mut Identity, &outputs)? else { unreachable!() };
    assert!(same.ptr_eq(&top));

    let Outputs::Single(deduped) = deduplicate(&outputs)? else { unreachable!() };
    assert!(deduped.ptr_eq(&top), "nothing to merge in a chain");
    let Outputs::Single(cleaned) = eliminate_dead_code(&outputs)? else { unreachable!() };
    assert!(cleaned.ptr_eq(&top));
    let stored = pytato_transform::materialize::materialize(&outputs, &mut pytato_transform::materialize::Mpms)?;
    assert_eq!(pytato_transform::analysis::materialized(&stored).len(), 1, "a chain stores only its output");
    drop(stored);
    let unified = pytato_transform::unify_tags::unify_axes_tags(&outputs, |_| true)?;
    assert_eq!(num_nodes(&unified), LENGTH);
    drop(unified);
    let no_broadcasts = pytato_transform::einsum::remove_broadcasts_in_einsums(&outputs)?;
    drop(no_broadcasts);
    let lowered = lower_to_index_lambdas(&outputs)?;
    assert!(is_lowered(&lowered));
    // Every lowered roll reads the length `n` through one shared SizeParam node.
    assert_eq!(num_nodes(&lowered), LENGTH + 1);
    drop(lowered);

    // The kernel IR: the inline limit cuts the chain into bounded expressions.
    let options = pytato_transform::kernel::KernelOptions::default();
    let program = pytato_transform::kernel::build_kernel_program(&outputs, options)?;
    assert!(program.kernels.len() > LENGTH / (2 * options.max_inline_depth), "{} kernels", program.kernels.len());
    for kernel in &program.kernels {
        let mut size = 0u64;
        kernel.expr.walk(&mut |_| size += 1);
        assert!(size <= 4 * options.max_inline_size, "a kernel expression of {size} operations");
    }
    drop(program);
    drop(top);
    Ok(())
}

#[test]
fn million_node_chain_through_every_pass_on_a_2mib_stack() {
    std::thread::Builder::new().stack_size(2 << 20).spawn(everything).unwrap().join().unwrap().unwrap();
}

mod traversals_with_context {
    use pytato_core::{Array, DType, Result};
    use pytato_frontend as pt;
    use pytato_transform::context::{ContextMapper, MapCache, Visit, map_dag_cached, map_with_context, walk_top_down};
    use pytato_transform::mapper::Mapper;

    fn chain(n: usize) -> (Array, Array) {
        let x = pt::placeholder("x", [2], DType::F64).unwrap();
        let mut y = x.clone();
        for _ in 0..n {
            y = &y + 1.0;
        }
        (x, y)
    }

    /// Distance from the output, capped: a context with few values keeps the work linear.
    struct CappedDepth;
    impl ContextMapper for CappedDepth {
        type Context = u8;
        type Output = u8;
        fn child_context(&mut self, _: &Array, context: &u8, _: usize) -> u8 {
            context.saturating_add(1).min(3)
        }
        fn map(&mut self, _: &Array, context: &u8, children: &[u8]) -> Result<u8> {
            Ok(children.iter().copied().max().unwrap_or(*context))
        }
    }

    #[test]
    fn context_mappers_walks_and_caches_take_a_long_chain() {
        // Run on a small stack: nothing may recurse along the chain.
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(|| {
                let (x, y) = chain(200_000);
                assert_eq!(map_with_context(&mut CappedDepth, &[(y.clone(), 0)]).unwrap(), [3]);
                let mut visited = 0;
                assert!(walk_top_down([&y], |n| {
                    visited += 1;
                    if n.ptr_eq(&x) { Visit::Stop } else { Visit::Continue }
                }));
                assert_eq!(visited, 200_001);
                // Skipping the first node's children visits it alone.
                let mut alone = 0;
                assert!(!walk_top_down([&y], |_| {
                    alone += 1;
                    Visit::SkipChildren
                }));
                assert_eq!(alone, 1);
                struct Count(usize);
                impl Mapper for Count {
                    type Output = ();
                    fn map_node(&mut self, _: &Array, _: &[()]) -> Result<()> {
                        self.0 += 1;
                        Ok(())
                    }
                }
                let (mut count, mut cache) = (Count(0), MapCache::new());
                map_dag_cached(&mut count, std::slice::from_ref(&y), &mut cache).unwrap();
                let longer = &y * 2.0;
                map_dag_cached(&mut count, &[longer], &mut cache).unwrap();
                assert_eq!((count.0, cache.len()), (200_002, 200_002));
            })
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn a_node_reached_in_two_contexts_is_mapped_in_each() {
        struct Paths;
        impl ContextMapper for Paths {
            type Context = bool; // reached through the left operand of some node
            type Output = usize;
            fn child_context(&mut self, _: &Array, context: &bool, index: usize) -> bool {
                *context || index == 0
            }
            fn map(&mut self, node: &Array, context: &bool, children: &[usize]) -> Result<usize> {
                Ok(children.iter().sum::<usize>() + usize::from(node.is_input() && *context))
            }
        }
        let x = pt::placeholder("x", [2], DType::F64).unwrap();
        let y = pt::placeholder("y", [2], DType::F64).unwrap();
        // x is the left operand (bindings in name order: _in0 = x, _in1 = y).
        let out = &x * &y;
        assert_eq!(map_with_context(&mut Paths, &[(out.clone(), false)]).unwrap(), [1]);
        assert_eq!(map_with_context(&mut Paths, &[(out, true)]).unwrap(), [2]);
    }
}

/// A drawing of a DAG too large for `layout-rs` (whose crossing minimization grows faster than
/// the square of the node count) is laid out in layers: every node and edge drawn, a chain one
/// node per layer.
#[test]
fn a_long_chain_is_drawn_in_layers() -> Result<()> {
    let n = 20 * pytato_transform::draw::LAYERED_FROM;
    let mut a = pt::placeholder("x", [3], DType::F64)?;
    for _ in 1..n {
        a = pt::add(&a, 1.0)?;
    }
    let svg = pytato_transform::draw::to_svg(&Outputs::from(&a))?;
    // the chain's nodes and the output's box, one edge into each but the first
    assert_eq!((svg.matches("<rect").count(), svg.matches("<line").count()), (n + 1, n));
    assert!(svg.contains(&format!("{} nodes in {} layers", n + 1, n + 1)));
    Ok(())
}
