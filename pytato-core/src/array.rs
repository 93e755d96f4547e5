//! Array expressions: the nodes of the DAG.
//!
//! An [`Array`] is a cheap, immutable handle (an `Arc`) to a [`Node`]. Every node knows its shape and
//! dtype (computed eagerly when it is built), carries a [`TagSet`], and one [`Axis`] per dimension
//! with tags of its own. What the node computes is its [`NodeKind`].
//!
//! # Invariants
//!
//! - A node is built only by a validating constructor (`Array::new_*`): every node in a DAG is
//!   well-formed, so passes and backends may rely on the shapes, dtypes and field relations documented
//!   on each [`NodeKind`] variant.
//! - The structural hash is computed once, at construction, from the node's own fields and the cached
//!   hashes of its children: hashing is O(1) per node and never recursive.
//! - Equality ([`PartialEq`]) is structural: same kinds, fields, shapes, dtypes, tags and axes, and
//!   equal children. It tries identity first and memoizes pairs it has compared, so it is linear in the
//!   size of the DAG even when naive comparison of shared subgraphs would be exponential. A
//!   `DataWrapper` is equal only to a wrapper of the very same buffer.
//! - Nothing here recurses along the depth of a DAG: comparison, input collection and `Drop` keep
//!   explicit stacks, so a chain of a million nodes is fine on a 2 MiB thread stack.
//!
//! ```
//! use pytato_core::{Array, DType, Shape, Dim};
//! use pytato_core::expr::{Expr, BinaryOp};
//! use std::collections::BTreeMap;
//!
//! let n = Dim::param("n");
//! let x = Array::new_placeholder(Some("x"), Shape::from(vec![n.clone()]), DType::F64).unwrap();
//! // y[i] = 2 * x[i]
//! let expr = Expr::f64(2.0).binary(BinaryOp::Mul, Expr::subscript("_in0", vec![Expr::iname(0)]));
//! let y = Array::new_index_lambda(expr, Shape::from(vec![n]), BTreeMap::from([("_in0".into(), x.clone())]), BTreeMap::new()).unwrap();
//! assert_eq!(y.dtype(), DType::F64);
//! assert_eq!(y.shape().to_string(), "(n,)");
//! ```

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use crate::data::ArrayData;
use crate::device::DeviceArray;
use crate::distributed::{CommTag, DistributedSend};
use crate::dtype::{DType, result_type_many};
use crate::error::{Error, Result};
use crate::expr::{Expr, TypeEnv};
use crate::function::Function;
use crate::names;
use crate::shape::{Dim, Shape, SizePolynomial, broadcast_shapes};
use crate::size_check::SizeCheck;
use crate::tags::{Tag, TagRef, TagSet};

/// A node of an array expression DAG, shared through [`Array`] handles.
pub struct Node {
    kind: NodeKind,
    shape: Shape,
    dtype: DType,
    tags: TagSet,
    /// `None` when every axis has default metadata (the common case): no allocation.
    axes: Option<Arc<[Axis]>>,
    hash: u64,
}

/// A handle to an array expression: cheap to clone, immutable, `Send + Sync`.
///
/// `==` is structural equality of the DAGs (see the [module docs](self)); elementwise comparison is
/// the frontend's `equal`.
#[derive(Clone)]
pub struct Array(Arc<Node>);

/// Axis metadata of nodes whose axes carry no tags (most of them): shared, never allocated.
static DEFAULT_AXES: [Axis; 32] = [const { Axis { tags: TagSet::new() } }; 32];

/// Metadata of one axis of an array.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Axis {
    /// The axis' tags.
    pub tags: TagSet,
}

/// Metadata of one reduction (an index lambda's reduction iname, an einsum's reduction index).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ReductionDescriptor {
    /// The reduction's tags.
    pub tags: TagSet,
}

/// Memory order of a reshape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Order {
    /// Row-major: the last index varies fastest.
    C,
    /// Column-major: the first index varies fastest.
    F,
}

/// How a [`NodeKind::Scatter`] combines a value with the element it lands on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScatterMode {
    /// The value replaces the element (numpy's `x[idx] = v`).
    Set,
    /// The value is added to the element, once per occurrence of its position (`np.add.at`).
    Add,
}

/// What a [`NodeKind::Sort`] gives: the sorted values or the indices that sort.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SortResult {
    /// The sorted array (`numpy.sort`).
    Values,
    /// The `int64` indices along the axis that sort the array (`numpy.argsort`).
    Indices,
}

/// Which of equal elements a [`NodeKind::SearchSorted`] gives the position of.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Side {
    /// The first position where the value could be inserted (before equal elements).
    #[default]
    Left,
    /// The last position (after equal elements).
    Right,
}

/// What a [`NodeKind::Scan`] accumulates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScanOp {
    /// Running sums (`cumulative_sum`).
    Sum,
    /// Running products (`cumulative_prod`).
    Product,
}

/// What a node computes. Children (the arrays a node uses) are [`Array`] handles.
#[derive(Clone, Hash)]
pub enum NodeKind {
    /// An input bound by name when the program runs. Unnamed placeholders get a `_pt_in` name when
    /// a program is built.
    Placeholder {
        /// The input's name.
        name: Option<Arc<str>>,
    },
    /// A named integer size, 0-d, `int64`. Shapes refer to it by name through [`Dim`].
    SizeParam {
        /// The parameter's name.
        name: Arc<str>,
    },
    /// Data known when the DAG is built. Equal only to a wrapper of the very same buffer; the data
    /// is freed when the last handle to it drops.
    DataWrapper {
        /// An optional name; unnamed wrappers get a `_pt_data` name when a program is built.
        name: Option<Arc<str>>,
        /// The data.
        data: DataRef,
    },
    /// `result[_0, …] = expr`, reading `bindings` by name.
    IndexLambda(IndexLambda),
    /// An Einstein summation.
    Einsum(Einsum),
    /// `array` reshaped to this node's shape, reading elements in `order`.
    Reshape {
        /// The reshaped array.
        array: Array,
        /// Memory order of the reshape.
        order: Order,
    },
    /// `numpy.roll(array, shift, axis)`.
    Roll {
        /// The rolled array.
        array: Array,
        /// Elements move this many places toward higher indices (any integer; taken modulo the
        /// axis length).
        shift: i64,
        /// The axis rolled along.
        axis: usize,
    },
    /// `numpy.transpose(array, axes)`: axis `i` of the result is axis `axes[i]` of `array`.
    AxisPermutation {
        /// The permuted array.
        array: Array,
        /// A permutation of `0..ndim`.
        axes: Vec<usize>,
    },
    /// `numpy.stack(arrays, axis)`: arrays of one shape along a new axis.
    Stack {
        /// At least one array, all of one shape.
        arrays: Vec<Array>,
        /// Position of the new axis in the result.
        axis: usize,
    },
    /// `numpy.concatenate(arrays, axis)`.
    Concatenate {
        /// At least one array; all axes but `axis` agree.
        arrays: Vec<Array>,
        /// The axis joined along.
        axis: usize,
    },
    /// Indexing by integers and slices only.
    BasicIndex {
        /// The indexed array.
        array: Array,
        /// One item per axis of `array`: [`IndexItem::Int`] or [`IndexItem::Slice`].
        indices: Vec<IndexItem>,
    },
    /// Indexing with integer arrays whose positions are adjacent: the broadcast index shape takes
    /// their place in the result.
    AdvancedIndexInContiguousAxes {
        /// The indexed array.
        array: Array,
        /// One item per axis of `array`; at least one [`IndexItem::Array`].
        indices: Vec<IndexItem>,
    },
    /// Indexing with integer arrays separated by a slice: the broadcast index shape comes first.
    AdvancedIndexInNoncontiguousAxes {
        /// The indexed array.
        array: Array,
        /// One item per axis of `array`; at least one [`IndexItem::Array`].
        indices: Vec<IndexItem>,
    },
    /// The positions of the `true` elements of a boolean `mask` (`mask.ndim >= 1`), in row-major
    /// order: an `int64` array of shape `(mask.ndim, count)` whose column `k` is the index of the
    /// `k`-th `true` element (numpy's `nonzero`, stacked). `count` is a *count*: a size variable
    /// whose value the data decides (see `pytato_runtime::phases`). A host step: programs run it
    /// between phases, never inside a kernel.
    Nonzero {
        /// The boolean mask.
        mask: Array,
        /// The count's name: `_pt_shp` and the mask's structural hash, or the name of a
        /// [`CountNamed`](crate::tags::CountNamed) tag on the mask.
        count: Arc<str>,
    },
    /// `array` with elements replaced (or added to) at flat row-major `positions`: element
    /// `positions[r]` becomes `values[r]` ([`ScatterMode::Set`]; of repeated positions, the last in
    /// row-major order of `positions` wins, as in numpy) or has `values[r]` added to it in that
    /// order ([`ScatterMode::Add`], numpy's `add.at`). A host step, like [`NodeKind::Nonzero`].
    Scatter {
        /// The array written into (shape and dtype of the result).
        array: Array,
        /// Flat row-major positions in `array`, `int64`; each must be in `-size..size` (a negative
        /// position counts from the end, as numpy's indices do).
        positions: Array,
        /// One value per position (same shape as `positions`): of `array`'s dtype to replace; of any
        /// dtype to add (numpy's `add.at` adds in the promoted dtype and casts back each time).
        values: Array,
        /// Replace or accumulate.
        mode: ScatterMode,
    },
    /// `array` sorted along `axis`, or the indices that sort it ([`SortResult`]). The sort is
    /// stable (equal elements keep their order, `-0.0` and `0.0` are equal), NaN sorts after every
    /// number (complex numbers in numpy's lexicographic order, `R + Rj < R + nanj < nan + Rj <
    /// nan + nanj`); `descending` reverses the order but keeps equal elements in their order, as
    /// the Array API's `sort(x, descending=True)` does (NaN first). A host step, like
    /// [`NodeKind::Nonzero`].
    Sort {
        /// The sorted array.
        array: Array,
        /// The axis sorted along (every other axis indexes independent rows).
        axis: usize,
        /// Largest first.
        descending: bool,
        /// Values or indices.
        result: SortResult,
    },
    /// Running sums or products of `array` along `axis`, in its dtype: each row of at most 2048
    /// elements left to right as numpy's `cumsum`/`cumprod` loop (integers wrap; floats round in
    /// that order), longer rows in the blocks `pytato_runtime::scan` defines. The dtype is not
    /// `bool` (the frontend accumulates booleans in `int64`). A host step, like
    /// [`NodeKind::Nonzero`].
    Scan {
        /// The scanned array.
        array: Array,
        /// The axis scanned along.
        axis: usize,
        /// Sum or product.
        op: ScanOp,
    },
    /// For each element of `values`, where it goes in the 1-d `sorted` (numpy's `searchsorted`):
    /// `int64` of `values`'s shape, by binary search in numpy's sort order (NaN last). `sorted`
    /// and `values` have one dtype, not complex. A host step, like [`NodeKind::Nonzero`].
    SearchSorted {
        /// The sorted 1-d array.
        sorted: Array,
        /// The values to place.
        values: Array,
        /// Before or after equal elements.
        side: Side,
    },
    /// The array rank `src_rank` sends with `comm_tag`; see [`crate::distributed`]. A leaf: its
    /// value arrives when the DAG runs over a communicator.
    DistributedRecv {
        /// The sending rank.
        src_rank: usize,
        /// The message's tag.
        comm_tag: CommTag,
    },
    /// `passthrough` (its shape, dtype and value), carrying a send that happens when the DAG
    /// runs; see [`crate::distributed::staple_distributed_send`]. Children: `passthrough`, then
    /// the sent data.
    DistributedSendRefHolder {
        /// The send.
        send: DistributedSend,
        /// The array the send is stapled to.
        passthrough: Array,
    },
    /// The result `name` of a call of `function` with `bindings` (one per parameter, in parameter
    /// name order); see [`crate::function`]. The function's body is not a child.
    CallResult {
        /// The function called.
        function: Function,
        /// The arguments, one per parameter in name order.
        bindings: Vec<Array>,
        /// Which result.
        name: Arc<str>,
    },
    /// One entry of a [`DictOfNamedArrays`], as an array.
    NamedArray {
        /// The dictionary.
        container: DictOfNamedArrays,
        /// The entry's name.
        name: Arc<str>,
    },
}

