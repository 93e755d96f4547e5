//! Communication nodes: the arrays a rank sends to and receives from other ranks.
//!
//! A DAG that runs on several ranks (processes of an MPI job, or threads standing in for them)
//! says where data crosses ranks with two nodes:
//!
//! - a **receive** ([`make_distributed_recv`], [`NodeKind::DistributedRecv`]): the array rank
//!   `src_rank` sends with a communication tag, of a declared shape and dtype. It is an array like
//!   any other: use it in any expression.
//! - a **send** ([`DistributedSend`]: an array, a destination rank, a tag) has no value, so it is
//!   *stapled* to an array that outlives it ([`staple_distributed_send`],
//!   [`NodeKind::DistributedSendRefHolder`]): the holder is that array, and the send happens when
//!   the DAG runs, as upstream pytato's `staple_distributed_send` does.
//!
//! Communication tags ([`CommTag`]) are user values (integers, strings, tuples of them); the
//! distributed layer numbers them into consistent integers across ranks before it runs
//! (`pytato_distributed::number_distributed_tags`).
//!
//! Backends never see these nodes: the `pytato-distributed` crate partitions a DAG at its
//! sends and receives into parts that backends compile, and runs the parts over a
//! communicator. Compiling a DAG with communication nodes directly is an
//! [`Error::Unsupported`] that says so.
//!
//! ```
//! use pytato_core::DType;
//! use pytato_frontend as pt;
//! use pytato_core::distributed::{make_distributed_recv, make_distributed_send, staple_distributed_send};
//! # fn main() -> pytato_core::Result<()> {
//! // Rank r of a ring: receive the left neighbour's last value, send my last value to the right.
//! let (rank, size) = (0, 4);
//! let u = pt::placeholder("u", [8], DType::F64)?;
//! let last = u.index(pytato_core::s![7..8])?;
//! let halo = make_distributed_recv((rank + size - 1) % size, "halo", [1], DType::F64)?;
//! let extended = pt::concatenate(&[halo, u.clone()], 0)?;
//! let send = make_distributed_send(&last, (rank + 1) % size, "halo")?;
//! let out = staple_distributed_send(&extended, send)?;
//! assert_eq!(out.shape().to_string(), "(9,)");
//! # Ok(()) }
//! ```

use std::fmt;
use std::sync::Arc;

use crate::array::{Array, NodeKind};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::Shape;

/// A communication tag: a user value that names a message between two ranks. Integers, strings
/// and tuples of tags are ordered (integers before strings before tuples), so every rank can
/// number the tags it uses the same way.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CommTag {
    /// An integer tag.
    Int(i64),
    /// A string tag.
    Str(Arc<str>),
    /// A tuple of tags, such as `("flux", 3)`.
    Tuple(Arc<[CommTag]>),
}

impl CommTag {
    /// A tuple of tags.
    pub fn tuple(items: impl IntoIterator<Item = CommTag>) -> CommTag {
        CommTag::Tuple(items.into_iter().collect())
    }

    /// The tag in bytes (for exchanging tags between ranks); [`CommTag::decode`] reads it back.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            CommTag::Int(i) => {
                out.push(0);
                out.extend_from_slice(&i.to_le_bytes());
            }
            CommTag::Str(s) => {
                out.push(1);
                out.extend_from_slice(&(s.len() as u64).to_le_bytes());
                out.extend_from_slice(s.as_bytes());
            }
            CommTag::Tuple(items) => {
                out.push(2);
                out.extend_from_slice(&(items.len() as u64).to_le_bytes());
                items.iter().for_each(|t| t.encode(out));
            }
        }
    }

    /// Reads a tag [`CommTag::encode`] wrote at the start of `bytes`; returns it and the bytes after
    /// it, or `None` if the bytes are not an encoded tag.
    pub fn decode(bytes: &[u8]) -> Option<(CommTag, &[u8])> {
        fn take_u64(bytes: &[u8]) -> Option<(u64, &[u8])> {
            let (head, rest) = bytes.split_at_checked(8)?;
            Some((u64::from_le_bytes(head.try_into().ok()?), rest))
        }
        let (&kind, rest) = bytes.split_first()?;
        match kind {
            0 => take_u64(rest).map(|(v, rest)| (CommTag::Int(v as i64), rest)),
            1 => {
                let (len, rest) = take_u64(rest)?;
                let (text, rest) = rest.split_at_checked(usize::try_from(len).ok()?)?;
                Some((CommTag::Str(std::str::from_utf8(text).ok()?.into()), rest))
            }
            2 => {
                let (len, mut rest) = take_u64(rest)?;
                let mut items = Vec::new();
                for _ in 0..len {
                    let (item, after) = CommTag::decode(rest)?;
                    items.push(item);
                    rest = after;
                }
                Some((CommTag::Tuple(items.into()), rest))
            }
            _ => None,
        }
    }
}

