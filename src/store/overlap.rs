//! The Overlap table, `overlap.csv`: `doc_i,doc_j,shared`, one row per
//! document pair with i < j sharing F >= T chunk fingerprints, sorted by
//! (i, j). Both documents are exact-group centers (copies are removed
//! before counting). A run with `--jaccard` or `--containment` keeps only
//! the pairs that pass it and adds a `jaccard` and/or a `containment`
//! column (in that order), each with six decimals (`0.812500`, `1.000000`).
//!
//! Written with plain formatting rather than through the CSV writer: it is
//! the one table that grows with the pairs, numbers that never need
//! quoting.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use super::criterion::Criterion;
pub use super::criterion::Measures;
use super::{CannotWrite, commit, temp_path};

const HEADER: &str = "doc_i,doc_j,shared";

/// The similarity columns after `shared`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Columns {
    pub jaccard: bool,
    pub containment: bool,
}

impl Columns {
    /// The columns a criterion's table has.
    pub(crate) fn of(criterion: &Criterion) -> Columns {
        Columns { jaccard: criterion.jaccard.is_some(), containment: criterion.containment.is_some() }
    }

    fn header(self) -> String {
        let mut h = HEADER.to_string();
        if self.jaccard {
            h.push_str(",jaccard");
        }
        if self.containment {
            h.push_str(",containment");
        }
        h
    }

    /// The columns a header names, if it is one of the table's.
    fn from_header(line: &[u8]) -> Option<Columns> {
        let rest = line.strip_prefix(HEADER.as_bytes())?;
        [(false, false), (true, false), (false, true), (true, true)]
            .into_iter()
            .map(|(jaccard, containment)| Columns { jaccard, containment })
            .find(|c| c.header().as_bytes()[HEADER.len()..] == *rest)
    }

    fn extra(self) -> usize {
        usize::from(self.jaccard) + usize::from(self.containment)
    }
}

/// One Overlap-table row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Overlap {
    pub doc_i: u32,
    pub doc_j: u32,
    pub shared: u32,
}

/// Writes the table under its temporary name; [`OverlapWriter::finish`]
/// renames it into place.
pub(crate) struct OverlapWriter {
    path: PathBuf,
    out: BufWriter<File>,
    numbers: [itoa::Buffer; 3],
    columns: Columns,
    rows: u64,
}

impl OverlapWriter {
    pub(crate) fn create(path: &Path, columns: Columns) -> anyhow::Result<OverlapWriter> {
        crate::base::interrupt::check()?;
        let tmp = temp_path(path);
        let file = File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
        let mut w = OverlapWriter {
            path: path.to_path_buf(),
            out: BufWriter::with_capacity(1 << 16, file),
            numbers: Default::default(),
            columns,
            rows: 0,
        };
        w.out
            .write_all(columns.header().as_bytes())
            .and_then(|()| w.out.write_all(b"\n"))
            .with_context(|| w.error())?;
        Ok(w)
    }

    /// Appends a row with its similarity values, which must be those of
    /// the table's columns; rows come in (i, j) order.
    pub(crate) fn push_measured(&mut self, o: Overlap, m: Measures) -> anyhow::Result<()> {
        debug_assert_eq!(
            (m.jaccard.is_some(), m.containment.is_some()),
            (self.columns.jaccard, self.columns.containment)
        );
        self.write_row(o, [m.jaccard, m.containment])
    }

    /// Appends a row of a table without similarity columns; rows come in
    /// (i, j) order.
    pub(crate) fn push(&mut self, o: Overlap) -> anyhow::Result<()> {
        debug_assert_eq!(self.columns.extra(), 0);
        self.write_row(o, [None, None])
    }

    /// Writes the three numbers, then each similarity value given as
    /// `d.dddddd`, without formatting through a `String`: the table grows
    /// with the pairs.
    fn write_row(&mut self, o: Overlap, measures: [Option<u32>; 2]) -> anyhow::Result<()> {
        let [i, j, f] = &mut self.numbers;
        let numbers = [
            i.format(o.doc_i).as_bytes(),
            b",",
            j.format(o.doc_j).as_bytes(),
            b",",
            f.format(o.shared).as_bytes(),
        ];
        let out = &mut self.out;
        let mut written = numbers.iter().try_for_each(|part| out.write_all(part));
        for millionths in measures.into_iter().flatten() {
            let mut value = *b",0.000000";
            value[1] = b'0' + (millionths / 1_000_000) as u8;
            let mut rest = millionths % 1_000_000;
            for digit in value[3..].iter_mut().rev() {
                *digit = b'0' + (rest % 10) as u8;
                rest /= 10;
            }
            written = written.and_then(|()| out.write_all(&value));
        }
        self.rows += 1;
        written.and_then(|()| out.write_all(b"\n")).with_context(|| self.error())
    }

