//! Where a command's output goes outside the analysis: a file written
//! under a temporary name and renamed when complete (so a failed run
//! leaves nothing under a name that looks complete), standard output, or
//! a directory of such files (`dedup --format warc-revisits`, `expand`).

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use crate::store::{CannotWrite, Manifest, OutDir, commit, remove_file_if_exists, temp_path};

/// Where the kept documents go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Destination {
    File(PathBuf),
    /// `-o -`.
    Stdout,
    /// A directory, made when missing: `--format warc-revisits` writes
    /// files there (each under a temporary name until complete).
    Dir(PathBuf),
}

impl Destination {
    /// Checks a file destination before anything is read: its directory
    /// exists, and it is neither in the analysis (which dedup only reads,
    /// and whose own commands remove `*.partial` files they find there)
    /// nor one of the inputs (which it would replace).
    pub(crate) fn check(&self, out: &OutDir, manifest: &Manifest) -> anyhow::Result<()> {
        let path = match self {
            Destination::Stdout => return Ok(()),
            Destination::Dir(dir) => return check_dir(dir, out),
            Destination::File(path) => path,
        };
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
            Destination::Dir(dir) => bail!("-o {} is a directory, not a file", dir.display()),
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

/// Checks a directory destination: not a file, and not inside the
/// analysis. (That it holds no input is checked against each input.)
fn check_dir(dir: &Path, out: &OutDir) -> anyhow::Result<()> {
    if dir.exists() && !dir.is_dir() {
        bail!("-o {} is a file: --format warc-revisits writes a directory", dir.display());
    }
    // The nearest directory that exists, where it will be made.
    let mut existing = dir;
    while !existing.exists() {
        match existing.parent() {
            Some(p) if !p.as_os_str().is_empty() => existing = p,
            _ => {
                existing = Path::new(".");
                break;
            }
        }
    }
    let existing = fs::canonicalize(existing).with_context(|| format!("cannot write {}", dir.display()))?;
    let analysis = fs::canonicalize(out.root())
        .with_context(|| format!("cannot read directory {}", out.root().display()))?;
    if existing.starts_with(&analysis) {
        bail!(
            "-o {} is inside the analysis {}, which dedup only reads: write it elsewhere",
            dir.display(),
            out.root().display()
        );
    }
    Ok(())
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
    /// Bytes written so far.
    pub(crate) fn written(&self) -> u64 {
        self.bytes
    }

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

/// A sink is also an `io::Write`, for a writer that streams records into
/// it (bytes counted, an interrupt checked, as [`Sink::write`]).
impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Sink::write(self, buf).map_err(io::Error::other)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sink_dropped_unfinished_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kept.jsonl");
        let mut sink = Destination::File(path.clone()).open().unwrap();
        Sink::write(&mut sink, b"x\n").unwrap();
        assert!(!path.exists() && temp_path(&path).exists());
        drop(sink);
        assert!(!temp_path(&path).exists());
        let mut sink = Destination::File(path.clone()).open().unwrap();
        Sink::write(&mut sink, b"x\n").unwrap();
        assert_eq!(sink.finish().unwrap(), 2);
        assert_eq!(fs::read(&path).unwrap(), b"x\n");
    }
}
