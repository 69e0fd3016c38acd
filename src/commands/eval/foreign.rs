//! Another tool's answer as a CSV file, told by its header:
//!
//! - `url_a,url_b`: pairs of URLs found to be near-duplicates, in any
//!   order, repeated or not; a URL paired with itself is left out and
//!   counted. Read as one group per URL and a link per pair.
//! - `url,cluster`: each URL's cluster, any text naming it (text-dedup's
//!   union-find root, datatrove's cluster number); URLs in no row are
//!   clusters of their own. Read as groups, without links, so a cluster
//!   of thousands of URLs costs as many items, not the pairs it holds.
//!
//! Fields are CSV (RFC 4180 quoting, so URLs with commas work), UTF-8.

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use anyhow::{Context, bail};
use rustc_hash::FxHashMap;

use super::side::{Link, NONE, Side, Sim, Urls};

const PAIRS_HEADER: [&str; 2] = ["url_a", "url_b"];
const CLUSTERS_HEADER: [&str; 2] = ["url", "cluster"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Pairs,
    Clusters,
}

/// A foreign file read as a side.
pub(super) struct Foreign {
    pub kind: Kind,
    /// Each item's group, by item, as far as the items read so far; a
    /// side once [`Foreign::take_side`] gives it the final item count.
    group: Vec<u32>,
    groups: u32,
    links: Vec<Link>,
    /// Data rows, rows that pair a URL with itself, and rows that repeat
    /// an earlier pair or assignment.
    pub rows: u64,
    pub self_pairs: u64,
    pub repeated: u64,
    /// Distinct URLs named.
    pub urls: u64,
}

impl Foreign {
    /// Takes the side out, over `items` items (those of both sides).
    pub(super) fn take_side(&mut self, items: usize) -> Side {
        let group = std::mem::take(&mut self.group);
        let mut side = Side { group, groups: self.groups, links: std::mem::take(&mut self.links) };
        side.cover(items);
        side
    }
}

/// Reads the file at `path`. Memory: a group per URL and, for pairs, 8
/// bytes per pair (sorted and deduplicated, not hashed).
pub(super) fn read(path: &Path, urls: &mut Urls) -> anyhow::Result<Foreign> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut lines = Lines { reader: BufReader::with_capacity(1 << 16, file), line: Vec::new(), number: 0 };
    let expected = || {
        format!(
            "expected the header {} (URL pairs) or {} (clusters)",
            PAIRS_HEADER.join(","),
            CLUSTERS_HEADER.join(",")
        )
    };
    let read_error = |number: u64| format!("cannot read {} (line {})", path.display(), number + 1);
    let Some((first, header)) = lines.next().with_context(|| read_error(0))? else {
        bail!("{} is empty: {}", path.display(), expected());
    };
    let header = header.strip_prefix("\u{feff}".as_bytes()).unwrap_or(header);
    let kind = match split(header).as_deref() {
        Some([a, b]) if [&a[..], &b[..]] == PAIRS_HEADER.map(str::as_bytes) => Kind::Pairs,
        Some([a, b]) if [&a[..], &b[..]] == CLUSTERS_HEADER.map(str::as_bytes) => Kind::Clusters,
        _ => bail!("{} line {first}: {}", path.display(), expected()),
    };
    let names = match kind {
        Kind::Pairs => PAIRS_HEADER,
        Kind::Clusters => CLUSTERS_HEADER,
    };
    let mut f = Foreign {
        kind,
        group: Vec::new(),
        groups: 0,
        links: Vec::new(),
        rows: 0,
        self_pairs: 0,
        repeated: 0,
        urls: 0,
    };
    let mut pairs: Vec<u64> = Vec::new();
    let mut clusters: FxHashMap<Box<str>, u32> = FxHashMap::default();
    let mut cluster_names: Vec<Box<str>> = Vec::new();
    loop {
        let number = lines.number;
        let Some((line, text)) = lines.next().with_context(|| read_error(number))? else { break };
        let bad = |what: String| anyhow::anyhow!("{} line {line}: {what}", path.display());
        let record = split(text)
            .ok_or_else(|| bad("a quoted field is not closed before the comma or line end".into()))?;
        if record.len() != 2 {
            return Err(bad(format!("expected 2 columns ({}), found {}", names.join(","), record.len())));
        }
        let mut fields = [""; 2];
        for (k, field) in record.iter().enumerate() {
            fields[k] = std::str::from_utf8(field).map_err(|_| bad(format!("{} is not UTF-8", names[k])))?;
            if fields[k].is_empty() {
                return Err(bad(format!("{} is empty", names[k])));
            }
        }
        f.rows += 1;
        let a = urls.intern(fields[0])?;
        let named = |f: &mut Foreign, item: u32| {
            if f.group.len() <= item as usize {
                f.group.resize(item as usize + 1, NONE);
            }
            if f.group[item as usize] == NONE {
                f.urls += 1;
            }
        };
        named(&mut f, a);
        match kind {
            Kind::Pairs => {
                // A URL is its own group; the group number is the item's.
                f.group[a as usize] = a;
                let b = urls.intern(fields[1])?;
                named(&mut f, b);
                f.group[b as usize] = b;
                if a == b {
                    f.self_pairs += 1;
                } else {
                    pairs.push(u64::from(a.min(b)) << 32 | u64::from(a.max(b)));
                }
            }
            Kind::Clusters => {
                let next = cluster_names.len() as u32;
                let c = *clusters.entry(fields[1].into()).or_insert(next);
                if c == next {
                    cluster_names.push(fields[1].into());
                }
                match f.group[a as usize] {
                    NONE => f.group[a as usize] = c,
                    old if old == c => f.repeated += 1,
                    old => {
                        return Err(bad(format!(
                            "{} is in cluster {} already, and in {} here",
                            fields[0], cluster_names[old as usize], fields[1]
                        )));
                    }
                }
            }
        }
    }
    match kind {
        Kind::Pairs => {
            pairs.sort_unstable();
            let before = pairs.len();
            pairs.dedup();
            f.repeated = (before - pairs.len()) as u64;
            f.links = pairs
                .into_iter()
                .map(|p| Link { a: (p >> 32) as u32, b: p as u32, sim: Sim::Unmeasured })
                .collect();
            f.groups = urls.len() as u32;
        }
        Kind::Clusters => f.groups = cluster_names.len() as u32,
    }
    Ok(f)
}

