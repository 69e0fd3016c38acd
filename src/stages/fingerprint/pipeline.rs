//! The order-keeping parallel pipeline of the fingerprint stage.
//!
//! Inputs are cut into batches of records, each with a [`Key`] that orders
//! it: its input, its segment within the input (a large per-record gzip
//! WARC file is cut into segments that are read side by side, see
//! [`read::split`]; any other input is one segment), and its place within
//! the segment. Each batch is one job on the rayon pool: it reads the
//! batch, hands the segment's reader back so that the segment's next batch
//! can be read by another job, and then processes the batch on the same
//! worker, rather than handing it to another core. Jobs finish in
//! any order; this thread starts them and hands their results to the
//! writer in key order. So the output is the same as one reader and one
//! worker would give, whatever the thread count.
//!
//! Nothing waits in input order between reading and processing: work that
//! depends on what came earlier (the copies a WARC file declares) is
//! settled when the results are written, and the processing only guesses
//! at it to save work (see the fingerprint stage's copy index).
//!
//! At most `jobs` batches are being read or processed, and at most
//! `window` are between being started and being written. The memory in
//! flight is bounded in bytes, `in_flight`, and the batch to write next
//! starts whatever the window and those bytes say (every other batch
//! waits for it), so it may pass either by one. A batch being read or processed
//! counts twice its payload limit (the payload and what is made of it),
//! a processed batch what its output weighs (`weigh`), mostly fingerprints
//! and rows, a tenth of its payload or less. A segment's reader is read by
//! one job at a time, so the batch to write next is often waiting on its
//! segment's reader while later segments' batches are done: the window must
//! reach well past the jobs, into other segments, for their batches to
//! keep the cores busy meanwhile. (When every batch of the window could be
//! a job, the window filled with the first batches of later segments, and a
//! file's first segment was then read and processed on one core while the
//! other waited. When the window was a count of batches whose payload limit
//! shrank with `--memory`, at `--memory 256M` it held less than one
//! segment, and the stage took 1.58x the wall time it takes at 2G, for the
//! same CPU time: 17.7 s against 11.2 s on 525,000 pages.)
//!
//! A written batch is dropped on the worker that made it, not on this
//! thread: the writer only borrows it, and leaves it in that worker's
//! [`Bin`], which the worker empties when it starts its next job. Its
//! strings and fingerprints were allocated there, and glibc's allocator
//! keeps freed blocks in a cache of the freeing thread: freed here, every
//! block went through the lock of the worker's arena, and the workers
//! never found a freed block in their own caches (six interleaved rounds
//! of the stage on 2.1 million pages: 3% less wall and CPU time at the
//! median, and a fifth less system time). A bin holds one batch;
//! its weight stays counted in flight until the next batch put in the bin
//! finds it dropped (or drops it here, when the worker has not started
//! another job since).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::Context;

use crate::bytes::read::split::{self, Segment};
use crate::bytes::read::{self, Input, InputSkip, Item, Opened, ReadOptions, Reader};

/// Records per batch.
pub const BATCH_RECORDS: usize = 512;

/// Where a batch sits in input order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key {
    pub input: usize,
    segment: usize,
    seq: u64,
}

impl Key {
    /// The place of the batch's `item`th record in input order, packed in
    /// 64 bits: 20 for the input, 16 for the segment, 19 for the batch and
    /// 9 for the record. A field too large for its bits saturates, and so
    /// do the fields after it, so two records may then get the same place,
    /// never inverted ones.
    pub fn order(&self, item: usize) -> u64 {
        let fields = [(self.input as u64, 20), (self.segment as u64, 16), (self.seq, 19), (item as u64, 9)];
        let mut order = 0u64;
        let mut saturated = false;
        for (value, bits) in fields {
            let max = (1u64 << bits) - 1;
            saturated |= value > max;
            order = order << bits | if saturated { max } else { value };
        }
        order
    }
}

