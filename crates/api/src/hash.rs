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

    #[test]
    fn streaming_equals_one_shot() {
        assert_eq!(Fnv64::new().bytes(b"ab").bytes(b"c").finish(), fnv64a(b"abc"));
        assert_eq!(Fnv64::new().byte(b'a').finish(), fnv64a(b"a"));
    }
}
