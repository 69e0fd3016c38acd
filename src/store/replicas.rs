//! `replicas.fpd`: what the report concluded of each document, kept so the
//! next analysis of a chain (`--previous`) can say what changed: which
//! pages became or stopped being copies and near-replicas, how the
//! near-replica groups moved, and whether the pages this analysis said a
//! recrawl could skip were indeed unchanged.
//!
//! The report stage writes it, one record per `docs.csv` row in row
//! (docID) order. A `--previous` run copies the previous analysis's file
//! to `previous-replicas.fpd` in its fingerprint stage, so the new
//! analysis holds everything its report needs even once the previous one
//! is deleted.
//!
//! Kind 14, 12 bytes: `doc_id: u32`; `group: u32`, the smallest docID of
//! the document's near-replica group (its connected component through
//! exact copies and Overlap pairs) when that group has two documents or
//! more, `u32::MAX` otherwise; `bits: u32`, the [`ReplicaRecord`] bits
//! below.

use super::file::{Record, le_u32};

/// One document's record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ReplicaRecord {
    pub doc_id: u32,
    /// The group's smallest docID, [`NO_GROUP`] when alone.
    pub group: u32,
    pub bits: u32,
}

/// [`ReplicaRecord::group`] of a document in no group of two or more.
pub(crate) const NO_GROUP: u32 = u32::MAX;

/// The document is empty (no text): it is in no group and always kept.
pub(crate) const EMPTY_DOC: u32 = 1;
/// It has an exact copy (its exact group holds two documents or more).
pub(crate) const EXACT_COPY: u32 = 2;
/// A recrawl keeping one page of each exact group could skip it.
pub(crate) const SKIP_EXACT: u32 = 4;
/// A recrawl skipping near-replicas too could skip it (the report's
/// greedy rule, `savings`).
pub(crate) const SKIP_NEAR: u32 = 8;

impl ReplicaRecord {
    pub(crate) fn has(&self, bit: u32) -> bool {
        self.bits & bit != 0
    }

    /// Whether it has a near-replica or an exact copy.
    pub(crate) fn in_group(&self) -> bool {
        self.group != NO_GROUP
    }
}

impl Record for ReplicaRecord {
    const KIND: u32 = 14;
    const SIZE: usize = 12;
    fn encode(&self, out: &mut [u8]) {
        out[..4].copy_from_slice(&self.doc_id.to_le_bytes());
        out[4..8].copy_from_slice(&self.group.to_le_bytes());
        out[8..12].copy_from_slice(&self.bits.to_le_bytes());
    }
    fn decode(b: &[u8]) -> Self {
        ReplicaRecord { doc_id: le_u32(&b[..4]), group: le_u32(&b[4..8]), bits: le_u32(&b[8..12]) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_round_trips() {
        let r = ReplicaRecord { doc_id: 7, group: 3, bits: EXACT_COPY | SKIP_NEAR };
        let mut b = [0u8; 12];
        r.encode(&mut b);
        assert_eq!(ReplicaRecord::decode(&b), r);
        assert!(r.has(SKIP_NEAR) && !r.has(SKIP_EXACT) && r.in_group());
    }
}
