//! The integrity of an analysis's record files: each one's size and
//! checksum, recorded in `manifest.json` when the stage that writes it
//! finishes, and checked where it is read.
//!
//! `manifest.json`'s `record_files` maps every record file (`.fpd`) of the
//! analysis, by its path under the output directory, to the stage that
//! wrote it, its length in bytes and the XXH3-64 of its bytes, header
//! included (16 hex digits, what `xxhsum -H3` prints). The partitions of
//! `fprint-docid/` are listed one by one, so that a partition missing, or
//! one more than the analysis wrote, is found too.
//!
//! Reading: [`Manifest::read`] makes the record files of the analysis it
//! reads known to this process ([`expect`]); a record file known so is
//! checked against its length when it is opened, and against its checksum
//! the first time this process reads it whole (mapped: before its first
//! record is read; streamed: before its first record is handed out), so a
//! damaged file stops a command before it writes anything from it. A file
//! a stage writes anew is forgotten when it is renamed into place
//! ([`forget`], from [`super::commit`]), and known again, with its new
//! checksum, when its stage finishes ([`record`]).
//!
//! An analysis written before checksums were recorded has no
//! `record_files`: its files are read without that check (the bound checks
//! on what they hold still apply), so that archived analyses stay readable;
//! running a stage again records its files.
//!
//! [`Manifest::read`]: super::Manifest::read

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use anyhow::{Context, bail};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{Center, Mapped, OutDir};

/// One record file as its stage wrote it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RecordFile {
    /// The stage that writes it (`fingerprint`, `exact`, `report`): the
    /// command that writes it anew.
    pub stage: String,
    pub bytes: u64,
    /// XXH3-64 of the whole file, 16 hex digits.
    pub xxh3: String,
}

/// Record files by their path under the output directory (`/` between
/// folders).
pub(crate) type RecordFiles = BTreeMap<String, RecordFile>;

/// The XXH3-64 of a file's bytes and its length.
pub(crate) fn sum_file(path: &Path) -> anyhow::Result<(u64, u64)> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let len = file.metadata().with_context(|| format!("cannot read {}", path.display()))?.len();
    if len == 0 {
        return Ok((0, xxhash_rust::xxh3::xxh3_64(&[])));
    }
    // SAFETY: as for `Mapped::open`: files of the output directory are
    // written under a temporary name and renamed into place, never
    // modified in place while mapped.
    let map =
        unsafe { memmap2::Mmap::map(&file) }.with_context(|| format!("cannot map {}", path.display()))?;
    Ok((len, sum_mapped(&map)))
}

/// The XXH3-64 of a mapped file's bytes, hashed a window at a time
/// ([`crate::base::memory::scan_window`]) with the pages of each let go of once
/// hashed. Hashed whole, a file stayed resident whole, and every stage's
/// peak grew with the crawl: at `--memory 32M` on a generated crawl of
/// 3.4 GB, two partitions of 12 and 14 MiB being summed side by side took
/// the fingerprint stage to 41.2 MiB. The pages stay in the page cache,
/// so a pass that reads the file next finds them there.
pub(crate) fn sum_mapped(map: &memmap2::Mmap) -> u64 {
    sum_mapped_by(map, crate::base::memory::scan_window())
}

/// [`sum_mapped`] a window of about `window` bytes at a time.
fn sum_mapped_by(map: &memmap2::Mmap, window: usize) -> u64 {
    const PAGE: usize = 4096;
    let window = (window / PAGE).max(1) * PAGE;
    if map.len() <= window {
        return xxhash_rust::xxh3::xxh3_64(map);
    }
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    for (i, bytes) in map.chunks(window).enumerate() {
        hasher.update(bytes);
        super::file::let_go(map, i * window, i * window + bytes.len());
    }
    hasher.digest()
}

fn hex(sum: u64) -> String {
    format!("{sum:016x}")
}

/// The advice after a damaged file: how to write it anew.
fn rewrite(stage: &str) -> String {
    format!("remove it and run `overlap {stage}` or `overlap run` again to write it anew")
}