/// The non-blank lines of a file, without their line ends, numbered from
/// 1 (blank lines counted). Lines are read by hand rather than by
/// the `csv` crate, whose record positions count a CR LF line end (as
/// Python's `csv.writer` writes) into the next record, which would name
/// the line before the one at fault.
struct Lines<R> {
    reader: R,
    line: Vec<u8>,
    number: u64,
}

impl<R: BufRead> Lines<R> {
    /// The next non-blank line, with its number.
    fn next(&mut self) -> std::io::Result<Option<(u64, &[u8])>> {
        loop {
            self.line.clear();
            if self.reader.read_until(b'\n', &mut self.line)? == 0 {
                return Ok(None);
            }
            self.number += 1;
            let mut end = self.line.len();
            while end > 0 && matches!(self.line[end - 1], b'\n' | b'\r') {
                end -= 1;
            }
            if end > 0 {
                return Ok(Some((self.number, &self.line[..end])));
            }
        }
    }
}

/// The fields of one CSV line: separated by commas; a field in double
/// quotes may hold commas, with `""` for a quote. `None` when a quoted
/// field is not closed right before a comma or the line end.
fn split(line: &[u8]) -> Option<Vec<Cow<'_, [u8]>>> {
    let mut fields = Vec::with_capacity(2);
    let mut rest = line;
    loop {
        if let Some(quoted) = rest.strip_prefix(b"\"") {
            let mut field = Vec::new();
            let mut i = 0;
            loop {
                match quoted.get(i)? {
                    b'"' if quoted.get(i + 1) == Some(&b'"') => {
                        field.push(b'"');
                        i += 2;
                    }
                    b'"' => break,
                    &b => {
                        field.push(b);
                        i += 1;
                    }
                }
            }
            fields.push(Cow::Owned(field));
            rest = &quoted[i + 1..];
            match rest.split_first() {
                None => return Some(fields),
                Some((b',', after)) => rest = after,
                Some(_) => return None,
            }
        } else {
            match rest.iter().position(|&b| b == b',') {
                Some(comma) => {
                    fields.push(Cow::Borrowed(&rest[..comma]));
                    rest = &rest[comma + 1..];
                }
                None => {
                    fields.push(Cow::Borrowed(rest));
                    return Some(fields);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(line: &str) -> Option<Vec<String>> {
        split(line.as_bytes()).map(|f| f.iter().map(|f| String::from_utf8(f.to_vec()).unwrap()).collect())
    }

    #[test]
    fn fields_split_as_rfc_4180_quotes_them() {
        assert_eq!(fields("a,b"), Some(vec!["a".into(), "b".into()]));
        assert_eq!(fields("\"http://x/?a=1,2\",b"), Some(vec!["http://x/?a=1,2".into(), "b".into()]));
        assert_eq!(fields("\"say \"\"hi\"\"\",\"\""), Some(vec!["say \"hi\"".into(), "".into()]));
        assert_eq!(fields("a,,c"), Some(vec!["a".into(), "".into(), "c".into()]));
        assert_eq!(fields("a,"), Some(vec!["a".into(), "".into()]));
        assert_eq!(fields("a\"b,c"), Some(vec!["a\"b".into(), "c".into()]));
        assert_eq!(fields("\"a,b"), None);
        assert_eq!(fields("\"a\"b,c"), None);
    }

    #[test]
    fn lines_skip_blanks_and_count_every_line_end() {
        let mut lines = Lines { reader: &b"h\r\n\r\na\r\nb\n\nc"[..], line: Vec::new(), number: 0 };
        let mut got = Vec::new();
        while let Some((n, l)) = lines.next().unwrap() {
            got.push((String::from_utf8(l.to_vec()).unwrap(), n));
        }
        assert_eq!(got, [("h".into(), 1), ("a".into(), 3), ("b".into(), 4), ("c".into(), 6)]);
    }
}
