//! A lint of the WGSL the wgpu backend generates for every conformance case: nothing a GPU
//! driver may compute its own way reaches a value numpy defines.
//!
//! Vulkan and WGSL leave drivers freedoms a CPU does not take (lavapipe happens not to take them,
//! real GPUs do): flushing float32 subnormals, returning either zero from `max(-0.0, 0.0)`,
//! loose `round` and `ldexp` near the ends of the range. The code generator avoids them by
//! construction; this test holds it to that, on the shaders themselves (parsed and typed by
//! naga), so that the next built-in slipping in fails here rather than on a GPU:
//!
//! - no float32 value (where the adapter has float64, float32 is held exactly in float64 and
//!   stored as bits);
//! - on floats, no built-in but `sqrt`, `floor`, `ceil` and `trunc`, which are exact (`abs`,
//!   `max`, `min`, `round`, `ldexp`, `sign`, `fma`, `exp`, ... are the library's own exact
//!   constructions instead), but `fma` in tiled matrix products, which sum in BLAS's order with
//!   fused multiply-adds (fused where the driver fuses them: products agree with the loops to
//!   rounding, as numpy's BLAS and the Cranelift backend's GEMM do, not bit for bit).

use naga::{Expression, MathFunction, ScalarKind, TypeInner};
use pytato_backend_wgpu::Wgpu;

/// Float built-ins whose results are exact on every conforming driver.
const EXACT: [MathFunction; 4] = [MathFunction::Sqrt, MathFunction::Floor, MathFunction::Ceil, MathFunction::Trunc];

fn is_float32(inner: &TypeInner) -> bool {
    match inner {
        TypeInner::Scalar(s) | TypeInner::Vector { scalar: s, .. } => s.kind == ScalarKind::Float && s.width == 4,
        _ => false,
    }
}

fn is_float(inner: &TypeInner) -> bool {
    match inner {
        TypeInner::Scalar(s) | TypeInner::Vector { scalar: s, .. } => s.kind == ScalarKind::Float,
        _ => false,
    }
}

/// What the lint finds wrong with one shader.
fn lint(source: &str) -> Vec<String> {
    let module = naga::front::wgsl::parse_str(source).expect("the backend's shaders parse");
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
        .validate(&module)
        .expect("the backend's shaders validate");
    // The tiled product's shader (`backend-wgpu/src/wgsl/tiled.rs`) declares its operand blocks.
    let tiled_product = module.global_variables.iter().any(|(_, v)| v.name.as_deref() == Some("tile_a"));
    let mut found = Vec::new();
    for (_, ty) in module.types.iter() {
        if is_float32(&ty.inner) {
            found.push(format!("a float32 type {:?}", ty.inner));
        }
    }
    let functions = module.functions.iter().map(|(h, f)| (f.name.clone().unwrap_or_default(), f, &info[h])).chain(
        module.entry_points.iter().enumerate().map(|(k, e)| (e.name.clone(), &e.function, info.get_entry_point(k))),
    );
    for (name, function, function_info) in functions {
        for (handle, expression) in function.expressions.iter() {
            if let Expression::Math { fun, arg, .. } = expression {
                let ty = function_info[*arg].ty.inner_with(&module.types);
                let allowed = EXACT.contains(fun) || (tiled_product && *fun == MathFunction::Fma);
                if is_float(ty) && !allowed {
                    found.push(format!("{fun:?} on a float in {name} ({handle:?})"));
                }
            }
        }
    }
    found
}

#[test]
fn generated_shaders_call_no_builtin_a_driver_computes_its_own_way() {
    let wgpu = match Wgpu::new() {
        Ok(w) if w.has_f64() => w,
        Ok(_) => return eprintln!("skipped: the adapter lacks float64, where float32 is the driver's own"),
        Err(e) => {
            if std::env::var(pytato_backend_wgpu::REQUIRE_VAR).is_ok_and(|v| !v.is_empty() && v != "0") {
                panic!("{e}");
            }
            return eprintln!("skipped: no wgpu adapter: {e}");
        }
    };
    // The tiled products are linted too: they are what GPUs (not lavapipe) run.
    let wgpu = wgpu.with_tiled_products(true);
    let mut problems = Vec::new();
    let mut shaders = 0;
    for case in pytato_conformance::load_cases() {
        let Ok(outputs) = pytato_conformance::build_outputs(&case) else { continue };
        let Ok(sources) = wgpu.wgsl(&outputs) else { continue };
        for source in sources {
            shaders += 1;
            for problem in lint(&source) {
                problems.push(format!("{}: {problem}", case.name));
            }
        }
    }
    assert!(shaders > 500, "only {shaders} shaders linted");
    problems.sort();
    problems.dedup();
    assert!(problems.is_empty(), "{} problems, the first: {:#?}", problems.len(), &problems[..problems.len().min(30)]);
}

#[test]
fn the_lint_finds_what_it_forbids() {
    let source = "fn f(x: f64, y: f64) -> f64 { return max(abs(x), y); }
fn g(x: f32) -> f32 { return x; }
fn h(x: i32) -> i32 { return abs(x); }
@compute @workgroup_size(1) fn main() { let k = f(1.0lf, 2.0lf); let r = sqrt(k); }";
    let found = lint(source);
    assert!(found.iter().any(|p| p.starts_with("Max on a float in f")), "{found:?}");
    assert!(found.iter().any(|p| p.starts_with("Abs on a float in f")), "{found:?}");
    assert!(found.iter().any(|p| p.starts_with("a float32 type")), "{found:?}");
    assert!(!found.iter().any(|p| p.contains(" in h ") || p.starts_with("Sqrt")), "{found:?}");
    // `fma` only in a tiled product's shader.
    let product = |tiled: bool| {
        let blocks = if tiled { "var<workgroup> tile_a: array<f64, 4>;\n" } else { "" };
        format!("{blocks}@compute @workgroup_size(1) fn main() {{ let a = 1.0lf; let r = fma(a, a, a); }}")
    };
    assert!(lint(&product(false)).iter().any(|p| p.starts_with("Fma on a float in main")));
    assert!(lint(&product(true)).is_empty(), "{:?}", lint(&product(true)));
}