/// A batch of records from one input.
pub struct Batch {
    pub key: Key,
    /// How many segments the input is read in.
    pub segments: usize,
    pub items: Vec<Item>,
    /// Set, with no items, when the whole input is skipped.
    pub skipped: Option<InputSkip>,
}

/// What the pipeline reads: the inputs, in order, and those that are
/// streams (standard input, a pipe, a FIFO, `read::Stream`) opened
/// already ([`read::probe`]), by their place among them: the stage opens
/// every input before it touches an output, and a stream cannot be opened
/// twice (what the first opening read of it would be lost).
pub struct Inputs<'a> {
    pub paths: &'a [PathBuf],
    pub streams: std::collections::BTreeMap<usize, Opened>,
}

/// How many batches the pipeline keeps going, and within what memory.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The payload bytes at which a batch is cut early.
    pub max_bytes: usize,
    /// Batches between being started and being written, at most.
    pub window: usize,
    /// Batches being read or processed, at most.
    pub jobs: usize,
    /// Bytes the batches in flight may hold (see the module doc).
    pub in_flight: usize,
}

/// Runs every input through `process`, on the pool in any order, and hands
/// what it gives to `write` in key order; `weigh` tells the bytes a
/// processed batch holds until it is written.
pub fn run<O, P, W>(
    inputs: Inputs<'_>,
    opts: &ReadOptions,
    limits: Limits,
    process: P,
    weigh: impl Fn(&O) -> usize,
    write: W,
) -> anyhow::Result<()>
where
    O: Send + 'static,
    P: Fn(Batch) -> O + Send + Sync + 'static,
    W: FnMut(&mut O) -> anyhow::Result<()>,
{
    let (tx, rx) = channel();
    let bins = (0..rayon::current_num_threads()).map(|_| Mutex::new(Bin::Empty)).collect();
    let mut pipeline = Pipeline {
        inputs: inputs.paths.iter().cloned().map(Arc::new).collect(),
        streams: inputs.streams,
        segments: Vec::with_capacity(inputs.paths.len()),
        opts: Arc::new(opts.clone()),
        max_bytes: limits.max_bytes,
        window: limits.window.max(1),
        jobs: limits.jobs.max(1),
        in_flight: limits.in_flight,
        held: 0,
        running: 0,
        next_input: 0,
        idle: BTreeMap::new(),
        slots: BTreeMap::new(),
        write_at: Key { input: 0, segment: 0, seq: 0 },
        process: Arc::new(process),
        bins: Arc::new(bins),
        tx,
    };
    pipeline.drive(&rx, weigh, write)
}

/// A reader waiting for its next job.
enum Idle {
    /// A segment not opened yet.
    Segment(Segment),
    Reader(Box<dyn Reader>),
    Skipped(InputSkip),
}

/// A batch between being started and being written.
enum Slot<O> {
    Reading,
    Processing(Next),
    /// With what it weighs and the worker that made it.
    Processed(O, Next, usize, Option<usize>),
}

/// A written batch waiting to be dropped on the worker that made it (see
/// the module doc).
enum Bin<O> {
    Empty,
    /// A batch, with its weight.
    Full(O, usize),
    /// The weight of the batch the worker dropped.
    Dropped(usize),
}

/// Empties `bin`: drops the batch it holds, on this thread.
fn drop_bin<O>(bin: &Mutex<Bin<O>>) {
    let mut bin = bin.lock().unwrap_or_else(PoisonError::into_inner);
    if let Bin::Full(_, weight) = *bin {
        // Dropped with the lock held, so that the writer, which takes the
        // lock only to put the next batch, finds it dropped.
        drop(std::mem::replace(&mut *bin, Bin::Dropped(weight)));
    }
}

/// Which key follows a batch's.
#[derive(Clone, Copy, Debug)]
enum Next {
    Seq,
    Segment,
    Input,
}

