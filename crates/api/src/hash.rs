//! The one stable hash every component uses: FNV-1a (Fowler–Noll–Vo), 32 and 64 bit.
//!
//! Stable means: the same bytes give the same value on every platform and in every run, unlike
//! `std`'s `DefaultHasher`, whose output is unspecified. Upstream's `controller.ComputeHash`
//! uses FNV-32a (`hash/fnv`), which is why these are the hashes kubesim standardises on.

/// FNV-1a 64-bit offset basis.
const FNV64_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
/// FNV-1a 64-bit prime.
const FNV64_PRIME: u64 = 0x0000_0100_0000_01b3;
/// FNV-1a 32-bit offset basis.
const FNV32_OFFSET: u32 = 0x811c_9dc5;
/// FNV-1a 32-bit prime.
const FNV32_PRIME: u32 = 0x0100_0193;

/// Lower-case hex of `bytes` (Go's `hex.EncodeToString`), written digit by digit: ids are
/// minted for every container and sandbox.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

/// FNV-1a, 32 bit (Go's `fnv.New32a`).
pub fn fnv32a(data: &[u8]) -> u32 {
    data.iter().fold(FNV32_OFFSET, |hash, byte| (hash ^ *byte as u32).wrapping_mul(FNV32_PRIME))
}

/// FNV-1a, 64 bit (Go's `fnv.New64a`).
pub fn fnv64a(data: &[u8]) -> u64 {
    Fnv64::new().bytes(data).finish()
}

/// A streaming FNV-1a 64-bit hasher, for hashing several parts without concatenating them.
#[derive(Clone, Copy, Debug)]
pub struct Fnv64(u64);

impl Default for Fnv64 {
    fn default() -> Self {
        Fnv64::new()
    }
}

impl Fnv64 {
    /// A hasher at the offset basis.
    pub fn new() -> Fnv64 {
        Fnv64(FNV64_OFFSET)
    }
    /// Feeds bytes.
    pub fn bytes(mut self, data: &[u8]) -> Fnv64 {
        for byte in data {
            self.0 = (self.0 ^ *byte as u64).wrapping_mul(FNV64_PRIME);
        }
        self
    }
    /// Feeds one byte.
    pub fn byte(self, byte: u8) -> Fnv64 {
        self.bytes(&[byte])
    }
    /// The hash so far.
    pub fn finish(self) -> u64 {
        self.0
    }
}

/// A hasher with fixed keys: hashing (and iteration order for equal insertion sequences) is
/// the same in every run and on every platform. The Fx multiply-rotate hash (rustc's): the
/// maps it serves (the scheduler's label counts, the store's leases) are keyed by names and
/// label values from the cluster's own objects and looked up on hot paths, where SipHash's
/// flood resistance buys nothing. Iteration order of such a map must never reach behaviour:
/// use it for point lookups only.
pub type FixedState = std::hash::BuildHasherDefault<FxHasher>;

/// The Fx hash (as `rustc-hash`), 64-bit.
#[derive(Clone, Copy, Debug, Default)]
pub struct FxHasher {
    hash: u64,
}

const FX_SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(FX_SEED);
    }
}

impl std::hash::Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    fn finish(&self) -> u64 {
        self.hash
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The FNV reference vectors (draft-eastlake-fnv, Go's hash/fnv fnv_test.go golden32a/golden64a).
    #[test]
    fn fnv_matches_the_reference_vectors_of_go_hash_fnv() {
        let cases32: &[(&str, u32)] = &[("", 0x811c9dc5), ("a", 0xe40c292c), ("ab", 0x4d2505ca), ("abc", 0x1a47e90b)];
        for (input, want) in cases32 {
            assert_eq!(fnv32a(input.as_bytes()), *want, "fnv32a({input:?})");
        }
        let cases64: &[(&str, u64)] = &[("", 0xcbf29ce484222325), ("a", 0xaf63dc4c8601ec8c), ("ab", 0x089c4407b545986a), ("abc", 0xe71fa2190541574b)];
        for (input, want) in cases64 {
            assert_eq!(fnv64a(input.as_bytes()), *want, "fnv64a({input:?})");
        }
    }

    // Go's encoding/hex TestEncode vectors.
    #[test]
    fn hex_matches_go_encoding_hex() {
        let cases: &[(&[u8], &str)] =
            &[(b"", ""), (&[0x01, 0xff], "01ff"), (&[0, 1, 2, 3, 4, 5, 6, 7], "0001020304050607"), (&[0xe0, 0xf0, 0xfa, 0xff], "e0f0faff"), (b"g", "67")];
        for (input, want) in cases {
            assert_eq!(hex(input), *want);
        }
    }

    #[test]
    fn streaming_equals_one_shot() {
        assert_eq!(Fnv64::new().bytes(b"ab").bytes(b"c").finish(), fnv64a(b"abc"));
        assert_eq!(Fnv64::new().byte(b'a').finish(), fnv64a(b"a"));
    }
}
