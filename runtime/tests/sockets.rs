//! Sockets: cancellation closes them, refused connects fail fast, and a
//! silent peer costs a timeout.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use runtime::timeout;
use runtime::{Elapsed, TcpListener, TcpStream, run_until_complete, spawn};

fn any_port() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

#[test]
fn cancelling_a_task_drops_its_future_and_closes_its_socket() {
    let seen_by_server = run_until_complete(timeout(Duration::from_secs(30), async {
        let mut listener = TcpListener::bind(any_port()).unwrap();
        let addr = listener.local_addr().unwrap();
        // The client connects, then waits for a reply that never comes.
        let client = spawn(async move {
            let mut stream = TcpStream::connect(addr).await?;
            let mut buf = [0u8; 1];
            stream.read(&mut buf).await
        });
        let (mut server_side, _) = listener.accept().await.unwrap();
        client.cancel();
        assert_eq!(client.await.unwrap_err(), runtime::JoinError::Cancelled);
        // Dropping the future closed the client's socket: the server reads
        // end-of-file instead of waiting forever.
        let mut buf = [0u8; 1];
        server_side.read(&mut buf).await.unwrap()
    }))
    .unwrap();
    assert_eq!(seen_by_server, Ok(0));
}

#[test]
fn connecting_to_a_closed_port_is_refused_not_hung() {
    // Bind to learn a free port, then close it so nobody listens there.
    let addr = std::net::TcpListener::bind(any_port())
        .unwrap()
        .local_addr()
        .unwrap();
    let result =
        run_until_complete(timeout(Duration::from_secs(30), TcpStream::connect(addr))).unwrap();
    let err = result.expect("not timed out").unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::ConnectionRefused);
}

#[test]
fn timeout_fires_on_a_peer_that_never_answers() {
    let out = run_until_complete(async {
        let mut listener = TcpListener::bind(any_port()).unwrap();
        let addr = listener.local_addr().unwrap();
        let mut client = TcpStream::connect(addr).await.unwrap();
        // Accepted, and then silence.
        let (_silent, _) = listener.accept().await.unwrap();
        client.write_all(b"hello?").await.unwrap();
        let mut buf = [0u8; 16];
        timeout(Duration::from_millis(50), client.read(&mut buf)).await
    })
    .unwrap();
    assert_eq!(out.unwrap_err(), Elapsed(Duration::from_millis(50)));
}

#[test]
fn write_all_survives_partial_writes() {
    // 8 MiB is far more than a socket buffer takes in one write, so
    // write_all must go round several times while the peer drains.
    const LEN: usize = 8 * 1024 * 1024;
    let received = run_until_complete(async {
        let mut listener = TcpListener::bind(any_port()).unwrap();
        let addr = listener.local_addr().unwrap();
        let reader = spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut all = Vec::new();
            s.read_to_end(&mut all).await.unwrap();
            all
        });
        let mut client = TcpStream::connect(addr).await.unwrap();
        let data: Vec<u8> = (0..LEN).map(|i| (i % 251) as u8).collect();
        client.write_all(&data).await.unwrap();
        drop(client);
        reader.await.unwrap()
    })
    .unwrap();
    assert_eq!(received.len(), LEN);
    assert!(
        received
            .iter()
            .enumerate()
            .all(|(i, b)| *b == (i % 251) as u8)
    );
}
