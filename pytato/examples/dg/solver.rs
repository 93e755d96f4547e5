//! A nodal discontinuous Galerkin solver for 2-D linear advection, `u_t + a · ∇u = 0`, on a
//! periodic mesh of `k × k` squares of `[0, 1]²` with tensor-product Gauss–Lobatto–Legendre nodes
//! (Hesthaven and Warburton, *Nodal Discontinuous Galerkin Methods*, 2008).
//!
//! - The reference-element matrices (1-D differentiation `D`, mass `M`, the lift columns
//!   `M⁻¹ e₀` and `M⁻¹ eₙ`) are computed here from the orthonormal Legendre Vandermonde matrix.
//!   On a square every 2-D operator is a 1-D one along one axis: the strong-form right-hand side
//!   is `-(2/h)(aₓ D_x u + a_y D_y u)` plus the lifted flux differences of the four faces.
//! - The right-hand side is one DAG: two einsums with `D` (element-local, small dense), face
//!   values of the neighbours gathered with index arrays (`take` along the element axis), the
//!   upwind flux difference `(a·n − |a·n|)/2 · (u⁻ − u⁺)` and the lift (an einsum per face; the
//!   faces the flow leaves through contribute zero and are left out). Arrays carry axis tags for
//!   the element and DOF axes.
//! - Time stepping is Carpenter and Kennedy's five-stage fourth-order low-storage Runge–Kutta
//!   scheme. On a backend that computes in host memory one stage (`k ← αk + Δt·rhs(u)`,
//!   `u ← u + βk`) is one compiled program whose outputs are named like its inputs, run five times
//!   per step with the stage's coefficients as 0-d inputs, reading one pair of buffers and writing
//!   the other. On a backend with a device of its own the five stages are one DAG, one program
//!   run per step ([`Unit`]): a run there only enqueues work, and the host's cost of a run (its
//!   checks, encoding, submission) comes once a step instead of five times.
//!
//! The number of elements is a size parameter: one program per order serves every mesh.

// Shared by the example, the conformance test, the bench and the distributed tests (`#[path]`):
// `pub` means "for all of them", and each uses a part.
#![allow(unreachable_pub, dead_code)]

use std::f64::consts::PI;
use std::time::{Duration, Instant};

use ndarray::{Array1, Array2, Array3, ArrayD};
use pytato_core::tags::Tag;
use pytato_core::{Array, ArrayData, DType, DictOfNamedArrays, Dim, Operand, Result, Shape};
use pytato_frontend as pt;
use pytato_runtime::backend::{Backend, NamedViews, NamedViewsMut, Program};
use pytato_runtime::device::{DeviceArray, DeviceInput, NamedDeviceInputs};

/// The element axis of a DG array.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ElementAxis;
impl Tag for ElementAxis {}

/// A degree-of-freedom axis of a DG array (one per direction).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct DofAxis;
impl Tag for DofAxis {}

/// The advection velocity.
pub const VELOCITY: (f64, f64) = (1.0, 0.5);

/// The faces of an element, by the name of the input that holds each one's neighbours.
pub const NEIGHBOURS: [&str; 4] = ["left", "right", "bottom", "top"];

/// `a·n` on each face of [`NEIGHBOURS`]: the flow enters where it is negative.
const A_DOT_N: [f64; 4] = [-VELOCITY.0, VELOCITY.0, -VELOCITY.1, VELOCITY.1];

/// The neighbour inputs the right-hand side reads: those of the faces the flow enters through.
pub fn inflow_neighbours() -> impl Iterator<Item = (usize, &'static str)> {
    NEIGHBOURS.into_iter().enumerate().filter(|&(side, _)| A_DOT_N[side] < 0.0)
}

/// The 1-D reference element `[-1, 1]` of order `n`.
pub struct Reference {
    /// Polynomial order.
    pub order: usize,
    /// Gauss–Lobatto–Legendre nodes, increasing.
    pub nodes: Vec<f64>,
    /// Differentiation matrix: `(D u)_i = u'(r_i)` for the interpolant of `u`.
    pub diff: Array2<f64>,
    /// Mass matrix `M_ij = ∫ ℓ_i ℓ_j`.
    pub mass: Array2<f64>,
    /// `M⁻¹ e₀`: the lift of a value at the left end.
    pub lift_left: Array1<f64>,
    /// `M⁻¹ eₙ`: the lift of a value at the right end.
    pub lift_right: Array1<f64>,
}