    /// Appends a row given as its line, as [`for_each_row`] passes it: as
    /// `push` would write it, line feed included. A carried-forward table
    /// copies the previous table's rows this way, not formatted again.
    pub(crate) fn push_line(&mut self, line: &[u8]) -> anyhow::Result<()> {
        debug_assert!(plain_row(line, 0).is_some_and(|(_, _, used)| used == line.len()));
        self.rows += 1;
        self.out.write_all(line).with_context(|| self.error())
    }

    /// Completes the table; returns its rows.
    pub(crate) fn finish(self) -> anyhow::Result<u64> {
        let err = self.error();
        self.out.into_inner().map_err(|e| e.into_error()).context(err)?;
        commit(&self.path)?;
        Ok(self.rows)
    }

    fn error(&self) -> CannotWrite {
        CannotWrite(temp_path(&self.path))
    }
}

/// Calls `f` with every row of the table at `path`, checking what the
/// writer promises: the header, three numbers a row, i < j, rows sorted by
/// (i, j). A row that breaks one, or an error from `f`, is an error naming
/// the file and line.
///
/// Numbers are parsed by hand: the report streams the table three times,
/// and a line read as a `String`, checked as UTF-8 and split by
/// `str::split` cost about 1,100 instructions. A row as the writer writes
/// it (three numbers and a line feed) is parsed where it lies in the
/// reader's buffer, about 100 instructions; any other line is read out
/// and split (about 500).
pub(crate) fn for_each_pair(
    path: &Path,
    mut f: impl FnMut(Overlap) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    read_rows(path, |o, _, _| f(o))
}

/// [`for_each_pair`], with each row's similarity values: the table's
/// `jaccard` and `containment` columns in millionths, `None` for a column
/// the table does not have.
pub(crate) fn for_each_measured(
    path: &Path,
    mut f: impl FnMut(Overlap, Measures) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    read_rows(path, |o, m, _| f(o, m))
}

