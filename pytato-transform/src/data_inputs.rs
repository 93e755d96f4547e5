//! Data wrappers as program inputs, so that a compiled program does not depend on the data.
//!
//! Two DAGs that differ only in the arrays their `DataWrapper`s hold are different DAGs (a wrapper
//! is equal only to a wrapper of the very same buffer), so a program cache keyed by the DAG would
//! compile a DAG rebuilt over new data again, though the code is the same. [`data_as_inputs`]
//! replaces every wrapper with a placeholder named `_pt_data0`, `_pt_data1`, ... (numbered in the
//! order a traversal from the outputs meets them, so structurally equal DAGs get the same names,
//! and skipping names the DAG's own inputs have)
//! and returns the data to pass under those names. Compiled backends key their caches by the DAG
//! this returns and bind the data at every run: a time loop that rebuilds its DAG around new
//! arrays compiles once.
//!
//! ```
//! use pytato_core::ArrayData;
//! use pytato_frontend as pt;
//! use pytato_transform::data_inputs::data_as_inputs;
//! let build = |v: f64| -> pytato_core::Result<_> {
//!     let a = pt::data_wrapper(ArrayData::from(ndarray::arr1(&[v, v]).into_dyn()), None)?;
//!     Ok(data_as_inputs(&(&(&a * 2.0)).into())?)
//! };
//! let (first, second) = (build(1.0)?, build(5.0)?);
//! assert!(first.outputs.entries() == second.outputs.entries(), "the same program, over other data");
//! assert_eq!(first.data[0].0, "_pt_data0");
//! # Ok::<(), pytato_core::Error>(())
//! ```

use std::collections::BTreeSet;

use pytato_core::array::{DataRef, collect_inputs};
use pytato_core::names::fresh_name;
use pytato_core::tags::StandsForData;
use pytato_core::{Array, Error, NodeKind, Result};
use pytato_runtime::backend::{NamedViews, Outputs};

use crate::mapper::{CopyMapper, map_copy};

/// The prefix of the placeholders that stand for data (a reserved namespace, see
/// `pytato_core::names`).
pub const DATA_INPUT_PREFIX: &str = "_pt_data";

/// A DAG whose data wrappers became placeholders, and the data those take.
#[derive(Clone, Debug)]
pub struct DataInputs {
    /// The DAG with placeholders `_pt_data<k>` where the wrappers were.
    pub outputs: Outputs,
    /// `(placeholder name, data)` for every wrapper replaced, in numbering order: in host
    /// memory or held by a device, as the wrapper held it.
    pub data: Vec<(String, DataRef)>,
}

impl DataInputs {
    /// The same, with every array a device holds copied to the host (what a backend that
    /// computes on the host binds; host data is shared, not copied).
    pub fn to_host(self) -> Result<DataInputs> {
        let data =
            self.data.into_iter().map(|(name, d)| Ok((name, DataRef::Host(d.to_host()?)))).collect::<Result<_>>()?;
        Ok(DataInputs { outputs: self.outputs, data })
    }

    /// The inputs a program compiled from [`DataInputs::outputs`] takes: the user's `inputs` and
    /// the data under its placeholder names. A user input named like one of those is
    /// [`Error::UnknownInput`] (`user_inputs` lists what the program does take). The data must
    /// be in host memory ([`DataInputs::to_host`]); data a device holds is [`Error::Internal`].
    pub fn bind<'s>(
        &'s self,
        inputs: &'s NamedViews<'_>,
        user_inputs: &dyn Fn() -> Vec<String>,
    ) -> Result<NamedViews<'s>> {
        let mut all: NamedViews<'s> = inputs.iter().map(|(&name, view)| (name, view.reborrow())).collect();
        for (name, data) in &self.data {
            let host = data.as_host().ok_or_else(|| Error::Internal {
                backend: "data_as_inputs".into(),
                message: format!("data input {name} is held by a device; DataInputs::to_host was not called"),
            })?;
            if all.insert(name.as_str(), host.view()).is_some() {
                return Err(Error::UnknownInput { name: name.clone(), known: user_inputs() });
            }
        }
        Ok(all)
    }

    /// `names` (a compiled program's inputs) without the data's placeholders.
    pub fn user_inputs(&self, mut names: Vec<String>) -> Vec<String> {
        names.retain(|n| !self.data.iter().any(|(d, _)| d == n));
        names
    }

    /// `error` with the data's placeholders left out of the inputs it lists.
    pub fn user_error(&self, error: Error) -> Error {
        match error {
            Error::UnknownInput { name, known } => Error::UnknownInput { name, known: self.user_inputs(known) },
            other => other,
        }
    }
}

