//! Copies the WARC file itself declares, found without extraction.
//!
//! Two kinds of record repeat an earlier one:
//!
//! - A response whose `WARC-Payload-Digest` equals an earlier response's,
//!   decoded the same way (same content type, charset and HTTP codings):
//!   its payload bytes are the same, so its extraction would give the same
//!   text. It becomes a copy of the earlier document (the *payload-digest
//!   shortcut*), mostly without being extracted. The key includes the way
//!   the body is decoded because a digest covers the stored payload only:
//!   the same bytes served as `text/plain` and as `text/html`, or with
//!   another charset, are different documents.
//! - A `revisit` record: a later capture of a page the writer did not store
//!   again because its payload was the same. It is found by its payload
//!   digest, or by `WARC-Refers-To-Target-URI` and `WARC-Refers-To-Date`
//!   naming the original's `WARC-Target-URI` and `WARC-Date`.
//!
//! A copy is a document of its own (its URL, its source) whose text is the
//! original's: it gets the original's exact hash, so the exact stage puts
//! it in the original's group (where the original, with the smaller docID,
//! stays the center), the original's FPrint-DocID records under its own
//! docID, and the original's `bytes`, `lines`, `chunks` and `title` in
//! docs.csv. If the original was not a document (an image, a 404), the
//! copy is skipped for the same reason. A revisit whose original was not
//! read before it is skipped as `revisit_unresolved`.
//!
//! The copy's own rows are filled in after the ingest, from the files
//! already written, so nothing of an original is held in memory while
//! reading on the chance that a later record repeats it:
//! [`fill_exact`] adds the copies' exact hashes, [`fill_docs`] their
//! docs.csv fields, and [`Expander`] their fingerprints while partitions
//! are sorted.
//!
//! Which record is first with a key is only known in input order, when
//! records are written; records are read and extracted in parallel, out of
//! that order. A read job asks the index for a [`Hint`]: a document whose
//! payload an earlier record already claimed is surely a copy and is not
//! extracted; one whose payload an earlier record not yet written has is
//! likely one, and waits, payload kept, for its claim; any other is
//! extracted, and if its claim then makes it a copy after all (it was read
//! before its original), that work is dropped. So the outputs are the same
//! as if every record were claimed before it was extracted.
//!
//! Memory: the [`CopyIndex`] holds one 28-byte slot (a 96-bit key, the
//! decoding's 32-bit hash, the outcome, the 64-bit place in input order of
//! the earliest record seen with it) per response with a payload digest,
//! plus one per response without a digest that has a target URI and a
//! date; with the hash table's spare capacity that is 32 to 64 bytes per
//! response. Its table stops growing at a quarter of `--memory`; the slots
//! beyond go to sorted runs on disk ([`super::copy_runs`]). On 2.1 million
//! pages at `--memory 256M` that took the fingerprint stage's peak RSS from
//! 220 MB to 135 MB in the same time (43.1 s, interleaved rounds) and with
//! the same outputs: the table no longer grows to 2^22 buckets, nor holds
//! the old and new tables while it does. Keys are 96 bits of an xxh3-128
//! so that an accidental collision stays negligible (about n²/2⁹⁷) at any
//! crawl size one machine reads. The list of copies is 8 bytes per copy.
//! [`fill_docs`] holds the docs.csv row (about 100-200 bytes, most of it
//! the title) of each original whose copies are not all written yet: at
//! worst one row per original with copies, usually far fewer, since a
//! revisit or a mirror's copy tends to follow its original soon.
//! Responses with a digest are not also indexed by URI and date: a revisit
//! of the identical-payload-digest profile carries the digest, so that
//! second slot would only serve revisits without one, whose originals
//! mostly lack a digest too.

use std::collections::HashMap;
use std::path::Path;

use anyhow::bail;
use xxhash_rust::xxh3::{Xxh3, xxh3_128};

use super::copy_runs::{RunSlot, Runs};
use super::copy_table::Shards;
use crate::bytes::read::{Digest, RawDoc, Revisit, SkipReason};
use crate::store::docs::{Doc, DocTable, DocsWriter, TextFields, for_each_row};
use crate::store::handles::Payload;
use crate::store::{self, ChunkRecord, ExactRecord, FuzzySignature, Header, Mapped, OutDir, RecordWriter};

/// An index key: 96 bits of a hash of a digest, or of a URI and a date.
pub type Key = [u8; 12];

/// The key of `parts` in `domain`: the hash of the domain byte, then each
/// part's length and bytes. A digest's key (25 bytes hashed), made for
/// nearly every response, is hashed from the stack: a `Vec` per key was a
/// third of this function's instructions.
fn key_of(domain: u8, parts: &[&[u8]]) -> Key {
    let len = 1 + parts.iter().map(|p| 8 + p.len()).sum::<usize>();
    let mut stack = [0u8; 64];
    let mut heap = Vec::new();
    let buf: &mut [u8] = if len <= stack.len() {
        &mut stack[..len]
    } else {
        heap.resize(len, 0);
        &mut heap
    };
    buf[0] = domain;
    let mut at = 1;
    for part in parts {
        buf[at..at + 8].copy_from_slice(&(part.len() as u64).to_le_bytes());
        buf[at + 8..at + 8 + part.len()].copy_from_slice(part);
        at += 8 + part.len();
    }
    let h = xxh3_128(buf).to_le_bytes();
    let mut key = [0u8; 12];
    key.copy_from_slice(&h[..12]);
    key
}

