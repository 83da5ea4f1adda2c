//! A tiny site for tests that need exact answers the demo site does not
//! give: each path a fixed response, after an optional delay, every
//! request's arrival recorded.

use std::collections::HashMap;
use std::io::{BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use demo_site::testing::read_request;

/// One fixed answer.
#[derive(Clone, Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Waited before answering (on the connection's own thread).
    pub delay: Duration,
    /// A whole response (head and body) written as given, instead of
    /// one made of the fields above, after which the connection closes:
    /// for the hostile ones (stacked codings, a body over the cap).
    pub raw: Option<Vec<u8>>,
    /// Once the path has been asked for this many times in all, the other
    /// answer (which may have a later one of its own).
    pub later: Option<(usize, Box<Answer>)>,
}

impl Answer {
    /// A 200 HTML page linking `links`.
    pub fn links(links: &[&str]) -> Answer {
        let body: String = links.iter().map(|l| format!("<a href={l}>x</a>")).collect();
        Answer::with_type(200, "text/html", body.into_bytes())
    }

    /// A redirect to `to`.
    pub fn redirect(status: u16, to: &str) -> Answer {
        Answer {
            headers: vec![("Location".into(), to.into())],
            ..Answer::with_type(status, "text/html", Vec::new())
        }
    }

    /// `status` with a plain-text body.
    pub fn text(status: u16, body: &str) -> Answer {
        Answer::with_type(status, "text/plain", body.as_bytes().to_vec())
    }

    /// `status` with a body of `content_type`.
    pub fn with_type(status: u16, content_type: &str, body: Vec<u8>) -> Answer {
        Answer {
            status,
            headers: vec![("Content-Type".into(), content_type.into())],
            body,
            delay: Duration::ZERO,
            raw: None,
            later: None,
        }
    }

    /// `response` exactly as given, then the connection closes.
    pub fn raw(response: Vec<u8>) -> Answer {
        Answer {
            raw: Some(response),
            ..Answer::text(200, "")
        }
    }

    /// This answer the first `times` times the path is asked for, then
    /// `later`.
    pub fn then(mut self, times: usize, later: Answer) -> Answer {
        self.later = Some((times, Box::new(later)));
        self
    }

    /// This answer with one more header.
    pub fn with_header(mut self, name: &str, value: &str) -> Answer {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The same answer, after `delay`.
    pub fn after(mut self, delay: Duration) -> Answer {
        self.delay = delay;
        self
    }
}

/// The running site. Unknown paths answer 404.
pub struct StaticSite {
    pub addr: SocketAddr,
    log: Arc<Mutex<Vec<(Instant, String)>>>,
}

impl StaticSite {
    /// Serves `answers` on a free port of 127.0.0.1.
    pub fn start(answers: Vec<(&str, Answer)>) -> StaticSite {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let answers: HashMap<String, Answer> = answers
            .into_iter()
            .map(|(path, answer)| (path.to_string(), answer))
            .collect();
        let (answers, log) = (Arc::new(answers), Arc::new(Mutex::new(Vec::new())));
        let shared = Arc::clone(&log);
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let (answers, log) = (Arc::clone(&answers), Arc::clone(&shared));
                thread::spawn(move || serve(stream, &answers, &log));
            }
        });
        StaticSite { addr, log }
    }

    /// `http://ADDR{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The paths requested, in order of arrival.
    pub fn requests(&self) -> Vec<String> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .map(|(_, p)| p.clone())
            .collect()
    }

    /// How many requests each path got.
    pub fn counts(&self) -> std::collections::BTreeMap<String, usize> {
        let mut counts = std::collections::BTreeMap::new();
        for path in self.requests() {
            *counts.entry(path).or_insert(0) += 1;
        }
        counts
    }

    /// When each request arrived, with its path, in order.
    pub fn arrivals(&self) -> Vec<(Instant, String)> {
        self.log.lock().unwrap().clone()
    }
}

fn serve(
    stream: TcpStream,
    answers: &HashMap<String, Answer>,
    log: &Mutex<Vec<(Instant, String)>>,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut stream = stream;
    while let Some(request) = read_request(&mut reader) {
        let path = request.split(' ').nth(1).unwrap_or("").to_string();
        let asked_before = {
            let mut log = log.lock().unwrap();
            log.push((Instant::now(), path.clone()));
            log.iter().filter(|(_, p)| *p == path).count() - 1
        };
        let mut answer = answers
            .get(&path)
            .cloned()
            .unwrap_or_else(|| Answer::text(404, "not found"));
        while let Some((times, later)) = answer.later.take() {
            if asked_before < times {
                break;
            }
            answer = *later;
        }
        thread::sleep(answer.delay);
        if let Some(raw) = &answer.raw {
            // A client that stops reading (a body over its cap) fails the
            // write: that is its business.
            let _ = stream.write_all(raw);
            return;
        }
        let mut head = format!("HTTP/1.1 {} X\r\n", answer.status);
        for (name, value) in &answer.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str(&format!("Content-Length: {}\r\n\r\n", answer.body.len()));
        if stream.write_all(head.as_bytes()).is_err() || stream.write_all(&answer.body).is_err() {
            return;
        }
    }
}
