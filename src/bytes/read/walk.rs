//! A directory given as an input: the crawl files under it, in name order.
//!
//! docIDs follow input order, so the order must not depend on the file
//! system: entries are sorted by name (bytes) at every level and the tree
//! is walked depth first, the order `ls -R` and ripgrep's `--sort path`
//! give, and the one a shell glob gives for one level. A crawl file is
//! one whose name says its format ([`super::by_extension`]: `.warc`,
//! `.wet`, `.arc`, `.jsonl`, `.ndjson`, `.pagefeed`, each alone or with
//! `.gz` or `.zst`); other files are left out and counted, hidden entries
//! (a name starting with `.`, such as an analysis's `.overlap/`) and
//! symbolic links to directories are not entered (a link may loop), and
//! a directory that holds no crawl file is an error: a run over it would
//! analyse nothing.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

/// The crawl files under `dir`, and what was left out.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Walked {
    pub files: Vec<PathBuf>,
    /// Files under `dir` whose names say no crawl format ...
    pub left_out: u64,
    /// ... the first of them in walking order.
    pub first_left_out: Option<PathBuf>,
}

impl Walked {
    /// One line for the user: how many crawl files are read, in what
    /// order, and what was left out.
    pub(crate) fn note(&self, dir: &Path) -> String {
        let mut s = format!(
            "{}: reading its {} in name order",
            dir.display(),
            crate::base::progress::count(self.files.len() as u64, "crawl file", "crawl files")
        );
        if let Some(first) = &self.first_left_out {
            s.push_str(&format!(
                " ({} no crawl format left out, such as {}: give such files by name, with --input-format)",
                crate::base::progress::count(
                    self.left_out,
                    "other file whose name says",
                    "other files whose names say"
                ),
                first.display()
            ));
        }
        s
    }
}

/// Walks `dir` (see the module's rules).
pub(crate) fn crawl_files(dir: &Path) -> anyhow::Result<Walked> {
    let mut walked = Walked::default();
    visit(dir, &mut walked)?;
    if walked.files.is_empty() {
        bail!(
            "{} holds no crawl files (names ending in .warc, .wet, .arc, .jsonl, .ndjson or .pagefeed, each \
             alone or with .gz or .zst){}",
            dir.display(),
            match &walked.first_left_out {
                Some(first) =>
                    format!(": give its files by name, with --input-format (such as {})", first.display()),
                None => String::new(),
            }
        );
    }
    Ok(walked)
}

fn visit(dir: &Path, walked: &mut Walked) -> anyhow::Result<()> {
    let what = || format!("cannot read directory {}", dir.display());
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(what)? {
        let entry = entry.with_context(what)?;
        if entry.file_name().as_encoded_bytes().starts_with(b".") {
            continue;
        }
        entries.push(entry);
    }
    entries.sort_by(|a, b| a.file_name().as_encoded_bytes().cmp(b.file_name().as_encoded_bytes()));
    for entry in entries {
        let path = entry.path();
        let kind = entry.file_type().with_context(what)?;
        if kind.is_dir() {
            visit(&path, walked)?;
        } else if kind.is_symlink() && path.is_dir() {
            // Not entered: a link may lead back up the tree.
        } else if super::by_extension(&path).is_some() {
            walked.files.push(path);
        } else {
            walked.left_out += 1;
            walked.first_left_out.get_or_insert(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crawl_files_in_name_order_depth_first_the_rest_counted() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        for f in [
            "b.warc.gz",
            "a/2.jsonl",
            "a/10.jsonl",
            "a/z/x.arc",
            "c.WET.GZ",
            "README.txt",
            "a/notes.md",
            ".overlap/x.warc",
            ".hidden.warc",
        ] {
            let p = d.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, b"x").unwrap();
        }
        std::os::unix::fs::symlink(d.join("a"), d.join("loop")).unwrap();
        let w = crawl_files(d).unwrap();
        let names: Vec<String> =
            w.files.iter().map(|p| p.strip_prefix(d).unwrap().to_string_lossy().into_owned()).collect();
        // Bytes order: "10" before "2", upper case before lower.
        assert_eq!(names, ["a/10.jsonl", "a/2.jsonl", "a/z/x.arc", "b.warc.gz", "c.WET.GZ"]);
        assert_eq!(w.left_out, 2);
        assert_eq!(w.first_left_out.as_deref(), Some(d.join("README.txt").as_path()));
        let note = w.note(d);
        assert!(note.contains("reading its 5 crawl files in name order (2 other files"), "{note}");

        let empty = tmp.path().join("a/z/empty");
        std::fs::create_dir(&empty).unwrap();
        let err = crawl_files(&empty).unwrap_err().to_string();
        assert!(err.contains("holds no crawl files"), "{err}");
        let err = crawl_files(&d.join(".overlap")).map(|w| w.files.len());
        assert_eq!(err.ok(), Some(1), "a hidden directory given by name is walked");
    }
}
