//! The copy index's slots beyond its share of memory: sorted runs on disk.
//!
//! The [`CopyIndex`](super::copies::CopyIndex) keeps one slot per response
//! with a payload digest, so without a bound it grows with the crawl (32
//! to 64 bytes a response: about 1 GB for the paper's 24 million pages).
//! Once its table is full, the slots whose outcome is recorded (nothing
//! more will change in them) are sorted by key and written here as a
//! *run*; a later claim, hint or revisit that misses the table asks the
//! runs. A key is in at most one place: a claim looks here before it
//! makes a key an original, and a slot read back from a run is never
//! written to a run again.
//!
//! - A Bloom filter over every key written here, of a size fixed by the
//!   budget, answers most misses without reading the disk: nearly every
//!   response has a payload of its own, so nearly every lookup is a miss.
//!   As the crawl outgrows the filter its false positives rise, which costs
//!   reads, never a wrong answer.
//! - A run is found by a binary search of its blocks' first keys (12 bytes
//!   per block of [`BLOCK`] slots, 0.06 bytes a slot), then one read of the
//!   block.
//! - After each new run, the two newest are merged while the newer holds
//!   at least half as many slots as the older: each run then holds more
//!   than twice the next, so there are at most log2 of the slots' count
//!   runs, and a slot is rewritten at most that many times.
//!
//! Run files (scratch record kind 17, 20 bytes, see `store`): the 12-byte
//! key, the decoding's hash (`u32`) and the packed outcome (`u32`),
//! ascending by key.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::copies::Key;
use crate::store::{self, HEADER_SIZE, Header, Record, RecordReader, RecordWriter, le_u32};

/// Slots per block: a block read is 4,080 bytes, one page.
const BLOCK: usize = 204;

/// A slot on disk: its key, its decoding's hash and its packed outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct RunSlot {
    pub key: Key,
    pub decoding: u32,
    pub outcome: u32,
}

impl Record for RunSlot {
    const KIND: u32 = 17;
    const SIZE: usize = 20;
    fn encode(&self, out: &mut [u8]) {
        out[..12].copy_from_slice(&self.key);
        out[12..16].copy_from_slice(&self.decoding.to_le_bytes());
        out[16..20].copy_from_slice(&self.outcome.to_le_bytes());
    }
    fn decode(b: &[u8]) -> Self {
        let mut key = [0u8; 12];
        key.copy_from_slice(&b[..12]);
        RunSlot { key, decoding: le_u32(&b[12..16]), outcome: le_u32(&b[16..20]) }
    }
}

/// One sorted run file.
struct Run {
    path: PathBuf,
    file: File,
    len: usize,
    /// The first key of each block.
    firsts: Vec<Key>,
}

impl Run {
    /// Writes `slots` (sorted, keys distinct) as the run file `path`.
    fn write(path: PathBuf, slots: impl Iterator<Item = anyhow::Result<RunSlot>>) -> anyhow::Result<Run> {
        let mut writer = RecordWriter::<RunSlot>::create(&path, Header::new::<RunSlot>("", true, 0, 1))?;
        let mut firsts = Vec::new();
        let mut len = 0usize;
        for slot in slots {
            let slot = slot?;
            if len.is_multiple_of(BLOCK) {
                firsts.push(slot.key);
            }
            writer.push(&slot)?;
            len += 1;
        }
        writer.finish()?;
        firsts.shrink_to_fit();
        let file = File::open(&path).with_context(|| format!("cannot open {}", path.display()))?;
        Ok(Run { path, file, len, firsts })
    }

