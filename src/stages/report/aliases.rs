//! URL aliases (after YaCy's double-content heuristics): documents whose
//! URLs differ only by a `www.` host prefix, only by the scheme (http or
//! https), only by a trailing slash or a default index page, or only by the
//! query string, joined with whether their content is an exact copy, a
//! near-replica, or different. This says which URL normalizations would
//! have saved a fetch.
//!
//! For each kind, every URL gets the key the normalization would give it;
//! documents sharing a key and not the same URL are aliases. Within a key,
//! documents with the same text are paired with the first of them
//! (smallest docID), and the first of each other text with the key's first
//! document, so n aliases give at most n - 1 rows, not n (n - 1) / 2, and
//! every exact alias is listed.
//!
//! # One parse per URL
//!
//! Each URL is parsed once, while docs.csv is loaded, into a [`UrlEntry`]
//! of 40 bytes that holds the four keys in parts: a *base* that every key
//! determines (the authority as the www rule writes it, and the path as
//! the index rule cuts it), and what each rule removes or keeps beside it
//! (the scheme, the `www.` prefix, the cut end of the path, the query).
//! Two URLs share a kind's key exactly when they share the base and the
//! parts that kind keeps, so the keys are compared within groups of equal
//! base, which are small, and never written out. Parsing every URL in each
//! of four passes over docs.csv, and twice more for the www and https
//! flags, was a fifth of the report's instructions.
//!
//! The entries are sorted by base through [`crate::store::sort`] within
//! the budget the report passes: beyond it they are spilled to a scratch
//! file of 40-byte records (kind 16, [`UrlEntry`]'s fields in order), so
//! they no longer weigh on the report's memory at the size of the crawl
//! (40 bytes a document, held through the whole load: 84 MB on 2.1
//! million pages, in a list grown by doubling to room for twice that).
//!
//! The same groups give YaCy's `www_unique` and `http_unique` flags
//! ([`UrlUnique`]): a URL's `www.` or https form, if a document has it,
//! shares its www or scheme key.

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;
use url::{Position, Url};
use xxhash_rust::xxh3::{xxh3_64, xxh3_128};

use super::alias_table::Gathering;
pub use super::alias_table::{Example, NearPairs};
use super::marks::{self, MarkCursor, Marks};
use crate::bytes::plain_url;
use crate::store::analysis::documents::{Docs, EMPTY};
use crate::store::sort::Batched;
use crate::store::{Record, le_u32, le_u64};

/// What two URLs differ by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AliasKind {
    Www,
    Scheme,
    Index,
    Query,
}

impl AliasKind {
    pub const ALL: [AliasKind; 4] = [AliasKind::Www, AliasKind::Scheme, AliasKind::Index, AliasKind::Query];

    /// The name in aliases.csv and report.json.
    pub fn name(self) -> &'static str {
        match self {
            AliasKind::Www => "www",
            AliasKind::Scheme => "scheme",
            AliasKind::Index => "index",
            AliasKind::Query => "query",
        }
    }
}

/// Page names a server serves for a directory.
pub const INDEX_PAGES: [&str; 12] = [
    "index.html",
    "index.htm",
    "index.shtml",
    "index.php",
    "index.asp",
    "index.aspx",
    "index.jsp",
    "index.cgi",
    "default.htm",
    "default.html",
    "default.asp",
    "default.aspx",
];

/// Parses a crawled URL for alias matching: http(s) with a host, without
/// its fragment (which no server sees).
pub fn parse(url: &str) -> Option<Url> {
    let mut u = Url::parse(url).ok()?;
    if !matches!(u.scheme(), "http" | "https") || u.host_str().is_none_or(str::is_empty) {
        return None;
    }
    u.set_fragment(None);
    Some(u)
}

