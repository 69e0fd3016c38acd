//! Presets (`--preset`): the chunking, criterion and template rule an
//! analysis takes where its flags do not say.
//!
//! `default` is what the by-construction benchmark chose
//! (`scripts/make_mirror_crawl.py`, scored by `scripts/score_mirrors.py`;
//! the table is in docs/defaults.md): each normalized line a chunk, each
//! host's template lines left out, and a pair kept when the two pages'
//! line sets have a Jaccard similarity of at least 0.5 and the smaller is
//! at least 80% inside the larger. On the full benchmark it found 99.4% of
//! the known copies of every kind (mirrors wrapped in banners of 1 to 3
//! lines, a partial mirror, www. and https aliases, the next version of a
//! manual) at 98.5% pair precision or better for each kind, where the
//! paper's `lines:4` with T = 15 found 1.3% of the mirrored pages.
//!
//! The paper's settings stay one flag away: `paper` (one fingerprint for
//! every four lines, T = 15), `paper-lines2` (every two lines, T = 25) and
//! `paper-doc` (one fingerprint for the whole document: exact copies only),
//! without template chunks, as Shivakumar & Garcia-Molina counted them.

use std::fmt;
use std::str::FromStr;

use crate::bytes::chunk::Chunking;
use crate::stages::pairs::{Criterion, Ratio, TemplateRule};

/// A named set of defaults.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Preset {
    #[default]
    Default,
    Paper,
    PaperLines2,
    PaperDoc,
}

const NAMES: [(Preset, &str); 4] = [
    (Preset::Default, "default"),
    (Preset::Paper, "paper"),
    (Preset::PaperLines2, "paper-lines2"),
    (Preset::PaperDoc, "paper-doc"),
];

/// What an analysis takes where its flags do not say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Defaults {
    pub chunking: Chunking,
    pub criterion: Criterion,
    pub template: Option<TemplateRule>,
}

impl Preset {
    pub fn defaults(self) -> Defaults {
        Defaults { chunking: self.chunking(), criterion: self.criterion(), template: self.template() }
    }

    /// The preset that cuts documents with `chunking`, if one does.
    pub fn cutting(chunking: Chunking) -> Option<Preset> {
        NAMES.iter().map(|(p, _)| *p).find(|p| p.chunking() == chunking)
    }

    pub fn name(self) -> &'static str {
        NAMES.iter().find(|(p, _)| *p == self).map_or("default", |(_, n)| n)
    }

    /// How documents are cut into chunks.
    pub fn chunking(self) -> Chunking {
        match self {
            Preset::Default => Chunking::Lines { k: 1, stride: 1 },
            Preset::Paper => Chunking::Lines { k: 4, stride: 4 },
            Preset::PaperLines2 => Chunking::Lines { k: 2, stride: 2 },
            Preset::PaperDoc => Chunking::Doc,
        }
    }

    /// What a pair needs.
    pub fn criterion(self) -> Criterion {
        match self {
            Preset::Default => Criterion {
                threshold: 1,
                jaccard: Some(Ratio::from_ten_thousandths(5000)),
                containment: Some(Ratio::from_ten_thousandths(8000)),
            },
            Preset::Paper => Criterion::count(15),
            Preset::PaperLines2 => Criterion::count(25),
            Preset::PaperDoc => Criterion::count(1),
        }
    }

    /// Which chunks are left out as a host's template.
    pub fn template(self) -> Option<TemplateRule> {
        match self {
            Preset::Default => Some(TemplateRule::DEFAULT),
            Preset::Paper | Preset::PaperLines2 | Preset::PaperDoc => None,
        }
    }
}

impl FromStr for Preset {
    type Err = String;
    fn from_str(s: &str) -> Result<Preset, String> {
        NAMES.iter().find(|(_, n)| *n == s).map(|(p, _)| *p).ok_or_else(|| {
            let names: Vec<&str> = NAMES.iter().map(|(_, n)| *n).collect();
            format!("unknown preset '{s}' (available: {})", names.join(", "))
        })
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_and_the_paper_is_the_paper() {
        for (p, n) in NAMES {
            assert_eq!(n.parse::<Preset>().unwrap(), p);
            assert_eq!(p.to_string(), n);
        }
        assert!("papers".parse::<Preset>().unwrap_err().contains("paper-doc"));
        assert_eq!(Preset::Paper.chunking().to_string(), "lines:4:4");
        assert_eq!(Preset::Paper.criterion(), Criterion::count(15));
        assert_eq!(Preset::Paper.template(), None);
        assert_eq!(Preset::Default.chunking().to_string(), "lines:1:1");
        assert_eq!(Preset::cutting("lines:4".parse().unwrap()), Some(Preset::Paper));
        assert_eq!(Preset::cutting("doc".parse().unwrap()), Some(Preset::PaperDoc));
        assert_eq!(Preset::cutting("words:5".parse().unwrap()), None);
        assert_eq!(
            Preset::Default.criterion().describe(),
            "Jaccard >= 0.5 and containment >= 0.8 and F >= 1"
        );
    }
}