/// The fields of [`NodeKind::IndexLambda`].
#[derive(Clone, Hash)]
pub struct IndexLambda {
    /// The scalar expression; its dtype is the node's dtype.
    pub expr: Expr,
    /// The arrays the expression reads, by name.
    pub bindings: BTreeMap<Arc<str>, Array>,
    /// One descriptor per reduction iname of `expr`.
    pub reduction_descriptors: BTreeMap<Arc<str>, ReductionDescriptor>,
    /// What the sizes must satisfy for the lambda to be defined (a reduction without identity
    /// over a symbolic axis, a write at a symbolic index), checked when a program's sizes are
    /// bound; see [`crate::size_check`].
    pub checks: Vec<SizeCheck>,
}

/// The [`TypeEnv`] of an index lambda: its output axes and its bindings' dtypes and ranks.
pub struct IndexLambdaTypes<'a> {
    ndim: usize,
    bindings: &'a BTreeMap<Arc<str>, Array>,
}

impl<'a> IndexLambdaTypes<'a> {
    /// The environment of a lambda with `ndim` output axes reading `bindings`.
    pub fn new(ndim: usize, bindings: &'a BTreeMap<Arc<str>, Array>) -> IndexLambdaTypes<'a> {
        IndexLambdaTypes { ndim, bindings }
    }
}

impl TypeEnv for IndexLambdaTypes<'_> {
    fn ndim(&self) -> usize {
        self.ndim
    }
    fn binding(&self, name: &str) -> Option<(DType, usize)> {
        self.bindings.get(name).map(|a| (a.dtype(), a.ndim()))
    }
    fn describe(&self) -> String {
        let names: Vec<&str> = self.bindings.keys().map(|k| &**k).collect();
        format!("inames _0.._{}; bindings [{}]", self.ndim, names.join(", "))
    }
}

/// How an axis of an einsum operand is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EinsumAxis {
    /// Maps to output axis `i`.
    Elementwise(usize),
    /// Summed over, as reduction index `i`.
    Reduction(usize),
}

/// The fields of [`NodeKind::Einsum`]: `result[elementwise] = Σ_reduction Π_k args[k][access[k]]`.
#[derive(Clone, Hash)]
pub struct Einsum {
    /// For each operand, one [`EinsumAxis`] per axis.
    pub access: Vec<Vec<EinsumAxis>>,
    /// The operands.
    pub args: Vec<Array>,
    /// One descriptor per reduction index.
    pub reduction_descriptors: BTreeMap<usize, ReductionDescriptor>,
}

impl Einsum {
    /// The einsum's reduction indices, in increasing order.
    pub fn reduction_indices(&self) -> BTreeSet<usize> {
        self.access
            .iter()
            .flatten()
            .filter_map(|a| match a {
                EinsumAxis::Reduction(r) => Some(*r),
                EinsumAxis::Elementwise(_) => None,
            })
            .collect()
    }
}

/// Where the axes of an indexing node's result come from: index arrays (broadcast together) fill
/// `block_len` consecutive axes starting at `block_start`; each slice fills one of the other axes,
/// in order. Integers fill none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexLayout {
    /// First result axis of the broadcast index block (0 when the block goes first).
    pub block_start: usize,
    /// Number of axes of the broadcast index shape (0 without index arrays).
    pub block_len: usize,
    /// For each item, the result axis of a slice (`None` for integers and index arrays).
    pub slice_axes: Vec<Option<usize>>,
}

impl IndexLayout {
    /// The layout of `NodeKind::BasicIndex` / `AdvancedIndexIn*Axes` with these `indices` and a
    /// result of `ndim` axes; `in_place` for the contiguous kind (and basic indexing).
    pub fn new(indices: &[IndexItem], in_place: bool, ndim: usize) -> IndexLayout {
        let has_arrays = indices.iter().any(|i| matches!(i, IndexItem::Array(_)));
        let n_slices = indices.iter().filter(|i| matches!(i, IndexItem::Slice(_))).count();
        let block_len = if has_arrays { ndim - n_slices } else { 0 };
        let block_start = if has_arrays && in_place {
            indices.iter().take_while(|i| matches!(i, IndexItem::Slice(_))).count()
        } else {
            0
        };
        let mut k = 0;
        let slice_axes = indices
            .iter()
            .map(|i| {
                matches!(i, IndexItem::Slice(_)).then(|| {
                    let axis = if k < block_start { k } else { k + block_len };
                    k += 1;
                    axis
                })
            })
            .collect();
        IndexLayout { block_start, block_len, slice_axes }
    }

    /// The layout of an indexing node; `None` for other kinds.
    pub fn of(node: &Array) -> Option<IndexLayout> {
        let (indices, in_place) = match node.kind() {
            NodeKind::BasicIndex { indices, .. } | NodeKind::AdvancedIndexInContiguousAxes { indices, .. } => {
                (indices, true)
            }
            NodeKind::AdvancedIndexInNoncontiguousAxes { indices, .. } => (indices, false),
            _ => return None,
        };
        Some(IndexLayout::new(indices, in_place, node.ndim()))
    }

    /// Whether the index arrays of an indexing node of result `shape` (this layout's) broadcast to
    /// a shape known to be empty when the DAG is built. numpy checks the values of index arrays
    /// of one or more axes as it walks that shape, so it checks none there (`zeros(5)[[[10]],
    /// []]` is an empty array, not an `IndexError`), and no backend checks them either. A 0-d
    /// index array is an integer to numpy, checked whatever the shape (`zeros((3, 5))[array(7),
    /// []]` is an `IndexError`), and so it is here. (An empty shape known only at run time still
    /// has its index values checked, on every backend alike.)
    pub fn index_arrays_unread(&self, shape: &Shape) -> bool {
        shape.dims()[self.block_start..self.block_start + self.block_len].iter().any(|len| *len == Dim::new(0))
    }
}

/// A slice in normal form: the indices `start, start + step, …` that lie before `stop` (after it,
/// for a negative step), all within the axis.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NormalizedSlice {
    /// First index.
    pub start: Dim,
    /// Bound, exclusive.
    pub stop: Dim,
    /// Non-zero step.
    pub step: i64,
}

impl NormalizedSlice {
    /// Number of indices the slice selects.
    pub fn length(&self, op: &str) -> Result<Dim> {
        let span = if self.step > 0 { self.stop.sub(&self.start)? } else { self.start.sub(&self.stop)? };
        let step = self.step.unsigned_abs() as i64;
        if let Some(s) = span.as_int() {
            // ceil(s / step), clamped at 0.
            return Ok(Dim::new(if s <= 0 { 0 } else { (s - 1) / step + 1 }));
        }
        span.div_exact(step).ok_or_else(|| Error::NonAffine {
            op: op.to_string(),
            lhs: format!("slice length {span}"),
            rhs: format!("step {}", self.step),
        })
    }
}

/// One index of an indexing node.
#[derive(Clone, Hash)]
pub enum IndexItem {
    /// A single position, in `0..len`; removes the axis.
    Int(Dim),
    /// A normalized slice; keeps the axis.
    Slice(NormalizedSlice),
    /// An integer array of positions (advanced indexing); values are checked when the program runs.
    Array(Array),
}

/// The data of a `DataWrapper`, in host memory or held by a backend's device (an array a
/// program left on the GPU, wrapped again without a copy). Compared and hashed by identity of
/// the buffer.
#[derive(Clone)]
pub enum DataRef {
    /// An array in host memory, shared with its other holders.
    Host(Arc<ArrayData>),
    /// An array a backend holds ([`DeviceArray`]); backends that cannot read it where it is
    /// copy it to the host ([`DataRef::to_host`]).
    Device(DeviceArray),
}

impl DataRef {
    /// The element type.
    pub fn dtype(&self) -> DType {
        match self {
            DataRef::Host(data) => data.dtype(),
            DataRef::Device(array) => array.dtype(),
        }
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        match self {
            DataRef::Host(data) => data.shape(),
            DataRef::Device(array) => array.shape(),
        }
    }

    /// The elements where they are in host memory (a device array held on the host included).
    pub fn as_host(&self) -> Option<&Arc<ArrayData>> {
        match self {
            DataRef::Host(data) => Some(data),
            DataRef::Device(array) => array.host_data(),
        }
    }

    /// The elements in host memory: shared where they are there, else copied from the device
    /// (which waits for the device).
    pub fn to_host(&self) -> Result<Arc<ArrayData>> {
        match self {
            DataRef::Host(data) => Ok(data.clone()),
            DataRef::Device(array) => match array.host_data() {
                Some(data) => Ok(data.clone()),
                None => Ok(Arc::new(array.to_host()?)),
            },
        }
    }

    /// The address that identifies the buffer (for hashing).
    fn address(&self) -> usize {
        match self {
            DataRef::Host(data) => Arc::as_ptr(data) as usize,
            DataRef::Device(array) => array.storage_address(),
        }
    }
}

impl fmt::Debug for DataRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataRef::Host(data) => write!(f, "Host({} {:?})", data.dtype(), data.shape()),
            DataRef::Device(array) => write!(f, "{array:?}"),
        }
    }
}

impl From<ArrayData> for DataRef {
    fn from(data: ArrayData) -> DataRef {
        DataRef::Host(Arc::new(data))
    }
}

impl From<Arc<ArrayData>> for DataRef {
    fn from(data: Arc<ArrayData>) -> DataRef {
        DataRef::Host(data)
    }
}

impl From<DeviceArray> for DataRef {
    /// A device array held on the host becomes host data (shared, not copied).
    fn from(array: DeviceArray) -> DataRef {
        match array.host_data() {
            Some(data) => DataRef::Host(data.clone()),
            None => DataRef::Device(array),
        }
    }
}

impl PartialEq for DataRef {
    fn eq(&self, other: &DataRef) -> bool {
        match (self, other) {
            (DataRef::Host(a), DataRef::Host(b)) => Arc::ptr_eq(a, b),
            (DataRef::Device(a), DataRef::Device(b)) => a.same_storage(b),
            _ => false,
        }
    }
}
impl Eq for DataRef {}
impl Hash for DataRef {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.address().hash(state);
    }
}

/// Named results: an ordered map from output name to array. This and [`Array`] are the two kinds of
/// result a program computes.
#[derive(Clone)]
pub struct DictOfNamedArrays(Arc<DictInner>);

struct DictInner {
    entries: BTreeMap<Arc<str>, Array>,
    tags: TagSet,
    hash: u64,
}

// ---------------------------------------------------------------------------------------------
// Accessors.

