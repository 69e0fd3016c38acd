//! The memory that big pages may take while they are read and worked on.
//!
//! The fingerprint stage bounds the batches in flight by their payload
//! limit, but one record can be far bigger than a batch: a 57.6 MB page,
//! under the default record limit of 64 MiB, took about 165 MB while it was
//! read, converted to text and normalized, and a page read by every job at
//! once took 397 MB at `--memory 256M` (994 MB with eight threads). So a
//! page over a batch's payload limit is read only once it holds a
//! [`Lease`] on [`Pages`], the share of the budget such pages get: its
//! bytes times [`NEED_FACTOR`], asked for before they are read where the
//! record says its length (WARC, ARC), and as they grow where it does not
//! (a JSONL line, a page-feed page, a body being decompressed). The lease
//! goes with the page's [`super::Body`] and ends when the page has been
//! worked on, so that pages are read side by side while they fit and one
//! at a time when they do not.
//!
//! No reader waits forever: a lease is granted when it fits in what is
//! left, and always when no other page holds one, so the page that does
//! not fit at all is read alone. A lease that grows (a body being
//! decompressed) waits for room only when an older lease is held: the
//! oldest never waits, so some page always goes on, and each page's
//! lease ends once the page is worked on, whatever the other pages do.
//! A lease must therefore be held only by a page on its way to being
//! worked on now, never by one that waits for other pages (the stage
//! drops the lease of a page it parks, and counts that page in the
//! pipeline's own bound instead).

use std::collections::BTreeMap;
use std::io;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// The memory a page takes while it is worked on, as a multiple of its
/// bytes: the payload, the text the HTML converter renders and the
/// normalized text, each at most about the payload's size. Measured on
/// 57.6 MB HTML pages, one thread: 2.8 times the page (165 MB over the
/// stage's base).
pub(crate) const NEED_FACTOR: u64 = 3;

/// How much more a growing lease asks for at a time, so that a body
/// being decompressed asks once a mebibyte, not once a buffer.
const GROW_STEP: u64 = 1 << 20;

/// How often a waiting reader looks whether the command was asked to stop.
const WAIT_TICK: Duration = Duration::from_millis(50);

/// The share of the memory budget that pages over a batch's payload limit
/// may hold together (see the module doc).
pub(crate) struct Pages {
    /// Pages of at most this many bytes need no lease: the pipeline's
    /// bound on a batch covers them.
    small: u64,
    /// The bytes the leases may hold together.
    capacity: u64,
    /// A lease over this many bytes is noted as over the budget.
    over: u64,
    state: Mutex<State>,
    freed: Condvar,
}

#[derive(Default)]
struct State {
    /// The bytes of every lease held.
    held: u64,
    /// The leases held, by the ticket that orders them, oldest first.
    leases: BTreeMap<u64, u64>,
    next_ticket: u64,
    /// Pages whose need passed `over`, and the largest such need.
    over_pages: u64,
    largest_over: u64,
}

/// Pages whose need passed what the budget leaves them: how many, and the
/// largest need, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct OverBudget {
    pub(crate) pages: u64,
    pub(crate) largest_need: u64,
}

impl std::fmt::Debug for Pages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pages").field("small", &self.small).field("capacity", &self.capacity).finish()
    }
}

impl Pages {
    /// Pages over `small` bytes share `capacity` bytes of need; a need over
    /// `over` is noted (see [`Pages::over_budget`]).
    pub(crate) fn new(small: u64, capacity: u64, over: u64) -> Arc<Pages> {
        Arc::new(Pages { small, capacity, over, state: Mutex::default(), freed: Condvar::new() })
    }

    /// The pages whose need passed what the budget leaves them so far.
    pub(crate) fn over_budget(&self) -> OverBudget {
        let state = self.lock();
        OverBudget { pages: state.over_pages, largest_need: state.largest_over }
    }

    /// Makes `lease` cover a page of `bytes`, asking for a lease (or more
    /// of it) when the page is over [`Pages::small`]; waits for room as the
    /// module doc says. Fails only when the command was asked to stop.
    #[inline]
    pub(crate) fn cover(self: &Arc<Pages>, lease: &mut Option<Lease>, bytes: u64) -> io::Result<()> {
        if bytes <= self.small {
            return Ok(());
        }
        let need = bytes.saturating_mul(NEED_FACTOR);
        match lease {
            Some(l) if l.bytes >= need => Ok(()),
            Some(l) => {
                // Ahead by a step, up to what the page needs at most.
                let want = need.saturating_add(GROW_STEP * NEED_FACTOR);
                self.grow(l, want)
            }
            None => {
                *lease = Some(self.admit(need)?);
                Ok(())
            }
        }
    }

    /// A new lease of `need` bytes: at once when it fits or no other lease
    /// is held.
    fn admit(self: &Arc<Pages>, need: u64) -> io::Result<Lease> {
        let mut state = self.lock();
        while state.held > 0 && state.held.saturating_add(need) > self.capacity {
            state = self.wait(state)?;
        }
        let ticket = state.next_ticket;
        state.next_ticket += 1;
        state.held = state.held.saturating_add(need);
        state.leases.insert(ticket, need);
        self.note(&mut state, 0, need);
        Ok(Lease { pages: Arc::clone(self), ticket, bytes: need })
    }

