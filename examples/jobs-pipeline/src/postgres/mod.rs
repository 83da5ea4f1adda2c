//! A PostgreSQL client on our runtime: the frontend/backend protocol v3
//! over [`runtime::TcpStream`], with trust and SCRAM-SHA-256
//! authentication and the extended query protocol, whose parameters travel
//! apart from the SQL.
//!
//! [`message`] turns messages into bytes and back, [`scram`] does the
//! password exchange, and this file drives them over a socket; [`pool`]
//! shares a few connections among a server's tasks.

pub mod config;
pub mod message;
pub mod pool;
pub mod scram;

use std::fmt;
use std::io;

use runtime::TcpStream;
use runtime::resolve;

pub use config::PgConfig;
use message::Backend;
pub use message::ServerError;
pub use pool::PgPool;
use scram::Scram;

/// What can go wrong talking to PostgreSQL.
#[derive(Debug)]
pub enum PgError {
    /// The connection failed or closed.
    Io(io::Error),
    /// The server refused a statement (`ERROR: …`). The connection is fine.
    Server(ServerError),
    /// The server sent something that is not the protocol. The connection
    /// is unusable.
    Protocol(String),
    /// We could not log in.
    Auth(String),
}

impl PgError {
    /// Whether the connection must be dropped and a new one made.
    pub fn is_fatal(&self) -> bool {
        !matches!(self, PgError::Server(e) if e.severity == "ERROR")
    }

    /// Whether the server refused the statement for the values it was
    /// given: SQLSTATE class 22 (data exception: a value the type cannot
    /// hold, such as `\u0000` in `jsonb` or a number out of range) or 23
    /// (integrity constraint violation). The same values will be refused
    /// again, so retrying them is pointless; anything else (a lost
    /// connection, a server shutting down) may pass on a retry.
    pub fn is_data_error(&self) -> bool {
        matches!(self, PgError::Server(e)
            if e.severity == "ERROR" && (e.code.starts_with("22") || e.code.starts_with("23")))
    }
}

impl fmt::Display for PgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PgError::Io(e) => write!(f, "postgres connection: {e}"),
            PgError::Server(e) => write!(f, "postgres: {e}"),
            PgError::Protocol(e) => write!(f, "postgres protocol: {e}"),
            PgError::Auth(e) => write!(f, "postgres login: {e}"),
        }
    }
}

impl std::error::Error for PgError {}

impl From<io::Error> for PgError {
    fn from(e: io::Error) -> PgError {
        PgError::Io(e)
    }
}

/// One row: each column's text, or `None` for NULL.
pub type Row = Vec<Option<String>>;

/// A logged-in session.
pub struct Client {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Client {
    // ANCHOR: connect
    /// Connects and logs in: the startup message, then whatever
    /// authentication the server's `pg_hba.conf` asks for, until it is
    /// ready for queries.
    pub async fn connect(config: &PgConfig) -> Result<Client, PgError> {
        let stream = connect_any(&config.host, config.port).await?;
        stream.set_nodelay(true)?;
        let mut client = Client {
            stream,
            buf: Vec::new(),
        };
        let mut out = Vec::new();
        message::startup(&mut out, &config.user, &config.database);
        trace(format_args!(
            "> StartupMessage user={} database={}",
            config.user, config.database
        ));
        client.stream.write_all(&out).await?;
        let mut scram = None;
        loop {
            match client.next().await? {
                Backend::Authentication { code: 0, .. } => {} // in
                Backend::Authentication { code: 10, data } => {
                    // SASL: the server lists its mechanisms.
                    let offered = String::from_utf8_lossy(&data);
                    if !offered.split('\0').any(|m| m == "SCRAM-SHA-256") {
                        return Err(PgError::Auth(format!(
                            "the server offers only {:?}",
                            offered.trim_end_matches('\0')
                        )));
                    }
                    let password = config.password().ok_or_else(|| {
                        PgError::Auth(format!(
                            "{config} wants a password: put it in the URL or in PGPASSWORD"
                        ))
                    })?;
                    let exchange = Scram::new(password).map_err(PgError::Auth)?;
                    let mut out = Vec::new();
                    message::sasl_initial(
                        &mut out,
                        "SCRAM-SHA-256",
                        exchange.client_first().as_bytes(),
                    );
                    trace(format_args!(
                        "> SASLInitialResponse SCRAM-SHA-256 n,,n=,r=(our nonce)"
                    ));
                    client.stream.write_all(&out).await?;
                    scram = Some(exchange);
                }
                Backend::Authentication { code: 11, data } => {
                    let exchange = scram.as_mut().ok_or_else(|| {
                        PgError::Protocol("SCRAM continue before SCRAM started".into())
                    })?;
                    let reply = exchange
                        .client_final(&String::from_utf8_lossy(&data))
                        .map_err(PgError::Auth)?;
                    let mut out = Vec::new();
                    message::sasl_response(&mut out, reply.as_bytes());
                    trace(format_args!(
                        "> SASLResponse c=biws,r=(both nonces),p=(our proof)"
                    ));
                    client.stream.write_all(&out).await?;
                }
                Backend::Authentication { code: 12, data } => {
                    let exchange = scram.as_ref().ok_or_else(|| {
                        PgError::Protocol("SCRAM final before SCRAM started".into())
                    })?;
                    exchange
                        .verify(&String::from_utf8_lossy(&data))
                        .map_err(PgError::Auth)?;
                }
                Backend::Authentication { code, .. } => {
                    return Err(PgError::Auth(format!(
                        "the server asks for authentication method {code} ({}); \
                         we speak trust and scram-sha-256",
                        match code {
                            3 => "cleartext password",
                            5 => "md5",
                            _ => "unsupported",
                        }
                    )));
                }
                Backend::Error(e) => return Err(PgError::Server(e)),
                Backend::ReadyForQuery(_) => return Ok(client),
                _ => {} // parameter statuses, the cancel key
            }
        }
    }
    // ANCHOR_END: connect