fn digest_key(digest: Digest) -> Key {
    key_of(b'd', &[&digest.0.to_le_bytes()])
}

fn uri_date_key(uri: &str, date: &str) -> Key {
    key_of(b'u', &[uri.as_bytes(), date.trim().as_bytes()])
}

/// What became of the record a key names, packed in a `u32`: a docID, a
/// skip reason, or not written yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Became {
    Pending,
    Doc(u32),
    Skip(SkipReason),
}

/// Claimed in input order, not written yet.
const PENDING: u32 = u32::MAX;
/// Seen by a read job, not claimed in input order yet.
const UNCLAIMED: u32 = u32::MAX - 1;
/// Codes from here up are skip reasons, `UNCLAIMED` and `PENDING`; docIDs
/// stay below.
const FIRST_CODE: u32 = u32::MAX - 2 - SkipReason::ALL.len() as u32;

impl Became {
    fn pack(self) -> u32 {
        match self {
            Became::Pending => PENDING,
            Became::Doc(id) => id,
            Became::Skip(reason) => {
                FIRST_CODE + SkipReason::ALL.iter().position(|&r| r == reason).unwrap_or(0) as u32
            }
        }
    }

    fn unpack(code: u32) -> Became {
        match code {
            PENDING | UNCLAIMED => Became::Pending,
            c if c < FIRST_CODE => Became::Doc(c),
            c => SkipReason::ALL.get((c - FIRST_CODE) as usize).map_or(Became::Pending, |&r| Became::Skip(r)),
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    /// 32 bits of the hash of how the body was decoded (type, charset,
    /// codings), 0 for URI-and-date keys: once claimed, the first claimer's;
    /// before, that of the earliest record seen by a read job.
    decoding: u32,
    outcome: u32,
    /// Before the key is claimed: the place in input order (see
    /// [`pipeline::Key::order`](super::pipeline::Key::order)) of the
    /// earliest record seen with it, as two halves so that the slot needs
    /// only 4-byte alignment.
    first: [u32; 2],
}

/// The index key of a document-to-be, and how its body was decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClaimKey {
    key: Key,
    decoding: u32,
    /// Keyed by its payload digest, not by its URI and date.
    digest: bool,
}

impl ClaimKey {
    /// `doc`'s key, if it has one: its payload digest, or else its target
    /// URI and date.
    pub fn of(doc: &RawDoc) -> Option<ClaimKey> {
        match (&doc.payload_digest, &doc.date) {
            (Some(digest), _) => {
                Some(ClaimKey { key: digest_key(*digest), decoding: decoding_hash(doc), digest: true })
            }
            (None, Some(date)) if !doc.url.is_empty() => {
                Some(ClaimKey { key: uri_date_key(&doc.url, date), decoding: 0, digest: false })
            }
            _ => None,
        }
    }
}

/// What the index makes of a document-to-be, in input order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    /// The first record with this key: write it as a document, then
    /// [`CopyIndex::record`] what it became.
    Original(Key),
    /// Same payload and decoding as an earlier record: a copy of it.
    Copy(Key),
    /// Nothing to index, or a digest seen before with another decoding.
    None,
}

/// What a read job may do with a document before the records before it
/// are written: a guess made from the records read so far, which saves
/// extracting copies; [`CopyIndex::claim`] decides, in input order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hint {
    /// No earlier record with this payload is known: extract it.
    Extract,
    /// A record before it, already claimed, has the same payload decoded
    /// the same way: it will be claimed as a copy, for certain.
    Copy(Key),
    /// A record before it, not claimed yet, has the same payload decoded
    /// the same way: most likely a copy, but the record that is first in
    /// input order may not be that one, so keep the payload until claimed.
    Wait,
}

/// The keys of the records read so far. Read jobs, in any order, note the
/// keys they see ([`CopyIndex::hint`]); the writer claims them in input
/// order ([`CopyIndex::claim`]) and records what the originals became.
/// Every record written has been read, and every record still being read
/// comes after every record written, which is what makes a claimed key a
/// certain answer for a read job.
///
/// The table holds at most `max_slots` slots; beyond that the slots whose
/// outcome is recorded go to sorted runs on disk ([`Runs`]), which every
/// lookup that misses the table asks. Without a bound ([`Default`]) it
/// never spills.
pub struct CopyIndex {
    slots: Shards<Slot>,
    max_slots: usize,
    /// The table's size at which the next claim spills: `max_slots`,
    /// unless the slots still in play (read ahead, not claimed yet) hold
    /// most of it, when spilling at every claim would scan the table for
    /// little.
    spill_at: usize,
    runs: Option<Runs>,
}

impl Default for CopyIndex {
    fn default() -> CopyIndex {
        CopyIndex { slots: Shards::default(), max_slots: usize::MAX, spill_at: usize::MAX, runs: None }
    }
}

/// Bytes of the table per slot: a 12-byte key, the 16-byte [`Slot`], and
/// the hash table's control byte.
const SLOT_BYTES: u64 = 29;

/// Marks, in a claimed slot's `first` (which only unclaimed slots use), a
/// slot read back from a run: it is not written to a run again.
const FROM_RUN: [u32; 2] = [1, 0];