/// [`for_each_pair`], with each row's line (line feed included) when it is
/// exactly as [`OverlapWriter::push`] writes the row, for
/// [`OverlapWriter::push_line`].
pub(crate) fn for_each_row(
    path: &Path,
    mut f: impl FnMut(Overlap, Option<&[u8]>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    read_rows(path, |o, _, line| f(o, line))
}

fn read_rows(
    path: &Path,
    mut f: impl FnMut(Overlap, Measures, Option<&[u8]>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut line = Vec::with_capacity(64);
    let mut number = 0u64;
    let mut last: Option<(u32, u32)> = None;
    let mut columns = Columns::default();
    loop {
        while number > 0 {
            let Some((o, m, used)) = plain_row(reader.buffer(), columns.extra()) else { break };
            number += 1;
            if let Some(what) = out_of_order(o, last) {
                bail!("{} line {number}: {what}", path.display());
            }
            last = Some((o.doc_i, o.doc_j));
            let m = measures(columns, m);
            f(o, m, Some(&reader.buffer()[..used])).map_err(|e| super::row_error(e, path, number))?;
            reader.consume(used);
        }
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .with_context(|| format!("cannot read {} (line {})", path.display(), number + 1))?;
        if n == 0 {
            break;
        }
        number += 1;
        let mut text = line.as_slice();
        while let [rest @ .., b'\n' | b'\r'] = text {
            text = rest;
        }
        // Only a line found wrong is checked as UTF-8, for the message
        // reading it as a string gave.
        let unreadable = || {
            std::str::from_utf8(&line).is_err().then(|| {
                anyhow::Error::new(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "stream did not contain valid UTF-8",
                ))
                .context(format!("cannot read {} (line {number})", path.display()))
            })
        };
        if number == 1 {
            columns = Columns::from_header(text).ok_or_else(|| {
                unreadable().unwrap_or_else(|| {
                    anyhow::anyhow!("{} line 1: expected the header {HEADER}", path.display())
                })
            })?;
            continue;
        }
        let bad = |what: &str| {
            unreadable().unwrap_or_else(|| anyhow::anyhow!("{} line {number}: {what}", path.display()))
        };
        let mut fields = text.split(|&b| b == b',');
        let mut next = |name: &str| -> anyhow::Result<u32> {
            fields
                .next()
                .and_then(parse_u32)
                .ok_or_else(|| bad(&format!("{name} is missing or not a number")))
        };
        let o = Overlap { doc_i: next("doc_i")?, doc_j: next("doc_j")?, shared: next("shared")? };
        let mut values = [0u32; 2];
        for (k, value) in values.iter_mut().take(columns.extra()).enumerate() {
            let name = if k == 0 && columns.jaccard { "jaccard" } else { "containment" };
            *value = fields
                .next()
                .and_then(parse_ratio)
                .ok_or_else(|| bad(&format!("{name} is missing or not a number from 0 to 1")))?;
        }
        if fields.next().is_some() {
            return Err(bad(&format!("expected {} columns", 3 + columns.extra())));
        }
        if let Some(what) = out_of_order(o, last) {
            return Err(bad(what));
        }
        last = Some((o.doc_i, o.doc_j));
        // A row as written that crossed the end of the reader's buffer.
        let written = plain_row(&line, columns.extra()).is_some_and(|(_, _, used)| used == line.len());
        f(o, measures(columns, values), written.then_some(line.as_slice()))
            .map_err(|e| super::row_error(e, path, number))?;
    }
    if number == 0 {
        bail!("{} is empty: expected the header {HEADER}", path.display());
    }
    Ok(())
}

/// What is wrong with the order of row `o` after the row `last`.
fn out_of_order(o: Overlap, last: Option<(u32, u32)>) -> Option<&'static str> {
    if o.doc_i >= o.doc_j {
        Some("doc_i is not smaller than doc_j")
    } else if last.is_some_and(|l| l >= (o.doc_i, o.doc_j)) {
        Some("rows are not sorted by (doc_i, doc_j)")
    } else {
        None
    }
}

/// The values of a row's similarity columns, `values` in column order.
fn measures(columns: Columns, values: [u32; 2]) -> Measures {
    let mut next = values.into_iter();
    Measures {
        jaccard: columns.jaccard.then(|| next.next().unwrap_or(0)),
        containment: columns.containment.then(|| next.next().unwrap_or(0)),
    }
}

/// The row at the start of `bytes`, its `extra` similarity values and its
/// length with its line feed, if it is as the writer writes it: three
/// numbers of digits only, without leading zeros, then `extra` values of
/// the form `d.dddddd`, separated by commas and ended by a line feed;
/// `None` for anything else, a row that does not end in `bytes` included.
fn plain_row(bytes: &[u8], extra: usize) -> Option<(Overlap, [u32; 2], usize)> {
    let mut i = 0;
    let mut number = |end: u8| -> Option<u32> {
        let first = i;
        let mut v = 0u32;
        while let Some(d) = bytes.get(i).map(|b| b.wrapping_sub(b'0')).filter(|&d| d <= 9) {
            v = v.checked_mul(10)?.checked_add(u32::from(d))?;
            i += 1;
        }
        let canonical = i == first + 1 || bytes.get(first) != Some(&b'0');
        (i > first && canonical && bytes.get(i) == Some(&end)).then(|| {
            i += 1;
            v
        })
    };
    let doc_i = number(b',')?;
    let doc_j = number(b',')?;
    let o = Overlap { doc_i, doc_j, shared: number(if extra == 0 { b'\n' } else { b',' })? };
    let mut values = [0u32; 2];
    for (k, value) in values.iter_mut().take(extra).enumerate() {
        let field = bytes.get(i..i + 9)?;
        let end = if k + 1 == extra { b'\n' } else { b',' };
        if field[8] != end {
            return None;
        }
        *value = parse_ratio(&field[..8]).filter(|_| field[1] == b'.')?;
        i += 9;
    }
    Some((o, values, i))
}

