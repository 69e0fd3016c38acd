//! Document handles: what makes a document the same document from one
//! analysis of a crawl to the next.
//!
//! A document's docID is its *handle*: in a first analysis the docIDs are
//! dense and in input order; an analysis made with `--previous` keeps each
//! URL's docID from the analysis before it, gives URLs never seen the next
//! docIDs, and never gives a docID twice (a URL that comes back gets its
//! old one). So docIDs in a chain have gaps.
//!
//! Inside an analysis, stages number documents by *row*: the document's
//! place in `docs.csv` (and in every per-document record file), from 0, in
//! docID order. The record files hold rows, which keeps every array dense
//! and makes an analysis's record files those of a first analysis of its
//! documents given in docID order; `doc-ids.fpd` turns rows into docIDs
//! where a docID is shown (docs.csv, overlap.csv and every other table).
//! In a first analysis row and docID are equal.
//!
//! Files:
//! - `doc-ids.fpd` (kind 11, 8 bytes a record, one per row): `doc_id: u32`,
//!   `missing_for: u16` (how many analyses in a row the page has been lost
//!   or absent while its last text is kept), `flags: u16` (bit 0: the
//!   document has a URL; bit 1: it is the document that stands for its URL,
//!   the last capture of it; bit 2: it has the text its docID had in the
//!   previous analysis; bit 3: that previous document was the center of its
//!   exact group, so that pair counting can carry its pairs forward).
//! - `urls.fpd` (kind 9, 32 bytes, sorted by key, one per URL ever seen in
//!   the chain): `key: u128` (xxh3-128 of the URL's bytes), `doc_id: u32`,
//!   the URL's handle, kept while the URL is absent so that it gets it
//!   back; then `payload: u64`, `decoding: u32`, what its document's
//!   payload was ([`Payload`]), so that the next analysis need not extract
//!   a payload it already has.
//! - scratch kind 10, 32 bytes: one [`Capture`] per record read that names
//!   a URL, for matching a recrawl's records to the previous analysis;
//!   scratch kind 12, 12 bytes: each document's [`Payload`], in ingest
//!   order.

use xxhash_rust::xxh3::xxh3_128;

use std::path::Path;

use super::file::{Mapped, Record, le_u16, le_u32, le_u64, le_u128};
use super::{Manifest, OutDir};

/// The key a URL is known by: 128 bits of a hash of its bytes, so that an
/// accidental collision between two URLs of a chain stays negligible
/// (about n²/2¹²⁹, as for exact copies).
pub(crate) fn url_key(url: &str) -> u128 {
    xxh3_128(url.as_bytes())
}

/// Marks a row or docID that is not there.
pub(crate) const NONE: u32 = u32::MAX;

/// `flags` bit: the document has a URL.
pub(crate) const HAS_URL: u16 = 1;
/// `flags` bit: the document is the one its URL's handle names.
pub(crate) const STANDS: u16 = 2;
/// `flags` bit: the document has the text its docID had in the previous
/// analysis (and so the same fingerprints).
pub(crate) const SAME_TEXT: u16 = 4;
/// `flags` bit: with [`SAME_TEXT`], that previous document was the center
/// of its exact group, and so counted in its pairs.
pub(crate) const WAS_CENTER: u16 = 8;

/// One row's docID and state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DocIdRecord {
    pub doc_id: u32,
    pub missing_for: u16,
    pub flags: u16,
}

impl Record for DocIdRecord {
    const KIND: u32 = 11;
    const SIZE: usize = 8;
    fn encode(&self, out: &mut [u8]) {
        out[..4].copy_from_slice(&self.doc_id.to_le_bytes());
        out[4..6].copy_from_slice(&self.missing_for.to_le_bytes());
        out[6..8].copy_from_slice(&self.flags.to_le_bytes());
    }
    fn decode(b: &[u8]) -> Self {
        DocIdRecord { doc_id: le_u32(&b[..4]), missing_for: le_u16(&b[4..6]), flags: le_u16(&b[6..8]) }
    }
}