/// The start of every message about a damaged analysis: the output
/// directory as given.
pub(crate) fn damaged(root: &Path) -> String {
    format!("damaged analysis in {}", root.display())
}

/// The message for a record file `name` of the analysis in `root` that
/// names row `row` of a document, where there are `documents`.
pub(crate) fn row_beyond(root: &Path, name: &str, row: u32, documents: u64) -> String {
    format!(
        "{}: {name} holds row {row}, but the analysis has {documents} documents (rows 0 to {})",
        damaged(root),
        documents.saturating_sub(1)
    )
}

/// [`row_beyond`] for the record file at `path`, named under its output
/// directory (`records/centers.fpd`, `records/fprint-docid/part-00007.fpd`;
/// a scratch file under the folder it is in).
pub(crate) fn row_beyond_file(path: &Path, row: u32, documents: u64) -> String {
    let mut name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
    let mut folder = path.parent().unwrap_or(Path::new("."));
    for expected in ["fprint-docid", super::RECORDS] {
        if let (Some(dir), Some(up)) = (folder.file_name(), folder.parent())
            && dir == expected
            && (expected == super::RECORDS || up.file_name().is_some_and(|d| d == super::RECORDS))
        {
            name = format!("{}/{name}", dir.to_string_lossy());
            folder = up;
        }
    }
    row_beyond(folder, &name, row, documents)
}

/// Checks that every center in `centers` (read from `path`) is a row of
/// the analysis or [`Center::EMPTY`]: one pass of 4 bytes a document,
/// before any center is used to index or to be shown as a docID.
pub(crate) fn check_centers(path: &Path, centers: &Mapped<Center>) -> anyhow::Result<()> {
    let n = centers.len();
    match centers.iter().find(|&c| c != Center::EMPTY && c.0 as usize >= n) {
        Some(c) => bail!("{}", row_beyond_file(path, c.0, n as u64)),
        None => Ok(()),
    }
}

/// A record file this process knows the checksum of.
#[derive(Clone)]
struct Expected {
    /// The output directory as its command named it, for messages.
    root: PathBuf,
    name: String,
    stage: String,
    bytes: u64,
    sum: u64,
    verified: bool,
}

impl Expected {
    fn mismatch(&self) -> anyhow::Error {
        anyhow::anyhow!(
            "{}: {} does not match its checksum in manifest.json ({})",
            damaged(&self.root),
            self.name,
            rewrite(&self.stage)
        )
    }

    fn wrong_size(&self, len: u64) -> anyhow::Error {
        anyhow::anyhow!(
            "{}: {} has {len} bytes, manifest.json records {} ({})",
            damaged(&self.root),
            self.name,
            self.bytes,
            rewrite(&self.stage)
        )
    }
}

/// Known record files by canonical path.
static EXPECTED: Mutex<Option<HashMap<PathBuf, Expected>>> = Mutex::new(None);