impl Array {
    /// What the node computes.
    pub fn kind(&self) -> &NodeKind {
        &self.0.kind
    }
    /// The shape.
    pub fn shape(&self) -> &Shape {
        &self.0.shape
    }
    /// The element type.
    pub fn dtype(&self) -> DType {
        self.0.dtype
    }
    /// Number of axes.
    pub fn ndim(&self) -> usize {
        self.0.shape.ndim()
    }
    /// The node's tags.
    pub fn tags(&self) -> &TagSet {
        &self.0.tags
    }
    /// Per-axis metadata; one entry per axis.
    pub fn axes(&self) -> &[Axis] {
        match &self.0.axes {
            Some(axes) => axes,
            None => &DEFAULT_AXES[..self.ndim()],
        }
    }
    /// The cached structural hash.
    pub fn structural_hash(&self) -> u64 {
        self.0.hash
    }
    /// The name of a placeholder, size parameter or named data wrapper.
    pub fn name(&self) -> Option<&str> {
        match &self.0.kind {
            NodeKind::Placeholder { name } | NodeKind::DataWrapper { name, .. } => name.as_deref(),
            NodeKind::SizeParam { name } => Some(name),
            _ => None,
        }
    }
    /// A number that identifies the node while any handle to it lives (for memo tables).
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }
    /// `true` when both handles point to the same node.
    pub fn ptr_eq(&self, other: &Array) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
    /// The tags of type `T`.
    pub fn tags_of_type<T: Tag>(&self) -> impl Iterator<Item = &T> {
        self.0.tags.of_type::<T>()
    }
    /// The arrays this node uses, in a fixed order per kind.
    pub fn children(&self) -> Vec<&Array> {
        self.0.kind.children()
    }
    /// `true` for placeholders, size parameters and data wrappers.
    pub fn is_input(&self) -> bool {
        matches!(self.0.kind, NodeKind::Placeholder { .. } | NodeKind::SizeParam { .. } | NodeKind::DataWrapper { .. })
    }
    /// The short name of the node's kind (`"IndexLambda"`, ...).
    pub fn kind_name(&self) -> &'static str {
        self.0.kind.name()
    }
}

impl NodeKind {
    /// The kind's name (`"Placeholder"`, `"IndexLambda"`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            NodeKind::Placeholder { .. } => "Placeholder",
            NodeKind::SizeParam { .. } => "SizeParam",
            NodeKind::DataWrapper { .. } => "DataWrapper",
            NodeKind::IndexLambda(_) => "IndexLambda",
            NodeKind::Einsum(_) => "Einsum",
            NodeKind::Reshape { .. } => "Reshape",
            NodeKind::Roll { .. } => "Roll",
            NodeKind::AxisPermutation { .. } => "AxisPermutation",
            NodeKind::Stack { .. } => "Stack",
            NodeKind::Concatenate { .. } => "Concatenate",
            NodeKind::BasicIndex { .. } => "BasicIndex",
            NodeKind::AdvancedIndexInContiguousAxes { .. } => "AdvancedIndexInContiguousAxes",
            NodeKind::AdvancedIndexInNoncontiguousAxes { .. } => "AdvancedIndexInNoncontiguousAxes",
            NodeKind::Nonzero { .. } => "Nonzero",
            NodeKind::Scatter { .. } => "Scatter",
            NodeKind::Sort { .. } => "Sort",
            NodeKind::Scan { .. } => "Scan",
            NodeKind::SearchSorted { .. } => "SearchSorted",
            NodeKind::DistributedRecv { .. } => "DistributedRecv",
            NodeKind::DistributedSendRefHolder { .. } => "DistributedSendRefHolder",
            NodeKind::CallResult { .. } => "CallResult",
            NodeKind::NamedArray { .. } => "NamedArray",
        }
    }

    /// The arrays this node uses. The order is fixed per kind: bindings in name order, operands in
    /// order, index arrays in axis order, dictionary entries in name order.
    pub fn children(&self) -> Vec<&Array> {
        match self {
            NodeKind::Placeholder { .. }
            | NodeKind::SizeParam { .. }
            | NodeKind::DataWrapper { .. }
            | NodeKind::DistributedRecv { .. } => Vec::new(),
            NodeKind::IndexLambda(il) => il.bindings.values().collect(),
            NodeKind::Einsum(e) => e.args.iter().collect(),
            NodeKind::Reshape { array, .. }
            | NodeKind::Roll { array, .. }
            | NodeKind::AxisPermutation { array, .. } => {
                vec![array]
            }
            NodeKind::Stack { arrays, .. } | NodeKind::Concatenate { arrays, .. } => arrays.iter().collect(),
            NodeKind::BasicIndex { array, indices }
            | NodeKind::AdvancedIndexInContiguousAxes { array, indices }
            | NodeKind::AdvancedIndexInNoncontiguousAxes { array, indices } => std::iter::once(array)
                .chain(indices.iter().filter_map(|i| match i {
                    IndexItem::Array(a) => Some(a),
                    _ => None,
                }))
                .collect(),
            NodeKind::Nonzero { mask, .. } => vec![mask],
            NodeKind::Sort { array, .. } | NodeKind::Scan { array, .. } => vec![array],
            NodeKind::SearchSorted { sorted, values, .. } => vec![sorted, values],
            NodeKind::Scatter { array, positions, values, .. } => vec![array, positions, values],
            NodeKind::DistributedSendRefHolder { send, passthrough } => vec![passthrough, &send.data],
            NodeKind::CallResult { bindings, .. } => bindings.iter().collect(),
            NodeKind::NamedArray { container, .. } => container.0.entries.values().collect(),
        }
    }

    /// Moves the children out (for the iterative `Drop`), leaving a childless kind.
    fn into_children(self) -> Vec<Array> {
        match self {
            NodeKind::Placeholder { .. }
            | NodeKind::SizeParam { .. }
            | NodeKind::DataWrapper { .. }
            | NodeKind::DistributedRecv { .. } => Vec::new(),
            NodeKind::IndexLambda(il) => il.bindings.into_values().collect(),
            NodeKind::Einsum(e) => e.args,
            NodeKind::Reshape { array, .. }
            | NodeKind::Roll { array, .. }
            | NodeKind::AxisPermutation { array, .. } => {
                vec![array]
            }
            NodeKind::Stack { arrays, .. } | NodeKind::Concatenate { arrays, .. } => arrays,
            NodeKind::BasicIndex { array, indices }
            | NodeKind::AdvancedIndexInContiguousAxes { array, indices }
            | NodeKind::AdvancedIndexInNoncontiguousAxes { array, indices } => std::iter::once(array)
                .chain(indices.into_iter().filter_map(|i| match i {
                    IndexItem::Array(a) => Some(a),
                    _ => None,
                }))
                .collect(),
            NodeKind::Nonzero { mask, .. } => vec![mask],
            NodeKind::Sort { array, .. } | NodeKind::Scan { array, .. } => vec![array],
            NodeKind::SearchSorted { sorted, values, .. } => vec![sorted, values],
            NodeKind::Scatter { array, positions, values, .. } => vec![array, positions, values],
            NodeKind::DistributedSendRefHolder { send, passthrough } => vec![passthrough, send.data],
            NodeKind::CallResult { bindings, .. } => bindings,
            NodeKind::NamedArray { container, .. } => match Arc::into_inner(container.0) {
                Some(inner) => inner.entries.into_values().collect(),
                None => Vec::new(),
            },
        }
    }

    /// Equality of everything but the children, which [`Array::eq`] compares pairwise in
    /// [`NodeKind::children`] order.
    fn shallow_eq(&self, other: &NodeKind) -> bool {
        use NodeKind::*;
        fn items_eq(a: &[IndexItem], b: &[IndexItem]) -> bool {
            a.len() == b.len()
                && a.iter().zip(b).all(|(x, y)| match (x, y) {
                    (IndexItem::Int(p), IndexItem::Int(q)) => p == q,
                    (IndexItem::Slice(p), IndexItem::Slice(q)) => p == q,
                    (IndexItem::Array(_), IndexItem::Array(_)) => true,
                    _ => false,
                })
        }
        // Matched on `self` alone, with no catch-all arm, so that a new kind does not compile until
        // it says what equality means for it (a catch-all once made every scan unequal to itself).
        match self {
            // An unnamed placeholder is a distinct input: equal only to itself (identity is
            // checked before this), or CSE would merge two different inputs.
            Placeholder { name: a } => matches!(other, Placeholder { name: b } if a.is_some() && a == b),
            SizeParam { name: a } => matches!(other, SizeParam { name: b } if a == b),
            DataWrapper { name: a, data: x } => matches!(other, DataWrapper { name: b, data: y } if a == b && x == y),
            IndexLambda(a) => matches!(other, IndexLambda(b) if a.expr == b.expr
                && a.bindings.keys().eq(b.bindings.keys())
                && a.reduction_descriptors == b.reduction_descriptors
                && a.checks == b.checks),
            Einsum(a) => {
                matches!(other, Einsum(b) if a.access == b.access && a.reduction_descriptors == b.reduction_descriptors)
            }
            Reshape { order: a, .. } => matches!(other, Reshape { order: b, .. } if a == b),
            Roll { shift: s1, axis: a1, .. } => {
                matches!(other, Roll { shift: s2, axis: a2, .. } if s1 == s2 && a1 == a2)
            }
            AxisPermutation { axes: a, .. } => matches!(other, AxisPermutation { axes: b, .. } if a == b),
            Stack { arrays: x, axis: a } => {
                matches!(other, Stack { arrays: y, axis: b } if a == b && x.len() == y.len())
            }
            Concatenate { arrays: x, axis: a } => {
                matches!(other, Concatenate { arrays: y, axis: b } if a == b && x.len() == y.len())
            }
            BasicIndex { indices: a, .. } => matches!(other, BasicIndex { indices: b, .. } if items_eq(a, b)),
            AdvancedIndexInContiguousAxes { indices: a, .. } => {
                matches!(other, AdvancedIndexInContiguousAxes { indices: b, .. } if items_eq(a, b))
            }
            AdvancedIndexInNoncontiguousAxes { indices: a, .. } => {
                matches!(other, AdvancedIndexInNoncontiguousAxes { indices: b, .. } if items_eq(a, b))
            }
            Nonzero { count: a, .. } => matches!(other, Nonzero { count: b, .. } if a == b),
            Scatter { mode: a, .. } => matches!(other, Scatter { mode: b, .. } if a == b),
            Sort { axis: a1, descending: d1, result: r1, .. } => {
                matches!(other, Sort { axis: a2, descending: d2, result: r2, .. } if a1 == a2 && d1 == d2 && r1 == r2)
            }
            Scan { axis: a1, op: o1, .. } => matches!(other, Scan { axis: a2, op: o2, .. } if a1 == a2 && o1 == o2),
            SearchSorted { side: a, .. } => matches!(other, SearchSorted { side: b, .. } if a == b),
            CallResult { function: f, name: a, .. } => {
                matches!(other, CallResult { function: g, name: b, .. } if a == b && f == g)
            }
            DistributedRecv { src_rank: r, comm_tag: t } => {
                matches!(other, DistributedRecv { src_rank: q, comm_tag: u } if r == q && t == u)
            }
            DistributedSendRefHolder { send: a, .. } => matches!(other, DistributedSendRefHolder { send: b, .. }
                if a.dest_rank == b.dest_rank && a.comm_tag == b.comm_tag),
            NamedArray { container: c1, name: n1 } => matches!(other, NamedArray { container: c2, name: n2 }
                if n1 == n2 && c1.0.tags == c2.0.tags && c1.0.entries.keys().eq(c2.0.entries.keys())),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Hashing, equality, drop.

impl Hash for Array {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.hash);
    }
}