/// What a document's payload was: 64 bits of its `WARC-Payload-Digest`
/// (normalized, [`crate::bytes::read::Digest`]) and 32 of how its body was
/// decoded (content type, charset, HTTP codings). Two records with the same
/// payload decoded the same way make the same document, which is what lets
/// a recrawl's unchanged pages go unextracted. `digest` 0: none known.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Payload {
    pub digest: u64,
    pub decoding: u32,
}

impl Payload {
    pub(crate) fn is_known(&self) -> bool {
        self.digest != 0
    }
}

impl Record for Payload {
    const KIND: u32 = 12;
    const SIZE: usize = 12;
    fn encode(&self, out: &mut [u8]) {
        out[..8].copy_from_slice(&self.digest.to_le_bytes());
        out[8..12].copy_from_slice(&self.decoding.to_le_bytes());
    }
    fn decode(b: &[u8]) -> Self {
        Payload { digest: le_u64(&b[..8]), decoding: le_u32(&b[8..12]) }
    }
}

/// A URL's handle, and its document's payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct UrlRecord {
    pub key: u128,
    pub doc_id: u32,
    pub payload: Payload,
}

impl Record for UrlRecord {
    const KIND: u32 = 9;
    const SIZE: usize = 32;
    fn encode(&self, out: &mut [u8]) {
        out[..16].copy_from_slice(&self.key.to_le_bytes());
        out[16..20].copy_from_slice(&self.doc_id.to_le_bytes());
        self.payload.encode(&mut out[20..32]);
    }
    fn decode(b: &[u8]) -> Self {
        UrlRecord { key: le_u128(&b[..16]), doc_id: le_u32(&b[16..20]), payload: Payload::decode(&b[20..32]) }
    }
}

/// What a record read says of its URL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum CaptureKind {
    /// A document (its row in the ingest).
    Doc(u32),
    /// A record of the URL that makes no document: an HTTP status other
    /// than 200, 304 or a redirect, a payload that is not text or cannot
    /// be decoded.
    Gone(u16),
    /// An HTTP 304 (Not Modified), or a revisit whose original is not in
    /// this crawl: the page is as it was.
    Same,
    /// A redirect.
    Redirect(u16),
}

/// One record that names a URL, in input order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Capture {
    pub key: u128,
    /// The record's place in input order.
    pub order: u64,
    pub kind: CaptureKind,
}

impl Record for Capture {
    const KIND: u32 = 10;
    const SIZE: usize = 32;
    fn encode(&self, out: &mut [u8]) {
        let (tag, value) = match self.kind {
            CaptureKind::Doc(row) => (0u32, row),
            CaptureKind::Gone(status) => (1, u32::from(status)),
            CaptureKind::Same => (2, 0),
            CaptureKind::Redirect(status) => (3, u32::from(status)),
        };
        out[..16].copy_from_slice(&self.key.to_le_bytes());
        out[16..24].copy_from_slice(&self.order.to_le_bytes());
        out[24..28].copy_from_slice(&tag.to_le_bytes());
        out[28..32].copy_from_slice(&value.to_le_bytes());
    }
    fn decode(b: &[u8]) -> Self {
        let value = le_u32(&b[28..32]);
        let status = u16::try_from(value).unwrap_or(u16::MAX);
        let kind = match le_u32(&b[24..28]) {
            0 => CaptureKind::Doc(value),
            1 => CaptureKind::Gone(status),
            2 => CaptureKind::Same,
            _ => CaptureKind::Redirect(status),
        };
        Capture { key: le_u128(&b[..16]), order: le_u64(&b[16..24]), kind }
    }
}

/// The docIDs of an analysis's rows, ascending.
pub(crate) struct DocIds {
    /// `None` for an analysis whose rows are their docIDs and which has no
    /// `doc-ids.fpd`: a first analysis made by the cluster job.
    ids: Option<Mapped<DocIdRecord>>,
    len: usize,
    /// Whether every row is its docID (a first analysis): the file is
    /// then not read for them. Read for every pair the pairs stage wrote,
    /// its pages stayed resident, 168 MB of the stage's peak RSS on 23
    /// million documents.
    rows_are_ids: bool,
}