    /// Grows `lease` to `want` bytes: at once when it fits or it is the
    /// oldest lease held.
    fn grow(&self, lease: &mut Lease, want: u64) -> io::Result<()> {
        let more = want - lease.bytes;
        let mut state = self.lock();
        while state.held.saturating_add(more) > self.capacity
            && state.leases.keys().next().is_some_and(|&oldest| oldest != lease.ticket)
        {
            state = self.wait(state)?;
        }
        state.held = state.held.saturating_add(more);
        state.leases.insert(lease.ticket, want);
        self.note(&mut state, lease.bytes, want);
        lease.bytes = want;
        Ok(())
    }

    /// Notes a lease that grew from `before` to `after` bytes: a page is
    /// counted once, when its need first passes `over`.
    fn note(&self, state: &mut State, before: u64, after: u64) {
        if after > self.over {
            state.over_pages += u64::from(before <= self.over);
            state.largest_over = state.largest_over.max(after);
        }
    }

    fn wait<'a>(&self, state: MutexGuard<'a, State>) -> io::Result<MutexGuard<'a, State>> {
        crate::base::interrupt::check()?;
        let (state, _) = self.freed.wait_timeout(state, WAIT_TICK).unwrap_or_else(PoisonError::into_inner);
        Ok(state)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What a reader holds of [`Pages`]: the budget its pages are read under
/// (none outside the fingerprint stage), and the lease of the record being
/// read, which goes with the record's page or ends with the record.
#[derive(Default)]
pub(crate) struct Keeping {
    pages: Option<Arc<Pages>>,
    lease: Option<Lease>,
}

impl Keeping {
    pub(crate) fn under(pages: Option<Arc<Pages>>) -> Keeping {
        Keeping { pages, lease: None }
    }

    /// Covers the record being read, `bytes` so far (see [`Pages::cover`]).
    #[inline]
    pub(crate) fn cover(&mut self, bytes: u64) -> io::Result<()> {
        match &self.pages {
            Some(pages) => pages.cover(&mut self.lease, bytes),
            None => Ok(()),
        }
    }

    /// The record's lease, for its page to hold.
    pub(crate) fn take(&mut self) -> Option<Lease> {
        self.lease.take()
    }

    /// Ends the lease of a record that gave no page.
    pub(crate) fn end(&mut self) {
        self.lease = None;
    }
}

/// A page's hold on [`Pages`], given back when dropped.
pub(crate) struct Lease {
    pages: Arc<Pages>,
    ticket: u64,
    bytes: u64,
}

impl Drop for Lease {
    fn drop(&mut self) {
        let mut state = self.pages.lock();
        state.held = state.held.saturating_sub(self.bytes);
        state.leases.remove(&self.ticket);
        drop(state);
        self.pages.freed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn small_pages_take_no_lease_and_a_page_alone_is_always_admitted() {
        let pages = Pages::new(100, 1000, 5000);
        let mut lease = None;
        pages.cover(&mut lease, 100).unwrap();
        assert!(lease.is_none());
        // Needs 3 × 10,000, thirty times the capacity: admitted alone.
        pages.cover(&mut lease, 10_000).unwrap();
        assert_eq!(lease.as_ref().map(|l| l.bytes), Some(30_000));
        assert_eq!(pages.over_budget(), OverBudget { pages: 1, largest_need: 30_000 });
        drop(lease);
        assert_eq!(pages.lock().held, 0);
    }

    #[test]
    fn pages_that_do_not_fit_together_are_worked_on_one_at_a_time() {
        // Each page needs 3 × 400 = 1,200 of a capacity of 2,000: two at
        // once never fit, so the most held at any time is one page's.
        let pages = Pages::new(100, 2000, u64::MAX);
        let most = Arc::new(AtomicU64::new(0));
        std::thread::scope(|s| {
            for _ in 0..4 {
                let (pages, most) = (Arc::clone(&pages), Arc::clone(&most));
                s.spawn(move || {
                    for _ in 0..20 {
                        let mut lease = None;
                        pages.cover(&mut lease, 400).unwrap();
                        most.fetch_max(pages.lock().held, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_micros(200));
                    }
                });
            }
        });
        assert_eq!(most.load(Ordering::SeqCst), 1200);
        assert_eq!(pages.lock().held, 0);
    }

    #[test]
    fn growing_leases_never_wait_on_each_other_forever() {
        // Two pages that grow past the capacity together: the younger
        // waits for the older, which goes on alone.
        let pages = Pages::new(0, 1000 * NEED_FACTOR, u64::MAX);
        std::thread::scope(|s| {
            for _ in 0..2 {
                let pages = Arc::clone(&pages);
                s.spawn(move || {
                    for _ in 0..10 {
                        let mut lease = None;
                        for bytes in (100..=2000).step_by(100) {
                            pages.cover(&mut lease, bytes).unwrap();
                        }
                        assert!(lease.as_ref().is_some_and(|l| l.bytes >= 2000 * NEED_FACTOR));
                    }
                });
            }
        });
        assert_eq!(pages.lock().held, 0);
    }
}