impl Next {
    fn after(self, key: Key) -> Key {
        match self {
            Next::Seq => Key { seq: key.seq + 1, ..key },
            Next::Segment => Key { segment: key.segment + 1, seq: 0, ..key },
            Next::Input => Key { input: key.input + 1, segment: 0, seq: 0 },
        }
    }
}

/// A batch read, with its reader when it has more, and which key follows.
type ReadBatch = (Batch, Option<Box<dyn Reader>>, Next);

/// What a job reports: first that its batch is read (handing its reader
/// back), then what processing gave.
enum Event<O> {
    Read(Key, anyhow::Result<(Option<Box<dyn Reader>>, Next)>),
    /// With the index of the worker that processed it, if on the pool.
    Processed(Key, O, Option<usize>),
}

struct Pipeline<O, P> {
    inputs: Vec<Arc<PathBuf>>,
    /// The streams, opened already, until each is reached.
    streams: std::collections::BTreeMap<usize, Opened>,
    /// The segment count of every input opened so far.
    segments: Vec<usize>,
    opts: Arc<ReadOptions>,
    max_bytes: usize,
    window: usize,
    jobs: usize,
    in_flight: usize,
    /// Bytes the slots hold or may hold, counted as the module doc says.
    held: usize,
    /// Jobs started and not done.
    running: usize,
    next_input: usize,
    /// Readers between jobs, by the key of their next batch.
    idle: BTreeMap<Key, Idle>,
    slots: BTreeMap<Key, Slot<O>>,
    /// The next batch to write.
    write_at: Key,
    process: Arc<P>,
    /// One per worker of the pool.
    bins: Arc<Vec<Mutex<Bin<O>>>>,
    tx: Sender<Event<O>>,
}

