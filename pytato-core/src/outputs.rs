//! What a program computes: one array or several named ones ([`Outputs`]), the unit that
//! transformations, functions and backends take.

use crate::array::{Array, DictOfNamedArrays};
use crate::error::Result;

/// The name of the output of a program compiled from a single array.
pub const SINGLE_OUTPUT_NAME: &str = "_pt_out";

/// What a program computes: one array, or several named ones.
#[derive(Clone, Debug)]
pub enum Outputs {
    /// One array, output under [`SINGLE_OUTPUT_NAME`].
    Single(Array),
    /// Named arrays.
    Named(DictOfNamedArrays),
}

impl Outputs {
    /// `(name, array)` pairs, in output order.
    pub fn entries(&self) -> Vec<(String, Array)> {
        match self {
            Outputs::Single(a) => vec![(SINGLE_OUTPUT_NAME.to_string(), a.clone())],
            Outputs::Named(d) => d.iter().map(|(n, a)| (n.to_string(), a.clone())).collect(),
        }
    }

    /// The same outputs over other arrays: `f` maps each array, in [`entries`](Outputs::entries)
    /// order; a dictionary keeps its names and tags.
    pub fn map_arrays(&self, mut f: impl FnMut(&Array) -> Array) -> Result<Outputs> {
        Ok(match self {
            Outputs::Single(a) => Outputs::Single(f(a)),
            Outputs::Named(d) => {
                let mut dict = DictOfNamedArrays::new(d.iter().map(|(n, a)| (n, f(a))).collect::<Vec<_>>())?;
                for tag in d.tags().iter() {
                    dict = dict.tagged_ref(tag.clone())?;
                }
                Outputs::Named(dict)
            }
        })
    }

    /// The structural hash of the whole result (compiled programs are cached by it).
    pub fn structural_hash(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::hash::DefaultHasher::new();
        match self {
            Outputs::Single(a) => a.hash(&mut h),
            Outputs::Named(d) => d.hash(&mut h),
        }
        h.finish()
    }
}

impl From<Array> for Outputs {
    fn from(a: Array) -> Outputs {
        Outputs::Single(a)
    }
}
impl From<&Array> for Outputs {
    fn from(a: &Array) -> Outputs {
        Outputs::Single(a.clone())
    }
}
impl From<DictOfNamedArrays> for Outputs {
    fn from(d: DictOfNamedArrays) -> Outputs {
        Outputs::Named(d)
    }
}
impl From<&DictOfNamedArrays> for Outputs {
    fn from(d: &DictOfNamedArrays) -> Outputs {
        Outputs::Named(d.clone())
    }
}