/// The URL as `kind`'s normalization would write it: the definition that
/// [`UrlEntry`] holds in parts, which the tests compare it with.
#[cfg(test)]
pub fn key(url: &Url, kind: AliasKind) -> String {
    match kind {
        AliasKind::Www => {
            let host = url.host_str().unwrap_or("");
            match host.strip_prefix("www.") {
                Some(bare) if !bare.is_empty() => {
                    let mut u = url.clone();
                    if u.set_host(Some(bare)).is_ok() {
                        return u.into();
                    }
                    url.to_string()
                }
                _ => url.to_string(),
            }
        }
        AliasKind::Scheme => {
            let rest = &url.as_str()[url.scheme().len()..];
            format!("http{rest}")
        }
        AliasKind::Index => {
            let start = &url[..Position::BeforePath];
            let dir = index_dir(url.path());
            let query = url.query().map(|q| format!("?{q}")).unwrap_or_default();
            format!("{start}{dir}{query}")
        }
        AliasKind::Query => {
            let mut u = url.clone();
            u.set_query(None);
            u.into()
        }
    }
}

/// The path as the index rule cuts it: without a last segment that is a
/// default index page (in any case), then without trailing slashes.
fn index_dir(path: &str) -> &str {
    let last = path.rsplit('/').next().unwrap_or("");
    let dir = if INDEX_PAGES.iter().any(|p| p.eq_ignore_ascii_case(last)) {
        &path[..path.len() - last.len()]
    } else {
        path
    };
    dir.trim_end_matches('/')
}

/// [`UrlEntry::tail`] bit: the scheme is https.
const HTTPS: u64 = 1;
/// ... the host starts with `www.`.
const WWW_PREFIX: u64 = 2;
/// ... and the www rule removes it (a host of more than `www.`).
const WWW_STRIPPED: u64 = 4;
const TAIL_BITS: u64 = HTTPS | WWW_PREFIX | WWW_STRIPPED;

/// One document's URL as alias matching needs it, from one parse: each
/// kind's key is the base and some of the rest (see [`UrlEntry::key`]).
///
/// The base is a function of every key, and every key a function of the
/// base and the parts its kind keeps: the www key has the authority with
/// its host as the rule writes it and the whole path; the scheme key the
/// authority (its host with the prefix, which is the rule's host and the
/// prefix bits) and the path; the index key the authority and the cut
/// path; the query key the authority and the path. An authority has no
/// `/` and a cut path starts with one or is empty, so the base's two parts
/// cannot run into each other. The hashes make a collision as unlikely as
/// comparing xxh3 hashes of the keys did: 128 bits across the crawl for
/// the base, 61 or 63 bits within a group of equal base.
#[derive(Clone, Copy, Debug)]
pub struct UrlEntry {
    /// xxh3-128 of the authority as the www rule writes it (from `://`)
    /// and the path as the index rule cuts it.
    base: [u64; 2],
    /// xxh3-64 of the end of the path the index rule cuts off, its low
    /// three bits replaced by [`HTTPS`], [`WWW_PREFIX`], [`WWW_STRIPPED`].
    tail: u64,
    /// xxh3-64 of the query with its low bit set; 0 without a query (a
    /// URL ending in `?` has an empty one).
    query: u64,
    row: u32,
    /// The row's exact-group center, filled in row order before the
    /// entries are sorted: looked up in key order, it was a cache miss
    /// per document on large crawls.
    center: u32,
}

impl UrlEntry {
    /// The entry of `url`, if it is an http(s) URL with a host ([`parse`]):
    /// cut into its parts by hand when it is plain ([`plain_url`]), else
    /// parsed. `scratch` holds the base's text.
    pub fn new(row: u32, url: &str, scratch: &mut String) -> Option<UrlEntry> {
        if let Some(p) = plain_url::split(url) {
            let parts =
                Parts { https: p.https, before_host: "://", host: p.host, after_host: "", path: p.path };
            return Some(parts.entry(row, p.query, scratch));
        }
        UrlEntry::parsed(row, url, scratch)
    }

    /// [`UrlEntry::new`] by the parser alone.
    fn parsed(row: u32, url: &str, scratch: &mut String) -> Option<UrlEntry> {
        let u = parse(url)?;
        let parts = Parts {
            https: u.scheme() == "https",
            before_host: &u[Position::AfterScheme..Position::BeforeHost],
            host: u.host_str().unwrap_or(""),
            after_host: &u[Position::AfterHost..Position::BeforePath],
            path: u.path(),
        };
        Some(parts.entry(row, u.query(), scratch))
    }

