//! Tags: metadata attached to arrays, axes and reduction descriptors.
//!
//! A tag is any user type that is `Debug + Eq + Hash + Send + Sync + 'static` and implements [`Tag`]
//! (usually with an empty `impl`). Tags must not change results: a computation gives the same values
//! with all tags stripped. They carry information for transformations and code generation, and they
//! take part in structural equality.
//!
//! Tags are never propagated implicitly (seed: "Metadata Propagation"); the transformations crate
//! offers `unify_axes_tags` as the explicit tool.
//!
//! ```
//! use pytato_core::tags::{Tag, TagSet};
//!
//! #[derive(Debug, PartialEq, Eq, Hash)]
//! struct ElementAxis;
//! impl Tag for ElementAxis {}
//!
//! let tags = TagSet::new().with(ElementAxis).unwrap();
//! assert!(tags.contains(&ElementAxis));
//! assert_eq!(tags.of_type::<ElementAxis>().count(), 1);
//! ```

use std::any::Any;
use std::fmt;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use crate::error::{Error, Result};

/// A piece of metadata. Implement it with an empty `impl` block; override [`Tag::unique_family`] for a
/// tag of which a node may carry at most one member (like pytato's `UniqueTag`).
pub trait Tag: fmt::Debug + Send + Sync + DynTag + 'static {
    /// The family this tag is unique within, if any: two tags of one family on one node are an error.
    fn unique_family(&self) -> Option<&'static str> {
        None
    }

    /// `true` for a tag that records something about a node without being part of what the node
    /// is (upstream's `IgnoredForEqualityTag`): equality and hashing of arrays skip it, so two
    /// nodes that differ only in such tags are one node to CSE and to program caches. Example:
    /// [`crate::created_at::CreatedAt`].
    fn ignored_for_equality(&self) -> bool {
        false
    }
}

/// Object-safe equality and hashing for tags; implemented for every `Eq + Hash` type.
pub trait DynTag: Any {
    /// `self == other` when both are of the same type.
    fn dyn_eq(&self, other: &dyn Any) -> bool;
    /// A stable hash of the value and its type.
    fn dyn_hash(&self) -> u64;
    /// Upcast for downcasting.
    fn as_any(&self) -> &dyn Any;
}

impl<T: Any + Eq + Hash> DynTag for T {
    fn dyn_eq(&self, other: &dyn Any) -> bool {
        other.downcast_ref::<T>() == Some(self)
    }
    fn dyn_hash(&self) -> u64 {
        let mut h = DefaultHasher::new();
        std::any::type_name::<T>().hash(&mut h);
        self.hash(&mut h);
        h.finish()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A shared, immutable tag.
#[derive(Clone)]
pub struct TagRef(Arc<dyn Tag>);

impl TagRef {
    /// Wraps a tag.
    pub fn new(tag: impl Tag) -> TagRef {
        TagRef(Arc::new(tag))
    }

    /// The tag, for downcasting with [`TagRef::downcast_ref`].
    pub fn get(&self) -> &dyn Tag {
        &*self.0
    }

    /// The tag as `T`, if it is one.
    pub fn downcast_ref<T: Tag>(&self) -> Option<&T> {
        self.0.as_any().downcast_ref::<T>()
    }
}

impl PartialEq for TagRef {
    fn eq(&self, other: &TagRef) -> bool {
        self.0.dyn_eq(other.0.as_any())
    }
}
impl Eq for TagRef {}

impl Hash for TagRef {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.dyn_hash());
    }
}

impl fmt::Debug for TagRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

/// A set of tags. Order-independent in equality and hashing; cheap to clone.
#[derive(Clone, Default)]
pub struct TagSet {
    /// Sorted by hash so that equal sets are stored identically; no duplicates. `None` when empty:
    /// most nodes and axes have no tags, and an empty set then costs no allocation.
    tags: Option<Arc<[(u64, TagRef)]>>,
}

impl TagSet {
    fn from_vec(tags: Vec<(u64, TagRef)>) -> TagSet {
        TagSet { tags: (!tags.is_empty()).then(|| tags.into()) }
    }

    fn entries(&self) -> &[(u64, TagRef)] {
        self.tags.as_deref().unwrap_or(&[])
    }
}

impl TagSet {
    /// The empty set.
    pub const fn new() -> TagSet {
        TagSet { tags: None }
    }

    /// `true` when there are no tags.
    pub fn is_empty(&self) -> bool {
        self.entries().is_empty()
    }

    /// Number of tags.
    pub fn len(&self) -> usize {
        self.entries().len()
    }

    /// The tags.
    pub fn iter(&self) -> impl Iterator<Item = &TagRef> {
        self.entries().iter().map(|(_, t)| t)
    }

