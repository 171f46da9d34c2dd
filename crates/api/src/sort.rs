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
//!
//! [`go_sort_by`] is Go's `sort.Sort`/`sort.Slice` (pdqsort, unstable but deterministic: the
//! order of equal elements is a function of the input order), for the places where kubectl
//! prints what Go's unstable sort made of ties (`kubectl events`, describe's Events); it too
//! runs on indices through one non-generic function.

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

/// Go's `sort.Sort` (and `sort.Slice`, `slices.SortFunc`: the same pattern-defeating
/// quicksort generated from one template, zsortinterface.go / zsortfunc.go /
/// zsortanyfunc.go): an *unstable* sort whose order of equal elements is a deterministic
/// function of the input order, so where kubectl sorts with it (events by time, `--sort-by`)
/// ties come out exactly as kubectl prints them. `less(a, b)` is the Interface's `Less`.
///
/// The algorithm runs on a permutation of indices (one non-generic instantiation), which is
/// then applied: Go's algorithm only ever looks at `Less` results and positions, so sorting the
/// indices makes the same swaps.
pub fn go_sort_by<T>(v: &mut [T], mut less: impl FnMut(&T, &T) -> bool) {
    let n = v.len();
    if n < 2 {
        return;
    }
    let perm = {
        let items: &[T] = v;
        go_sort_permutation(n, &mut |a, b| less(&items[a], &items[b]))
    };
    apply_permutation(perm, &mut |a, b| v.swap(a, b));
}

/// [`go_sort_by`] with `Less` as "key(a) < key(b)".
pub fn go_sort_by_key<T, K: Ord>(v: &mut [T], mut key: impl FnMut(&T) -> K) {
    go_sort_by(v, |a, b| key(a) < key(b));
}

/// `sort.Sort` over the indices `0..n`: `p[k]` is the index of the element that ends at `k`.
#[inline(never)]
fn go_sort_permutation(n: usize, less: &mut dyn FnMut(usize, usize) -> bool) -> Vec<usize> {
    let mut data = GoData { idx: (0..n).collect(), less };
    // sort.Sort: limit = bits.Len(uint(n)).
    let limit = (usize::BITS - n.leading_zeros()) as isize;
    pdqsort(&mut data, 0, n as isize, limit);
    data.idx
}

/// sort.Interface over a permutation.
struct GoData<'a> {
    idx: Vec<usize>,
    less: &'a mut dyn FnMut(usize, usize) -> bool,
}