/// Legendre polynomials `P_0..=P_n` and their derivatives at `x`.
fn legendre(n: usize, x: f64) -> (Vec<f64>, Vec<f64>) {
    let mut p = vec![1.0; n + 1];
    let mut dp = vec![0.0; n + 1];
    if n >= 1 {
        p[1] = x;
        dp[1] = 1.0;
    }
    for k in 1..n {
        p[k + 1] = ((2 * k + 1) as f64 * x * p[k] - k as f64 * p[k - 1]) / (k + 1) as f64;
        // (2k + 1) P_k = P'_{k+1} - P'_{k-1}, exact at the ends too.
        dp[k + 1] = dp[k - 1] + (2 * k + 1) as f64 * p[k];
    }
    (p, dp)
}

/// The inverse of a small dense matrix (Gauss–Jordan with partial pivoting).
fn invert(a: &Array2<f64>) -> Array2<f64> {
    let n = a.nrows();
    let mut m = a.clone();
    let mut inv = Array2::eye(n);
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| m[[i, col]].abs().total_cmp(&m[[j, col]].abs())).expect("rows");
        for c in 0..n {
            m.swap([col, c], [pivot, c]);
            inv.swap([col, c], [pivot, c]);
        }
        let d = m[[col, col]];
        assert!(d.abs() > 1e-14, "singular reference matrix");
        for c in 0..n {
            m[[col, c]] /= d;
            inv[[col, c]] /= d;
        }
        for r in 0..n {
            if r != col {
                let f = m[[r, col]];
                for c in 0..n {
                    m[[r, c]] -= f * m[[col, c]];
                    inv[[r, c]] -= f * inv[[col, c]];
                }
            }
        }
    }
    inv
}

impl Reference {
    /// The reference element of order `order` (at least 1).
    pub fn new(order: usize) -> Reference {
        assert!(order >= 1, "DG needs order 1 or more");
        let n = order;
        // GLL nodes: the roots of P_{n+1} - P_{n-1}, by Newton's method from Chebyshev nodes.
        let mut nodes: Vec<f64> = (0..=n).map(|i| -(PI * i as f64 / n as f64).cos()).collect();
        for x in nodes.iter_mut().take(n).skip(1) {
            for _ in 0..100 {
                let (p, _) = legendre(n, *x);
                let step = (*x * p[n] - p[n - 1]) / ((n + 1) as f64 * p[n]);
                *x -= step;
                if step.abs() < 1e-16 {
                    break;
                }
            }
        }
        // Orthonormal Legendre Vandermonde matrix and its derivative.
        let scale = |j: usize| ((2 * j + 1) as f64 / 2.0).sqrt();
        let mut v = Array2::zeros((n + 1, n + 1));
        let mut vr = Array2::zeros((n + 1, n + 1));
        for (i, &x) in nodes.iter().enumerate() {
            let (p, dp) = legendre(n, x);
            for j in 0..=n {
                v[[i, j]] = scale(j) * p[j];
                vr[[i, j]] = scale(j) * dp[j];
            }
        }
        let v_inv = invert(&v);
        let diff = vr.dot(&v_inv);
        let mass_inv = v.dot(&v.t());
        let mass = invert(&mass_inv);
        let lift_left = mass_inv.column(0).to_owned();
        let lift_right = mass_inv.column(n).to_owned();
        Reference { order, nodes, diff, mass, lift_left, lift_right }
    }

    /// Nodes per direction.
    pub fn np(&self) -> usize {
        self.order + 1
    }
}

/// A periodic mesh of `k × k` squares of side `h = 1/k`; element `e = ex + k·ey`.
pub struct Mesh {
    /// Elements per direction.
    pub k: usize,
}

