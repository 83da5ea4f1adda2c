//! The PostgreSQL frontend/backend protocol, version 3: the messages we
//! send, and the backend messages we read, as bytes.
//!
//! Every message but the first is a type byte, a big-endian `i32` length
//! that counts itself but not the type byte, and a body. The startup
//! message has no type byte. This file knows nothing about sockets: it
//! turns values into bytes and bytes into values, so it can be tested with
//! byte strings.

use std::fmt;

/// The protocol version in the startup message: 3.0.
const PROTOCOL_3_0: i32 = 196_608;

/// The largest backend message we accept. Our rows are small; a length
/// over this is a broken or hostile peer, and we say so instead of
/// allocating what it claims.
pub const MAX_MESSAGE: usize = 64 * 1024 * 1024;

/// A frontend message being built: the type byte, a length slot, the body.
struct Builder<'a> {
    out: &'a mut Vec<u8>,
    start: usize,
}

impl<'a> Builder<'a> {
    fn new(out: &'a mut Vec<u8>, kind: Option<u8>) -> Builder<'a> {
        if let Some(kind) = kind {
            out.push(kind);
        }
        let start = out.len();
        out.extend_from_slice(&[0; 4]);
        Builder { out, start }
    }

    fn i16(&mut self, n: i16) -> &mut Self {
        self.out.extend_from_slice(&n.to_be_bytes());
        self
    }

    fn i32(&mut self, n: i32) -> &mut Self {
        self.out.extend_from_slice(&n.to_be_bytes());
        self
    }

    fn cstr(&mut self, s: &str) -> &mut Self {
        self.out.extend_from_slice(s.as_bytes());
        self.out.push(0);
        self
    }

    fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.out.extend_from_slice(b);
        self
    }

    /// Writes the length, which counts itself and the body, into its slot.
    fn finish(self) {
        let len = (self.out.len() - self.start) as i32;
        if let Some(slot) = self.out.get_mut(self.start..self.start + 4) {
            slot.copy_from_slice(&len.to_be_bytes());
        }
    }
}

/// Converts a count to the protocol's `i16`, for the parameter lists.
fn count(n: usize) -> Result<i16, String> {
    i16::try_from(n).map_err(|_| format!("{n} parameters; the protocol allows at most 32767"))
}

/// `StartupMessage`: protocol 3.0 and the session's parameters.
pub fn startup(out: &mut Vec<u8>, user: &str, database: &str) {
    let mut b = Builder::new(out, None);
    b.i32(PROTOCOL_3_0)
        .cstr("user")
        .cstr(user)
        .cstr("database")
        .cstr(database)
        .cstr("client_encoding")
        .cstr("UTF8")
        .cstr("application_name")
        .cstr("jobs-pipeline")
        .bytes(&[0]);
    b.finish();
}

/// `SASLInitialResponse`: the mechanism we chose and the client's first
/// message.
pub fn sasl_initial(out: &mut Vec<u8>, mechanism: &str, data: &[u8]) {
    let mut b = Builder::new(out, Some(b'p'));
    b.cstr(mechanism).i32(data.len() as i32).bytes(data);
    b.finish();
}

/// `SASLResponse`: the client's next message.
pub fn sasl_response(out: &mut Vec<u8>, data: &[u8]) {
    let mut b = Builder::new(out, Some(b'p'));
    b.bytes(data);
    b.finish();
}

/// `Parse`: prepares `sql` as the unnamed statement. The parameter types
/// are left to the server to infer (`$2::jsonb` in the SQL says it).
pub fn parse(out: &mut Vec<u8>, sql: &str) {
    let mut b = Builder::new(out, Some(b'P'));
    b.cstr("").cstr(sql).i16(0);
    b.finish();
}

