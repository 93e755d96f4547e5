//! Partitioning a DAG at its sends and receives.
//!
//! Every node depends on some set of receives (the receives among its transitive children). Nodes
//! with the same set, and on the same side of the line between what a send needs (the sent
//! arrays and everything they are computed from) and the rest, form one *part*: a part can run as
//! soon as the receives in its set have arrived and the parts it reads from have run. The parts
//! that feed sends come first, those with smaller sets first (a part reads only from parts whose
//! set is a subset of its own, and nothing a send needs reads the rest), then the others: the
//! part that needs no receive computes what other ranks wait for first, its sends go out, and
//! the work no send needs (a DG operator's interior) runs while messages are in flight.
//!
//! Each part is an ordinary DAG a backend compiles: a receive becomes a placeholder named
//! `_pt_dist_recv<k>` (the seed's `_pt_dist` namespace), a value one part computes and another
//! reads is an output `_pt_dist_part<j>` of the first and a placeholder of the second, and send
//! holders are replaced by the array they hold. User inputs (placeholders, size parameters) and
//! data wrappers appear in every part that uses them, and a small elementwise value whose own
//! inputs are already at hand is computed again where it is read instead of crossing parts.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use pytato_core::array::{IdMap, collect_inputs, post_order};
use pytato_core::distributed::CommTag;
use pytato_core::names::fresh_name;
use pytato_core::tags::ImplStored;
use pytato_core::{Array, DType, DictOfNamedArrays, Error, NodeKind, Result, Shape};
use pytato_runtime::backend::Outputs;

/// The prefix of the placeholders that stand for received arrays.
pub const RECV_PREFIX: &str = "_pt_dist_recv";
/// The prefix of the values one part computes for another (or for a send or an output).
pub const PART_VALUE_PREFIX: &str = "_pt_dist_part";

/// A receive of the partitioned DAG.
#[derive(Clone, Debug, PartialEq)]
pub struct Receive {
    /// The placeholder name the received array has in the parts (`_pt_dist_recv<k>`).
    pub name: String,
    /// The sending rank.
    pub src_rank: usize,
    /// The message's tag.
    pub comm_tag: CommTag,
    /// The declared shape (concrete).
    pub shape: Shape,
    /// The declared dtype.
    pub dtype: DType,
    /// The receive node, for messages.
    pub node: Array,
}

/// A send of the partitioned DAG.
#[derive(Clone, Debug, PartialEq)]
pub struct Send {
    /// The name of the sent value: a user input, a received array, or a part's output.
    pub data: String,
    /// The part that computes it (`None` for a user input or a received array, sent as soon as
    /// it is there).
    pub part: Option<usize>,
    /// The destination rank.
    pub dest_rank: usize,
    /// The message's tag.
    pub comm_tag: CommTag,
    /// The sent array's shape and dtype.
    pub shape: Shape,
    /// The sent array's dtype.
    pub dtype: DType,
    /// The sent array, for messages.
    pub node: Array,
}

/// One part: a DAG a backend compiles, and what it reads.
#[derive(Clone, Debug, PartialEq)]
pub struct DistributedPart {
    /// The part's index in [`DistributedPartition::parts`].
    pub id: usize,
    /// What it computes: value `_pt_dist_part<j>` is output `part<j>` ([`output_key`]; output
    /// names are the user's namespace).
    pub outputs: DictOfNamedArrays,
    /// The receives it reads (names of [`Receive`]s).
    pub received: BTreeSet<String>,
    /// The parts whose outputs it reads.
    pub needed_parts: BTreeSet<usize>,
    /// The sends of values it computes (indices into [`DistributedPartition::sends`]).
    pub sends: Vec<usize>,
}

