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

use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde::Serialize;
use url::Url;
use xxhash_rust::xxh3::{xxh3_64, xxh3_128};

use super::input::{Docs, EMPTY, for_each_doc, for_each_pair, urls_of};

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

/// The URL as `kind`'s normalization would write it.
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
            let path = url.path();
            let last = path.rsplit('/').next().unwrap_or("");
            let dir = if INDEX_PAGES.contains(&last.to_ascii_lowercase().as_str()) {
                &path[..path.len() - last.len()]
            } else {
                path
            };
            let dir = dir.trim_end_matches('/');
            let start = &url.as_str()[..url.as_str().len() - url[url::Position::BeforePath..].len()];
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
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
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

/// Finds the alias pairs of every kind, sorted by (kind, doc_a, doc_b).
pub fn find(docs_csv: &Path, overlap: &Path, docs: &Docs) -> anyhow::Result<Vec<Alias>> {
    let mut aliases = Vec::new();
    for kind in AliasKind::ALL {
        // (key hash, URL hash, doc, its center): sorted, a key's documents
        // are together. The center is read here, in docID order: looked up
        // in key order, it was a cache miss per document on large crawls.
        let mut keyed: Vec<Keyed> = Vec::new();
        for_each_doc(docs_csv, |r, row| {
            if let Some(u) = parse(row.url) {
                let center = docs.center[r as usize];
                keyed.push((xxh3_128(key(&u, kind).as_bytes()), xxh3_64(u.as_str().as_bytes()), r, center));
            }
            Ok(())
        })?;
        keyed.sort_unstable_by_key(|&(k, _, d, _)| (k, d));
        for group in keyed.chunk_by(|a, b| a.0 == b.0) {
            pair_group(docs, kind, group, &mut aliases);
        }
    }
    mark_near(overlap, docs, &mut aliases)?;
    aliases.sort();
    Ok(aliases)
}

/// A document under one alias key: `(key hash, URL hash, doc, center)`.
type Keyed = (u128, u64, u32, u32);

