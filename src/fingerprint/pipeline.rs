//! The order-keeping parallel pipeline of the fingerprint stage.
//!
//! Inputs are cut into batches of records, each with a [`Key`] that orders
//! it: its input, its segment within the input (a large per-record gzip
//! WARC file is cut into segments that are read side by side, see
//! [`read::split`]; any other input is one segment), and its place within
//! the segment. Batches are read, and then processed, as jobs on the rayon
//! pool, so that decompression and parsing run on every core like
//! extraction does; this thread starts the jobs, and hands each batch in
//! key order to [`Steps::plan`] (between reading and processing) and to
//! [`Steps::write`] (after processing). So the output is the same as one
//! reader and one worker would give, whatever the thread count.
//!
//! At most `window` batches are between being started and being written,
//! which bounds the memory in flight. A segment's reader is read by one job
//! at a time; the job returns it with its batch.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};

use anyhow::Context;

use crate::read::split::{self, Segment};
use crate::read::{self, Input, InputSkip, Item, ReadOptions, Reader};

/// Records per batch.
const BATCH_RECORDS: usize = 512;

/// Where a batch sits in input order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key {
    pub input: usize,
    segment: usize,
    seq: u64,
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

/// What the pipeline does with batches, in key order.
pub trait Steps {
    /// The work a read batch becomes, done on this thread in input order.
    type Work: Send + 'static;
    /// What processing gives.
    type Out: Send + 'static;
    fn plan(&mut self, batch: Batch) -> Self::Work;
    /// Runs on the pool.
    fn process(work: Self::Work) -> Self::Out;
    fn write(&mut self, out: Self::Out) -> anyhow::Result<()>;
}

/// Runs every input through `steps`.
pub fn run<S: Steps>(
    inputs: &[PathBuf],
    opts: &ReadOptions,
    max_bytes: usize,
    window: usize,
    steps: &mut S,
) -> anyhow::Result<()> {
    let (tx, rx) = channel();
    let mut pipeline = Pipeline {
        inputs: inputs.iter().cloned().map(Arc::new).collect(),
        segments: Vec::with_capacity(inputs.len()),
        opts: Arc::new(opts.clone()),
        max_bytes,
        window: window.max(1),
        next_input: 0,
        idle: BTreeMap::new(),
        slots: BTreeMap::new(),
        plan_at: Key { input: 0, segment: 0, seq: 0 },
        write_at: Key { input: 0, segment: 0, seq: 0 },
        tx,
    };
    pipeline.drive(&rx, steps)
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
    Read(Batch, Next),
    Processing(Next),
    Processed(O, Next),
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

/// What a job reports.
enum Event<O> {
    Read(Key, anyhow::Result<ReadBatch>),
    Processed(Key, O),
}

struct Pipeline<O> {
    inputs: Vec<Arc<PathBuf>>,
    /// The segment count of every input opened so far.
    segments: Vec<usize>,
    opts: Arc<ReadOptions>,
    max_bytes: usize,
    window: usize,
    next_input: usize,
    /// Readers between jobs, by the key of their next batch.
    idle: BTreeMap<Key, Idle>,
    slots: BTreeMap<Key, Slot<O>>,
    /// The next batch to plan, and the next to write.
    plan_at: Key,
    write_at: Key,
    tx: Sender<Event<O>>,
}

impl<O: Send + 'static> Pipeline<O> {
    fn drive<S: Steps<Out = O>>(&mut self, rx: &Receiver<Event<O>>, steps: &mut S) -> anyhow::Result<()> {
        loop {
            while self.slots.len() < self.window && self.start_read()? {}
            if self.slots.is_empty() {
                return Ok(());
            }
            // A job is in flight whenever a slot waits: the earliest slot
            // not yet planned is being read, or the earliest not yet
            // written is being processed.
            let event = rx.recv().context("a worker of the fingerprint stage stopped")?;
            match event {
                Event::Read(key, result) => {
                    let (batch, reader, next) = result?;
                    if let Some(reader) = reader {
                        self.idle.insert(next.after(key), Idle::Reader(reader));
                    }
                    self.slots.insert(key, Slot::Read(batch, next));
                }
                Event::Processed(key, out) => {
                    if let Some(Slot::Processing(next)) = self.slots.remove(&key) {
                        self.slots.insert(key, Slot::Processed(out, next));
                    }
                }
            }
            self.plan_ready(steps);
            self.write_ready(steps)?;
        }
    }

    /// Starts reading the earliest idle reader's next batch, opening the
    /// next input when none is idle. False when there is nothing to read.
    fn start_read(&mut self) -> anyhow::Result<bool> {
        if self.idle.is_empty() && !self.open_next()? {
            return Ok(false);
        }
        let Some((key, idle)) = self.idle.pop_first() else {
            return Ok(false);
        };
        let segments = self.segments[key.input];
        self.slots.insert(key, Slot::Reading);
        let path = Arc::clone(&self.inputs[key.input]);
        let opts = Arc::clone(&self.opts);
        let max_bytes = self.max_bytes;
        let tx = self.tx.clone();
        rayon::spawn(move || {
            let result = read_batch(key, idle, segments, &path, &opts, max_bytes);
            let _ = tx.send(Event::Read(key, result));
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
        if let Some(segments) = split::segments(path, &self.opts)? {
            self.segments.push(segments.len());
            for (i, segment) in segments.into_iter().enumerate() {
                self.idle.insert(key(i), Idle::Segment(segment));
            }
            return Ok(true);
        }
        let idle = match read::open(path, &self.opts)? {
            Input::Records(reader) => Idle::Reader(reader),
            Input::Skipped(why) => Idle::Skipped(why),
        };
        self.segments.push(1);
        self.idle.insert(key(0), idle);
        Ok(true)
    }

    /// Plans every read batch that is next in order, and starts processing
    /// it.
    fn plan_ready<S: Steps<Out = O>>(&mut self, steps: &mut S) {
        while matches!(self.slots.get(&self.plan_at), Some(Slot::Read(..))) {
            let key = self.plan_at;
            let Some(Slot::Read(batch, next)) = self.slots.remove(&key) else {
                return;
            };
            self.slots.insert(key, Slot::Processing(next));
            let work = steps.plan(batch);
            let tx = self.tx.clone();
            rayon::spawn(move || {
                let out = S::process(work);
                let _ = tx.send(Event::Processed(key, out));
            });
            self.plan_at = next.after(key);
        }
    }

    /// Writes every processed batch that is next in order.
    fn write_ready<S: Steps<Out = O>>(&mut self, steps: &mut S) -> anyhow::Result<()> {
        while matches!(self.slots.get(&self.write_at), Some(Slot::Processed(..))) {
            let key = self.write_at;
            let Some(Slot::Processed(out, next)) = self.slots.remove(&key) else {
                return Ok(());
            };
            steps.write(out)?;
            self.write_at = next.after(key);
        }
        Ok(())
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
