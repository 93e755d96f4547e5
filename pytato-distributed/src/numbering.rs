//! Numbering communication tags consistently across ranks (upstream's `number_distributed_tags`).

use std::collections::{BTreeMap, BTreeSet};

use pytato_core::distributed::CommTag;
use pytato_core::{Error, Result};

use crate::comm::{Communicator, MAX_WIRE_TAG, WireTag};
use crate::partition::DistributedPartition;

/// Collective: replaces every communication tag of `partition` by an integer `base_tag + i`, where
/// `i` is the tag's position among the tags that *any* rank uses, in [`CommTag`]'s order. Every
/// rank gets the same numbers for the same tags. Returns the partition and the next unused tag.
///
/// Errors when the numbers would pass [`MAX_WIRE_TAG`], the largest tag MPI guarantees.
pub fn number_distributed_tags(
    comm: &dyn Communicator,
    partition: &DistributedPartition,
    base_tag: WireTag,
) -> Result<(DistributedPartition, WireTag)> {
    let mine: BTreeSet<&CommTag> =
        partition.sends.iter().map(|s| &s.comm_tag).chain(partition.receives.iter().map(|r| &r.comm_tag)).collect();
    let mut bytes = Vec::new();
    bytes.extend_from_slice(&(mine.len() as u64).to_le_bytes());
    mine.iter().for_each(|t| t.encode(&mut bytes));
    let mut all: BTreeSet<CommTag> = BTreeSet::new();
    for (rank, theirs) in comm.all_gather(&bytes)?.iter().enumerate() {
        let bad = || Error::Communication {
            op: "number_distributed_tags".into(),
            rank: comm.rank(),
            message: format!("rank {rank} sent a tag list that does not decode"),
        };
        let (count, mut rest) = theirs.split_at_checked(8).ok_or_else(bad)?;
        for _ in 0..u64::from_le_bytes(count.try_into().expect("8 bytes")) {
            let (tag, after) = CommTag::decode(rest).ok_or_else(bad)?;
            all.insert(tag);
            rest = after;
        }
    }
    let last = i64::from(base_tag) + all.len() as i64;
    if base_tag < 0 || last - 1 > i64::from(MAX_WIRE_TAG) {
        return Err(Error::Communication {
            op: "number_distributed_tags".into(),
            rank: comm.rank(),
            message: format!(
                "{} tags from base tag {base_tag} do not fit in 0..={MAX_WIRE_TAG}, the tags MPI guarantees",
                all.len()
            ),
        });
    }
    let index: BTreeMap<&CommTag, usize> = all.iter().enumerate().map(|(i, t)| (t, i)).collect();
    let number = |tag: &CommTag| CommTag::Int(i64::from(base_tag) + index[tag] as i64);
    let mut numbered = partition.clone();
    numbered.sends.iter_mut().for_each(|s| s.comm_tag = number(&s.comm_tag));
    numbered.receives.iter_mut().for_each(|r| r.comm_tag = number(&r.comm_tag));
    Ok((numbered, last as WireTag))
}
