//! What the four readers share: the [`Source`] they read, the queue of items
//! a step makes, the end of the data, and the loop that hands items out as
//! [`Reader::next_item`]. Each reader keeps only its format's own grammar,
//! in [`Format::step`].

use std::collections::VecDeque;
use std::io;
use std::sync::Arc;

use super::budget::{Keeping, Pages};
use super::gz::{Break, Source, Start, push_break_skips, skip};
use super::{Item, Reader, SkipReason};

/// Bytes looked at to tell what comes next: a record start, blanks, or
/// neither. Enough for every reader's record start to show.
pub(crate) const LOOK: usize = 64;

/// A reader's input and its items waiting to be handed out. One step of a
/// reader may make several items (a record and the break that damaged it)
/// or none (blanks), so they wait here.
pub(crate) struct Core {
    pub(crate) src: Source,
    /// The lease of the record being read, which its page takes when it
    /// is queued ([`Core::push`]).
    pub(crate) keeping: Keeping,
    queue: VecDeque<Item>,
    started: bool,
    done: bool,
}

/// What comes next between records.
pub(crate) enum Found {
    Record(Start),
    /// Bytes that start no record; what they are is the format's to say.
    Garbage(Start),
    /// The data ended, at the end of input or at a break.
    End,
}

impl Core {
    pub(crate) fn new(src: Source) -> Core {
        Core { src, keeping: Keeping::default(), queue: VecDeque::new(), started: false, done: false }
    }

    /// Queues `item`; a page takes the lease of the record it was read
    /// from.
    pub(crate) fn push(&mut self, mut item: Item) {
        if let Item::Doc(doc) = &mut item
            && let Some(lease) = self.keeping.take()
        {
            doc.body = std::mem::take(&mut doc.body).leased(Some(lease));
        }
        self.queue.push_back(item);
    }

    /// Queues the skips for `brk`, which cut off the record at `lost` if
    /// one was being read.
    pub(crate) fn push_break(&mut self, lost: Option<Start>, brk: Break) {
        push_break_skips(&mut self.queue, lost, brk);
    }

    /// Called where the data ends: a break queues its skips, and reading
    /// goes on after it; the end of input ends the reader.
    pub(crate) fn end(&mut self) {
        match self.src.take_break() {
            Some(brk) => self.push_break(None, brk),
            None => self.done = true,
        }
    }

    /// Whether the input has ended (not at a break, after which reading
    /// goes on): what is queued now is the last.
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// Queues `item` for the bytes from `start` to here, or, when damaged
    /// gzip data made them, the skips for that damage instead: a header
    /// garbled by a bad member is the member's fault, reported once.
    pub(crate) fn push_unless_damaged(&mut self, start: Start, item: Item) -> io::Result<()> {
        match self.src.record_damage(start)? {
            Some(brk) => self.push_break(Some(start), brk),
            None => self.push(item),
        }
        Ok(())
    }

    /// Queues the skips for the record at `start`, which the input ended in
    /// (`eof_detail` says where) or a break damaged.
    pub(crate) fn lost(&mut self, start: Start, eof_detail: impl Into<String>) {
        match self.src.take_break() {
            Some(brk) => self.push_break(Some(start), brk),
            None => self.push(skip(start.offset, SkipReason::TruncatedRecord, eof_detail)),
        }
    }

    /// Skips blanks (between records, ignored) up to where something else
    /// is, and says what: a record if `starts_record` holds for the bytes
    /// there, garbage if not, or the end of the data.
    pub(crate) fn find_record(&mut self, starts_record: impl Fn(&[u8]) -> bool) -> io::Result<Found> {
        // A gzip member that starts in the blank run before a record gives
        // the record its offset.
        let mut member = None;
        loop {
            let (empty, blank, record) = {
                let head = self.src.peek(LOOK)?;
                (head.is_empty(), head.iter().take_while(|&&b| is_blank(b)).count(), starts_record(head))
            };
            let pos = self.src.pos();
            if let Some(offset) = self.src.member_start_at(pos) {
                member = Some(offset);
            }
            if empty {
                return Ok(Found::End);
            }
            if blank == 0 {
                let start = self.src.start(pos, member);
                return Ok(if record { Found::Record(start) } else { Found::Garbage(start) });
            }
            // No further than the next member start, which the next round
            // must see to give a record there the member's offset.
            let blank = self.src.to_next_member().map_or(blank, |limit| blank.min(limit));
            self.src.consume(blank);
        }
    }
}

/// Whether `b` is a blank: between records, blanks are no record and no
/// garbage either.
pub(crate) fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// A reader of one format over a [`Core`]: the [`Reader`] that hands out
/// its items is the same for all.
pub(crate) trait Format: Send {
    fn core(&mut self) -> &mut Core;

    /// Reads on from the current position (after the byte order mark, if
    /// any), queueing what the bytes make; at the end of the data, calls
    /// [`Core::end`].
    fn step(&mut self) -> io::Result<()>;
}

impl<F: Format> Reader for F {
    fn next_item(&mut self) -> io::Result<Option<Item>> {
        loop {
            let core = self.core();
            if let Some(item) = core.queue.pop_front() {
                return Ok(Some(item));
            }
            if core.done {
                return Ok(None);
            }
            if !core.started {
                core.started = true;
                core.src.skip_bom()?;
            }
            let stepped = self.step();
            // A record that gave no page gives its lease back.
            self.core().keeping.end();
            stepped?;
        }
    }
}

/// `reader`, reading its big pages under `pages` ([`super::budget`]).
pub(crate) fn under<F: Format>(mut reader: F, pages: Option<Arc<Pages>>) -> F {
    reader.core().keeping = Keeping::under(pages);
    reader
}
