//! Documents read again from their inputs, for what shows a chunk's words
//! (the `text` of stop-chunks.csv, `overlap explain`): the store keeps
//! fingerprints, not texts, and a crawl's texts are too large to keep.
//!
//! Only the records wanted are read: docs.csv's `source` gives each
//! document's input and offset, and the manifest's [`Locator`] the file
//! that is still the input the analysis read. A record is read, extracted
//! and cut at `--max-doc-bytes` as the fingerprint stage did, so its
//! chunks are the ones it fingerprinted.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::bytes::extract;
use crate::bytes::read::{self, Item};
use crate::store::docs::{DocTable, for_each_doc};
use crate::store::manifest::{Locator, ReadSettings, Unreadable};
use crate::store::{Manifest, OutDir};

/// Where one document's record is.
#[derive(Clone, Debug)]
pub(crate) struct Located {
    /// docs.csv's `source`, `INPUT:OFFSET`, for messages.
    pub source: String,
    /// The file to read it from, or why it cannot be read again.
    pub file: Result<PathBuf, Unreadable>,
    pub offset: u64,
}

impl Located {
    pub(crate) fn new(locator: &Locator, source: &crate::store::docs::Source<'_>) -> Located {
        Located { source: source.to_string(), file: locator.find(source), offset: source.offset }
    }
}

/// Where the record of every row `wanted` takes is, from docs.csv (one
/// pass over it).
pub(crate) fn locate_rows(
    out: &OutDir,
    manifest: &Manifest,
    wanted: impl Fn(u32) -> bool,
) -> anyhow::Result<HashMap<u32, Located>> {
    let locator = manifest.locator();
    let mut found = HashMap::new();
    let mut row = 0u32;
    for_each_doc(&out.docs(), DocTable::Final, |doc| {
        if wanted(row) {
            found.insert(row, Located::new(&locator, &doc.source));
        }
        row += 1;
        Ok(())
    })?;
    Ok(found)
}

/// What reading a record again gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Reread {
    /// The document's normalized text, cut as the fingerprint stage cut it.
    Text(String),
    /// The record there makes no document of its own: a revisit (whose
    /// text is its original's), or no record the analysis made a document.
    NoText,
    /// The offset is not where a record can be read on its own: inside a
    /// gzip member or zstd frame that starts before it (a file compressed
    /// whole), where offsets count decompressed bytes. [`text_from_start`]
    /// reads it.
    Inside,
}

/// The text of the document whose record starts at `offset` of `path`,
/// reading that record only.
pub(crate) fn text_at(path: &Path, offset: u64, read: &ReadSettings) -> anyhow::Result<Reread> {
    let Some(mut reader) = read::open_at(path, offset, &read.options())? else {
        return Ok(Reread::Inside);
    };
    let item = reader.next_item().map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    Ok(text_of(item, read))
}

/// [`text_at`] for a record inside a member that starts before it: the
/// input is read from its start up to the record, so this costs the
/// reading of that much of the input (never more than the one input).
pub(crate) fn text_from_start(path: &Path, offset: u64, read: &ReadSettings) -> anyhow::Result<Reread> {
    let mut reader = match read::open(path, &read.options())? {
        read::Input::Records(reader) => reader,
        read::Input::Skipped(_) => return Ok(Reread::NoText),
    };
    loop {
        match reader.next_item().map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))? {
            Some(item) if item.offset() < offset => {}
            Some(item) if item.offset() == offset => return Ok(text_of(Some(item), read)),
            _ => return Ok(Reread::NoText),
        }
    }
}

fn text_of(item: Option<Item>, read: &ReadSettings) -> Reread {
    let Some(Item::Doc(raw)) = item else { return Reread::NoText };
    match extract::extract(&raw) {
        Ok(mut text) => {
            extract::cap(&mut text, usize::try_from(read.max_doc_bytes).unwrap_or(usize::MAX));
            Reread::Text(text.text)
        }
        Err(_) => Reread::NoText,
    }
}
