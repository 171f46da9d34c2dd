//! Virtual time. The simulation never reads a wall clock: every timestamp is the simulation's
//! epoch plus virtual milliseconds.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, Time};

/// Virtual milliseconds since the start of a simulation.
pub type Millis = u64;

/// The wall-clock instant virtual time 0 maps to: 2025-01-01T00:00:00Z. Fixed so histories are
/// byte-identical across runs and platforms.
pub const EPOCH_UNIX_SECONDS: i64 = 1_735_689_600;

/// The `Time` (second precision, as the API server writes it) at virtual `t`.
pub fn time_at(t: Millis) -> Time {
    let seconds = EPOCH_UNIX_SECONDS + (t / 1000) as i64;
    Time(jiff::Timestamp::from_second(seconds).expect("virtual time stays within jiff's range"))
}

/// The `MicroTime` at virtual `t` (millisecond precision).
pub fn micro_time_at(t: Millis) -> MicroTime {
    let ms = EPOCH_UNIX_SECONDS * 1000 + t as i64;
    MicroTime(jiff::Timestamp::from_millisecond(ms).expect("virtual time stays within jiff's range"))
}

/// Virtual `t` as RFC3339 with nine fractional digits (Go's `RFC3339NanoFixed`, the kubelet's
/// log timestamps): `2025-01-01T00:00:04.500000000Z`.
pub fn rfc3339_nano_fixed(t: Millis) -> String {
    let ms = EPOCH_UNIX_SECONDS * 1000 + t as i64;
    let ts = jiff::Timestamp::from_millisecond(ms).expect("virtual time stays within jiff's range");
    format!("{}.{:03}000000Z", ts.strftime("%Y-%m-%dT%H:%M:%S"), ms.rem_euclid(1000))
}

/// The virtual millisecond an RFC3339 timestamp stands for (`sinceTime`, `--since-time`; 0 for
/// instants before the epoch), or `None` when it does not parse.
pub fn parse_rfc3339(text: &str) -> Option<Millis> {
    let ts: jiff::Timestamp = text.parse().ok()?;
    Some((ts.as_millisecond() - EPOCH_UNIX_SECONDS * 1000).max(0) as Millis)
}

/// The virtual millisecond a `Time` stands for (0 for instants before the epoch).
pub fn millis_of(time: &Time) -> Millis {
    let ms = time.0.as_millisecond() - EPOCH_UNIX_SECONDS * 1000;
    ms.max(0) as Millis
}

/// `1:05.250` style virtual time (minutes:seconds.millis), hours when needed: how the UI's
/// timeline and the Why answers name a moment.
pub fn clock(t_ms: Millis) -> String {
    let ms = t_ms % 1000;
    let s = (t_ms / 1000) % 60;
    let m = (t_ms / 60_000) % 60;
    let h = t_ms / 3_600_000;
    if h > 0 {
        format!("{h}:{m:02}:{s:02}.{ms:03}")
    } else {
        format!("{m:02}:{s:02}.{ms:03}")
    }
}

/// Parses durations the CLI accepts (`90s`, `10m`, `1h30m`, `500ms`, `2.5s`) into milliseconds.
pub fn parse_duration(text: &str) -> Option<Millis> {
    let mut total: f64 = 0.0;
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let number_end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
        let number: f64 = rest[..number_end].parse().ok()?;
        rest = &rest[number_end..];
        let unit_end = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let factor = match &rest[..unit_end] {
            "ms" => 1.0,
            "s" => 1000.0,
            "m" => 60_000.0,
            "h" => 3_600_000.0,
            _ => return None,
        };
        total += number * factor;
        rest = &rest[unit_end..];
    }
    Some(total.round() as Millis)
}

/// Formats an age the way kubectl does (`45s`, `3m12s`, `2d4h`), via `duration.HumanDuration`.
pub fn human_duration(ms: Millis) -> String {
    let seconds = ms / 1000;
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 { format!("{minutes}m") } else { format!("{minutes}m{s}s") };
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 { format!("{hours}h") } else { format!("{hours}h{m}m") };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    let days = hours / 24;
    if days < 8 {
        let h = hours % 24;
        return if h == 0 { format!("{days}d") } else { format!("{days}d{h}h") };
    }
    if days < 365 * 2 {
        return format!("{days}d");
    }
    format!("{}y", days / 365)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_seconds_after_the_fixed_epoch() {
        let json = serde_json::to_value(time_at(90_500)).unwrap();
        assert_eq!(json, "2025-01-01T00:01:30Z");
        assert_eq!(millis_of(&time_at(90_500)), 90_000);
    }

    #[test]
    fn parses_cli_durations() {
        assert_eq!(parse_duration("90s"), Some(90_000));
        assert_eq!(parse_duration("1h30m"), Some(5_400_000));
        assert_eq!(parse_duration("500ms"), Some(500));
        assert_eq!(parse_duration("2.5s"), Some(2_500));
        assert_eq!(parse_duration("10x"), None);
        assert_eq!(parse_duration(""), None);
    }

    // Mirrors apimachinery/pkg/util/duration/duration_test.go (TestHumanDuration).
    #[test]
    fn human_duration_matches_kubectl_ages() {
        let cases: &[(u64, &str)] = &[
            (1, "1s"),
            (70, "70s"),
            (190, "3m10s"),
            (70 * 60, "70m"),
            (47 * 3600, "47h"),
            (49 * 3600, "2d1h"),
            (8 * 24 * 3600, "8d"),
            (367 * 24 * 3600, "367d"),
            (800 * 24 * 3600, "2y"),
        ];
        for (seconds, want) in cases {
            assert_eq!(human_duration(seconds * 1000), *want, "{seconds}s");
        }
    }
}