impl PartialEq for Array {
    fn eq(&self, other: &Array) -> bool {
        structurally_equal(vec![(self.clone(), other.clone())])
    }
}
impl Eq for Array {}

/// Structural equality of several pairs at once, sharing one memo table. Linear in the number of
/// distinct node pairs visited; no recursion.
fn structurally_equal(mut stack: Vec<(Array, Array)>) -> bool {
    let mut assumed_equal: HashSet<(usize, usize), std::hash::BuildHasherDefault<IdHasher>> = HashSet::default();
    while let Some((a, b)) = stack.pop() {
        if a.ptr_eq(&b) {
            continue;
        }
        let (na, nb) = (&*a.0, &*b.0);
        if na.hash != nb.hash {
            return false;
        }
        // A pair under comparison is assumed equal: if it is not, some pair below it fails and the
        // whole comparison returns false, so the assumption is never used wrongly.
        if !assumed_equal.insert((a.id(), b.id())) {
            continue;
        }
        if na.dtype != nb.dtype
            || na.shape != nb.shape
            || na.tags != nb.tags
            || a.axes() != b.axes()
            || !na.kind.shallow_eq(&nb.kind)
        {
            return false;
        }
        let (ca, cb) = (na.kind.children(), nb.kind.children());
        if ca.len() != cb.len() {
            return false;
        }
        stack.extend(ca.into_iter().cloned().zip(cb.into_iter().cloned()));
    }
    true
}

