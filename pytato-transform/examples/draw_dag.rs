//! Draws a small but real DAG (a DG-style operator application with a flux term) to
//! `target/draw/dag.{dot,svg,html}`: `cargo run -p pytato-transform --example draw_dag`.

use pytato_core::{DType, DictOfNamedArrays, Dim};
use pytato_frontend as pt;
use pytato_runtime::backend::Outputs;
use pytato_transform::draw::{to_dot, to_html, to_svg};

fn main() -> pytato_core::Result<()> {
    let e = Dim::param("n_elements");
    let u = pt::placeholder("u", [e.clone(), Dim::new(10)], DType::F64)?;
    let d = pt::placeholder("diff_mat", [10, 10], DType::F64)?;
    let du = pt::einsum("ij,ej->ei", &[&d, &u])?;
    let flux = 0.5 * &(&pt::roll(&u, 1, Some(0))? - &u);
    let rhs = &du + &pt::sin(&flux)?;
    let outputs = Outputs::from(DictOfNamedArrays::new([("rhs", rhs), ("energy", pt::sum(&(&u * &u), None)?)])?);
    std::fs::create_dir_all("target/draw").expect("target/draw");
    std::fs::write("target/draw/dag.dot", to_dot(&outputs)).expect("write");
    std::fs::write("target/draw/dag.svg", to_svg(&outputs)?).expect("write");
    std::fs::write("target/draw/dag.html", to_html(&outputs, "DG right-hand side")?).expect("write");
    println!("wrote target/draw/dag.dot, dag.svg, dag.html");
    Ok(())
}
