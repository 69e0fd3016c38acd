//! `manifest.json`: what an analysis is of and how it was made, the one
//! file later stages (and later analyses) read their configuration from.
//!
//! The fingerprint stage writes it whole, with the chunk spec, how the
//! inputs were read, and each input's identity and docID range; the pairs
//! stage adds its settings. Keys (all always present unless marked):
//!
//! | key | meaning |
//! |---|---|
//! | `format_version` | `2`; a later overlap that changes the store's layout raises it, and an overlap refuses a store newer than it reads; one of an earlier layout it moves to its own ([`super::layout`]) |
//! | `overlap_version` | the version of the overlap that wrote it |
//! | `chunk` | the chunk spec in canonical form (`lines:4:4`) |
//! | `read` | `input_format`, `url_field`, `text_field`, `max_record_bytes`, `max_doc_bytes`: how records were read and cut; `input_rules`, the revision of what records become (documents, copies, skips) and how they are extracted |
//! | `inputs` | one entry per input, in order: `path` as given, `canonical` (the absolute path with links resolved), `size` in bytes, `modified_ns` (nanoseconds since 1970), `documents` read from it, and in a first analysis `first_doc` (its docIDs are `first_doc` to `first_doc + documents - 1`; null with `--previous`, where URLs keep their docIDs, and when a revisit was read before its original, whose docID comes after every input's documents); `canonical`, `size` and `modified_ns` are null for standard input |
//! | `documents` | documents in the analysis |
//! | `next_doc_id` | the docID the next URL never seen in the chain gets |
//! | `chain` | with `--previous` only: `previous` (the analysis carried forward, as given), `previous_canonical` and `previous_key` (the key of its stages, which says it is still the analysis carried forward), `analysis` (1 for the first analysis made with `--previous`, counting up along the chain), `keep_missing`, and `carried_inputs`: the identities of earlier analyses' inputs that documents kept from them are read from (their `source` names the canonical path) |
//! | `exact` | once the exact stage ran: `scope` (`crawl`, `host` or `site`), where copies and pairs are looked for |
//! | `pairs` | once the pairs stage ran: `threshold` (T) and `max_df` (null without `--max-df`) |
//! | `record_files` | every record file (`.fpd`) of the analysis by its path under the output directory (`records/fprint-docid/part-00007.fpd`): the `stage` that wrote it, its length in `bytes` and `xxh3`, the XXH3-64 of its bytes as 16 hex digits; each stage replaces its own entries when it finishes (see [`super::integrity`]); absent in an analysis written before it was recorded |
//!
//! An input's identity is its canonical path, size and modification time:
//! `./a.warc.gz` and `a.warc.gz` are the same input, and a file rewritten
//! in place is another. Stage stamps key on it, and `report --compare`
//! matches runs by it.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};

use super::docs::Source;
use super::integrity::{self, RecordFiles};
use super::scopes::Scope;
use super::{OutDir, write_atomic};
use crate::bytes::chunk::Chunking;
use crate::bytes::read::{InputFormat, ReadOptions};

/// What to do about a damaged manifest.
const ANEW: &str = "remove manifest.json and run `overlap run` again to write the analysis anew";

/// The layout version this overlap writes and reads.
pub(crate) const FORMAT_VERSION: u32 = 3;

/// The one line for an analysis of an earlier layout that a command only
/// reads: [`super::layout::migrate`] moves it.
fn earlier(dir: &Path, version: u32) -> String {
    format!(
        "{} is an analysis of an earlier overlap (store format {version}): run `overlap migrate {}` \
         to bring it to this overlap's format {FORMAT_VERSION}, or run the analysis again",
        dir.display(),
        dir.display(),
    )
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Manifest {
    pub format_version: u32,
    pub overlap_version: String,
    pub chunk: String,
    pub read: ReadSettings,
    pub inputs: Vec<InputEntry>,
    pub documents: u64,
    pub next_doc_id: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain: Option<Chain>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exact: Option<ExactSettings>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs: Option<PairsSettings>,
    /// The `--keep` rule the report's savings were counted by, when it
    /// was not `input-order`: `dedup`'s rule when it is given none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep: Option<String>,
    #[serde(default, skip_serializing_if = "RecordFiles::is_empty")]
    pub record_files: RecordFiles,
}

/// What the exact stage found copies with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ExactSettings {
    /// `crawl`, `host` or `site` (`--scope`).
    pub scope: String,
}

