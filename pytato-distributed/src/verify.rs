//! Checking a partition against the other ranks' before anything runs (upstream's
//! `verify_distributed_partition`).
//!
//! Every rank contributes a table of its sends, receives and parts to one all-gather, and every
//! rank runs the same checks on the same tables, so a mismatch is the same typed error
//! ([`Error::DistributedMismatch`]) on every rank, with no rank left waiting:
//!
//! - every send has exactly one receive on its destination with its source and tag, and the
//!   other way round;
//! - their dtypes agree, and their shapes where the sender's is concrete (a shape with size
//!   parameters is checked when the data arrives);
//! - no cycle of waits: a part that waits (through messages, across ranks) for a value it
//!   computes itself would deadlock.

use std::collections::{BTreeMap, HashMap};

use pytato_core::distributed::CommTag;
use pytato_core::error::Mismatch;
use pytato_core::{DType, Error, Result};

use crate::comm::Communicator;
use crate::partition::DistributedPartition;

/// Where a sent value comes from on its rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Source {
    /// A user input: no wait.
    Input,
    /// The output of a part.
    Part(usize),
    /// A received array (forwarded).
    Recv(usize),
}

#[derive(Debug)]
struct SendRow {
    dest: usize,
    tag: CommTag,
    dtype: String,
    shape: Option<Vec<i64>>,
    source: Source,
    what: String,
}

#[derive(Debug)]
struct RecvRow {
    src: usize,
    tag: CommTag,
    dtype: String,
    shape: Vec<i64>,
    /// The parts that read it.
    readers: Vec<usize>,
    what: String,
}

#[derive(Debug, Default)]
struct Table {
    /// The parts each part needs.
    parts: Vec<Vec<usize>>,
    sends: Vec<SendRow>,
    recvs: Vec<RecvRow>,
}

/// Collective: checks `partition` against every other rank's; see the docs of this module (`verify`).
pub fn verify_distributed_partition(comm: &dyn Communicator, partition: &DistributedPartition) -> Result<()> {
    let rank = comm.rank();
    let tables: Vec<Table> = comm
        .all_gather(&encode(&table_of(partition)))?
        .iter()
        .enumerate()
        .map(|(r, bytes)| {
            decode(bytes).ok_or_else(|| Error::Communication {
                op: "verify_distributed_partition".into(),
                rank,
                message: format!("rank {r}'s table does not decode"),
            })
        })
        .collect::<Result<_>>()?;
    check(rank, &tables)
}

fn table_of(p: &DistributedPartition) -> Table {
    let recv_index: HashMap<&str, usize> = p.receives.iter().enumerate().map(|(k, r)| (r.name.as_str(), k)).collect();
    let mut readers: Vec<Vec<usize>> = vec![Vec::new(); p.receives.len()];
    for part in &p.parts {
        for name in &part.received {
            readers[recv_index[name.as_str()]].push(part.id);
        }
    }
    Table {
        parts: p.parts.iter().map(|part| part.needed_parts.iter().copied().collect()).collect(),
        sends: p
            .sends
            .iter()
            .map(|s| SendRow {
                dest: s.dest_rank,
                tag: s.comm_tag.clone(),
                dtype: s.dtype.name().to_string(),
                shape: s.shape.as_ints(),
                source: match (s.part, recv_index.get(s.data.as_str())) {
                    (Some(part), _) => Source::Part(part),
                    (None, Some(&k)) => Source::Recv(k),
                    (None, None) => Source::Input,
                },
                what: s.node.summary(),
            })
            .collect(),
        recvs: p
            .receives
            .iter()
            .zip(readers)
            .map(|(r, readers)| RecvRow {
                src: r.src_rank,
                tag: r.comm_tag.clone(),
                dtype: r.dtype.name().to_string(),
                shape: r.shape.as_ints().expect("receive shapes are concrete"),
                readers,
                what: r.node.summary(),
            })
            .collect(),
    }
}