impl Drop for Node {
    fn drop(&mut self) {
        // Dropping a long chain recursively would overflow the stack. Move the children out, and
        // keep unwrapping those whose last handle this was; each node then drops with no children.
        let kind = std::mem::replace(&mut self.kind, NodeKind::Placeholder { name: None });
        let mut stack = kind.into_children();
        while let Some(child) = stack.pop() {
            if let Some(mut node) = Arc::into_inner(child.0) {
                let kind = std::mem::replace(&mut node.kind, NodeKind::Placeholder { name: None });
                stack.extend(kind.into_children());
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Construction.

impl Array {
    /// The one place a node is made: computes the hash. `axes`, when given, has one entry per axis.
    fn make(kind: NodeKind, shape: Shape, dtype: DType, mut tags: TagSet, axes: Option<Arc<[Axis]>>) -> Array {
        if let Some(site) = crate::created_at::current()
            && tags.of_type::<crate::created_at::CreatedAt>().next().is_none()
        {
            tags = tags.with(site).expect("a node without a creation site takes one");
        }
        let ndim = shape.ndim();
        let axes = match axes {
            Some(a) if ndim <= DEFAULT_AXES.len() && a.iter().all(|x| x.tags.is_empty()) => None,
            None if ndim > DEFAULT_AXES.len() => Some(vec![Axis::default(); ndim].into()),
            other => other,
        };
        debug_assert!(axes.as_ref().is_none_or(|a| a.len() == ndim));
        let mut h = DefaultHasher::new();
        kind.hash(&mut h);
        shape.hash(&mut h);
        dtype.hash(&mut h);
        tags.hash(&mut h);
        match &axes {
            Some(a) => a.hash(&mut h),
            None => DEFAULT_AXES[..ndim].hash(&mut h),
        }
        let hash = h.finish();
        Array(Arc::new(Node { kind, shape, dtype, tags, axes, hash }))
    }

    /// A new node with no tags and untagged axes.
    fn fresh(kind: NodeKind, shape: Shape, dtype: DType) -> Array {
        Array::make(kind, shape, dtype, TagSet::new(), None)
    }

    /// The same node with other tags and axes.
    fn with_metadata(&self, tags: TagSet, axes: Option<Arc<[Axis]>>) -> Array {
        Array::make(self.0.kind.clone(), self.0.shape.clone(), self.0.dtype, tags, axes)
    }

    /// This array with `tag` added; an error if it conflicts with a tag of the same unique family.
    pub fn tagged(&self, tag: impl Tag) -> Result<Array> {
        Ok(self.with_metadata(self.0.tags.with(tag)?, self.0.axes.clone()))
    }

    /// This array with all of `tags` added.
    pub fn tagged_with(&self, tags: impl IntoIterator<Item = TagRef>) -> Result<Array> {
        Ok(self.with_metadata(self.0.tags.union(tags)?, self.0.axes.clone()))
    }

    /// This array without the tags in `tags`.
    pub fn without_tags(&self, tags: &TagSet) -> Array {
        self.with_metadata(self.0.tags.without(tags), self.0.axes.clone())
    }

    /// This array with its tags replaced by `tags`.
    pub fn with_tags(&self, tags: TagSet) -> Array {
        self.with_metadata(tags, self.0.axes.clone())
    }

    /// This array with the tags and axis metadata of `other` (which must have as many axes).
    pub fn with_metadata_of(&self, other: &Array) -> Result<Array> {
        if other.ndim() != self.ndim() {
            return Err(Error::invalid(
                "with_metadata_of",
                format!("shapes {} and {} differ in rank", self.shape(), other.shape()),
            ));
        }
        if self.0.tags.identical(&other.0.tags) && self.axes() == other.axes() {
            return Ok(self.clone());
        }
        Ok(self.with_metadata(other.0.tags.clone(), other.0.axes.clone()))
    }

    /// This array with `tag` added to axis `axis`.
    pub fn with_tagged_axis(&self, axis: usize, tag: impl Tag) -> Result<Array> {
        if axis >= self.ndim() {
            return Err(Error::AxisOutOfRange {
                op: "with_tagged_axis".into(),
                axis: axis as i64,
                shape: self.shape().clone(),
            });
        }
        let mut axes = self.axes().to_vec();
        axes[axis].tags = axes[axis].tags.with(tag)?;
        Ok(self.with_metadata(self.0.tags.clone(), Some(axes.into())))
    }

    /// This array with its axes' metadata replaced; `axes` must have one entry per axis.
    pub fn with_axes(&self, axes: Vec<Axis>) -> Result<Array> {
        if axes.len() != self.ndim() {
            return Err(Error::invalid(
                "with_axes",
                format!("{} axes given for an array of shape {}", axes.len(), self.shape()),
            ));
        }
        Ok(self.with_metadata(self.0.tags.clone(), Some(axes.into())))
    }

    /// This index lambda or einsum with the tags of each reduction replaced by `f(r, tags)`, where
    /// `r` is the reduction's number (`N` of an index lambda's `_rN`, an einsum's reduction
    /// index). Other nodes have no reductions and come back unchanged.
    pub fn map_reduction_tags(&self, mut f: impl FnMut(usize, &TagSet) -> Result<TagSet>) -> Result<Array> {
        let kind = match self.kind() {
            NodeKind::IndexLambda(il) => {
                let mut il = il.clone();
                for (iname, descriptor) in il.reduction_descriptors.iter_mut() {
                    let Some(names::Reserved::ReductionIname(r)) = names::classify(iname) else {
                        return Err(Error::invalid(
                            "map_reduction_tags",
                            format!("{iname:?} is not a reduction iname"),
                        ));
                    };
                    descriptor.tags = f(r, &descriptor.tags)?;
                }
                NodeKind::IndexLambda(il)
            }
            NodeKind::Einsum(e) => {
                let mut e = e.clone();
                for r in e.reduction_indices() {
                    let descriptor = e.reduction_descriptors.entry(r).or_default();
                    descriptor.tags = f(r, &descriptor.tags)?;
                }
                NodeKind::Einsum(e)
            }
            _ => return Ok(self.clone()),
        };
        Ok(Array::make(kind, self.shape().clone(), self.dtype(), self.0.tags.clone(), self.0.axes.clone()))
    }

    /// The same node over other children (in [`NodeKind::children`] order), validated again, with
    /// this node's tags and (when the number of axes is unchanged) axis metadata. Returns `self`
    /// itself when every child is the very same node.
    pub fn with_children(&self, children: Vec<Array>) -> Result<Array> {
        let old = self.children();
        if old.len() != children.len() {
            return Err(Error::invalid(
                "with_children",
                format!("{} children given for a {} with {}", children.len(), self.kind_name(), old.len()),
            ));
        }
        if old.iter().zip(&children).all(|(a, b)| a.ptr_eq(b)) {
            return Ok(self.clone());
        }
        let mut new = children.into_iter();
        let mut next = || new.next().expect("counted above");
        let rebuilt = match self.kind() {
            NodeKind::Placeholder { .. } | NodeKind::SizeParam { .. } | NodeKind::DataWrapper { .. } => self.clone(),
            NodeKind::IndexLambda(il) => {
                let bindings = il.bindings.keys().map(|k| (k.clone(), next())).collect();
                Array::new_index_lambda(
                    il.expr.clone(),
                    self.shape().clone(),
                    bindings,
                    il.reduction_descriptors.clone(),
                )?
                .with_size_checks(il.checks.clone())?
            }
            NodeKind::Einsum(e) => {
                let args = e.args.iter().map(|_| next()).collect();
                Array::new_einsum(e.access.clone(), args, e.reduction_descriptors.clone())?
            }
            NodeKind::Reshape { order, .. } => Array::new_reshape(&next(), self.shape().clone(), *order)?,
            NodeKind::Roll { shift, axis, .. } => Array::new_roll(&next(), *shift, *axis)?,
            NodeKind::AxisPermutation { axes, .. } => Array::new_axis_permutation(&next(), axes.clone())?,
            NodeKind::Stack { arrays, axis } => Array::new_stack(arrays.iter().map(|_| next()).collect(), *axis)?,
            NodeKind::Concatenate { arrays, axis } => {
                Array::new_concatenate(arrays.iter().map(|_| next()).collect(), *axis)?
            }
            NodeKind::BasicIndex { indices, .. }
            | NodeKind::AdvancedIndexInContiguousAxes { indices, .. }
            | NodeKind::AdvancedIndexInNoncontiguousAxes { indices, .. } => {
                let array = next();
                let indices: Vec<IndexItem> = indices
                    .iter()
                    .map(|i| match i {
                        IndexItem::Array(_) => IndexItem::Array(next()),
                        other => other.clone(),
                    })
                    .collect();
                match self.kind() {
                    NodeKind::BasicIndex { .. } => Array::new_basic_index(&array, indices)?,
                    NodeKind::AdvancedIndexInContiguousAxes { .. } => {
                        Array::new_advanced_index_contiguous(&array, indices)?
                    }
                    _ => Array::new_advanced_index_noncontiguous(&array, indices)?,
                }
            }
            NodeKind::Nonzero { count, .. } => Array::new_nonzero(&next(), count)?,
            NodeKind::Sort { axis, descending, result, .. } => Array::new_sort(&next(), *axis, *descending, *result)?,
            NodeKind::Scan { axis, op, .. } => Array::new_scan(&next(), *axis, *op)?,
            NodeKind::SearchSorted { side, .. } => {
                let (sorted, values) = (next(), next());
                Array::new_search_sorted(&sorted, &values, *side)?
            }
            NodeKind::CallResult { function, bindings, name } => {
                Array::new_call_result(function, bindings.iter().map(|_| next()).collect(), name)?
            }
            NodeKind::Scatter { mode, .. } => {
                let (array, positions, values) = (next(), next(), next());
                Array::new_scatter(&array, &positions, &values, *mode)?
            }
            NodeKind::DistributedRecv { .. } => self.clone(),
            NodeKind::DistributedSendRefHolder { send, .. } => {
                let (passthrough, data) = (next(), next());
                let send = DistributedSend { data, dest_rank: send.dest_rank, comm_tag: send.comm_tag.clone() };
                Array::new_distributed_send_ref_holder(send, &passthrough)?
            }
            NodeKind::NamedArray { container, name } => {
                let entries: BTreeMap<Arc<str>, Array> =
                    container.0.entries.keys().map(|k| (k.clone(), next())).collect();
                let container = DictOfNamedArrays::from_map(entries, container.0.tags.clone());
                Array::new_named_array(&container, name)?
            }
        };
        let axes = if rebuilt.ndim() == self.ndim() { self.0.axes.clone() } else { rebuilt.0.axes.clone() };
        if rebuilt.0.tags.identical(&self.0.tags) && (rebuilt.ndim() != self.ndim() || rebuilt.axes() == self.axes()) {
            return Ok(rebuilt); // already right: skip making a second node
        }
        Ok(rebuilt.with_metadata(self.0.tags.clone(), axes))
    }

    /// An input named `name` (or unnamed) of the given shape and dtype.
    #[track_caller]
    pub fn new_placeholder(name: Option<&str>, shape: Shape, dtype: DType) -> Result<Array> {
        let _site = crate::created_at::enter();
        if let Some(n) = name {
            names::check_array_name("Placeholder", n)?;
        }
        shape.validate("Placeholder")?;
        Ok(Array::fresh(NodeKind::Placeholder { name: name.map(Into::into) }, shape, dtype))
    }

    /// A placeholder with a library-generated name (one of [`names::PT_PREFIXES`]): for passes
    /// that turn other nodes into program inputs, such as data wrappers compiled as parameters.
    #[track_caller]
    pub fn new_generated_placeholder(name: &str, shape: Shape, dtype: DType) -> Result<Array> {
        let _site = crate::created_at::enter();
        names::internal_name(name)?;
        shape.validate("Placeholder")?;
        Ok(Array::fresh(NodeKind::Placeholder { name: Some(name.into()) }, shape, dtype))
    }

    /// The size parameter `name`: a 0-d `int64` input that shapes can refer to as `Dim::param(name)`.
    #[track_caller]
    pub fn new_size_param(name: &str) -> Result<Array> {
        let _site = crate::created_at::enter();
        // A count is read like a size parameter once its phase has bound it.
        if name.starts_with(names::COUNT_PREFIX) {
            names::internal_name(name)?;
        } else {
            names::check_array_name("SizeParam", name)?;
        }
        Ok(Array::fresh(NodeKind::SizeParam { name: name.into() }, Shape::scalar(), DType::I64))
    }

    /// Wraps data known now: an [`ArrayData`], one shared in an `Arc`, or a [`DeviceArray`] a
    /// backend holds (see [`DataRef`]), without a copy. The wrapper owns a reference to the
    /// data; the data is freed when the last handle to the wrapper (and any DAG using it) drops.
    #[track_caller]
    pub fn new_data_wrapper(data: impl Into<DataRef>, name: Option<&str>) -> Result<Array> {
        let _site = crate::created_at::enter();
        let data = data.into();
        if let Some(n) = name {
            names::check_array_name("DataWrapper", n)?;
        }
        let shape = Shape::from(data.shape());
        let dtype = data.dtype();
        Ok(Array::fresh(NodeKind::DataWrapper { name: name.map(Into::into), data }, shape, dtype))
    }

    /// A data wrapper declared with `shape`, lengths that may be expressions of size parameters
    /// (upstream's `make_data_wrapper(data, shape=(n, 2))`): a program binds those parameters
    /// from the data's lengths when it runs, as it binds them from a placeholder's input
    /// (`pytato_runtime::binding`), and reports lengths no parameter value gives. Checks now: as
    /// many axes as the data, each constant length the data's, no length provably negative.
    ///
    /// ```
    /// use pytato_core::{Array, ArrayData, Dim, Shape};
    /// let data = ArrayData::from(ndarray::Array2::<f64>::zeros((3, 2)).into_dyn());
    /// let n = Dim::param("n");
    /// let x = Array::new_data_wrapper_with_shape(data.clone(), None, Shape::from([n, Dim::new(2)]))?;
    /// assert_eq!(x.shape().to_string(), "(n, 2)");
    /// assert!(Array::new_data_wrapper_with_shape(data, None, Shape::from([3, 3])).is_err());
    /// # Ok::<(), pytato_core::Error>(())
    /// ```
    #[track_caller]
    pub fn new_data_wrapper_with_shape(data: impl Into<DataRef>, name: Option<&str>, shape: Shape) -> Result<Array> {
        let _site = crate::created_at::enter();
        let data = data.into();
        shape.validate("DataWrapper")?;
        let lengths = data.shape();
        let agrees = |d: &Dim, &len: &usize| d.as_int().is_none_or(|v| v as u128 == len as u128);
        if shape.ndim() != lengths.len() || !shape.dims().iter().zip(lengths).all(|(d, len)| agrees(d, len)) {
            return Err(Error::invalid(
                "DataWrapper",
                format!("data of shape {lengths:?} declared with the shape {shape}: the lengths differ"),
            ));
        }
        if let Some(n) = name {
            names::check_array_name("DataWrapper", n)?;
        }
        let dtype = data.dtype();
        Ok(Array::fresh(NodeKind::DataWrapper { name: name.map(Into::into), data }, shape, dtype))
    }

    /// `result[_0, …] = expr`: the dtype is the expression's (see [`Expr::dtype`]).
    ///
    /// Operations on `float16` values are rewritten to compute in `float32`
    /// ([`Expr::widen_float16`]), so the node's expression may differ from `expr` there.
    ///
    /// Checks: the expression is at most [`MAX_DEPTH`](crate::expr::MAX_DEPTH) levels deep;
    /// binding names are identifiers outside the iname namespaces; every variable of `expr`
    /// is an iname below `shape.ndim()`, a bound reduction iname or a binding; every reduction iname
    /// has a descriptor and every descriptor a reduction iname.
    #[track_caller]
    pub fn new_index_lambda(
        expr: Expr,
        shape: Shape,
        bindings: BTreeMap<Arc<str>, Array>,
        reduction_descriptors: BTreeMap<Arc<str>, ReductionDescriptor>,
    ) -> Result<Array> {
        let _site = crate::created_at::enter();
        shape.validate("IndexLambda")?;
        let depth = expr.depth();
        if depth > crate::expr::MAX_DEPTH {
            return Err(Error::invalid(
                "IndexLambda",
                format!("an expression {depth} levels deep (at most {} are supported)", crate::expr::MAX_DEPTH),
            ));
        }
        for name in bindings.keys() {
            names::check_binding_name(name)?;
        }
        let types = IndexLambdaTypes::new(shape.ndim(), &bindings);
        let expr = if expr.mentions_float16(&types) { expr.widen_float16(&types) } else { expr };
        let dtype = expr.dtype(&types)?;
        let mut used: BTreeSet<Arc<str>> = BTreeSet::new();
        expr.walk(&mut |e| {
            if let Expr::Reduce(r) = e {
                used.extend(r.inames.iter().map(|b| b.iname.clone()));
            }
        });
        if let Some(missing) = used.iter().find(|i| !reduction_descriptors.contains_key(*i)) {
            return Err(Error::MissingReductionDescriptor { iname: missing.to_string() });
        }
        if let Some(extra) = reduction_descriptors.keys().find(|k| !used.contains(*k)) {
            return Err(Error::invalid(
                "IndexLambda",
                format!("reduction descriptor for {extra:?}, which no reduction uses"),
            ));
        }
        let lambda = IndexLambda { expr, bindings, reduction_descriptors, checks: Vec::new() };
        Ok(Array::fresh(NodeKind::IndexLambda(lambda), shape, dtype))
    }

    /// This index lambda with `checks` added to its [`IndexLambda::checks`] (each once): the
    /// conditions on the sizes it needs, see [`crate::size_check`]. Other nodes take no checks of
    /// their own (an error).
    pub fn with_size_checks(&self, checks: impl IntoIterator<Item = SizeCheck>) -> Result<Array> {
        let NodeKind::IndexLambda(il) = self.kind() else {
            return Err(Error::invalid("with_size_checks", format!("a {} takes no size checks", self.kind_name())));
        };
        let mut il = il.clone();
        let before = il.checks.len();
        for check in checks {
            if !il.checks.contains(&check) {
                il.checks.push(check);
            }
        }
        if il.checks.len() == before {
            return Ok(self.clone());
        }
        Ok(Array::make(
            NodeKind::IndexLambda(il),
            self.shape().clone(),
            self.dtype(),
            self.0.tags.clone(),
            self.0.axes.clone(),
        ))
    }

    /// Every condition on the sizes this node needs (see [`crate::size_check`]): those of its
    /// integer indices and slices into symbolic axes, and an index lambda's own checks.
    pub fn size_checks(&self) -> Vec<SizeCheck> {
        match self.kind() {
            NodeKind::IndexLambda(il) => il.checks.clone(),
            NodeKind::BasicIndex { array, indices }
            | NodeKind::AdvancedIndexInContiguousAxes { array, indices }
            | NodeKind::AdvancedIndexInNoncontiguousAxes { array, indices } => {
                SizeCheck::for_index_items("index", array.shape(), indices)
            }
            _ => Vec::new(),
        }
    }

    /// An Einstein summation. `access[k]` maps each axis of `args[k]` to an output axis or a
    /// reduction index; the output axes used must be `0..m` and the reduction indices `0..r`, with
    /// lengths that agree (or are 1, which broadcasts). One operand may use an index on several
    /// axes (`ii->i` reads a diagonal). Missing reduction descriptors are empty.
    #[track_caller]
    pub fn new_einsum(
        access: Vec<Vec<EinsumAxis>>,
        args: Vec<Array>,
        mut reduction_descriptors: BTreeMap<usize, ReductionDescriptor>,
    ) -> Result<Array> {
        let _site = crate::created_at::enter();
        let op = "Einsum";
        if args.is_empty() || access.len() != args.len() {
            return Err(Error::invalid(op, format!("{} access descriptors for {} operands", access.len(), args.len())));
        }
        let mut lengths: BTreeMap<EinsumAxis, Dim> = BTreeMap::new();
        for (k, (acc, arg)) in access.iter().zip(&args).enumerate() {
            if acc.len() != arg.ndim() {
                return Err(Error::ShapeMismatch {
                    op: op.into(),
                    expected: format!("{} axes for operand {k}", acc.len()),
                    got: arg.shape().clone(),
                });
            }
            for (idx, len) in acc.iter().zip(arg.shape().dims()) {
                match lengths.get(idx) {
                    None => {
                        lengths.insert(*idx, len.clone());
                    }
                    Some(l) if l == len || *len == Dim::new(1) => {}
                    Some(l) if *l == Dim::new(1) => {
                        lengths.insert(*idx, len.clone());
                    }
                    Some(l) => {
                        return Err(Error::ShapeMismatch {
                            op: op.into(),
                            expected: format!("length {l} for index {idx:?} of operand {k}"),
                            got: arg.shape().clone(),
                        });
                    }
                }
            }
        }
        let out: Vec<usize> =
            lengths.keys().filter_map(|k| if let EinsumAxis::Elementwise(i) = k { Some(*i) } else { None }).collect();
        let red: Vec<usize> =
            lengths.keys().filter_map(|k| if let EinsumAxis::Reduction(i) = k { Some(*i) } else { None }).collect();
        if out.iter().enumerate().any(|(i, &j)| i != j) || red.iter().enumerate().any(|(i, &j)| i != j) {
            return Err(Error::invalid(
                op,
                format!("indices must be numbered from 0 without gaps: output {out:?}, reduction {red:?}"),
            ));
        }
        if let Some(extra) = reduction_descriptors.keys().find(|k| !red.contains(k)) {
            return Err(Error::invalid(op, format!("reduction descriptor for unknown reduction index {extra}")));
        }
        for r in &red {
            reduction_descriptors.entry(*r).or_default();
        }
        let shape: Shape = out.iter().map(|i| lengths[&EinsumAxis::Elementwise(*i)].clone()).collect();
        let dtype = result_type_many(args.iter().map(Array::dtype)).expect("at least one operand");
        Ok(Array::fresh(NodeKind::Einsum(Einsum { access, args, reduction_descriptors }), shape, dtype))
    }

    /// `array` reshaped to `shape` in `order`; the sizes must agree (as polynomials in the size
    /// parameters, for symbolic shapes).
    #[track_caller]
    pub fn new_reshape(array: &Array, shape: Shape, order: Order) -> Result<Array> {
        let _site = crate::created_at::enter();
        let op = "Reshape";
        shape.validate(op)?;
        if SizePolynomial::of(&shape, op)? != SizePolynomial::of(array.shape(), op)? {
            return Err(Error::ShapeMismatch {
                op: op.into(),
                expected: format!("a shape with as many elements as {}", shape),
                got: array.shape().clone(),
            });
        }
        Ok(Array::fresh(NodeKind::Reshape { array: array.clone(), order }, shape, array.dtype()))
    }

    /// `numpy.roll(array, shift, axis)`.
    #[track_caller]
    pub fn new_roll(array: &Array, shift: i64, axis: usize) -> Result<Array> {
        let _site = crate::created_at::enter();
        check_axis("Roll", axis, array.shape())?;
        Ok(Array::fresh(NodeKind::Roll { array: array.clone(), shift, axis }, array.shape().clone(), array.dtype()))
    }

    /// `numpy.transpose(array, axes)`; `axes` must be a permutation of `0..ndim`.
    #[track_caller]
    pub fn new_axis_permutation(array: &Array, axes: Vec<usize>) -> Result<Array> {
        let _site = crate::created_at::enter();
        let ndim = array.ndim();
        let mut seen = vec![false; ndim];
        let valid = axes.len() == ndim && axes.iter().all(|&a| a < ndim && !std::mem::replace(&mut seen[a], true));
        if !valid {
            return Err(Error::invalid(
                "AxisPermutation",
                format!("{axes:?} is not a permutation of the axes of an array of shape {}", array.shape()),
            ));
        }
        let shape: Shape = axes.iter().map(|&a| array.shape()[a].clone()).collect();
        Ok(Array::fresh(NodeKind::AxisPermutation { array: array.clone(), axes }, shape, array.dtype()))
    }

    /// `numpy.stack(arrays, axis)`: the arrays must share one shape; the dtype is their result type.
    #[track_caller]
    pub fn new_stack(arrays: Vec<Array>, axis: usize) -> Result<Array> {
        let _site = crate::created_at::enter();
        let op = "Stack";
        let first = arrays.first().ok_or_else(|| Error::invalid(op, "needs at least one array"))?;
        if axis > first.ndim() {
            return Err(Error::AxisOutOfRange { op: op.into(), axis: axis as i64, shape: first.shape().clone() });
        }
        if let Some(bad) = arrays.iter().find(|a| a.shape() != first.shape()) {
            return Err(Error::ShapeMismatch {
                op: op.into(),
                expected: format!("every array of shape {}", first.shape()),
                got: bad.shape().clone(),
            });
        }
        let mut dims = first.shape().dims().to_vec();
        dims.insert(axis, Dim::from(arrays.len()));
        let dtype = result_type_many(arrays.iter().map(Array::dtype)).expect("non-empty");
        Ok(Array::fresh(NodeKind::Stack { arrays, axis }, dims.into(), dtype))
    }

    /// `numpy.concatenate(arrays, axis)`: every axis but `axis` must agree.
    #[track_caller]
    pub fn new_concatenate(arrays: Vec<Array>, axis: usize) -> Result<Array> {
        let _site = crate::created_at::enter();
        let op = "Concatenate";
        let first = arrays.first().ok_or_else(|| Error::invalid(op, "needs at least one array"))?;
        check_axis(op, axis, first.shape())?;
        let mut length = Dim::new(0);
        for a in &arrays {
            let compatible =
                a.ndim() == first.ndim() && (0..a.ndim()).all(|i| i == axis || a.shape()[i] == first.shape()[i]);
            if !compatible {
                return Err(Error::ShapeMismatch {
                    op: op.into(),
                    expected: format!("shape {} outside axis {axis}", first.shape()),
                    got: a.shape().clone(),
                });
            }
            length = length.add(&a.shape()[axis])?;
        }
        let mut dims = first.shape().dims().to_vec();
        dims[axis] = length;
        let dtype = result_type_many(arrays.iter().map(Array::dtype)).expect("non-empty");
        Ok(Array::fresh(NodeKind::Concatenate { arrays, axis }, dims.into(), dtype))
    }

    /// Indexing by integers and normalized slices, one per axis.
    #[track_caller]
    pub fn new_basic_index(array: &Array, indices: Vec<IndexItem>) -> Result<Array> {
        let _site = crate::created_at::enter();
        let op = "BasicIndex";
        if indices.iter().any(|i| matches!(i, IndexItem::Array(_))) {
            return Err(Error::invalid(op, "index arrays need an advanced index node"));
        }
        let shape = index_result_shape(op, array, &indices, false)?;
        Ok(Array::fresh(NodeKind::BasicIndex { array: array.clone(), indices }, shape, array.dtype()))
    }

    /// Advanced indexing whose array (and integer) indices are adjacent.
    #[track_caller]
    pub fn new_advanced_index_contiguous(array: &Array, indices: Vec<IndexItem>) -> Result<Array> {
        let _site = crate::created_at::enter();
        let op = "AdvancedIndexInContiguousAxes";
        if !advanced_indices_contiguous(op, &indices)? {
            return Err(Error::invalid(
                op,
                "the advanced indices are not adjacent; use AdvancedIndexInNoncontiguousAxes",
            ));
        }
        let shape = index_result_shape(op, array, &indices, true)?;
        Ok(Array::fresh(
            NodeKind::AdvancedIndexInContiguousAxes { array: array.clone(), indices },
            shape,
            array.dtype(),
        ))
    }

    /// Advanced indexing whose array (and integer) indices are separated by a slice.
    #[track_caller]
    pub fn new_advanced_index_noncontiguous(array: &Array, indices: Vec<IndexItem>) -> Result<Array> {
        let _site = crate::created_at::enter();
        let op = "AdvancedIndexInNoncontiguousAxes";
        if advanced_indices_contiguous(op, &indices)? {
            return Err(Error::invalid(op, "the advanced indices are adjacent; use AdvancedIndexInContiguousAxes"));
        }
        let shape = index_result_shape(op, array, &indices, false)?;
        Ok(Array::fresh(
            NodeKind::AdvancedIndexInNoncontiguousAxes { array: array.clone(), indices },
            shape,
            array.dtype(),
        ))
    }

    /// The positions of the `true` elements of `mask`, counted by the size variable `count`; see
    /// [`NodeKind::Nonzero`]. The frontend's `pytato_frontend::nonzero` names the count.
    #[track_caller]
    pub fn new_nonzero(mask: &Array, count: &str) -> Result<Array> {
        let _site = crate::created_at::enter();
        let op = "Nonzero";
        if mask.dtype() != DType::Bool || mask.ndim() == 0 {
            return Err(Error::invalid(
                op,
                format!(
                    "the mask must be a boolean array of at least one axis, got {} of shape {}",
                    mask.dtype(),
                    mask.shape()
                ),
            ));
        }
        if !crate::names::is_identifier(count) {
            return Err(Error::InvalidName { what: "count".into(), name: count.to_string() });
        }
        let ndim = i64::try_from(mask.ndim()).expect("few axes");
        let shape = Shape::from(vec![Dim::new(ndim), Dim::param(count)]);
        Ok(Array::fresh(NodeKind::Nonzero { mask: mask.clone(), count: count.into() }, shape, DType::I64))
    }

    /// `array` sorted along `axis`, or the indices that sort it; see [`NodeKind::Sort`]. The
    /// frontend's `pytato_frontend::sort` and `pytato_frontend::argsort` take
    /// numpy's arguments.
    #[track_caller]
    pub fn new_sort(array: &Array, axis: usize, descending: bool, result: SortResult) -> Result<Array> {
        let _site = crate::created_at::enter();
        check_axis("Sort", axis, array.shape())?;
        let dtype = match result {
            SortResult::Values => array.dtype(),
            SortResult::Indices => DType::I64,
        };
        Ok(Array::fresh(
            NodeKind::Sort { array: array.clone(), axis, descending, result },
            array.shape().clone(),
            dtype,
        ))
    }

    /// Running sums or products of `array` along `axis`; see [`NodeKind::Scan`]. The frontend's
    /// `pytato_frontend::cumulative_sum` chooses the dtype first.
    #[track_caller]
    pub fn new_scan(array: &Array, axis: usize, op: ScanOp) -> Result<Array> {
        let _site = crate::created_at::enter();
        check_axis("Scan", axis, array.shape())?;
        if array.dtype() == DType::Bool {
            return Err(Error::unsupported_dtype("Scan", DType::Bool, "scans accumulate numbers; cast booleans first"));
        }
        Ok(Array::fresh(NodeKind::Scan { array: array.clone(), axis, op }, array.shape().clone(), array.dtype()))
    }

    /// Where each of `values` goes in the sorted 1-d `sorted`; see [`NodeKind::SearchSorted`].
    /// The frontend's `pytato_frontend::searchsorted` promotes the dtypes first.
    #[track_caller]
    pub fn new_search_sorted(sorted: &Array, values: &Array, side: Side) -> Result<Array> {
        let _site = crate::created_at::enter();
        let op = "SearchSorted";
        if sorted.ndim() != 1 {
            return Err(Error::invalid(op, format!("the sorted array must be 1-d, got shape {}", sorted.shape())));
        }
        if sorted.dtype() != values.dtype() {
            return Err(Error::DTypeMismatch { op: op.into(), lhs: sorted.dtype(), rhs: values.dtype() });
        }
        Ok(Array::fresh(
            NodeKind::SearchSorted { sorted: sorted.clone(), values: values.clone(), side },
            values.shape().clone(),
            DType::I64,
        ))
    }

    /// `array` with `values` written to (or added at) the flat `positions`; see
    /// [`NodeKind::Scatter`].
    #[track_caller]
    pub fn new_scatter(array: &Array, positions: &Array, values: &Array, mode: ScatterMode) -> Result<Array> {
        let _site = crate::created_at::enter();
        let op = "Scatter";
        if positions.dtype() != DType::I64 {
            return Err(Error::unsupported_dtype(op, positions.dtype(), "scatter positions are int64"));
        }
        if mode == ScatterMode::Set && values.dtype() != array.dtype() {
            return Err(Error::DTypeMismatch { op: op.into(), lhs: array.dtype(), rhs: values.dtype() });
        }
        if positions.shape() != values.shape() {
            return Err(Error::ShapeMismatch {
                op: op.into(),
                expected: format!("values of the positions' shape {}", positions.shape()),
                got: values.shape().clone(),
            });
        }
        Ok(Array::fresh(
            NodeKind::Scatter { array: array.clone(), positions: positions.clone(), values: values.clone(), mode },
            array.shape().clone(),
            array.dtype(),
        ))
    }

    /// The array rank `src_rank` sends with `comm_tag`; see [`NodeKind::DistributedRecv`]. The shape
    /// must be concrete (no size parameters): the data that arrives is checked against it.
    #[track_caller]
    pub fn new_distributed_recv(src_rank: usize, comm_tag: CommTag, shape: Shape, dtype: DType) -> Result<Array> {
        let _site = crate::created_at::enter();
        let op = "make_distributed_recv";
        shape.validate(op)?;
        if !shape.is_concrete() {
            return Err(Error::invalid(
                op,
                format!("the shape of a receive must be concrete, got {shape} (from rank {src_rank}, tag {comm_tag})"),
            ));
        }
        Ok(Array::fresh(NodeKind::DistributedRecv { src_rank, comm_tag }, shape, dtype))
    }

    /// `passthrough` carrying `send`; see [`NodeKind::DistributedSendRefHolder`].
    #[track_caller]
    pub fn new_distributed_send_ref_holder(send: DistributedSend, passthrough: &Array) -> Result<Array> {
        let _site = crate::created_at::enter();
        Ok(Array::fresh(
            NodeKind::DistributedSendRefHolder { send, passthrough: passthrough.clone() },
            passthrough.shape().clone(),
            passthrough.dtype(),
        ))
    }

    /// The result `name` of calling `function` with `bindings` (one per parameter, in parameter
    /// name order, each of the parameter's dtype and shape); see [`crate::function`].
    #[track_caller]
    pub fn new_call_result(function: &Function, bindings: Vec<Array>, name: &str) -> Result<Array> {
        let _site = crate::created_at::enter();
        let op = "call";
        let params: Vec<(&str, &Array)> = function.parameters().collect();
        if params.len() != bindings.len() {
            return Err(Error::invalid(
                op,
                format!("{} arguments for a function of {} parameters", bindings.len(), params.len()),
            ));
        }
        for ((pname, p), a) in params.iter().zip(&bindings) {
            if p.dtype() != a.dtype() || p.shape() != a.shape() {
                return Err(Error::invalid(
                    op,
                    format!(
                        "the parameter {pname:?} is {} of shape {}, the argument {} of shape {}",
                        p.dtype(),
                        p.shape(),
                        a.dtype(),
                        a.shape()
                    ),
                ));
            }
        }
        let result = function.returns().get(name).ok_or_else(|| {
            Error::invalid(
                op,
                format!("no result {name:?}; the function returns {:?}", function.returns().keys().collect::<Vec<_>>()),
            )
        })?;
        let (shape, dtype) = (result.shape().clone(), result.dtype());
        Ok(Array::fresh(NodeKind::CallResult { function: function.clone(), bindings, name: name.into() }, shape, dtype))
    }

    /// The entry `name` of `container`, as an array.
    #[track_caller]
    pub fn new_named_array(container: &DictOfNamedArrays, name: &str) -> Result<Array> {
        let _site = crate::created_at::enter();
        let entry = container.get(name).ok_or_else(|| {
            Error::invalid(
                "NamedArray",
                format!("no entry {name:?}; entries are {:?}", container.names().collect::<Vec<_>>()),
            )
        })?;
        let (shape, dtype) = (entry.shape().clone(), entry.dtype());
        Ok(Array::fresh(NodeKind::NamedArray { container: container.clone(), name: name.into() }, shape, dtype))
    }
}

fn check_axis(op: &str, axis: usize, shape: &Shape) -> Result<()> {
    if axis < shape.ndim() {
        Ok(())
    } else {
        Err(Error::AxisOutOfRange { op: op.into(), axis: axis as i64, shape: shape.clone() })
    }
}

/// numpy's rule: with at least one index array, integer indices count as (0-d) advanced indices too.
/// Returns whether the advanced positions are adjacent; an error if there are none.
fn advanced_indices_contiguous(op: &str, indices: &[IndexItem]) -> Result<bool> {
    let positions: Vec<usize> =
        indices.iter().enumerate().filter(|(_, i)| !matches!(i, IndexItem::Slice(_))).map(|(p, _)| p).collect();
    if !indices.iter().any(|i| matches!(i, IndexItem::Array(_))) {
        return Err(Error::invalid(op, "needs at least one index array"));
    }
    Ok(positions.windows(2).all(|w| w[1] == w[0] + 1))
}

/// The result shape of indexing `array` by `indices` (one per axis). Advanced index shapes are
/// broadcast together and placed where the first advanced index stands (`in_place`) or in front.
fn index_result_shape(op: &str, array: &Array, indices: &[IndexItem], in_place: bool) -> Result<Shape> {
    let shape = array.shape();
    if indices.len() != shape.ndim() {
        return Err(Error::invalid(op, format!("{} indices for an array of shape {shape}", indices.len())));
    }
    let has_arrays = indices.iter().any(|i| matches!(i, IndexItem::Array(_)));
    let mut index_shapes = Vec::new();
    for item in indices {
        if let IndexItem::Array(idx) = item {
            if !idx.dtype().is_integer() {
                return Err(Error::unsupported_dtype(op, idx.dtype(), "index arrays must have an integer dtype"));
            }
            index_shapes.push(idx.shape());
        }
    }
    let scalar = Shape::scalar();
    if has_arrays && indices.iter().any(|i| matches!(i, IndexItem::Int(_))) {
        index_shapes.push(&scalar);
    }
    let broadcast = broadcast_shapes(op, &index_shapes)?;
    let mut out: Vec<Dim> = Vec::new();
    let mut placed = false;
    for (axis, (item, len)) in indices.iter().zip(shape.dims()).enumerate() {
        match item {
            IndexItem::Int(i) => check_int_index(op, i, axis, len, shape)?,
            IndexItem::Slice(s) => {
                check_slice(op, s, axis, len, shape)?;
                out.push(s.length(op)?);
                continue;
            }
            IndexItem::Array(_) => {}
        }
        if has_arrays && in_place && !placed {
            out.extend(broadcast.dims().iter().cloned());
            placed = true;
        }
    }
    if has_arrays && !in_place {
        let mut all = broadcast.into_dims();
        all.extend(out);
        out = all;
    }
    Ok(out.into())
}

fn check_int_index(op: &str, i: &Dim, axis: usize, len: &Dim, shape: &Shape) -> Result<()> {
    let out_of_range = || Error::IndexOutOfRange {
        op: op.into(),
        index: i.constant(),
        axis,
        length: len.to_string(),
        shape: shape.clone(),
    };
    if i.is_provably_negative() || len.sub(i)?.sub(&Dim::new(1))?.is_provably_negative() {
        return Err(out_of_range());
    }
    Ok(())
}

fn check_slice(op: &str, s: &NormalizedSlice, axis: usize, len: &Dim, shape: &Shape) -> Result<()> {
    if s.step == 0 {
        return Err(Error::invalid(op, format!("slice step 0 on axis {axis}")));
    }
    let n = s.length(op)?;
    if n.as_int() == Some(0) {
        return Ok(());
    }
    // First and last selected indices must lie in 0..len.
    let last = s.start.add(&n.sub(&Dim::new(1))?.mul_int(s.step)?)?;
    for idx in [&s.start, &last] {
        check_int_index(op, idx, axis, len, shape)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// DictOfNamedArrays.

impl DictOfNamedArrays {
    /// Named results; names must be valid output names and distinct.
    ///
    /// ```
    /// use pytato_core::{Array, DType, Shape, DictOfNamedArrays};
    /// let x = Array::new_placeholder(Some("x"), Shape::from([3]), DType::F64).unwrap();
    /// let d = DictOfNamedArrays::new([("out", x.clone())]).unwrap();
    /// assert!(d.get("out").unwrap().ptr_eq(&x));
    /// ```
    pub fn new<'a>(entries: impl IntoIterator<Item = (&'a str, Array)>) -> Result<DictOfNamedArrays> {
        let mut map = BTreeMap::new();
        for (name, array) in entries {
            names::check_array_name("output", name)?;
            if map.insert(Arc::<str>::from(name), array).is_some() {
                return Err(Error::invalid("DictOfNamedArrays", format!("output name {name:?} given twice")));
            }
        }
        Ok(DictOfNamedArrays::from_map(map, TagSet::new()))
    }

    fn from_map(entries: BTreeMap<Arc<str>, Array>, tags: TagSet) -> DictOfNamedArrays {
        let mut h = DefaultHasher::new();
        entries.hash(&mut h);
        tags.hash(&mut h);
        let hash = h.finish();
        DictOfNamedArrays(Arc::new(DictInner { entries, tags, hash }))
    }

    /// The entry `name`.
    pub fn get(&self, name: &str) -> Option<&Array> {
        self.0.entries.get(name)
    }
    /// The names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.entries.keys().map(|k| &**k)
    }
    /// `(name, array)` pairs, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Array)> {
        self.0.entries.iter().map(|(k, v)| (&**k, v))
    }
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.0.entries.len()
    }
    /// `true` when there are no entries.
    pub fn is_empty(&self) -> bool {
        self.0.entries.is_empty()
    }
    /// The tags.
    pub fn tags(&self) -> &TagSet {
        &self.0.tags
    }
    /// The dictionary with `tag` added.
    pub fn tagged(&self, tag: impl Tag) -> Result<DictOfNamedArrays> {
        self.tagged_ref(TagRef::new(tag))
    }

    /// The dictionary with an already-shared `tag` added.
    pub fn tagged_ref(&self, tag: TagRef) -> Result<DictOfNamedArrays> {
        Ok(DictOfNamedArrays::from_map(self.0.entries.clone(), self.0.tags.with_ref(tag)?))
    }
}

impl PartialEq for DictOfNamedArrays {
    fn eq(&self, other: &DictOfNamedArrays) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
            || (self.0.hash == other.0.hash
                && self.0.tags == other.0.tags
                && self.0.entries.keys().eq(other.0.entries.keys())
                && structurally_equal(
                    self.0.entries.values().cloned().zip(other.0.entries.values().cloned()).collect(),
                ))
    }
}
impl Eq for DictOfNamedArrays {}