impl<O, P> Pipeline<O, P>
where
    O: Send + 'static,
    P: Fn(Batch) -> O + Send + Sync + 'static,
{
    /// What a batch being read or processed may hold.
    fn job_bytes(&self) -> usize {
        self.max_bytes.saturating_mul(2)
    }

    fn drive(
        &mut self,
        rx: &Receiver<Event<O>>,
        weigh: impl Fn(&O) -> usize,
        mut write: impl FnMut(&mut O) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        loop {
            crate::base::interrupt::check()?;
            // The earliest idle reader is always started first, and a
            // reader is idle again as soon as its batch is read, so the
            // next batch to write is either in a slot or the first to
            // start. It starts whatever the window and the bytes in
            // flight say: every other batch waits for it to be written,
            // so holding it back waited for ever when later segments'
            // batches filled the window or their weight the bytes, with
            // no job left running to free either (the documentation
            // crawl's Debian file at `--memory 256M` on two threads, whose
            // pages waiting for their payload's first capture weigh their
            // payloads). It may take the bytes in flight past their
            // limit by one job's, once.
            while self.running < self.jobs
                && (!self.slots.contains_key(&self.write_at)
                    || (self.slots.len() < self.window && self.held + self.job_bytes() <= self.in_flight))
                && self.start()?
            {}
            if self.slots.is_empty() {
                return Ok(());
            }
            let event = rx.recv().context("a worker of the fingerprint stage stopped")?;
            match event {
                Event::Read(key, result) => {
                    let (reader, next) = result?;
                    if let Some(reader) = reader {
                        self.idle.insert(next.after(key), Idle::Reader(reader));
                    }
                    self.slots.insert(key, Slot::Processing(next));
                }
                Event::Processed(key, out, worker) => {
                    self.running -= 1;
                    self.held -= self.job_bytes();
                    if let Some(Slot::Processing(next)) = self.slots.remove(&key) {
                        let weight = weigh(&out);
                        self.held += weight;
                        self.slots.insert(key, Slot::Processed(out, next, weight, worker));
                    }
                }
            }
            while matches!(self.slots.get(&self.write_at), Some(Slot::Processed(..))) {
                let key = self.write_at;
                let Some(Slot::Processed(mut out, next, weight, worker)) = self.slots.remove(&key) else {
                    break;
                };
                write(&mut out)?;
                self.write_at = next.after(key);
                self.recycle(out, weight, worker);
            }
        }
    }

    /// Leaves the written batch `out` in the bin of the worker that made
    /// it, still counted in flight, and stops counting the batch the bin
    /// held (dropping it here if the worker has not).
    fn recycle(&mut self, out: O, weight: usize, worker: Option<usize>) {
        let Some(bin) = worker.and_then(|w| self.bins.get(w)) else {
            self.held -= weight;
            return;
        };
        let old = std::mem::replace(
            &mut *bin.lock().unwrap_or_else(PoisonError::into_inner),
            Bin::Full(out, weight),
        );
        match old {
            Bin::Empty => {}
            Bin::Dropped(old) | Bin::Full(_, old) => self.held -= old,
        }
    }

    /// Starts a job on the earliest idle reader's next batch, opening the
    /// next input when none is idle. False when there is nothing to read.
    fn start(&mut self) -> anyhow::Result<bool> {
        if self.idle.is_empty() && !self.open_next()? {
            return Ok(false);
        }
        let Some((key, idle)) = self.idle.pop_first() else {
            return Ok(false);
        };
        let segments = self.segments[key.input];
        self.slots.insert(key, Slot::Reading);
        self.running += 1;
        self.held += self.job_bytes();
        let path = Arc::clone(&self.inputs[key.input]);
        let opts = Arc::clone(&self.opts);
        let max_bytes = self.max_bytes;
        let process = Arc::clone(&self.process);
        let tx = self.tx.clone();
        let bins = Arc::clone(&self.bins);
        rayon::spawn(move || {
            let worker = rayon::current_thread_index();
            if let Some(bin) = worker.and_then(|w| bins.get(w)) {
                drop_bin(bin);
            }
            match read_batch(key, idle, segments, &path, &opts, max_bytes) {
                Ok((batch, reader, next)) => {
                    if tx.send(Event::Read(key, Ok((reader, next)))).is_ok() {
                        let _ = tx.send(Event::Processed(key, process(batch), worker));
                    }
                }
                Err(e) => {
                    let _ = tx.send(Event::Read(key, Err(e)));
                }
            }
        });
        Ok(true)
    }

    /// Opens the next input, making its segments (or its one reader) idle.
    /// False when every input is open.
    fn open_next(&mut self) -> anyhow::Result<bool> {
        let Some(path) = self.inputs.get(self.next_input) else {
            return Ok(false);
        };
        let input = self.next_input;
        self.next_input += 1;
        let key = |segment| Key { input, segment, seq: 0 };
        let opened = match self.streams.remove(&input) {
            Some(opened) => opened,
            None => {
                if let Some(segments) = split::segments(path, &self.opts)? {
                    self.segments.push(segments.len());
                    for (i, segment) in segments.into_iter().enumerate() {
                        self.idle.insert(key(i), Idle::Segment(segment));
                    }
                    return Ok(true);
                }
                read::probe(path, &self.opts)?
            }
        };
        let idle = match opened.input(&self.opts) {
            Input::Records(reader) => Idle::Reader(reader),
            Input::Skipped(why) => Idle::Skipped(why),
        };
        self.segments.push(1);
        self.idle.insert(key(0), idle);
        Ok(true)
    }
}

