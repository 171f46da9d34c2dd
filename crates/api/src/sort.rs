//! Stable slice sorts that cost one sort instantiation on wasm32 instead of one per call site.
//!
//! Why: std's stable sort (`core::slice::sort::stable::{quicksort, drift, smallsort}`) is
//! monomorphized for every element type *and* comparator closure, and each copy is roughly 4 KB of
//! wasm. With ~80 call sites across the model crates that was ~300 KB of the pre-opt bundle.
//!
//! How: on `target_arch = "wasm32"` every call goes through [`sort_by_permutation`], which asks
//! one non-generic function (`sorted_permutation`) to stable-sort the indices `0..n` with a
//! `&mut dyn FnMut(usize, usize) -> Ordering` comparator, and then applies that permutation in
//! place with cycle-following swaps (another non-generic function driving a `dyn` swap). The only
//! per-call-site code left is a couple of tiny closures. On every other target these functions
//! are plain forwards to the std methods (`slice::sort_by` etc.), so native speed is unchanged.
//!
//! Behaviour is identical on both paths: both are *stable* sorts driven by the same comparator, so
//! they produce the same order (equal elements keep their original relative order). Use these
//! instead of the slice methods in model code; there is deliberately no `sort_unstable` here, so
//! results never depend on the target.

use std::cmp::Ordering;

/// Stable sort of `v` by `cmp`, like [`slice::sort_by`].
pub fn sort_by<T>(v: &mut [T], mut cmp: impl FnMut(&T, &T) -> Ordering) {
    #[cfg(target_arch = "wasm32")]
    sort_by_permutation(v, &mut cmp);
    #[cfg(not(target_arch = "wasm32"))]
    v.sort_by(&mut cmp);
}

/// Stable sort of `v` by the key `key` extracts, like [`slice::sort_by_key`] (the key is
/// recomputed per comparison, as there).
pub fn sort_by_key<T, K: Ord>(v: &mut [T], mut key: impl FnMut(&T) -> K) {
    #[cfg(target_arch = "wasm32")]
    sort_by_permutation(v, &mut |a: &T, b: &T| key(a).cmp(&key(b)));
    #[cfg(not(target_arch = "wasm32"))]
    v.sort_by_key(&mut key);
}

/// Stable sort of `v` in ascending order, like [`slice::sort`].
pub fn sort<T: Ord>(v: &mut [T]) {
    #[cfg(target_arch = "wasm32")]
    sort_by_permutation(v, &mut |a: &T, b: &T| a.cmp(b));
    #[cfg(not(target_arch = "wasm32"))]
    v.sort();
}

/// The wasm32 path, available on every target so it is tested natively: stable-sorts `v` by
/// `cmp` via the non-generic index sort, then permutes `v` in place.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub(crate) fn sort_by_permutation<T>(v: &mut [T], cmp: &mut dyn FnMut(&T, &T) -> Ordering) {
    let n = v.len();
    if n < 2 {
        return;
    }
    let perm = {
        let items: &[T] = v;
        sorted_permutation(n, &mut |a, b| cmp(&items[a], &items[b]))
    };
    apply_permutation(perm, &mut |a, b| v.swap(a, b));
}

/// The single std stable-sort instantiation: `p` with `p[k]` = the index of the element that
/// belongs at position `k` (ties keep index order, i.e. stability).
#[inline(never)]
fn sorted_permutation(n: usize, cmp: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_by(|a, b| cmp(*a, *b));
    idx
}

