//! Where nodes were created: an opt-in [`CreatedAt`] tag with the file, line and column of the
//! user's code that built each node, shown in errors and drawings about the node.
//!
//! Off by default. Turn it on with [`record_creation_sites`] or the environment variable
//! `PYTATO_CREATED_AT=1`. While on, each frontend call (the functions of
//! `pytato-frontend`, the operators, the `Array` methods that build nodes) notes its caller
//! through `#[track_caller]` (no backtrace, no symbol lookup), and every node made during the
//! call is tagged with that place: the outermost frontend call wins, so the nodes a helper builds
//! internally carry the user's line, not the library's. The tag is ignored for equality
//! ([`Tag::ignored_for_equality`]): the same expression written on two lines is still one node.
//!
//! ```
//! use pytato_core::{created_at, DType};
//! use pytato_frontend as pt;
//! created_at::record_creation_sites(true);
//! let x = pt::placeholder("x", [3], DType::F64).unwrap();
//! let y = pt::sin(&x).unwrap();
//! let site = y.tags().of_type::<created_at::CreatedAt>().next().expect("recorded");
//! assert!(site.file.ends_with(".rs") && site.line > 0);
//! assert!(y.summary().contains("created at"));
//! created_at::record_creation_sites(false);
//! ```

use std::cell::Cell;
use std::fmt;
use std::panic::Location;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::tags::Tag;

/// The place in the user's code where a node was built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CreatedAt {
    /// The source file, as the compiler names it.
    pub file: &'static str,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
}

impl Tag for CreatedAt {
    fn unique_family(&self) -> Option<&'static str> {
        Some("CreatedAt")
    }
    fn ignored_for_equality(&self) -> bool {
        true
    }
}

impl fmt::Display for CreatedAt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// 0: not decided yet (the environment decides on first use), 1: off, 2: on.
static RECORDING: AtomicU8 = AtomicU8::new(0);

thread_local! {
    /// The caller of the outermost frontend call running on this thread, while recording.
    static CURRENT: Cell<Option<&'static Location<'static>>> = const { Cell::new(None) };
}

/// Turns the recording of creation sites on or off for the whole process.
pub fn record_creation_sites(on: bool) {
    RECORDING.store(if on { 2 } else { 1 }, Ordering::Relaxed);
}

/// Whether creation sites are being recorded.
pub fn recording() -> bool {
    match RECORDING.load(Ordering::Relaxed) {
        0 => {
            let on = std::env::var("PYTATO_CREATED_AT").is_ok_and(|v| !v.is_empty() && v != "0");
            // Unless a call of `record_creation_sites` came first.
            let _ = RECORDING.compare_exchange(0, if on { 2 } else { 1 }, Ordering::Relaxed, Ordering::Relaxed);
            RECORDING.load(Ordering::Relaxed) == 2
        }
        state => state == 2,
    }
}

/// Marks the start of a frontend call (every constructor in `pytato-core` and `pytato-frontend`
/// begins with it, under `#[track_caller]`): while the returned guard lives, nodes made on this
/// thread are tagged with the caller's place (unless an outer call already set one).
#[track_caller]
pub fn enter() -> Option<Site> {
    if !recording() {
        return None;
    }
    let caller = Location::caller();
    CURRENT.with(|c| {
        if c.get().is_some() {
            return None;
        }
        c.set(Some(caller));
        Some(Site)
    })
}

/// Ends the frontend call's recording when dropped.
pub struct Site;

impl Drop for Site {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(None));
    }
}

/// The creation site for a node made now, if recording and inside a frontend call.
pub(crate) fn current() -> Option<CreatedAt> {
    if RECORDING.load(Ordering::Relaxed) != 2 {
        return None;
    }
    CURRENT.with(|c| c.get()).map(|l| CreatedAt { file: l.file(), line: l.line(), column: l.column() })
}
