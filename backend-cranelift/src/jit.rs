//! Compiling a kernel program to machine code: one Cranelift JIT module per program, one
//! function per launch group of kernels (module `crate::groups`).

use std::sync::{Mutex, OnceLock};

use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::ir;
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::FunctionBuilderContext;
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, Module, ModuleReloc, default_libcall_names};
use pytato_core::{Error, Result};
use pytato_transform::kernel::{KernelProgram, dump_requested};
use rayon::prelude::*;

use crate::codegen::{kernel_signature, translate};

/// A compiled kernel; see [`crate::codegen`] for the ABI.
pub(crate) type KernelFn = unsafe extern "C" fn(*const *mut u8, *const i64, i64, i64, *mut i64, *mut u8) -> i32;

/// The compiled function of one launch group.
#[derive(Clone, Copy)]
pub(crate) struct KernelFunction {
    /// Its machine code.
    pub(crate) code: KernelFn,
    /// Whether it takes scratch memory (`crate::codegen::SCRATCH_BYTES`; else its `scratch`
    /// argument may be null).
    pub(crate) scratch: bool,
}

/// The machine code of one program. The code lives as long as this value.
pub(crate) struct JitCode {
    /// One entry per launch group of the program, in order.
    pub(crate) functions: Vec<KernelFunction>,
    /// Owns the executable memory; behind a mutex only so that `JitCode` is `Sync`.
    module: Mutex<Option<ModuleOwner>>,
}

/// The JIT module, kept only to free its memory when the program is dropped.
struct ModuleOwner(JITModule);

// SAFETY: after `finalize_definitions` the module is never used again except by `free_memory` in
// `JitCode::drop`, which has exclusive access. What makes `JITModule` `!Send` is its boxed memory
// provider trait object; the default provider (the one used here) owns plain page allocations
// with no thread affinity, so freeing them from another thread is sound.
unsafe impl Send for ModuleOwner {}

impl Drop for JitCode {
    fn drop(&mut self) {
        if let Some(ModuleOwner(module)) = self.module.get_mut().ok().and_then(Option::take) {
            // SAFETY: the function pointers in `self.functions` are the only references into the
            // module's memory, and they are dropped with `self`: nothing can call them afterwards.
            unsafe { module.free_memory() };
        }
    }
}

fn jit_error(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Internal { backend: "cranelift".into(), message: format!("{what}: {e}") }
}

/// The host's instruction set, with the optimiser on; built once.
pub(crate) fn isa() -> Result<OwnedTargetIsa> {
    static ISA: OnceLock<std::result::Result<OwnedTargetIsa, String>> = OnceLock::new();
    ISA.get_or_init(|| {
        let mut flags = settings::builder();
        // A frame larger than a page touches its pages in order, so a stack too small for it
        // ends at the guard page, not in other memory (kernels keep large scratch off the stack,
        // see `crate::codegen`'s ABI; this guards what remains).
        let settings = [
            ("opt_level", "speed"),
            ("use_colocated_libcalls", "false"),
            ("is_pic", "false"),
            ("enable_probestack", "true"),
            ("probestack_strategy", "inline"),
        ];
        for (name, value) in settings {
            flags.set(name, value).map_err(|e| e.to_string())?;
        }
        let builder = cranelift_native::builder().map_err(|e| e.to_string())?;
        builder.finish(settings::Flags::new(flags)).map_err(|e| e.to_string())
    })
    .clone()
    .map_err(|e| Error::Unsupported { backend: "cranelift".into(), reason: format!("this host: {e}") })
}

/// One function's machine code, compiled apart from the module (see [`compile`]).
struct Compiled {
    bytes: Vec<u8>,
    alignment: u64,
    relocs: Vec<ModuleReloc>,
    /// The Cranelift IR and the machine code, when `PYTATO_DUMP=clif` and `PYTATO_DUMP=asm` ask
    /// for them.
    clif: Option<String>,
    /// Whether the function takes scratch memory.
    scratch: bool,
}

