//! Common-subexpression elimination: structurally equal subexpressions become one node.
//!
//! The DAG is rebuilt bottom-up; each rebuilt node is looked up among the nodes already kept with
//! the same structural hash. Because its children are already canonical, that comparison stops at
//! pointer equality one level down, so the pass is linear in the size of the DAG. Data wrappers
//! over the same buffer (and with the same name and tags) are equal, so they merge too.
//!
//! ```
//! use pytato_core::DType;
//! use pytato_runtime::backend::Outputs;
//! use pytato_frontend as pt;
//! use pytato_transform::{cse::deduplicate, analysis::num_nodes};
//! let x = pt::placeholder("x", [3], DType::F64)?;
//! let y = &pt::sin(&x)? + &pt::sin(&x)?;      // two separate, equal sin nodes
//! let deduped = deduplicate(&(&y).into())?;
//! assert_eq!(num_nodes(&(&y).into()), 4);
//! assert_eq!(num_nodes(&deduped), 3);
//! # Ok::<(), pytato_core::Error>(())
//! ```

use std::collections::HashMap;

use pytato_core::{Array, Result};
use pytato_runtime::backend::Outputs;

use crate::mapper::{CopyMapper, map_copy};

/// Merges structurally equal nodes of `outputs`.
pub fn deduplicate(outputs: &Outputs) -> Result<Outputs> {
    map_copy(&mut Deduplicator::default(), outputs)
}

/// The copy mapper behind [`deduplicate`]; reuse one to deduplicate several DAGs against each
/// other.
#[derive(Default)]
pub struct Deduplicator {
    kept: HashMap<u64, Vec<Array>>,
}

impl CopyMapper for Deduplicator {
    fn map_node(&mut self, node: &Array, children: &[Array]) -> Result<Array> {
        let rebuilt = node.with_children(children.to_vec())?;
        let bucket = self.kept.entry(rebuilt.structural_hash()).or_default();
        if let Some(existing) = bucket.iter().find(|k| **k == rebuilt) {
            return Ok(existing.clone());
        }
        bucket.push(rebuilt.clone());
        Ok(rebuilt)
    }
}