    /// Runs one statement with its parameters and returns its rows.
    pub async fn query(&mut self, sql: &str, params: &[Option<&str>]) -> Result<Vec<Row>, PgError> {
        let (rows, _) = self.extended(sql, &[params]).await?;
        Ok(rows)
    }

    /// Runs one statement and returns how many rows it affected.
    pub async fn execute(&mut self, sql: &str, params: &[Option<&str>]) -> Result<u64, PgError> {
        let (_, counts) = self.extended(sql, &[params]).await?;
        Ok(counts.first().copied().unwrap_or(0))
    }

    /// Runs one statement once per parameter list, in one round trip and
    /// one transaction: all of them commit, or (on any error) none.
    /// Returns each execution's affected-row count.
    pub async fn execute_batch(
        &mut self,
        sql: &str,
        batch: &[&[Option<&str>]],
    ) -> Result<Vec<u64>, PgError> {
        let (_, counts) = self.extended(sql, batch).await?;
        Ok(counts)
    }

    // ANCHOR: extended
    /// The extended query protocol: `Parse` once, `Bind` and `Execute` for
    /// each parameter list, and one `Sync`. Messages up to a `Sync` form one
    /// implicit transaction, and the server answers them all after the
    /// `Sync`: one write, one round trip. After an error the server skips
    /// to the `Sync`, so we read up to `ReadyForQuery` either way and the
    /// connection stays usable.
    async fn extended(
        &mut self,
        sql: &str,
        batch: &[&[Option<&str>]],
    ) -> Result<(Vec<Row>, Vec<u64>), PgError> {
        let mut out = Vec::new();
        message::parse(&mut out, sql);
        trace(format_args!("> Parse {sql:?}"));
        for params in batch {
            message::bind(&mut out, params).map_err(PgError::Protocol)?;
            message::execute(&mut out);
            trace(format_args!("> Bind {params:?}"));
            trace(format_args!("> Execute"));
        }
        message::sync(&mut out);
        trace(format_args!("> Sync"));
        self.stream.write_all(&out).await?;
        let (mut rows, mut counts, mut error) = (Vec::new(), Vec::new(), None);
        loop {
            match self.next().await? {
                Backend::DataRow(row) => rows.push(row),
                Backend::CommandComplete(tag) => {
                    // "INSERT 0 1", "UPDATE 3", "SELECT 2": the last word.
                    let n = tag.rsplit(' ').next().and_then(|n| n.parse().ok());
                    counts.push(n.unwrap_or(0));
                }
                Backend::Error(e) => error = error.or(Some(e)),
                Backend::ReadyForQuery(_) => break,
                _ => {}
            }
        }
        match error {
            Some(e) => Err(PgError::Server(e)),
            None => Ok((rows, counts)),
        }
    }
    // ANCHOR_END: extended

    /// Says goodbye and closes the connection.
    pub async fn close(mut self) {
        let mut out = Vec::new();
        message::terminate(&mut out);
        let _ = self.stream.write_all(&out).await;
    }

    /// The next backend message, reading as needed. Notices are logged and
    /// skipped.
    async fn next(&mut self) -> Result<Backend, PgError> {
        let mut chunk = [0u8; 16 * 1024];
        loop {
            if let Some((message, used)) = message::decode(&self.buf).map_err(PgError::Protocol)? {
                self.buf.drain(..used);
                match &message {
                    // The SCRAM messages carry salts, nonces and proofs.
                    Backend::Authentication { code, .. } => {
                        trace(format_args!("< Authentication {}", auth_name(*code)))
                    }
                    other => trace(format_args!("< {other:?}")),
                }
                match message {
                    Backend::Notice(notice) => log::debug!("postgres says {notice}"),
                    Backend::Error(e) if e.severity == "FATAL" || e.severity == "PANIC" => {
                        // The server ends the session after a FATAL one
                        // (a shutdown, say).
                        return Err(PgError::Server(e));
                    }
                    message => return Ok(message),
                }
                continue;
            }
            match self.stream.read(&mut chunk).await? {
                0 => {
                    return Err(PgError::Io(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed the connection",
                    )));
                }
                n => self
                    .buf
                    .extend_from_slice(chunk.get(..n).unwrap_or_default()),
            }
        }
    }
}

async fn connect_any(host: &str, port: u16) -> Result<TcpStream, PgError> {
    let mut last = None;
    for addr in resolve(host, port).await? {
        match TcpStream::connect(addr).await {
            Ok(stream) => return Ok(stream),
            Err(e) => {
                last = Some(io::Error::new(
                    e.kind(),
                    format!("cannot connect to postgres at {addr}: {e}"),
                ))
            }
        }
    }
    Err(PgError::Io(last.unwrap_or_else(|| {
        io::Error::new(io::ErrorKind::NotFound, format!("{host} has no addresses"))
    })))
}

/// Logs one protocol message at trace level (`RUST_LOG=jobs_pipeline::postgres=trace`).
/// Nothing secret is ever passed here.
fn trace(message: fmt::Arguments<'_>) {
    log::trace!("{message}");
}

fn auth_name(code: i32) -> &'static str {
    match code {
        0 => "Ok",
        3 => "CleartextPassword",
        5 => "MD5Password",
        10 => "SASL (the server offers SCRAM-SHA-256)",
        11 => "SASLContinue r=(both nonces),s=(salt),i=(iterations)",
        12 => "SASLFinal v=(the server's signature)",
        _ => "(another method)",
    }
}