    /// The slot of `key`, if this run has it.
    fn get(&self, key: &Key) -> anyhow::Result<Option<RunSlot>> {
        let block = match self.firsts.partition_point(|first| first <= key) {
            0 => return Ok(None),
            n => n - 1,
        };
        let start = block * BLOCK;
        let count = BLOCK.min(self.len - start);
        let mut buf = [0u8; BLOCK * RunSlot::SIZE];
        let bytes = &mut buf[..count * RunSlot::SIZE];
        let offset = (HEADER_SIZE + start * RunSlot::SIZE) as u64;
        self.file
            .read_exact_at(bytes, offset)
            .with_context(|| format!("cannot read {} at offset {offset}", self.path.display()))?;
        let (slots, _) = bytes.as_chunks::<{ RunSlot::SIZE }>();
        let found = slots.binary_search_by(|slot| slot[..12].cmp(&key[..]));
        Ok(found.ok().map(|i| RunSlot::decode(&slots[i])))
    }

    fn remove(self) -> anyhow::Result<()> {
        drop(self.file);
        store::remove_file_if_exists(&self.path)
    }
}

/// A blocked Bloom filter over 96-bit keys. Keys are already uniform hash
/// bits (an xxh3-128 of the digest), so the filter takes its block and its
/// three bits from the key itself rather than hashing again; a crate's
/// filter would hash each key once more. Three bits within one 64-byte
/// block cost one cache miss a lookup.
struct Bloom {
    blocks: Vec<[u64; 8]>,
}

impl Bloom {
    fn new(bytes: u64) -> Bloom {
        let blocks = usize::try_from(bytes / 64).unwrap_or(usize::MAX).max(1);
        Bloom { blocks: vec![[0; 8]; blocks] }
    }

    /// The block and the three bits (0..512) of `key`.
    fn place(&self, key: &Key) -> (usize, [u32; 3]) {
        let high = u64::from_le_bytes([key[0], key[1], key[2], key[3], key[4], key[5], key[6], key[7]]);
        let low = u32::from_le_bytes([key[8], key[9], key[10], key[11]]);
        let block = ((u128::from(high) * self.blocks.len() as u128) >> 64) as usize;
        (block, [low & 511, (low >> 9) & 511, (low >> 18) & 511])
    }

    fn insert(&mut self, key: &Key) {
        let (block, bits) = self.place(key);
        let words = &mut self.blocks[block];
        for bit in bits {
            words[(bit / 64) as usize] |= 1 << (bit % 64);
        }
    }

    fn may_contain(&self, key: &Key) -> bool {
        let (block, bits) = self.place(key);
        let words = &self.blocks[block];
        bits.iter().all(|&bit| words[(bit / 64) as usize] & (1 << (bit % 64)) != 0)
    }
}

/// The runs of one copy index, in the directory `dir`.
pub(super) struct Runs {
    dir: PathBuf,
    /// Oldest first; each more than twice as large as the next.
    runs: Vec<Run>,
    bloom: Bloom,
    /// Names the next run file.
    next: u64,
    /// Slots written in all.
    pub slots: u64,
}

impl Runs {
    /// Runs in `dir` (made on the first write), with a filter of
    /// `filter_bytes`.
    pub fn new(dir: &Path, filter_bytes: u64) -> Runs {
        Runs { dir: dir.to_path_buf(), runs: Vec::new(), bloom: Bloom::new(filter_bytes), next: 0, slots: 0 }
    }

    fn next_path(&mut self) -> anyhow::Result<PathBuf> {
        crate::base::interrupt::check()?;
        std::fs::create_dir_all(&self.dir)
            .with_context(|| format!("cannot create {}", self.dir.display()))?;
        self.next += 1;
        Ok(self.dir.join(format!("run-{:05}.fpd", self.next)))
    }

    /// Adds `slots` (keys distinct, and in no run yet) as a new run.
    pub fn add(&mut self, mut slots: Vec<RunSlot>) -> anyhow::Result<()> {
        if slots.is_empty() {
            return Ok(());
        }
        slots.sort_unstable_by_key(|s| s.key);
        for slot in &slots {
            self.bloom.insert(&slot.key);
        }
        self.slots += slots.len() as u64;
        let path = self.next_path()?;
        self.runs.push(Run::write(path, slots.into_iter().map(Ok))?);
        while let [.., older, newer] = self.runs.as_slice()
            && newer.len * 2 >= older.len
        {
            let (newer, older) = (self.runs.pop().expect("two runs"), self.runs.pop().expect("two runs"));
            let path = self.next_path()?;
            let merged = Run::write(path, merge(&older.path, &newer.path)?)?;
            older.remove()?;
            newer.remove()?;
            self.runs.push(merged);
        }
        Ok(())
    }