/// Compiles every launch group of `program` (`groups`, kernel indices, see `crate::groups`) into
/// one function: translation and code generation of the functions in parallel on rayon's pool
/// (each is independent), then their code placed in one module. `PYTATO_DUMP=clif` prints each
/// function's IR and `PYTATO_DUMP=asm` its machine code (after Cranelift's optimizations), in
/// order. `simd` allows vector loops.
pub(crate) fn compile(program: &KernelProgram, groups: &[Vec<usize>], simd: bool) -> Result<JitCode> {
    let isa = isa()?;
    let call_conv = isa.default_call_conv();
    let frontend = isa.frontend_config();
    let mut module = JITModule::new(JITBuilder::with_isa(isa.clone(), default_libcall_names()));
    let (dump, dump_asm) = (dump_requested("clif"), dump_requested("asm"));
    let names = program.buffer_ids();
    let ids = groups
        .iter()
        .map(|group| {
            let name = group.iter().map(|k| format!("kernel{k}")).collect::<Vec<_>>().join("_");
            module
                .declare_function(&name, Linkage::Local, &kernel_signature(call_conv))
                .map_err(|e| jit_error("declaring a kernel", e))
        })
        .collect::<Result<Vec<_>>>()?;
    let compiled: Vec<Compiled> = groups
        .par_iter()
        .zip(&ids)
        .map_init(FunctionBuilderContext::new, |fctx, (group, &id)| {
            let mut func =
                ir::Function::with_name_signature(ir::UserFuncName::user(0, id.as_u32()), kernel_signature(call_conv));
            let kernels: Vec<_> = group.iter().map(|&k| &program.kernels[k]).collect();
            let scratch = translate(program, &names, &kernels, &mut func, fctx, frontend, simd)?;
            let clif = dump.then(|| func.display().to_string());
            let mut ctx = cranelift_codegen::Context::for_function(func);
            ctx.set_disasm(dump_asm);
            ctx.compile(&*isa, &mut ControlPlane::default())
                .map_err(|e| jit_error(&format!("compiling kernels {group:?}"), format!("{:?}", e.inner)))?;
            let code = ctx.compiled_code().expect("just compiled");
            let clif = match (clif, &code.vcode) {
                (Some(clif), Some(asm)) => Some(format!("{clif}\n; machine code\n{asm}")),
                (None, Some(asm)) => Some(format!("; machine code\n{asm}")),
                (clif, None) => clif,
            };
            let alignment =
                (code.buffer.alignment as u64).max(isa.function_alignment().minimum as u64).max(isa.symbol_alignment());
            let relocs = code.buffer.relocs().iter().map(|r| ModuleReloc::from_mach_reloc(r, &ctx.func, id)).collect();
            Ok(Compiled { bytes: code.code_buffer().to_vec(), alignment, relocs, clif, scratch })
        })
        .collect::<Result<_>>()?;
    for ((code, &id), group) in compiled.iter().zip(&ids).zip(groups) {
        if let Some(clif) = &code.clif {
            let what = if let [k] = group.as_slice() { format!("kernel {k}") } else { format!("kernels {group:?}") };
            eprintln!("; {what} of {}\n{clif}", program.kernels.len());
        }
        module
            .define_function_bytes(id, code.alignment, &code.bytes, &code.relocs)
            .map_err(|e| jit_error(&format!("placing kernels {group:?}"), e))?;
    }
    module.finalize_definitions().map_err(|e| jit_error("linking", e))?;
    let functions = ids
        .into_iter()
        .zip(&compiled)
        .map(|(id, compiled)| {
            let code = module.get_finalized_function(id);
            // SAFETY: `code` is the finalized machine code of a function compiled with
            // `kernel_signature`, which is the C ABI `KernelFn` spells out (six 64-bit integer
            // arguments, pointers passed as integers, a 32-bit result).
            let code = unsafe { std::mem::transmute::<*const u8, KernelFn>(code) };
            KernelFunction { code, scratch: compiled.scratch }
        })
        .collect();
    Ok(JitCode { functions, module: Mutex::new(Some(ModuleOwner(module))) })
}
