//! `--keep`: the stated rule that chooses the copy standing for a group.
//!
//! A rule is a list of criteria, each ranking documents by one column of
//! docs.csv; a document comes before another at the first criterion that
//! tells them apart, and by docID when none does, so the choice is the
//! same on every run. `input-order` is docID order itself: the paper's
//! rule (the smallest docID is the center), and the default.
//!
//! | criterion | first | from |
//! |---|---|---|
//! | `capture` | a `response` (a page fetched with its payload), then a record without an HTTP header, then a `revisit` (whose payload another capture holds) | `capture` |
//! | `newest`, `oldest` | the latest, or earliest, `date`; a document without one (or with one that is not `YYYY-MM-DDThh:mm:ss[.fraction]Z`) after every dated one | `date` |
//! | `https` | an `https:` URL | `url` |
//! | `shortest-url` | the fewest bytes of URL | `url` |
//! | `canonical` | a page whose `<link rel="canonical">` names its own URL, then a page that names none, then a page that names another (a variant pointing to the page to keep) | `canonical`, `url` |
//! | `longest-text` | the most normalized lines | `lines` |
//! | `input-order` | the smallest docID | `doc_id` |

use std::fmt;

use super::super::docs::{CaptureStatus, Doc};

/// One criterion of a rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Criterion {
    Capture,
    Newest,
    Oldest,
    Https,
    ShortestUrl,
    Canonical,
    LongestText,
    InputOrder,
}

/// Every criterion with its name, as `--keep` takes it.
const NAMES: [(&str, Criterion); 8] = [
    ("capture", Criterion::Capture),
    ("newest", Criterion::Newest),
    ("oldest", Criterion::Oldest),
    ("https", Criterion::Https),
    ("shortest-url", Criterion::ShortestUrl),
    ("canonical", Criterion::Canonical),
    ("longest-text", Criterion::LongestText),
    ("input-order", Criterion::InputOrder),
];

/// The most criteria a rule can hold: each at most once.
pub const MAX_CRITERIA: usize = NAMES.len();

impl Criterion {
    pub fn name(self) -> &'static str {
        NAMES.iter().find(|(_, c)| *c == self).map_or("", |(n, _)| n)
    }

    /// The docs.csv column it ranks by.
    pub fn column(self) -> &'static str {
        match self {
            Criterion::Capture => "capture",
            Criterion::Newest | Criterion::Oldest => "date",
            Criterion::Https | Criterion::ShortestUrl => "url",
            Criterion::Canonical => "canonical",
            Criterion::LongestText => "lines",
            Criterion::InputOrder => "doc_id",
        }
    }

    /// `doc`'s value under this criterion: the smaller comes first.
    pub fn value(self, doc: &Doc<'_>) -> u64 {
        match self {
            Criterion::Capture => match doc.crawled.status {
                CaptureStatus::Response => 0,
                CaptureStatus::Unknown => 1,
                CaptureStatus::Revisit => 2,
            },
            Criterion::Newest => date_value(doc.crawled.date).map_or(u64::MAX, |t| u64::MAX - 1 - t),
            Criterion::Oldest => date_value(doc.crawled.date).unwrap_or(u64::MAX),
            Criterion::Https => u64::from(!has_scheme(doc.url, "https")),
            Criterion::ShortestUrl => doc.url.len() as u64,
            Criterion::Canonical => match doc.text.map_or("", |t| t.canonical) {
                "" => 1,
                named if names_itself(doc.url, named) => 0,
                _ => 2,
            },
            Criterion::LongestText => u64::MAX - doc.text.map_or(0, |t| t.lines),
            Criterion::InputOrder => u64::from(doc.id),
        }
    }
}

/// A `--keep` rule: its criteria in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeepRule {
    criteria: Vec<Criterion>,
}

impl Default for KeepRule {
    /// `input-order`: the paper's rule.
    fn default() -> KeepRule {
        KeepRule { criteria: vec![Criterion::InputOrder] }
    }
}

impl fmt::Display for KeepRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.criteria.iter().map(|c| c.name()).collect();
        f.write_str(&names.join(","))
    }
}

