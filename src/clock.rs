//! UTC calendar time for file names and log lines, without a date crate.

use std::time::{SystemTime, UNIX_EPOCH};

/// A UTC instant split into calendar fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UtcTime {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub nanos: u32,
}

impl From<SystemTime> for UtcTime {
    fn from(t: SystemTime) -> UtcTime {
        let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
        let secs = d.as_secs() as i64;
        let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
        let (year, month, day) = civil_from_days(days);
        UtcTime {
            year,
            month,
            day,
            hour: (rem / 3600) as u32,
            minute: (rem % 3600 / 60) as u32,
            second: (rem % 60) as u32,
            nanos: d.subsec_nanos(),
        }
    }
}

impl UtcTime {
    pub fn now() -> UtcTime {
        SystemTime::now().into()
    }
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar
/// (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn known_dates() {
        let t: UtcTime = (UNIX_EPOCH + Duration::new(951_782_400, 5)).into(); // 2000-02-29
        assert_eq!(
            (t.year, t.month, t.day, t.hour, t.nanos),
            (2000, 2, 29, 0, 5)
        );
        let t: UtcTime = (UNIX_EPOCH + Duration::new(1_458_651_475, 0)).into();
        assert_eq!(
            (t.year, t.month, t.day, t.hour, t.minute, t.second),
            (2016, 3, 22, 12, 57, 55)
        );
        let t: UtcTime = UNIX_EPOCH.into();
        assert_eq!((t.year, t.month, t.day), (1970, 1, 1));
    }
}
