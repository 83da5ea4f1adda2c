//! Filler prose and the site's only source of "randomness".
//!
//! Pages are padded with paragraphs so that a crawler downloads and parses
//! realistically sized documents. Everything here is a pure function of its
//! inputs: two sites built from the same configuration serve the same bytes.

/// SplitMix64: a tiny, well-mixed hash. We use it as a deterministic PRNG by
/// hashing (seed, counter) pairs, so no generator state has to be threaded
/// through the page builders.
pub(crate) fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Hashes two numbers into one.
pub(crate) fn mix2(a: u64, b: u64) -> u64 {
    mix(mix(a) ^ b)
}

/// Plain ASCII sentences with no markup characters, so they can be pasted
/// into any page (UTF-8 or Latin-1) without escaping.
const SENTENCES: &[&str] = &[
    "A web crawler starts from a single page, downloads it, finds the links it contains, and repeats the process for every new link it discovers.",
    "The interesting part is not parsing HTML but waiting: almost all of a crawler's time is spent waiting for the network to deliver bytes.",
    "With one thread per connection, a program that wants ten thousand open sockets needs ten thousand stacks, which is more memory than it can afford.",
    "An event loop turns the problem around by asking the operating system which sockets are ready and then doing a little work on each of them.",
    "Callbacks make that style possible, but they scatter the logic of a single fetch across several functions that share state through fields.",
    "Coroutines give the logic back its shape: a fetch reads from top to bottom again, and every place where it may wait is marked explicitly.",
    "In Rust the same idea appears as futures, which are state machines that the compiler writes for us from ordinary-looking async functions.",
    "A future does nothing until it is polled, and when it cannot make progress it arranges to be woken up later and returns Pending.",
    "The executor keeps a queue of tasks that are ready to run, and the reactor moves tasks onto that queue when their sockets become readable.",
    "Deduplication matters because the web is full of cycles; without a set of seen URLs a crawler would visit the same pages forever.",
    "Redirects are links too, written in a response header instead of the body, and a careful crawler resolves them against the request URL.",
    "A fragment identifies a place inside a document, not a different document, so a crawler drops it before deciding whether a URL is new.",
    "Relative links are resolved against the address of the page they appear on, unless the page declares a different base address.",
    "Servers announce the length of a body with a Content-Length header, send it in chunks, or simply close the connection when they are done.",
    "Keeping a connection open for several requests saves a round trip for every new connection and is the default behaviour of HTTP/1.1.",
    "A crawler that limits how many fetches run at once is polite to the servers it visits and keeps its own memory use predictable.",
    "Measuring beats guessing: counting connections, requests and the peak number of requests in flight shows what a crawler really does.",
    "The chapter this project retells was written for Python's asyncio, but its lessons carry over to any language with an event loop.",
];

/// Returns `<p>` paragraphs totalling `budget` bytes (exactly, unless the
/// budget is too small to hold a meaningful paragraph, in which case less).
pub(crate) fn paragraphs(budget: usize, seed: u64) -> String {
    const MIN_PARAGRAPH: usize = 40;
    let mut out = String::with_capacity(budget);
    let mut n = 0u64;
    while budget.saturating_sub(out.len()) >= MIN_PARAGRAPH {
        let remaining = budget - out.len();
        let mut text = String::new();
        let sentences = 3 + mix2(seed, n) % 4;
        for i in 0..sentences {
            let pick = mix2(seed ^ 0x5EED, n * 8 + i) as usize % SENTENCES.len();
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(SENTENCES[pick]);
        }
        n += 1;
        // "<p>" + text + "</p>\n" is text.len() + 8 bytes. If what would be
        // left after this paragraph is too small for another one, this is
        // the last paragraph: lengthen it if needed, then cut it to fit
        // exactly. The text is ASCII, so any byte index is a char boundary.
        if text.len() + 8 + MIN_PARAGRAPH > remaining {
            let mut extra = 0;
            while text.len() + 8 < remaining {
                let pick = mix2(seed ^ 0xE7, n * 8 + extra) as usize % SENTENCES.len();
                text.push(' ');
                text.push_str(SENTENCES[pick]);
                extra += 1;
            }
            text.truncate(remaining - 8);
            let trimmed = text.trim_end().len();
            text.truncate(trimmed);
            while text.len() + 8 < remaining {
                text.push('.');
            }
        }
        out.push_str("<p>");
        out.push_str(&text);
        out.push_str("</p>\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_are_plain_ascii() {
        for s in SENTENCES {
            assert!(s.is_ascii());
            assert!(!s.contains(['<', '>', '&', '"']));
        }
    }

    #[test]
    fn paragraphs_fill_budget_exactly() {
        for budget in [40, 41, 100, 999, 2_000, 100_000] {
            assert_eq!(paragraphs(budget, 3).len(), budget, "budget {budget}");
        }
        assert_eq!(paragraphs(39, 3), "");
        assert_eq!(paragraphs(0, 3), "");
    }

    #[test]
    fn paragraphs_are_deterministic() {
        assert_eq!(paragraphs(5_000, 1), paragraphs(5_000, 1));
        assert_ne!(paragraphs(5_000, 1), paragraphs(5_000, 2));
    }
}