impl DocIds {
    /// The docIDs of `out`'s rows, as its manifest describes it.
    pub(crate) fn open(out: &OutDir, manifest: &Manifest) -> anyhow::Result<DocIds> {
        let path = out.doc_ids();
        if manifest.chain.is_none() && !path.exists() {
            return Ok(DocIds { ids: None, len: manifest.documents as usize, rows_are_ids: true });
        }
        DocIds::open_file(&path)
    }

    /// The docIDs in `path`.
    pub(crate) fn open_file(path: &Path) -> anyhow::Result<DocIds> {
        let ids = Mapped::<DocIdRecord>::open(path)?;
        let len = ids.len();
        // DocIDs ascend, each once: from 0 up to len - 1 they are the rows.
        let rows_are_ids = len.checked_sub(1).is_none_or(|last| {
            ids.get(0).doc_id == 0 && u32::try_from(last).is_ok_and(|last32| ids.get(last).doc_id == last32)
        });
        Ok(DocIds { len, ids: Some(ids), rows_are_ids })
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn get(&self, row: u32) -> DocIdRecord {
        match &self.ids {
            Some(ids) => ids.get(row as usize),
            None => DocIdRecord { doc_id: row, missing_for: 0, flags: HAS_URL | STANDS },
        }
    }

    /// The docID of `row`.
    pub(crate) fn doc_id(&self, row: u32) -> u32 {
        if self.rows_are_ids { row } else { self.get(row).doc_id }
    }

    /// The row of `doc_id`, if the analysis has it.
    pub(crate) fn row(&self, doc_id: u32) -> Option<u32> {
        let Some(ids) = self.ids.as_ref().filter(|_| !self.rows_are_ids) else {
            return ((doc_id as usize) < self.len).then_some(doc_id);
        };
        ids.seek(doc_id, |r| r.doc_id).filter(|(_, r)| r.doc_id == doc_id).map(|(row, _)| row as u32)
    }
}

/// Each row's docID, held only from the first row whose docID is not its
/// row: in a first analysis they are the same, and a list of them took 4
/// bytes a document (8 while it grew by doubling) in the exact stage and
/// at the report's peak.
#[derive(Default)]
pub(crate) struct RowIds {
    rows: u32,
    /// None while every row so far is its docID.
    ids: Option<Vec<u32>>,
    /// Rows the list is reserved for once it is needed (the manifest's
    /// count), rather than grown by doubling.
    expected: usize,
}

impl RowIds {
    /// For about `expected` rows.
    pub(crate) fn expecting(expected: usize) -> RowIds {
        RowIds { expected, ..RowIds::default() }
    }

    pub(crate) fn rows(&self) -> u32 {
        self.rows
    }

    /// Adds the next row's docID (ascending).
    pub(crate) fn push(&mut self, id: u32) {
        match &mut self.ids {
            Some(ids) => ids.push(id),
            None if id != self.rows => {
                let mut ids = Vec::with_capacity(self.expected.max(self.rows as usize + 1));
                ids.extend(0..self.rows);
                ids.push(id);
                self.ids = Some(ids);
            }
            None => {}
        }
        self.rows += 1;
    }

    /// The docID of `row` (a row already pushed).
    pub(crate) fn id(&self, row: u32) -> u32 {
        self.ids.as_ref().map_or(row, |ids| ids[row as usize])
    }

    /// The row of docID `id`, if a row pushed has it.
    pub(crate) fn row(&self, id: u32) -> Option<usize> {
        match &self.ids {
            Some(ids) => ids.binary_search(&id).ok(),
            None => (id < self.rows).then_some(id as usize),
        }
    }

    /// Every row's docID, `None` when each is its row.
    pub(crate) fn into_ids(self) -> Option<Vec<u32>> {
        self.ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Header, RecordWriter};