impl CopyIndex {
    /// An index within `budget` bytes that spills to runs in `dir`. The
    /// table grows by doubling, and while it does, the old table and the
    /// new are both held: it stops at the largest power-of-two number of
    /// buckets whose growth fits three quarters of the budget (old and
    /// new, 1.5 times the table), and the runs' filter takes the last
    /// quarter.
    pub fn new(budget: u64, dir: &Path) -> CopyIndex {
        let table = budget / 4 * 3;
        let mut buckets = 16u64;
        while (buckets * 2) * SLOT_BYTES * 3 / 2 <= table {
            buckets *= 2;
        }
        // hashbrown grows past 7/8 of its buckets in use.
        let max_slots = usize::try_from(buckets / 8 * 7).unwrap_or(usize::MAX);
        CopyIndex::bounded(max_slots, dir, budget / 4)
    }

    /// An index of at most `max_slots` slots in its table, and a filter
    /// of `filter_bytes` over its runs in `dir`.
    fn bounded(max_slots: usize, dir: &Path, filter_bytes: u64) -> CopyIndex {
        let runs = Some(Runs::new(dir, filter_bytes));
        CopyIndex { slots: Shards::for_slots(max_slots), max_slots, spill_at: max_slots, runs }
    }

    /// Slots written to runs so far.
    #[cfg(test)]
    fn spilled(&self) -> u64 {
        self.runs.as_ref().map_or(0, |r| r.slots)
    }

    /// Whether the table may take one more slot without growing past
    /// `max_slots`, its capacity. hashbrown makes room for one more slot
    /// before every `insert` or `entry`, even of a key it has: called on a
    /// full table, either grew it from 2^20 buckets to 2^21 (91 MB with the
    /// old table, at `--memory 256M`, heaptrack). So a key already held is
    /// changed in place ([`CopyIndex::set`]), and a new one is inserted only
    /// while there is room.
    fn has_room(&self) -> bool {
        self.slots.len() < self.max_slots
    }

    /// Sets the slot of `key`, in place if the table holds it.
    fn set(&mut self, key: &Key, slot: Slot) {
        match self.slots.get_mut(key) {
            Some(held) => *held = slot,
            None => {
                self.slots.insert(*key, slot);
            }
        }
    }

    /// The slot of `key` in a run, if one has it, now also held in the
    /// table (marked [`FROM_RUN`]) while it has room, for the lookups that
    /// follow: a copy is claimed, then its original's outcome read.
    fn in_runs(&mut self, key: &Key) -> anyhow::Result<Option<Slot>> {
        let Some(runs) = self.runs.as_ref().filter(|r| r.slots > 0) else { return Ok(None) };
        let Some(found) = runs.get(key)? else { return Ok(None) };
        let slot = Slot { decoding: found.decoding, outcome: found.outcome, first: FROM_RUN };
        if self.has_room() || self.slots.contains_key(key) {
            self.set(key, slot);
        }
        Ok(Some(slot))
    }

    /// Moves the slots whose outcome is recorded, and which no run has
    /// yet, to a new run; keeps the slots still in play.
    fn spill(&mut self) -> anyhow::Result<()> {
        let Some(runs) = &mut self.runs else { return Ok(()) };
        let in_play = |s: &Slot| s.outcome == UNCLAIMED || s.outcome == PENDING;
        let out: Vec<RunSlot> = self
            .slots
            .iter()
            .filter(|(_, s)| !in_play(s) && s.first != FROM_RUN)
            .map(|(key, s)| RunSlot { key: *key, decoding: s.decoding, outcome: s.outcome })
            .collect();
        self.slots.retain(|_, s| in_play(s));
        runs.add(out)
    }

    /// Notes that a read job has the document keyed `claim` at place
    /// `order` in input order, and says what it may do with it. A run
    /// that cannot be read makes it [`Hint::Extract`]: a hint only saves
    /// work, and the claim reports the error.
    pub fn hint(&mut self, claim: &ClaimKey, order: u64) -> Hint {
        if !claim.digest {
            // Without a digest a record is never a copy by its key.
            return Hint::Extract;
        }
        let first = [order as u32, (order >> 32) as u32];
        if self.runs.as_ref().is_some_and(|r| r.slots > 0)
            && !self.slots.contains_key(&claim.key)
            && let Ok(Some(slot)) = self.in_runs(&claim.key)
        {
            return if slot.decoding == claim.decoding { Hint::Copy(claim.key) } else { Hint::Extract };
        }
        let room = self.has_room();
        let Some(slot) = self.slots.get_mut(&claim.key) else {
            // A full table takes no note: the next claim makes room.
            if room {
                self.slots.insert(claim.key, Slot { decoding: claim.decoding, outcome: UNCLAIMED, first });
            }
            return Hint::Extract;
        };
        let same = slot.decoding == claim.decoding;
        if slot.outcome != UNCLAIMED {
            return if same { Hint::Copy(claim.key) } else { Hint::Extract };
        }
        let seen = u64::from(slot.first[0]) | u64::from(slot.first[1]) << 32;
        if order < seen {
            *slot = Slot { decoding: claim.decoding, outcome: UNCLAIMED, first };
            Hint::Extract
        } else if order > seen && same {
            Hint::Wait
        } else {
            Hint::Extract
        }
    }