    /// What `kind`'s key keeps beside the base.
    fn key(&self, kind: AliasKind) -> (u64, u64) {
        match kind {
            AliasKind::Www => (self.tail & !(WWW_PREFIX | WWW_STRIPPED), self.query),
            AliasKind::Scheme => (self.tail & !HTTPS, self.query),
            AliasKind::Index => (self.tail & TAIL_BITS, self.query),
            AliasKind::Query => (self.tail, 0),
        }
    }

    /// Equal within a group of equal base exactly for equal URLs.
    fn url(&self) -> (u64, u64) {
        (self.tail, self.query)
    }
}

/// A parsed URL's parts that its [`UrlEntry`] is made of, as the parser
/// writes them: `before_host` runs from after the scheme to the host
/// (`://` and any user info), `after_host` from the host to the path (a
/// port).
struct Parts<'a> {
    https: bool,
    before_host: &'a str,
    host: &'a str,
    after_host: &'a str,
    path: &'a str,
}

impl Parts<'_> {
    fn entry(&self, row: u32, query: Option<&str>, base: &mut String) -> UrlEntry {
        let mut bits = if self.https { HTTPS } else { 0 };
        // The www rule's host: a parsed host is written as it parses, and
        // so is what follows its `www.` (as `Url::set_host` would write
        // it, without a copy of the URL to set it in).
        let rule_host = match self.host.strip_prefix("www.") {
            Some(bare) if !bare.is_empty() => {
                bits |= WWW_PREFIX | WWW_STRIPPED;
                bare
            }
            Some(_) => {
                bits |= WWW_PREFIX;
                self.host
            }
            None => self.host,
        };
        let dir = index_dir(self.path);
        base.clear();
        for part in [self.before_host, rule_host, self.after_host, dir] {
            base.push_str(part);
        }
        let base = xxh3_128(base.as_bytes());
        UrlEntry {
            base: [base as u64, (base >> 64) as u64],
            tail: (xxh3_64(&self.path.as_bytes()[dir.len()..]) & !TAIL_BITS) | bits,
            query: query.map_or(0, |q| xxh3_64(q.as_bytes()) | 1),
            row,
            center: EMPTY,
        }
    }
}

/// Sorted by base, then row: the order in which [`find`] takes the groups.
/// (Rows are unique, so no two entries compare equal.)
impl Ord for UrlEntry {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.base, self.row).cmp(&(other.base, other.row))
    }
}

impl PartialOrd for UrlEntry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for UrlEntry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for UrlEntry {}

/// Scratch record kind 16, 40 bytes: base, tail, query, row, center.
impl Record for UrlEntry {
    const KIND: u32 = 16;
    const SIZE: usize = 40;
    fn encode(&self, out: &mut [u8]) {
        for (i, v) in [self.base[0], self.base[1], self.tail, self.query].into_iter().enumerate() {
            out[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
        }
        out[32..36].copy_from_slice(&self.row.to_le_bytes());
        out[36..40].copy_from_slice(&self.center.to_le_bytes());
    }
    fn decode(b: &[u8]) -> Self {
        UrlEntry {
            base: [le_u64(&b[..8]), le_u64(&b[8..16])],
            tail: le_u64(&b[16..24]),
            query: le_u64(&b[24..32]),
            row: le_u32(&b[32..36]),
            center: le_u32(&b[36..40]),
        }
    }
}

/// The entries of every document with an http(s) URL, gathered in row
/// order while docs.csv is loaded: in memory within the budget, spilled
/// in batches beyond it.
pub struct UrlEntries {
    entries: Batched<UrlEntry>,
    /// [`UrlEntry::new`]'s scratch.
    base: String,
}

impl UrlEntries {
    /// Entries of up to `expected` documents held within `budget` bytes,
    /// spilled to a file in `scratch` ([`Batched`]).
    pub fn new(budget: u64, expected: u64, scratch: &Path) -> UrlEntries {
        UrlEntries {
            entries: Batched::new(budget, expected, scratch.join("url-entries.fpd")),
            base: String::new(),
        }
    }

    /// Adds the entry of `row`, whose exact-group center is `center`, if
    /// its URL is an http(s) URL with a host.
    pub fn add(&mut self, row: u32, center: u32, url: &str) -> anyhow::Result<()> {
        match UrlEntry::new(row, url, &mut self.base) {
            Some(entry) => self.entries.push(UrlEntry { center, ..entry }),
            None => Ok(()),
        }
    }