impl Manifest {
    /// Where copies and pairs are looked for: the exact stage's scope.
    pub(crate) fn scope(&self) -> anyhow::Result<Scope> {
        let name = self.exact.as_ref().map_or("crawl", |e| e.scope.as_str());
        name.parse().map_err(|e: String| anyhow::anyhow!("manifest.json: exact.scope: {e}"))
    }
}

/// Where an analysis made with `--previous` comes from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Chain {
    pub previous: String,
    pub previous_canonical: String,
    pub previous_key: String,
    pub analysis: u32,
    pub keep_missing: u32,
    pub carried_inputs: Vec<InputIdentity>,
}

/// How records were read and cut.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ReadSettings {
    pub input_format: String,
    pub url_field: String,
    pub text_field: String,
    pub max_record_bytes: u64,
    pub max_doc_bytes: u64,
    pub input_rules: String,
}

impl ReadSettings {
    pub(crate) fn new(read: &ReadOptions, max_doc_bytes: u64, input_rules: &str) -> ReadSettings {
        ReadSettings {
            input_format: read.format.name().to_string(),
            url_field: read.url_field.clone(),
            text_field: read.text_field.clone(),
            max_record_bytes: read.max_record_bytes,
            max_doc_bytes,
            input_rules: input_rules.to_string(),
        }
    }

    /// The options to read a record again as it was read.
    pub(crate) fn options(&self) -> ReadOptions {
        ReadOptions {
            format: InputFormat::from_name(&self.input_format).unwrap_or(InputFormat::Auto),
            url_field: self.url_field.clone(),
            text_field: self.text_field.clone(),
            max_record_bytes: self.max_record_bytes,
            known: None,
            pages: None,
        }
    }
}

/// What the pairs stage counted with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PairsSettings {
    pub threshold: u32,
    pub max_df: Option<u32>,
    /// `--template` as given (`5:0.01`), when each host's template chunks
    /// were left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// `--jaccard` and `--containment` as given (decimals), when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jaccard: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub containment: Option<String>,
    /// The approximate method that found the candidates (`minhash 18x7`,
    /// `simhash K=3`): every row is exact, but pairs may be missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approximate: Option<String>,
    /// `--against`: the reference analysis this one was measured against,
    /// as given and as its canonical path (`against.csv`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub against: Option<AgainstSettings>,
}

/// The reference analysis of `--against`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct AgainstSettings {
    pub reference: String,
    pub reference_canonical: String,
}

impl PairsSettings {
    /// The rule the Overlap table was counted with.
    pub(crate) fn criterion(&self) -> anyhow::Result<super::criterion::Criterion> {
        let ratio = |name: &str, value: &Option<String>| {
            value
                .as_deref()
                .map(str::parse)
                .transpose()
                .map_err(|e: String| anyhow::anyhow!("manifest.json: pairs.{name}: {e}"))
        };
        Ok(super::criterion::Criterion {
            threshold: self.threshold,
            jaccard: ratio("jaccard", &self.jaccard)?,
            containment: ratio("containment", &self.containment)?,
        })
    }
}

/// One input: its identity and its docIDs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct InputEntry {
    #[serde(flatten)]
    pub identity: InputIdentity,
    pub documents: u64,
    pub first_doc: Option<u64>,
}

/// An input as given, and what makes it the same input whatever its
/// spelling.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct InputIdentity {
    pub path: String,
    pub canonical: Option<String>,
    pub size: Option<u64>,
    pub modified_ns: Option<u64>,
}

impl InputIdentity {
    /// The identity of `path` now; only the path for a stream (standard
    /// input, a pipe, a FIFO: [`crate::bytes::read::Stream`], whose size and time
    /// say nothing of what it will carry) or a file that cannot be
    /// examined.
    pub(crate) fn of(path: &Path) -> InputIdentity {
        let given = path.to_string_lossy().into_owned();
        let meta = crate::bytes::read::stream(path).is_none().then(|| std::fs::metadata(path).ok()).flatten();
        let canonical = meta.as_ref().and_then(|_| std::fs::canonicalize(path).ok());
        let (Some(meta), Some(canonical)) = (meta, canonical) else {
            return InputIdentity { path: given, canonical: None, size: None, modified_ns: None };
        };
        let modified_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        InputIdentity {
            path: given,
            canonical: Some(canonical.to_string_lossy().into_owned()),
            size: Some(meta.len()),
            modified_ns,
        }
    }