/// `Bind`: the unnamed statement's parameters, in text format (`None` is
/// SQL NULL), into the unnamed portal. The values travel apart from the
/// SQL, so no value is ever parsed as SQL.
pub fn bind(out: &mut Vec<u8>, params: &[Option<&str>]) -> Result<(), String> {
    let n = count(params.len())?;
    let mut b = Builder::new(out, Some(b'B'));
    b.cstr("").cstr("").i16(0).i16(n);
    for param in params {
        match param {
            Some(value) => b.i32(value.len() as i32).bytes(value.as_bytes()),
            None => b.i32(-1),
        };
    }
    b.i16(0); // results in text format
    b.finish();
    Ok(())
}

/// `Execute`: runs the unnamed portal to completion.
pub fn execute(out: &mut Vec<u8>) {
    let mut b = Builder::new(out, Some(b'E'));
    b.cstr("").i32(0);
    b.finish();
}

/// `Sync`: ends the implicit transaction (commit, or rollback after an
/// error) and asks for `ReadyForQuery`.
pub fn sync(out: &mut Vec<u8>) {
    Builder::new(out, Some(b'S')).finish();
}

/// `Terminate`: a polite goodbye.
pub fn terminate(out: &mut Vec<u8>) {
    Builder::new(out, Some(b'X')).finish();
}

/// A message from the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Backend {
    /// `R`: an authentication step; the code and the rest of the body.
    Authentication {
        code: i32,
        data: Vec<u8>,
    },
    /// `S`: a run-time parameter, such as `server_version`.
    ParameterStatus {
        name: String,
        value: String,
    },
    /// `K`: the key for cancelling queries, which we do not use.
    BackendKeyData,
    /// `Z`: ready for the next query; `I` idle, `T` in a transaction, `E`
    /// in a failed transaction.
    ReadyForQuery(char),
    /// `E`: the command failed.
    Error(ServerError),
    /// `N`: a notice, logged.
    Notice(ServerError),
    ParseComplete,
    BindComplete,
    /// `D`: one row, each column's text or NULL.
    DataRow(Vec<Option<String>>),
    /// `C`: a command finished, with its tag (`INSERT 0 1`).
    CommandComplete(String),
    /// `T`, `n`, `t`, `I`, `s`, `A` and the rest: not needed here.
    Other(u8),
}

/// The fields of an `ErrorResponse` or `NoticeResponse` that we show.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerError {
    /// `ERROR`, `FATAL`, …
    pub severity: String,
    /// The SQLSTATE, such as `23505` (unique violation).
    pub code: String,
    pub message: String,
}

impl fmt::Display for ServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} (SQLSTATE {})",
            self.severity, self.message, self.code
        )
    }
}

/// Decodes the message at the start of `buf`: `Ok(None)` until all of it
/// is there, then the message and its length on the wire.
pub fn decode(buf: &[u8]) -> Result<Option<(Backend, usize)>, String> {
    let (Some(&kind), Some(len)) = (buf.first(), buf.get(1..5)) else {
        return Ok(None);
    };
    let len = i32::from_be_bytes([len[0], len[1], len[2], len[3]]);
    let len = usize::try_from(len)
        .ok()
        .filter(|n| (4..=MAX_MESSAGE).contains(n))
        .ok_or_else(|| format!("backend message {:?} claims length {len}", kind as char))?;
    let Some(body) = buf.get(5..1 + len) else {
        return Ok(None);
    };
    let mut r = Reader { body, pos: 0 };
    let message = match kind {
        b'R' => Backend::Authentication {
            code: r.i32()?,
            data: r.rest().to_vec(),
        },
        b'S' => Backend::ParameterStatus {
            name: r.cstr()?,
            value: r.cstr()?,
        },
        b'K' => Backend::BackendKeyData,
        b'Z' => Backend::ReadyForQuery(char::from(r.u8()?)),
        b'E' => Backend::Error(r.fields()?),
        b'N' => Backend::Notice(r.fields()?),
        b'1' => Backend::ParseComplete,
        b'2' => Backend::BindComplete,
        b'D' => {
            let n = r.i16()?;
            let mut columns = Vec::new();
            for _ in 0..n {
                let len = r.i32()?;
                columns.push(match usize::try_from(len) {
                    Ok(len) => Some(String::from_utf8_lossy(r.take(len)?).into_owned()),
                    Err(_) => None, // -1: NULL
                });
            }
            Backend::DataRow(columns)
        }
        b'C' => Backend::CommandComplete(r.cstr()?),
        other => Backend::Other(other),
    };
    Ok(Some((message, 1 + len)))
}