    /// Calls `f` with every entry in [`UrlEntry`]'s order.
    fn sorted(self, f: impl FnMut(UrlEntry) -> anyhow::Result<()>) -> anyhow::Result<()> {
        self.entries.sorted(f)
    }
}

/// How two aliased documents' contents compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Content {
    /// Same normalized text.
    Exact,
    /// Their centers share at least T chunk fingerprints.
    Near,
    Different,
    /// One or both have no text.
    Empty,
}

impl Content {
    /// In the order of their discriminants.
    pub const ALL: [Content; 4] = [Content::Exact, Content::Near, Content::Different, Content::Empty];

    pub fn name(self) -> &'static str {
        match self {
            Content::Exact => "exact",
            Content::Near => "near",
            Content::Different => "different",
            Content::Empty => "empty",
        }
    }
}

/// One alias pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Alias {
    pub kind: AliasKind,
    pub doc_a: u32,
    pub doc_b: u32,
    pub content: Content,
}

/// Alias pairs per kind and content, for report.json.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct AliasCounts {
    pub pairs: u64,
    pub exact: u64,
    pub near: u64,
    pub different: u64,
    pub empty: u64,
}

/// The alias pairs of every kind, gathered within `budget` bytes (spilled
/// to `scratch` beyond it) for the pass over the Overlap table that tells
/// which pairs of two texts are near-replicas ([`NearPairs`]), and the www
/// and https flags.
pub fn find(
    entries: UrlEntries,
    docs: &Docs,
    budget: u64,
    scratch: &Path,
) -> anyhow::Result<(NearPairs, UrlFlags)> {
    let expected = docs.len() as u64;
    let mut pairs = Gathering::new(budget, expected, scratch);
    let mut found = Vec::new();
    let mut unique = UrlUnique { marks: Marks::new(budget / 4, expected, scratch, "url-marks") };
    let mut group: Vec<UrlEntry> = Vec::new();
    let mut members = Vec::new();
    let mut one_base = |group: &[UrlEntry]| -> anyhow::Result<()> {
        if group.len() < 2 {
            return Ok(());
        }
        for kind in AliasKind::ALL {
            // The group's documents by this kind's key, in row order
            // within a key.
            members.clear();
            members.extend(group.iter().map(|e| Member {
                key: e.key(kind),
                url: e.url(),
                doc: e.row,
                center: e.center,
            }));
            members.sort_unstable_by_key(|m| (m.key, m.doc));
            for same in members.chunk_by(|a, b| a.key == b.key) {
                pair_group(docs, kind, same, &mut found);
                unique.mark(kind, same)?;
            }
        }
        found.drain(..).try_for_each(|a| pairs.push(docs, a))
    };
    entries.sorted(|e| {
        if group.last().is_some_and(|g| g.base != e.base) {
            one_base(&group)?;
            group.clear();
        }
        group.push(e);
        Ok(())
    })?;
    one_base(&group)?;
    Ok((pairs.finish()?, unique.finish()?))
}

/// One document of a group of equal base under one kind: its key beside
/// the base, what tells its URL from the others', its row and its center.
#[derive(Clone, Copy, Debug)]
struct Member {
    key: (u64, u64),
    url: (u64, u64),
    doc: u32,
    center: u32,
}

/// The alias rows of one key's documents, in docID order: each document
/// with the first of its text (an exact pair), the first of each text with
/// the key's first document.
fn pair_group(docs: &Docs, kind: AliasKind, group: &[Member], aliases: &mut Vec<Alias>) {
    let Member { url: first_url, doc: first, .. } = group[0];
    // The first document of each text seen so far, with its URL; empty
    // documents each stand alone.
    let mut firsts: HashMap<u32, ((u64, u64), u32)> = HashMap::new();
    for &Member { url, doc, center, .. } in group {
        let text_first = if center == EMPTY { None } else { firsts.get(&center).copied() };
        let (other_url, other) = match text_first {
            Some(f) => f,
            None => {
                if center != EMPTY {
                    firsts.insert(center, (url, doc));
                }
                (first_url, first)
            }
        };
        if other != doc && other_url != url {
            aliases.push(Alias { kind, doc_a: other, doc_b: doc, content: content_of(docs, other, doc) });
        }
    }
}