fn expected() -> MutexGuard<'static, Option<HashMap<PathBuf, Expected>>> {
    EXPECTED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The canonical path of an existing file (its folder resolved, so that
/// it matches whatever spelling opened it).
fn canonical(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Some(std::fs::canonicalize(parent).ok()?.join(name))
}

/// Makes the record files `files` of the analysis in `out` known, so that
/// they are checked when read. One already known with the same checksum
/// keeps its verification.
pub(crate) fn expect(out: &OutDir, files: &RecordFiles) {
    if files.is_empty() {
        return;
    }
    let Ok(root) = std::fs::canonicalize(out.root()) else { return };
    let mut guard = expected();
    let known = guard.get_or_insert_with(HashMap::new);
    for (name, file) in files {
        let Ok(sum) = u64::from_str_radix(&file.xxh3, 16) else { continue };
        let path = root.join(name);
        let verified = known.get(&path).is_some_and(|e| e.verified && e.sum == sum && e.bytes == file.bytes);
        known.insert(
            path,
            Expected {
                root: out.root().to_path_buf(),
                name: name.clone(),
                stage: file.stage.clone(),
                bytes: file.bytes,
                sum,
                verified,
            },
        );
    }
}

/// Forgets a file written anew at `path` (after its rename into place):
/// its old checksum no longer applies.
pub(crate) fn forget(path: &Path) {
    let mut guard = expected();
    let Some(known) = guard.as_mut().filter(|k| !k.is_empty()) else { return };
    if let Some(path) = canonical(path) {
        known.remove(&path);
    }
}

/// A known file as the manifest records it, with its canonical path and
/// its checksum unless already verified. `None` for a file not known
/// (scratch files, an analysis without checksums).
fn lookup(path: &Path) -> Option<(PathBuf, Expected)> {
    let guard = expected();
    let known = guard.as_ref().filter(|k| !k.is_empty())?;
    let path = canonical(path)?;
    let e = known.get(&path)?.clone();
    Some((path, e))
}

fn mark_verified(path: &Path) {
    if let Some(e) = expected().as_mut().and_then(|k| k.get_mut(path)) {
        e.verified = true;
    }
}

/// Checks the length of a record file at `path` of `len` bytes against
/// the manifest, if it is known.
pub(crate) fn check_len(path: &Path, len: u64) -> anyhow::Result<()> {
    match lookup(path) {
        Some((_, e)) if e.bytes != len => Err(e.wrong_size(len)),
        _ => Ok(()),
    }
}

/// Checks a mapped record file: its length, and its checksum the first
/// time.
pub(crate) fn check_mapped(path: &Path, map: &memmap2::Mmap) -> anyhow::Result<()> {
    let Some((known, e)) = lookup(path) else { return Ok(()) };
    if e.bytes != map.len() as u64 {
        return Err(e.wrong_size(map.len() as u64));
    }
    if !e.verified {
        if sum_mapped(map) != e.sum {
            return Err(e.mismatch());
        }
        mark_verified(&known);
    }
    Ok(())
}

/// Checks a record file read as a stream, before it is: its length, and
/// its checksum the first time (one pass through it: such files are the
/// small ones, read once).
pub(crate) fn check_streamed(path: &Path, file: &File) -> anyhow::Result<()> {
    let Some((known, e)) = lookup(path) else { return Ok(()) };
    let actual = file.metadata().with_context(|| format!("cannot read {}", path.display()))?.len();
    if e.bytes != actual {
        return Err(e.wrong_size(actual));
    }
    if !e.verified {
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        let mut input = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        let mut buf = vec![0u8; 64 << 10];
        loop {
            let n = input.read(&mut buf).with_context(|| format!("cannot read {}", path.display()))?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
        }
        if hasher.digest() != e.sum {
            return Err(e.mismatch());
        }
        mark_verified(&known);
    }
    Ok(())
}

/// The partitions of `records/fprint-docid/` the manifest of `out` records, by
/// file name, sorted, if it records them.
fn recorded_parts(out: &OutDir) -> Option<Vec<String>> {
    let dir = std::fs::canonicalize(out.root()).ok()?.join(out.fprint_dir().strip_prefix(out.root()).ok()?);
    let guard = expected();
    let known = guard.as_ref()?;
    let mut parts: Vec<String> = known
        .keys()
        .filter(|p| p.parent() == Some(dir.as_path()))
        .map(|p| p.file_name().unwrap_or_default().to_string_lossy().into_owned())
        .collect();
    parts.sort();
    (!parts.is_empty()).then_some(parts)
}

fn missing_part(out: &OutDir, name: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "{}: records/fprint-docid/{name} is missing (run `overlap fingerprint` or `overlap run` again to write it anew)",
        damaged(out.root())
    )
}

fn extra_part(out: &OutDir, name: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "{}: records/fprint-docid/{name} was not written by this analysis (remove it)",
        damaged(out.root())
    )
}