    /// `true` when the set holds a tag equal to `tag`.
    pub fn contains<T: Tag + Eq>(&self, tag: &T) -> bool {
        self.iter().any(|t| t.downcast_ref::<T>() == Some(tag))
    }

    /// The tags of type `T`.
    pub fn of_type<T: Tag>(&self) -> impl Iterator<Item = &T> {
        self.iter().filter_map(TagRef::downcast_ref::<T>)
    }

    /// The set with `tag` added; an error if it conflicts with a tag of the same unique family.
    pub fn with(&self, tag: impl Tag) -> Result<TagSet> {
        self.with_ref(TagRef::new(tag))
    }

    /// As [`TagSet::with`], for an already-shared tag.
    pub fn with_ref(&self, tag: TagRef) -> Result<TagSet> {
        self.union(std::iter::once(tag))
    }

    /// The union of this set and `tags`, checking unique families.
    pub fn union(&self, tags: impl IntoIterator<Item = TagRef>) -> Result<TagSet> {
        let mut all: Vec<(u64, TagRef)> = self.entries().to_vec();
        for tag in tags {
            if all.iter().any(|(_, t)| *t == tag) {
                continue;
            }
            if let Some(family) = tag.get().unique_family()
                && let Some((_, existing)) = all.iter().find(|(_, t)| t.get().unique_family() == Some(family))
            {
                return Err(Error::UniqueTagConflict {
                    family: family.to_string(),
                    existing: format!("{existing:?}"),
                    new: format!("{tag:?}"),
                });
            }
            all.push((tag.0.dyn_hash(), tag));
        }
        all.sort_by_key(|(h, _)| *h);
        Ok(TagSet::from_vec(all))
    }

    /// The set without the tags equal to any in `remove`.
    pub fn without(&self, remove: &TagSet) -> TagSet {
        let kept: Vec<_> = self.entries().iter().filter(|(_, t)| !remove.iter().any(|r| r == t)).cloned().collect();
        TagSet::from_vec(kept)
    }

    /// The set without any tag of type `T`.
    pub fn without_type<T: Tag>(&self) -> TagSet {
        let kept: Vec<_> = self.entries().iter().filter(|(_, t)| t.downcast_ref::<T>().is_none()).cloned().collect();
        TagSet::from_vec(kept)
    }
}

impl TagSet {
    /// The entries equality and hashing see: all but the tags ignored for equality.
    fn compared(&self) -> impl Iterator<Item = &(u64, TagRef)> + Clone {
        self.entries().iter().filter(|(_, t)| !t.get().ignored_for_equality())
    }
}

impl TagSet {
    /// Whether the two sets hold the same tags, those left out of equality (creation sites)
    /// included: whether a rebuilt node carries all of another's metadata.
    pub fn identical(&self, other: &TagSet) -> bool {
        let (mine, theirs) = (self.entries(), other.entries());
        mine.len() == theirs.len() && mine.iter().all(|(_, t)| theirs.iter().any(|(_, o)| o == t))
    }
}

impl PartialEq for TagSet {
    fn eq(&self, other: &TagSet) -> bool {
        if self.tags.is_none() && other.tags.is_none() {
            return true;
        }
        // Both are sorted by hash and deduplicated; equal hashes may still hold different tags in a
        // different order, so fall back to a set comparison when the quick check fails.
        let (mine, theirs) = (self.compared(), other.compared());
        mine.clone().count() == theirs.clone().count()
            && (mine.clone().zip(theirs.clone()).all(|(a, b)| a == b)
                || mine.clone().all(|(_, t)| theirs.clone().any(|(_, o)| o == t)))
    }
}
impl Eq for TagSet {}

impl Hash for TagSet {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // Order-independent: a wrapping sum of the element hashes.
        let (count, sum) = self.compared().fold((0usize, 0u64), |(n, acc), (h, _)| (n + 1, acc.wrapping_add(*h)));
        state.write_usize(count);
        state.write_u64(sum);
    }
}

impl fmt::Debug for TagSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl fmt::Display for TagSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

// ---------------------------------------------------------------------------------------------
// Built-in tags.

/// The family of [`ImplStored`] and [`ImplInlined`]: how a node is realised in generated code.
pub const IMPLEMENTATION_STRATEGY: &str = "ImplementationStrategy";
/// The family of [`Named`] and [`PrefixNamed`]: the name a stored node gets in generated code.
pub const NAMING: &str = "Naming";

/// The node is computed into memory (a temporary or an output) rather than recomputed where used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ImplStored;
impl Tag for ImplStored {
    fn unique_family(&self) -> Option<&'static str> {
        Some(IMPLEMENTATION_STRATEGY)
    }
}

/// The node is recomputed wherever it is used (fused into its users).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ImplInlined;
impl Tag for ImplInlined {
    fn unique_family(&self) -> Option<&'static str> {
        Some(IMPLEMENTATION_STRATEGY)
    }
}