impl Mesh {
    /// Number of elements.
    pub fn elements(&self) -> usize {
        self.k * self.k
    }

    /// Element side.
    pub fn h(&self) -> f64 {
        1.0 / self.k as f64
    }

    /// The neighbour of each element across its left, right, bottom and top faces.
    pub fn neighbours(&self) -> [Array1<i64>; 4] {
        let k = self.k as i64;
        let at = |f: &dyn Fn(i64, i64) -> (i64, i64)| {
            Array1::from_shape_fn(self.elements(), |e| {
                let (ex, ey) = f(e as i64 % k, e as i64 / k);
                ex.rem_euclid(k) + k * ey.rem_euclid(k)
            })
        };
        [at(&|x, y| (x - 1, y)), at(&|x, y| (x + 1, y)), at(&|x, y| (x, y - 1)), at(&|x, y| (x, y + 1))]
    }

    /// `f(x, y)` at every node: shape `(elements, np, np)`, axes (element, x node, y node).
    pub fn interpolate(&self, reference: &Reference, f: impl Fn(f64, f64) -> f64) -> Array3<f64> {
        let (h, np) = (self.h(), reference.np());
        Array3::from_shape_fn((self.elements(), np, np), |(e, i, j)| {
            let (ex, ey) = ((e % self.k) as f64, (e / self.k) as f64);
            let x = (ex + (reference.nodes[i] + 1.0) / 2.0) * h;
            let y = (ey + (reference.nodes[j] + 1.0) / 2.0) * h;
            f(x, y)
        })
    }

    /// The L2 norm of a nodal field, with the exact mass matrix of each element.
    pub fn l2_norm(&self, reference: &Reference, u: &Array3<f64>) -> f64 {
        let m = &reference.mass;
        let jacobian = self.h() * self.h() / 4.0;
        let mut total = 0.0;
        for e in 0..self.elements() {
            let ue = u.index_axis(ndarray::Axis(0), e);
            // uᵀ (M ⊗ M) u = Σ_ij u_ij (M u Mᵀ)_ij
            let mu = m.dot(&ue).dot(&m.t());
            total += jacobian * (&ue * &mu).sum();
        }
        total.sqrt()
    }
}

/// The exact solution at time `t`: `sin(2π(x − aₓt)) sin(2π(y − a_y t))`.
pub fn exact(t: f64) -> impl Fn(f64, f64) -> f64 {
    move |x, y| (2.0 * PI * (x - VELOCITY.0 * t)).sin() * (2.0 * PI * (y - VELOCITY.1 * t)).sin()
}

fn data(a: ArrayD<f64>) -> Result<Array> {
    Array::new_data_wrapper(ArrayData::from(a), None)
}

/// The right-hand side `du/dt` of the semi-discrete scheme as a DAG in `u` (shape
/// `(e, np, np)`, `e` a size parameter or a length) and the neighbour index arrays of the faces the
/// flow enters through ([`inflow_neighbours`], shape `(e,)`), for elements of side `h` (a 0-d
/// input `h`).
pub fn rhs(reference: &Reference, u: &Array) -> Result<Array> {
    let plus = |side| plus_source(reference, u, side);
    rhs_from(reference, u, [plus(0)?, plus(1)?, plus(2)?, plus(3)?])
}

/// The face values of `u` that the neighbours across face `side` of [`NEIGHBOURS`] show: the
/// right faces of the left neighbours, and so on (shape `(e, np)`).
pub fn plus_source(reference: &Reference, u: &Array, side: usize) -> Result<Array> {
    let n = reference.order as i64;
    match side {
        0 => u.index(pytato_core::s![.., n, ..]),
        1 => u.index(pytato_core::s![.., 0, ..]),
        2 => u.index(pytato_core::s![.., .., n]),
        _ => u.index(pytato_core::s![.., .., 0]),
    }
}

