//! Calendar arithmetic and `strftime` for UTC (containers run with `TZ` unset = UTC).

/// A broken-down UTC time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tm {
    /// Year (2026).
    pub year: i64,
    /// Month 1..=12.
    pub mon: u32,
    /// Day 1..=31.
    pub mday: u32,
    /// Hour.
    pub hour: u32,
    /// Minute.
    pub min: u32,
    /// Second.
    pub sec: u32,
    /// Day of week, 0 = Sunday.
    pub wday: u32,
    /// Day of year, 0-based.
    pub yday: u32,
}

/// Days since 1970-01-01 → (year, month, day) (Howard Hinnant's algorithm).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// (year, month, day) → days since 1970-01-01.
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = if m > 2 { m - 3 } else { m + 9 } as i64;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Breaks down Unix seconds.
pub fn gmtime(t: i64) -> Tm {
    let days = t.div_euclid(86_400);
    let secs = t.rem_euclid(86_400);
    let (year, mon, mday) = civil_from_days(days);
    let yday = (days - days_from_civil(year, 1, 1)) as u32;
    Tm { year, mon, mday, hour: (secs / 3600) as u32, min: (secs % 3600 / 60) as u32, sec: (secs % 60) as u32, wday: (days + 4).rem_euclid(7) as u32, yday }
}

const DAYS: [&str; 7] = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS: [&str; 12] = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

/// Abbreviated month name (`Dec`).
pub fn month_abbr(m: u32) -> &'static str {
    &MONTHS[(m.clamp(1, 12) - 1) as usize][..3]
}

/// `strftime` in the C locale, UTC. `nanos` feeds `%N`.
pub fn strftime(fmt: &str, t: i64, nanos: u32) -> String {
    let tm = gmtime(t);
    let mut out = String::new();
    let mut it = fmt.chars().peekable();
    while let Some(c) = it.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        // GNU flags: `-` (no padding), `_` (space padding), `0`.
        let mut pad: Option<char> = None;
        while let Some(&f) = it.peek() {
            if f == '-' || f == '_' || f == '0' {
                pad = Some(f);
                it.next();
            } else {
                break;
            }
        }
        let Some(c) = it.next() else {
            out.push('%');
            break;
        };
        let num = |v: i64, w: usize, default: char| -> String {
            match pad.unwrap_or(default) {
                '-' => v.to_string(),
                '_' => format!("{v:>w$}"),
                _ => format!("{v:0w$}"),
            }
        };
        match c {
            'a' => out.push_str(&DAYS[tm.wday as usize][..3]),
            'A' => out.push_str(DAYS[tm.wday as usize]),
            'b' | 'h' => out.push_str(month_abbr(tm.mon)),
            'B' => out.push_str(MONTHS[(tm.mon - 1) as usize]),
            'c' => out.push_str(&strftime("%a %b %e %H:%M:%S %Y", t, nanos)),
            'C' => out.push_str(&num(tm.year / 100, 2, '0')),
            'd' => out.push_str(&num(tm.mday as i64, 2, '0')),
            'D' => out.push_str(&strftime("%m/%d/%y", t, nanos)),
            'e' => out.push_str(&num(tm.mday as i64, 2, '_')),
            'F' => out.push_str(&strftime("%Y-%m-%d", t, nanos)),
            'H' => out.push_str(&num(tm.hour as i64, 2, '0')),
            'I' => out.push_str(&num(((tm.hour + 11) % 12 + 1) as i64, 2, '0')),
            'j' => out.push_str(&num(tm.yday as i64 + 1, 3, '0')),
            'k' => out.push_str(&num(tm.hour as i64, 2, '_')),
            'l' => out.push_str(&num(((tm.hour + 11) % 12 + 1) as i64, 2, '_')),
            'm' => out.push_str(&num(tm.mon as i64, 2, '0')),
            'M' => out.push_str(&num(tm.min as i64, 2, '0')),
            'n' => out.push('\n'),
            'N' => out.push_str(&format!("{nanos:09}")),
            'p' => out.push_str(if tm.hour < 12 { "AM" } else { "PM" }),
            'P' => out.push_str(if tm.hour < 12 { "am" } else { "pm" }),
            'r' => out.push_str(&strftime("%I:%M:%S %p", t, nanos)),
            'R' => out.push_str(&strftime("%H:%M", t, nanos)),
            's' => out.push_str(&t.to_string()),
            'S' => out.push_str(&num(tm.sec as i64, 2, '0')),
            't' => out.push('\t'),
            'T' => out.push_str(&strftime("%H:%M:%S", t, nanos)),
            'u' => out.push_str(&(if tm.wday == 0 { 7 } else { tm.wday }).to_string()),
            'w' => out.push_str(&tm.wday.to_string()),
            'x' => out.push_str(&strftime("%m/%d/%y", t, nanos)),
            'X' => out.push_str(&strftime("%H:%M:%S", t, nanos)),
            'y' => out.push_str(&num(tm.year % 100, 2, '0')),
            'Y' => out.push_str(&tm.year.to_string()),
            'z' => out.push_str("+0000"),
            'Z' => out.push_str("UTC"),
            '%' => out.push('%'),
            other => {
                out.push('%');
                out.push(other);
            }
        }
    }
    out
}

/// Parses `YYYY-MM-DD[ T]HH:MM[:SS][Z]`, `@SECONDS`, or `HH:MM[:SS]` (today) into Unix seconds.
pub fn parse_date(s: &str, now: i64) -> Option<i64> {
    let s = s.trim();
    if let Some(n) = s.strip_prefix('@') {
        return n.parse().ok();
    }
    let s = s.trim_end_matches('Z').trim_end_matches(" UTC");
    let (date, time) = match s.split_once(['T', ' ']) {
        Some((d, t)) => (Some(d), Some(t)),
        None if s.contains('-') => (Some(s), None),
        None => (None, Some(s)),
    };
    let days = match date {
        Some(d) => {
            let p: Vec<&str> = d.split('-').collect();
            if p.len() != 3 {
                return None;
            }
            days_from_civil(p[0].parse().ok()?, p[1].parse().ok()?, p[2].parse().ok()?)
        }
        None => now.div_euclid(86_400),
    };
    let secs = match time {
        Some(t) => {
            let p: Vec<&str> = t.split(':').collect();
            if p.len() < 2 {
                return None;
            }
            let h: i64 = p[0].parse().ok()?;
            let m: i64 = p[1].parse().ok()?;
            let sec: i64 = p.get(2).map(|x| x.split('.').next().unwrap_or("0").parse().unwrap_or(0)).unwrap_or(0);
            h * 3600 + m * 60 + sec
        }
        None => 0,
    };
    Some(days * 86_400 + secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strftime_formats_like_gnu_date_in_utc() {
        // 2026-12-01 09:04:57 UTC
        let t = days_from_civil(2026, 12, 1) * 86_400 + 9 * 3600 + 4 * 60 + 57;
        let cases = [
            ("%a %b %e %H:%M:%S %Z %Y", "Tue Dec  1 09:04:57 UTC 2026"),
            ("%F %T", "2026-12-01 09:04:57"),
            ("%s", "1796115897"),
            ("%j %u %w %y", "335 2 2 26"),
            ("%-d/%-m", "1/12"),
            ("%I %p", "09 AM"),
            ("%%", "%"),
        ];
        for (f, want) in cases {
            assert_eq!(strftime(f, t, 0), want, "{f}");
        }
        assert_eq!(gmtime(0).wday, 4);
        assert_eq!(parse_date("2026-12-01 09:04:57", 0), Some(t));
    }
}
