//! Dates as the reports, the WARC archive and the bench write them, in
//! UTC, with no calendar crate: the report's `ctime` line, WARC-Date, and
//! the day a bench row was measured. One calendar routine for all three.

use std::time::{SystemTime, UNIX_EPOCH};

/// A time as C's `ctime` writes it (`Sun Mar  1 09:05:00 2026`), in UTC.
pub fn ctime(time: SystemTime) -> String {
    let secs = time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    const WEEKDAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let weekday = WEEKDAYS[(days.rem_euclid(7)) as usize];
    let month_name = MONTHS[(month - 1) as usize];
    format!(
        "{weekday} {month_name} {day:>2} {:02}:{:02}:{:02} {year}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// A time as ISO 8601 writes it in UTC, to the second
/// (`2026-03-01T09:05:00Z`), as WARC records do.
pub fn iso8601(time: SystemTime) -> String {
    let secs = time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (year, month, day) = civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// `YYYY-MM-DD` in UTC: the day, as the bench dates its rows.
pub fn utc_date(time: SystemTime) -> String {
    let secs = time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (year, month, day) = civil_from_days((secs / 86_400) as i64);
    format!("{year:04}-{month:02}-{day:02}")
}

/// Year, month (1-12) and day for a count of days since 1970-01-01
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn ctime_format() {
        assert_eq!(ctime(UNIX_EPOCH), "Thu Jan  1 00:00:00 1970");
        let t = UNIX_EPOCH + Duration::from_secs(1_772_355_900); // 2026-03-01 09:05
        assert_eq!(ctime(t), "Sun Mar  1 09:05:00 2026");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(ctime(leap), "Tue Feb 29 00:00:00 2000");
    }

    #[test]
    fn the_three_forms_of_one_time() {
        let t = UNIX_EPOCH + Duration::from_secs(1_772_355_900); // 2026-03-01 09:05
        assert_eq!(iso8601(t), "2026-03-01T09:05:00Z");
        assert_eq!(utc_date(t), "2026-03-01");
        assert_eq!(utc_date(UNIX_EPOCH), "1970-01-01");
        let before = UNIX_EPOCH + Duration::from_secs(951_782_399); // 2000-02-28 23:59:59
        assert_eq!(utc_date(before), "2000-02-28");
    }
}