/// [`rhs`] with the neighbours' face values across each face gathered from `plus[side]` (any
/// number of rows, indexed by that face's neighbour input): a rank of a distributed mesh puts the
/// faces it receives before its own.
pub fn rhs_from(reference: &Reference, u: &Array, plus: [Array; 4]) -> Result<Array> {
    let n = reference.order as i64;
    let (ax, ay) = VELOCITY;
    let elements = u.shape()[0].clone();
    let two_over_h = pt::divide(2.0, &pt::placeholder("h", Shape::scalar(), DType::F64)?)?;
    let diff = data(reference.diff.clone().into_dyn())?;
    let lifts = [data(reference.lift_left.clone().into_dyn())?, data(reference.lift_right.clone().into_dyn())?];

    // Volume term: -(2/h) (aₓ D along x + a_y D along y).
    let du_dx = pt::einsum("ik,ekj->eij", &[&diff, u])?;
    let du_dy = pt::einsum("jk,eik->eij", &[&diff, u])?;
    let mut total = pt::negative(&pt::add(&pt::multiply(ax, &du_dx)?, &pt::multiply(ay, &du_dy)?)?)?;

    // The strong-form flux difference n·(a u⁻) − n·f* with the upwind flux, lifted: zero on the
    // faces the flow leaves through (a·n ≥ 0), which are left out.
    for (side, name) in inflow_neighbours() {
        let minus = match side {
            0 => u.index(pytato_core::s![.., 0, ..])?,
            1 => u.index(pytato_core::s![.., n, ..])?,
            2 => u.index(pytato_core::s![.., .., 0])?,
            _ => u.index(pytato_core::s![.., .., n])?,
        };
        let neighbours = pt::placeholder(name, [elements.clone()], DType::I64)?.with_tagged_axis(0, ElementAxis)?;
        let gathered = pt::take(&plus[side], &neighbours, Some(0))?;
        let jump = pt::multiply(A_DOT_N[side], &pt::subtract(&minus, &gathered)?)?;
        let spec = if side < 2 { "i,ej->eij" } else { "j,ei->eij" };
        total = pt::add(&total, &pt::einsum(spec, &[&lifts[side % 2], &jump])?)?;
    }
    let total = pt::multiply(&two_over_h, &total)?;
    total.with_tagged_axis(0, ElementAxis)?.with_tagged_axis(1, DofAxis)?.with_tagged_axis(2, DofAxis)
}

/// One low-storage Runge–Kutta stage as a DAG: inputs `u`, `k` (shape `(e, np, np)`), the
/// neighbour arrays, `h`, and the 0-d stage coefficients `alpha`, `beta` and the step `dt`;
/// outputs `k ← αk + Δt·rhs(u)` and `u ← u + βk`, named `k` and `u` like their inputs.
pub fn stage(reference: &Reference) -> Result<DictOfNamedArrays> {
    stage_with(reference, Dim::param("e"), &|u| rhs(reference, u))
}

/// [`stage`] on `elements` elements, with the right-hand side `rhs` of `u`.
pub fn stage_with(
    reference: &Reference,
    elements: Dim,
    rhs: &dyn Fn(&Array) -> Result<Array>,
) -> Result<DictOfNamedArrays> {
    let (u, k, dt) = state_inputs(reference, elements)?;
    let scalar = |name: &str| pt::placeholder(name, Shape::scalar(), DType::F64);
    let (alpha, beta) = (scalar("alpha")?, scalar("beta")?);
    let (u_next, k_next) = stage_update(&u, &k, ((&alpha).into(), (&beta).into()), &dt, rhs)?;
    DictOfNamedArrays::new([("u", u_next), ("k", k_next)])
}

/// A whole time step as a DAG: the five stages of [`stage`] in order, each with its coefficients
/// ([`RK_ALPHA`], [`RK_BETA`]) as constants; the inputs of [`stage`] but `alpha` and `beta`,
/// outputs `u` and `k` after the last stage. Each stage computes what [`stage`] computes with the
/// same coefficients, in the same operations (a float64 number times an array is what a 0-d
/// float64 array times it is).
pub fn step(reference: &Reference) -> Result<DictOfNamedArrays> {
    let (mut u, mut k, dt) = state_inputs(reference, Dim::param("e"))?;
    for (&alpha, &beta) in RK_ALPHA.iter().zip(&RK_BETA) {
        (u, k) = stage_update(&u, &k, (alpha.into(), beta.into()), &dt, &|u| rhs(reference, u))?;
    }
    DictOfNamedArrays::new([("u", u), ("k", k)])
}

