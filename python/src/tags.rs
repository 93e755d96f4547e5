//! Tags between Python and the library.
//!
//! pytato's tags are Python objects (frozen dataclasses deriving from `pytato_rs.tags.Tag`).
//! The tags the library itself acts on (`ImplStored`, `ImplInlined`, `Named`, `PrefixNamed`,
//! `CountNamed`) become the library's own tags, so every backend honours them; any other tag is
//! kept as the Python object ([`PyTag`]), compared with `==` and hashed with `hash()`, which is
//! what tag unification and CSE need.

use std::collections::BTreeMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyFrozenSet, PyString, PyTuple, PyType};
use pytato::tags::{
    AssumeNonNegative, CountNamed, ExpandedDimsReshape, ImplInlined, ImplStored, Named, PrefixNamed, TagRef,
};
use pytato::transform::unify_tags::IgnoredForPropagation;
use pytato::{Tag, TagSet};

use crate::errors::{Result, type_error};

/// The Python module that defines the tag classes.
const TAGS_MODULE: &str = "pytato_rs.tags";

/// A tag that is a Python object.
pub(crate) struct PyTag {
    object: Py<PyAny>,
    /// `hash(object)`, taken once: hashing must not need the interpreter.
    hash: isize,
    /// For an instance of a `UniqueTag` subclass: the family (the class deriving directly from
    /// `UniqueTag`), of which a node may carry one tag.
    family: Option<&'static str>,
    /// An instance of a class named `IgnoredForEqualityTag` (ours or pytato's): not part of what
    /// the node is (where it was created), left out of equality and hashing.
    ignored: bool,
}

impl PartialEq for PyTag {
    fn eq(&self, other: &PyTag) -> bool {
        self.hash == other.hash
            && (self.object.is(&other.object)
                || Python::attach(|py| self.object.bind(py).eq(other.object.bind(py)).unwrap_or(false)))
    }
}
impl Eq for PyTag {}

impl Hash for PyTag {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.hash.hash(state);
    }
}

/// A Python tag shows as `str(tag)` (its `repr` unless its class says otherwise, as
/// `CreatedAt` does to show the line that built the node).
impl fmt::Debug for PyTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = Python::attach(|py| self.object.bind(py).str().map(|r| r.to_string()));
        f.write_str(&text.unwrap_or_else(|_| "<python tag>".into()))
    }
}

impl Tag for PyTag {
    fn unique_family(&self) -> Option<&'static str> {
        self.family
    }

    fn ignored_for_equality(&self) -> bool {
        self.ignored
    }
}

/// Family names live as long as the process (a tag's family is `&'static str`); there is one
/// per `UniqueTag` subclass, so this holds a handful of strings.
fn intern(name: String) -> &'static str {
    static NAMES: Mutex<BTreeMap<String, &'static str>> = Mutex::new(BTreeMap::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    names.entry(name.clone()).or_insert_with(|| Box::leak(name.into_boxed_str()))
}