impl Hash for DictOfNamedArrays {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.hash);
    }
}

// ---------------------------------------------------------------------------------------------
// Inputs.

/// The inputs of a DAG, by name.
#[derive(Clone, Default)]
pub struct Inputs {
    /// Named placeholders, size parameters and data wrappers.
    pub named: BTreeMap<String, Array>,
    /// Unnamed placeholders and data wrappers, in the order first met.
    pub unnamed: Vec<Array>,
    /// The size parameters the DAG mentions (in shapes, indices, reduction bounds, size checks),
    /// counts included.
    pub size_params: BTreeSet<String>,
}

impl Inputs {
    /// The names programs give the unnamed placeholders, by node id: `_pt_in<k>`, numbered in the
    /// order they were met, skipping the names the DAG's inputs have (see
    /// [`names::fresh_name`]). Every program of one DAG (and every phase or part of it) agrees on
    /// them.
    pub fn unnamed_placeholder_names(&self) -> impl Iterator<Item = (usize, String)> + '_ {
        let mut taken = self.taken_names();
        self.unnamed
            .iter()
            .filter(|a| matches!(a.kind(), NodeKind::Placeholder { .. }))
            .map(move |a| (a.id(), names::fresh_name("_pt_in", 0, &mut taken)))
    }

    /// Every name the DAG uses for an input: named placeholders, data wrappers and size
    /// parameters (also those only shapes mention). Names the library generates avoid them.
    pub fn taken_names(&self) -> BTreeSet<String> {
        self.named.keys().chain(&self.size_params).cloned().collect()
    }
}

