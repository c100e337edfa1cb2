//! Decoded values shared by every layer above the bytes: an enumerated value with its name
//! ([`Named`]), a bit mask with its names ([`Flags`]), a time in ISO 8601 ([`Time`]), an inode
//! mode ([`Mode`]) and UUID text. They live in the reader so that a decoder (the journal, a check
//! finding, a log-dump event) can carry them without naming the formatter; the JSON formatter
//! re-exports them as part of the JSON contract.

use schemars::JsonSchema;
use serde::Serialize;

/// An enumerated on-disk value: the stored number and its decoded name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Named {
    /// The value as stored.
    pub raw: u64,
    /// What it means (`unknown` when the value is not one defined).
    pub name: String,
}

impl Named {
    /// `raw` with its decoded `name`.
    pub fn new(raw: impl Into<u64>, name: impl Into<String>) -> Named {
        Named {
            raw: raw.into(),
            name: name.into(),
        }
    }
}

/// A bit mask with the names of the bits set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Flags {
    /// The mask as stored.
    pub raw: u32,
    /// The names of the bits set.
    pub names: Vec<String>,
}

impl Flags {
    /// `raw` with the `names` of its bits.
    pub fn new<S: Into<String>>(raw: impl Into<u32>, names: impl IntoIterator<Item = S>) -> Flags {
        Flags {
            raw: raw.into(),
            names: names.into_iter().map(Into::into).collect(),
        }
    }
}

/// A point in time: seconds since the epoch as stored and the same instant in ISO 8601 UTC.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Time {
    /// Seconds since 1970-01-01T00:00:00Z, as stored (with the high bits folded in).
    pub raw: i64,
    /// Nanoseconds, when the format stores them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nsec: Option<u32>,
    /// The instant in ISO 8601, UTC (`2023-11-14T22:13:20Z`).
    pub utc: String,
}

impl Time {
    /// A time with whole seconds.
    pub fn secs(raw: i64) -> Time {
        Time {
            raw,
            nsec: None,
            utc: iso8601_utc(raw, 0),
        }
    }
    /// A time with nanoseconds.
    pub fn with_nsec(raw: i64, nsec: u32) -> Time {
        Time {
            raw,
            nsec: Some(nsec),
            utc: iso8601_utc(raw, nsec),
        }
    }
}

/// `secs` since the epoch (and `nsec`) as ISO 8601 UTC; nanoseconds are shown when non-zero.
pub fn iso8601_utc(secs: i64, nsec: u32) -> String {
    let days = secs.div_euclid(86_400);
    let tod = secs.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    let (hh, mm, ss) = (tod / 3600, tod / 60 % 60, tod % 60);
    if nsec == 0 {
        format!("{year:04}-{month:02}-{day:02}T{hh:02}:{mm:02}:{ss:02}Z")
    } else {
        format!("{year:04}-{month:02}-{day:02}T{hh:02}:{mm:02}:{ss:02}.{nsec:09}Z")
    }
}

/// Proleptic Gregorian date of a day count since 1970-01-01 (H. Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let shifted = days + 719_468;
    let era = shifted.div_euclid(146_097);
    let doe = shifted.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// An inode mode: the stored value and its octal spelling (`100755`), as `stat` shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Mode {
    /// `i_mode` as stored.
    pub raw: u16,
    /// The same value in octal.
    pub octal: String,
}

impl Mode {
    /// The mode `raw`.
    pub fn new(raw: u16) -> Mode {
        Mode {
            raw,
            octal: format!("{raw:o}"),
        }
    }
}

/// 16 bytes as a canonical UUID string; all zeros (no UUID) is the nil UUID, never `<none>`.
pub fn uuid_text(bytes: &[u8; 16]) -> String {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// Serialize 16 bytes as a UUID string (`serialize_with`), documented as a `uuid` string.
pub fn uuid<S: serde::Serializer>(bytes: &[u8; 16], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&uuid_text(bytes))
}

/// Schema of what [`uuid`] writes (`schemars(schema_with)`).
pub fn uuid_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "string", "format": "uuid"})
}

/// Serialize a list of 16-byte values as UUID strings.
pub fn uuids<S: serde::Serializer>(list: &[[u8; 16]], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(list.iter().map(uuid_text))
}

/// Schema of what [`uuids`] writes.
pub fn uuids_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "array", "items": {"type": "string", "format": "uuid"}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso8601_of_known_instants() {
        assert_eq!(iso8601_utc(0, 0), "1970-01-01T00:00:00Z");
        assert_eq!(iso8601_utc(1_700_000_000, 0), "2023-11-14T22:13:20Z");
        assert_eq!(
            iso8601_utc(951_782_400, 5),
            "2000-02-29T00:00:00.000000005Z"
        );
        assert_eq!(iso8601_utc(-1, 0), "1969-12-31T23:59:59Z");
        // The largest ext4 time (34 bits of seconds).
        assert_eq!(iso8601_utc((1 << 34) - 1, 0), "2514-05-30T01:53:03Z");
    }

    #[test]
    fn uuids_are_canonical() {
        let mut bytes = [0u8; 16];
        assert_eq!(uuid_text(&bytes), "00000000-0000-0000-0000-000000000000");
        bytes[0] = 0x4e;
        bytes[15] = 0x5b;
        assert_eq!(uuid_text(&bytes), "4e000000-0000-0000-0000-00000000005b");
    }

    #[test]
    fn modes_in_octal() {
        assert_eq!(Mode::new(0o100755).octal, "100755");
        assert_eq!(Mode::new(0o40700).raw, 16832);
    }
}
