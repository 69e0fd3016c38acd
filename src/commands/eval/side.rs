//! One side of an evaluation as the counting sees it: every URL is an
//! item, every item is in one group of its side, and links join groups.
//! A pair of items is a pair of the side when they are in the same group
//! or in two linked groups.
//!
//! That one shape holds all three inputs. An overlap analysis has its
//! exact-copy groups and its Overlap-table rows as links (the table holds
//! centers only: a row stands for every pair of the two groups' members);
//! a `url,cluster` file has its clusters and no links; a `url_a,url_b`
//! file has one group per URL and its pairs as links. The counts are then
//! taken over groups and links, never over the pairs they stand for.

use std::path::Path;

use anyhow::{Context, bail};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::store::criterion::{Criterion, Ratio};
use crate::store::docs::{self, DocTable};
use crate::store::{Manifest, OutDir, overlap};

/// No group: an item the side does not have.
pub(super) const NONE: u32 = u32::MAX;

/// What a link says of the pairs it stands for: ordered so that the
/// strongest of several is the largest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Sim {
    /// A table without a `jaccard` column, or another tool's pair.
    Unmeasured,
    /// The row's Jaccard similarity, in millionths.
    Jaccard(u32),
    /// Exact copies (the same normalized text): J = 1.
    Exact,
}

/// Two linked groups, `a != b`; a side holds a pair of groups at most once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Link {
    pub a: u32,
    pub b: u32,
    pub sim: Sim,
}

#[derive(Clone, Debug, Default)]
pub(super) struct Side {
    /// Each item's group, by item; [`NONE`] for an item the side does not
    /// have (for another tool's file: one it left alone, a singleton).
    pub group: Vec<u32>,
    /// Groups are numbered from 0 to `groups - 1`.
    pub groups: u32,
    pub links: Vec<Link>,
}

impl Side {
    /// Gives the items interned after this side was read no group.
    pub(super) fn cover(&mut self, items: usize) {
        self.group.resize(items, NONE);
    }

    /// Items this side has.
    pub(super) fn items(&self) -> u64 {
        self.group.iter().filter(|&&g| g != NONE).count() as u64
    }

    /// Each group's items.
    pub(super) fn sizes(&self) -> Vec<u64> {
        let mut size = vec![0u64; self.groups as usize];
        for &g in self.group.iter().filter(|&&g| g != NONE) {
            size[g as usize] += 1;
        }
        size
    }

    /// The side made of documents: `members` holds each document's item and
    /// group. A URL with several documents (a first analysis keeps every
    /// capture) is one item, paired with another when any of its documents
    /// is: when its documents are in different groups, it gets a group of
    /// its own, linked to each of them and to whatever they link to, with
    /// the strongest [`Sim`] among them. Returns the side and how many
    /// URLs had several documents.
    pub(super) fn of_documents(
        members: &[(u32, u32)],
        groups: u32,
        links: Vec<Link>,
        items: usize,
    ) -> (Side, u64) {
        let mut group = vec![NONE; items];
        let mut repeated = FxHashSet::default();
        let mut spread: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
        for &(item, g) in members {
            let first = group[item as usize];
            if first == NONE {
                group[item as usize] = g;
                continue;
            }
            repeated.insert(item);
            if first != g {
                let gs = spread.entry(item).or_insert_with(|| vec![first]);
                if !gs.contains(&g) {
                    gs.push(g);
                }
            }
        }
        let mut side = Side { group, groups, links };
        side.split(spread);
        (side, repeated.len() as u64)
    }