/// Collects the inputs of the DAGs rooted at `roots`.
///
/// Two inputs with one name must be the same input (structurally equal: the same placeholder
/// declared twice is one input), and no placeholder or data wrapper may be named like a size
/// parameter the DAG uses (in a shape, an index or a reduction bound); otherwise this is
/// [`Error::DuplicateName`], naming both.
pub fn collect_inputs<'a>(roots: impl IntoIterator<Item = &'a Array>) -> Result<Inputs> {
    let mut inputs = Inputs::default();
    let mut unnamed_seen = HashSet::new();
    // Size parameters by name, with the first node that mentions each: a placeholder or data
    // wrapper may not share a name with one (the program would have two values for `n`).
    let mut size_params: BTreeMap<String, Array> = BTreeMap::new();
    // Counts by name: one count, one mask (equal masks are one count).
    let mut counts: BTreeMap<String, Array> = BTreeMap::new();
    for node in unique_nodes(roots) {
        if let NodeKind::Nonzero { count, .. } = node.kind() {
            match counts.get(&**count) {
                Some(first) if *first != node => {
                    return Err(Error::DuplicateName {
                        name: count.to_string(),
                        first: format!("the count of {}", first.summary()),
                        second: format!("the count of {}", node.summary()),
                    });
                }
                Some(_) => {}
                None => {
                    counts.insert(count.to_string(), node.clone());
                }
            }
        }
        let mut mentioned = BTreeSet::new();
        crate::size_check::node_size_params(&node, &mut mentioned);
        for p in mentioned {
            size_params.entry(p).or_insert_with(|| node.clone());
        }
        if !node.is_input() {
            continue;
        }
        match node.name() {
            None => {
                if unnamed_seen.insert(node.id()) {
                    inputs.unnamed.push(node.clone());
                }
            }
            Some(name) => match inputs.named.get(name) {
                Some(existing) if *existing != node => {
                    return Err(Error::DuplicateName {
                        name: name.to_string(),
                        first: existing.summary(),
                        second: node.summary(),
                    });
                }
                Some(_) => {}
                None => {
                    inputs.named.insert(name.to_string(), node.clone());
                }
            },
        }
    }
    inputs.size_params = size_params.keys().cloned().collect();
    // A `SizeParam` named like a count reads the count's value (as `mean` of a selection does); a
    // placeholder or data wrapper named so is caught below: counts are in shapes.
    for (name, input) in &inputs.named {
        if matches!(input.kind(), NodeKind::Placeholder { .. } | NodeKind::DataWrapper { .. })
            && let Some(user) = size_params.get(name)
        {
            return Err(Error::DuplicateName {
                name: name.clone(),
                first: input.summary(),
                second: format!("the size parameter {name} of {}", user.summary()),
            });
        }
    }
    Ok(inputs)
}

