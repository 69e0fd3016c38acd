//! Where `dedup` writes, and what: the destination (a file written under a
//! temporary name and renamed when complete, or standard output) and the
//! bytes of each kept document in each format.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use flate2::Compression;
use flate2::write::GzEncoder;
use serde::Serialize;

use crate::store::{CannotWrite, Manifest, OutDir, commit, remove_file_if_exists, temp_path};

/// Where the kept documents go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Destination {
    File(PathBuf),
    /// `-o -`.
    Stdout,
}

impl Destination {
    /// Checks a file destination before anything is read: its directory
    /// exists, and it is neither in the analysis (which dedup only reads,
    /// and whose own commands remove `*.partial` files they find there)
    /// nor one of the inputs (which it would replace).
    pub(crate) fn check(&self, out: &OutDir, manifest: &Manifest) -> anyhow::Result<()> {
        let Destination::File(path) = self else { return Ok(()) };
        let Some(name) = path.file_name() else { bail!("--out {} is not a file name", path.display()) };
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let dir = fs::canonicalize(parent)
            .with_context(|| format!("cannot write {}: no directory {}", path.display(), parent.display()))?;
        let analysis = fs::canonicalize(out.root())
            .with_context(|| format!("cannot read directory {}", out.root().display()))?;
        if dir.starts_with(&analysis) {
            bail!(
                "--out {} is inside the analysis {}, which dedup only reads: write it elsewhere",
                path.display(),
                out.root().display()
            );
        }
        let target = dir.join(name);
        if target.is_dir() {
            bail!("--out {} is a directory, not a file", path.display());
        }
        let target = target.to_string_lossy();
        if let Some(input) = manifest.sources().find(|i| i.canonical.as_deref() == Some(&*target)) {
            bail!("--out {} is the input {}: dedup would replace it", path.display(), input.path);
        }
        Ok(())
    }

    /// Starts writing: the file under its temporary name, or standard
    /// output.
    pub(crate) fn open(&self) -> anyhow::Result<Sink> {
        let (writer, path): (Box<dyn Write>, _) = match self {
            Destination::Stdout => (Box::new(io::stdout().lock()), None),
            Destination::File(path) => {
                crate::base::interrupt::check()?;
                let tmp = temp_path(path);
                let file = File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
                (Box::new(file), Some(path.clone()))
            }
        };
        Ok(Sink { writer: BufWriter::with_capacity(1 << 16, writer), path, bytes: 0, done: false })
    }
}

/// The output being written. Dropped before [`Sink::finish`] (the command
/// failed), it removes its temporary file: no partial output is left
/// under a name that looks complete, nor under the temporary one.
pub(crate) struct Sink {
    writer: BufWriter<Box<dyn Write>>,
    /// The file's final name; `None` for standard output.
    path: Option<PathBuf>,
    bytes: u64,
    done: bool,
}

impl Sink {
    pub(crate) fn write(&mut self, bytes: &[u8]) -> anyhow::Result<()> {
        crate::base::interrupt::check()?;
        self.writer.write_all(bytes).with_context(|| self.error())?;
        self.bytes += bytes.len() as u64;
        Ok(())
    }

    /// Flushes, and renames the file into place. Returns the bytes written.
    pub(crate) fn finish(mut self) -> anyhow::Result<u64> {
        self.writer.flush().with_context(|| self.error())?;
        if let Some(path) = &self.path {
            commit(path)?;
        }
        self.done = true;
        Ok(self.bytes)
    }

    /// A failed write's context: of its own type, so that a write failing
    /// while docs.csv's rows are read is not blamed on a row.
    fn error(&self) -> CannotWrite {
        CannotWrite(self.path.as_deref().map_or_else(|| PathBuf::from("standard output"), temp_path))
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        if let (Some(path), false) = (&self.path, self.done) {
            let _ = remove_file_if_exists(&temp_path(path));
        }
    }
}

/// One line of `urls`: the URL as recorded, with a line feed or carriage
/// return in it (a JSONL url field may hold one) percent-encoded, as a
/// browser sends it, so that a URL stays one line.
pub(crate) fn url_line(url: &str) -> Vec<u8> {
    let mut line = Vec::with_capacity(url.len() + 1);
    for &b in url.as_bytes() {
        match b {
            b'\n' => line.extend_from_slice(b"%0A"),
            b'\r' => line.extend_from_slice(b"%0D"),
            b => line.push(b),
        }
    }
    line.push(b'\n');
    line
}

/// One line of `jsonl`, its keys in this order.
#[derive(Serialize)]
struct JsonLine<'a> {
    doc_id: u32,
    url: &'a str,
    source: &'a str,
    /// `None` (null) for a document whose record holds no page of its own.
    text: Option<&'a str>,
}

pub(crate) fn json_line(doc_id: u32, url: &str, source: &str, text: Option<&str>) -> Vec<u8> {
    let mut line = serde_json::to_vec(&JsonLine { doc_id, url, source, text })
        .expect("a JSON object of strings and a number always encodes");
    line.push(b'\n');
    line
}

/// One record of `warc`: the record's header and block as they are in the
/// input, the CRLF CRLF that ends a record in the standard, in a gzip
/// member of its own, as the standard recommends and archives index
/// (each record's member offset in a CDX). The member's header has no
/// name and no time, so the same records give the same bytes.
pub(crate) fn warc_member(record: &[u8]) -> Vec<u8> {
    let mut gz = GzEncoder::new(Vec::with_capacity(record.len() / 3 + 64), Compression::default());
    gz.write_all(record).and_then(|()| gz.write_all(b"\r\n\r\n")).expect("writing to memory does not fail");
    gz.finish().expect("writing to memory does not fail")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn lines_and_members() {
        assert_eq!(url_line("http://a/x\ny"), b"http://a/x%0Ay\n");
        let line = json_line(7, "http://a/", "in.warc:0", Some("a \"b\"\nc"));
        assert_eq!(
            std::str::from_utf8(&line).unwrap(),
            "{\"doc_id\":7,\"url\":\"http://a/\",\"source\":\"in.warc:0\",\"text\":\"a \\\"b\\\"\\nc\"}\n"
        );
        assert!(json_line(1, "", "-:0", None).ends_with(b"\"text\":null}\n"));
        let member = warc_member(b"WARC/1.1\r\n\r\n");
        assert_eq!(member, warc_member(b"WARC/1.1\r\n\r\n"), "the same bytes every time");
        let mut back = Vec::new();
        flate2::read::GzDecoder::new(&member[..]).read_to_end(&mut back).unwrap();
        assert_eq!(back, b"WARC/1.1\r\n\r\n\r\n\r\n");
    }

    #[test]
    fn a_sink_dropped_unfinished_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kept.jsonl");
        let mut sink = Destination::File(path.clone()).open().unwrap();
        sink.write(b"x\n").unwrap();
        assert!(!path.exists() && temp_path(&path).exists());
        drop(sink);
        assert!(!temp_path(&path).exists());
        let mut sink = Destination::File(path.clone()).open().unwrap();
        sink.write(b"x\n").unwrap();
        assert_eq!(sink.finish().unwrap(), 2);
        assert_eq!(fs::read(&path).unwrap(), b"x\n");
    }
}