    /// Gives each item of `spread` (an item and the several groups its
    /// documents are in) a group of its own and the links that make it
    /// pair as any of its documents does. Costs the links of those groups,
    /// per such item: such URLs are few (a page captured twice with two
    /// different texts).
    fn split(&mut self, spread: FxHashMap<u32, Vec<u32>>) {
        if spread.is_empty() {
            return;
        }
        let mut spread: Vec<(u32, Vec<u32>)> = spread.into_iter().collect();
        spread.sort_unstable();
        let adjacency = Adjacency::new(self.groups, &self.links);
        // Which of these items has a document in each group.
        let mut holders: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
        for (i, (_, gs)) in spread.iter().enumerate() {
            for &g in gs {
                holders.entry(g).or_default().push(i as u32);
            }
        }
        let first = self.groups;
        for (i, (item, gs)) in spread.iter().enumerate() {
            let own = first + i as u32;
            self.group[*item as usize] = own;
            // What the item is to every group: a copy of one of its
            // documents, or linked to one.
            let mut reach: FxHashMap<u32, Sim> = gs.iter().map(|&g| (g, Sim::Exact)).collect();
            for &g in gs {
                for &(h, sim) in adjacency.of(g) {
                    let best = reach.entry(h).or_insert(sim);
                    *best = (*best).max(sim);
                }
            }
            let mut reach: Vec<(u32, Sim)> = reach.into_iter().collect();
            reach.sort_unstable();
            // Another such item pairs with this one as this one reaches
            // any group of its documents.
            let mut others: FxHashMap<u32, Sim> = FxHashMap::default();
            for &(h, sim) in &reach {
                self.links.push(Link { a: h, b: own, sim });
                for &j in holders.get(&h).into_iter().flatten().filter(|&&j| j > i as u32) {
                    let best = others.entry(j).or_insert(sim);
                    *best = (*best).max(sim);
                }
            }
            let mut others: Vec<(u32, Sim)> = others.into_iter().collect();
            others.sort_unstable();
            for (j, sim) in others {
                self.links.push(Link { a: own, b: first + j, sim });
            }
        }
        self.groups += spread.len() as u32;
    }
}

/// Each group's links, both ways.
struct Adjacency {
    start: Vec<usize>,
    ends: Vec<(u32, Sim)>,
}

impl Adjacency {
    fn new(groups: u32, links: &[Link]) -> Adjacency {
        let mut start = vec![0usize; groups as usize + 1];
        for l in links {
            start[l.a as usize + 1] += 1;
            start[l.b as usize + 1] += 1;
        }
        for g in 0..groups as usize {
            start[g + 1] += start[g];
        }
        let mut fill = start.clone();
        let mut ends = vec![(0, Sim::Unmeasured); links.len() * 2];
        for l in links {
            for (from, to) in [(l.a, l.b), (l.b, l.a)] {
                ends[fill[from as usize]] = (to, l.sim);
                fill[from as usize] += 1;
            }
        }
        Adjacency { start, ends }
    }

    fn of(&self, g: u32) -> &[(u32, Sim)] {
        &self.ends[self.start[g as usize]..self.start[g as usize + 1]]
    }
}

/// The URLs of both sides, each an item numbered from 0 in the order
/// first read. Memory: each distinct URL once, with its number.
#[derive(Debug, Default)]
pub(super) struct Urls {
    ids: FxHashMap<Box<str>, u32>,
}

impl Urls {
    pub(super) fn intern(&mut self, url: &str) -> anyhow::Result<u32> {
        if let Some(&id) = self.ids.get(url) {
            return Ok(id);
        }
        let id = u32::try_from(self.ids.len())
            .ok()
            .filter(|&id| id != NONE)
            .context("more than 4 billion URLs")?;
        self.ids.insert(url.into(), id);
        Ok(id)
    }

    pub(super) fn len(&self) -> usize {
        self.ids.len()
    }

    /// The smallest URL among the items `pick` selects: an example for a
    /// note, the same whatever order the inputs were read in.
    pub(super) fn smallest(&self, mut pick: impl FnMut(u32) -> bool) -> Option<&str> {
        self.ids.iter().filter(|&(_, &id)| pick(id)).map(|(url, _)| &**url).min()
    }
}

/// An overlap analysis read as a side, and what the notes say of it.
pub(super) struct Analysis {
    pub side: Side,
    pub chunk: String,
    pub criterion: Criterion,
    pub max_df: Option<u32>,
    pub scope: String,
    pub documents: u64,
    pub without_url: u64,
    pub duplicate_urls: u64,
    pub rows: u64,
    /// Whether overlap.csv has the `jaccard` column.
    pub jaccard: bool,
}