/// Reads the fields of a backend message; running off the end is an error,
/// never a panic.
struct Reader<'a> {
    body: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let bytes = self
            .body
            .get(self.pos..self.pos.saturating_add(n))
            .ok_or("backend message is shorter than its fields")?;
        self.pos += n;
        Ok(bytes)
    }

    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    fn i16(&mut self) -> Result<i16, String> {
        let b = self.take(2)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }

    fn i32(&mut self) -> Result<i32, String> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn cstr(&mut self) -> Result<String, String> {
        let rest = self.body.get(self.pos..).unwrap_or_default();
        let end = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or("backend string without its terminating zero")?;
        self.pos += end + 1;
        Ok(String::from_utf8_lossy(&rest[..end]).into_owned())
    }

    fn rest(&mut self) -> &'a [u8] {
        let rest = self.body.get(self.pos..).unwrap_or_default();
        self.pos = self.body.len();
        rest
    }

    /// An error or notice: (code byte, zero-terminated text) pairs, then 0.
    fn fields(&mut self) -> Result<ServerError, String> {
        let mut error = ServerError::default();
        loop {
            match self.u8()? {
                0 => return Ok(error),
                field => {
                    let text = self.cstr()?;
                    match field {
                        b'S' => error.severity = text,
                        b'C' => error.code = text,
                        b'M' => error.message = text,
                        _ => {}
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontend_messages_have_their_lengths() {
        let mut out = Vec::new();
        startup(&mut out, "u", "d");
        assert_eq!(
            out,
            b"\0\0\0\x4f\0\x03\0\0user\0u\0database\0d\0client_encoding\0UTF8\0application_name\0jobs-pipeline\0\0"
        );
        let mut out = Vec::new();
        parse(&mut out, "SELECT $1");
        bind(&mut out, &[Some("x"), None]).unwrap();
        execute(&mut out);
        sync(&mut out);
        assert_eq!(
            out,
            b"P\0\0\0\x11\0SELECT $1\0\0\0\
              B\0\0\0\x15\0\0\0\0\0\x02\0\0\0\x01x\xff\xff\xff\xff\0\0\
              E\0\0\0\x09\0\0\0\0\0\
              S\0\0\0\x04"
        );
    }

    #[test]
    fn backend_messages_decode_whole_or_not_at_all() {
        let row = b"D\0\0\0\x11\0\x02\0\0\0\x03abc\xff\xff\xff\xffZ";
        for cut in 0..row.len() - 1 {
            assert_eq!(decode(&row[..cut]), Ok(None), "cut at {cut}");
        }
        assert_eq!(
            decode(row),
            Ok(Some((
                Backend::DataRow(vec![Some("abc".into()), None]),
                row.len() - 1
            )))
        );
        let error = b"E\0\0\0\x1eSERROR\0C23505\0Mduplicate\0\0";
        assert_eq!(
            decode(error).unwrap().unwrap().0,
            Backend::Error(ServerError {
                severity: "ERROR".into(),
                code: "23505".into(),
                message: "duplicate".into()
            })
        );
    }

    #[test]
    fn lies_about_lengths_are_errors() {
        assert_eq!(
            decode(b"D\x7f\xff\xff\xff"),
            Err("backend message 'D' claims length 2147483647".into())
        );
        assert_eq!(
            decode(b"Z\0\0\0\x03"),
            Err("backend message 'Z' claims length 3".into())
        );
        // A row that claims more columns than its body holds.
        assert_eq!(
            decode(b"D\0\0\0\x0a\0\x05\0\0\0\x09"),
            Err("backend message is shorter than its fields".into())
        );
        assert_eq!(
            decode(b"Z\0\0\0\x04"),
            Err("backend message is shorter than its fields".into())
        );
    }
}