/// The unique family of a Python tag: the class in its MRO that derives directly from a class
/// named `UniqueTag` (ours, or pytools' in code ported from pytato).
fn unique_family(object: &Bound<'_, PyAny>) -> Result<Option<&'static str>> {
    for class in object.get_type().getattr("__mro__")?.try_iter()? {
        let class = class?.cast_into::<PyType>()?;
        let mut bases = class.getattr("__bases__")?.try_iter()?;
        let derives_directly = bases.any(|base| {
            base.and_then(|b| b.getattr("__name__")?.extract::<String>()).is_ok_and(|name| name == "UniqueTag")
        });
        if derives_directly {
            return Ok(Some(intern(class.fully_qualified_name()?.to_string())));
        }
    }
    Ok(None)
}

/// One Python tag as the library's tag.
pub(crate) fn tag_from_py(object: &Bound<'_, PyAny>) -> Result<TagRef> {
    if object.is_instance_of::<PyString>() || object.is_instance_of::<PyBytes>() {
        return Err(type_error(format!("a tag must be a Tag object, not the string {object}")));
    }
    let class = object.get_type();
    if class.module()?.to_str()? == TAGS_MODULE {
        let text = |field: &str| -> Result<String> { object.getattr(field)?.extract() };
        match class.qualname()?.to_str()? {
            "ImplStored" => return Ok(TagRef::new(ImplStored)),
            "ImplInlined" => return Ok(TagRef::new(ImplInlined)),
            "Named" => return Ok(TagRef::new(Named(text("name")?))),
            "PrefixNamed" => return Ok(TagRef::new(PrefixNamed(text("prefix")?))),
            "CountNamed" => return Ok(TagRef::new(CountNamed(text("name")?))),
            "AxisIgnoredForPropagationTag" => return Ok(TagRef::new(IgnoredForPropagation)),
            "AssumeNonNegative" => return Ok(TagRef::new(AssumeNonNegative)),
            "ExpandedDimsReshape" => {
                return Ok(TagRef::new(ExpandedDimsReshape(object.getattr("new_dims")?.extract()?)));
            }
            _ => {}
        }
    }
    let hash =
        object.hash().map_err(|e| type_error(format!("a tag must be hashable (a frozen dataclass, say): {e}")))?;
    let ignored = object.get_type().getattr("__mro__")?.try_iter()?.any(|class| {
        class.and_then(|c| c.getattr("__name__")?.extract::<String>()).is_ok_and(|n| n == "IgnoredForEqualityTag")
    });
    Ok(TagRef::new(PyTag { object: object.clone().unbind(), hash, family: unique_family(object)?, ignored }))
}

/// Tags given as pytato takes them: one tag, an iterable of tags, or `None`. A tag is any
/// hashable object other than a string (`pytato_rs.tags.Tag` subclasses, or pytools' tags in
/// code ported from pytato).
pub(crate) fn tags_from_py(tags: Option<&Bound<'_, PyAny>>) -> Result<Vec<TagRef>> {
    let Some(tags) = tags.filter(|t| !t.is_none()) else { return Ok(Vec::new()) };
    let tag_class = tags.py().import(TAGS_MODULE)?.getattr("Tag")?;
    if tags.is_instance(&tag_class)? {
        return Ok(vec![tag_from_py(tags)?]);
    }
    match tags.try_iter() {
        Ok(items) if !tags.is_instance_of::<PyString>() => items.map(|tag| tag_from_py(&tag?)).collect(),
        _ => Ok(vec![tag_from_py(tags)?]),
    }
}

/// One library tag as a Python object.
pub(crate) fn tag_to_py<'py>(py: Python<'py>, tag: &TagRef) -> Result<Bound<'py, PyAny>> {
    if let Some(t) = tag.downcast_ref::<PyTag>() {
        return Ok(t.object.bind(py).clone());
    }
    let module = py.import(TAGS_MODULE)?;
    if tag.downcast_ref::<ImplStored>().is_some() {
        return module.getattr("ImplStored")?.call0();
    }
    if tag.downcast_ref::<ImplInlined>().is_some() {
        return module.getattr("ImplInlined")?.call0();
    }
    if let Some(Named(name)) = tag.downcast_ref::<Named>() {
        return module.getattr("Named")?.call1((name,));
    }
    if let Some(PrefixNamed(prefix)) = tag.downcast_ref::<PrefixNamed>() {
        return module.getattr("PrefixNamed")?.call1((prefix,));
    }
    if let Some(CountNamed(name)) = tag.downcast_ref::<CountNamed>() {
        return module.getattr("CountNamed")?.call1((name,));
    }
    if tag.downcast_ref::<IgnoredForPropagation>().is_some() {
        return module.getattr("AxisIgnoredForPropagationTag")?.call0();
    }
    if tag.downcast_ref::<AssumeNonNegative>().is_some() {
        return module.getattr("AssumeNonNegative")?.call0();
    }
    if let Some(ExpandedDimsReshape(new_dims)) = tag.downcast_ref::<ExpandedDimsReshape>() {
        return module.getattr("ExpandedDimsReshape")?.call1((PyTuple::new(py, new_dims)?,));
    }
    module.getattr("LibraryTag")?.call1((format!("{:?}", tag.get()),))
}

/// A tag set as a Python `frozenset`, leaving out tags that are not part of what a node is
/// (where it was created, and the like).
pub(crate) fn tag_set_to_py<'py>(py: Python<'py>, tags: &TagSet) -> Result<Bound<'py, PyFrozenSet>> {
    let objects = tags
        .iter()
        .filter(|t| !t.get().ignored_for_equality())
        .map(|t| tag_to_py(py, t))
        .collect::<Result<Vec<_>>>()?;
    PyFrozenSet::new(py, &objects)
}

/// The tags of `tags` left out of equality (where nodes were created), as a Python `frozenset`.
pub(crate) fn non_equality_tags_to_py<'py>(py: Python<'py>, tags: &TagSet) -> Result<Bound<'py, PyFrozenSet>> {
    let objects =
        tags.iter().filter(|t| t.get().ignored_for_equality()).map(|t| tag_to_py(py, t)).collect::<Result<Vec<_>>>()?;
    PyFrozenSet::new(py, &objects)
}

/// Whether the nodes built from Python get a `CreatedAt` tag with the Python traceback
/// (`pytato_rs.set_traceback_tag_enabled`).
static TRACEBACK_TAGS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Turns `CreatedAt` tags on nodes built from Python on or off.
#[pyfunction]
pub(crate) fn _set_traceback_tags(enabled: bool) {
    TRACEBACK_TAGS.store(enabled, std::sync::atomic::Ordering::Relaxed);
}

/// `array` with a `CreatedAt` tag holding the Python traceback of the call that built it, where
/// traceback tags are on (and it has none yet: the outermost call made it).
pub(crate) fn with_traceback_tag(array: pytato::Array) -> Result<pytato::Array> {
    if !TRACEBACK_TAGS.load(std::sync::atomic::Ordering::Relaxed) {
        return Ok(array);
    }
    Python::attach(|py| {
        if array.tags().iter().any(|t| t.get().ignored_for_equality()) {
            return Ok(array);
        }
        let tag = py.import(TAGS_MODULE)?.getattr("_created_here")?.call0()?;
        crate::errors::lib(array.tagged_with([tag_from_py(&tag)?]))
    })
}

/// Whether `tag` is a Python tag that is an instance of `class` (any Python tag where `class` is
/// `None`). The library's own tags (`ImplStored`, `Named`, ...) are not axis tags: never.
pub(crate) fn is_instance(tag: &TagRef, class: Option<&Bound<'_, PyAny>>) -> Result<bool> {
    match (tag.downcast_ref::<PyTag>(), class) {
        (Some(_), None) => Ok(true),
        (Some(t), Some(class)) => Ok(t.object.bind(class.py()).is_instance(class)?),
        (None, _) => Ok(false),
    }
}