/// Rearranges a sequence so that `new[k] = old[perm[k]]`, using only `swap(i, j)`: each cycle of
/// the permutation is followed from its smallest index, one swap per moved element. `perm` is
/// consumed as the visited set (`perm[j] = j` once position `j` is final).
#[inline(never)]
fn apply_permutation(mut perm: Vec<usize>, swap: &mut dyn FnMut(usize, usize)) {
    for start in 0..perm.len() {
        let mut j = start;
        loop {
            let next = perm[j];
            perm[j] = j;
            if next == start {
                break;
            }
            // Invariant: `j` holds old[start] and the cycle's later indices still hold their old
            // values. The swap puts old[next] = old[perm[j]] at `j` and carries old[start] on to
            // `next`; when the cycle closes (`next == start`, above) `j` already holds what it
            // needs.
            swap(j, next);
            j = next;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unnecessary_sort_by)] // `sort_by` is the std call under comparison
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift64*), so the tests need no dependencies.
    fn rng(seed: u64) -> impl FnMut() -> u64 {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        move || {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            s.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
    }

    /// (key with many duplicates, original position) pairs.
    fn data(len: usize, distinct_keys: u64, seed: u64) -> Vec<(u64, usize)> {
        let mut next = rng(seed);
        (0..len).map(|i| (next() % distinct_keys, i)).collect()
    }

    #[test]
    fn permutation_path_matches_std_stable_sort() {
        for seed in 0..40u64 {
            for &len in &[0usize, 1, 2, 3, 7, 20, 21, 33, 64, 100, 257, 1000] {
                for &keys in &[1u64, 2, 3, 10, 1000] {
                    let original = data(len, keys, seed);
                    let mut expected = original.clone();
                    expected.sort_by(|a, b| a.0.cmp(&b.0));
                    let mut got = original.clone();
                    sort_by_permutation(&mut got, &mut |a, b| a.0.cmp(&b.0));
                    assert_eq!(got, expected, "seed {seed} len {len} keys {keys}");
                    // Stability, checked directly: equal keys keep ascending original positions.
                    assert!(got.windows(2).all(|w| w[0].0 < w[1].0 || (w[0].0 == w[1].0 && w[0].1 < w[1].1)));
                }
            }
        }
    }

    #[test]
    fn permutation_path_descending_and_non_copy_elements() {
        let mut next = rng(7);
        let original: Vec<(String, u32)> = (0..300).map(|i| (format!("k{}", next() % 17), i)).collect();
        let mut expected = original.clone();
        expected.sort_by(|a, b| b.0.cmp(&a.0));
        let mut got = original;
        sort_by_permutation(&mut got, &mut |a, b| b.0.cmp(&a.0));
        assert_eq!(got, expected);
    }

    #[test]
    fn permutation_path_on_sorted_and_reversed_input() {
        let asc: Vec<u32> = (0..500).collect();
        let mut got = asc.clone();
        sort_by_permutation(&mut got, &mut |a, b| a.cmp(b));
        assert_eq!(got, asc);
        let mut rev: Vec<u32> = asc.iter().rev().copied().collect();
        sort_by_permutation(&mut rev, &mut |a, b| a.cmp(b));
        assert_eq!(rev, asc);
    }

    #[test]
    fn apply_permutation_moves_every_element_once() {
        let mut next = rng(3);
        for len in 0..60usize {
            // A random permutation (Fisher-Yates) of 0..len.
            let mut perm: Vec<usize> = (0..len).collect();
            for i in (1..len).rev() {
                perm.swap(i, (next() % (i as u64 + 1)) as usize);
            }
            let old: Vec<usize> = (100..100 + len).collect();
            let mut v = old.clone();
            apply_permutation(perm.clone(), &mut |a, b| v.swap(a, b));
            let want: Vec<usize> = perm.iter().map(|&p| old[p]).collect();
            assert_eq!(v, want);
        }
    }

    #[test]
    fn public_helpers_match_std() {
        let original = data(500, 13, 99);
        let mut a = original.clone();
        let mut b = original.clone();
        sort_by_key(&mut a, |x| x.0);
        b.sort_by_key(|x| x.0);
        assert_eq!(a, b);
        let mut a = original.clone();
        let mut b = original.clone();
        sort(&mut a);
        b.sort();
        assert_eq!(a, b);
        let mut a = original.clone();
        let mut b = original;
        sort_by(&mut a, |x, y| y.0.cmp(&x.0));
        b.sort_by(|x, y| y.0.cmp(&x.0));
        assert_eq!(a, b);
    }
}
