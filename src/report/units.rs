//! Number formatting shared by every output: values with their units, ratios,
//! percentages and p-values. One function per kind of number.

use crate::run::metric::Unit;

/// A value in its unit, scaled for reading: "10.62 ms", "1.8 MiB", "3.142".
pub fn value(x: f64, unit: Unit) -> String {
    if !x.is_finite() {
        return "n/a".to_string();
    }
    match unit {
        Unit::Seconds => time(x * 1e9),
        Unit::Nanoseconds => time(x),
        Unit::Kibibytes => {
            if x.abs() >= 1024.0 * 1024.0 {
                format!("{} GiB", significant(x / (1024.0 * 1024.0)))
            } else if x.abs() >= 1024.0 {
                format!("{} MiB", significant(x / 1024.0))
            } else {
                format!("{} KiB", significant(x))
            }
        }
        Unit::None => significant(x),
    }
}

fn time(ns: f64) -> String {
    let (scaled, suffix) = match ns.abs() {
        a if a >= 1e9 => (ns / 1e9, "s"),
        a if a >= 1e6 => (ns / 1e6, "ms"),
        a if a >= 1e3 => (ns / 1e3, "µs"),
        _ => (ns, "ns"),
    };
    format!("{} {suffix}", significant(scaled))
}

/// Four significant digits, without exponent notation for everyday magnitudes.
pub fn significant(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let magnitude = x.abs().log10().floor() as i32;
    if !(-4..9).contains(&magnitude) {
        return format!("{x:.3e}");
    }
    let decimals = (3 - magnitude).max(0) as usize;
    format!("{x:.decimals$}")
}

/// At most two decimals, without trailing zeros: 1.0 → "1", 2.50 → "2.5".
pub fn trimmed(x: f64) -> String {
    let text = format!("{x:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A p-value with its relation: "= 0.0312", "< 1e-6".
pub fn p_value(p: f64) -> String {
    if !p.is_finite() {
        "n/a".to_string()
    } else if p < 1e-6 {
        "< 1e-6".to_string()
    } else {
        format!("= {}", significant(p))
    }
}

/// A proportion as a signed percentage change of a ratio: 1.052 → "+5.2%".
pub fn ratio_change(ratio: f64) -> String {
    if !ratio.is_finite() {
        return "n/a".to_string();
    }
    format!("{:+.1}%", (ratio - 1.0) * 100.0)
}

/// A ratio to three places for sentences and tables: "1.052"; "n/a" without
/// one, "∞" and "0" when a side's value is zero.
pub fn ratio(r: f64) -> String {
    if r.is_nan() {
        "n/a".to_string()
    } else if r.is_finite() {
        format!("{r:.3}")
    } else if r > 0.0 {
        "∞".to_string()
    } else {
        "0".to_string()
    }
}

/// A ratio to four places, "n/a" when there is none (no runs on a side).
pub fn ratio_cell(ratio: f64) -> String {
    if ratio.is_nan() {
        return "n/a".to_string();
    }
    format!("{ratio:.4}")
}

/// A ratio's interval, "[0.9812, 1.0134]", or "n/a" without one.
pub fn interval_cell(low: f64, high: f64) -> String {
    if low.is_nan() || high.is_nan() {
        return "n/a".to_string();
    }
    format!("[{low:.4}, {high:.4}]")
}

/// Where `analyze` read the runs: "a.csv, b.csv (csv)".
pub fn imported(files: &[String], format: &str) -> String {
    format!("{} ({format})", files.join(", "))
}

/// A Unix time as "2026-11-24 06:15 UTC". The civil date from the day count
/// is Howard Hinnant's `civil_from_days` (chrono-compatible algorithms,
/// public domain); written out here because the crate needs no other date
/// arithmetic.
pub fn utc(unix: i64) -> String {
    let (y, m, d) = civil_from_days(unix.div_euclid(86_400));
    let secs = unix.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        secs / 3600,
        secs % 3600 / 60
    )
}

/// (year, month, day) of the day `z` days after 1970-01-01.
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// The day count of (year, month, day): the inverse of [`civil_from_days`].
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A count with its noun, plural when it is not one: "1 hole", "3 holes".
pub fn count(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_units() {
        assert_eq!(value(0.010_62, Unit::Seconds), "10.62 ms");
        assert_eq!(value(2.5e-6, Unit::Seconds), "2.500 µs");
        assert_eq!(value(1843.0, Unit::Kibibytes), "1.800 MiB");
        assert_eq!(value(1.5, Unit::None), "1.500");
        assert_eq!(value(1234.0, Unit::Nanoseconds), "1.234 µs");
        assert_eq!(trimmed(1.0), "1");
        assert_eq!(trimmed(2.5), "2.5");
        assert_eq!(value(f64::NAN, Unit::None), "n/a");
    }

    #[test]
    fn p_values_and_changes() {
        assert_eq!(p_value(1e-9), "< 1e-6");
        assert_eq!(p_value(0.03123), "= 0.03123");
        assert_eq!(ratio_change(1.052), "+5.2%");
        assert_eq!(ratio_change(0.9), "-10.0%");
    }

    #[test]
    fn unix_times_read_as_utc_dates() {
        // `date -u -d @1700000000` = Tue Nov 14 22:13:20 UTC 2023
        assert_eq!(utc(1_700_000_000), "2023-11-14 22:13 UTC");
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        // 2000-02-29 (a leap day) is day 11016.
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(days_from_civil(2000, 2, 29), 11_016);
    }

    #[test]
    fn counts_take_their_plural() {
        assert_eq!(count(1u64, "hole"), "1 hole");
        assert_eq!(count(0u64, "byte"), "0 bytes");
        assert_eq!(count(3u32, "line"), "3 lines");
    }
}
