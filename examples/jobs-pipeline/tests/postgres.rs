//! The PostgreSQL client against a real server.

mod common;

use std::sync::mpsc;
use std::time::Duration;

use common::postgres::{PASSWORD, PgServer, TRUSTED};
use jobs_pipeline::postgres::{Client, PgConfig, PgError};
use jobs_pipeline::table;
use runtime::run_until_complete;

fn bounded<T: Send + 'static>(test: impl AsyncFnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let out = run_until_complete(test()).expect("the runtime runs");
        let _ = tx.send(out);
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the test finishes within a minute")
}

fn config(url: &str) -> PgConfig {
    PgConfig::parse(url, None).unwrap()
}

#[test]
fn scram_login_and_parameters_that_are_never_sql() {
    let server = PgServer::start();
    let config = config(&server.url());
    bounded(async move || {
        let mut db = Client::connect(&config).await.unwrap();
        db.execute(
            "CREATE TABLE t (id bigint PRIMARY KEY, doc jsonb NOT NULL)",
            &[],
        )
        .await
        .unwrap();
        let evil = r#"{"name": "x'); DROP TABLE t; --", "n": null}"#;
        assert_eq!(
            db.execute(
                "INSERT INTO t VALUES ($1, $2::jsonb)",
                &[Some("1"), Some(evil)]
            )
            .await
            .unwrap(),
            1
        );
        // Idempotent insert: the second one does nothing, and says so.
        assert_eq!(
            db.execute(
                "INSERT INTO t VALUES ($1, $2::jsonb) ON CONFLICT (id) DO NOTHING",
                &[Some("1"), Some("{}")]
            )
            .await
            .unwrap(),
            0
        );
        let rows = db
            .query(
                "SELECT id, doc->>'name', doc->'n', $1::text FROM t",
                &[None],
            )
            .await
            .unwrap();
        assert_eq!(
            rows,
            [vec![
                Some("1".into()),
                Some("x'); DROP TABLE t; --".into()),
                Some("null".into()),
                None
            ]]
        );
        db.close().await;
    });
}

#[test]
fn a_trusted_role_logs_in_without_a_password() {
    let server = PgServer::start();
    let admin = config(&server.url());
    let trusted = config(&format!(
        "postgres://{TRUSTED}@127.0.0.1:{}/postgres",
        server.port()
    ));
    bounded(async move || {
        let mut db = Client::connect(&admin).await.unwrap();
        db.execute(&format!("CREATE ROLE {TRUSTED} LOGIN"), &[])
            .await
            .unwrap();
        let mut db = Client::connect(&trusted).await.unwrap();
        assert_eq!(
            db.query("SELECT current_user", &[]).await.unwrap(),
            [vec![Some(TRUSTED.to_string())]]
        );
    });
}

#[test]
fn wrong_or_missing_passwords_are_refused_without_showing_them() {
    let server = PgServer::start();
    let wrong = config(&format!(
        "postgres://postgres:not-{PASSWORD}@127.0.0.1:{}/postgres",
        server.port()
    ));
    let missing = config(&format!(
        "postgres://postgres@127.0.0.1:{}/postgres",
        server.port()
    ));
    let port = server.port();
    bounded(async move || {
        let err = Client::connect(&wrong).await.err().unwrap().to_string();
        assert_eq!(
            err,
            "postgres: FATAL: password authentication failed for user \"postgres\" (SQLSTATE 28P01)"
        );
        let err = Client::connect(&missing).await.err().unwrap().to_string();
        assert_eq!(
            err,
            format!(
                "postgres login: postgres://postgres@127.0.0.1:{port}/postgres wants a password: \
                 put it in the URL or in PGPASSWORD"
            )
        );
    });
}