/// The inputs `u` and `k` (shape `(elements, np, np)`) and `dt` of a stage or step.
fn state_inputs(reference: &Reference, elements: Dim) -> Result<(Array, Array, Array)> {
    let np = Dim::new(reference.np() as i64);
    let shape = [elements, np.clone(), np];
    let u = pt::placeholder("u", shape.clone(), DType::F64)?.with_tagged_axis(0, ElementAxis)?;
    let k = pt::placeholder("k", shape, DType::F64)?.with_tagged_axis(0, ElementAxis)?;
    Ok((u, k, pt::placeholder("dt", Shape::scalar(), DType::F64)?))
}

/// One stage's `(u ← u + βk', k' ← αk + Δt·rhs(u))` for the coefficients `(α, β)` (0-d arrays or
/// numbers: float64 either way, so the same operations).
fn stage_update(
    u: &Array,
    k: &Array,
    (alpha, beta): (Operand, Operand),
    dt: &Array,
    rhs: &dyn Fn(&Array) -> Result<Array>,
) -> Result<(Array, Array)> {
    let k_next = pt::add(&pt::multiply(alpha, k)?, &pt::multiply(dt, &rhs(u)?)?)?;
    let u_next = pt::add(u, &pt::multiply(beta, &k_next)?)?;
    Ok((u_next, k_next))
}

/// Carpenter and Kennedy's (1994) five-stage fourth-order low-storage Runge–Kutta coefficients:
/// the `α` of each stage.
pub const RK_ALPHA: [f64; 5] = [
    0.0,
    -567301805773.0 / 1357537059087.0,
    -2404267990393.0 / 2016746695238.0,
    -3550918686646.0 / 2091501179385.0,
    -1275806237668.0 / 842570457699.0,
];
/// The `β` of each stage (see [`RK_ALPHA`]).
pub const RK_BETA: [f64; 5] = [
    1432997174477.0 / 9575080441755.0,
    5161836677717.0 / 13612068292357.0,
    1720146321549.0 / 2090206949498.0,
    3134564353537.0 / 4481467310338.0,
    2277821191437.0 / 14882151754819.0,
];

/// What one run of the solver measured.
pub struct RunResult {
    /// The L2 error against the exact solution at the final time.
    pub error: f64,
    /// Time steps taken.
    pub steps: usize,
    /// Degrees of freedom.
    pub dofs: usize,
    /// Wall time of the time loop.
    pub run_time: Duration,
    /// The nodal values at the final time.
    pub u: Array3<f64>,
}

/// What one run of a [`Solver`]'s program advances.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// One stage ([`stage`]), run five times a step with the stage's coefficients as inputs: on a
    /// backend that computes in host memory, each run writes into the arrays the run before read.
    Stage,
    /// A whole step ([`step`]), run once a step: on a backend with a device of its own, where a
    /// run only enqueues work, the host's cost of a run comes once a step.
    Step,
}

impl Unit {
    /// The program that runs: "stage" or "step".
    pub fn name(self) -> &'static str {
        match self {
            Unit::Stage => "stage",
            Unit::Step => "step",
        }
    }
}

/// The stage or step program of one order, compiled once for every mesh.
pub struct Solver {
    /// The reference element.
    pub reference: Reference,
    program: Box<dyn Program>,
    /// What one run of the program advances.
    pub unit: Unit,
    /// Time to build and compile the program.
    pub compile_time: Duration,
}

impl Solver {
    /// Builds and compiles the program of order `order` on `backend`: a whole step where the
    /// backend keeps arrays on a device of its own, else a stage (see [`Unit`]).
    pub fn new(backend: &dyn Backend, order: usize) -> Result<Solver> {
        let probe = backend.upload(&ArrayD::<f64>::zeros(ndarray::IxDyn(&[1])).view().into())?;
        let unit = if probe.storage().as_host().is_some() { Unit::Stage } else { Unit::Step };
        Solver::with_unit(backend, order, unit)
    }