fn check(rank: usize, tables: &[Table]) -> Result<()> {
    let size = tables.len();
    let mismatch = |problem: Mismatch, message: String| Error::DistributedMismatch {
        op: "verify_distributed_partition".into(),
        rank,
        problem,
        message,
    };
    // Receives by (source, destination, tag).
    let mut recvs: HashMap<(usize, usize, &CommTag), (usize, &RecvRow)> = HashMap::new();
    for (dest, table) in tables.iter().enumerate() {
        for (k, r) in table.recvs.iter().enumerate() {
            if r.src >= size {
                return Err(mismatch(
                    Mismatch::NoSuchRank,
                    format!("rank {dest} receives {} from rank {}, which does not exist ({size} ranks)", r.what, r.src),
                ));
            }
            if let Some((_, first)) = recvs.insert((r.src, dest, &r.tag), (k, r)) {
                return Err(mismatch(
                    Mismatch::DuplicateRecv,
                    format!(
                        "rank {dest} receives twice from rank {} with tag {}: {} and {}",
                        r.src, r.tag, first.what, r.what
                    ),
                ));
            }
        }
    }
    let mut matched: HashMap<(usize, usize, &CommTag), &SendRow> = HashMap::new();
    for (src, table) in tables.iter().enumerate() {
        for s in &table.sends {
            if s.dest >= size {
                return Err(mismatch(
                    Mismatch::NoSuchRank,
                    format!("rank {src} sends {} to rank {}, which does not exist ({size} ranks)", s.what, s.dest),
                ));
            }
            let key = (src, s.dest, &s.tag);
            if let Some(first) = matched.insert(key, s) {
                return Err(mismatch(
                    Mismatch::DuplicateSend,
                    format!(
                        "rank {src} sends twice to rank {} with tag {}: {} and {}",
                        s.dest, s.tag, first.what, s.what
                    ),
                ));
            }
            let Some((_, r)) = recvs.get(&key) else {
                return Err(mismatch(
                    Mismatch::MissingRecv,
                    format!(
                        "rank {src} sends {} to rank {} with tag {}, but rank {} posts no receive from rank {src} with that tag",
                        s.what, s.dest, s.tag, s.dest
                    ),
                ));
            };
            if s.dtype != r.dtype || s.shape.as_ref().is_some_and(|shape| *shape != r.shape) {
                let shape = s.shape.as_ref().map_or("(symbolic)".to_string(), |v| format!("{v:?}"));
                return Err(mismatch(
                    Mismatch::Mismatched,
                    format!(
                        "tag {}: rank {src} sends {} of dtype {} and shape {shape} to rank {}, which receives dtype {} and shape {:?} ({})",
                        s.tag, s.what, s.dtype, s.dest, r.dtype, r.shape, r.what
                    ),
                ));
            }
        }
    }
    if let Some(((src, dest, tag), (_, r))) = recvs.iter().find(|(key, _)| !matched.contains_key(key)) {
        return Err(mismatch(
            Mismatch::MissingSend,
            format!(
                "rank {dest} receives {} from rank {src} with tag {tag}, but rank {src} sends nothing to rank {dest} with that tag",
                r.what
            ),
        ));
    }
    check_no_cycle(tables).map_err(|m| mismatch(Mismatch::Cycle, m))
}

/// A wait-for graph over every rank's parts and messages; a cycle is a deadlock.
fn check_no_cycle(tables: &[Table]) -> std::result::Result<(), String> {
    #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
    enum Node {
        Part(usize, usize),
        /// A message, by its receiving rank and the receive's index there.
        Message(usize, usize),
    }
    let mut recv_of: HashMap<(usize, usize, &CommTag), usize> = HashMap::new();
    for (dest, t) in tables.iter().enumerate() {
        for (k, r) in t.recvs.iter().enumerate() {
            recv_of.insert((r.src, dest, &r.tag), k);
        }
    }
    // Edges from what must happen first to what waits for it.
    let mut edges: BTreeMap<Node, Vec<Node>> = BTreeMap::new();
    for (rank, t) in tables.iter().enumerate() {
        for (part, needed) in t.parts.iter().enumerate() {
            for &n in needed {
                edges.entry(Node::Part(rank, n)).or_default().push(Node::Part(rank, part));
            }
        }
        for (k, r) in t.recvs.iter().enumerate() {
            for &reader in &r.readers {
                edges.entry(Node::Message(rank, k)).or_default().push(Node::Part(rank, reader));
            }
        }
        for s in &t.sends {
            let message = Node::Message(s.dest, recv_of[&(rank, s.dest, &s.tag)]);
            match s.source {
                Source::Input => {}
                Source::Part(p) => edges.entry(Node::Part(rank, p)).or_default().push(message),
                Source::Recv(k) => edges.entry(Node::Message(rank, k)).or_default().push(message),
            }
        }
    }
    // Iterative depth-first search with colours.
    let describe = |n: &Node| match *n {
        Node::Part(r, p) => format!("part {p} on rank {r}"),
        Node::Message(r, k) => {
            let row = &tables[r].recvs[k];
            format!("the message from rank {} to rank {r} with tag {} ({})", row.src, row.tag, row.what)
        }
    };
    let mut colour: HashMap<Node, u8> = HashMap::new(); // 1: on the stack, 2: done
    for &start in edges.keys() {
        if colour.contains_key(&start) {
            continue;
        }
        let mut stack: Vec<(Node, usize)> = vec![(start, 0)];
        colour.insert(start, 1);
        while let Some((node, next)) = stack.last_mut() {
            let node = *node;
            let succ = edges.get(&node).map_or(&[][..], Vec::as_slice);
            if let Some(&s) = succ.get(*next) {
                *next += 1;
                match colour.get(&s) {
                    Some(1) => {
                        let from = stack.iter().position(|(n, _)| *n == s).expect("on the stack");
                        let cycle: Vec<String> = stack[from..].iter().map(|(n, _)| describe(n)).collect();
                        return Err(format!(
                            "a cycle of waits (a deadlock): {} waits for {}",
                            cycle.join(" -> "),
                            describe(&s)
                        ));
                    }
                    Some(_) => {}
                    None => {
                        colour.insert(s, 1);
                        stack.push((s, 0));
                    }
                }
            } else {
                colour.insert(node, 2);
                stack.pop();
            }
        }
    }
    Ok(())
}

