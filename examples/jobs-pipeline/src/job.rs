//! The job schema: what a client may post, and what we store.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The longest name we accept, in characters.
pub const MAX_NAME: usize = 200;

/// The range of priorities.
pub const PRIORITIES: std::ops::RangeInclusive<i64> = 0..=9;

/// The body of `POST /jobs`. Unknown fields are refused rather than dropped,
/// so a client's typo (`"priorty"`) is an error it sees.
#[derive(Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
struct NewJob {
    name: String,
    priority: i64,
}

/// A job as it is queued and stored: the client's fields and our id.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
pub struct Job {
    pub id: u64,
    pub name: String,
    pub priority: i64,
}

/// Parses and checks a `POST /jobs` body. The error is a sentence for the
/// client.
pub fn validate(body: &[u8], id: u64) -> Result<Job, String> {
    let value: Value = serde_json::from_slice(body).map_err(|e| format!("invalid job: {e}"))?;
    // Only an object: serde would also take `["x", 3]` for a `NewJob`.
    if !value.is_object() {
        return Err("invalid job: the body must be a JSON object".into());
    }
    let new = NewJob::deserialize(value).map_err(|e| format!("invalid job: {e}"))?;
    let chars = new.name.chars().count();
    if chars == 0 || new.name.trim().is_empty() {
        return Err("invalid job: name must not be empty".into());
    }
    // PostgreSQL cannot hold U+0000 in text or jsonb: a job with one would
    // get its 202 and then be refused by the store. The name is the job's
    // only string, and unknown fields are refused above.
    if new.name.contains('\0') {
        return Err("invalid job: name must not contain U+0000 (NUL)".into());
    }
    if chars > MAX_NAME {
        return Err(format!(
            "invalid job: name is {chars} characters, the most is {MAX_NAME}"
        ));
    }
    if !PRIORITIES.contains(&new.priority) {
        return Err(format!(
            "invalid job: priority must be from {} to {}, not {}",
            PRIORITIES.start(),
            PRIORITIES.end(),
            new.priority
        ));
    }
    Ok(Job {
        id,
        name: new.name,
        priority: new.priority,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(body: &str) -> Result<Job, String> {
        validate(body.as_bytes(), 7)
    }

    #[test]
    fn a_good_job_gets_the_id() {
        assert_eq!(
            check(r#"{"name": "resize", "priority": 3}"#),
            Ok(Job {
                id: 7,
                name: "resize".into(),
                priority: 3
            })
        );
    }

    #[test]
    fn bad_jobs_are_refused_with_a_reason() {
        for (body, error) in [
            (
                "{",
                "invalid job: EOF while parsing an object at line 1 column 1",
            ),
            (r#"["x", 3]"#, "invalid job: the body must be a JSON object"),
            (r#"{"name": "x"}"#, "invalid job: missing field `priority`"),
            (
                r#"{"name": "x", "priority": 1, "priorty": 2}"#,
                "invalid job: unknown field `priorty`, expected `name` or `priority`",
            ),
            (
                r#"{"name": "x", "priority": 1.5}"#,
                "invalid job: invalid type: floating point `1.5`, expected i64",
            ),
            (
                r#"{"name": " ", "priority": 1}"#,
                "invalid job: name must not be empty",
            ),
            (
                r#"{"name": "x", "priority": 10}"#,
                "invalid job: priority must be from 0 to 9, not 10",
            ),
            (
                r#"{"name": "bad\u0000name", "priority": 1}"#,
                "invalid job: name must not contain U+0000 (NUL)",
            ),
            (
                r#"{"name": "\u0000", "priority": 1}"#,
                "invalid job: name must not contain U+0000 (NUL)",
            ),
        ] {
            assert_eq!(check(body), Err(error.to_string()), "{body}");
        }
        let long = format!(r#"{{"name": "{}", "priority": 0}}"#, "é".repeat(201));
        assert_eq!(
            check(&long),
            Err("invalid job: name is 201 characters, the most is 200".into())
        );
    }

    #[test]
    fn jobs_serialise_as_one_line() {
        let job = Job {
            id: 1,
            name: "a \"quoted\"\nname".into(),
            priority: 0,
        };
        let line = serde_json::to_string(&job).unwrap();
        assert_eq!(line, r#"{"id":1,"name":"a \"quoted\"\nname","priority":0}"#);
        assert_eq!(serde_json::from_str::<Job>(&line).unwrap(), job);
    }
}