/// The alias rows of one key's documents, in docID order: each document
/// with the first of its text (an exact pair), the first of each text with
/// the key's first document.
fn pair_group(docs: &Docs, kind: AliasKind, group: &[Keyed], aliases: &mut Vec<Alias>) {
    let (_, first_url, first, _) = group[0];
    // The first document of each text seen so far, with its URL hash;
    // empty documents each stand alone.
    let mut firsts: HashMap<u32, (u64, u32)> = HashMap::new();
    for &(_, url, doc, center) in group {
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
/// `Near` later).
fn content_of(docs: &Docs, a: u32, b: u32) -> Content {
    let (ca, cb) = (docs.center[a as usize], docs.center[b as usize]);
    if ca == EMPTY || cb == EMPTY {
        Content::Empty
    } else if ca == cb {
        Content::Exact
    } else {
        Content::Different
    }
}

/// Turns `Different` into `Near` where the centers are an Overlap-table
/// pair, in one pass over the table.
fn mark_near(overlap: &Path, docs: &Docs, aliases: &mut [Alias]) -> anyhow::Result<()> {
    let centers = |a: &Alias| {
        let (x, y) = (docs.center[a.doc_a as usize], docs.center[a.doc_b as usize]);
        (x.min(y), x.max(y))
    };
    let wanted: HashSet<(u32, u32)> =
        aliases.iter().filter(|a| a.content == Content::Different).map(centers).collect();
    if wanted.is_empty() {
        return Ok(());
    }
    let mut linked = HashSet::new();
    for_each_pair(overlap, docs, |i, j, _| {
        if wanted.contains(&(i, j)) {
            linked.insert((i, j));
        }
        Ok(())
    })?;
    for a in aliases.iter_mut() {
        if a.content == Content::Different && linked.contains(&centers(a)) {
            a.content = Content::Near;
        }
    }
    Ok(())
}

/// Counts per kind, in [`AliasKind::ALL`] order.
pub fn counts(aliases: &[Alias]) -> [AliasCounts; 4] {
    AliasKind::ALL.map(|kind| {
        let mut c = AliasCounts::default();
        for a in aliases.iter().filter(|a| a.kind == kind) {
            c.pairs += 1;
            match a.content {
                Content::Exact => c.exact += 1,
                Content::Near => c.near += 1,
                Content::Different => c.different += 1,
                Content::Empty => c.empty += 1,
            }
        }
        c
    })
}

/// One alias pair to show people, with its URLs.
#[derive(Clone, Debug, PartialEq)]
pub struct Example {
    pub kind: AliasKind,
    pub url_a: String,
    pub url_b: String,
    pub content: Content,
}

/// Writes `aliases.csv`: `kind,doc_a,doc_b,url_a,url_b,content`. Returns
/// one example per kind: its first pair of the most similar content.
pub fn write_csv(
    path: &Path,
    docs_csv: &Path,
    docs: &Docs,
    aliases: &[Alias],
) -> anyhow::Result<Vec<Example>> {
    let mut wanted: Vec<u32> = aliases.iter().flat_map(|a| [a.doc_a, a.doc_b]).collect();
    wanted.sort_unstable();
    wanted.dedup();
    let urls = urls_of(docs_csv, &wanted)?;
    let url = |d: u32| urls.get(&d).map_or("", String::as_str);
    let rows = aliases.iter().map(|a| {
        [
            a.kind.name().to_string(),
            docs.doc_id(a.doc_a).to_string(),
            docs.doc_id(a.doc_b).to_string(),
            url(a.doc_a).into(),
            url(a.doc_b).into(),
            a.content.name().into(),
        ]
    });
    crate::store::write_rows(path, &["kind", "doc_a", "doc_b", "url_a", "url_b", "content"], rows.map(Ok))?;
    let examples = AliasKind::ALL
        .iter()
        .filter_map(|&kind| {
            // Content orders exact, near, different, empty: the most
            // similar first, then the smallest docIDs.
            aliases.iter().filter(|a| a.kind == kind).min_by_key(|a| (a.content, a.doc_a, a.doc_b)).map(|a| {
                Example { kind, url_a: url(a.doc_a).into(), url_b: url(a.doc_b).into(), content: a.content }
            })
        })
        .collect();
    Ok(examples)
}

/// YaCy's `www_unique` and `http_unique` for every document.
///
/// `www_unique` is true when the host has the `www.` prefix, or when no
/// document has the same URL with it; `http_unique` is true when the
/// scheme is https, or when no document has the same URL under https
/// (YaCy's defaults, which prefer the `www.` and https forms). URLs that
/// are not http(s) are unique.
pub struct UrlUnique {
    /// Hashes of every document's parsed URL, sorted.
    urls: Vec<u128>,
}

impl UrlUnique {
    pub fn load(docs_csv: &Path) -> anyhow::Result<UrlUnique> {
        let mut urls = Vec::new();
        for_each_doc(docs_csv, |_, row| {
            if let Some(u) = parse(row.url) {
                urls.push(xxh3_128(u.as_str().as_bytes()));
            }
            Ok(())
        })?;
        urls.sort_unstable();
        urls.dedup();
        Ok(UrlUnique { urls })
    }

    fn exists(&self, url: &str) -> bool {
        self.urls.binary_search(&xxh3_128(url.as_bytes())).is_ok()
    }

    /// `(www_unique, http_unique)` of one URL.
    pub fn flags(&self, url: &str) -> (bool, bool) {
        let Some(u) = parse(url) else { return (true, true) };
        let host = u.host_str().unwrap_or("");
        let www = host.starts_with("www.") || {
            let mut with = u.clone();
            with.set_host(Some(&format!("www.{host}"))).is_err() || !self.exists(with.as_str())
        };
        let http =
            u.scheme() == "https" || !self.exists(&format!("https{}", &u.as_str()[u.scheme().len()..]));
        (www, http)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(url: &str, kind: AliasKind) -> String {
        key(&parse(url).unwrap(), kind)
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
            center: vec![0, 1, 0, 1, EMPTY],
            bytes: vec![1; 5],
            host: vec![0; 5],
            hosts: vec!["h".into()],
            group_size: vec![2, 2, 0, 0, 0],
            ..Docs::default()
        };
        let group: Vec<Keyed> = (0..5).map(|d| (7, 100 + u64::from(d), d, docs.center[d as usize])).collect();
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
        let same = vec![(7, 100, 0, 0), (7, 100, 2, 0)];
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
            "doc_id,url,host,source,bytes,lines,chunks,exact_center,title,missing_for\n\
             0,http://a.org/x,a.org,s:0,1,1,1,0,,0\n\
             1,http://www.a.org/x,www.a.org,s:1,1,1,1,1,,0\n\
             2,http://b.org/y,b.org,s:2,1,1,1,2,,0\n\
             3,https://b.org/y,b.org,s:3,1,1,1,3,,0\n\
             4,http://c.org/z,c.org,s:4,1,1,1,4,,0\n",
        )
        .unwrap();
        let u = UrlUnique::load(&p).unwrap();
        assert_eq!(u.flags("http://a.org/x"), (false, true));
        assert_eq!(u.flags("http://www.a.org/x"), (true, true));
        assert_eq!(u.flags("http://b.org/y"), (true, false));
        assert_eq!(u.flags("https://b.org/y"), (true, true));
        assert_eq!(u.flags("http://c.org/z"), (true, true));
        assert_eq!(u.flags(""), (true, true));
    }
}
