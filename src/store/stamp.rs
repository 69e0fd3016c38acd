//! Stage stamps: how a stage knows its outputs are already up to date.
//!
//! A stage that completes writes `.overlap/<stage>.stamp` last, holding a
//! key derived from everything its outputs depend on: the tool version, the
//! flags that change the answer, the inputs' identities (canonical paths,
//! sizes and modification times), and the key of the stage before it. A stage whose stamp holds the
//! same key, and whose outputs all exist, is not redone. A killed run leaves
//! no stamp for the stage it was in, so the next run redoes that stage.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::Xxh3;

use super::manifest::InputIdentity;
use super::registry::StageName;

/// Builds a stage key from the things a stage's output depends on.
#[derive(Clone)]
pub(crate) struct StageKey {
    hasher: Xxh3,
}

impl StageKey {
    pub(crate) fn new(stage: &str) -> StageKey {
        let mut key = StageKey { hasher: Xxh3::new() };
        key.add("overlap");
        key.add(env!("CARGO_PKG_VERSION"));
        key.add(stage);
        key
    }

    /// Adds one named value. Values are length-prefixed so that ("ab","c")
    /// and ("a","bc") differ.
    pub(crate) fn add(&mut self, value: &str) -> &mut Self {
        self.hasher.update(&(value.len() as u64).to_le_bytes());
        self.hasher.update(value.as_bytes());
        self
    }

    /// Adds an input by its identity (canonical path, size, modification
    /// time), so that `./a.warc.gz` and `a.warc.gz` key alike. Standard
    /// input, or a file that cannot be examined, adds a value unique to
    /// this run, so the key matches no earlier run's stamp while later
    /// stages can still chain on it.
    pub(crate) fn add_input(&mut self, input: &InputIdentity) -> &mut Self {
        match input.key() {
            Some(key) => self.add(&key),
            None => self.add(&once_value()),
        }
    }

    /// The key as hex.
    pub(crate) fn finish(&self) -> String {
        format!("{:032x}", self.hasher.digest128())
    }
}

/// A value no other run produces: process id and the current time.
fn once_value() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("once:{}:{now}", std::process::id())
}

/// The contents of a stamp file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub stage: String,
    pub key: String,
    /// Output files (relative to the output directory) that must exist for
    /// the stamp to hold.
    pub outputs: Vec<String>,
}

impl Stamp {
    /// Reads a stamp; a missing or unreadable stamp is `None` (the stage
    /// simply runs again).
    pub(crate) fn read(path: &Path) -> Option<Stamp> {
        let bytes = fs::read(path).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    pub(crate) fn write(&self, path: &Path) -> anyhow::Result<()> {
        let json = serde_json::to_vec_pretty(self).context("cannot encode stamp")?;
        super::write_atomic(path, &json)
    }

    /// Whether this stamp says the stage with `key` is done in `root`.
    pub(crate) fn holds(&self, key: &str, root: &Path) -> bool {
        self.key == key && self.outputs.iter().all(|o| root.join(o).exists())
    }

    /// Removes a stamp (before a stage starts rewriting its outputs).
    pub(crate) fn remove(path: &Path) -> anyhow::Result<()> {
        match fs::remove_file(path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e).with_context(|| format!("cannot remove {}", path.display())),
        }
    }
}

/// The key of a whole analysis through stage `last`: the keys of the
/// stages of its chain, each finished (its stamp there and its outputs
/// with it). An analysis that carries this one forward records it, to
/// know later that this is still the analysis it carried. `Err` names the
/// first stage not finished.
pub(crate) fn analysis_key(
    root: &Path,
    stamps: &Path,
    last: &'static StageName,
) -> Result<String, &'static str> {
    let mut key = StageKey::new("analysis");
    key.add(&root.to_string_lossy());
    for stage in last.chain() {
        let stamp =
            Stamp::read(&stamps.join(format!("{}.stamp", stage.name))).filter(|s| s.holds(&s.key, root));
        key.add(&stamp.ok_or(stage.name)?.key);
    }
    Ok(key.finish())
}

/// Relative output names for a stamp.
pub(crate) fn relative(root: &Path, paths: &[PathBuf]) -> Vec<String> {
    paths.iter().map(|p| p.strip_prefix(root).unwrap_or(p).to_string_lossy().into_owned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_change_with_values_and_are_length_prefixed() {
        let k = |vals: &[&str]| {
            let mut key = StageKey::new("s");
            for v in vals {
                key.add(v);
            }
            key.finish()
        };
        assert_eq!(k(&["a", "b"]), k(&["a", "b"]));
        assert_ne!(k(&["ab", "c"]), k(&["a", "bc"]));
        assert_ne!(k(&["a"]), k(&["b"]));
    }

    #[test]
    fn stdin_keys_never_repeat() {
        let key = || StageKey::new("s").add_input(&InputIdentity::of(Path::new("-"))).finish();
        assert_ne!(key(), key());
    }

    #[test]
    fn stamp_roundtrip_and_holds() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("a.csv");
        let st = Stamp { stage: "x".into(), key: "k".into(), outputs: vec!["a.csv".into()] };
        let p = dir.path().join("x.stamp");
        st.write(&p).unwrap();
        let back = Stamp::read(&p).unwrap();
        assert_eq!(back, st);
        assert!(!back.holds("k", dir.path()), "output missing");
        fs::write(&out, "x").unwrap();
        assert!(back.holds("k", dir.path()));
        assert!(!back.holds("other", dir.path()));
    }
}
