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

/// A quantity's serialization format, from the suffix it was written with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `Ki`, `Mi`, ... (base 1024).
    BinarySI,
    /// `n`, `u`, `m`, `k`, `M`, ... or no suffix.
    DecimalSI,
    /// `e3`, `E-6`.
    DecimalExponent,
}

/// Parses into an exact decimal `mantissa × 10^exponent` (binary suffixes multiplied in),
/// rounded up to nano units as resource.ParseQuantity does, and the format.
pub fn parse_exact(text: &str) -> Result<(i128, i32, Format), QuantityError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(QuantityError);
    }
    let (negative, rest) = match text.as_bytes()[0] {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let number_end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(number_end);
    if number.is_empty() || number.matches('.').count() > 1 {
        return Err(QuantityError);
    }
    let (int_part, frac_part) = number.split_once('.').unwrap_or((number, ""));
    let mut mantissa: i128 = 0;
    for c in int_part.chars().chain(frac_part.chars()) {
        mantissa = mantissa.checked_mul(10).and_then(|d| d.checked_add((c as u8 - b'0') as i128)).ok_or(QuantityError)?;
    }
    let mut exponent: i32 = -(frac_part.len() as i32);
    let mut format = Format::DecimalSI;
    let mut binary: u32 = 0;
    match suffix {
        "" => {}
        "n" => exponent -= 9,
        "u" => exponent -= 6,
        "m" => exponent -= 3,
        "k" => exponent += 3,
        "M" => exponent += 6,
        "G" => exponent += 9,
        "T" => exponent += 12,
        "P" => exponent += 15,
        "E" => exponent += 18,
        "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" => {
            format = Format::BinarySI;
            binary = 10 * (1 + ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"].iter().position(|s| *s == suffix).unwrap_or(0) as u32);
        }
        s if s.starts_with(['e', 'E']) => {
            let e: i32 = s[1..].parse().map_err(|_| QuantityError)?;
            if !(-30..=30).contains(&e) {
                return Err(QuantityError);
            }
            format = Format::DecimalExponent;
            exponent += e;
        }
        _ => return Err(QuantityError),
    }
    mantissa = mantissa.checked_mul(1i128 << binary).ok_or(QuantityError)?;
    // Round up to nano (scale -9).
    if exponent < -9 {
        let divisor = 10i128.checked_pow((-9 - exponent) as u32).ok_or(QuantityError)?;
        mantissa = (mantissa + divisor - 1) / divisor;
        exponent = -9;
    }
    Ok((if negative { -mantissa } else { mantissa }, exponent, format))
}

/// The canonical form the API server stores and serves (Quantity.String /
/// CanonicalizeBytes): `0.5` → `500m`, `1000m` → `1`, `1.5Gi` → `1536Mi`, `2000` → `2k`,
/// `1e3` → `1e3`; binary quantities below 1024 or not whole print as decimal SI. None when the
/// text is not a quantity (validation reports it).
pub fn canonical(text: &str) -> Option<String> {
    let (mut m, mut e, mut format) = parse_exact(text).ok()?;
    if m == 0 {
        return Some("0".into());
    }
    let sign = if m < 0 { "-" } else { "" };
    m = m.abs();
    if format == Format::BinarySI {
        let whole = if e >= 0 { 10i128.checked_pow(e as u32).and_then(|p| m.checked_mul(p)) } else { None }.or_else(|| {
            let d = 10i128.checked_pow((-e) as u32)?;
            (m % d == 0).then(|| m / d)
        });
        match whole {
            Some(n) if n >= 1024 => {
                let mut n = n;
                let mut k = 0;
                while n % 1024 == 0 && k < 6 {
                    n /= 1024;
                    k += 1;
                }
                let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][k];
                return Some(format!("{sign}{n}{suffix}"));
            }
            _ => format = Format::DecimalSI,
        }
    }
    while m % 10 == 0 {
        m /= 10;
        e += 1;
    }
    match e.rem_euclid(3) {
        1 => {
            m *= 10;
            e -= 1;
        }
        2 => {
            m *= 100;
            e -= 2;
        }
        _ => {}
    }
    let suffix = match format {
        Format::DecimalSI => match e {
            -9 => "n".to_string(),
            -6 => "u".to_string(),
            -3 => "m".to_string(),
            0 => String::new(),
            3 => "k".to_string(),
            6 => "M".to_string(),
            9 => "G".to_string(),
            12 => "T".to_string(),
            15 => "P".to_string(),
            18 => "E".to_string(),
            other => format!("e{other}"),
        },
        _ => {
            if e == 0 {
                String::new()
            } else {
                format!("e{e}")
            }
        }
    };
    Some(format!("{sign}{m}{suffix}"))
}

/// resource.NewQuantity(value, format).String(): a whole number in the given format.
pub fn format_value(value: i128, format: Format) -> String {
    let suffix = match format {
        Format::BinarySI => "",
        Format::DecimalSI => "",
        Format::DecimalExponent => "e0",
    };
    let text = format!("{value}{suffix}");
    if format == Format::BinarySI && value.abs() >= 1024 {
        // Express in Ki so that canonical() treats it as binary.
        if value % 1024 == 0 {
            return canonical(&format!("{}Ki", value / 1024)).unwrap_or(text);
        }
        return value.to_string();
    }
    canonical(&text).unwrap_or(text)
}

