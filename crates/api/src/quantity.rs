//! Resource quantities (`100m`, `8Gi`, `1.5`, `2e3`) as exact integers, following
//! apimachinery's resource.Quantity: values are rounded *up* to the unit asked for.

/// A parse failure, with the upstream message shape.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")]
pub struct QuantityError;

/// Parses a quantity into thousandths of its unit (millicores for cpu, millibytes for memory),
/// rounding up as `Quantity.MilliValue()` does.
pub fn parse_milli(text: &str) -> Result<i128, QuantityError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(QuantityError);
    }
    let (sign, rest) = match text.as_bytes()[0] {
        b'-' => (-1i128, &text[1..]),
        b'+' => (1, &text[1..]),
        _ => (1, text),
    };
    let number_end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(number_end);
    if number.is_empty() || number == "." || number.matches('.').count() > 1 {
        return Err(QuantityError);
    }
    let (int_part, frac_part) = number.split_once('.').unwrap_or((number, ""));
    // value = digits × 10^(exp10) × 2^(exp2)
    let mut digits: i128 = 0;
    for c in int_part.chars().chain(frac_part.chars()) {
        digits = digits.checked_mul(10).and_then(|d| d.checked_add((c as u8 - b'0') as i128)).ok_or(QuantityError)?;
    }
    let mut exp10: i32 = -(frac_part.len() as i32);
    let mut exp2: u32 = 0;
    match suffix {
        "" => {}
        "n" => exp10 -= 9,
        "u" => exp10 -= 6,
        "m" => exp10 -= 3,
        "k" => exp10 += 3,
        "M" => exp10 += 6,
        "G" => exp10 += 9,
        "T" => exp10 += 12,
        "P" => exp10 += 15,
        "E" => exp10 += 18,
        "Ki" => exp2 = 10,
        "Mi" => exp2 = 20,
        "Gi" => exp2 = 30,
        "Ti" => exp2 = 40,
        "Pi" => exp2 = 50,
        "Ei" => exp2 = 60,
        s if s.starts_with(['e', 'E']) => {
            let e: i32 = s[1..].parse().map_err(|_| QuantityError)?;
            if !(-30..=30).contains(&e) {
                return Err(QuantityError);
            }
            exp10 += e;
        }
        _ => return Err(QuantityError),
    }
    // Milli-units: multiply by 1000.
    exp10 += 3;
    let mut value = digits.checked_mul(1i128 << exp2).ok_or(QuantityError)?;
    if exp10 >= 0 {
        value = value.checked_mul(10i128.checked_pow(exp10 as u32).ok_or(QuantityError)?).ok_or(QuantityError)?;
    } else {
        let divisor = 10i128.checked_pow((-exp10) as u32).unwrap_or(i128::MAX);
        value = (value + divisor - 1) / divisor; // round up, as MilliValue does
    }
    Ok(sign * value)
}

/// Parses a quantity into whole units, rounding up (`Quantity.Value()`).
pub fn parse_value(text: &str) -> Result<i128, QuantityError> {
    let milli = parse_milli(text)?;
    Ok(if milli >= 0 { (milli + 999) / 1000 } else { milli / 1000 })
}

/// Formats millicores the way kubectl prints cpu (`250m`, `2`).
pub fn format_cpu_milli(milli: i128) -> String {
    if milli % 1000 == 0 {
        format!("{}", milli / 1000)
    } else {
        format!("{milli}m")
    }
}

/// Formats bytes with the largest exact binary suffix (`8Gi`, `500Mi`, `1234`).
pub fn format_bytes(bytes: i128) -> String {
    for (suffix, shift) in [("Ei", 60), ("Pi", 50), ("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10)] {
        let unit = 1i128 << shift;
        if bytes != 0 && bytes % unit == 0 {
            return format!("{}{}", bytes / unit, suffix);
        }
    }
    bytes.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    // Mirrors apimachinery/pkg/api/resource/quantity_test.go (TestQuantityParse, MilliValue rounding).
    #[test]
    fn parses_quantities_like_apimachinery() {
        let cases: &[(&str, i128)] = &[
            ("100m", 100),
            ("1", 1000),
            ("0.5", 500),
            ("1.5", 1500),
            ("2e3", 2_000_000),
            ("1k", 1_000_000),
            ("1Ki", 1_024_000),
            ("8Gi", 8 * (1 << 30) * 1000),
            ("200Mi", 200 * (1 << 20) * 1000),
            ("1n", 1), // rounds up
            ("1u", 1),
            ("0", 0),
            ("-100m", -100),
            ("128974848", 128_974_848_000),
            ("129e6", 129_000_000_000),
            ("123Mi", 123 * (1 << 20) * 1000),
        ];
        for (text, want) in cases {
            assert_eq!(parse_milli(text), Ok(*want), "{text}");
        }
        for bad in ["", "abc", "1.2.3", "1Zi", "m", "."] {
            assert_eq!(parse_milli(bad), Err(QuantityError), "{bad}");
        }
        assert_eq!(parse_value("100m"), Ok(1));
        assert_eq!(parse_value("2Gi"), Ok(2 * (1 << 30)));
    }

    #[test]
    fn formats_like_kubectl() {
        assert_eq!(format_cpu_milli(250), "250m");
        assert_eq!(format_cpu_milli(4000), "4");
        assert_eq!(format_bytes(8 << 30), "8Gi");
        assert_eq!(format_bytes(1000), "1000");
    }
}