/// On a placeholder that stands for a data wrapper's data (the transform crate's
/// `data_as_inputs`): what the wrapper was, for messages about that data (`"square"`, or
/// `DataWrapper` for an unnamed one). Not part of equality: programs over wrappers of other
/// names are one program.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StandsForData(pub String);

impl StandsForData {
    /// The tag for the data of a wrapper named `name` (quoted), or of an unnamed one.
    pub fn of_wrapper(name: Option<&str>) -> StandsForData {
        StandsForData(name.map_or_else(|| "DataWrapper".to_string(), |n| format!("{n:?}")))
    }
}

impl Tag for StandsForData {
    fn unique_family(&self) -> Option<&'static str> {
        Some("StandsForData")
    }
    fn ignored_for_equality(&self) -> bool {
        true
    }
}

/// On a placeholder that stands for the positions of a mask's `true` elements in a later phase
/// (the result of a `Nonzero` host step, `pytato_runtime::phases`): the mask's shape. Row `k` of
/// the positions holds values in `0..shape[k]`, so indexing with it needs no normalization (a
/// placeholder so tagged whose values are not in range is an index error where it is read).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MaskPositions(pub crate::Shape);
impl Tag for MaskPositions {
    fn unique_family(&self) -> Option<&'static str> {
        Some("MaskPositions")
    }
}

/// The node, if stored, gets exactly this name in generated code.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Named(pub String);
impl Tag for Named {
    fn unique_family(&self) -> Option<&'static str> {
        Some(NAMING)
    }
}

/// The node, if stored, gets a name starting with this prefix in generated code.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PrefixNamed(pub String);
impl Tag for PrefixNamed {
    fn unique_family(&self) -> Option<&'static str> {
        Some(NAMING)
    }
}

/// Names the count of a boolean mask used as an index (seed: `A[(A > 0).tagged(CountNamed("n"))]`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CountNamed(pub String);
impl Tag for CountNamed {
    fn unique_family(&self) -> Option<&'static str> {
        Some("CountNamed")
    }
}

/// The lengths of these axes of the tagged placeholder must lie in `lo..=hi` (numbers or size
/// variables), checked when inputs are bound: a datashape's ranged length `Var(lo, hi)` (see
/// `pytato_datashape`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LengthBounds(pub Vec<(usize, crate::shape::Dim, crate::shape::Dim)>);
impl Tag for LengthBounds {
    fn unique_family(&self) -> Option<&'static str> {
        Some("LengthBounds")
    }
}

/// Every value of the tagged array is known to be non-negative.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AssumeNonNegative;
impl Tag for AssumeNonNegative {}

/// The tagged reshape only inserts length-1 axes, at these positions of the result.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ExpandedDimsReshape(pub Vec<usize>);
impl Tag for ExpandedDimsReshape {}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Eq, Hash)]
    struct A(u32);
    impl Tag for A {}

    #[derive(Debug, PartialEq, Eq, Hash)]
    struct B;
    impl Tag for B {}

    #[test]
    fn set_semantics() {
        let s1 = TagSet::new().with(A(1)).unwrap().with(B).unwrap();
        let s2 = TagSet::new().with(B).unwrap().with(A(1)).unwrap().with(B).unwrap();
        assert_eq!(s1, s2);
        assert_eq!(s1.len(), 2);
        let hash = |s: &TagSet| {
            let mut h = DefaultHasher::new();
            s.hash(&mut h);
            h.finish()
        };
        assert_eq!(hash(&s1), hash(&s2));
        assert_ne!(s1, TagSet::new().with(A(2)).unwrap().with(B).unwrap());
        assert_eq!(s1.without_type::<A>(), TagSet::new().with(B).unwrap());
        assert_eq!(s1.without(&TagSet::new().with(B).unwrap()), TagSet::new().with(A(1)).unwrap());
        assert_eq!(s1.of_type::<A>().collect::<Vec<_>>(), vec![&A(1)]);
    }

    #[test]
    fn same_value_different_type_differ() {
        #[derive(Debug, PartialEq, Eq, Hash)]
        struct C(u32);
        impl Tag for C {}
        assert_ne!(TagRef::new(A(1)), TagRef::new(C(1)));
    }

    #[test]
    fn unique_families() {
        let s = TagSet::new().with(ImplStored).unwrap();
        let err = s.with(ImplInlined).unwrap_err();
        assert!(matches!(err, Error::UniqueTagConflict { .. }));
        assert!(err.to_string().contains("ImplementationStrategy"), "{err}");
        // The same tag again is not a conflict.
        assert_eq!(s.with(ImplStored).unwrap(), s);
        let named = TagSet::new().with(Named("x".into())).unwrap();
        assert!(named.with(PrefixNamed("y".into())).is_err());
        assert!(named.with(AssumeNonNegative).is_ok());
    }
}
