//! Near-replica groups: connected components of the graph whose nodes are
//! documents and whose links are exact copies (a document to its center)
//! and Overlap-table pairs (F >= T), found by union-find over the centers
//! with pairs as the table is streamed once ([`super::links`]).
//!
//! Components are transitive, so a chain A~B~C~D puts A and D together
//! although they share nothing. To show where that happens, every
//! component's graph of exact-group centers is measured: its pairs, its
//! edge density, and, where it is small enough to search, its diameter.

/// Components of up to this many centers get their diameter measured by
/// breadth-first search from every center.
pub const DIAMETER_MAX_CENTERS: u64 = 2000;
/// ... and only while the search costs at most this many steps
/// (centers x (centers + pairs)).
pub const DIAMETER_MAX_STEPS: u64 = 50_000_000;
/// Where the diameter is not measured, a component is flagged as chained
/// when fewer than this fraction of its center pairs are linked.
pub const CHAIN_DENSITY: f64 = 0.5;

/// Whether a component's diameter is worth measuring.
pub fn diameter_measurable(centers: u64, pairs: u64) -> bool {
    centers <= DIAMETER_MAX_CENTERS && centers.saturating_mul(centers + pairs) <= DIAMETER_MAX_STEPS
}

/// The diameter of a connected graph on `n` nodes (local indices) with the
/// given undirected edges: the largest shortest-path distance between two
/// nodes. 0 for one node.
///
/// Breadth-first searches from 64 nodes run at once, a bit per search in
/// one word per node: each step takes, for every node, the union of its
/// neighbours' frontiers, so a group of diameter d costs d + 1 sweeps of
/// the edges per 64 nodes. A search from every node one at a time was 8%
/// of the report's instructions on a 65,389-document crawl whose largest
/// groups have hundreds of centers and diameters of 2 to 4.
pub fn diameter(n: usize, edges: &[(u32, u32)]) -> u32 {
    if n <= 1 {
        return 0;
    }
    if edges.len() as u64 == (n as u64) * (n as u64 - 1) / 2 {
        return 1;
    }
    let mut degree = vec![0u32; n + 1];
    for &(a, b) in edges {
        degree[a as usize + 1] += 1;
        degree[b as usize + 1] += 1;
    }
    for i in 0..n {
        degree[i + 1] += degree[i];
    }
    let start = degree.clone();
    let mut fill = degree;
    let mut adj = vec![0u32; edges.len() * 2];
    for &(a, b) in edges {
        adj[fill[a as usize] as usize] = b;
        fill[a as usize] += 1;
        adj[fill[b as usize] as usize] = a;
        fill[b as usize] += 1;
    }
    let mut best = 0;
    // Per node: the searches that have reached it, and those that reached
    // it in the last step (and so go on from it in the next).
    let mut seen = vec![0u64; n];
    let mut frontier = vec![0u64; n];
    let mut next = vec![0u64; n];
    for first in (0..n).step_by(64) {
        let searches = (n - first).min(64);
        let all = u64::MAX >> (64 - searches);
        seen.fill(0);
        frontier.fill(0);
        for i in 0..searches {
            seen[first + i] = 1 << i;
            frontier[first + i] = 1 << i;
        }
        let mut steps = 0;
        loop {
            let mut moved = false;
            for v in 0..n {
                if seen[v] == all {
                    next[v] = 0;
                    continue;
                }
                let reached = adj[start[v] as usize..start[v + 1] as usize]
                    .iter()
                    .fold(0u64, |r, &u| r | frontier[u as usize]);
                let new = reached & !seen[v];
                seen[v] |= new;
                next[v] = new;
                moved |= new != 0;
            }
            if !moved {
                break;
            }
            steps += 1;
            std::mem::swap(&mut frontier, &mut next);
        }
        best = best.max(steps);
    }
    best
}

/// The chaining rule: a component is chained when two of its centers are
/// more than two links apart (neither linked nor sharing a neighbor, the
/// A~B~C~D pattern), or, where the diameter was not measured, when fewer
/// than [`CHAIN_DENSITY`] of its center pairs are linked.
pub fn chained(centers: u64, pairs: u64, diameter: Option<u32>) -> bool {
    match diameter {
        Some(d) => d > 2,
        None => density(centers, pairs) < CHAIN_DENSITY,
    }
}

/// Linked center pairs over all center pairs (1 for a single center).
pub fn density(centers: u64, pairs: u64) -> f64 {
    if centers < 2 {
        return 1.0;
    }
    pairs as f64 / (centers as f64 * (centers as f64 - 1.0) / 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diameters() {
        assert_eq!(diameter(1, &[]), 0);
        assert_eq!(diameter(3, &[(0, 1), (0, 2), (1, 2)]), 1);
        // A star: every pair within two links.
        assert_eq!(diameter(4, &[(0, 1), (0, 2), (0, 3)]), 2);
        // A chain A~B~C~D.
        assert_eq!(diameter(4, &[(0, 1), (1, 2), (2, 3)]), 3);
    }

    /// The diameter by a breadth-first search from every node.
    fn by_single_searches(n: usize, edges: &[(u32, u32)]) -> u32 {
        let mut adj = vec![Vec::new(); n];
        for &(a, b) in edges {
            adj[a as usize].push(b as usize);
            adj[b as usize].push(a as usize);
        }
        let mut best = 0;
        for source in 0..n {
            let mut dist = vec![u32::MAX; n];
            dist[source] = 0;
            let mut queue = std::collections::VecDeque::from([source]);
            while let Some(x) = queue.pop_front() {
                best = best.max(dist[x]);
                for &y in &adj[x] {
                    if dist[y] == u32::MAX {
                        dist[y] = dist[x] + 1;
                        queue.push_back(y);
                    }
                }
            }
        }
        best
    }

    #[test]
    fn diameters_of_random_graphs_equal_single_searches() {
        let mut rng = crate::testing::XorShift::new(0x9e37_79b9_7f4a_7c15);
        let mut next = |m: usize| rng.below(m as u64) as usize;
        for case in 0..300 {
            // Around the 64-node blocks, sparse to dense, chains and
            // stars, some not connected.
            let n = [1, 2, 3, 63, 64, 65, 127, 129, 200][case % 9] + next(3);
            let mut edges = std::collections::BTreeSet::new();
            for i in 1..n {
                match case % 4 {
                    0 => edges.insert(((i - 1) as u32, i as u32)),
                    1 => edges.insert((next(i) as u32, i as u32)),
                    _ => false,
                };
            }
            for _ in 0..next(3 * n + 1) {
                let (a, b) = (next(n), next(n));
                if a != b {
                    edges.insert((a.min(b) as u32, a.max(b) as u32));
                }
            }
            let edges: Vec<(u32, u32)> = edges.into_iter().collect();
            assert_eq!(diameter(n, &edges), by_single_searches(n, &edges), "case {case}: {n} nodes");
        }
    }

    #[test]
    fn chaining_rule() {
        assert!(!chained(4, 3, Some(2)));
        assert!(chained(4, 3, Some(3)));
        assert!(chained(10_000, 9_999, None));
        assert!(!chained(3000, 3000 * 2999 / 2, None));
        assert_eq!(density(1, 0), 1.0);
        assert_eq!(density(4, 3), 0.5);
    }
}
