//! The one way a CSV table is written: under its temporary name, renamed
//! into place when complete, so a killed run never leaves a
//! complete-looking partial table. Errors name the file being written.
//!
//! Rows are written as the `csv` crate writes them with its defaults
//! (comma, `\n` after each row, a field quoted only when it holds a comma,
//! a quote, CR or LF, quotes inside doubled, a row of one empty field
//! written `""`, every row as many fields as the first), which the tests
//! check against the crate field by field; but straight into a buffer of
//! our own. The crate's writer moves each field through a state machine
//! meant for output buffers of any size: on 2.1 million generated pages it
//! took 11% of the exact stage's CPU time and 17% of the report's, whose
//! tables are mostly short fields that need no quotes.

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};

use super::write_behind::WriteBehind;
use super::{CannotWrite, commit, temp_path};
use crate::bytes::scan::swar;

/// A CSV table being written, from a thread of its own once it passes a
/// buffer's size ([`WriteBehind`]): docs.csv and flags.csv are gigabytes.
pub(crate) struct CsvOut {
    path: PathBuf,
    out: WriteBehind,
    /// The first row's field count, which every row must have.
    fields: Option<usize>,
}

impl CsvOut {
    /// Starts `path` (under its temporary name) with its header row.
    pub(crate) fn create(path: &Path, header: &[&str]) -> anyhow::Result<CsvOut> {
        crate::base::interrupt::check()?;
        let tmp = temp_path(path);
        let file = File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
        let mut out = CsvOut { path: path.to_path_buf(), out: WriteBehind::new(file), fields: None };
        out.row(header)?;
        Ok(out)
    }

    pub(crate) fn row<T: AsRef<[u8]>>(&mut self, fields: impl IntoIterator<Item = T>) -> anyhow::Result<()> {
        let buf = self.out.buf();
        let start = buf.len();
        let mut count = 0usize;
        for field in fields {
            if count > 0 {
                buf.push(b',');
            }
            push_field(buf, field.as_ref());
            count += 1;
        }
        if buf.len() == start {
            // No byte at all (one empty field): quoted, or the row would
            // read back as no row.
            buf.extend_from_slice(b"\"\"");
        }
        buf.push(b'\n');
        if let Err(e) = self.count_fields(count) {
            self.out.buf().truncate(start);
            return Err(e);
        }
        self.flush_if_full()
    }

    /// Appends a row of `fields` fields given as `pieces` of CSV text,
    /// already quoted as [`CsvOut::row`] would quote their fields (copied
    /// from a table this module wrote), and its `\n`.
    pub(crate) fn row_verbatim(&mut self, pieces: &[&[u8]], fields: usize) -> anyhow::Result<()> {
        self.count_fields(fields)?;
        let buf = self.out.buf();
        for piece in pieces {
            buf.extend_from_slice(piece);
        }
        buf.push(b'\n');
        self.flush_if_full()
    }

    /// Takes a row of `count` fields: the first row sets how many every
    /// row has.
    fn count_fields(&mut self, count: usize) -> anyhow::Result<()> {
        match self.fields {
            None => self.fields = Some(count),
            Some(first) if first != count => {
                return Err(anyhow!("a row of {count} fields after rows of {first}"))
                    .context(self.write_error());
            }
            Some(_) => {}
        }
        Ok(())
    }

    /// Hands the rows gathered to the writer once they fill its buffer.
    #[inline]
    fn flush_if_full(&mut self) -> anyhow::Result<()> {
        self.out.hand_off_if_full().with_context(|| self.write_error())
    }

    /// Writes the rest of the table and renames it into place.
    pub(crate) fn finish(self) -> anyhow::Result<()> {
        let err = self.write_error();
        let file = self.out.finish().context(err)?;
        drop(file);
        commit(&self.path)
    }

    fn write_error(&self) -> CannotWrite {
        CannotWrite(temp_path(&self.path))
    }
}

/// Appends one field, quoted when it must be.
fn push_field(buf: &mut Vec<u8>, field: &[u8]) {
    if !needs_quotes(field) {
        buf.extend_from_slice(field);
        return;
    }
    buf.push(b'"');
    let mut rest = field;
    while let Some(at) = memchr::memchr(b'"', rest) {
        buf.extend_from_slice(&rest[..=at]);
        buf.push(b'"');
        rest = &rest[at + 1..];
    }
    buf.extend_from_slice(rest);
    buf.push(b'"');
}

