//! The output directory's lock: one command at a time writes into a
//! directory.
//!
//! `.overlap/lock` holds the process id of the command that has it, under
//! an advisory lock of the operating system (`flock`), so the lock goes
//! with the process however it ends, even killed; the file itself stays
//! and only says who had it last. A second command on the directory fails
//! at once, naming the holder, instead of waiting: the first may run for
//! hours, and a scheduler is better told than stalled.
//!
//! Holding the lock is also what makes leftovers safe to remove: a `.partial`
//! file or a `.overlap/tmp-*` scratch directory found under the lock was
//! left by a run that no longer lives.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};

use anyhow::{Context, bail};

use super::{CannotWrite, OutDir, remove_dir_if_exists, remove_file_if_exists};

/// The held lock of an output directory; released when dropped.
pub(crate) struct OutLock {
    _file: File,
    out: OutDir,
    /// Whether this command made the directory.
    created: bool,
    /// Whether the analysis there was of an earlier layout, moved to this
    /// overlap's when the lock was taken ([`super::layout`]).
    migrated: bool,
}

impl OutDir {
    /// Takes the directory's lock, creating the directory if needed, moves
    /// an analysis of an earlier layout to this overlap's, and removes what
    /// killed runs left behind. Fails when another process holds it.
    pub(crate) fn lock(&self) -> anyhow::Result<OutLock> {
        let created = !self.root.exists();
        for dir in [self.root.clone(), self.private()] {
            fs::create_dir_all(&dir).with_context(|| format!("cannot create directory {}", dir.display()))?;
        }
        let path = self.private().join("lock");
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                bail!("{} is in use by another overlap command ({})", self.root.display(), holder(&mut file));
            }
            Err(TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("cannot lock {}", path.display()));
            }
        }
        file.set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| writeln!(file, "{}", std::process::id()))
            .with_context(|| CannotWrite(path.clone()))?;
        let migrated = super::layout::migrate(self)?;
        self.remove_leftovers()?;
        Ok(OutLock { _file: file, out: self.clone(), created, migrated })
    }

    /// Removes temporary files (`*.partial`) and scratch directories
    /// (`.overlap/tmp-*`): under the lock, no live run is writing them. At
    /// the top of the directory, only the temporary names of the tool's
    /// own files ([`super::ROOT_FILES`]) are removed.
    fn remove_leftovers(&self) -> anyhow::Result<()> {
        for dir in [self.root.clone(), self.records(), self.fprint_dir(), self.parquet_dir(), self.private()]
        {
            let ours = |name: &str| {
                dir != self.root
                    || name.strip_suffix(".partial").is_some_and(|n| super::ROOT_FILES.contains(&n))
            };
            let entries = match fs::read_dir(&dir) {
                Ok(entries) => entries,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e).with_context(|| format!("cannot read directory {}", dir.display())),
            };
            for entry in entries {
                let entry = entry.with_context(|| format!("cannot read directory {}", dir.display()))?;
                let name = entry.file_name();
                let name = name.to_string_lossy();
                if name.ends_with(".partial") && ours(&name) {
                    remove_file_if_exists(&entry.path())?;
                } else if dir == self.private() && name.starts_with("tmp-") {
                    remove_dir_if_exists(&entry.path())?;
                }
            }
        }
        Ok(())
    }

    /// The command writing this directory now, when another holds its
    /// lock (`process N`): a reader that finds a stage unfinished says so,
    /// rather than that the analysis is incomplete. This process's own
    /// lock (a stage reading what it is about to write) is no other writer.
    pub(crate) fn writer(&self) -> Option<String> {
        let mut file = File::open(self.private().join("lock")).ok()?;
        match file.try_lock_shared() {
            Ok(()) => {
                let _ = file.unlock();
                None
            }
            Err(TryLockError::WouldBlock) => {
                let holder = holder(&mut file);
                (holder != format!("process {}", std::process::id())).then_some(holder)
            }
            Err(TryLockError::Error(_)) => None,
        }
    }

    /// The error for an analysis found unfinished: `message`, or, when
    /// another command is writing the directory now, that it is in use.
    pub(crate) fn unfinished(&self, message: String) -> anyhow::Error {
        match self.writer() {
            Some(holder) => anyhow::anyhow!(
                "{} is in use: another overlap command ({holder}) is writing it; run this again when it finishes",
                self.root.display()
            ),
            None => anyhow::anyhow!(message),
        }
    }

    /// Whether any stage has stamped its outputs here.
    fn has_stamps(&self) -> bool {
        fs::read_dir(self.private()).is_ok_and(|entries| {
            entries.flatten().any(|e| e.file_name().to_string_lossy().ends_with(".stamp"))
        })
    }
}

/// Who holds the lock, from the process id its holder wrote.
fn holder(file: &mut File) -> String {
    let mut pid = String::new();
    let _ = file.read_to_string(&mut pid);
    match pid.trim() {
        "" => "another process".to_string(),
        pid => format!("process {pid}"),
    }
}

impl OutLock {
    /// Whether taking the lock moved an analysis of an earlier layout.
    pub(crate) fn migrated(&self) -> bool {
        self.migrated
    }

    /// After a failed command: removes the temporary files and scratch it
    /// left, and the directory itself when this command made it and no
    /// stage finished in it. Complete outputs of earlier stages stay.
    /// Best effort: the command's own error is the one to report.
    pub(crate) fn failed(self) {
        if self.created && !self.out.has_stamps() {
            let _ = remove_dir_if_exists(self.out.root());
        } else {
            let _ = self.out.remove_leftovers();
        }
    }
}
