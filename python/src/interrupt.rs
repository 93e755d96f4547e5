//! Ctrl-C during a run: `KeyboardInterrupt`, as in a numpy loop.
//!
//! Runs release the GIL, and Python handles a signal only when its main thread runs bytecode
//! again, so without help a long run could not be stopped. The package's `SIGINT` handler
//! ([`_install_interrupt_handler`], installed on import only where Python's own handler is in
//! place, so that `SIG_IGN`, `SIG_DFL` and handlers the user sets keep their meaning) calls
//! Python's and then sets the library's interrupt request (`pytato::interrupt`), which every run
//! checks. [`interruptible`] runs a run or a wait: a Ctrl-C Python has not handled yet raises
//! before it starts, and a request it has handled is withdrawn. A run the request stopped
//! (`pytato::Error::Interrupted`, wherever it is converted) raises `KeyboardInterrupt`
//! ([`keyboard_interrupt`]), which is not a `PytatoError`: `except Exception` does not catch it.

use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;

use crate::errors::{Result, lib};

/// Installs the `SIGINT` handler that runs the handler in place (Python's) and then sets the
/// library's interrupt request. Called once, by the package on import, where
/// `signal.getsignal(SIGINT)` is a Python handler.
#[pyfunction]
pub(crate) fn _install_interrupt_handler() -> Result<()> {
    #[cfg(unix)]
    signal_hook::flag::register(signal_hook::consts::SIGINT, pytato::interrupt::flag())
        .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("installing the SIGINT handler: {e}")))?;
    Ok(())
}

/// Waits until the devices this process used have finished its work (registered with `atexit`
/// by the package: a run stopped by Ctrl-C leaves its work running on the GPU; see
/// `pytato::wgpu::wait_until_idle`). Another Ctrl-C ends the wait.
#[pyfunction]
pub(crate) fn _wait_until_idle(py: Python<'_>) -> Result<()> {
    #[cfg(feature = "wgpu")]
    return interruptible(py, pytato::wgpu::wait_until_idle);
    #[cfg(not(feature = "wgpu"))]
    {
        let _ = py;
        Ok(())
    }
}

/// Runs `run` without the GIL, so that Ctrl-C can stop it (module docs).
pub(crate) fn interruptible<T: Send>(py: Python<'_>, run: impl Send + FnOnce() -> pytato::Result<T>) -> Result<T> {
    py.check_signals()?;
    pytato::interrupt::clear();
    lib(py.detach(run))
}

/// The exception for a run that stopped at an interrupt request: the one Python's `SIGINT`
/// handler raises, where the request came from Ctrl-C and the handler has not run yet, else a
/// `KeyboardInterrupt` with the library's message.
pub(crate) fn keyboard_interrupt(message: String) -> PyErr {
    Python::attach(|py| py.check_signals().err()).unwrap_or_else(|| PyKeyboardInterrupt::new_err(message))
}