    /// The slot of `key`, if a run has it.
    pub fn get(&self, key: &Key) -> anyhow::Result<Option<RunSlot>> {
        if !self.bloom.may_contain(key) {
            return Ok(None);
        }
        for run in self.runs.iter().rev() {
            if let Some(slot) = run.get(key)? {
                return Ok(Some(slot));
            }
        }
        Ok(None)
    }
}

impl Drop for Runs {
    fn drop(&mut self) {
        // Scratch space: the stage removes its scratch directory anyway,
        // but the runs can be gigabytes and need not wait for that.
        for run in self.runs.drain(..) {
            let _ = run.remove();
        }
    }
}

/// The slots of two sorted run files, in one ascending stream.
fn merge(a: &Path, b: &Path) -> anyhow::Result<impl Iterator<Item = anyhow::Result<RunSlot>>> {
    let mut a = RecordReader::<RunSlot>::open(a)?;
    let mut b = RecordReader::<RunSlot>::open(b)?;
    let mut next_a = a.next_record()?;
    let mut next_b = b.next_record()?;
    Ok(std::iter::from_fn(move || {
        let take_a = match (&next_a, &next_b) {
            (None, None) => return None,
            (Some(x), Some(y)) => x.key <= y.key,
            (Some(_), None) => true,
            (None, Some(_)) => false,
        };
        let (slot, reader) = if take_a { (&mut next_a, &mut a) } else { (&mut next_b, &mut b) };
        let out = slot.take();
        match reader.next_record() {
            Ok(next) => *slot = next,
            Err(e) => return Some(Err(e)),
        }
        out.map(Ok)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::XorShift;

    fn key(rng: &mut XorShift) -> Key {
        let mut k = [0u8; 12];
        k[..8].copy_from_slice(&rng.next_u64().to_le_bytes());
        k[8..].copy_from_slice(&(rng.next_u64() as u32).to_le_bytes());
        k
    }

    /// Runs written in batches of many sizes, merged as they go, find
    /// every slot written and no other key; merging leaves one file per
    /// run and at most log2 of the batches of them.
    #[test]
    fn runs_find_every_slot_written_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let mut rng = XorShift::new(7);
        // A filter of one block: nearly every lookup reads the runs.
        for filter in [64, 1 << 16] {
            let mut runs = Runs::new(&dir.path().join(format!("runs-{filter}")), filter);
            let mut written = Vec::new();
            for batch in 0..40usize {
                let slots: Vec<RunSlot> = (0..(batch * 37) % 500 + 1)
                    .map(|i| RunSlot { key: key(&mut rng), decoding: i as u32, outcome: batch as u32 })
                    .collect();
                written.extend(slots.iter().copied());
                runs.add(slots).unwrap();
                assert!(runs.runs.windows(2).all(|w| w[0].len > 2 * w[1].len));
                assert!(runs.runs.len() <= 15, "{} runs after {} batches", runs.runs.len(), batch + 1);
            }
            assert_eq!(runs.slots, written.len() as u64);
            for slot in &written {
                assert_eq!(runs.get(&slot.key).unwrap(), Some(*slot));
            }
            for _ in 0..2000 {
                assert_eq!(runs.get(&key(&mut rng)).unwrap(), None);
            }
            let files = std::fs::read_dir(&runs.dir).unwrap().count();
            assert_eq!(files, runs.runs.len());
            let dir = runs.dir.clone();
            drop(runs);
            assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "runs removed");
        }
    }

    #[test]
    fn run_slots_round_trip() {
        let slot = RunSlot { key: *b"abcdefghijkl", decoding: 0xdead_beef, outcome: 7 };
        let mut buf = [0u8; RunSlot::SIZE];
        slot.encode(&mut buf);
        assert_eq!(RunSlot::decode(&buf), slot);
    }
}
