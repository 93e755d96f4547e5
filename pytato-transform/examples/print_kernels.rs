//! Prints the kernel IR of the heat-equation update and of a small DG-style operator:
//! `cargo run -p pytato-transform --example print_kernels`.

use pytato_core::{DType, DictOfNamedArrays, Dim};
use pytato_frontend as pt;
use pytato_runtime::backend::Outputs;
use pytato_transform::kernel::{KernelOptions, build_kernel_program};

fn main() -> pytato_core::Result<()> {
    let u = pt::placeholder("u", [Dim::param("n")], DType::F64)?;
    let next = &u + 0.25 * &(pt::roll(&u, 1, Some(0))? - 2.0 * &u + pt::roll(&u, -1, Some(0))?);
    println!("{}", build_kernel_program(&(&next).into(), KernelOptions::default())?);

    let e = Dim::param("n_elements");
    let v = pt::placeholder("v", [e, Dim::new(10)], DType::F64)?;
    let d = pt::placeholder("diff_mat", [10, 10], DType::F64)?;
    let dv = pt::einsum("ij,ej->ei", &[&d, &v])?;
    let outputs = DictOfNamedArrays::new([("rhs", &dv + &pt::sin(&dv)?), ("energy", pt::sum(&(&v * &v), None)?)])?;
    println!("{}", build_kernel_program(&Outputs::from(outputs), KernelOptions::default())?);
    Ok(())
}