/// A hasher for node ids ([`Array::id`], which are addresses): one multiplication, far cheaper
/// than SipHash on the million-entry tables that traversals keep. Not for untrusted keys.
#[derive(Default, Clone, Copy)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_usize(&mut self, i: usize) {
        // Addresses are aligned: fold the high bits down so the low bits the table uses vary.
        let x = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = x ^ (x >> 29);
    }
}

/// A map keyed by [`Array::id`].
pub type IdMap<V> = std::collections::HashMap<usize, V, std::hash::BuildHasherDefault<IdHasher>>;
/// A set of [`Array::id`]s.
pub type IdSet = std::collections::HashSet<usize, std::hash::BuildHasherDefault<IdHasher>>;

/// Every distinct node (by identity) reachable from `roots` through `children`, each after all of
/// its children (a topological order of the data flow). Iterative: any depth is fine.
pub fn post_order<'a>(
    roots: impl IntoIterator<Item = &'a Array>,
    mut children: impl FnMut(&Array) -> Vec<&Array>,
) -> Vec<Array> {
    let mut order = Vec::new();
    let mut done = IdSet::default();
    // (node, children pushed?): a node is emitted once all its children have been.
    let mut stack: Vec<(Array, bool)> = roots.into_iter().map(|r| (r.clone(), false)).collect();
    stack.reverse();
    while let Some((node, expanded)) = stack.pop() {
        if done.contains(&node.id()) {
            continue;
        }
        if expanded {
            done.insert(node.id());
            order.push(node);
            continue;
        }
        let pending: Vec<Array> = children(&node).into_iter().filter(|c| !done.contains(&c.id())).cloned().collect();
        stack.push((node, true));
        stack.extend(pending.into_iter().rev().map(|c| (c, false)));
    }
    order
}

/// Every distinct node (by identity) reachable from `roots`, parents before children.
pub fn unique_nodes<'a>(roots: impl IntoIterator<Item = &'a Array>) -> Vec<Array> {
    let mut seen = IdSet::default();
    let mut stack: Vec<Array> = roots.into_iter().cloned().collect();
    stack.reverse();
    let mut out = Vec::new();
    while let Some(a) = stack.pop() {
        if !seen.insert(a.id()) {
            continue;
        }
        stack.extend(a.children().into_iter().rev().cloned());
        out.push(a);
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Display.

/// How deep `Debug`/`Display` descend before writing `…`.
pub const REPR_DEPTH: usize = 3;

impl Array {
    /// A one-line description: kind, name, shape and dtype.
    pub fn summary(&self) -> String {
        let mut s = format!("{}(", self.kind_name());
        if let Some(n) = self.name() {
            s += &format!("name={n:?}, ");
        }
        s += &format!("shape={}, dtype={})", self.shape(), self.dtype());
        if let Some(site) = self.tags().of_type::<crate::created_at::CreatedAt>().next() {
            s += &format!(" created at {site}");
        }
        s
    }

    /// The repr of the DAG down to `depth` levels (deeper arrays print as `…`).
    pub fn repr(&self, depth: usize) -> String {
        let mut s = String::new();
        self.write_repr(&mut s, depth).expect("writing to a String");
        s
    }

    fn write_repr(&self, f: &mut impl fmt::Write, depth: usize) -> fmt::Result {
        if depth == 0 {
            return f.write_str("…");
        }
        write!(f, "{}(", self.kind_name())?;
        let child = |f: &mut dyn fmt::Write, a: &Array| -> fmt::Result {
            let mut s = String::new();
            a.write_repr(&mut s, depth - 1)?;
            f.write_str(&s)
        };
        let list = |f: &mut dyn fmt::Write, arrays: &[Array]| -> fmt::Result {
            f.write_str("[")?;
            for (i, a) in arrays.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                child(f, a)?;
            }
            f.write_str("]")
        };
        match self.kind() {
            NodeKind::Placeholder { name } | NodeKind::DataWrapper { name, .. } => {
                if let Some(n) = name {
                    write!(f, "name={n:?}, ")?;
                }
            }
            NodeKind::SizeParam { name } => write!(f, "name={name:?}, ")?,
            NodeKind::IndexLambda(il) => {
                write!(f, "expr={}, bindings={{", il.expr)?;
                for (i, (name, a)) in il.bindings.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{name}: ")?;
                    child(f, a)?;
                }
                f.write_str("}, ")?;
            }
            NodeKind::Einsum(e) => {
                write!(f, "access={:?}, args=", e.access)?;
                list(f, &e.args)?;
                f.write_str(", ")?;
            }
            NodeKind::Reshape { array, order } => {
                write!(f, "order={order:?}, array=")?;
                child(f, array)?;
                f.write_str(", ")?;
            }
            NodeKind::Roll { array, shift, axis } => {
                write!(f, "shift={shift}, axis={axis}, array=")?;
                child(f, array)?;
                f.write_str(", ")?;
            }
            NodeKind::AxisPermutation { array, axes } => {
                write!(f, "axes={axes:?}, array=")?;
                child(f, array)?;
                f.write_str(", ")?;
            }
            NodeKind::Stack { arrays, axis } | NodeKind::Concatenate { arrays, axis } => {
                write!(f, "axis={axis}, arrays=")?;
                list(f, arrays)?;
                f.write_str(", ")?;
            }
            NodeKind::BasicIndex { array, indices }
            | NodeKind::AdvancedIndexInContiguousAxes { array, indices }
            | NodeKind::AdvancedIndexInNoncontiguousAxes { array, indices } => {
                f.write_str("array=")?;
                child(f, array)?;
                f.write_str(", indices=(")?;
                for (i, item) in indices.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    match item {
                        IndexItem::Int(d) => write!(f, "{d}")?,
                        IndexItem::Slice(s) => write!(f, "{}:{}:{}", s.start, s.stop, s.step)?,
                        IndexItem::Array(a) => child(f, a)?,
                    }
                }
                f.write_str("), ")?;
            }
            NodeKind::Nonzero { mask, count } => {
                write!(f, "count={count}, mask=")?;
                child(f, mask)?;
                f.write_str(", ")?;
            }
            NodeKind::Sort { array, axis, descending, result } => {
                write!(f, "axis={axis}, descending={descending}, result={result:?}, array=")?;
                child(f, array)?;
                f.write_str(", ")?;
            }
            NodeKind::SearchSorted { sorted, values, side } => {
                write!(f, "side={side:?}, sorted=")?;
                child(f, sorted)?;
                f.write_str(", values=")?;
                child(f, values)?;
                f.write_str(", ")?;
            }
            NodeKind::Scan { array, axis, op } => {
                write!(f, "axis={axis}, op={op:?}, array=")?;
                child(f, array)?;
                f.write_str(", ")?;
            }
            NodeKind::Scatter { array, positions, values, mode } => {
                write!(f, "mode={mode:?}, array=")?;
                child(f, array)?;
                f.write_str(", positions=")?;
                child(f, positions)?;
                f.write_str(", values=")?;
                child(f, values)?;
                f.write_str(", ")?;
            }
            NodeKind::DistributedRecv { src_rank, comm_tag } => {
                write!(f, "src_rank={src_rank}, comm_tag={comm_tag}, ")?
            }
            NodeKind::DistributedSendRefHolder { send, passthrough } => {
                write!(f, "dest_rank={}, comm_tag={}, data=", send.dest_rank, send.comm_tag)?;
                child(f, &send.data)?;
                f.write_str(", passthrough=")?;
                child(f, passthrough)?;
                f.write_str(", ")?;
            }
            NodeKind::CallResult { function, bindings, name } => {
                write!(f, "name={name:?}, function={function:?}, bindings=")?;
                list(f, bindings)?;
                f.write_str(", ")?;
            }
            NodeKind::NamedArray { container, name } => {
                write!(f, "name={name:?}, container={:?}, ", container.names().collect::<Vec<_>>())?;
            }
        }
        write!(f, "shape={}, dtype={}", self.shape(), self.dtype())?;
        if !self.tags().is_empty() {
            write!(f, ", tags={}", self.tags())?;
        }
        if self.axes().iter().any(|a| !a.tags.is_empty()) {
            let axes: Vec<String> = self.axes().iter().map(|a| a.tags.to_string()).collect();
            write!(f, ", axes=[{}]", axes.join(", "))?;
        }
        f.write_str(")")
    }
}

impl fmt::Debug for Array {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.repr(REPR_DEPTH))
    }
}

impl fmt::Display for Array {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.repr(REPR_DEPTH))
    }
}

impl fmt::Debug for DictOfNamedArrays {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DictOfNamedArrays({")?;
        for (i, (name, a)) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{name:?}: {}", a.repr(REPR_DEPTH - 1))?;
        }
        f.write_str("})")
    }
}

// Handles cross threads: programs compile and run DAGs on worker threads.
const _: () = {
    const fn check<T: Send + Sync>() {}
    check::<Array>();
    check::<DictOfNamedArrays>();
};