// A table in bytes: little-endian integers, length-prefixed strings and lists.

fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u64(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

fn put_ints(out: &mut Vec<u8>, v: &[i64]) {
    put_u64(out, v.len() as u64);
    v.iter().for_each(|&x| put_u64(out, x as u64));
}

fn encode(t: &Table) -> Vec<u8> {
    let mut out = Vec::new();
    put_u64(&mut out, t.parts.len() as u64);
    for needed in &t.parts {
        put_ints(&mut out, &needed.iter().map(|&n| n as i64).collect::<Vec<_>>());
    }
    put_u64(&mut out, t.sends.len() as u64);
    for s in &t.sends {
        put_u64(&mut out, s.dest as u64);
        s.tag.encode(&mut out);
        put_str(&mut out, &s.dtype);
        match &s.shape {
            Some(shape) => {
                out.push(1);
                put_ints(&mut out, shape);
            }
            None => out.push(0),
        }
        let (kind, index) = match s.source {
            Source::Input => (0, 0),
            Source::Part(p) => (1, p),
            Source::Recv(k) => (2, k),
        };
        out.push(kind);
        put_u64(&mut out, index as u64);
        put_str(&mut out, &s.what);
    }
    put_u64(&mut out, t.recvs.len() as u64);
    for r in &t.recvs {
        put_u64(&mut out, r.src as u64);
        r.tag.encode(&mut out);
        put_str(&mut out, &r.dtype);
        put_ints(&mut out, &r.shape);
        put_ints(&mut out, &r.readers.iter().map(|&n| n as i64).collect::<Vec<_>>());
        put_str(&mut out, &r.what);
    }
    out
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn u8(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }
    fn u64(&mut self) -> Option<u64> {
        let (head, rest) = self.0.split_at_checked(8)?;
        self.0 = rest;
        Some(u64::from_le_bytes(head.try_into().ok()?))
    }
    fn usize(&mut self) -> Option<usize> {
        usize::try_from(self.u64()?).ok()
    }
    fn str(&mut self) -> Option<String> {
        let len = self.usize()?;
        let (text, rest) = self.0.split_at_checked(len)?;
        self.0 = rest;
        String::from_utf8(text.to_vec()).ok()
    }
    fn ints(&mut self) -> Option<Vec<i64>> {
        let len = self.usize()?;
        (0..len).map(|_| self.u64().map(|v| v as i64)).collect()
    }
    fn indices(&mut self) -> Option<Vec<usize>> {
        self.ints()?.into_iter().map(|v| usize::try_from(v).ok()).collect()
    }
    fn tag(&mut self) -> Option<CommTag> {
        let (tag, rest) = CommTag::decode(self.0)?;
        self.0 = rest;
        Some(tag)
    }
}

fn decode(bytes: &[u8]) -> Option<Table> {
    let mut r = Reader(bytes);
    let mut t = Table::default();
    for _ in 0..r.usize()? {
        t.parts.push(r.indices()?);
    }
    for _ in 0..r.usize()? {
        let dest = r.usize()?;
        let tag = r.tag()?;
        let dtype = r.str()?;
        let shape = if r.u8()? == 1 { Some(r.ints()?) } else { None };
        let source = match (r.u8()?, r.usize()?) {
            (0, _) => Source::Input,
            (1, p) => Source::Part(p),
            (2, k) => Source::Recv(k),
            _ => return None,
        };
        t.sends.push(SendRow { dest, tag, dtype, shape, source, what: r.str()? });
    }
    for _ in 0..r.usize()? {
        let src = r.usize()?;
        let tag = r.tag()?;
        let dtype = r.str()?;
        let shape = r.ints()?;
        let readers = r.indices()?;
        t.recvs.push(RecvRow { src, tag, dtype, shape, readers, what: r.str()? });
    }
    // Anything a rank sends is a dtype this build knows.
    (r.0.is_empty() && t.sends.iter().all(|s| DType::from_name(&s.dtype).is_some())).then_some(t)
}