impl DistributedPart {
    /// The names of the values it reads from other parts of the partition: the received arrays
    /// (`_pt_dist_recv<k>`) and the other parts' outputs, named as those parts' outputs are
    /// (`part<j>`, see [`output_key`]) (upstream's `partition_input_names`).
    pub fn partition_input_names(&self) -> BTreeSet<String> {
        let roots: Vec<&Array> = self.outputs.iter().map(|(_, a)| a).collect();
        let from_parts = post_order(roots, Array::children).into_iter().filter_map(|node| match node.kind() {
            NodeKind::Placeholder { name: Some(name) } if name.starts_with(PART_VALUE_PREFIX) => {
                Some(output_key(name).to_string())
            }
            _ => None,
        });
        from_parts.chain(self.received.iter().cloned()).collect()
    }
}

/// A DAG split at its sends and receives; see the [module docs](self).
#[derive(Clone, Debug, PartialEq)]
pub struct DistributedPartition {
    /// The rank the DAG was built for (for messages).
    pub rank: usize,
    /// The parts, in an order in which each part comes after the parts it needs.
    pub parts: Vec<DistributedPart>,
    /// Every receive, `_pt_dist_recv<k>` at index `k`.
    pub receives: Vec<Receive>,
    /// Every send.
    pub sends: Vec<Send>,
    /// The DAG's outputs: the user's name and the value it is (a part's output, a received array
    /// or a user input).
    pub outputs: Vec<(String, String)>,
    /// The names the user may pass: placeholders and size parameters (unnamed placeholders are
    /// `_pt_in<k>`, as in a program of the whole DAG).
    pub user_inputs: BTreeSet<String>,
    /// The inputs the user must pass (the placeholders), with their declared shapes and dtypes.
    pub required_inputs: BTreeMap<String, (Shape, DType)>,
}

/// Splits `outputs` at its sends and receives into parts (upstream's
/// `find_distributed_partition`); `rank` is the rank that runs it (it appears in errors).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// use pytato_core::distributed::{make_distributed_recv, make_distributed_send, staple_distributed_send};
/// use pytato_distributed::find_distributed_partition;
/// # fn main() -> pytato_core::Result<()> {
/// let x = pt::placeholder("x", [4], DType::F64)?;
/// let y = make_distributed_recv(1, "y", [4], DType::F64)?;
/// let out = staple_distributed_send(&(&x * &y), make_distributed_send(&pt::sin(&x)?, 1, "x")?)?;
/// let partition = find_distributed_partition(0, &(&out).into())?;
/// // sin(x) needs no receive (part 0, sent at once); x * y waits for y (part 1).
/// assert_eq!(partition.parts.len(), 2);
/// assert_eq!(partition.parts[1].received.len(), 1);
/// # Ok(()) }
/// ```
pub fn find_distributed_partition(rank: usize, outputs: &Outputs) -> Result<DistributedPartition> {
    Partitioner::new(rank, outputs)?.run(outputs)
}

/// The largest expression (in expression nodes) a part computes again rather than import
/// ([`Partitioner::recomputed`]).
const MAX_RECOMPUTED_SIZE: usize = 16;

/// The set of receives (indices) a node depends on; shared between nodes with one set.
type RecvSet = Arc<BTreeSet<usize>>;

/// What makes nodes one part: their set of receives, and whether a send needs them.
type PartKey = (RecvSet, bool);

struct Partitioner {
    rank: usize,
    /// Names of unnamed placeholders.
    unnamed: IdMap<String>,
    user_inputs: BTreeSet<String>,
    required_inputs: BTreeMap<String, (Shape, DType)>,
    /// For every visited node: its set, and the node in its part's DAG.
    set: IdMap<RecvSet>,
    /// Nodes a send needs: sent arrays and everything they are computed from (by value, so that
    /// equal nodes are in one part whichever copy a send reaches).
    feeds_send: HashSet<Array>,
    rewritten: IdMap<Array>,
    /// Nodes that every part may use as they are: user inputs, data wrappers, received arrays.
    free: IdMap<()>,
    /// Receives, one per distinct receive node.
    receives: Vec<Receive>,
    receive_index: HashMap<Array, usize>,
    /// Values a part exports: node id -> (value name, the node in its part, its part's key).
    exported: IdMap<String>,
    exports: Vec<(String, Array, PartKey)>,
    /// Sends found in holders: (the original send's data node, dest, tag).
    found_sends: Vec<(Array, usize, CommTag)>,
    /// Placeholders that stand for another part's value, by node id.
    imports: IdMap<Array>,
    /// Names the DAG's inputs have, and those generated so far: generated names go around them
    /// (users may use the `_pt_dist` prefix too).
    taken: BTreeSet<String>,
}