#[test]
fn a_batch_commits_whole_or_not_at_all_and_errors_leave_the_connection_usable() {
    let server = PgServer::start();
    let config = config(&server.url());
    bounded(async move || {
        let mut db = Client::connect(&config).await.unwrap();
        db.execute("CREATE TABLE t (id int PRIMARY KEY)", &[])
            .await
            .unwrap();
        let counts = db
            .execute_batch(
                "INSERT INTO t VALUES ($1)",
                &[&[Some("1")], &[Some("2")], &[Some("3")]],
            )
            .await
            .unwrap();
        assert_eq!(counts, [1, 1, 1]);
        // The third row collides: the fourth, before it, is rolled back.
        let err = db
            .execute_batch("INSERT INTO t VALUES ($1)", &[&[Some("4")], &[Some("1")]])
            .await
            .unwrap_err();
        assert!(
            matches!(&err, PgError::Server(e) if e.code == "23505"),
            "{err}"
        );
        assert!(!err.is_fatal());
        // A value the row cannot hold is refused for its data, which no
        // retry mends; a mistake in the SQL is not a data error.
        assert!(err.is_data_error());
        let err = db
            .execute("SELECT $1::jsonb", &[Some(r#"{"name": "a\u0000b"}"#)])
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "postgres: ERROR: unsupported Unicode escape sequence (SQLSTATE 22P05)"
        );
        assert!(err.is_data_error() && !err.is_fatal());
        let err = db.execute("SELEKT 1", &[]).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "postgres: ERROR: syntax error at or near \"SELEKT\" (SQLSTATE 42601)"
        );
        assert!(!err.is_data_error());
        assert_eq!(
            db.query("SELECT count(*) FROM t", &[]).await.unwrap(),
            [vec![Some("3".into())]]
        );
    });
}

#[test]
fn a_restarted_server_is_an_io_error_then_a_new_connection_works() {
    let mut server = PgServer::start();
    let config = config(&server.url());
    let (tx, rx) = mpsc::channel::<()>();
    let (ready_tx, ready_rx) = mpsc::channel::<()>();
    let client = std::thread::spawn(move || {
        run_until_complete(async move {
            let mut db = Client::connect(&config).await.unwrap();
            ready_tx.send(()).unwrap();
            rx.recv().unwrap(); // restarted meanwhile
            let err = db.query("SELECT 1", &[]).await.unwrap_err();
            assert!(err.is_fatal(), "{err}");
            assert!(!err.is_data_error(), "{err}");
            let mut db = Client::connect(&config).await.unwrap();
            assert_eq!(
                db.query("SELECT 1", &[]).await.unwrap(),
                [vec![Some("1".into())]]
            );
        })
        .unwrap();
    });
    ready_rx.recv_timeout(Duration::from_secs(60)).unwrap();
    server.restart();
    tx.send(()).unwrap();
    client.join().unwrap();
}

/// The api's lookups (`lookup.rs`): many requests at once, each with its
/// own answer, stored or not, whichever batch it lands in; a row that is
/// not a job spoils that id's answer only; a dropped request does not stop
/// the others.
#[test]
fn lookups_asked_at_once_each_get_their_own_answer() {
    use std::rc::Rc;

    use jobs_pipeline::Job;
    use jobs_pipeline::lookup::Lookups;
    use jobs_pipeline::postgres::PgPool;
    use jobs_pipeline::table;

    let server = PgServer::start();
    let config = config(&server.url());
    bounded(async move || {
        let mut db = Client::connect(&config).await.unwrap();
        db.execute(table::SCHEMA, &[]).await.unwrap();
        for id in (2..=600).step_by(2) {
            let doc = format!(r#"{{"id": {id}, "name": "j{id}", "priority": 1}}"#);
            let id = id.to_string();
            db.execute(table::INSERT, &[Some(id.as_str()), Some(doc.as_str())])
                .await
                .unwrap();
        }
        db.execute(table::INSERT, &[Some("7"), Some(r#"{"not": "a job"}"#)])
            .await
            .unwrap();
        let lookups = Rc::new(Lookups::start(Rc::new(PgPool::new(config, 2)), 2));
        // 601 requests: more than one batch holds.
        let asks: Vec<_> = (1..=601u64)
            .map(|id| {
                let lookups = lookups.clone();
                runtime::spawn(async move { (id, lookups.find(id).await) })
            })
            .collect();
        // One more, given up once it has asked.
        let given_up = runtime::spawn({
            let lookups = lookups.clone();
            async move { lookups.find(2).await }
        });
        runtime::yield_now().await;
        given_up.cancel();
        for ask in asks {
            let (id, found) = ask.await.unwrap();
            match id {
                7 => assert!(
                    found.as_ref().is_err_and(|e| e.contains("not a job")),
                    "{found:?}"
                ),
                id if id % 2 == 0 && id <= 600 => assert_eq!(
                    found,
                    Ok(Some(Job {
                        id,
                        name: format!("j{id}"),
                        priority: 1
                    }))
                ),
                _ => assert_eq!(found, Ok(None), "{id}"),
            }
        }
    });
}

#[test]
fn two_services_making_the_table_at_once_both_start() {
    // The api and the store started together on a database without the
    // table: the second's CREATE TABLE IF NOT EXISTS waited for the first's
    // transaction, then failed on pg_type's unique index, and its service
    // exited. Here the first's transaction is held open until the second is
    // seen waiting, so the race happens every time.
    let server = PgServer::start();
    let config = config(&server.url());
    bounded(async move || {
        let mut first = Client::connect(&config).await.unwrap();
        let mut second = Client::connect(&config).await.unwrap();
        let mut watch = Client::connect(&config).await.unwrap();
        first.execute("BEGIN", &[]).await.unwrap();
        first.execute(table::SCHEMA, &[]).await.unwrap();
        let racing = runtime::spawn(async move { second.execute(table::SCHEMA, &[]).await });
        let waiting = "SELECT count(*)::text FROM pg_stat_activity WHERE wait_event_type = 'Lock'";
        let mut polls = 0;
        loop {
            let rows = watch.query(waiting, &[]).await.unwrap();
            if rows[0][0].as_deref() == Some("1") {
                break;
            }
            polls += 1;
            assert!(polls < 2_000, "the second never waited for the first");
            runtime::sleep(Duration::from_millis(5)).await;
        }
        first.execute("COMMIT", &[]).await.unwrap();
        let second = racing.await.unwrap();
        assert!(second.is_ok(), "{second:?}");
        let rows = watch
            .query("SELECT count(*)::text FROM jobs", &[])
            .await
            .unwrap();
        assert_eq!(rows[0][0].as_deref(), Some("0"));
    });
}