impl KeepRule {
    /// Parses `CRITERION[,CRITERION...]`; the message says what is wrong.
    pub fn parse(text: &str) -> Result<KeepRule, String> {
        let mut criteria = Vec::new();
        for name in text.split(',') {
            let Some(&(_, c)) = NAMES.iter().find(|(n, _)| *n == name.trim()) else {
                let known: Vec<&str> = NAMES.iter().map(|(n, _)| *n).collect();
                return Err(format!("'{name}' is not a criterion of --keep (one of {})", known.join(", ")));
            };
            if criteria.contains(&c) {
                return Err(format!("'{name}' is given twice"));
            }
            if criteria.last() == Some(&Criterion::InputOrder) {
                return Err(format!("'{name}' comes after input-order, which never ties"));
            }
            let opposite = match c {
                Criterion::Newest => Some(Criterion::Oldest),
                Criterion::Oldest => Some(Criterion::Newest),
                _ => None,
            };
            if let Some(o) = opposite.filter(|o| criteria.contains(o)) {
                return Err(format!("'{name}' after '{}': the second would never decide", o.name()));
            }
            criteria.push(c);
        }
        Ok(KeepRule { criteria })
    }

    /// Whether the rule is docID order, whatever its criteria say first.
    pub fn is_input_order(&self) -> bool {
        self.criteria.first() == Some(&Criterion::InputOrder)
    }

    pub fn criteria(&self) -> &[Criterion] {
        &self.criteria
    }

    /// `doc`'s values under each criterion, then its docID: documents
    /// compare as their keys do.
    pub fn key(&self, doc: &Doc<'_>) -> Key {
        let mut values = [0; MAX_CRITERIA];
        for (v, c) in values.iter_mut().zip(&self.criteria) {
            *v = c.value(doc);
        }
        Key { values, doc: doc.id }
    }

    /// The first criterion by which `a` comes before `b` (`None` when
    /// only their docIDs tell them apart); `a`'s key is the smaller.
    pub fn deciding(&self, a: &Key, b: &Key) -> Option<Criterion> {
        let i = a.values.iter().zip(&b.values).position(|(x, y)| x != y)?;
        self.criteria.get(i).copied().filter(|&c| c != Criterion::InputOrder)
    }
}

/// A document's place under a rule: its criteria's values, then its docID.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    pub values: [u64; MAX_CRITERIA],
    pub doc: u32,
}

/// Whether `url` begins with `scheme:` in any case.
fn has_scheme(url: &str, scheme: &str) -> bool {
    url.get(..scheme.len()).is_some_and(|s| s.eq_ignore_ascii_case(scheme))
        && url[scheme.len()..].starts_with(':')
}

/// Whether the canonical address `named` (as the page wrote it, possibly
/// relative) is the page's own URL, both resolved and compared as the
/// WHATWG URL standard serializes them, without their fragments.
fn names_itself(page: &str, named: &str) -> bool {
    let Ok(mut own) = url::Url::parse(page) else { return page == named };
    let Ok(mut target) = own.join(named) else { return false };
    own.set_fragment(None);
    target.set_fragment(None);
    own == target
}

