//! The headline of an analysis carried forward (`--previous`): the
//! figures of the documents read from this crawl's inputs, with the pages
//! kept while missing (`--keep-missing`) counted apart.
//!
//! The rest of the report is over the whole analysis, kept pages
//! included, as a first analysis of the same documents would give it (the
//! chain's equivalence); a crawl's owner asks first about the crawl just
//! made, and a page lost two weeks ago is not part of it. The kept pages
//! still link the groups: a page of this crawl that is a copy of a kept
//! page has an exact copy, and is skippable when the kept page stands for
//! it, as everywhere else in the report.

use super::histogram::percent;
pub(crate) use crate::store::stats::CurrentCrawl;

/// What one document adds to [`CurrentCrawl`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Doc {
    /// Kept while lost or orphaned (`missing_for` > 0).
    pub missing: bool,
    pub empty: bool,
    pub exact_copy: bool,
    pub near_replica: bool,
    pub exact_skipped: bool,
    pub near_skipped: bool,
}

/// Counts [`CurrentCrawl`] over the rows, one [`Doc`] each.
#[derive(Clone, Debug, Default)]
pub struct Tally(CurrentCrawl);

impl Tally {
    pub fn add(&mut self, d: Doc) {
        let c = &mut self.0;
        if d.missing {
            c.kept_missing += 1;
            return;
        }
        c.documents += 1;
        if d.empty {
            c.empty_documents += 1;
        }
        c.exact_copies += u64::from(d.exact_copy);
        c.near_replicas += u64::from(d.near_replica);
        c.skippable_exact += u64::from(d.exact_skipped);
        c.skippable_near += u64::from(d.near_skipped);
    }

    pub fn finish(self) -> CurrentCrawl {
        let mut c = self.0;
        let non_empty = c.documents - c.empty_documents;
        c.exact_copy_percent = percent(c.exact_copies, non_empty);
        c.near_replica_percent = percent(c.near_replicas, non_empty);
        c.skippable_exact_percent = percent(c.skippable_exact, c.documents);
        c.skippable_near_percent = percent(c.skippable_near, c.documents);
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_pages_are_counted_apart() {
        let mut t = Tally::default();
        let doc = |missing, empty, exact, near, skipped| Doc {
            missing,
            empty,
            exact_copy: exact,
            near_replica: near,
            exact_skipped: skipped && exact,
            near_skipped: skipped,
        };
        t.add(doc(false, false, true, true, false)); // a center with a copy
        t.add(doc(false, false, true, true, true)); // its copy
        t.add(doc(false, false, false, true, true)); // a near-replica of it
        t.add(doc(false, false, false, false, false));
        t.add(doc(false, true, false, false, false)); // empty
        t.add(doc(true, false, true, true, false)); // kept while missing
        let c = t.finish();
        assert_eq!((c.documents, c.empty_documents, c.kept_missing), (5, 1, 1));
        assert_eq!((c.exact_copies, c.near_replicas, c.skippable_exact, c.skippable_near), (2, 3, 1, 2));
        assert_eq!((c.exact_copy_percent, c.near_replica_percent), (50.0, 75.0));
        assert_eq!((c.skippable_exact_percent, c.skippable_near_percent), (20.0, 40.0));
    }
}