    /// Claims the document keyed `claim`, in input order.
    pub fn claim(&mut self, claim: &ClaimKey) -> anyhow::Result<Claim> {
        if self.slots.len() >= self.spill_at {
            self.spill()?;
            self.spill_at = self.max_slots.max(self.slots.len() + self.max_slots / 2);
        }
        let claimed = match self.slots.get(&claim.key) {
            Some(slot) if slot.outcome != UNCLAIMED => Some(*slot),
            // Not claimed in the table: a run may have it.
            _ => self.in_runs(&claim.key)?,
        };
        Ok(match claimed {
            // Without a digest, the same URI and date twice is no proof of
            // the same payload.
            Some(slot) if claim.digest && slot.decoding == claim.decoding => Claim::Copy(claim.key),
            Some(_) => Claim::None,
            None => {
                self.set(&claim.key, Slot { decoding: claim.decoding, outcome: PENDING, first: [0; 2] });
                Claim::Original(claim.key)
            }
        })
    }

    /// Records what the original claimed as `key` became.
    pub fn record(&mut self, key: Key, outcome: Became) {
        if let Became::Doc(id) = outcome
            && id >= FIRST_CODE
        {
            return;
        }
        if let Some(slot) = self.slots.get_mut(&key)
            && slot.outcome != UNCLAIMED
        {
            slot.outcome = outcome.pack();
        }
    }

    /// What the record `key` names became, if it was written.
    pub fn outcome(&mut self, key: &Key) -> anyhow::Result<Option<Became>> {
        let slot = match self.slots.get(key) {
            Some(slot) if slot.outcome != UNCLAIMED => Some(*slot),
            _ => self.in_runs(key)?,
        };
        Ok(slot.map(|s| Became::unpack(s.outcome)).filter(|o| *o != Became::Pending))
    }

    /// The keys a revisit may name its original by, digest first.
    pub fn revisit_keys(revisit: &Revisit) -> [Option<Key>; 2] {
        [
            revisit.payload_digest.map(digest_key),
            revisit.refers_to.as_ref().map(|(uri, date)| uri_date_key(uri, date)),
        ]
    }
}

/// What `doc`'s payload is, for the URL table ([`Payload`]).
pub(crate) fn payload_of(doc: &RawDoc) -> Payload {
    match doc.payload_digest {
        Some(digest) => Payload { digest: digest.0 as u64, decoding: decoding_hash(doc) },
        None => Payload::default(),
    }
}

fn decoding_hash(doc: &RawDoc) -> u32 {
    // The three parts joined by newlines, hashed as they stream in (the
    // same hash as of the joined string, without allocating it).
    let mut hasher = Xxh3::new();
    hasher.update(doc.content_type.as_deref().unwrap_or("").as_bytes());
    hasher.update(b"\n");
    hasher.update(doc.charset.as_deref().unwrap_or("").as_bytes());
    hasher.update(b"\n");
    hasher.update(doc.codings.as_bytes());
    hasher.digest() as u32
}

/// A copy: `(copy, original)` docIDs, in the order copies were written
/// (ascending copy docID). An original is never itself a copy.
pub type Copies = Vec<(u32, u32)>;

/// Adds to `fprint-exact.fpd` (in docID order) each copy's record with its
/// original's hash. Returns how many copies are empty (their original had
/// no text, so they have no record either).
pub fn fill_exact(out: &OutDir, spec: &str, copies: &Copies) -> anyhow::Result<u64> {
    let path = out.fprint_exact();
    let src = Mapped::<ExactRecord>::open(&path)?;
    let mut dst = RecordWriter::create(&path, Header::new::<ExactRecord>(spec, false, 0, 1))?;
    let hash_of = |doc: u32| src.hash_of(doc);
    let mut empty = 0;
    let mut next = copies.iter().peekable();
    for record in src.iter() {
        while let Some(&&(copy, original)) = next.peek()
            && copy < record.doc
        {
            match hash_of(original) {
                Some(hash) => dst.push(&ExactRecord { hash, doc: copy })?,
                None => empty += 1,
            }
            next.next();
        }
        dst.push(&record)?;
    }
    for &(copy, original) in next {
        match hash_of(original) {
            Some(hash) => dst.push(&ExactRecord { hash, doc: copy })?,
            None => empty += 1,
        }
    }
    drop(src);
    store::remove_replaced(&path)?;
    dst.finish()?;
    Ok(empty)
}

/// Sets each copy's record in `fuzzy.fpd` (one per document, so a copy's
/// place holds a zero until now) to its original's signature.
pub fn fill_fuzzy(out: &OutDir, spec: &str, copies: &Copies) -> anyhow::Result<()> {
    let path = out.fuzzy();
    let src = Mapped::<FuzzySignature>::open(&path)?;
    let mut dst = RecordWriter::create(&path, Header::new::<FuzzySignature>(spec, false, 0, 1))?;
    let mut next = copies.iter().peekable();
    for (doc, record) in src.iter().enumerate() {
        match next.peek() {
            Some(&&(copy, original)) if copy as usize == doc => {
                dst.push(&src.get(original as usize))?;
                next.next();
            }
            _ => dst.push(&record)?,
        }
    }
    drop(src);
    store::remove_replaced(&path)?;
    dst.finish()?;
    Ok(())
}

