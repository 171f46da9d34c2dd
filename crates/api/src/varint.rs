//! LEB128 variable-length integers (protobuf's varint): seven bits per byte, low bits first,
//! the high bit set on every byte but the last. Small numbers take one byte.

/// Appends `value`.
pub fn put(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Reads the varint at `*pos`, moving `*pos` past it; `None` if the data ends inside it or it
/// runs over ten bytes.
pub fn get(data: &[u8], pos: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *data.get(*pos)?;
        *pos += 1;
        value |= u64::from(b & 0x7F) << shift;
        if b & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values round-trip; one byte up to 127, ten for the largest.
    #[test]
    fn varints_round_trip() {
        for (value, len) in [(0u64, 1usize), (1, 1), (127, 1), (128, 2), (300, 2), (16_383, 2), (16_384, 3), (u64::MAX, 10)] {
            let mut out = Vec::new();
            put(&mut out, value);
            assert_eq!(out.len(), len, "{value}");
            let mut pos = 0;
            assert_eq!(get(&out, &mut pos), Some(value));
            assert_eq!(pos, len);
        }
        assert_eq!(get(&[0x80], &mut 0), None, "truncated");
        assert_eq!(get(&[0xFF; 11], &mut 0), None, "too long");
        let mut pos = 0;
        assert_eq!(get(&[0x96, 0x01], &mut pos), Some(150), "protobuf's own example");
    }
}