/// A value of a similarity column, from 0 to 1 with at most six decimals,
/// in millionths.
fn parse_ratio(field: &[u8]) -> Option<u32> {
    let (whole, frac) = match field.iter().position(|&b| b == b'.') {
        Some(dot) => (&field[..dot], &field[dot + 1..]),
        None => (field, &b""[..]),
    };
    if whole.is_empty() || frac.len() > 6 || !whole.iter().chain(frac).all(u8::is_ascii_digit) {
        return None;
    }
    let whole = parse_u32(whole).filter(|&w| w <= 1)?;
    let mut millionths = whole * 1_000_000;
    for (k, &b) in frac.iter().enumerate() {
        millionths += u32::from(b - b'0') * 10u32.pow(5 - k as u32);
    }
    (millionths <= 1_000_000).then_some(millionths)
}

/// A decimal `u32` as `str::parse` reads it: an optional `+`, then at
/// least one digit, no more than fits.
fn parse_u32(field: &[u8]) -> Option<u32> {
    let digits = field.strip_prefix(b"+").unwrap_or(field);
    if digits.is_empty() {
        return None;
    }
    let mut v = 0u32;
    for &b in digits {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u32::from(d))?;
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("overlap.csv");
        let rows =
            [Overlap { doc_i: 0, doc_j: 3, shared: 20 }, Overlap { doc_i: 1, doc_j: 2, shared: u32::MAX }];
        let mut w = OverlapWriter::create(&path, Columns::default()).unwrap();
        for r in rows {
            w.push(r).unwrap();
        }
        assert_eq!(w.finish().unwrap(), 2);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "doc_i,doc_j,shared\n0,3,20\n1,2,4294967295\n");
        let mut back = Vec::new();
        for_each_pair(&path, |o| {
            back.push(o);
            Ok(())
        })
        .unwrap();
        assert_eq!(back, rows);
        // What `str::parse` reads: a plus sign, leading zeros; line ends
        // with a carriage return, and none on the last line.
        std::fs::write(&path, "doc_i,doc_j,shared\r\n+0,003,20\r\n1,2,4294967295").unwrap();
        let mut again = Vec::new();
        for_each_pair(&path, |o| {
            again.push(o);
            Ok(())
        })
        .unwrap();
        assert_eq!(again, rows);
    }

    #[test]
    fn plain_rows_and_others_read_alike() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("overlap.csv");
        // Enough rows to cross the reader's buffer, plain or not.
        let mut text = String::from("doc_i,doc_j,shared\n");
        let mut rows = Vec::new();
        for k in 0..20_000u32 {
            let o = Overlap { doc_i: k, doc_j: k + 1 + k % 7, shared: k.wrapping_mul(2_654_435_761) };
            rows.push(o);
            text.push_str(&match k % 5 {
                0 => format!("+{},{},{}\r\n", o.doc_i, o.doc_j, o.shared),
                1 => format!("{},00{},{}\n", o.doc_i, o.doc_j, o.shared),
                _ => format!("{},{},{}\n", o.doc_i, o.doc_j, o.shared),
            });
        }
        text.pop();
        std::fs::write(&path, &text).unwrap();
        let mut back = Vec::new();
        for_each_pair(&path, |o| {
            back.push(o);
            Ok(())
        })
        .unwrap();
        assert_eq!(back, rows);
        assert_eq!(plain_row(b"1,2,3\n", 0), Some((Overlap { doc_i: 1, doc_j: 2, shared: 3 }, [0, 0], 6)));
        assert_eq!(plain_row(b"0,10,3\n", 0), Some((Overlap { doc_i: 0, doc_j: 10, shared: 3 }, [0, 0], 7)));
        for other in [
            &b"1,2,3"[..],
            b"1,2,3\r\n",
            b"1,,3\n",
            b"1,2,4294967296\n",
            b"+1,2,3\n",
            b"1,2,3,4\n",
            b"01,2,3\n",
            b"1,2,00\n",
        ] {
            assert_eq!(plain_row(other, 0), None, "{:?}", String::from_utf8_lossy(other));
        }
    }

    #[test]
    fn rows_as_written_come_with_their_lines_and_copy_alike() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("overlap.csv");
        let mut text = String::from("doc_i,doc_j,shared\n");
        let mut written = text.clone();
        for k in 0..20_000u32 {
            written.push_str(&format!("{},{},{}\n", k, k + 1, k % 9));
            text.push_str(&match k % 4 {
                0 => format!("{},0{},{}\n", k, k + 1, k % 9),
                1 => format!("{},{},{}\r\n", k, k + 1, k % 9),
                _ => format!("{},{},{}\n", k, k + 1, k % 9),
            });
        }
        std::fs::write(&path, &text).unwrap();
        let copy = dir.path().join("copy.csv");
        let mut w = OverlapWriter::create(&copy, Columns::default()).unwrap();
        let mut lines = 0;
        for_each_row(&path, |o, line| {
            assert_eq!(line.is_some(), o.doc_i % 4 >= 2, "{o:?}");
            match line {
                Some(line) => {
                    assert_eq!(line, format!("{},{},{}\n", o.doc_i, o.doc_j, o.shared).as_bytes());
                    lines += 1;
                    w.push_line(line)
                }
                None => w.push(o),
            }
        })
        .unwrap();
        assert_eq!(w.finish().unwrap(), 20_000);
        assert_eq!(lines, 10_000);
        assert!(std::fs::read_to_string(&copy).unwrap() == written);
    }

    #[test]
    fn measured_rows_read_back_with_their_columns() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("overlap.csv");
        let o = Overlap { doc_i: 0, doc_j: 1, shared: 8 };
        for (columns, m) in [
            (
                Columns { jaccard: true, containment: false },
                Measures { jaccard: Some(800_000), containment: None },
            ),
            (
                Columns { jaccard: true, containment: true },
                Measures { jaccard: Some(666_667), containment: Some(1_000_000) },
            ),
            (Columns::default(), Measures::default()),
        ] {
            let mut w = OverlapWriter::create(&path, columns).unwrap();
            w.push_measured(o, m).unwrap();
            w.finish().unwrap();
            let mut back = Vec::new();
            for_each_measured(&path, |o, m| {
                back.push((o, m));
                Ok(())
            })
            .unwrap();
            assert_eq!(back, [(o, m)], "{columns:?}");
        }
    }

    #[test]
    fn malformed_rows_name_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("overlap.csv");
        for (text, want) in [
            ("doc_i,doc_j,shared\n0,1,5\n1,0,5\n", "line 3: doc_i is not smaller"),
            ("doc_i,doc_j,shared\n0,1,5\n1,1,5\r\n", "line 3: doc_i is not smaller"),
            ("doc_i,doc_j,shared\n0,2,5\n0,2,5\n", "line 3: rows are not sorted"),
            ("doc_i,doc_j,shared\n0,x,5\n", "line 2: doc_j"),
            ("doc_i,doc_j,shared\n0,2,5\n0,1,5\n", "line 3: rows are not sorted"),
            ("doc_i,doc_j,shared\n0,1,5,6\n", "line 2: expected 3 columns"),
            ("doc_i,doc_j,shared\n0,1,4294967296\n", "line 2: shared"),
            ("doc_i,doc_j,shared\n0,1,-5\n", "line 2: shared"),
            ("doc_i,doc_j,shared\n0,,5\n", "line 2: doc_j"),
            ("doc_i,doc_j,shared\n\n", "line 2: doc_i"),
            ("doc_i,doc_j,shared\n0,1\n", "line 2: shared"),
            ("doc_i,doc_j\n", "line 1: expected the header"),
            ("", "is empty"),
        ] {
            std::fs::write(&path, text).unwrap();
            let e = format!("{:#}", for_each_pair(&path, |_| Ok(())).unwrap_err());
            assert!(e.contains(want) && e.contains("overlap.csv"), "{text:?}: {e}");
        }
        std::fs::write(&path, b"doc_i,doc_j,shared\n0,\xff,5\n").unwrap();
        let e = format!("{:#}", for_each_pair(&path, |_| Ok(())).unwrap_err());
        assert!(e.contains("cannot read") && e.contains("line 2") && e.contains("valid UTF-8"), "{e}");
        std::fs::write(&path, "doc_i,doc_j,shared\n0,1,5\n").unwrap();
        let e = format!("{:#}", for_each_pair(&path, |_| bail!("not a center")).unwrap_err());
        assert!(e.contains("overlap.csv line 2: not a center"), "{e}");
    }
}
