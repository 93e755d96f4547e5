//! Data wrappers of arrays the GPU holds: an output a run left on the GPU goes back into a DAG
//! (as an array context thaws a frozen array) and is read where it is: the next run uploads
//! nothing and waits for nothing, and the program is not cached (the cache would keep the
//! buffer alive). Host backends read the same wrapper through a copy.
//!
//! One test function, run alone in this binary: the count of waits is the process's.

mod support;
use support::gpu;

use std::sync::Arc;

use pytato_backend_interp::Interpreter;
use pytato_core::array::DataRef;
use pytato_core::device::{DeviceArray, DeviceStorage};
use pytato_core::{Array, ArrayData, DType, Result};
use pytato_frontend as pt;
use pytato_runtime::backend::{Backend, NamedViews};
use pytato_runtime::device::{DeviceInput, NamedDeviceInputs};

fn f64s(values: &[f64]) -> ArrayData {
    ArrayData::from(ndarray::Array1::from(values.to_vec()).into_dyn())
}

fn bits(data: &ArrayData) -> Vec<u64> {
    data.to_scalars().iter().map(|s| s.to_f64().to_bits()).collect()
}

/// Storage of no backend's: the elements are reachable only through `to_host`.
#[derive(Debug)]
struct Elsewhere(ArrayData);

impl DeviceStorage for Elsewhere {
    fn to_host(&self) -> Result<ArrayData> {
        Ok(self.0.clone())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[test]
fn data_wrappers_of_gpu_arrays_are_read_on_the_gpu() {
    let Some(w) = gpu() else { return };
    let start = [3.0, -0.0, f64::INFINITY, 5e-324, -7.25];
    let x = pt::placeholder("x", [5], DType::F64).unwrap();

    // u = 2x - 1, left on the GPU.
    let first = w.compile(&(&pt::subtract(pt::multiply(&x, 2.0).unwrap(), 1.0).unwrap()).into()).unwrap();
    let xs = w.upload(&f64s(&start).view()).unwrap();
    let u = first.run_device(&NamedDeviceInputs::from([("x", DeviceInput::Device(&xs))])).unwrap().remove("_pt_out");
    let u = u.expect("the output");
    assert!(u.host_data().is_none(), "the output stays on the GPU");

    // v = u * x + u, with u wrapped as data.
    let wrapped = Array::new_data_wrapper(DataRef::Device(u.clone()), None).unwrap();
    let v = pt::add(pt::multiply(&wrapped, &x).unwrap(), &wrapped).unwrap();
    let want: Vec<u64> = start.iter().map(|&x| ((2.0 * x - 1.0) * x + (2.0 * x - 1.0)).to_bits()).collect();

    let (hits, misses) = pytato_backend_wgpu::cache_stats();
    let second = w.compile(&(&v).into()).unwrap();
    let waits = w.host_waits();
    let out = second.run_device(&NamedDeviceInputs::from([("x", DeviceInput::Device(&xs))])).unwrap();
    assert_eq!(w.host_waits(), waits, "a run on a GPU-held data wrapper waited for the GPU");
    assert_eq!(bits(&out["_pt_out"].to_host().unwrap()), want);
    // On host inputs, and again (the data is bound, never uploaded over).
    for _ in 0..2 {
        let host = second.run_views(&NamedViews::from([("x", f64s(&start).view())])).unwrap();
        assert_eq!(bits(&host["_pt_out"]), want);
    }
    // Not cached: compiling the same DAG again compiles.
    drop(w.compile(&(&v).into()).unwrap());
    assert_eq!(pytato_backend_wgpu::cache_stats(), (hits, misses + 2), "DAGs over GPU arrays are not cached");

    // The wrapper itself as an output: the same buffer, on the device and on the host.
    let echo = w.compile(&(&wrapped).into()).unwrap();
    let same = echo.run_device(&NamedDeviceInputs::new()).unwrap().remove("_pt_out").expect("the output");
    assert!(same.same_storage(&u), "a wrapped GPU array comes back as itself");
    let host = echo.run_views(&NamedViews::new()).unwrap();
    assert_eq!(bits(&host["_pt_out"]), bits(&u.to_host().unwrap()));

    // The interpreter reads the same wrapper through a copy to the host.
    let interp = Interpreter.compile(&(&v).into()).unwrap();
    let on_host = interp.run_views(&NamedViews::from([("x", f64s(&start).view())])).unwrap();
    assert_eq!(bits(&on_host["_pt_out"]), want);

    // A device array of no backend's is copied through the host.
    let elsewhere = DeviceArray::new(DType::F64, vec![5], Arc::new(Elsewhere(f64s(&start))));
    let far = Array::new_data_wrapper(DataRef::Device(elsewhere), None).unwrap();
    let doubled = w.compile(&(&pt::multiply(&far, 2.0).unwrap()).into()).unwrap();
    let got = doubled.run_views(&NamedViews::new()).unwrap();
    let want: Vec<u64> = start.iter().map(|x| (2.0 * x).to_bits()).collect();
    assert_eq!(bits(&got["_pt_out"]), want);
}