impl Partitioner {
    fn new(rank: usize, outputs: &Outputs) -> Result<Partitioner> {
        let entries = outputs.entries();
        let inputs = collect_inputs(entries.iter().map(|(_, a)| a))?;
        let sent: Vec<Array> = post_order(entries.iter().map(|(_, a)| a), Array::children)
            .into_iter()
            .filter_map(|node| match node.kind() {
                NodeKind::DistributedSendRefHolder { send, .. } => Some(send.data.clone()),
                _ => None,
            })
            .collect();
        let feeds_send = post_order(sent.iter(), Array::children).into_iter().collect();
        let unnamed: IdMap<String> = inputs.unnamed_placeholder_names().collect();
        let mut taken = inputs.taken_names();
        taken.extend(unnamed.values().cloned());
        Ok(Partitioner {
            taken,
            rank,
            unnamed,
            user_inputs: BTreeSet::new(),
            required_inputs: BTreeMap::new(),
            set: IdMap::default(),
            feeds_send,
            rewritten: IdMap::default(),
            free: IdMap::default(),
            receives: Vec::new(),
            receive_index: HashMap::new(),
            exported: IdMap::default(),
            exports: Vec::new(),
            found_sends: Vec::new(),
            imports: IdMap::default(),
        })
    }

    fn run(mut self, outputs: &Outputs) -> Result<DistributedPartition> {
        let entries = outputs.entries();
        let empty: RecvSet = Arc::new(BTreeSet::new());
        for node in post_order(entries.iter().map(|(_, a)| a), Array::children) {
            self.visit(&node, &empty)?;
        }
        // Sends and outputs name their values (exporting them from their parts where needed).
        let found = std::mem::take(&mut self.found_sends);
        let mut sends = Vec::new();
        for (data, dest_rank, comm_tag) in found {
            let (name, key) = self.value_name(&data)?;
            sends.push((name, key, dest_rank, comm_tag, data));
        }
        let mut named_outputs = Vec::new();
        for (user_name, array) in &entries {
            let (name, _) = self.value_name(array)?;
            named_outputs.push((user_name.clone(), name));
        }

        // One part per distinct key: those feeding sends first, subsets first.
        let order =
            |a: &PartKey, b: &PartKey| b.1.cmp(&a.1).then_with(|| a.0.len().cmp(&b.0.len())).then_with(|| a.cmp(b));
        let mut part_keys: Vec<PartKey> = self.exports.iter().map(|(_, _, k)| k.clone()).collect();
        part_keys.sort_by(order);
        part_keys.dedup();
        let part_of = |k: &PartKey| part_keys.binary_search_by(|t| order(t, k)).expect("a key of a part");
        let mut part_outputs: Vec<BTreeMap<String, Array>> = vec![BTreeMap::new(); part_keys.len()];
        for (name, array, key) in &self.exports {
            part_outputs[part_of(key)].insert(name.clone(), array.clone());
        }
        let export_keys: HashMap<&str, &PartKey> = self.exports.iter().map(|(n, _, k)| (n.as_str(), k)).collect();
        let mut parts = Vec::with_capacity(part_keys.len());
        for (id, map) in part_outputs.into_iter().enumerate() {
            let keys: Vec<String> = map.keys().map(|n| output_key(n).to_string()).collect();
            let dict = DictOfNamedArrays::new(keys.iter().map(String::as_str).zip(map.values().cloned()))?;
            let mut received = BTreeSet::new();
            let mut needed_parts = BTreeSet::new();
            for node in post_order(map.values(), Array::children) {
                if let NodeKind::Placeholder { name: Some(name) } = node.kind() {
                    if self.receives.iter().any(|r| *r.name == **name) {
                        received.insert(name.to_string());
                    } else if let Some(key) = export_keys.get(&**name) {
                        needed_parts.insert(part_of(key));
                    }
                }
            }
            parts.push(DistributedPart { id, outputs: dict, received, needed_parts, sends: Vec::new() });
        }
        let mut send_list = Vec::new();
        for (name, key, dest_rank, comm_tag, node) in sends {
            let part = key.map(|k| part_of(&k));
            if let Some(p) = part {
                parts[p].sends.push(send_list.len());
            }
            send_list.push(Send {
                data: name,
                part,
                dest_rank,
                comm_tag,
                shape: node.shape().clone(),
                dtype: node.dtype(),
                node,
            });
        }
        Ok(DistributedPartition {
            rank: self.rank,
            parts,
            receives: self.receives,
            sends: send_list,
            outputs: named_outputs,
            user_inputs: self.user_inputs,
            required_inputs: self.required_inputs,
        })
    }