/// Canonicalizes every value of a ResourceList in place (values that do not parse are kept).
pub fn canonicalize_list(list: &mut std::collections::BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>) {
    for q in list.values_mut() {
        if let Some(c) = canonical(&q.0) {
            if c != q.0 {
                q.0 = c;
            }
        }
    }
}

/// Canonicalizes the quantities of a JSON object tree in place: the values of ResourceLists
/// (maps under `requests`, `limits`, `capacity`, `allocatable`, `hard`, `used`, `max`, `min`,
/// `default`, `defaultRequest`, `maxLimitRequestRatio`, `overhead`) and `sizeLimit`,
/// `averageValue`, and a metric target's/current's `value`.
pub fn canonicalize_json(value: &mut serde_json::Value) {
    fn canon(v: &mut serde_json::Value) {
        let text = match v {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Number(n) => n.to_string(),
            _ => return,
        };
        if let Some(c) = canonical(&text) {
            *v = serde_json::Value::String(c);
        }
    }
    fn walk(v: &mut serde_json::Value, parent: Option<&str>) {
        match v {
            serde_json::Value::Object(map) => {
                for (key, child) in map.iter_mut() {
                    match key.as_str() {
                        "requests"
                        | "limits"
                        | "capacity"
                        | "allocatable"
                        | "hard"
                        | "used"
                        | "max"
                        | "min"
                        | "default"
                        | "defaultRequest"
                        | "maxLimitRequestRatio"
                        | "overhead"
                            if child.is_object() =>
                        {
                            if let Some(list) = child.as_object_mut() {
                                for q in list.values_mut() {
                                    canon(q);
                                }
                            }
                        }
                        "sizeLimit" | "averageValue" => canon(child),
                        "value" if matches!(parent, Some("target" | "current")) => canon(child),
                        _ => walk(child, Some(key.as_str())),
                    }
                }
            }
            serde_json::Value::Array(items) => {
                for item in items {
                    walk(item, parent);
                }
            }
            _ => {}
        }
    }
    walk(value, None)
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

    // Mirrors apimachinery/pkg/api/resource/quantity_test.go: TestQuantityString (canonical
    // forms), TestQuantityParseEmit and the rounding cases of TestQuantityParse.
    #[test]
    fn canonical_forms_match_quantity_string() {
        let cases: &[(&str, &str)] = &[
            ("0.5", "500m"),
            ("1.5Gi", "1536Mi"),
            ("1000m", "1"),
            ("0.1", "100m"),
            ("1e3", "1e3"),
            ("1E3", "1e3"),
            ("1Gi", "1Gi"),
            ("1024Mi", "1Gi"),
            ("307200Ki", "300Mi"),
            ("1025024Mi", "1001Gi"),
            ("1024Gi", "1Ti"),
            ("5000m", "5"),
            ("1000M", "1G"),
            ("0.001T", "1G"),
            ("1000u", "1m"),
            ("1.08", "1080m"),
            ("1080000000n", "1080m"),
            (".001e12", "1e9"),
            ("0.001e0", "1e-3"),
            ("1000e-12", "1e-9"),
            ("80e-3", "80e-3"),
            ("00", "0"),
            ("0Mi", "0"),
            ("1Ki", "1Ki"),
            (".001Ki", "1024m"),
            (".000001Ki", "1024u"),
            (".000000001Ki", "1024n"),
            (".000000000001Ki", "2n"),
            ("3.001n", "4n"),
            ("1025", "1025"),
            ("512Mi", "512Mi"),
            ("0.5Ki", "512"),
            ("100.035Ki", "102435840m"),
            ("2000", "2k"),
            ("1500", "1500"),
            ("1500m", "1500m"),
            ("128974848", "128974848"),
            ("129e6", "129e6"),
            ("123Mi", "123Mi"),
            ("-100m", "-100m"),
            ("-1.5Gi", "-1536Mi"),
            ("250m", "250m"),
            ("2", "2"),
        ];
        for (text, want) in cases {
            assert_eq!(canonical(text).as_deref(), Some(*want), "{text}");
        }
        assert_eq!(canonical("abc"), None);
        assert_eq!(format_value(1 << 30, Format::BinarySI), "1Gi");
        assert_eq!(format_value(1536, Format::BinarySI), "1536");
        assert_eq!(format_value(2000, Format::DecimalSI), "2k");
        assert_eq!(format_value(0, Format::BinarySI), "0");
        let mut json = serde_json::json!({"spec": {"containers": [{"resources": {"limits": {"cpu": "0.5", "memory": "1.5Gi"}, "requests": {"cpu": 1}}}],
            "limits": [{"max": {"memory": "1024Mi"}, "type": "Container"}], "volumes": [{"emptyDir": {"sizeLimit": "1000Mi"}}]}});
        canonicalize_json(&mut json);
        assert_eq!(json["spec"]["containers"][0]["resources"], serde_json::json!({"limits": {"cpu": "500m", "memory": "1536Mi"}, "requests": {"cpu": "1"}}));
        assert_eq!(json["spec"]["limits"][0]["max"]["memory"], "1Gi");
        assert_eq!(json["spec"]["volumes"][0]["emptyDir"]["sizeLimit"], "1000Mi");
    }

    #[test]
    fn formats_like_kubectl() {
        assert_eq!(format_cpu_milli(250), "250m");
        assert_eq!(format_cpu_milli(4000), "4");
        assert_eq!(format_bytes(8 << 30), "8Gi");
        assert_eq!(format_bytes(1000), "1000");
    }
}