/// The content class without the Overlap table (`Different` may become
/// `Near` later, [`NearPairs`]).
fn content_of(docs: &Docs, a: u32, b: u32) -> Content {
    let (ca, cb) = (docs.center(a), docs.center(b));
    if ca == EMPTY || cb == EMPTY {
        Content::Empty
    } else if ca == cb {
        Content::Exact
    } else {
        Content::Different
    }
}

/// YaCy's `www_unique` and `http_unique` for every document.
///
/// `www_unique` is true when the host has the `www.` prefix, or when no
/// document has the same URL with it; `http_unique` is true when the
/// scheme is https, or when no document has the same URL under https
/// (YaCy's defaults, which prefer the `www.` and https forms). URLs that
/// are not http(s) are unique.
///
/// A URL's form with `www.` is a URL whose www key is the URL, and its
/// https form one whose scheme key is the URL: [`find`] marks them in the
/// groups of equal key, a [`Marks`] entry per document marked (49,387 of
/// 2.1 million generated pages), where a byte per document was held.
pub struct UrlUnique {
    marks: Marks,
}

const NOT_WWW: u32 = 1;
const NOT_HTTP: u32 = 2;

impl UrlUnique {
    /// Marks the documents of one key's group that another of the group
    /// makes not unique.
    fn mark(&mut self, kind: AliasKind, group: &[Member]) -> anyhow::Result<()> {
        let (bit, preferred, flag) = match kind {
            AliasKind::Www => (WWW_PREFIX, WWW_STRIPPED, NOT_WWW),
            AliasKind::Scheme => (HTTPS, HTTPS, NOT_HTTP),
            _ => return Ok(()),
        };
        if group.iter().any(|m| m.url.0 & preferred != 0) {
            for m in group.iter().filter(|m| m.url.0 & bit == 0) {
                self.marks.push(m.doc, flag)?;
            }
        }
        Ok(())
    }

    /// The flags in row order.
    fn finish(self) -> anyhow::Result<UrlFlags> {
        Ok(UrlFlags { marks: self.marks.finish()? })
    }
}

/// The rows [`UrlUnique`] marked, in row order.
pub struct UrlFlags {
    marks: marks::Sorted,
}

impl UrlFlags {
    /// Reads the flags of rows asked for in ascending order
    /// ([`url_flags`]).
    pub fn cursor(&self) -> anyhow::Result<MarkCursor<'_>> {
        self.marks.cursor()
    }
}

