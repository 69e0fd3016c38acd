//! What a chain measures of the pages read against the previous analysis,
//! while the FPrint-DocID partitions are merged (`previous.rs`), so it
//! costs no pass of its own:
//!
//! - a `modified` page: the distinct chunks of its previous text, and how
//!   many of them its text now has (`chunks_before`, `chunks_kept`);
//! - a `new` URL: the page gone since (its URL lost, orphaned or redirected
//!   in this analysis) whose text it has most of, its *candidate*: one with
//!   the same normalized text first, else the one sharing the most distinct
//!   chunks, then the smallest docID. The pairs stage decides by the
//!   criterion whether the new URL is that page moved.
//!
//! Sharing is counted between every new URL and every page gone over each
//! fingerprint they hold, except a fingerprint held by more than
//! [`TEMPLATE`] new URLs or as many pages gone: when a site moves whole,
//! its template's lines are on all of its pages, old and new, and would
//! make every new page a partner of every gone one (pairs without bound)
//! while saying nothing of which page went where. Such a fingerprint
//! counts neither as shared nor in the two pages' sizes (had the sizes
//! kept it, 14 of 28 edited moves of a generated 200 MB recrawl would have
//! fallen under the default containment of 0.8). The pages' own text
//! decides, and the pairs counted grow with the fingerprints of the new
//! pages (at most [`TEMPLATE`] pairs each), not with their product. Stop
//! chunks (`--max-df`) count: the page gone may not be in this analysis,
//! and the pairs stage's stop chunks are found over it.

use std::collections::HashMap;

use rustc_hash::FxHashMap;

use crate::store::changes::Candidate;

/// The most new URLs, and pages gone, a fingerprint may be held by and
/// still count toward a move.
pub(super) const TEMPLATE: usize = 32;

/// What is asked of a document read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ReadWant {
    Nothing,
    /// A modified page, with the previous row it replaces.
    Modified(u32),
    /// A new URL: a move is looked for.
    New,
}

/// What a previous row is to the measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum OldWant {
    Nothing,
    /// The previous text of a modified page.
    Before,
    /// A page whose URL is lost, orphaned or redirected now.
    Gone,
}

/// The measures asked for, by document read and previous row.
pub(super) struct Wants {
    read: Vec<ReadWant>,
    old: Vec<OldWant>,
    /// Documents read that were not extracted, asked about, by the
    /// previous row whose values (so fingerprints) they have: they hold
    /// that row's fingerprints, which only the previous partitions list.
    borrowers: FxHashMap<u32, Vec<u32>>,
}

impl Wants {
    /// `borrowed[r]`: the previous row document read `r` has the values
    /// of, or [`NONE`](crate::store::handles::NONE).
    pub(super) fn new(read: Vec<ReadWant>, old: Vec<OldWant>, borrowed: &[u32]) -> Wants {
        let mut borrowers: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
        for (r, want) in read.iter().enumerate() {
            if *want != ReadWant::Nothing && borrowed[r] != crate::store::handles::NONE {
                borrowers.entry(borrowed[r]).or_default().push(r as u32);
            }
        }
        Wants { read, old, borrowers }
    }

    pub(super) fn old(&self, o: u32) -> OldWant {
        self.old[o as usize]
    }

    pub(super) fn old_rows(&self) -> usize {
        self.old.len()
    }

    /// Whether anything is asked at all.
    pub(super) fn any(&self) -> bool {
        self.read.iter().any(|w| *w != ReadWant::Nothing)
    }
}

/// The counts of one partition, or of all of them summed.
#[derive(Default)]
pub(super) struct Tally {
    /// Distinct chunks of each document read that is asked about.
    read_chunks: FxHashMap<u32, u32>,
    /// Distinct chunks of each previous row asked about.
    old_chunks: FxHashMap<u32, u32>,
    /// Per modified page: chunks of its previous text it kept.
    kept: FxHashMap<u32, u32>,
    /// (new URL's document read, gone row): chunks shared.
    shared: FxHashMap<(u32, u32), u32>,
    /// Per new URL and per gone row: template chunks, which count toward
    /// no move, neither shared nor in the sizes.
    template_read: FxHashMap<u32, u32>,
    template_old: FxHashMap<u32, u32>,
}

/// One fingerprint's holders as the merge meets them.
#[derive(Default)]
pub(super) struct Group {
    new: Vec<u32>,
    modified: Vec<(u32, u32)>,
    gone: Vec<u32>,
    before: Vec<u32>,
}

impl Group {
    pub(super) fn clear(&mut self) {
        self.new.clear();
        self.modified.clear();
        self.gone.clear();
        self.before.clear();
    }

