//! Union-find over documents (or over any numbered nodes): the components
//! of the Overlap graph ([`super::links`]), the report's mirror sets and
//! `eval`'s clusters.

/// Union-find with union by size and path halving.
#[derive(Clone, Debug, Default)]
pub struct UnionFind {
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl UnionFind {
    pub fn new(n: usize) -> UnionFind {
        UnionFind { parent: (0..n as u32).collect(), size: vec![1; n] }
    }

    /// Adds a node alone in its set; returns its number.
    pub fn add(&mut self) -> u32 {
        let x = self.parent.len() as u32;
        self.parent.push(x);
        self.size.push(1);
        x
    }

    pub fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let grand = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = grand;
            x = grand;
        }
        x
    }

    pub fn union(&mut self, a: u32, b: u32) {
        let (mut a, mut b) = (self.find(a), self.find(b));
        if a == b {
            return;
        }
        if self.size[a as usize] < self.size[b as usize] {
            std::mem::swap(&mut a, &mut b);
        }
        self.parent[b as usize] = a;
        self.size[a as usize] += self.size[b as usize];
    }

    /// The size of `x`'s component.
    #[cfg(test)]
    pub fn size_of(&mut self, x: u32) -> u32 {
        let r = self.find(x);
        self.size[r as usize]
    }

    /// Each node's component, named by its smallest number (a name that
    /// does not depend on the order of unions): the reference the link
    /// pass is tested against.
    #[cfg(test)]
    pub fn labels(mut self) -> Vec<u32> {
        let n = self.parent.len();
        let mut smallest = vec![u32::MAX; n];
        let mut label = vec![0u32; n];
        for d in 0..n as u32 {
            let r = self.find(d) as usize;
            if smallest[r] == u32::MAX {
                smallest[r] = d;
            }
            label[d as usize] = smallest[r];
        }
        label
    }
}

/// The documents in each component, indexed by its label (0 for a row
/// that labels no component).
#[cfg(test)]
pub fn sizes(label: &[u32]) -> Vec<u32> {
    let mut size = vec![0u32; label.len()];
    for &l in label {
        size[l as usize] += 1;
    }
    size
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_find_labels_by_smallest_doc() {
        let mut uf = UnionFind::new(6);
        uf.union(4, 2);
        uf.union(5, 4);
        uf.union(1, 3);
        assert_eq!(uf.size_of(5), 3);
        assert_eq!(uf.size_of(0), 1);
        assert_eq!(uf.labels(), vec![0, 1, 2, 1, 2, 2]);
    }
}