/// Fills each copy's `bytes`, `lines`, `chunks` and `title` in
/// `fingerprint-docs.csv` from its original's row, in one pass: originals
/// come before their copies, and only the fields of originals that have
/// copies are held, until their last copy.
pub fn fill_docs(out: &OutDir, copies: &Copies) -> anyhow::Result<()> {
    let path = out.fingerprint_docs();
    let mut writer = DocsWriter::create(&path, DocTable::Fingerprint)?;
    // Copies left per original, and the fields of originals still needed.
    let mut wanted: HashMap<u32, u32> = HashMap::new();
    for &(_, original) in copies {
        *wanted.entry(original).or_insert(0) += 1;
    }
    let mut held: HashMap<u32, (u64, u64, u64, String, String)> = HashMap::new();
    let mut next = copies.iter().peekable();
    // The table's own row reader, not the CSV crate's records (0.30 s
    // against 0.36 s for this pass over 525,000 rows).
    for_each_row(&path, DocTable::Fingerprint, |read| {
        let doc = &read.doc;
        match next.peek() {
            Some(&&(copy, original)) if copy == doc.id => {
                next.next();
                let Some((bytes, lines, chunks, title, canonical)) = held.get(&original) else {
                    bail!("row {copy} copies document {original}, which is not before it");
                };
                let text = TextFields { bytes: *bytes, lines: *lines, chunks: *chunks, title, canonical };
                writer.push(&Doc { text: Some(text), ..*doc })?;
                let left = wanted.get_mut(&original).map(|n| {
                    *n -= 1;
                    *n
                });
                if left == Some(0) {
                    held.remove(&original);
                }
            }
            _ => {
                if wanted.contains_key(&doc.id) {
                    let Some(t) = doc.text else {
                        bail!("document {} is copied but is itself a copy", doc.id);
                    };
                    held.insert(
                        doc.id,
                        (t.bytes, t.lines, t.chunks, t.title.to_string(), t.canonical.to_string()),
                    );
                }
                writer.push_read(read, None, None)?;
            }
        }
        Ok(())
    })?;
    store::remove_replaced(&path)?;
    writer.finish()
}

/// The copies of each original, for [`Expander`]: the `(original, copy)`
/// pairs, sorted, and a bit per docID up to the last original's, set for
/// the originals. Nearly every record of a partition is of a document
/// without copies, and its bit spares it a binary search over every
/// copy: with 189,000 copies among 2.1 million pages, the records took
/// 1.0 s of CPU time to write with that search and 0.46 s without it
/// (`perf`, two threads). The bits take a byte per 8 docIDs.
pub struct ByOriginal {
    pairs: Vec<(u32, u32)>,
    has: Vec<u64>,
}

impl ByOriginal {
    pub fn new(copies: &Copies) -> ByOriginal {
        let mut pairs: Vec<(u32, u32)> = copies.iter().map(|&(copy, original)| (original, copy)).collect();
        pairs.sort_unstable();
        let words = pairs.last().map_or(0, |&(original, _)| original as usize / 64 + 1);
        let mut has = vec![0u64; words];
        for &(original, _) in &pairs {
            has[original as usize / 64] |= 1 << (original % 64);
        }
        ByOriginal { pairs, has }
    }

    /// The `(doc, copy)` pairs of `doc`'s copies, by copy.
    fn of(&self, doc: u32) -> &[(u32, u32)] {
        let at = doc as usize;
        if self.has.get(at / 64).is_none_or(|word| word >> (at % 64) & 1 == 0) {
            return &[];
        }
        let start = self.pairs.partition_point(|&(original, _)| original < doc);
        let len = self.pairs[start..].iter().take_while(|&&(original, _)| original == doc).count();
        &self.pairs[start..start + len]
    }
}

/// Adds the copies' FPrint-DocID records to a sorted stream of one
/// partition: for every `(f, original)`, a `(f, copy)` in its sorted place.
/// Copies have larger docIDs than their originals, so a copy's record is
/// held until the stream passes its docID or the fingerprint changes; what
/// is held is at most one fingerprint group's copies.
pub struct Expander<'a> {
    by_original: &'a ByOriginal,
    fprint: u64,
    held: std::collections::BinaryHeap<std::cmp::Reverse<u32>>,
    /// Records added.
    pub added: u64,
}