/// A WARC-Date (`YYYY-MM-DDThh:mm:ssZ`, WARC 1.1's with a fraction of a
/// second) as microseconds since 0000-03-01, which orders dates as time
/// does; `None` for any other text.
pub fn date_value(text: &str) -> Option<u64> {
    let b = text.as_bytes();
    let digits = |r: std::ops::Range<usize>| -> Option<u64> {
        let s = b.get(r)?;
        s.iter().all(u8::is_ascii_digit).then(|| s.iter().fold(0, |n, &d| n * 10 + u64::from(d - b'0')))
    };
    let seps = [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')];
    if b.len() < 20 || seps.iter().any(|&(i, c)| b[i] != c) || b.last() != Some(&b'Z') {
        return None;
    }
    let (year, month, day) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    let micros = match &b[19..b.len() - 1] {
        [] => 0,
        [b'.', fraction @ ..] if !fraction.is_empty() && fraction.iter().all(u8::is_ascii_digit) => {
            let mut padded = [b'0'; 6];
            let n = fraction.len().min(6);
            padded[..n].copy_from_slice(&fraction[..n]);
            padded.iter().fold(0, |m, &d| m * 10 + u64::from(d - b'0'))
        }
        _ => return None,
    };
    let days_in = |m: u64| match m {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if !(1..=12).contains(&month)
        || day == 0
        || day > days_in(month)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    // Days since 0000-03-01 (Howard Hinnant's days_from_civil).
    let y = if month <= 2 { year - 1 } else { year } as i64;
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = month as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = u64::try_from(era * 146_097 + doe).ok()?;
    let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second;
    Some(seconds * 1_000_000 + micros)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::docs::{Crawled, Source, TextFields};

    fn doc<'a>(
        id: u32,
        url: &'a str,
        date: &'a str,
        status: CaptureStatus,
        canonical: &'a str,
        lines: u64,
    ) -> Doc<'a> {
        Doc {
            id,
            url,
            host: "",
            source: Source { input: "in", offset: 0 },
            text: Some(TextFields { bytes: 1, lines, chunks: 1, title: "", canonical }),
            center: None,
            missing_for: 0,
            crawled: Crawled { date, status },
            near_group: None,
        }
    }

    #[test]
    fn rules_parse_and_refuse_what_cannot_decide() {
        assert_eq!(KeepRule::default().to_string(), "input-order");
        assert!(KeepRule::default().is_input_order());
        let r = KeepRule::parse("capture,newest,https").unwrap();
        assert_eq!(r.to_string(), "capture,newest,https");
        assert!(!r.is_input_order());
        for (text, want) in [
            ("newest,fresh", "'fresh' is not a criterion of --keep (one of capture, newest, oldest"),
            ("https,https", "'https' is given twice"),
            ("input-order,https", "'https' comes after input-order"),
            ("newest,oldest", "'oldest' after 'newest'"),
            ("", "'' is not a criterion"),
        ] {
            let e = KeepRule::parse(text).unwrap_err();
            assert!(e.starts_with(want), "{text}: {e}");
        }
    }

    #[test]
    fn dates_order_as_time_does() {
        let dates = [
            "1969-12-31T23:59:59Z",
            "1970-01-01T00:00:00Z",
            "2000-02-29T12:00:00Z",
            "2000-03-01T00:00:00Z",
            "2024-01-02T03:04:05Z",
            "2024-01-02T03:04:05.25Z",
            "2024-01-02T03:04:05.250001Z",
            "2024-01-02T03:04:06Z",
            "9999-12-31T23:59:59.999999Z",
        ];
        let values: Vec<u64> = dates.iter().map(|d| date_value(d).unwrap()).collect();
        assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
        assert_eq!(date_value("1970-01-02T00:00:00Z").unwrap() - values[1], 86_400_000_000);
        assert_eq!(date_value("2024-01-02T03:04:05.5Z"), date_value("2024-01-02T03:04:05.500000000Z"));
        for bad in [
            "",
            "2024-01-02",
            "2024-01-02T03:04:05",
            "2024-01-02 03:04:05Z",
            "2023-02-29T00:00:00Z",
            "2024-13-01T00:00:00Z",
            "2024-01-02T24:00:00Z",
            "2024-01-02T03:04:05.Z",
            "2024-01-02T03:04:05+01:00",
            "20240102030405",
        ] {
            assert_eq!(date_value(bad), None, "{bad}");
        }
    }

    #[test]
    fn each_criterion_ranks_as_documented() {
        use CaptureStatus::*;
        let rank = |rule: &str, docs: &[Doc<'_>]| -> Vec<u32> {
            let rule = KeepRule::parse(rule).unwrap();
            let mut keys: Vec<Key> = docs.iter().map(|d| rule.key(d)).collect();
            keys.sort();
            keys.iter().map(|k| k.doc).collect()
        };
        let docs = [
            doc(0, "http://a.example/p?utm=1", "2024-01-01T00:00:00Z", Response, "/p", 10),
            doc(1, "https://a.example/p", "2024-03-01T00:00:00Z", Revisit, "https://a.example/p#top", 10),
            doc(2, "HTTPS://a.example/p/", "", Unknown, "", 12),
            doc(3, "http://a.example/q", "2024-02-01T00:00:00.5Z", Response, "q", 9),
        ];
        assert_eq!(rank("capture", &docs), [0, 3, 2, 1]);
        assert_eq!(rank("newest", &docs), [1, 3, 0, 2]);
        assert_eq!(rank("oldest", &docs), [0, 3, 1, 2]);
        assert_eq!(rank("https", &docs), [1, 2, 0, 3]);
        assert_eq!(rank("shortest-url", &docs), [3, 1, 2, 0]);
        // 1 and 3 name themselves (a fragment aside; relative to the
        // page); 2 names none; 0 names another page.
        assert_eq!(rank("canonical", &docs), [1, 3, 2, 0]);
        assert_eq!(rank("longest-text", &docs), [2, 0, 1, 3]);
        assert_eq!(rank("input-order", &docs), [0, 1, 2, 3]);
        assert_eq!(rank("capture,longest-text", &docs), [0, 3, 2, 1]);
        assert_eq!(rank("https,capture", &docs), [2, 1, 0, 3]);
        // What decided between two documents.
        let rule = KeepRule::parse("https,longest-text").unwrap();
        let (k0, k1, k2) = (rule.key(&docs[0]), rule.key(&docs[1]), rule.key(&docs[2]));
        assert_eq!(rule.deciding(&k1, &k0), Some(Criterion::Https));
        assert_eq!(rule.deciding(&k2, &k1), Some(Criterion::LongestText));
        let same = doc(5, "https://a.example/p", "", Unknown, "", 10);
        assert_eq!(rule.deciding(&k1, &rule.key(&same)), None, "only the docID");
    }
}