    /// A document read holds the fingerprint.
    pub(super) fn read(&mut self, wants: &Wants, r: u32) {
        match wants.read[r as usize] {
            ReadWant::Nothing => {}
            ReadWant::Modified(o) => self.modified.push((r, o)),
            ReadWant::New => self.new.push(r),
        }
    }

    /// A previous row holds the fingerprint, and so do the documents read
    /// that have its values.
    pub(super) fn old(&mut self, wants: &Wants, o: u32) {
        match wants.old[o as usize] {
            OldWant::Nothing => {}
            OldWant::Before => self.before.push(o),
            OldWant::Gone => self.gone.push(o),
        }
        if let Some(borrowers) = wants.borrowers.get(&o) {
            for &r in borrowers {
                self.read(wants, r);
            }
        }
    }

    /// Counts the fingerprint's holders into `tally`.
    pub(super) fn count(&self, tally: &mut Tally) {
        for &r in self.new.iter().chain(self.modified.iter().map(|(r, _)| r)) {
            *tally.read_chunks.entry(r).or_default() += 1;
        }
        for &o in self.gone.iter().chain(&self.before) {
            *tally.old_chunks.entry(o).or_default() += 1;
        }
        for &(r, o) in &self.modified {
            if self.before.contains(&o) {
                *tally.kept.entry(r).or_default() += 1;
            }
        }
        if self.new.len() <= TEMPLATE && self.gone.len() <= TEMPLATE {
            for &r in &self.new {
                for &o in &self.gone {
                    *tally.shared.entry((r, o)).or_default() += 1;
                }
            }
        } else {
            for &r in &self.new {
                *tally.template_read.entry(r).or_default() += 1;
            }
            for &o in &self.gone {
                *tally.template_old.entry(o).or_default() += 1;
            }
        }
    }
}

impl Tally {
    /// Adds another partition's counts.
    pub(super) fn add(&mut self, other: Tally) {
        for (k, v) in other.read_chunks {
            *self.read_chunks.entry(k).or_default() += v;
        }
        for (k, v) in other.old_chunks {
            *self.old_chunks.entry(k).or_default() += v;
        }
        for (k, v) in other.kept {
            *self.kept.entry(k).or_default() += v;
        }
        for (k, v) in other.shared {
            *self.shared.entry(k).or_default() += v;
        }
        for (k, v) in other.template_read {
            *self.template_read.entry(k).or_default() += v;
        }
        for (k, v) in other.template_old {
            *self.template_old.entry(k).or_default() += v;
        }
    }
}

/// The measures of every document read that was asked about.
pub(super) struct Measured {
    /// Per modified page: (chunks before, chunks kept).
    kept: FxHashMap<u32, (u32, u32)>,
    /// Per new URL sharing a chunk with a page gone: its chunks, and the
    /// candidate by previous row (its docID given later).
    candidates: FxHashMap<u32, (u32, u32, bool, u32, u32)>,
}

impl Measured {
    /// Settles the counts: `same_text(r)` is the gone row with the same
    /// normalized text as new URL `r` (the smallest, as docIDs go), if any.
    pub(super) fn settle(tally: Tally, wants: &Wants, same_text: impl Fn(u32) -> Option<u32>) -> Measured {
        let get = |m: &FxHashMap<u32, u32>, k: u32| m.get(&k).copied().unwrap_or(0);
        let old_chunks = |o: u32| get(&tally.old_chunks, o);
        // A move is decided over the chunks that are no template's.
        let own = |o: u32| old_chunks(o) - get(&tally.template_old, o);
        let read_chunks = |r: u32| get(&tally.read_chunks, r) - get(&tally.template_read, r);
        let mut kept = FxHashMap::default();
        for (r, want) in wants.read.iter().enumerate() {
            if let ReadWant::Modified(o) = *want {
                let r = r as u32;
                kept.insert(r, (old_chunks(o), tally.kept.get(&r).copied().unwrap_or(0)));
            }
        }
        // The best partner of each new URL by (shared desc, row asc): a
        // total order, so the map's order does not matter.
        let mut best: HashMap<u32, (u32, u32)> = HashMap::new();
        for (&(r, o), &shared) in &tally.shared {
            let e = best.entry(r).or_insert((o, shared));
            if shared > e.1 || (shared == e.1 && o < e.0) {
                *e = (o, shared);
            }
        }
        let mut candidates = FxHashMap::default();
        for (r, want) in wants.read.iter().enumerate() {
            let r = r as u32;
            if *want != ReadWant::New {
                continue;
            }
            let chunks = read_chunks(r);
            let found = match same_text(r) {
                Some(o) => Some((o, true, chunks)),
                None => best.get(&r).map(|&(o, shared)| (o, false, shared)),
            };
            if let Some((o, exact, shared)) = found {
                candidates.insert(r, (chunks, o, exact, shared, own(o)));
            }
        }
        Measured { kept, candidates }
    }