impl GoData<'_> {
    fn less(&mut self, i: isize, j: isize) -> bool {
        let (a, b) = (self.idx[i as usize], self.idx[j as usize]);
        (self.less)(a, b)
    }
    fn swap(&mut self, i: isize, j: isize) {
        self.idx.swap(i as usize, j as usize);
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum SortedHint {
    Unknown,
    Increasing,
    Decreasing,
}

/// insertionSort sorts data[a:b].
fn insertion_sort(data: &mut GoData, a: isize, b: isize) {
    let mut i = a + 1;
    while i < b {
        let mut j = i;
        while j > a && data.less(j, j - 1) {
            data.swap(j, j - 1);
            j -= 1;
        }
        i += 1;
    }
}

/// siftDown implements the heap property on data[lo:hi]; first is the heap's offset.
fn sift_down(data: &mut GoData, lo: isize, hi: isize, first: isize) {
    let mut root = lo;
    loop {
        let mut child = 2 * root + 1;
        if child >= hi {
            return;
        }
        if child + 1 < hi && data.less(first + child, first + child + 1) {
            child += 1;
        }
        if !data.less(first + root, first + child) {
            return;
        }
        data.swap(first + root, first + child);
        root = child;
    }
}

fn heap_sort(data: &mut GoData, a: isize, b: isize) {
    let (first, lo, hi) = (a, 0, b - a);
    let mut i = (hi - 1) / 2;
    while i >= 0 {
        sift_down(data, i, hi, first);
        i -= 1;
    }
    let mut i = hi - 1;
    while i >= 0 {
        data.swap(first, first + i);
        sift_down(data, lo, i, first);
        i -= 1;
    }
}

/// pdqsort sorts data[a:b]; limit is the number of bad pivots allowed before heapsort.
fn pdqsort(data: &mut GoData, mut a: isize, mut b: isize, mut limit: isize) {
    const MAX_INSERTION: isize = 12;
    let mut was_balanced = true;
    let mut was_partitioned = true;
    loop {
        let length = b - a;
        if length <= MAX_INSERTION {
            insertion_sort(data, a, b);
            return;
        }
        if limit == 0 {
            heap_sort(data, a, b);
            return;
        }
        if !was_balanced {
            break_patterns(data, a, b);
            limit -= 1;
        }
        let (mut pivot, mut hint) = choose_pivot(data, a, b);
        if hint == SortedHint::Decreasing {
            reverse_range(data, a, b);
            pivot = (b - 1) - (pivot - a);
            hint = SortedHint::Increasing;
        }
        if was_balanced && was_partitioned && hint == SortedHint::Increasing && partial_insertion_sort(data, a, b) {
            return;
        }
        if a > 0 && !data.less(a - 1, pivot) {
            a = partition_equal(data, a, b, pivot);
            continue;
        }
        let (mid, already_partitioned) = partition(data, a, b, pivot);
        was_partitioned = already_partitioned;
        let (left_len, right_len) = (mid - a, b - mid);
        let balance_threshold = length / 8;
        if left_len < right_len {
            was_balanced = left_len >= balance_threshold;
            pdqsort(data, a, mid, limit);
            a = mid + 1;
        } else {
            was_balanced = right_len >= balance_threshold;
            pdqsort(data, mid + 1, b, limit);
            b = mid;
        }
    }
}

/// partition does one quicksort partition around data[pivot]; returns the pivot's new index
/// and whether the range was already partitioned.
fn partition(data: &mut GoData, a: isize, b: isize, pivot: isize) -> (isize, bool) {
    data.swap(a, pivot);
    let (mut i, mut j) = (a + 1, b - 1);
    while i <= j && data.less(i, a) {
        i += 1;
    }
    while i <= j && !data.less(j, a) {
        j -= 1;
    }
    if i > j {
        data.swap(j, a);
        return (j, true);
    }
    data.swap(i, j);
    i += 1;
    j -= 1;
    loop {
        while i <= j && data.less(i, a) {
            i += 1;
        }
        while i <= j && !data.less(j, a) {
            j -= 1;
        }
        if i > j {
            break;
        }
        data.swap(i, j);
        i += 1;
        j -= 1;
    }
    data.swap(j, a);
    (j, false)
}

/// partitionEqual partitions data[a:b] into elements equal to data[pivot] followed by greater
/// ones (it assumes none is smaller).
fn partition_equal(data: &mut GoData, a: isize, b: isize, pivot: isize) -> isize {
    data.swap(a, pivot);
    let (mut i, mut j) = (a + 1, b - 1);
    loop {
        while i <= j && !data.less(a, i) {
            i += 1;
        }
        while i <= j && data.less(a, j) {
            j -= 1;
        }
        if i > j {
            break;
        }
        data.swap(i, j);
        i += 1;
        j -= 1;
    }
    i
}

/// partialInsertionSort partially sorts data[a:b]; true when it ends sorted. (Its leftward
/// shift runs down to index 1, not a+1, as upstream's does.)
fn partial_insertion_sort(data: &mut GoData, a: isize, b: isize) -> bool {
    const MAX_STEPS: usize = 5;
    const SHORTEST_SHIFTING: isize = 50;
    let mut i = a + 1;
    for _ in 0..MAX_STEPS {
        while i < b && !data.less(i, i - 1) {
            i += 1;
        }
        if i == b {
            return true;
        }
        if b - a < SHORTEST_SHIFTING {
            return false;
        }
        data.swap(i, i - 1);
        if i - a >= 2 {
            let mut j = i - 1;
            while j >= 1 {
                if !data.less(j, j - 1) {
                    break;
                }
                data.swap(j, j - 1);
                j -= 1;
            }
        }
        if b - i >= 2 {
            let mut j = i + 1;
            while j < b {
                if !data.less(j, j - 1) {
                    break;
                }
                data.swap(j, j - 1);
                j += 1;
            }
        }
    }
    false
}

/// breakPatterns scatters three elements with Go's xorshift seeded by the length.
fn break_patterns(data: &mut GoData, a: isize, b: isize) {
    let length = b - a;
    if length >= 8 {
        let mut random = length as u64;
        // nextPowerOfTwo: 1 << bits.Len(uint(length)).
        let modulus: u64 = 1 << (u64::BITS - (length as u64).leading_zeros());
        let mut idx = a + (length / 4) * 2 - 1;
        while idx <= a + (length / 4) * 2 + 1 {
            // xorshift.Next with go1.23's shifts (13, 17, 5), the Go kubectl v1.32 is built
            // with; the recorded vectors pin them.
            random ^= random << 13;
            random ^= random >> 17;
            random ^= random << 5;
            let mut other = (random & (modulus - 1)) as isize;
            if other >= length {
                other -= length;
            }
            data.swap(idx, a + other);
            idx += 1;
        }
    }
}

/// choosePivot: a static pivot below 8 elements, the median of three below 50, Tukey's
/// ninther above; the hint from how many swaps the medians needed.
fn choose_pivot(data: &mut GoData, a: isize, b: isize) -> (isize, SortedHint) {
    const SHORTEST_NINTHER: isize = 50;
    const MAX_SWAPS: usize = 4 * 3;
    let l = b - a;
    let mut swaps = 0usize;
    let mut i = a + l / 4;
    let mut j = a + l / 4 * 2;
    let mut k = a + l / 4 * 3;
    if l >= 8 {
        if l >= SHORTEST_NINTHER {
            i = median_adjacent(data, i, &mut swaps);
            j = median_adjacent(data, j, &mut swaps);
            k = median_adjacent(data, k, &mut swaps);
        }
        j = median(data, i, j, k, &mut swaps);
    }
    match swaps {
        0 => (j, SortedHint::Increasing),
        MAX_SWAPS => (j, SortedHint::Decreasing),
        _ => (j, SortedHint::Unknown),
    }
}

/// order2 returns (x, y) with data[x] <= data[y].
fn order2(data: &mut GoData, a: isize, b: isize, swaps: &mut usize) -> (isize, isize) {
    if data.less(b, a) {
        *swaps += 1;
        return (b, a);
    }
    (a, b)
}

/// median returns the index of the median of data[a], data[b], data[c].
fn median(data: &mut GoData, a: isize, b: isize, c: isize, swaps: &mut usize) -> isize {
    let (a, b) = order2(data, a, b, swaps);
    let (b, c) = order2(data, b, c, swaps);
    let (_a, b) = order2(data, a, b, swaps);
    let _ = c;
    b
}

/// medianAdjacent: the median of data[a-1], data[a], data[a+1].
fn median_adjacent(data: &mut GoData, a: isize, swaps: &mut usize) -> isize {
    median(data, a - 1, a, a + 1, swaps)
}

fn reverse_range(data: &mut GoData, a: isize, b: isize) {
    let (mut i, mut j) = (a, b - 1);
    while i < j {
        data.swap(i, j);
        i += 1;
        j -= 1;
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

    // The vectors: the permutations real kubectl (go1.23's sort.Sort) printed.
    /// Go's `sort.Sort` as kubectl v1.32 (go1.23.8) runs it: each case's keys were served as an
    /// EventList (event `i` with `lastTimestamp` = key `i` seconds, listed in index order) to real
    /// `kubectl events`, whose printed order is the expected permutation. Together they take
    /// every branch but the heapsort fallback: insertion sort, median of three, Tukey's ninther,
    /// partitionEqual, the decreasing hint's reversal, partialInsertionSort's shifts and
    /// breakPatterns' xorshift.
    const GO_SORT_VECTORS: &[(&str, &[u16], &[u16])] = &[
        ("13 elements, keys 0..3", &[1, 0, 3, 2, 1, 1, 3, 3, 1, 3, 2, 3, 2], &[1, 8, 4, 5, 0, 12, 3, 10, 6, 9, 7, 11, 2]),
        (
            "20 equal keys",
            &[7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7],
            &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19],
        ),
        (
            "50 elements, keys 0..4 (ninther pivot)",
            &[
                1, 2, 0, 2, 4, 1, 1, 1, 1, 1, 2, 4, 4, 1, 3, 1, 2, 2, 0, 2, 3, 1, 3, 4, 2, 4, 4, 4, 2, 2, 4, 2, 4, 0, 2, 3, 4, 4, 1, 3, 1, 1, 1, 3, 1, 3, 4, 3,
                4, 0,
            ],
            &[
                49, 33, 2, 18, 9, 21, 6, 7, 8, 38, 40, 41, 42, 13, 44, 15, 0, 5, 29, 19, 34, 17, 1, 16, 24, 10, 3, 31, 28, 43, 47, 45, 14, 22, 20, 35, 39, 23,
                37, 36, 32, 30, 27, 26, 25, 12, 46, 11, 48, 4,
            ],
        ),
        (
            "64 descending with ties (equal partitions)",
            &[
                15, 15, 15, 15, 15, 15, 15, 15, 14, 13, 13, 13, 13, 13, 13, 12, 12, 12, 12, 12, 12, 11, 11, 11, 11, 10, 10, 10, 9, 9, 8, 8, 8, 8, 7, 7, 6, 6,
                6, 5, 5, 5, 5, 5, 4, 4, 4, 4, 4, 4, 4, 4, 4, 3, 2, 2, 2, 2, 2, 1, 0, 0, 0, 0,
            ],
            &[
                63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 50, 44, 51, 52, 49, 48, 47, 46, 45, 43, 42, 41, 40, 39, 38, 37, 36, 34, 35, 32, 31, 33, 30, 29, 28,
                27, 26, 25, 21, 24, 23, 22, 17, 15, 19, 18, 20, 16, 10, 9, 13, 12, 11, 14, 8, 0, 7, 6, 5, 4, 3, 2, 1,
            ],
        ),
        (
            "64 descending, ties off the sampled positions (decreasing hint: reversed)",
            &[
                100, 100, 98, 97, 96, 95, 95, 93, 92, 91, 90, 89, 88, 87, 86, 85, 84, 83, 82, 81, 80, 80, 78, 77, 76, 75, 74, 73, 72, 71, 70, 69, 68, 67, 66,
                65, 64, 63, 62, 61, 60, 60, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43, 42, 41, 40, 40, 38, 37,
            ],
            &[
                63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43, 42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28,
                27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0,
            ],
        ),
        (
            "100 ascending with ties and three adjacent swaps",
            &[
                0, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 4, 4, 5, 5, 5, 5, 6, 7, 7, 7, 8, 8, 8, 8, 8, 9, 9, 9, 10, 10, 10, 11, 11, 11, 11, 11, 12, 12, 12, 12, 13,
                13, 13, 14, 14, 14, 14, 15, 16, 16, 16, 16, 16, 17, 17, 18, 18, 18, 18, 19, 20, 20, 21, 21, 21, 22, 22, 22, 22, 22, 23, 23, 23, 23, 24, 24, 24,
                24, 24, 24, 24, 24, 25, 25, 26, 26, 26, 26, 26, 27, 27, 27, 28, 29, 29, 29, 29, 29,
            ],
            &[
                0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37,
                38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73,
                74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99,
            ],
        ),
        (
            "100 ascending pairs with two out-of-order neighbours (partial insertion sort shifts)",
            &[
                0, 0, 1, 1, 2, 2, 3, 3, 4, 5, 4, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15, 16, 16, 17, 17, 18, 18, 19, 19, 20,
                20, 21, 21, 22, 22, 23, 23, 24, 24, 25, 25, 26, 26, 27, 27, 28, 28, 29, 29, 30, 30, 31, 31, 32, 32, 33, 33, 34, 35, 34, 35, 36, 36, 37, 37, 38,
                38, 39, 39, 40, 40, 41, 41, 42, 42, 43, 43, 44, 44, 45, 45, 46, 46, 47, 47, 48, 48, 49, 49,
            ],
            &[
                0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 9, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37,
                38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 70, 69, 71, 72, 73,
                74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99,
            ],
        ),
        (
            "200 elements, keys 0..9 (breakPatterns)",
            &[
                3, 3, 0, 1, 6, 5, 1, 9, 0, 4, 3, 3, 8, 2, 5, 0, 2, 3, 7, 4, 0, 8, 6, 8, 2, 4, 6, 2, 7, 9, 3, 9, 4, 7, 0, 8, 9, 5, 8, 0, 9, 7, 4, 4, 9, 0, 3, 8,
                9, 3, 0, 2, 4, 3, 3, 6, 1, 8, 2, 0, 7, 8, 3, 7, 1, 7, 7, 3, 3, 7, 5, 4, 6, 4, 2, 3, 6, 5, 8, 8, 4, 5, 3, 0, 1, 9, 2, 6, 1, 1, 7, 4, 5, 3, 7, 1,
                1, 5, 2, 5, 5, 0, 6, 5, 3, 0, 4, 3, 3, 2, 9, 2, 5, 3, 0, 9, 0, 2, 8, 5, 2, 0, 3, 2, 5, 4, 8, 5, 9, 5, 8, 9, 5, 4, 4, 5, 3, 7, 5, 6, 6, 5, 8, 1,
                4, 7, 2, 3, 7, 5, 3, 7, 4, 3, 7, 2, 4, 4, 6, 5, 4, 7, 4, 3, 4, 9, 0, 6, 3, 6, 0, 8, 9, 1, 5, 0, 6, 6, 1, 6, 9, 5, 7, 5, 8, 3, 6, 4, 8, 6, 9, 3,
                8, 1, 3, 1, 9, 8, 6, 5,
            ],
            &[
                116, 166, 2, 114, 45, 15, 34, 50, 8, 101, 170, 59, 175, 83, 39, 105, 20, 121, 56, 88, 6, 178, 84, 64, 143, 173, 193, 95, 89, 96, 195, 3, 51,
                27, 98, 109, 86, 111, 13, 16, 155, 117, 120, 74, 123, 24, 58, 146, 49, 10, 168, 147, 104, 53, 54, 150, 0, 1, 46, 30, 194, 136, 62, 93, 185,
                107, 108, 67, 68, 163, 122, 11, 17, 191, 82, 75, 113, 153, 71, 52, 164, 42, 43, 156, 73, 157, 160, 125, 80, 187, 162, 91, 133, 134, 106, 9, 19,
                144, 32, 25, 152, 99, 124, 103, 100, 97, 199, 92, 149, 37, 159, 5, 112, 81, 141, 14, 138, 77, 183, 119, 135, 174, 70, 181, 132, 129, 127, 179,
                177, 102, 176, 22, 55, 72, 26, 76, 169, 167, 186, 139, 140, 189, 4, 158, 87, 198, 66, 137, 148, 145, 94, 151, 90, 41, 154, 18, 182, 69, 60, 65,
                63, 161, 28, 33, 23, 79, 47, 197, 35, 61, 192, 171, 12, 188, 142, 78, 130, 184, 21, 126, 118, 57, 38, 172, 115, 180, 131, 36, 48, 165, 7, 40,
                128, 190, 85, 110, 196, 31, 44, 29,
            ],
        ),
        (
            "300 elements, keys 0..2 (equal partitions)",
            &[
                1, 1, 1, 2, 1, 2, 1, 2, 1, 2, 2, 2, 0, 1, 0, 0, 1, 0, 2, 0, 1, 0, 1, 2, 1, 0, 1, 1, 1, 0, 2, 0, 1, 0, 1, 0, 2, 1, 1, 0, 0, 0, 1, 1, 1, 1, 2, 0,
                2, 0, 0, 2, 2, 2, 2, 2, 0, 0, 2, 0, 0, 2, 0, 1, 2, 0, 2, 0, 2, 2, 0, 1, 1, 0, 1, 0, 2, 2, 1, 1, 0, 2, 1, 0, 1, 2, 1, 1, 2, 2, 1, 0, 1, 0, 0, 2,
                2, 1, 0, 0, 2, 2, 2, 1, 2, 0, 2, 1, 2, 0, 0, 2, 0, 0, 0, 1, 1, 1, 1, 1, 2, 0, 1, 1, 1, 2, 0, 0, 0, 2, 2, 1, 0, 0, 1, 2, 2, 1, 0, 2, 0, 0, 2, 2,
                1, 2, 0, 1, 1, 0, 2, 1, 2, 0, 1, 2, 0, 2, 2, 0, 1, 0, 2, 1, 0, 1, 0, 0, 0, 2, 1, 1, 2, 2, 0, 2, 0, 0, 2, 1, 1, 1, 2, 2, 0, 2, 1, 1, 2, 0, 1, 0,
                2, 1, 2, 1, 2, 1, 1, 1, 0, 1, 2, 1, 0, 1, 0, 1, 0, 2, 2, 0, 1, 1, 1, 1, 0, 0, 1, 2, 0, 0, 2, 0, 1, 0, 2, 1, 0, 2, 1, 2, 1, 0, 2, 2, 1, 0, 1, 0,
                1, 0, 2, 0, 2, 0, 2, 2, 2, 2, 0, 0, 0, 1, 0, 1, 2, 1, 1, 0, 1, 0, 2, 1, 0, 0, 0, 1, 1, 2, 0, 2, 1, 1, 2, 1, 2, 2, 0, 0, 0, 1, 2, 1, 2, 2, 1, 1,
                1, 2, 1, 1, 1, 0, 2, 1, 2, 2, 1, 2,
            ],
            &[
                98, 293, 280, 279, 278, 270, 266, 265, 264, 261, 259, 254, 12, 252, 14, 15, 251, 17, 250, 19, 245, 21, 243, 241, 239, 25, 237, 233, 228, 29,
                225, 31, 223, 33, 221, 35, 220, 217, 216, 39, 40, 41, 211, 208, 206, 204, 200, 47, 191, 49, 50, 189, 184, 177, 176, 174, 56, 57, 168, 59, 60,
                167, 62, 166, 164, 65, 161, 67, 159, 156, 70, 153, 149, 73, 146, 75, 141, 140, 138, 133, 80, 132, 128, 83, 127, 126, 121, 114, 113, 112, 110,
                91, 109, 93, 94, 105, 99, 151, 198, 298, 295, 1, 292, 103, 291, 290, 288, 107, 287, 92, 90, 286, 283, 281, 87, 115, 116, 117, 118, 119, 2, 86,
                122, 123, 124, 4, 275, 84, 82, 273, 272, 131, 268, 79, 134, 267, 6, 137, 78, 8, 263, 260, 258, 257, 144, 255, 74, 147, 148, 72, 253, 0, 13, 71,
                154, 16, 20, 22, 240, 24, 160, 238, 26, 163, 236, 165, 63, 27, 232, 230, 170, 171, 28, 227, 224, 32, 34, 218, 37, 179, 180, 181, 38, 215, 214,
                213, 186, 187, 212, 42, 190, 43, 207, 193, 44, 195, 205, 197, 97, 199, 45, 201, 203, 155, 52, 196, 194, 192, 48, 209, 210, 51, 188, 185, 152,
                183, 182, 178, 53, 219, 36, 54, 222, 175, 150, 30, 226, 173, 172, 229, 169, 231, 58, 61, 234, 235, 64, 162, 66, 68, 158, 23, 202, 157, 244, 69,
                246, 247, 248, 249, 18, 242, 46, 55, 11, 145, 256, 143, 142, 10, 76, 9, 262, 77, 139, 7, 136, 135, 81, 269, 5, 271, 130, 129, 274, 85, 276,
                277, 125, 3, 120, 88, 282, 89, 284, 285, 111, 108, 106, 289, 95, 104, 102, 101, 294, 100, 296, 297, 96, 299,
            ],
        ),
        (
            "150 sawtooth 0..6 (breakPatterns)",
            &[
                0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5,
                6, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4,
                5, 6, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3,
                4, 5, 6, 0, 1, 2,
            ],
            &[
                133, 84, 91, 77, 98, 0, 147, 7, 70, 63, 105, 56, 112, 49, 14, 119, 42, 35, 140, 126, 28, 21, 22, 43, 64, 134, 85, 1, 99, 29, 106, 8, 57, 127,
                92, 71, 36, 113, 148, 50, 141, 120, 15, 78, 142, 16, 72, 149, 114, 121, 79, 51, 93, 37, 65, 100, 23, 128, 58, 2, 107, 30, 135, 9, 86, 44, 38,
                101, 66, 10, 59, 143, 108, 73, 52, 115, 94, 3, 45, 122, 80, 17, 136, 31, 129, 87, 24, 74, 109, 4, 144, 11, 18, 81, 137, 95, 25, 130, 32, 123,
                39, 67, 102, 46, 88, 116, 53, 60, 117, 131, 110, 89, 54, 61, 5, 47, 145, 12, 82, 103, 138, 40, 68, 19, 124, 96, 26, 33, 75, 27, 118, 55, 132,
                34, 125, 20, 69, 76, 41, 139, 97, 13, 104, 83, 90, 62, 146, 6, 48, 111,
            ],
        ),
        (
            "120 organ pipe",
            &[
                0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37,
                38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46,
                45, 44, 43, 42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10,
                9, 8, 7, 6, 5, 4, 3, 2, 1, 0,
            ],
            &[
                0, 119, 1, 118, 2, 117, 3, 116, 4, 115, 5, 114, 6, 113, 7, 112, 8, 111, 110, 9, 10, 109, 11, 108, 12, 107, 13, 106, 105, 14, 104, 15, 103, 16,
                102, 17, 18, 101, 100, 19, 99, 20, 21, 98, 22, 97, 23, 96, 24, 95, 25, 94, 26, 93, 27, 92, 28, 91, 29, 90, 30, 89, 31, 88, 87, 32, 33, 86, 85,
                34, 84, 35, 36, 83, 37, 82, 38, 81, 39, 80, 79, 40, 78, 41, 77, 42, 76, 43, 75, 44, 74, 45, 73, 46, 47, 72, 71, 48, 49, 70, 69, 50, 51, 68, 67,
                52, 53, 66, 54, 65, 55, 64, 56, 63, 57, 62, 61, 58, 60, 59,
            ],
        ),
        (
            "500 elements, keys 0..39 (breakPatterns)",
            &[
                32, 22, 34, 2, 11, 35, 39, 11, 23, 16, 35, 2, 30, 12, 9, 3, 10, 14, 5, 17, 10, 4, 1, 21, 15, 39, 30, 15, 30, 0, 11, 9, 19, 25, 37, 0, 0, 24,
                27, 2, 12, 22, 37, 35, 33, 37, 18, 27, 7, 13, 33, 19, 17, 27, 26, 17, 16, 21, 7, 2, 7, 2, 35, 24, 3, 32, 37, 35, 8, 21, 10, 7, 6, 7, 0, 0, 39,
                16, 29, 29, 5, 6, 11, 29, 0, 39, 27, 22, 27, 13, 34, 9, 27, 36, 26, 23, 12, 15, 37, 19, 1, 9, 33, 34, 38, 22, 12, 29, 26, 37, 30, 12, 2, 32, 1,
                33, 21, 18, 28, 7, 25, 11, 32, 38, 1, 0, 7, 20, 18, 0, 4, 26, 6, 39, 29, 29, 3, 1, 7, 15, 36, 24, 1, 35, 4, 8, 4, 29, 21, 21, 8, 25, 34, 7, 32,
                25, 37, 5, 29, 24, 11, 23, 32, 32, 27, 5, 38, 13, 11, 14, 32, 3, 3, 9, 17, 27, 2, 29, 18, 21, 2, 6, 13, 2, 30, 8, 39, 33, 1, 19, 4, 31, 23, 31,
                8, 20, 38, 21, 16, 21, 38, 38, 19, 3, 27, 24, 33, 4, 4, 35, 18, 3, 20, 13, 19, 39, 19, 22, 2, 18, 9, 13, 3, 15, 5, 30, 29, 0, 18, 24, 11, 16,
                14, 17, 24, 27, 15, 0, 2, 7, 22, 8, 2, 0, 30, 19, 1, 24, 26, 1, 33, 33, 17, 18, 35, 11, 5, 32, 33, 13, 29, 34, 5, 0, 18, 5, 29, 13, 9, 30, 28,
                38, 20, 19, 36, 17, 16, 36, 23, 32, 21, 18, 13, 9, 20, 22, 13, 34, 31, 39, 20, 39, 8, 34, 19, 4, 27, 4, 29, 27, 23, 12, 5, 18, 38, 32, 15, 17,
                18, 26, 6, 33, 21, 29, 25, 12, 16, 11, 39, 35, 12, 29, 18, 1, 20, 18, 5, 36, 2, 32, 18, 27, 6, 27, 13, 36, 8, 5, 37, 13, 7, 24, 4, 6, 7, 8, 27,
                14, 33, 39, 23, 39, 29, 0, 25, 36, 6, 31, 39, 37, 13, 5, 10, 17, 29, 8, 8, 7, 6, 10, 1, 13, 20, 2, 1, 35, 22, 5, 34, 9, 8, 18, 19, 27, 22, 38,
                30, 19, 26, 38, 25, 38, 36, 22, 38, 19, 26, 9, 20, 29, 28, 34, 5, 10, 0, 30, 13, 20, 23, 2, 37, 28, 21, 6, 4, 9, 5, 9, 15, 37, 39, 18, 24, 1,
                14, 35, 19, 38, 39, 27, 28, 20, 39, 12, 16, 7, 27, 1, 37, 13, 9, 18, 2, 27, 23, 32, 17, 21, 15, 23, 29, 30, 28, 20, 16, 11, 20, 35, 38, 9, 28,
                6, 1, 5, 22, 34, 28, 24, 18, 13, 1, 7, 4, 0, 15, 9, 5, 33, 26, 2, 2, 3, 17, 19, 14, 27, 18, 31, 0, 19, 2, 8, 16, 7, 36, 10, 3, 35, 27, 0,
            ],
            &[
                29, 125, 75, 36, 473, 129, 237, 263, 227, 499, 404, 488, 353, 243, 74, 84, 35, 323, 249, 246, 370, 188, 22, 374, 462, 437, 142, 470, 100, 137,
                423, 124, 114, 59, 409, 176, 183, 242, 373, 39, 218, 480, 479, 3, 112, 442, 61, 238, 490, 11, 328, 180, 211, 172, 15, 136, 203, 496, 171, 222,
                481, 64, 472, 146, 342, 295, 144, 208, 190, 21, 297, 207, 130, 414, 18, 377, 337, 326, 416, 476, 80, 224, 302, 265, 402, 157, 256, 165, 463,
                262, 361, 132, 310, 181, 356, 413, 332, 343, 461, 81, 72, 368, 435, 58, 138, 71, 239, 471, 493, 344, 126, 48, 340, 73, 119, 367, 60, 153, 145,
                68, 292, 366, 345, 380, 150, 185, 365, 491, 336, 194, 241, 415, 91, 379, 220, 440, 14, 268, 101, 173, 417, 459, 475, 283, 31, 397, 362, 495,
                20, 70, 403, 369, 16, 317, 255, 230, 4, 82, 7, 455, 160, 121, 30, 168, 106, 320, 315, 13, 96, 433, 301, 40, 111, 267, 49, 286, 167, 213, 282,
                339, 406, 371, 182, 469, 89, 259, 439, 334, 221, 360, 17, 169, 347, 484, 232, 424, 306, 24, 97, 27, 448, 223, 236, 418, 139, 474, 56, 316, 77,
                276, 231, 454, 198, 434, 492, 9, 252, 363, 307, 446, 19, 55, 482, 174, 233, 275, 52, 325, 219, 117, 128, 281, 421, 46, 178, 330, 210, 468, 486,
                303, 228, 308, 264, 381, 253, 322, 441, 273, 202, 51, 32, 245, 294, 189, 426, 382, 387, 395, 216, 483, 489, 99, 214, 456, 290, 398, 407, 284,
                324, 453, 212, 431, 272, 127, 195, 372, 57, 447, 23, 179, 280, 197, 69, 148, 312, 412, 116, 199, 149, 376, 217, 1, 240, 384, 393, 285, 41, 105,
                87, 464, 278, 408, 300, 8, 449, 161, 444, 192, 95, 350, 229, 234, 422, 205, 341, 63, 247, 141, 159, 467, 37, 151, 354, 33, 120, 390, 155, 314,
                131, 396, 248, 388, 108, 478, 309, 94, 54, 88, 443, 429, 498, 383, 299, 53, 436, 204, 346, 164, 47, 86, 333, 175, 235, 485, 331, 38, 296, 92,
                270, 118, 460, 430, 452, 466, 411, 400, 266, 134, 399, 135, 313, 260, 147, 450, 364, 177, 352, 79, 298, 158, 107, 78, 321, 226, 83, 405, 110,
                225, 184, 12, 269, 244, 28, 26, 386, 451, 487, 191, 357, 288, 193, 162, 257, 445, 65, 305, 154, 0, 113, 279, 170, 163, 329, 122, 348, 50, 115,
                258, 477, 44, 250, 102, 206, 311, 251, 187, 378, 90, 401, 152, 261, 2, 465, 103, 287, 293, 10, 209, 43, 375, 62, 5, 319, 425, 67, 457, 254,
                497, 143, 355, 274, 494, 93, 277, 335, 392, 327, 140, 359, 42, 338, 438, 66, 45, 419, 410, 34, 98, 156, 109, 166, 394, 123, 104, 304, 385, 271,
                389, 201, 200, 196, 427, 458, 391, 186, 289, 351, 349, 420, 25, 76, 85, 358, 6, 133, 432, 318, 428, 215, 291,
            ],
        ),
    ];

    #[test]
    fn go_sort_matches_kubectl_on_recorded_vectors() {
        for (name, keys, want) in GO_SORT_VECTORS {
            let mut items: Vec<(u16, u16)> = keys.iter().enumerate().map(|(i, k)| (*k, i as u16)).collect();
            go_sort_by(&mut items, |a, b| a.0 < b.0);
            let got: Vec<u16> = items.iter().map(|x| x.1).collect();
            assert_eq!(&got[..], *want, "{name}");
        }
    }

    // sort_test.go TestSortLarge_Random-style properties: the result is sorted and a
    // permutation of the input, for lengths across the branches (insertion, median of three,
    // ninther) and key ranges from all-equal to all-distinct.
    #[test]
    fn go_sort_sorts() {
        for seed in 0..20u64 {
            for &len in &[0usize, 1, 2, 12, 13, 49, 50, 51, 257, 1000] {
                for &keys in &[1u64, 3, 100, 1_000_000] {
                    let original = data(len, keys, seed);
                    let mut got = original.clone();
                    go_sort_by_key(&mut got, |x| x.0);
                    assert!(got.windows(2).all(|w| w[0].0 <= w[1].0), "seed {seed} len {len}");
                    let mut a = got.clone();
                    a.sort();
                    let mut b = original;
                    b.sort();
                    assert_eq!(a, b);
                }
            }
        }
    }
}