    /// What a stage stamp keys on: the canonical path, size and
    /// modification time; `None` for an input that cannot be identified
    /// (standard input), whose stage can never be up to date.
    pub(crate) fn key(&self) -> Option<String> {
        let canonical = self.canonical.as_ref()?;
        Some(format!("{canonical}\n{}:{}", self.size?, self.modified_ns.unwrap_or(0)))
    }

    /// The file to read this input's records from again: its canonical
    /// path (so that a command run from another directory finds it), if
    /// the file there is still the one the analysis read.
    pub(crate) fn reread(&self) -> Result<PathBuf, Unreadable> {
        let Some(canonical) = &self.canonical else { return Err(Unreadable::StandardInput) };
        let now = InputIdentity::of(Path::new(canonical));
        if now.same_input(self) {
            Ok(PathBuf::from(canonical))
        } else if now.canonical.is_none() {
            Err(Unreadable::Gone(canonical.clone()))
        } else {
            Err(Unreadable::Changed(canonical.clone()))
        }
    }

    /// Whether two entries name the same input. Standard input cannot be
    /// told apart from standard input, so two are taken to be the same.
    pub(crate) fn same_input(&self, other: &InputIdentity) -> bool {
        match (self.key(), other.key()) {
            (Some(a), Some(b)) => a == b,
            (None, None) => self.path == "-" && other.path == "-",
            _ => false,
        }
    }
}

impl Manifest {
    /// Reads the manifest of `out`; an analysis without one, or one this
    /// overlap cannot read, is an error naming it. Its counts are checked
    /// against what the store can hold, and its record files become known
    /// to be checked when read ([`integrity::expect`]).
    pub(crate) fn read(out: &OutDir) -> anyhow::Result<Manifest> {
        let manifest = Manifest::read_unchecked(out)?;
        manifest.check_counts(out)?;
        integrity::expect(out, &manifest.record_files);
        Ok(manifest)
    }

    /// The counts a stage sizes its tables by, checked before anything is
    /// allocated from them: docIDs are `u32`, and `fuzzy.fpd` (written
    /// beside the manifest, one record per document) holds as many
    /// documents as the manifest says.
    fn check_counts(&self, out: &OutDir) -> anyhow::Result<()> {
        let most = u64::from(u32::MAX);
        for (name, n) in [("documents", self.documents), ("next_doc_id", self.next_doc_id)] {
            if n > most {
                bail!(
                    "{}: manifest.json says {name} {n}, more than an analysis can hold ({most}) ({ANEW})",
                    integrity::damaged(out.root())
                );
            }
        }
        if let Ok(header) = super::file::read_header(&out.fuzzy())
            && header.count != self.documents
        {
            bail!(
                "{}: manifest.json says {} documents, records/fuzzy.fpd holds {} ({ANEW})",
                integrity::damaged(out.root()),
                self.documents,
                header.count
            );
        }
        Ok(())
    }

    /// [`Manifest::read`] without its checks: for the stage that is about
    /// to write it again.
    pub(crate) fn read_unchecked(out: &OutDir) -> anyhow::Result<Manifest> {
        let path = out.manifest();
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(out.unfinished(format!(
                    "{} has no manifest.json: it is not a complete overlap analysis \
                     (run `overlap fingerprint` or `overlap run` into it)",
                    out.root().display()
                )));
            }
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        let version = Manifest::version_in(&bytes)
            .with_context(|| format!("{} is not an overlap manifest", path.display()))?;
        if version < FORMAT_VERSION {
            bail!("{}", earlier(out.root(), version));
        }
        if version > FORMAT_VERSION {
            bail!(
                "{} has format version {version}; this overlap reads version {FORMAT_VERSION} (upgrade overlap)",
                path.display()
            );
        }
        Manifest::parse(&path, &bytes)
    }

    /// The format version a manifest's `bytes` say, whatever the layout.
    pub(super) fn version_in(bytes: &[u8]) -> serde_json::Result<u32> {
        #[derive(Deserialize)]
        struct Version {
            format_version: u32,
        }
        serde_json::from_slice::<Version>(bytes).map(|v| v.format_version)
    }

    /// The manifest in `bytes` (read from `path`), whatever the format
    /// version it says: the layouts differ in where files are, not in the
    /// manifest's keys ([`super::layout`]).
    pub(super) fn parse(path: &Path, bytes: &[u8]) -> anyhow::Result<Manifest> {
        serde_json::from_slice(bytes).with_context(|| format!("{} is damaged", path.display()))
    }

    pub(crate) fn write(&self, out: &OutDir) -> anyhow::Result<()> {
        let mut json = serde_json::to_vec_pretty(self).context("cannot encode manifest.json")?;
        json.push(b'\n');
        write_atomic(&out.manifest(), &json)
    }

    /// The chunking the analysis was cut with.
    pub(crate) fn chunking(&self) -> anyhow::Result<Chunking> {
        self.chunk.parse().map_err(|e: String| anyhow::anyhow!("manifest.json: chunk: {e}"))
    }

    /// Every input documents' `source` may name, in order: this analysis's
    /// inputs, then the earlier analyses' inputs that documents kept from
    /// them are read from (`chain.carried_inputs`).
    pub(crate) fn sources(&self) -> impl Iterator<Item = &InputIdentity> {
        let carried = self.chain.iter().flat_map(|c| &c.carried_inputs);
        self.inputs.iter().map(|i| &i.identity).chain(carried)
    }

    /// Where to read documents' records again ([`Locator`]).
    pub(crate) fn locator(&self) -> Locator {
        let mut files = std::collections::HashMap::new();
        for identity in self.sources() {
            let found = identity.reread();
            // The same spelling may name inputs of two crawls; the one that is
            // still the file it was is the one to read.
            let slot = files.entry(identity.path.clone()).or_insert_with(|| found.clone());
            if slot.is_err() && found.is_ok() {
                *slot = found;
            }
        }
        Locator { files }
    }

    /// Whether `other` is an analysis of the same inputs, in the same order.
    pub(crate) fn same_inputs(&self, other: &Manifest) -> bool {
        self.inputs.len() == other.inputs.len()
            && self.inputs.iter().zip(&other.inputs).all(|(a, b)| a.identity.same_input(&b.identity))
    }
}