impl fmt::Display for CommTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommTag::Int(i) => write!(f, "{i}"),
            CommTag::Str(s) => write!(f, "{s:?}"),
            CommTag::Tuple(items) => {
                f.write_str("(")?;
                for (k, item) in items.iter().enumerate() {
                    if k > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                if items.len() == 1 {
                    f.write_str(",")?;
                }
                f.write_str(")")
            }
        }
    }
}

impl From<i64> for CommTag {
    fn from(i: i64) -> CommTag {
        CommTag::Int(i)
    }
}

impl From<i32> for CommTag {
    fn from(i: i32) -> CommTag {
        CommTag::Int(i.into())
    }
}

impl From<usize> for CommTag {
    fn from(i: usize) -> CommTag {
        CommTag::Int(i64::try_from(i).unwrap_or(i64::MAX))
    }
}

impl From<&str> for CommTag {
    fn from(s: &str) -> CommTag {
        CommTag::Str(s.into())
    }
}

impl From<String> for CommTag {
    fn from(s: String) -> CommTag {
        CommTag::Str(s.into())
    }
}

impl<A: Into<CommTag>, B: Into<CommTag>> From<(A, B)> for CommTag {
    fn from((a, b): (A, B)) -> CommTag {
        CommTag::tuple([a.into(), b.into()])
    }
}

impl<A: Into<CommTag>, B: Into<CommTag>, C: Into<CommTag>> From<(A, B, C)> for CommTag {
    fn from((a, b, c): (A, B, C)) -> CommTag {
        CommTag::tuple([a.into(), b.into(), c.into()])
    }
}

/// A send of `data` to rank `dest_rank` with `comm_tag`. It has no value of its own: staple it to
/// an array with [`staple_distributed_send`].
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub struct DistributedSend {
    /// The array sent.
    pub data: Array,
    /// The rank it goes to.
    pub dest_rank: usize,
    /// The message's tag.
    pub comm_tag: CommTag,
}

/// A send of `data` to `dest_rank` with `comm_tag` (upstream's `make_distributed_send`).
pub fn make_distributed_send(data: &Array, dest_rank: usize, comm_tag: impl Into<CommTag>) -> Result<DistributedSend> {
    Ok(DistributedSend { data: data.clone(), dest_rank, comm_tag: comm_tag.into() })
}

/// `stapled_to`, carrying `send`: the send happens when a DAG holding the result runs (upstream's
/// `staple_distributed_send`). The result has `stapled_to`'s shape, dtype and value.
#[track_caller]
pub fn staple_distributed_send(stapled_to: &Array, send: DistributedSend) -> Result<Array> {
    Array::new_distributed_send_ref_holder(send, stapled_to)
}

/// The array rank `src_rank` sends with `comm_tag`, of `shape` and `dtype` (upstream's
/// `make_distributed_recv`). The shape must be concrete: the sender's data is checked against it.
#[track_caller]
pub fn make_distributed_recv(
    src_rank: usize,
    comm_tag: impl Into<CommTag>,
    shape: impl Into<Shape>,
    dtype: DType,
) -> Result<Array> {
    Array::new_distributed_recv(src_rank, comm_tag.into(), shape.into(), dtype)
}

/// Whether `node` is a communication node (a receive or a send holder).
pub fn is_communication(node: &Array) -> bool {
    matches!(node.kind(), NodeKind::DistributedRecv { .. } | NodeKind::DistributedSendRefHolder { .. })
}

/// The error a backend gives for a DAG with communication nodes: such a DAG must be partitioned.
pub fn unpartitioned_error(backend: &str, node: &Array) -> Error {
    Error::Unsupported {
        backend: backend.to_string(),
        reason: format!(
            "{} is a communication node: partition the DAG at its sends and receives and run the parts \
             over a communicator (pytato_distributed::DistributedProgram)",
            node.summary()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_encode_and_decode() {
        let tags = [
            CommTag::from(-3i64),
            CommTag::from("flux"),
            CommTag::from(("face", 7usize)),
            CommTag::tuple([]),
            CommTag::tuple([CommTag::from(("a", "b")), CommTag::from(i64::MIN)]),
        ];
        for tag in &tags {
            let mut bytes = Vec::new();
            tag.encode(&mut bytes);
            bytes.push(99);
            let (back, rest) = CommTag::decode(&bytes).expect("decodes");
            assert_eq!(&back, tag);
            assert_eq!(rest, &[99]);
        }
        assert!(CommTag::decode(&[1, 200, 0, 0, 0, 0, 0, 0, 0]).is_none(), "a truncated string");
        assert!(CommTag::decode(&[7]).is_none());
        assert_eq!(CommTag::from(("face", 7usize)).to_string(), "(\"face\", 7)");
        assert!(CommTag::from(5i64) < CommTag::from("a") && CommTag::from("z") < CommTag::tuple([]));
    }
}