/// Replaces every `DataWrapper` of `outputs` with a placeholder (same shape, dtype and tags); see
/// the module docs.
pub fn data_as_inputs(outputs: &Outputs) -> Result<DataInputs> {
    let roots: Vec<Array> = outputs.entries().into_iter().map(|(_, a)| a).collect();
    // The user may name inputs `_pt_data0` too: the placeholders' names go around the DAG's own.
    let taken = collect_inputs(&roots)?.taken_names();
    let mut mapper = DataToPlaceholders { data: Vec::new(), taken };
    let outputs = map_copy(&mut mapper, outputs)?;
    Ok(DataInputs { outputs, data: mapper.data })
}

struct DataToPlaceholders {
    data: Vec<(String, DataRef)>,
    taken: BTreeSet<String>,
}

impl CopyMapper for DataToPlaceholders {
    fn map_data_wrapper(&mut self, node: &Array, _children: &[Array]) -> Result<Array> {
        let NodeKind::DataWrapper { data, name: wrapper } = node.kind() else { unreachable!("dispatched by kind") };
        let name = fresh_name(DATA_INPUT_PREFIX, self.data.len(), &mut self.taken);
        let placeholder = Array::new_generated_placeholder(&name, node.shape().clone(), node.dtype())?;
        self.data.push((name, data.clone()));
        // Messages about this input are about the wrapper's data.
        placeholder.with_metadata_of(node)?.tagged(StandsForData::of_wrapper(wrapper.as_deref()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pytato_core::device::{DeviceArray, DeviceStorage};
    use pytato_core::{ArrayData, DType};
    use pytato_frontend as pt;
    use std::sync::Arc;

    /// Storage standing for a device's: the elements are only reachable by a copy.
    #[derive(Debug)]
    struct FarAway(ArrayData);

    impl DeviceStorage for FarAway {
        fn to_host(&self) -> Result<ArrayData> {
            Ok(self.0.clone())
        }
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
    }

    #[test]
    fn device_data_is_bound_after_a_copy_to_the_host_and_host_data_is_shared() -> Result<()> {
        let far = ArrayData::from(ndarray::arr1(&[1.5, -0.0]).into_dyn());
        let device = DeviceArray::new(DType::F64, vec![2], Arc::new(FarAway(far.clone())));
        let near = Arc::new(ArrayData::from(ndarray::arr1(&[4.0, 5.0]).into_dyn()));
        let a = Array::new_data_wrapper(DataRef::Device(device), None)?;
        let b = Array::new_data_wrapper(DataRef::Host(near.clone()), None)?;
        let inputs = data_as_inputs(&(&(&a + &b)).into())?;
        let none = NamedViews::new();
        let err = inputs.bind(&none, &Vec::new).map(|_| ()).expect_err("device data is not bound as it is");
        assert_eq!(err.kind(), "Internal", "{err}");
        let host = inputs.to_host()?;
        let bound = host.bind(&none, &Vec::new)?;
        assert_eq!(bound["_pt_data0"].to_owned(), far);
        assert!(Arc::ptr_eq(host.data[1].1.as_host().expect("host"), &near), "host data is not copied");
        Ok(())
    }

    fn wrapper(values: &[f64], name: Option<&str>) -> Result<Array> {
        pt::data_wrapper(ArrayData::from(ndarray::Array1::from(values.to_vec()).into_dyn()), name)
    }

    #[test]
    fn equal_structure_over_other_data_is_one_dag() -> Result<()> {
        let x = pt::placeholder("x", [2], DType::F64)?;
        let build = |a: &Array, b: &Array| -> Result<Outputs> { Ok((&(&(a * &x) + b)).into()) };
        let (a1, b1) = (wrapper(&[1.0, 2.0], None)?, wrapper(&[3.0, 4.0], Some("b"))?);
        let (a2, b2) = (wrapper(&[5.0, 6.0], None)?, wrapper(&[7.0, 8.0], Some("b"))?);
        let (first, second) = (data_as_inputs(&build(&a1, &b1)?)?, data_as_inputs(&build(&a2, &b2)?)?);
        assert!(build(&a1, &b1)?.entries() != build(&a2, &b2)?.entries(), "the DAGs themselves differ");
        assert!(first.outputs.entries() == second.outputs.entries());
        let names: Vec<&str> = first.data.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["_pt_data0", "_pt_data1"]);
        // The data travels with its name: each wrapper's own array, in the same order both times.
        for (k, (_, data)) in second.data.iter().enumerate() {
            let (_, same_place) = &first.data[k];
            assert_eq!(data.shape(), same_place.shape());
            assert!(data != same_place);
        }
        Ok(())
    }

    #[test]
    fn a_dag_without_data_is_unchanged() -> Result<()> {
        let x = pt::placeholder("x", [3], DType::F64)?;
        let y = pt::sin(&x)?;
        let erased = data_as_inputs(&(&y).into())?;
        assert!(erased.data.is_empty());
        assert!(matches!(erased.outputs, Outputs::Single(a) if a.id() == y.id()), "the very same node");
        Ok(())
    }
}