/// Finds the file to read a document's record from again.
pub(crate) struct Locator {
    /// By the input's name in `source`: its canonical path, when the file
    /// there is still the one the analysis read, or why not.
    files: std::collections::HashMap<String, Result<PathBuf, Unreadable>>,
}

impl Locator {
    /// The file that holds `source`'s record: its input's canonical path
    /// (so that a run from another directory finds it), if that file is
    /// still the one the analysis read (same size and modification time);
    /// `None` for standard input, an input changed since, or a source the
    /// manifest does not name.
    pub(crate) fn locate(&self, source: &Source<'_>) -> Option<PathBuf> {
        self.find(source).ok()
    }

    /// [`Locator::locate`], saying why when the record cannot be read
    /// again.
    pub(crate) fn find(&self, source: &Source<'_>) -> Result<PathBuf, Unreadable> {
        self.files.get(source.input).cloned().unwrap_or(Err(Unreadable::NotAnInput))
    }
}

/// Why a document's record cannot be read again from its input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Unreadable {
    /// The input was a stream: standard input, a pipe, a FIFO.
    StandardInput,
    /// The file (its canonical path) has another size or modification time
    /// than the analysis recorded: it is another file now.
    Changed(String),
    /// The file (its canonical path) is not there any more.
    Gone(String),
    /// The source names no input of the analysis.
    NotAnInput,
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unreadable::StandardInput => {
                f.write_str("it was read from standard input or a pipe, which cannot be read again")
            }
            Unreadable::Changed(path) => write!(
                f,
                "{path} has changed since the analysis (another size or modification time): run the analysis again"
            ),
            Unreadable::Gone(path) => write!(f, "{path} is gone"),
            Unreadable::NotAnInput => f.write_str("its input is not one manifest.json names"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_input_is_the_same_whatever_its_spelling() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.warc");
        std::fs::write(&file, "WARC/1.0\r\n").unwrap();
        let plain = InputIdentity::of(&file);
        let dotted = InputIdentity::of(&dir.path().join(".").join("a.warc"));
        assert_ne!(plain.path, dotted.path);
        assert!(plain.same_input(&dotted));
        assert_eq!(plain.key(), dotted.key());
        assert_eq!(plain.size, Some(10));
        // Rewritten in place: another input.
        std::fs::write(&file, "WARC/1.1\r\n\r\n").unwrap();
        assert!(!InputIdentity::of(&file).same_input(&plain));
        let stdin = InputIdentity::of(Path::new("-"));
        assert_eq!(stdin.key(), None);
        assert!(stdin.same_input(&InputIdentity::of(Path::new("-"))));
        assert!(!stdin.same_input(&plain));
    }

    fn manifest(inputs: Vec<InputIdentity>, carried: Option<Vec<InputIdentity>>) -> Manifest {
        Manifest {
            format_version: FORMAT_VERSION,
            overlap_version: "0.1.0".into(),
            chunk: "lines:4:4".into(),
            read: ReadSettings::new(&ReadOptions::default(), 8 << 20, "rules"),
            inputs: inputs
                .into_iter()
                .map(|identity| InputEntry { identity, documents: 3, first_doc: Some(0) })
                .collect(),
            documents: 3,
            next_doc_id: 3,
            chain: carried.map(|carried_inputs| Chain {
                previous: "old".into(),
                previous_canonical: "/old".into(),
                previous_key: "k".into(),
                analysis: 1,
                keep_missing: 1,
                carried_inputs,
            }),
            exact: None,
            pairs: Some(PairsSettings {
                threshold: 15,
                max_df: None,
                template: None,
                jaccard: None,
                containment: None,
                approximate: None,
                against: None,
            }),
            keep: Some("newest,https".to_string()),
            record_files: RecordFiles::new(),
        }
    }

    #[test]
    fn round_trips_and_refuses_what_it_cannot_read() {
        let dir = tempfile::tempdir().unwrap();
        let out = OutDir::new(dir.path());
        let e = format!("{:#}", Manifest::read(&out).unwrap_err());
        assert!(e.contains("has no manifest.json"), "{e}");
        let m = manifest(vec![InputIdentity::of(Path::new("-"))], Some(vec![]));
        m.write(&out).unwrap();
        assert_eq!(Manifest::read(&out).unwrap(), m);
        assert_eq!(m.chunking().unwrap(), Chunking::default());
        assert_eq!(m.read.options().url_field, "url");
        let text = std::fs::read_to_string(out.manifest()).unwrap();
        std::fs::write(out.manifest(), text.replace("\"format_version\": 3", "\"format_version\": 9"))
            .unwrap();
        let e = format!("{:#}", Manifest::read(&out).unwrap_err());
        assert!(e.contains("format version 9"), "{e}");
        // An earlier layout: one line naming the move.
        std::fs::write(out.manifest(), text.replace("\"format_version\": 3", "\"format_version\": 1"))
            .unwrap();
        let e = format!("{:#}", Manifest::read(&out).unwrap_err());
        assert!(e.contains("earlier overlap") && e.contains("overlap migrate"), "{e}");
        std::fs::write(out.manifest(), "{}").unwrap();
        assert!(format!("{:#}", Manifest::read(&out).unwrap_err()).contains("not an overlap manifest"));
    }

    #[test]
    fn records_are_read_again_only_from_the_file_the_analysis_read() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.warc"), dir.path().join("b.warc"));
        std::fs::write(&a, "a").unwrap();
        std::fs::write(&b, "b").unwrap();
        let mut now = InputIdentity::of(&a);
        now.path = "a.warc".into();
        // An earlier crawl's input under the same spelling, since rewritten.
        let mut then = InputIdentity::of(&b);
        then.path = "a.warc".into();
        then.size = Some(99);
        let kept = InputIdentity::of(&b);
        let m = manifest(vec![now, InputIdentity::of(Path::new("-"))], Some(vec![then, kept.clone()]));
        let locator = m.locator();
        let at = |input| locator.locate(&Source { input, offset: 0 });
        assert_eq!(at("a.warc"), Some(std::fs::canonicalize(&a).unwrap()));
        assert_eq!(at(&kept.path), Some(std::fs::canonicalize(&b).unwrap()));
        assert_eq!(at("-"), None);
        assert_eq!(at("c.warc"), None);
        let why = |input| locator.find(&Source { input, offset: 0 }).unwrap_err();
        assert_eq!(why("-"), Unreadable::StandardInput);
        assert_eq!(why("c.warc"), Unreadable::NotAnInput);
        std::fs::write(&b, "changed").unwrap();
        let canonical_b = std::fs::canonicalize(&b).unwrap().to_string_lossy().into_owned();
        let source = Source { input: &kept.path, offset: 0 };
        assert_eq!(m.locator().find(&source), Err(Unreadable::Changed(canonical_b.clone())));
        assert_eq!(kept.reread(), Err(Unreadable::Changed(canonical_b.clone())));
        std::fs::remove_file(&b).unwrap();
        assert_eq!(m.locator().find(&source), Err(Unreadable::Gone(canonical_b.clone())));
        assert_eq!(kept.reread(), Err(Unreadable::Gone(canonical_b)));
        assert_eq!(InputIdentity::of(Path::new("-")).reread(), Err(Unreadable::StandardInput));
        assert_eq!(InputIdentity::of(&a).reread(), Ok(std::fs::canonicalize(&a).unwrap()));
    }
}