/// Reads the next batch of one reader.
fn read_batch(
    key: Key,
    idle: Idle,
    segments: usize,
    path: &Path,
    opts: &ReadOptions,
    max_bytes: usize,
) -> anyhow::Result<ReadBatch> {
    let last_segment = key.segment + 1 >= segments;
    let done = if last_segment { Next::Input } else { Next::Segment };
    let mut reader = match idle {
        Idle::Skipped(why) => {
            return Ok((Batch { key, segments, items: Vec::new(), skipped: Some(why) }, None, Next::Input));
        }
        Idle::Reader(reader) => reader,
        Idle::Segment(segment) => split::open_segment(path, segment, opts)?,
    };
    let mut items = Vec::with_capacity(BATCH_RECORDS);
    let mut bytes = 0usize;
    while items.len() < BATCH_RECORDS && bytes < max_bytes {
        let item = reader.next_item().with_context(|| format!("cannot read {}", path.display()))?;
        let Some(item) = item else {
            return Ok((Batch { key, segments, items, skipped: None }, None, done));
        };
        if let Item::Doc(doc) = &item {
            bytes += doc.body.len();
        }
        items.push(item);
    }
    Ok((Batch { key, segments, items, skipped: None }, Some(reader), Next::Seq))
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;
    use crate::bytes::read::Note;

    /// `left` notes, then the end.
    struct Notes {
        left: usize,
    }

    impl Reader for Notes {
        fn next_item(&mut self) -> std::io::Result<Option<Item>> {
            Ok(self.left.checked_sub(1).map(|left| {
                self.left = left;
                Item::Note(Note { offset: left as u64, message: String::new() })
            }))
        }
    }

    /// Drives one input of two segments (two full batches, then one), where
    /// every processed batch weighs `weight` and the window holds `window`
    /// batches, and returns the keys written, in order, or `None` when
    /// the pipeline stops moving.
    fn written(weight: usize, window: usize, in_flight: usize) -> Option<Vec<(usize, u64)>> {
        let (done_tx, done_rx) = mpsc::channel();
        std::thread::spawn(move || {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().expect("a pool");
            let result = pool.install(|| {
                let (tx, rx) = channel();
                let mut idle = BTreeMap::new();
                let key = |segment| Key { input: 0, segment, seq: 0 };
                idle.insert(
                    key(0),
                    Idle::Reader(Box::new(Notes { left: 2 * BATCH_RECORDS }) as Box<dyn Reader>),
                );
                idle.insert(key(1), Idle::Reader(Box::new(Notes { left: BATCH_RECORDS }) as Box<dyn Reader>));
                let mut pipeline = Pipeline {
                    inputs: vec![Arc::new(PathBuf::from("two-segments"))],
                    streams: BTreeMap::new(),
                    segments: vec![2],
                    opts: Arc::new(ReadOptions::default()),
                    max_bytes: 1 << 20,
                    window,
                    jobs: 2,
                    in_flight,
                    held: 0,
                    running: 0,
                    next_input: 1,
                    idle,
                    slots: BTreeMap::new(),
                    write_at: key(0),
                    process: Arc::new(|batch: Batch| batch.key),
                    bins: Arc::new((0..2).map(|_| Mutex::new(Bin::Empty)).collect()),
                    tx,
                };
                let mut keys = Vec::new();
                pipeline
                    .drive(
                        &rx,
                        |_| weight,
                        |key: &mut Key| {
                            keys.push((key.segment, key.seq));
                            Ok(())
                        },
                    )
                    .map(|()| keys)
            });
            let _ = done_tx.send(result.ok());
        });
        done_rx.recv_timeout(Duration::from_secs(30)).ok().flatten()
    }

    #[test]
    fn the_batch_to_write_next_starts_whatever_the_limits_hold() {
        // A reader that ends on a full batch gives an empty one last.
        let order = Some(vec![(0, 0), (0, 1), (0, 2), (1, 0), (1, 1)]);
        // Roomy limits.
        assert_eq!(written(1, 64, usize::MAX), order);
        // Segment 0's first batch and segment 1's, processed, weigh more
        // than the bytes in flight allow: segment 0's second batch must
        // still start, though nothing else runs to free the bytes.
        let job = 2 << 20;
        assert_eq!(written(2 * job, 64, 3 * job), order);
        // A window of two, full once both first batches are processed.
        assert_eq!(written(1, 2, usize::MAX), order);
    }
}