    /// A modified page's (chunks before, chunks kept).
    pub(super) fn kept(&self, r: u32) -> Option<(u32, u32)> {
        self.kept.get(&r).copied()
    }

    /// A new URL's chunks and candidate, with `doc_id` giving a previous
    /// row's docID.
    pub(super) fn candidate(&self, r: u32, doc_id: impl Fn(u32) -> u32) -> Option<(u32, Candidate)> {
        self.candidates.get(&r).map(|&(chunks, o, exact, shared, old)| {
            (chunks, Candidate { doc_id: doc_id(o), exact, shared, chunks: old })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::handles::NONE;

    #[test]
    fn counts_choose_the_same_text_then_the_most_shared_then_the_smallest_row() {
        // Read 0 modified (previous row 0), read 1 and 2 new; rows 1, 2, 3 gone.
        let wants = Wants::new(
            vec![ReadWant::Modified(0), ReadWant::New, ReadWant::New],
            vec![OldWant::Before, OldWant::Gone, OldWant::Gone, OldWant::Gone],
            &[NONE; 3],
        );
        let mut tally = Tally::default();
        let mut g = Group::default();
        // (read holders, old holders) of each fingerprint.
        let fingerprints: [(&[u32], &[u32]); 5] =
            [(&[0, 1], &[0, 2]), (&[], &[0]), (&[1, 2], &[3, 2]), (&[1, 2], &[3]), (&[2], &[1])];
        for (part, (read, old)) in fingerprints.iter().enumerate() {
            let mut t = Tally::default();
            g.clear();
            read.iter().for_each(|&r| g.read(&wants, r));
            old.iter().for_each(|&o| g.old(&wants, o));
            g.count(&mut t);
            // Partitions summed in any order.
            if part % 2 == 0 {
                tally.add(t);
            } else {
                t.add(std::mem::take(&mut tally));
                tally = t;
            }
        }
        let m = Measured::settle(tally, &wants, |r| (r == 2).then_some(1));
        assert_eq!(m.kept(0), Some((2, 1)));
        // Read 1 shares 2 with rows 2 and 3 (the smaller wins); read 2 has
        // row 1's text.
        assert_eq!(
            m.candidate(1, |o| o + 10),
            Some((3, Candidate { doc_id: 12, exact: false, shared: 2, chunks: 2 }))
        );
        assert_eq!(
            m.candidate(2, |o| o + 10),
            Some((3, Candidate { doc_id: 11, exact: true, shared: 3, chunks: 1 }))
        );
        assert_eq!(m.candidate(0, |o| o), None);
    }

    #[test]
    fn a_document_read_with_a_previous_rows_values_holds_its_fingerprints() {
        // Read 1 was not extracted: it has row 0's values (and text).
        let wants = Wants::new(
            vec![ReadWant::Nothing, ReadWant::New],
            vec![OldWant::Nothing, OldWant::Gone],
            &[NONE, 0],
        );
        let mut tally = Tally::default();
        let mut g = Group::default();
        for old in [&[0u32, 1][..], &[0], &[1]] {
            g.clear();
            old.iter().for_each(|&o| g.old(&wants, o));
            g.count(&mut tally);
        }
        let m = Measured::settle(tally, &wants, |_| None);
        assert_eq!(
            m.candidate(1, |o| o),
            Some((2, Candidate { doc_id: 1, exact: false, shared: 1, chunks: 2 }))
        );
    }

    #[test]
    fn a_template_fingerprint_counts_toward_no_move() {
        let n = TEMPLATE as u32 + 1;
        let wants = Wants::new(vec![ReadWant::New; n as usize], vec![OldWant::Gone; n as usize], &[NONE; 40]);
        let mut g = Group::default();
        (0..n).for_each(|r| g.read(&wants, r));
        (0..n).for_each(|o| g.old(&wants, o));
        let mut tally = Tally::default();
        g.count(&mut tally);
        let m = Measured::settle(tally, &wants, |_| None);
        assert_eq!(m.candidate(0, |o| o), None);
        // With one chunk of their own in common, read 0 and row 0 are a
        // pair of one-chunk pages: the template is in neither size.
        g.clear();
        g.read(&wants, 0);
        g.old(&wants, 0);
        let mut more = Tally::default();
        g.count(&mut more);
        let mut tally = Tally::default();
        let mut t = Group::default();
        (0..n).for_each(|r| t.read(&wants, r));
        (0..n).for_each(|o| t.old(&wants, o));
        t.count(&mut tally);
        tally.add(more);
        let m = Measured::settle(tally, &wants, |_| None);
        assert_eq!(
            m.candidate(0, |o| o),
            Some((1, Candidate { doc_id: 0, exact: false, shared: 1, chunks: 1 }))
        );
    }
}