    /// Rewrites `node` (children done) into its part.
    fn visit(&mut self, node: &Array, empty: &RecvSet) -> Result<()> {
        let id = node.id();
        let (new, set, free) = match node.kind() {
            NodeKind::Placeholder { name } => {
                let named = match self.unnamed.get(&id) {
                    Some(generated) => Array::new_generated_placeholder(generated, node.shape().clone(), node.dtype())?,
                    None => node.clone(),
                };
                let name = name.as_deref().map(str::to_string).or_else(|| self.unnamed.get(&id).cloned());
                if let Some(name) = name {
                    self.user_inputs.insert(name.clone());
                    self.required_inputs.insert(name, (node.shape().clone(), node.dtype()));
                }
                self.user_inputs.extend(node.shape().params().map(str::to_string));
                (named, empty.clone(), true)
            }
            NodeKind::SizeParam { name } => {
                self.user_inputs.insert(name.to_string());
                (node.clone(), empty.clone(), true)
            }
            NodeKind::DataWrapper { .. } => (node.clone(), empty.clone(), true),
            NodeKind::DistributedRecv { src_rank, comm_tag } => {
                let k = match self.receive_index.get(node) {
                    Some(&k) => k,
                    None => {
                        let k = self.receives.len();
                        let name = fresh_name(RECV_PREFIX, k, &mut self.taken);
                        self.receives.push(Receive {
                            name,
                            src_rank: *src_rank,
                            comm_tag: comm_tag.clone(),
                            shape: node.shape().clone(),
                            dtype: node.dtype(),
                            node: node.clone(),
                        });
                        self.receive_index.insert(node.clone(), k);
                        k
                    }
                };
                let placeholder =
                    Array::new_generated_placeholder(&self.receives[k].name, node.shape().clone(), node.dtype())?;
                (placeholder, Arc::new(BTreeSet::from([k])), true)
            }
            NodeKind::DistributedSendRefHolder { send, passthrough } => {
                self.found_sends.push((send.data.clone(), send.dest_rank, send.comm_tag.clone()));
                let p = passthrough.id();
                (self.rewritten[&p].clone(), self.set[&p].clone(), self.free.contains_key(&p))
            }
            _ => {
                let children = node.children();
                let mut set: Option<RecvSet> = None;
                for c in &children {
                    let s = &self.set[&c.id()];
                    set = Some(match set {
                        None => s.clone(),
                        Some(t) if t == *s || s.is_subset(&t) => t,
                        Some(t) if t.is_subset(s) => s.clone(),
                        Some(t) => Arc::new(t.union(s).copied().collect()),
                    });
                }
                let set = set.unwrap_or_else(|| empty.clone());
                let key = (set.clone(), self.feeds_send.contains(node));
                let mut new_children = Vec::with_capacity(children.len());
                for c in &children {
                    new_children.push(self.child_in(c, &key)?);
                }
                (node.with_children(new_children)?, set, false)
            }
        };
        self.rewritten.insert(id, new);
        self.set.insert(id, set);
        if free {
            self.free.insert(id, ());
        }
        Ok(())
    }