/// Whether `field` holds a comma, a quote, CR or LF. Eight bytes at a
/// time: all four are below `-` (0x2D), which few bytes of a URL, a
/// number or a name are, so a word is first tested for any byte below it
/// and only then for the four.
fn needs_quotes(field: &[u8]) -> bool {
    let mut words = field.chunks_exact(8);
    for word in &mut words {
        let x = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        // The bytes below 0x2D flagged, the first exactly and a later one
        // maybe above it (a borrow): a test to rule words out, not in.
        if x.wrapping_sub(swar::ONES * 0x2d) & !x & swar::HIGH != 0 && word.iter().copied().any(special) {
            return true;
        }
    }
    words.remainder().iter().copied().any(special)
}

fn special(b: u8) -> bool {
    matches!(b, b',' | b'"' | b'\r' | b'\n')
}

/// Writes a whole table of rows, any of which can fail (rows read from
/// another file while they are written).
pub(crate) fn write_rows<R, S>(
    path: &Path,
    header: &[&str],
    rows: impl IntoIterator<Item = anyhow::Result<R>>,
) -> anyhow::Result<()>
where
    R: IntoIterator<Item = S>,
    S: AsRef<[u8]>,
{
    let mut out = CsvOut::create(path, header)?;
    for row in rows {
        out.row(row?)?;
    }
    out.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_table_appears_only_when_finished_and_quotes_as_csv() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        let mut out = CsvOut::create(&path, &["a", "b"]).unwrap();
        out.row(["1", "x,y"]).unwrap();
        assert!(!path.exists() && temp_path(&path).exists());
        out.finish().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a,b\n1,\"x,y\"\n");
        assert!(!temp_path(&path).exists());
    }

    #[test]
    fn a_failing_row_leaves_no_table() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        let rows = vec![Ok(vec!["1"]), Err(anyhow::anyhow!("bad input"))];
        assert!(write_rows(&path, &["a"], rows).is_err());
        assert!(!path.exists());
    }

    /// The `csv` crate's writer with its defaults: what every table was
    /// written with before, and what readers of CSV expect.
    fn crate_csv(rows: &[Vec<String>]) -> Result<String, String> {
        let mut w = csv::Writer::from_writer(Vec::new());
        for row in rows {
            w.write_record(row).map_err(|e| e.to_string())?;
        }
        Ok(String::from_utf8(w.into_inner().map_err(|e| e.to_string())?).unwrap())
    }

    fn ours(rows: &[Vec<String>]) -> Result<String, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        let (header, rest) = rows.split_first().expect("a header");
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let mut out = CsvOut::create(&path, &header).map_err(|e| e.to_string())?;
        for row in rest {
            out.row(row).map_err(|e| e.to_string())?;
        }
        out.finish().map_err(|e| e.to_string())?;
        Ok(std::fs::read_to_string(&path).unwrap())
    }

    #[test]
    fn edge_rows_are_written_as_the_crate_writes_them() {
        let rows = |rows: &[&[&str]]| -> Vec<Vec<String>> {
            rows.iter().map(|r| r.iter().map(|f| f.to_string()).collect()).collect()
        };
        for table in [
            rows(&[&[""], &[""], &["a"]]),
            rows(&[&["", ""], &["", ""]]),
            rows(&[&["x\"y", "a,b", "c\rd", "e\nf", "\"", "\"\"", " sp "]]),
            rows(&[&["long field without anything to quote in it at all", "0123456789abcdef,"]]),
            // Past the buffer's size, a row at a time.
            (0..5000).map(|i| vec![i.to_string(), format!("https://example.com/{i},\"x\"")]).collect(),
        ] {
            assert_eq!(ours(&table), crate_csv(&table), "{table:?}");
        }
        // Rows of unequal length are an error, as with the crate.
        let uneven = rows(&[&["a", "b"], &["c"]]);
        assert!(ours(&uneven).is_err() && crate_csv(&uneven).is_err());
    }

    proptest! {
        /// Any fields of any bytes the tables hold (here from a small
        /// alphabet rich in the bytes that matter), at any length across
        /// the eight-byte words and the buffer's end: the same bytes as
        /// the crate.
        #[test]
        fn rows_are_written_as_the_crate_writes_them(
            width in 1usize..5,
            cells in proptest::collection::vec("[a,\"\r\n é/:0-9]{0,40}", 1..200),
        ) {
            let rows: Vec<Vec<String>> = cells.chunks(width).filter(|c| c.len() == width).map(<[String]>::to_vec).collect();
            prop_assume!(!rows.is_empty());
            prop_assert_eq!(ours(&rows), crate_csv(&rows));
        }
    }
}