/// Reads the analysis in `dir`: docs.csv (each document's URL and exact
/// group) and overlap.csv (its rows, between group centers). Memory: a
/// group number per docID, an item and group per document with a URL,
/// and 12 bytes per row.
pub(super) fn read_analysis(dir: &Path, urls: &mut Urls) -> anyhow::Result<Analysis> {
    let out = OutDir::new(dir);
    let manifest = Manifest::read(&out)?;
    let Some(counted) = manifest.pairs.clone() else {
        return Err(out.unfinished(format!(
            "{} has no complete pairs stage: run `overlap pairs` first",
            dir.display()
        )));
    };
    if let Err(stage) = out.analysis_key(&crate::store::registry::PAIRS) {
        return Err(out.unfinished(format!(
            "{} has no complete {stage} stage (it is being made again, or was left unfinished): \
             run `overlap {stage}` first",
            dir.display()
        )));
    }
    let ratio = |name: &str, value: &Option<String>| -> anyhow::Result<Option<Ratio>> {
        value
            .as_deref()
            .map(|v| {
                v.parse::<Ratio>().map_err(|e| anyhow::anyhow!("{}: pairs.{name}: {e}", manifest_path(dir)))
            })
            .transpose()
    };
    let criterion = Criterion {
        threshold: counted.threshold,
        jaccard: ratio("jaccard", &counted.jaccard)?,
        containment: ratio("containment", &counted.containment)?,
    };
    // Group numbers follow the centers' docIDs; a row names centers only.
    let mut group_of = Vec::<u32>::new();
    let mut groups = 0u32;
    let mut members = Vec::new();
    let (mut documents, mut without_url) = (0u64, 0u64);
    docs::for_each_doc(&out.docs(), DocTable::Final, |doc| {
        documents += 1;
        if group_of.len() <= doc.id as usize {
            group_of.resize(doc.id as usize + 1, NONE);
        }
        let g = match doc.center {
            // An empty document is in no exact group: a group of its own.
            None => new_group(&mut groups),
            Some(c) if c == doc.id => {
                group_of[c as usize] = new_group(&mut groups);
                group_of[c as usize]
            }
            Some(c) => match group_of[c as usize] {
                NONE => bail!("exact_center {c} is not the center of its own row"),
                g => g,
            },
        };
        if doc.url.is_empty() {
            without_url += 1;
        } else {
            members.push((urls.intern(doc.url)?, g));
        }
        Ok(())
    })?;
    let mut links = Vec::new();
    let mut jaccard = false;
    let path = out.overlap();
    let center = |doc: u32, name: &str| -> anyhow::Result<u32> {
        match group_of.get(doc as usize) {
            Some(&g) if g != NONE => Ok(g),
            _ => bail!("{name} {doc} is not an exact-group center of docs.csv"),
        }
    };
    overlap::for_each_measured(&path, |o, m| {
        let (a, b) = (center(o.doc_i, "doc_i")?, center(o.doc_j, "doc_j")?);
        let sim = match m.jaccard {
            Some(j) => {
                jaccard = true;
                Sim::Jaccard(j)
            }
            None => Sim::Unmeasured,
        };
        links.push(Link { a, b, sim });
        Ok(())
    })?;
    // A table without rows says nothing of its columns: the criterion does.
    let jaccard = jaccard || criterion.jaccard.is_some();
    let rows = links.len() as u64;
    let (side, duplicate_urls) = Side::of_documents(&members, groups, links, urls.len());
    Ok(Analysis {
        side,
        chunk: manifest.chunk.clone(),
        criterion,
        max_df: counted.max_df,
        scope: manifest.scope()?.to_string(),
        documents,
        without_url,
        duplicate_urls,
        rows,
        jaccard,
    })
}

fn new_group(groups: &mut u32) -> u32 {
    *groups += 1;
    *groups - 1
}

fn manifest_path(dir: &Path) -> String {
    OutDir::new(dir).manifest().display().to_string()
}
