//! The layouts of an output directory, and the move from an earlier one.
//!
//! Format version 1 kept every file at the top of the directory: eight
//! kinds of `.fpd` record files and the 64-part `fprint-docid/` beside the
//! tables users read, with `fingerprint-docs.csv` beside `docs.csv`.
//! Version 2 keeps the stages' record files and the fingerprint stage's
//! working tables in `records/`, and only the tables users read at the
//! top; the files themselves are the same bytes. Version 3 (this
//! overlap's, [`FORMAT_VERSION`]) adds each capture's `date`, `capture` and
//! `canonical` to the two document tables, after `missing_for`.
//!
//! An analysis of an earlier version is brought to this one in place by
//! [`migrate`], a version at a time: version 1's files are moved, and
//! version 2's document tables get the three columns, empty, since what
//! they hold was not recorded (a run of the fingerprint stage into the
//! directory fills them in). Its Parquet copies of the document tables,
//! which lack the columns, are removed, so that the next export writes
//! them again. Every command that writes into a directory does it first
//! (under the directory's lock), and `overlap migrate DIR` does only that,
//! for an analysis that is only read (the previous analysis of a chain,
//! one `dedup` or `explain` reads), which a command that only reads
//! refuses in one line naming `overlap migrate` ([`Manifest::read`]).
//! Moving to version 2, each file is renamed, and the stamps' output lists
//! and the manifest's `record_files` are rewritten to the new names; to
//! version 3, each table is rewritten under a temporary name and renamed.
//! The manifest's version is raised last: a migration killed halfway is
//! finished by the next, and the stage keys, which do not name files, stay
//! the same, so the migrated analysis is up to date, and a chain that
//! recorded it still knows it.
//!
//! [`Manifest::read`]: super::Manifest::read

use std::fs;

use anyhow::Context;

use super::docs::{self, DocTable};
use super::manifest::FORMAT_VERSION;
use super::{Manifest, OutDir, RECORDS, Stamp, parquet_tables};

/// What version 2 moved into `records/`, by their version 1 names at the
/// top of the directory.
const MOVED_TO_RECORDS: [&str; 11] = [
    "fprint-docid",
    "fprint-exact.fpd",
    "fuzzy.fpd",
    "centers.fpd",
    "scopes.fpd",
    "doc-ids.fpd",
    "urls.fpd",
    "replicas.fpd",
    "previous-replicas.fpd",
    "fingerprint-docs.csv",
    "fingerprint-changes.csv",
];

/// The name under version 2 of `name` (a path under the directory, `/`
/// separated) under version 1.
fn renamed(name: &str) -> String {
    let first = name.split('/').next().unwrap_or(name);
    match MOVED_TO_RECORDS.contains(&first) {
        true => format!("{RECORDS}/{name}"),
        false => name.to_string(),
    }
}

/// The format version of the analysis in `out`, read from its manifest
/// whatever its layout; `None` without one that says.
pub(crate) fn version_of(out: &OutDir) -> Option<u32> {
    Manifest::version_in(&fs::read(out.manifest()).ok()?).ok()
}

/// Moves an analysis of an earlier layout in `out` to this overlap's;
/// returns whether it moved anything. The caller holds the directory's
/// lock. An analysis of this layout, a newer one, or no analysis at all is
/// left as it is.
pub(crate) fn migrate(out: &OutDir) -> anyhow::Result<bool> {
    let path = out.manifest();
    let Ok(bytes) = fs::read(&path) else { return Ok(false) };
    let version = match Manifest::version_in(&bytes) {
        Ok(v) if v < FORMAT_VERSION => v,
        _ => return Ok(false),
    };
    if version == 1 {
        move_into_records(out)?;
    }
    add_capture_columns(out)?;
    let mut manifest = Manifest::parse(&path, &bytes)?;
    if version == 1 {
        manifest.record_files = std::mem::take(&mut manifest.record_files)
            .into_iter()
            .map(|(name, file)| (renamed(&name), file))
            .collect();
    }
    manifest.format_version = FORMAT_VERSION;
    manifest.write(out)?;
    Ok(true)
}

/// Version 2 to 3: the document tables with `date`, `status` and
/// `canonical` empty, and without the Parquet copies made of them.
fn add_capture_columns(out: &OutDir) -> anyhow::Result<()> {
    for (path, table) in [(out.fingerprint_docs(), DocTable::Fingerprint), (out.docs(), DocTable::Final)] {
        docs::add_capture_columns(&path, table)?;
    }
    for name in [parquet_tables::FINGERPRINT_DOCS.name, "docs"] {
        super::remove_file_if_exists(&out.parquet_table(name))?;
    }
    Ok(())
}

/// Version 1 to 2: every record file into `records/`, and the stamps'
/// output lists with their new names.
fn move_into_records(out: &OutDir) -> anyhow::Result<()> {
    let root = out.root();
    fs::create_dir_all(out.records())
        .with_context(|| format!("cannot create directory {}", out.records().display()))?;
    for name in MOVED_TO_RECORDS {
        // What a killed run of the earlier overlap left of this file: the
        // leftover sweep looks for it in records/ from now on.
        super::remove_file_if_exists(&root.join(format!("{name}.partial")))?;
        let (from, to) = (root.join(name), out.records().join(name));
        if !from.exists() {
            continue;
        }
        // Of a migration killed after `create`: an empty folder in the way.
        if to.is_dir() {
            fs::remove_dir(&to).with_context(|| format!("cannot remove {}", to.display()))?;
        }
        fs::rename(&from, &to)
            .with_context(|| format!("cannot move {} to {}", from.display(), to.display()))?;
    }
    let stamps = out.private();
    if let Ok(entries) = fs::read_dir(&stamps) {
        for entry in entries {
            let path = entry.with_context(|| format!("cannot read directory {}", stamps.display()))?.path();
            if path.extension().is_none_or(|e| e != "stamp") {
                continue;
            }
            if let Some(mut stamp) = Stamp::read(&path) {
                stamp.outputs = stamp.outputs.iter().map(|o| renamed(o)).collect();
                stamp.write(&path)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn names_move_into_records_and_the_tables_stay() {
        assert_eq!(renamed("fprint-docid/part-00007.fpd"), "records/fprint-docid/part-00007.fpd");
        assert_eq!(renamed("centers.fpd"), "records/centers.fpd");
        assert_eq!(renamed("fingerprint-docs.csv"), "records/fingerprint-docs.csv");
        assert_eq!(renamed("docs.csv"), "docs.csv");
        assert_eq!(renamed("manifest.json"), "manifest.json");
        // Every moved name is where this overlap looks for it.
        let out = OutDir::new("/d");
        for (name, path) in [
            ("fprint-exact.fpd", out.fprint_exact()),
            ("fuzzy.fpd", out.fuzzy()),
            ("centers.fpd", out.centers()),
            ("scopes.fpd", out.scopes()),
            ("doc-ids.fpd", out.doc_ids()),
            ("urls.fpd", out.urls()),
            ("replicas.fpd", out.replicas()),
            ("previous-replicas.fpd", out.previous_replicas()),
            ("fingerprint-docs.csv", out.fingerprint_docs()),
            ("fingerprint-changes.csv", out.fingerprint_changes()),
            ("fprint-docid/part-00003.fpd", out.fprint_part(3)),
        ] {
            assert_eq!(Path::new("/d").join(renamed(name)), path, "{name}");
        }
    }
}