/// Checks that the partitions found in `fprint-docid/` (sorted) are one
/// whole set: those the manifest records, if it does; and in any case
/// `part-00000.fpd` on, each header naming its own place among as many
/// partitions as there are files. A partition missing would leave out the
/// pairs that share its fingerprints, and a copy of one count them twice.
pub(crate) fn check_parts(out: &OutDir, parts: &[PathBuf]) -> anyhow::Result<()> {
    let names: Vec<String> =
        parts.iter().map(|p| p.file_name().unwrap_or_default().to_string_lossy().into_owned()).collect();
    if let Some(recorded) = recorded_parts(out) {
        if let Some(name) = recorded.iter().find(|n| names.binary_search(n).is_err()) {
            return Err(missing_part(out, name));
        }
        if let Some(name) = names.iter().find(|n| recorded.binary_search(n).is_err()) {
            return Err(extra_part(out, name));
        }
    }
    let mut count = None;
    for (i, (path, name)) in parts.iter().zip(&names).enumerate() {
        let expected = format!("part-{i:05}.fpd");
        if *name != expected {
            // Sorted: the one expected here is either missing or beside
            // one of another name.
            return Err(match names.binary_search(&expected) {
                Err(_) => missing_part(out, &expected),
                Ok(_) => extra_part(out, name),
            });
        }
        let header = super::file::read_header(path)?;
        let partitions = *count.get_or_insert(header.partitions);
        if header.partition != i as u32 || header.partitions != partitions {
            bail!(
                "{}: records/fprint-docid/{name} holds partition {} of {}, not {i} of {partitions} (it was not \
                 written as this file by this analysis: remove it and run `overlap fingerprint` or \
                 `overlap run` again)",
                damaged(out.root()),
                header.partition,
                header.partitions
            );
        }
    }
    match (count, parts.len() as u32) {
        (Some(partitions), n) if n < partitions => Err(missing_part(out, &format!("part-{n:05}.fpd"))),
        (Some(partitions), n) if n > partitions => Err(extra_part(out, &format!("part-{partitions:05}.fpd"))),
        _ => Ok(()),
    }
}

/// Whether the record files of `stage` that `files` records are all there
/// with their recorded lengths: a stage whose files are not is not up to
/// date, and writes them anew.
pub(crate) fn present(out: &OutDir, stage: &str, files: &RecordFiles) -> bool {
    files
        .iter()
        .filter(|(_, f)| f.stage == stage)
        .all(|(name, f)| std::fs::metadata(out.root().join(name)).is_ok_and(|m| m.len() == f.bytes))
}