    /// [`Solver::new`] with the program's [`Unit`] chosen by the caller.
    pub fn with_unit(backend: &dyn Backend, order: usize, unit: Unit) -> Result<Solver> {
        let reference = Reference::new(order);
        let start = Instant::now();
        let dag = match unit {
            Unit::Stage => stage(&reference)?,
            Unit::Step => step(&reference)?,
        };
        let program = backend.compile(&(&dag).into())?;
        Ok(Solver { reference, program, unit, compile_time: start.elapsed() })
    }

    /// The coefficients each run of the program takes as inputs, in order, for one step: one
    /// run per stage, or one run (taking none) for the whole step.
    fn runs_per_step(&self) -> Vec<Option<(f64, f64)>> {
        match self.unit {
            Unit::Stage => RK_ALPHA.iter().zip(&RK_BETA).map(|(&a, &b)| Some((a, b))).collect(),
            Unit::Step => vec![None],
        }
    }

    /// Advects the exact solution from `t = 0` to `t_final` on `mesh` with a time step of at most
    /// `cfl · h / ((n + 1)² (|aₓ| + |a_y|))`; `progress` is called after each step with the step
    /// number and the total.
    pub fn run(
        &self,
        mesh: &Mesh,
        t_final: f64,
        cfl: f64,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<RunResult> {
        let reference = &self.reference;
        let h = mesh.h();
        let (steps, dt) = time_steps(reference, mesh, t_final, cfl);
        let neighbours = mesh.neighbours().map(|a| a.into_dyn());
        let scalar = |v: f64| ArrayD::from_elem(ndarray::IxDyn(&[]), v);
        let (h_in, dt_in) = (scalar(h), scalar(dt));
        let mut u = mesh.interpolate(reference, exact(0.0)).into_dyn();
        let mut k: ArrayD<f64> = ArrayD::zeros(u.shape());
        let (mut u_next, mut k_next) = (u.clone(), k.clone());
        let runs: Vec<Option<(ArrayD<f64>, ArrayD<f64>)>> =
            self.runs_per_step().into_iter().map(|c| c.map(|(a, b)| (scalar(a), scalar(b)))).collect();
        let start = Instant::now();
        for step in 0..steps {
            for coefficients in &runs {
                let mut inputs = NamedViews::from([
                    ("u", u.view().into()),
                    ("k", k.view().into()),
                    ("h", h_in.view().into()),
                    ("dt", dt_in.view().into()),
                ]);
                if let Some((alpha, beta)) = coefficients {
                    inputs.insert("alpha", alpha.view().into());
                    inputs.insert("beta", beta.view().into());
                }
                for (side, name) in inflow_neighbours() {
                    inputs.insert(name, neighbours[side].view().into());
                }
                let mut outputs =
                    NamedViewsMut::from([("u", u_next.view_mut().into()), ("k", k_next.view_mut().into())]);
                self.program.run_into(&inputs, &mut outputs)?;
                std::mem::swap(&mut u, &mut u_next);
                std::mem::swap(&mut k, &mut k_next);
            }
            progress(step + 1, steps);
        }
        let run_time = start.elapsed();
        Ok(self.result(mesh, t_final, u, steps, run_time))
    }
}

impl Solver {
    /// [`Solver::run`] with the fields kept where `backend` keeps arrays. On a backend with a
    /// device of its own (wgpu) the initial fields, the neighbour tables and the scalars are
    /// uploaded once, every run (a step, or a stage: [`Unit`]) runs on the device (`run_device`:
    /// it only enqueues, so the host never waits between steps), and the final field is the one
    /// copy back (inside the timed run). A backend that computes in host memory runs
    /// [`Solver::run`] (outputs written in place).
    pub fn run_on(
        &self,
        backend: &dyn Backend,
        mesh: &Mesh,
        t_final: f64,
        cfl: f64,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<RunResult> {
        let reference = &self.reference;
        let u0 = mesh.interpolate(reference, exact(0.0)).into_dyn();
        let mut u = backend.upload(&u0.view().into())?;
        if u.storage().as_host().is_some() {
            return self.run(mesh, t_final, cfl, progress);
        }
        let (steps, dt) = time_steps(reference, mesh, t_final, cfl);
        let scalar = |v: f64| backend.upload(&ArrayD::from_elem(ndarray::IxDyn(&[]), v).view().into());
        let (h, dt) = (scalar(mesh.h())?, scalar(dt)?);
        let runs: Vec<Option<(DeviceArray, DeviceArray)>> = (self.runs_per_step().into_iter())
            .map(|c| c.map(|(a, b)| Ok((scalar(a)?, scalar(b)?))).transpose())
            .collect::<Result<_>>()?;
        let neighbours = mesh.neighbours();
        let inflow: Vec<(&str, DeviceArray)> = inflow_neighbours()
            .map(|(side, name)| Ok((name, backend.upload(&neighbours[side].view().into_dyn().into())?)))
            .collect::<Result<_>>()?;
        let mut k = backend.upload(&ArrayD::<f64>::zeros(u0.shape()).view().into())?;
        let start = Instant::now();
        for step in 0..steps {
            for coefficients in &runs {
                let mut inputs = NamedDeviceInputs::from([
                    ("u", DeviceInput::Device(&u)),
                    ("k", DeviceInput::Device(&k)),
                    ("h", DeviceInput::Device(&h)),
                    ("dt", DeviceInput::Device(&dt)),
                ]);
                if let Some((alpha, beta)) = coefficients {
                    inputs.insert("alpha", DeviceInput::Device(alpha));
                    inputs.insert("beta", DeviceInput::Device(beta));
                }
                for (name, table) in &inflow {
                    inputs.insert(name, DeviceInput::Device(table));
                }
                let mut outputs = self.program.run_device(&inputs)?;
                (u, k) = outputs.remove("u").zip(outputs.remove("k")).ok_or_else(|| pytato_core::Error::Internal {
                    backend: backend.name().into(),
                    message: "the program's outputs are not u and k".into(),
                })?;
            }
            progress(step + 1, steps);
        }
        let u = u.to_host()?;
        let run_time = start.elapsed();
        let u = u.into_array::<f64>().map_err(|_| pytato_core::Error::Internal {
            backend: backend.name().into(),
            message: "the stage's output u is not float64".into(),
        })?;
        Ok(self.result(mesh, t_final, u, steps, run_time))
    }

    /// The run's outcome: the final field `u` and its L2 error against the exact solution.
    fn result(&self, mesh: &Mesh, t_final: f64, u: ArrayD<f64>, steps: usize, run_time: Duration) -> RunResult {
        let reference = &self.reference;
        let u = u.into_dimensionality::<ndarray::Ix3>().expect("3 axes");
        let difference = &u - &mesh.interpolate(reference, exact(t_final));
        let error = mesh.l2_norm(reference, &difference);
        RunResult { error, steps, dofs: u.len(), run_time, u }
    }
}

/// The number of steps and the step to reach `t_final` with steps of at most
/// `cfl · h / ((n + 1)² (|aₓ| + |a_y|))`.
pub fn time_steps(reference: &Reference, mesh: &Mesh, t_final: f64, cfl: f64) -> (usize, f64) {
    let dt_max = max_time_step(reference, mesh, cfl);
    let steps = (t_final / dt_max).ceil().max(1.0) as usize;
    (steps, t_final / steps as f64)
}

/// The largest stable time step, `cfl · h / ((n + 1)² (|aₓ| + |a_y|))`.
pub fn max_time_step(reference: &Reference, mesh: &Mesh, cfl: f64) -> f64 {
    let np = reference.np() as f64;
    cfl * mesh.h() / (np * np * (VELOCITY.0.abs() + VELOCITY.1.abs()))
}

/// Observed orders `log2(e_k / e_2k)` of errors on meshes that halve `h` each time.
pub fn observed_orders(errors: &[f64]) -> Vec<f64> {
    errors.windows(2).map(|w| (w[0] / w[1]).log2()).collect()
}
