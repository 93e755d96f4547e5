//! A 1,000,000-node chain goes through every mapper and pass on a thread with a 2 MiB stack: no
//! traversal may recurse along the depth of the DAG.

use pytato_core::backend::Outputs;
use pytato_core::frontend as pt;
use pytato_core::{Array, DType, Result};
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