/// The record files among `outputs` of `stage`, summed, in place of the
/// stage's earlier entries in `files`; they become known as verified.
pub(crate) fn record(
    out: &OutDir,
    stage: &str,
    outputs: &[PathBuf],
    files: &mut RecordFiles,
) -> anyhow::Result<()> {
    let records: Vec<&PathBuf> =
        outputs.iter().filter(|p| p.extension().is_some_and(|e| e == "fpd")).collect();
    let sums: Vec<(String, RecordFile)> = records
        .par_iter()
        .map(|path| {
            let (bytes, sum) = sum_file(path)?;
            let name = path.strip_prefix(out.root()).unwrap_or(path);
            let name =
                name.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
            Ok((name, RecordFile { stage: stage.to_string(), bytes, xxh3: hex(sum) }))
        })
        .collect::<anyhow::Result<_>>()?;
    files.retain(|_, f| f.stage != stage);
    let ours: RecordFiles = sums.into_iter().collect();
    if let Ok(root) = std::fs::canonicalize(out.root()) {
        let mut guard = expected();
        if let Some(known) = guard.as_mut() {
            known.retain(|p, e| !(p.starts_with(&root) && e.stage == stage));
        }
    }
    expect(out, &ours);
    for path in &records {
        if let Some(path) = canonical(path) {
            mark_verified(&path);
        }
    }
    files.extend(ours);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checksum_is_xxh3_of_the_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.fpd");
        std::fs::write(&path, b"hello").unwrap();
        assert_eq!(sum_file(&path).unwrap(), (5, 0x9555e8555c62dcfd));
        assert_eq!(hex(0xab), "00000000000000ab");
    }

    /// `bytes` written to `name` in `dir`, mapped.
    fn mapped(dir: &Path, name: &str, bytes: &[u8]) -> memmap2::Mmap {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        // SAFETY: a file of the test's own directory, not written again.
        unsafe { memmap2::Mmap::map(&File::open(&path).unwrap()).unwrap() }
    }

    #[test]
    fn a_file_summed_a_window_at_a_time_has_its_whole_checksum() {
        let dir = tempfile::tempdir().unwrap();
        let bytes: Vec<u8> = (0..100_003u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        let map = mapped(dir.path(), "x.fpd", &bytes);
        let whole = xxhash_rust::xxh3::xxh3_64(&bytes);
        for window in [1, 4096, 8192, 65_536, 100_003, 1 << 20] {
            assert_eq!(sum_mapped_by(&map, window), whole, "window {window}");
        }
        // The pages let go of are read again, the same.
        assert_eq!(&map[..], &bytes[..]);
    }

    /// The resident bytes of the mapping that starts at `addr`, from
    /// this process's `/proc/self/smaps`.
    #[cfg(target_os = "linux")]
    fn resident(addr: usize) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let start = format!("{addr:x}-");
        let mut lines = smaps.lines().skip_while(|l| !l.starts_with(&start));
        lines.next().expect("the mapping is listed");
        let rss = lines.find(|l| l.starts_with("Rss:")).unwrap();
        rss.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_file_summed_a_window_at_a_time_does_not_stay_resident() {
        let dir = tempfile::tempdir().unwrap();
        let bytes: Vec<u8> = (0..32u32 << 20).map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8).collect();
        let whole = xxhash_rust::xxh3::xxh3_64(&bytes);
        let map = mapped(dir.path(), "big.fpd", &bytes);
        drop(bytes);
        assert_eq!(sum_mapped_by(&map, 1 << 20), whole);
        // Hashed whole, all 32 MiB stayed resident; a window at a time,
        // none of it (each window let go of once hashed).
        let after = resident(map.as_ptr() as usize);
        assert!(after <= 2 << 20, "{after} bytes of 32 MiB resident after summing");
    }

    #[test]
    fn known_files_are_checked_once_and_forgotten_when_written_anew() {
        let dir = tempfile::tempdir().unwrap();
        let out = OutDir::new(dir.path());
        out.create().unwrap();
        let path = out.centers();
        std::fs::write(&path, b"abcd").unwrap();
        let mut files = RecordFiles::new();
        record(&out, "exact", &[path.clone(), out.docs()], &mut files).unwrap();
        assert_eq!(files.keys().collect::<Vec<_>>(), ["records/centers.fpd"]);
        assert!(present(&out, "exact", &files));
        // Known as verified: a change is not looked for again ...
        std::fs::write(&path, b"abce").unwrap();
        check_mapped(&path, &mapped(dir.path(), "abce", b"abce")).unwrap();
        // ... until the manifest is read again.
        expect(&out, &RecordFiles::new());
        let mut stale = files.clone();
        stale.get_mut("records/centers.fpd").unwrap().xxh3 = hex(1);
        expect(&out, &stale);
        let e = check_mapped(&path, &mapped(dir.path(), "abce", b"abce")).unwrap_err().to_string();
        assert!(e.contains("centers.fpd does not match its checksum in manifest.json"), "{e}");
        assert!(e.contains("`overlap exact`"), "{e}");
        let e = check_mapped(&path, &mapped(dir.path(), "abc", b"abc")).unwrap_err().to_string();
        assert!(e.contains("centers.fpd has 3 bytes, manifest.json records 4"), "{e}");
        std::fs::write(&path, b"abc").unwrap();
        assert!(!present(&out, "exact", &files));
        forget(&path);
        check_mapped(&path, &mapped(dir.path(), "abc", b"abc")).unwrap();
    }
}
