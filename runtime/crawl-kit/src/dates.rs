//! Dates as the reports, the WARC archive and the bench write them, in
//! UTC, with no calendar crate: the report's `ctime` line, WARC-Date, and
//! the day a bench row was measured; and HTTP's dates read back
//! (`Retry-After`). One calendar routine for all of them.

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

/// Days since 1970-01-01 for a year, month (1-12) and day: the inverse of
/// [`civil_from_days`] (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// An HTTP date (RFC 9110 section 5.6.7), in any of the three forms a
/// recipient must accept: `Sun, 06 Nov 1994 08:49:37 GMT` (the one to
/// send), the obsolete `Sunday, 06-Nov-94 08:49:37 GMT` and C's asctime
/// `Sun Nov  6 08:49:37 1994`. `None` for anything else (or a year
/// outside 1601 to 9999); a time before 1970 is 1970, which has passed
/// for every use (an expiry, a wait).
///
/// Cookies' `Expires` is written the same ways, with a four-digit year in
/// the dashed form too (`Thu, 01-Jan-1970 00:00:00 GMT`), which is read as
/// it is written.
pub fn parse_http_date(text: &str) -> Option<SystemTime> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month_of = |name: &str| MONTHS.iter().position(|m| *m == name).map(|i| i as u32 + 1);
    let words: Vec<&str> = text.split_ascii_whitespace().collect();
    let (day, month, year, time) = match words.as_slice() {
        // IMF-fixdate: weekday, day month year time GMT.
        [_, day, month, year, time, "GMT"] => (
            day.parse().ok()?,
            month_of(month)?,
            year.parse().ok()?,
            *time,
        ),
        // RFC 850: weekday, day-month-yy time GMT. A two-digit year within
        // fifty years of now: 94 is 1994, 26 is 2026.
        [_, date, time, "GMT"] => {
            let mut parts = date.split('-');
            let (day, month, yy) = (parts.next()?, parts.next()?, parts.next()?);
            let year: i64 = match (yy.len(), yy.parse::<i64>().ok()?) {
                (2, yy) if yy < 70 => 2000 + yy,
                (2, yy) => 1900 + yy,
                (_, year) => year,
            };
            (day.parse().ok()?, month_of(month)?, year, *time)
        }
        // asctime: weekday month day time year.
        [_, month, day, time, year] => (
            day.parse().ok()?,
            month_of(month)?,
            year.parse().ok()?,
            *time,
        ),
        _ => return None,
    };
    if !(1601..=9999).contains(&year) {
        return None;
    }
    let mut hms = time.split(':').map(|n| n.parse::<u64>().ok());
    let (h, m, s) = (hms.next()??, hms.next()??, hms.next()??);
    if hms.next().is_some() || h > 23 || m > 59 || s > 60 || !(1..=31).contains(&day) {
        return None;
    }
    let Ok(days) = u64::try_from(days_from_civil(year, month, day)) else {
        return Some(UNIX_EPOCH);
    };
    let secs = days
        .checked_mul(86_400)?
        .checked_add(h * 3600 + m * 60 + s)?;
    UNIX_EPOCH.checked_add(std::time::Duration::from_secs(secs))
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
    fn http_dates_in_all_three_forms() {
        let t = UNIX_EPOCH + Duration::from_secs(784_111_777); // 1994-11-06 08:49:37
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"), Some(t));
        assert_eq!(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"), Some(t));
        assert_eq!(parse_http_date("Sun Nov  6 08:49:37 1994"), Some(t));
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(parse_http_date("Tue, 29 Feb 2000 00:00:00 GMT"), Some(leap));
        assert_eq!(
            ctime(parse_http_date("Sun, 01 Mar 2026 09:05:00 GMT").unwrap()),
            "Sun Mar  1 09:05:00 2026"
        );
        for bad in [
            "",
            "120",
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 32 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 9223372036854775807 08:49:37 GMT",
            "Sunday, 06-Nov-9223372036854775807 08:49:37 GMT",
            "Sun, 06 Nov 10000 08:49:37 GMT",
        ] {
            assert_eq!(parse_http_date(bad), None, "{bad}");
        }
    }

    #[test]
    fn cookie_dates_read_as_written_and_the_past_is_1970() {
        let t = UNIX_EPOCH + Duration::from_secs(784_111_777); // 1994-11-06 08:49:37
        assert_eq!(parse_http_date("Sun, 06-Nov-1994 08:49:37 GMT"), Some(t));
        assert_eq!(
            parse_http_date("Thu, 01-Jan-1970 00:00:00 GMT"),
            Some(UNIX_EPOCH)
        );
        assert_eq!(
            parse_http_date("Mon, 01 Jan 1900 00:00:00 GMT"),
            Some(UNIX_EPOCH)
        );
        assert_eq!(
            parse_http_date("Thu, 01 Jan 1969 00:00:00 GMT"),
            Some(UNIX_EPOCH)
        );
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
