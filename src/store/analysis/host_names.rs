//! The crawl's host names, each held once and numbered in order of first
//! appearance: the numbers [`super::host_column`] holds per row.
//!
//! The names are one string with the end of each, and while docs.csv is
//! read a hash table of numbers finds a name's number by hashing the name
//! where it is held. A map keyed by a boxed name, then a list of `String`s,
//! took about 60 bytes a host beside 20 of name (124,376 hosts on a crawl
//! of 2.1 million pages, some 1.4 million at the paper's 24 million); this
//! takes the name's bytes, 4 for its end and about 6 of table.

use std::hash::BuildHasher;
use std::ops::Index;

use anyhow::bail;
use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

/// Host names by number.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostNames {
    bytes: String,
    ends: Vec<u32>,
}

impl HostNames {
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn get(&self, number: usize) -> &str {
        let start = if number == 0 { 0 } else { self.ends[number - 1] as usize };
        &self.bytes[start..self.ends[number] as usize]
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    fn push(&mut self, name: &str) -> anyhow::Result<()> {
        self.bytes.push_str(name);
        let Ok(end) = u32::try_from(self.bytes.len()) else {
            bail!("the crawl's host names take more than 4 GiB");
        };
        self.ends.push(end);
        Ok(())
    }
}

impl Index<usize> for HostNames {
    type Output = str;
    fn index(&self, number: usize) -> &str {
        self.get(number)
    }
}

impl<S: AsRef<str>> From<Vec<S>> for HostNames {
    /// Names numbered in the list's order, for tests; they need not be
    /// distinct here.
    fn from(names: Vec<S>) -> HostNames {
        let mut h = HostNames::default();
        for name in &names {
            h.push(name.as_ref()).expect("test names fit");
        }
        h
    }
}

/// Numbers host names as they come, each name once.
#[derive(Default)]
pub struct HostNumbering {
    names: HostNames,
    table: HashTable<u32>,
    hasher: FxBuildHasher,
}

impl HostNumbering {
    /// The number of `name`, new when the name is.
    pub fn number(&mut self, name: &str) -> anyhow::Result<u32> {
        let HostNumbering { names, table, hasher } = self;
        let hash = hasher.hash_one(name);
        if let Some(&n) = table.find(hash, |&n| names.get(n as usize) == name) {
            return Ok(n);
        }
        let n = names.len() as u32;
        names.push(name)?;
        table.insert_unique(hash, n, |&m| hasher.hash_one(names.get(m as usize)));
        Ok(n)
    }

    /// The names, the table freed.
    pub fn finish(self) -> HostNames {
        let mut names = self.names;
        names.bytes.shrink_to_fit();
        names.ends.shrink_to_fit();
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_numbered_once_in_order_of_first_appearance() {
        let mut numbering = HostNumbering::default();
        let seen = ["b.test", "", "a.test", "b.test", "", "é.test", "a.test"];
        let got: Vec<u32> = seen.iter().map(|h| numbering.number(h).unwrap()).collect();
        assert_eq!(got, [0, 1, 2, 0, 1, 3, 2]);
        let names = numbering.finish();
        assert_eq!(names.iter().collect::<Vec<_>>(), ["b.test", "", "a.test", "é.test"]);
        assert_eq!(&names[3], "é.test");
        assert_eq!(names, HostNames::from(vec!["b.test", "", "a.test", "é.test"]));
    }

    #[test]
    fn many_names_survive_the_table_growing() {
        let mut numbering = HostNumbering::default();
        for round in 0..2 {
            for i in 0..20_000u32 {
                assert_eq!(
                    numbering.number(&format!("h{}.test", i * 7919 % 20_000)).unwrap(),
                    i,
                    "round {round}"
                );
            }
        }
        let names = numbering.finish();
        assert_eq!(names.len(), 20_000);
        assert_eq!(names.get(1), "h7919.test");
    }
}