/// `(www_unique, http_unique)` of a row, from its marks.
pub fn url_flags(marks: Option<u32>) -> (bool, bool) {
    let not = marks.unwrap_or(0);
    (not & NOT_WWW == 0, not & NOT_HTTP == 0)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::store::analysis::documents::Centers;
    use crate::store::analysis::documents::load_docs;
    use crate::store::analysis::host_column::HostColumnBuilder;

    fn k(url: &str, kind: AliasKind) -> String {
        key(&parse(url).unwrap(), kind)
    }

    /// A plain URL's entry, cut by hand, is the one the parser's parts
    /// make, on URLs of the shapes alias matching meets (www, schemes,
    /// index pages, queries, case) and the characters that stop a URL
    /// from being plain.
    #[test]
    fn plain_urls_make_the_parsed_entries() {
        let hosts = ["example.com", "www.example.com", "www.", "a.www.org", "WWW.Example.com"];
        let pieces = [
            "/",
            "//",
            "a",
            "B",
            "index.html",
            "INDEX.HTM",
            "default.aspx",
            "/.",
            "?",
            "q=1",
            "&",
            "#f",
            "%41",
            "%2e",
            ":80",
            "@",
            " ",
            "é",
            "\\",
            "\"",
        ];
        let mut rng = crate::testing::XorShift::new(0x5eed_a11a_5001);
        let mut plain = 0;
        let (mut a, mut b) = (String::new(), String::new());
        for _ in 0..100_000 {
            let mut url = ["http://", "https://"][(rng.next_u64() % 2) as usize].to_string();
            url.push_str(hosts[(rng.next_u64() % hosts.len() as u64) as usize]);
            for _ in 0..rng.next_u64() % 6 {
                url.push_str(pieces[(rng.next_u64() % pieces.len() as u64) as usize]);
            }
            plain += u32::from(plain_url::split(&url).is_some());
            let fields = |e: Option<UrlEntry>| e.map(|e| (e.base, e.tail, e.query, e.row));
            assert_eq!(
                fields(UrlEntry::new(7, &url, &mut a)),
                fields(UrlEntry::parsed(7, &url, &mut b)),
                "{url:?}"
            );
        }
        assert!(plain > 20_000, "only {plain} plain URLs drawn");
    }

    #[test]
    fn keys_remove_one_difference_each() {
        use AliasKind::*;
        assert_eq!(k("http://www.a.org/x?q=1", Www), k("http://a.org/x?q=1", Www));
        assert_ne!(k("http://www.a.org/x", Www), k("https://a.org/x", Www));
        assert_eq!(k("https://a.org/x", Scheme), k("http://a.org/x", Scheme));
        assert_ne!(k("https://a.org/x", Scheme), k("http://www.a.org/x", Scheme));
        for u in ["http://a.org/docs/", "http://a.org/docs/index.html", "http://a.org/docs/INDEX.HTM"] {
            assert_eq!(k(u, Index), k("http://a.org/docs", Index), "{u}");
        }
        assert_eq!(k("http://a.org/", Index), k("http://a.org/default.asp", Index));
        assert_ne!(k("http://a.org/docs/page.html", Index), k("http://a.org/docs", Index));
        assert_ne!(k("http://a.org/x?id=1", Index), k("http://a.org/x?id=2", Index));
        assert_eq!(k("http://a.org/x?id=1", Query), k("http://a.org/x?id=2&s=3", Query));
        assert_eq!(k("http://a.org/x#top", Query), k("http://a.org/x", Query));
        assert!(parse("ftp://a.org/x").is_none());
        assert!(parse("not a url").is_none());
    }

    #[test]
    fn every_exact_alias_is_paired_with_the_first_of_its_text() {
        // Texts: 0 and 2 are A, 1 and 3 are B; 4 is empty.
        let docs = Docs {
            centers: Centers::from_rows(&[0, 1, 0, 1, EMPTY]),
            host: vec![0; 5].into(),
            hosts: vec!["h"].into(),
            ..Docs::default()
        };
        assert_eq!((0..5).map(|d| docs.group_size(d)).collect::<Vec<_>>(), [2, 2, 0, 0, 0]);
        let member =
            |url: u64, doc: u32| Member { key: (7, 0), url: (url, 0), doc, center: docs.center(doc) };
        let group: Vec<Member> = (0..5).map(|d| member(100 + u64::from(d), d)).collect();
        let mut got = Vec::new();
        pair_group(&docs, AliasKind::Query, &group, &mut got);
        let got: Vec<(u32, u32, Content)> = got.iter().map(|a| (a.doc_a, a.doc_b, a.content)).collect();
        assert_eq!(
            got,
            vec![
                (0, 1, Content::Different),
                (0, 2, Content::Exact),
                (1, 3, Content::Exact),
                (0, 4, Content::Empty)
            ]
        );
        // The same URL twice is not an alias.
        let same = vec![member(100, 0), member(100, 2)];
        let mut none = Vec::new();
        pair_group(&docs, AliasKind::Query, &same, &mut none);
        assert!(none.is_empty());
    }

    #[test]
    fn www_and_http_unique_as_yacy() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("docs.csv");
        std::fs::write(
            &p,
            "doc_id,url,host,source,bytes,lines,chunks,exact_center,title,missing_for,date,capture,canonical,near_group\n\
             0,http://a.org/x,a.org,s:0,1,1,1,0,,0,,,,\n\
             1,http://www.a.org/x,www.a.org,s:1,1,1,1,1,,0,,,,\n\
             2,http://b.org/y,b.org,s:2,1,1,1,2,,0,,,,\n\
             3,https://b.org/y,b.org,s:3,1,1,1,3,,0,,,,\n\
             4,http://c.org/z,c.org,s:4,1,1,1,4,,0,,,,\n\
             5,,,s:5,1,1,1,5,,0,,,,\n",
        )
        .unwrap();
        let mut entries = UrlEntries::new(1 << 20, 6, dir.path());
        let docs =
            load_docs(&p, 6, HostColumnBuilder::held(), |r, center, row| entries.add(r, center, row.url))
                .unwrap();
        let (_, u) = find(entries, &docs, 1 << 20, dir.path()).unwrap();
        let mut u = u.cursor().unwrap();
        let mut flags = |row| url_flags(u.at(row).unwrap());
        assert_eq!(flags(0), (false, true), "http://a.org/x");
        assert_eq!(flags(1), (true, true), "http://www.a.org/x");
        assert_eq!(flags(2), (true, false), "http://b.org/y");
        assert_eq!(flags(3), (true, true), "https://b.org/y");
        assert_eq!(flags(4), (true, true), "http://c.org/z");
        assert_eq!(flags(5), (true, true), "no URL");
    }

    /// Aliases and URL flags as they were found before [`UrlEntry`]: each
    /// kind's key written out and hashed whole, the www and https forms
    /// looked up among all URLs.
    fn by_keys(urls: &[&str], docs: &Docs) -> (Vec<Alias>, Vec<(bool, bool)>) {
        let parsed: Vec<(u32, Url)> =
            urls.iter().enumerate().filter_map(|(d, u)| Some((d as u32, parse(u)?))).collect();
        let mut aliases = Vec::new();
        for kind in AliasKind::ALL {
            let mut keyed: Vec<(u128, u32, Member)> = parsed
                .iter()
                .map(|(d, u)| {
                    let url = (xxh3_64(u.as_str().as_bytes()), 0);
                    let center = docs.center(*d);
                    (xxh3_128(key(u, kind).as_bytes()), *d, Member { key: (0, 0), url, doc: *d, center })
                })
                .collect();
            keyed.sort_unstable_by_key(|&(k, d, _)| (k, d));
            for group in keyed.chunk_by(|a, b| a.0 == b.0) {
                let members: Vec<Member> = group.iter().map(|g| g.2).collect();
                pair_group(docs, kind, &members, &mut aliases);
            }
        }
        aliases.sort();
        let all: HashSet<&str> = parsed.iter().map(|(_, u)| u.as_str()).collect();
        let flags = urls
            .iter()
            .map(|url| {
                let Some(u) = parse(url) else { return (true, true) };
                let host = u.host_str().unwrap_or("");
                let www = host.starts_with("www.") || {
                    let mut with = u.clone();
                    with.set_host(Some(&format!("www.{host}"))).is_err() || !all.contains(with.as_str())
                };
                let https = format!("https{}", &u.as_str()[u.scheme().len()..]);
                (www, u.scheme() == "https" || !all.contains(https.as_str()))
            })
            .collect();
        (aliases, flags)
    }

    #[test]
    fn entries_find_what_the_keys_find() {
        let schemes = ["http", "https", "HTTPS", "ftp"];
        let hosts = [
            "a.org",
            "www.a.org",
            "WWW.A.org",
            "www.",
            "www.www.a.org",
            "www.www.",
            "b.a.org",
            "www.b.a.org",
            "bücher.example",
            "www.bücher.example",
            "www.xn--bcher-kva.example",
            "1.2.3.4",
            "www.1.2.3.4",
            "[::1]",
            "",
            "www..",
            "www.a..b",
            "www.%61.org",
            "www.xn--bcher-kva.xn--bcher-kva",
            "www.a-.org",
            "www.a_b.org",
            "www.0x10.org",
            "www.org",
            "www.ا.example",
        ];
        let users = ["", "u@", "u:p@", "www.a.org@"];
        let ports = ["", ":80", ":443", ":8080"];
        let paths = [
            "",
            "/",
            "//",
            "/x",
            "/x/",
            "/x//",
            "/x/index.html",
            "/x/INDEX.HTM",
            "/x/Index.Html/",
            "/x//index.php",
            "/default.asp",
            "/index.html/x",
            "/x/./y",
            "/x/../index.html",
            "/%78/",
            "/x%2F",
            "/ x?",
        ];
        let queries = ["", "?", "?a=1", "?a=2", "?a=1&b", "??"];
        let fragments = ["", "#", "#f", "#?a=1"];
        let mut rng = crate::testing::XorShift::new(0x9e37_79b9_7f4a_7c15);
        let mut next = |n: usize| rng.below(n as u64) as usize;
        for case in 0..10_000 {
            // Two or three choices per part, so that URLs share most of
            // their parts.
            let mut pick = |parts: &[&'static str]| -> Vec<&'static str> {
                (0..2 + next(2)).map(|_| parts[next(parts.len())]).collect()
            };
            let parts = [
                pick(&schemes),
                pick(&hosts),
                pick(&users),
                pick(&ports),
                pick(&paths),
                pick(&queries),
                pick(&fragments),
            ];
            let n = 2 + next(30);
            let urls: Vec<String> = (0..n)
                .map(|_| match next(40) {
                    0 => String::new(),
                    1 => "not a url".into(),
                    _ => {
                        let p: Vec<&str> = parts.iter().map(|p| p[next(p.len())]).collect();
                        format!("{}://{}{}{}{}{}{}", p[0], p[2], p[1], p[3], p[4], p[5], p[6])
                    }
                })
                .collect();
            // Texts: a few, and some empty documents.
            let text: Vec<Option<usize>> =
                (0..n).map(|_| [None, Some(0), Some(1), Some(2)][next(4)]).collect();
            let center: Vec<u32> = (0..n)
                .map(|d| match text[d] {
                    None => EMPTY,
                    t => (0..n).find(|&c| text[c] == t).unwrap() as u32,
                })
                .collect();
            let docs = Docs { centers: Centers::from_rows(&center), ..Docs::default() };
            let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
            assert_eq!(found(&urls, &docs, 1 << 20, false), by_keys(&urls, &docs), "case {case}: {urls:?}");
        }
        // Many URLs of the same parts, found within a budget of nothing
        // (spilled in batches of 1,024 and sorted through files) and in
        // memory.
        let parts: [&[&str]; 7] = [&schemes, &hosts, &users, &ports, &paths, &queries, &fragments];
        let n = 6000;
        let urls: Vec<String> = (0..n)
            .map(|_| {
                let p: Vec<&str> = parts.iter().map(|p| p[next(p.len())]).collect();
                format!("{}://{}{}{}{}{}{}", p[0], p[2], p[1], p[3], p[4], p[5], p[6])
            })
            .collect();
        let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
        let center: Vec<u32> = (0..n as u32).map(|d| if d % 9 == 0 { EMPTY } else { d % 7 }).collect();
        let docs = Docs { centers: Centers::from_rows(&center), ..Docs::default() };
        let in_memory = found(&urls, &docs, 1 << 30, false);
        assert!(in_memory.0.len() > 1000, "{} aliases", in_memory.0.len());
        assert_eq!(found(&urls, &docs, 0, true), in_memory);
    }

    /// [`find`]'s aliases and flags for `urls`, the entries held within
    /// `budget`; `spills` says whether they must have been spilled.
    fn found(urls: &[&str], docs: &Docs, budget: u64, spills: bool) -> (Vec<Alias>, Vec<(bool, bool)>) {
        let dir = tempfile::tempdir().unwrap();
        let mut entries = UrlEntries::new(budget, urls.len() as u64, dir.path());
        for (d, url) in urls.iter().enumerate() {
            entries.add(d as u32, docs.center(d as u32), url).unwrap();
        }
        assert_eq!(entries.entries.spilled(), spills);
        let (mut near, unique) = find(entries, docs, budget, dir.path()).unwrap();
        near.cursor().unwrap().finish().unwrap();
        let table = near.finish().unwrap();
        let mut aliases = Vec::new();
        table
            .for_each(|a| {
                aliases.push(a);
                Ok(())
            })
            .unwrap();
        drop(table);
        let mut cursor = unique.cursor().unwrap();
        let flags = (0..urls.len() as u32).map(|d| url_flags(cursor.at(d).unwrap())).collect();
        drop(cursor);
        drop(unique);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "scratch files left");
        (aliases, flags)
    }
}