    #[test]
    fn records_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.fpd");
        let caps = [
            Capture { key: u128::MAX, order: u64::MAX, kind: CaptureKind::Doc(u32::MAX - 1) },
            Capture { key: 7, order: 3, kind: CaptureKind::Gone(404) },
            Capture { key: 7, order: 4, kind: CaptureKind::Same },
            Capture { key: 0, order: 0, kind: CaptureKind::Redirect(301) },
        ];
        let mut w = RecordWriter::create(&path, Header::new::<Capture>("", false, 0, 1)).unwrap();
        for c in &caps {
            w.push(c).unwrap();
        }
        w.finish().unwrap();
        assert_eq!(Mapped::<Capture>::open(&path).unwrap().iter().collect::<Vec<_>>(), caps);

        let path = dir.path().join("ids.fpd");
        let mut w = RecordWriter::create(&path, Header::new::<DocIdRecord>("", false, 0, 1)).unwrap();
        for (i, id) in [0u32, 4, 5, 90].iter().enumerate() {
            w.push(&DocIdRecord { doc_id: *id, missing_for: i as u16, flags: HAS_URL | STANDS }).unwrap();
        }
        w.finish().unwrap();
        let ids = DocIds::open_file(&path).unwrap();
        assert_eq!((0..4).map(|r| ids.doc_id(r)).collect::<Vec<_>>(), [0, 4, 5, 90]);
        assert_eq!((ids.row(5), ids.row(6), ids.row(90), ids.row(91)), (Some(2), None, Some(3), None));
        assert_eq!(ids.get(3).missing_for, 3);
        assert!(!ids.rows_are_ids);

        // DocIDs from 0 to the last row are the rows: answered without the
        // file, the same as from it; its other fields still come from it.
        for (name, docs) in [("first.fpd", vec![0u32, 1, 2]), ("one.fpd", vec![0]), ("none.fpd", vec![])] {
            let path = dir.path().join(name);
            let mut w = RecordWriter::create(&path, Header::new::<DocIdRecord>("", false, 0, 1)).unwrap();
            for &id in &docs {
                w.push(&DocIdRecord { doc_id: id, missing_for: 7, flags: 0 }).unwrap();
            }
            w.finish().unwrap();
            let ids = DocIds::open_file(&path).unwrap();
            assert!(ids.rows_are_ids, "{name}");
            let n = docs.len() as u32;
            assert_eq!((0..n).map(|r| ids.doc_id(r)).collect::<Vec<_>>(), docs);
            assert_eq!(
                (0..=n).map(|d| ids.row(d)).collect::<Vec<_>>(),
                (0..=n).map(|d| (d < n).then_some(d)).collect::<Vec<_>>()
            );
            if n > 0 {
                assert_eq!((ids.get(0).missing_for, ids.get(0).flags), (7, 0));
            }
        }
    }

    #[test]
    fn row_ids_are_held_only_once_they_differ_from_the_rows() {
        let mut ids = RowIds::default();
        for id in [0, 1, 2] {
            ids.push(id);
        }
        assert!(ids.ids.is_none(), "a first analysis holds no list");
        assert_eq!((ids.id(2), ids.row(1), ids.row(3)), (2, Some(1), None));
        for id in [5, 9] {
            ids.push(id);
        }
        assert_eq!(ids.ids.as_deref(), Some(&[0, 1, 2, 5, 9][..]));
        assert_eq!((ids.rows(), ids.id(3), ids.row(9), ids.row(4)), (5, 5, Some(4), None));
        // A chain whose first row is not docID 0.
        let mut ids = RowIds::default();
        for id in [1, 2, 4] {
            ids.push(id);
        }
        assert_eq!((ids.id(0), ids.id(2), ids.row(2), ids.row(0), ids.row(3)), (1, 4, Some(1), None, None));
        assert_eq!(ids.into_ids(), Some(vec![1, 2, 4]));
        // Reserved once for the rows expected, not grown by doubling.
        let mut ids = RowIds::expecting(1000);
        for id in (0..5).chain(7..900) {
            ids.push(id);
        }
        let list = ids.into_ids().unwrap();
        assert_eq!((list.len(), list.capacity(), list[5]), (898, 1000, 7));
        let mut ids = RowIds::expecting(1000);
        ids.push(0);
        assert_eq!(ids.into_ids(), None, "a first analysis lists nothing");
    }
}