    /// `child` as a node of the part of `key`: itself (rewritten) if it is free or in that part,
    /// else a placeholder for the value its own part exports.
    fn child_in(&mut self, child: &Array, key: &PartKey) -> Result<Array> {
        let child = &resolve_holders(child);
        let id = child.id();
        if self.free.contains_key(&id) || self.key(child) == *key {
            return Ok(self.rewritten[&id].clone());
        }
        if let Some(p) = self.imports.get(&id) {
            return Ok(p.clone());
        }
        if let Some(local) = self.recomputed(child)? {
            self.imports.insert(id, local.clone());
            return Ok(local);
        }
        let name = self.export(child);
        let placeholder = Array::new_generated_placeholder(&name, child.shape().clone(), child.dtype())?;
        self.imports.insert(id, placeholder.clone());
        Ok(placeholder)
    }

    /// `node` (from an earlier part) computed again where it is read, when that is cheaper than
    /// exporting it: a small elementwise lambda whose arrays are all free or already exported
    /// (`2 * u` of a step whose `u` the next part reads anyway), so no new value crosses parts.
    /// A node tagged [`ImplStored`] is stored, as asked, and crosses parts as a value.
    fn recomputed(&self, node: &Array) -> Result<Option<Array>> {
        let NodeKind::IndexLambda(il) = node.kind() else { return Ok(None) };
        if node.tags().contains(&ImplStored) {
            return Ok(None);
        }
        let mut size = 0;
        let mut reduces = false;
        il.expr.walk(&mut |e| {
            size += 1;
            reduces |= matches!(e, pytato_core::Expr::Reduce(_));
        });
        if reduces || size > MAX_RECOMPUTED_SIZE {
            return Ok(None);
        }
        let mut children = Vec::new();
        for c in node.children() {
            let c = resolve_holders(c);
            match (self.free.contains_key(&c.id()), self.imports.get(&c.id())) {
                (true, _) => children.push(self.rewritten[&c.id()].clone()),
                (false, Some(imported)) => children.push(imported.clone()),
                (false, None) => return Ok(None),
            }
        }
        Ok(Some(node.with_children(children)?))
    }

    /// The value name of `node`, exported from its part (once).
    fn export(&mut self, node: &Array) -> String {
        let id = node.id();
        if let Some(name) = self.exported.get(&id) {
            return name.clone();
        }
        let name = fresh_name(PART_VALUE_PREFIX, self.exports.len(), &mut self.taken);
        self.exports.push((name.clone(), self.rewritten[&id].clone(), self.key(node)));
        self.exported.insert(id, name.clone());
        name
    }

    /// The key of the part of visited node `node`.
    fn key(&self, node: &Array) -> PartKey {
        (self.set[&node.id()].clone(), self.feeds_send.contains(node))
    }

    /// The value a send or an output refers to: a user input or received array as it is, anything
    /// else a part's output. With the key of the part that computes it (`None` when no part does).
    fn value_name(&mut self, node: &Array) -> Result<(String, Option<PartKey>)> {
        let node = &resolve_holders(node);
        let id = node.id();
        let rewritten = self.rewritten.get(&id).ok_or_else(|| Error::Internal {
            backend: "distributed".into(),
            message: format!("{} was not visited", node.summary()),
        })?;
        if let NodeKind::Placeholder { name: Some(name) } = rewritten.kind() {
            return Ok((name.to_string(), None));
        }
        let key = self.key(node);
        Ok((self.export(node), Some(key)))
    }
}

/// The array a chain of send holders holds (the node itself if it is no holder).
fn resolve_holders(node: &Array) -> Array {
    let mut node = node.clone();
    while let NodeKind::DistributedSendRefHolder { passthrough, .. } = node.kind() {
        node = passthrough.clone();
    }
    node
}

/// The output name of value `value` (`_pt_dist_part<j>`) in its part's program: `part<j>`.
pub fn output_key(value: &str) -> &str {
    value.strip_prefix("_pt_dist_").unwrap_or(value)
}
