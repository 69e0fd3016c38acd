//! The copy index's table of slots, in shards that grow one at a time.
//!
//! One hash table grows by doubling, moving every slot it holds at once,
//! and the copy index is behind one lock: on 2.1 million pages its last
//! growth (2^21 to 2^22 buckets) held the lock for a quarter of a second,
//! while the writer and the other worker waited for it and one core of two
//! stood idle (`perf sched`). Split by the key's first byte into up to
//! [`MAX_SHARDS`] tables, each grows on its own, a sixty-fourth of the
//! slots at a time, and the others' waits are as short. The keys are
//! hashes already, so the shards fill evenly. A small table (a small
//! budget, or a test's) is one shard, or a few, so that it is no larger
//! than one table would be.
//!
//! Memory: the shards hold about as many buckets as one table would, and
//! while one grows, its old buckets are held beside the new, a sixty-fourth
//! of what one table's growth holds. A shard that fills past its share
//! grows before the others: with the index at its most slots, the shards
//! above the mean, about half, hold twice their share of buckets, 1.5 times
//! one table's, which is what the index's budget allows for one table's
//! growth (see [`super::copies::CopyIndex::new`]).

use std::collections::HashMap;

use xxhash_rust::xxh3::Xxh3Builder;

use super::copies::Key;

/// Shards of a large table: a power of two, picked by the key's first
/// byte.
const MAX_SHARDS: usize = 64;

/// Slots per shard, at least, of a table bounded at a number of slots.
const MIN_SHARD_SLOTS: usize = 1 << 14;

pub(super) struct Shards<V> {
    shards: Vec<HashMap<Key, V, Xxh3Builder>>,
    len: usize,
}

impl<V> Default for Shards<V> {
    /// A table without a bound: every shard.
    fn default() -> Self {
        Shards::with(MAX_SHARDS)
    }
}

impl<V> Shards<V> {
    /// A table for at most about `max_slots` slots: a shard per
    /// [`MIN_SHARD_SLOTS`] of them, up to [`MAX_SHARDS`].
    pub(super) fn for_slots(max_slots: usize) -> Self {
        Shards::with((max_slots / MIN_SHARD_SLOTS).next_power_of_two().min(MAX_SHARDS))
    }

    fn with(count: usize) -> Self {
        Shards { shards: (0..count).map(|_| HashMap::default()).collect(), len: 0 }
    }

    fn index(&self, key: &Key) -> usize {
        // The count is a power of two.
        usize::from(key[0]) & (self.shards.len() - 1)
    }

    fn shard(&self, key: &Key) -> &HashMap<Key, V, Xxh3Builder> {
        &self.shards[self.index(key)]
    }

    fn shard_mut(&mut self, key: &Key) -> &mut HashMap<Key, V, Xxh3Builder> {
        let i = self.index(key);
        &mut self.shards[i]
    }

    /// Slots the shards have room for before any of them grows.
    #[cfg(test)]
    pub(super) fn capacity(&self) -> usize {
        self.shards.iter().map(HashMap::capacity).sum()
    }

    /// Slots held, in every shard.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn get(&self, key: &Key) -> Option<&V> {
        self.shard(key).get(key)
    }

    pub(super) fn get_mut(&mut self, key: &Key) -> Option<&mut V> {
        self.shard_mut(key).get_mut(key)
    }

    pub(super) fn contains_key(&self, key: &Key) -> bool {
        self.shard(key).contains_key(key)
    }

    pub(super) fn insert(&mut self, key: Key, value: V) {
        if self.shard_mut(&key).insert(key, value).is_none() {
            self.len += 1;
        }
    }

    /// Every slot, shard by shard (in no order that callers may rely on,
    /// as with one table).
    pub(super) fn iter(&self) -> impl Iterator<Item = (&Key, &V)> {
        self.shards.iter().flat_map(|s| s.iter())
    }

    pub(super) fn retain(&mut self, mut keep: impl FnMut(&Key, &mut V) -> bool) {
        for shard in &mut self.shards {
            shard.retain(|k, v| keep(k, v));
        }
        self.len = self.shards.iter().map(HashMap::len).sum();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u32) -> Key {
        let h = xxhash_rust::xxh3::xxh3_64(&i.to_le_bytes()).to_le_bytes();
        let mut k = [0; 12];
        k[..8].copy_from_slice(&h);
        k[8..].copy_from_slice(&i.to_le_bytes());
        k
    }

    /// The shards hold what one table holds, through inserts of new and
    /// held keys, changes in place and a retain, and count it.
    #[test]
    fn shards_hold_what_one_table_holds() {
        let mut shards = Shards::default();
        assert_eq!(shards.shards.len(), MAX_SHARDS);
        let mut one: HashMap<Key, u32> = HashMap::new();
        for i in 0..20_000u32 {
            let k = key(i % 15_000);
            shards.insert(k, i);
            one.insert(k, i);
            if i % 7 == 0 {
                *shards.get_mut(&k).unwrap() += 1;
                *one.get_mut(&k).unwrap() += 1;
            }
        }
        assert_eq!(shards.len(), one.len());
        shards.retain(|_, v| *v % 3 != 0);
        one.retain(|_, v| *v % 3 != 0);
        assert_eq!(shards.len(), one.len());
        let mut held: Vec<(Key, u32)> = shards.iter().map(|(k, v)| (*k, *v)).collect();
        let mut expected: Vec<(Key, u32)> = one.iter().map(|(k, v)| (*k, *v)).collect();
        held.sort_unstable();
        expected.sort_unstable();
        assert_eq!(held, expected);
        for i in 0..15_000 {
            let k = key(i);
            assert_eq!(shards.get(&k), one.get(&k));
            assert_eq!(shards.contains_key(&k), one.contains_key(&k));
        }
        // Every shard took some of the keys.
        assert!(shards.shards.iter().all(|s| !s.is_empty()));
    }

    #[test]
    fn a_small_table_is_one_shard_and_a_large_one_many() {
        assert_eq!(Shards::<u32>::for_slots(7).shards.len(), 1);
        assert_eq!(Shards::<u32>::for_slots(MIN_SHARD_SLOTS * 2).shards.len(), 2);
        assert_eq!(Shards::<u32>::for_slots(MIN_SHARD_SLOTS * 5).shards.len(), 8);
        assert_eq!(Shards::<u32>::for_slots(1 << 30).shards.len(), MAX_SHARDS);
    }
}