impl<'a> Expander<'a> {
    pub fn new(by_original: &'a ByOriginal) -> Expander<'a> {
        Expander { by_original, fprint: 0, held: Default::default(), added: 0 }
    }

    /// Emits `record`, preceded by the held copies that sort before it and
    /// followed by holding its own copies.
    pub fn push(
        &mut self,
        record: ChunkRecord,
        emit: &mut impl FnMut(ChunkRecord) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        if record.fprint != self.fprint {
            self.flush(emit)?;
            self.fprint = record.fprint;
        }
        while let Some(&std::cmp::Reverse(doc)) = self.held.peek()
            && doc < record.doc
        {
            self.held.pop();
            self.added += 1;
            emit(ChunkRecord { fprint: self.fprint, doc })?;
        }
        emit(record)?;
        for &(_, copy) in self.by_original.of(record.doc) {
            self.held.push(std::cmp::Reverse(copy));
        }
        Ok(())
    }

    /// Emits every held copy: call at the end of the stream.
    pub fn flush(&mut self, emit: &mut impl FnMut(ChunkRecord) -> anyhow::Result<()>) -> anyhow::Result<()> {
        while let Some(std::cmp::Reverse(doc)) = self.held.pop() {
            self.added += 1;
            emit(ChunkRecord { fprint: self.fprint, doc })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_decoding_hash_is_that_of_the_joined_parts() {
        for (content_type, charset, codings) in
            [(None, None, ""), (Some("text/html"), Some("utf-8"), "gzip"), (Some(""), None, "br, gzip")]
        {
            let doc = RawDoc {
                content_type: content_type.map(str::to_string),
                charset: charset.map(str::to_string),
                codings: codings.to_string(),
                ..RawDoc::default()
            };
            let joined = [content_type.unwrap_or(""), charset.unwrap_or(""), codings].join("\n");
            assert_eq!(decoding_hash(&doc), xxhash_rust::xxh3::xxh3_64(joined.as_bytes()) as u32);
        }
    }

    /// A key hashes the domain byte, then each part's length (8 bytes,
    /// little-endian) and bytes, whether they fit the stack buffer or not.
    #[test]
    fn keys_hash_the_joined_parts() {
        for parts in
            [vec![&b""[..]], vec![&[7u8; 16][..]], vec![&b"http://a/"[..], b"2024"], vec![&[1u8; 60][..]]]
        {
            let mut joined = vec![b'k'];
            for part in &parts {
                joined.extend_from_slice(&(part.len() as u64).to_le_bytes());
                joined.extend_from_slice(part);
            }
            let hash = xxh3_128(&joined).to_le_bytes();
            assert_eq!(key_of(b'k', &parts)[..], hash[..12], "{} bytes", joined.len());
        }
    }

    fn raw(digest: Option<&str>, content_type: &str, url: &str, date: Option<&str>) -> RawDoc {
        RawDoc {
            url: url.into(),
            content_type: Some(content_type.into()),
            payload_digest: digest.and_then(crate::bytes::read::digest::parse),
            date: date.map(str::to_string),
            ..RawDoc::default()
        }
    }

    fn claim(index: &mut CopyIndex, doc: &RawDoc) -> Claim {
        index.claim(&ClaimKey::of(doc).expect("a key")).expect("no runs to read")
    }

    fn outcome(index: &mut CopyIndex, key: &Key) -> Option<Became> {
        index.outcome(key).expect("runs read")
    }

    #[test]
    fn the_same_digest_decoded_the_same_way_is_a_copy() {
        let mut index = CopyIndex::default();
        let a = raw(Some("sha1:VL2MMHO4YXUKFWV63YHTWSBM3GXKSQ2N"), "text/html", "http://a/", None);
        let Claim::Original(key) = claim(&mut index, &a) else { panic!() };
        // Base16 of the same digest, another URL.
        let b = raw(Some("sha1:aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d"), "text/html", "http://b/", None);
        assert_eq!(claim(&mut index, &b), Claim::Copy(key));
        // Same bytes as text/plain, or gzip-encoded: extracted on their own.
        let c = raw(Some("sha1:VL2MMHO4YXUKFWV63YHTWSBM3GXKSQ2N"), "text/plain", "http://c/", None);
        assert_eq!(claim(&mut index, &c), Claim::None);
        let d = RawDoc { codings: "gzip".into(), ..a.clone() };
        assert_eq!(claim(&mut index, &d), Claim::None);
        assert_eq!(outcome(&mut index, &key), None, "pending until written");
        index.record(key, Became::Doc(7));
        assert_eq!(outcome(&mut index, &key), Some(Became::Doc(7)));
        index.record(key, Became::Skip(SkipReason::UnsupportedContentType));
        assert_eq!(outcome(&mut index, &key), Some(Became::Skip(SkipReason::UnsupportedContentType)));
    }

    /// Records with one of twelve digests (or none, from 12 up) and one of
    /// two decodings.
    fn doc_of(digest: u8, html: bool) -> RawDoc {
        let digest = (digest < 12).then(|| format!("sha1:{:040x}", digest));
        let kind = if html { "text/html" } else { "text/plain" };
        raw(digest.as_deref(), kind, "http://a/", Some("D"))
    }

    proptest::proptest! {
        /// Read jobs see records in any order and hint about them while
        /// the writer claims them in input order: the claims are those of
        /// claiming alone, a certain hint is right, and the outcomes are
        /// the same; also when the table holds a few slots and the rest
        /// spill to runs (`bound` 1 to 4; 0 is no bound), read through a
        /// filter of one block (`tiny_filter`) or of many.
        #[test]
        fn hints_in_any_read_order_leave_claims_as_they_are(
            docs in proptest::collection::vec((0u8..14, proptest::bool::ANY), 1..40),
            shuffle in proptest::collection::vec(proptest::num::usize::ANY, 40),
            flushes in proptest::collection::vec(proptest::bool::ANY, 40),
            bound in 0usize..5,
            tiny_filter in proptest::bool::ANY,
        ) {
            let docs: Vec<RawDoc> = docs.iter().map(|&(d, html)| doc_of(d, html)).collect();
            let mut alone = CopyIndex::default();
            let expected: Vec<Claim> = docs
                .iter()
                .enumerate()
                .map(|(at, d)| {
                    let claimed = claim(&mut alone, d);
                    if let Claim::Original(key) = claimed {
                        alone.record(key, Became::Doc(at as u32));
                    }
                    claimed
                })
                .collect();

            // A read order: a shuffle of the records.
            let mut order: Vec<usize> = (0..docs.len()).collect();
            for i in (1..order.len()).rev() {
                order.swap(i, shuffle[i] % (i + 1));
            }
            let dir = tempfile::tempdir().unwrap();
            let mut index = match bound {
                0 => CopyIndex::default(),
                n => CopyIndex::bounded(n, dir.path(), if tiny_filter { 64 } else { 4096 }),
            };
            let mut hints = vec![None; docs.len()];
            let mut claims = Vec::new();
            for (step, &i) in order.iter().enumerate() {
                let key = ClaimKey::of(&docs[i]).unwrap();
                let before = index.slots.len();
                hints[i] = Some(index.hint(&key, i as u64));
                // A hint never grows a full table.
                if bound > 0 {
                    proptest::prop_assert!(index.slots.len() <= before.max(bound));
                }
                // Write, now or later, every record read up to the first
                // one not read yet.
                if flushes[step] || step + 1 == order.len() {
                    while claims.len() < docs.len() && hints[claims.len()].is_some() {
                        let at = claims.len();
                        let claimed = claim(&mut index, &docs[at]);
                        if let Claim::Original(key) = claimed {
                            index.record(key, Became::Doc(at as u32));
                        }
                        claims.push(claimed);
                    }
                }
            }
            proptest::prop_assert_eq!(&claims, &expected);
            for (hint, claimed) in hints.iter().zip(&claims) {
                if let Some(Hint::Copy(key)) = hint {
                    proptest::prop_assert_eq!(claimed, &Claim::Copy(*key));
                }
            }
            for d in 0..14 {
                for html in [false, true] {
                    let key = ClaimKey::of(&doc_of(d, html)).unwrap().key;
                    proptest::prop_assert_eq!(outcome(&mut index, &key), outcome(&mut alone, &key));
                }
            }
        }
    }

    /// A table of two slots: the originals go to runs, and copies, hints
    /// and outcomes find them there.
    #[test]
    fn originals_spilled_to_runs_are_found_there() {
        let dir = tempfile::tempdir().unwrap();
        let mut index = CopyIndex::bounded(2, dir.path(), 64);
        let mut keys = Vec::new();
        for d in 0..12 {
            let Claim::Original(key) = claim(&mut index, &doc_of(d, true)) else { panic!("{d} is first") };
            index.record(key, Became::Doc(u32::from(d)));
            keys.push(key);
        }
        assert!(index.spilled() >= 9, "{} slots spilled", index.spilled());
        assert!(index.slots.len() <= 3);
        for d in 0..12 {
            let key = ClaimKey::of(&doc_of(d, true)).unwrap();
            assert_eq!(index.hint(&key, 100 + u64::from(d)), Hint::Copy(key.key));
            assert_eq!(claim(&mut index, &doc_of(d, true)), Claim::Copy(key.key));
            assert_eq!(claim(&mut index, &doc_of(d, false)), Claim::None, "decoded another way");
            assert_eq!(outcome(&mut index, &keys[d as usize]), Some(Became::Doc(u32::from(d))));
        }
        // Slots read back are not written again.
        let spilled = index.spilled();
        for d in 12..40 {
            if let Claim::Original(key) = claim(&mut index, &doc_of(d % 12, true)) {
                panic!("{key:?} claimed twice");
            }
        }
        assert_eq!(index.spilled(), spilled);
    }

    /// A table bounded at a hash table's capacity (7 slots, 8 buckets)
    /// stays at that capacity while read jobs note keys ahead of the
    /// claims, and copies of spilled originals are found.
    #[test]
    fn a_full_table_does_not_grow() {
        let dir = tempfile::tempdir().unwrap();
        let mut index = CopyIndex::bounded(7, dir.path(), 64);
        let doc = |i: usize| {
            // Every fifth record repeats the payload of one read long before.
            let digest = if i % 5 == 4 { i / 4 } else { i };
            raw(Some(&format!("sha1:{digest:040x}")), "text/html", "http://a/", None)
        };
        let ahead = 3;
        for i in 0..ahead {
            index.hint(&ClaimKey::of(&doc(i)).unwrap(), i as u64);
        }
        let mut copies = 0;
        for i in 0..300 {
            index.hint(&ClaimKey::of(&doc(i + ahead)).unwrap(), (i + ahead) as u64);
            match claim(&mut index, &doc(i)) {
                Claim::Original(key) => index.record(key, Became::Doc(i as u32)),
                Claim::Copy(_) => copies += 1,
                Claim::None => panic!("one decoding"),
            }
            assert!(index.slots.capacity() <= 7, "record {i}: capacity {}", index.slots.capacity());
        }
        assert_eq!(copies, (0..300).filter(|i| i % 5 == 4 && (i / 4) % 5 != 4).count());
        assert!(index.spilled() > 200);
    }

    #[test]
    fn a_hint_is_certain_once_the_first_record_is_claimed() {
        let mut index = CopyIndex::default();
        let (a, b, c) = (doc_of(0, false), doc_of(0, false), doc_of(0, true));
        let (ka, kb, kc) = (ClaimKey::of(&a).unwrap(), ClaimKey::of(&b).unwrap(), ClaimKey::of(&c).unwrap());
        // Read out of order: b, then a before it.
        assert_eq!(index.hint(&kb, 5), Hint::Extract);
        assert_eq!(index.hint(&ka, 2), Hint::Extract);
        // A later record, while the earliest is not claimed yet: wait.
        assert_eq!(index.hint(&kb, 7), Hint::Wait);
        // Decoded another way: extract.
        assert_eq!(index.hint(&kc, 8), Hint::Extract);
        let Ok(Claim::Original(key)) = index.claim(&ka) else { panic!("a is first") };
        assert_eq!(index.hint(&kb, 9), Hint::Copy(key));
        assert_eq!(index.hint(&kc, 9), Hint::Extract);
        assert_eq!(index.claim(&kc).unwrap(), Claim::None);
        // Without a digest a record is never a copy by its key.
        let plain = raw(None, "text/html", "http://a/", Some("D"));
        assert_eq!(index.hint(&ClaimKey::of(&plain).unwrap(), 1), Hint::Extract);
    }

    #[test]
    fn revisits_find_originals_by_digest_or_by_uri_and_date() {
        let mut index = CopyIndex::default();
        let a = raw(Some("sha1:VL2MMHO4YXUKFWV63YHTWSBM3GXKSQ2N"), "text/html", "http://a/", Some("D1"));
        let b = raw(None, "text/html", "http://b/", Some("2024-01-01T00:00:00Z"));
        let Claim::Original(ka) = claim(&mut index, &a) else { panic!() };
        let Claim::Original(kb) = claim(&mut index, &b) else { panic!() };
        // The same URI and date again, without a digest: not a copy.
        assert_eq!(claim(&mut index, &b), Claim::None);
        index.record(ka, Became::Doc(0));
        index.record(kb, Became::Doc(1));
        let by_digest = Revisit {
            payload_digest: crate::bytes::read::digest::parse(
                "sha1:aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d",
            ),
            ..Revisit::default()
        };
        let by_uri = Revisit {
            refers_to: Some(("http://b/".into(), " 2024-01-01T00:00:00Z".into())),
            ..Revisit::default()
        };
        let mut outcomes = |r: &Revisit| -> Vec<Option<Became>> {
            CopyIndex::revisit_keys(r)
                .iter()
                .map(|k| k.as_ref().and_then(|k| outcome(&mut index, k)))
                .collect()
        };
        assert_eq!(outcomes(&by_digest), [Some(Became::Doc(0)), None]);
        assert_eq!(outcomes(&by_uri), [None, Some(Became::Doc(1))]);
        // The original with a digest is not indexed by URI and date.
        let by_uri_a = Revisit { refers_to: Some(("http://a/".into(), "D1".into())), ..Revisit::default() };
        assert_eq!(outcomes(&by_uri_a), [None, None]);
    }

    #[test]
    fn outcomes_pack_and_unpack() {
        for o in [Became::Pending, Became::Doc(0), Became::Doc(FIRST_CODE - 1)]
            .into_iter()
            .chain(SkipReason::ALL.iter().map(|&r| Became::Skip(r)))
        {
            assert_eq!(Became::unpack(o.pack()), o);
        }
    }

    proptest::proptest! {
        /// The copies of a docID are those the list pairs it with, in
        /// order, whether its bit is set or not.
        #[test]
        fn copies_by_original_are_those_of_the_list(
            originals in proptest::collection::vec(0u32..300, 0..60),
        ) {
            let copies: Copies = originals.iter().enumerate().map(|(i, &o)| (1000 + i as u32, o)).collect();
            let by_original = ByOriginal::new(&copies);
            for doc in 0..320 {
                let mut want: Vec<(u32, u32)> =
                    copies.iter().filter(|&&(_, o)| o == doc).map(|&(c, o)| (o, c)).collect();
                want.sort_unstable();
                proptest::prop_assert_eq!(by_original.of(doc), &want[..], "doc {}", doc);
            }
        }
    }

    #[test]
    fn expander_puts_copies_in_sorted_place() {
        // Copies: 5 of 1, 3 of 1, 4 of 2.
        let by_original = ByOriginal::new(&vec![(5, 1), (3, 1), (4, 2)]);
        let stream = [(10u64, 0u32), (10, 1), (10, 2), (10, 6), (11, 2), (12, 1)];
        let mut got = Vec::new();
        let mut ex = Expander::new(&by_original);
        let mut emit = |r: ChunkRecord| {
            got.push((r.fprint, r.doc));
            Ok(())
        };
        for (fprint, doc) in stream {
            ex.push(ChunkRecord { fprint, doc }, &mut emit).unwrap();
        }
        ex.flush(&mut emit).unwrap();
        assert_eq!(
            got,
            [
                (10, 0),
                (10, 1),
                (10, 2),
                (10, 3),
                (10, 4),
                (10, 5),
                (10, 6),
                (11, 2),
                (11, 4),
                (12, 1),
                (12, 3),
                (12, 5)
            ]
        );
        assert_eq!(ex.added, 6);
    }
}
