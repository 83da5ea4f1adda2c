//! Finding hrefs without a general HTML tokenizer.
//!
//! A crawler needs start tags and one attribute, not a document. html5ever's
//! tokenizer (stage 1's `tokenizer_hrefs`) reads every character through a
//! state machine, building a token for each run of text and a tag with all
//! its attributes. This scanner is the slice of the same WHATWG tokenizer
//! rules that decides where tags are, and nothing more:
//!
//! - In text it jumps from `<` to `<` (`memchr`), never looking at the bytes
//!   between.
//! - It reads tag names and attributes, but keeps only an `href`, decoding
//!   its character references (`&amp;`) with html5ever's own entity table.
//! - It skips comments, doctypes and bogus comments the way the tokenizer
//!   ends them, and treats `<script>`, `<style>`, `<title>` and their kin as
//!   raw text, as the tree builder would tell the tokenizer to.
//!
//! It must find exactly what `tokenizer_hrefs` finds. The tests below check
//! that on hand-written corner cases and on thousands of generated
//! fragments, and the crawler's own tests run it over the demo site.
//!
//! The input is a `&str`; every byte the rules look at is ASCII, so scanning
//! bytes never splits a character, and slices between them are valid UTF-8.

use std::borrow::Cow;

use html5ever::data::{C1_REPLACEMENTS, NAMED_ENTITIES};
use memchr::{memchr, memchr2};

pub mod oracle;
use crawl_kit::links::Href;

// ANCHOR: scan_hrefs
/// Every `href` attribute of a start tag in `html`, in document order, with
/// character references decoded, as html5ever's tokenizer would report it.
pub fn scan_hrefs(html: &str) -> Vec<Href> {
    let mut scanner = Scanner {
        html,
        bytes: html.as_bytes(),
        pos: 0,
        hrefs: Vec::new(),
        foreign_depth: 0,
    };
    scanner.run();
    scanner.hrefs
}
// ANCHOR_END: scan_hrefs

// ANCHOR: text_kinds
/// What the text after a start tag is, as the tree builder would tell the
/// tokenizer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Text {
    /// Ordinary markup.
    Data,
    /// `<style>`, `<title>` and the like: nothing is a tag until the
    /// matching end tag. (RCDATA's character references matter only for
    /// text, so RCDATA and RAWTEXT look the same to us.)
    Raw(&'static str),
    /// `<script>`: raw text, with the HTML-comment escapes of old.
    Script,
    /// `<plaintext>`: everything to the end is text.
    Plaintext,
}
// ANCHOR_END: text_kinds

/// A tag the scanner read to its closing `>`.
struct Tag<'a> {
    name: &'a str,
    end: bool,
    self_closing: bool,
    href: Option<String>,
}

struct Scanner<'a> {
    html: &'a str,
    bytes: &'a [u8],
    /// The next byte to look at.
    pos: usize,
    hrefs: Vec<Href>,
    /// Inside `<svg>` or `<math>`, where `<style>` and `<title>` are
    /// ordinary elements and `<base>` is not the document's base. The same
    /// rule as stage 1's `HrefSink`.
    foreign_depth: usize,
}

fn is_space(b: u8) -> bool {
    // CR is here because the tokenizer sees it as LF.
    matches!(b, b'\t' | b'\n' | b'\x0C' | b'\r' | b' ')
}

/// Whether `b` ends a tag name (and, in raw text, an end tag's name).
fn ends_name(b: u8) -> bool {
    is_space(b) || b == b'/' || b == b'>'
}

impl<'a> Scanner<'a> {
    // ANCHOR: run
    fn run(&mut self) {
        let mut text = Text::Data;
        loop {
            let tag = match text {
                Text::Data => self.markup(),
                Text::Raw(name) => self.raw_text(name),
                Text::Script => self.script_text(),
                Text::Plaintext => return,
            };
            // `None` means the input ended; a tag cut off by the end of the
            // input is dropped, as the tokenizer drops it.
            let Some(tag) = tag else { return };
            text = self.on_tag(tag);
        }
    }
    // ANCHOR_END: run

    // ANCHOR: on_tag
    /// Records a tag's href and decides what text follows it.
    fn on_tag(&mut self, tag: Tag<'a>) -> Text {
        let is = |name: &str| tag.name.eq_ignore_ascii_case(name);
        let foreign = is("svg") || is("math");
        if tag.end {
            if foreign {
                self.foreign_depth = self.foreign_depth.saturating_sub(1);
            }
            return Text::Data;
        }
        if let Some(value) = tag.href {
            self.hrefs.push(Href {
                value,
                is_base: is("base") && self.foreign_depth == 0,
            });
        }
        if foreign && !tag.self_closing {
            self.foreign_depth += 1;
        }
        if self.foreign_depth > 0 {
            return Text::Data;
        }
        const RAW: [&str; 8] = [
            "style", "xmp", "iframe", "noembed", "noframes", "noscript", "title", "textarea",
        ];
        if is("script") {
            Text::Script
        } else if is("plaintext") {
            Text::Plaintext
        } else if let Some(name) = RAW.into_iter().find(|name| is(name)) {
            Text::Raw(name)
        } else {
            Text::Data
        }
    }
    // ANCHOR_END: on_tag

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// Moves past the next `needle`, or to the end. Returns whether it was
    /// found.
    fn skip_past(&mut self, needle: u8) -> bool {
        match memchr(needle, &self.bytes[self.pos..]) {
            Some(i) => {
                self.pos += i + 1;
                true
            }
            None => {
                self.pos = self.bytes.len();
                false
            }
        }
    }

    // ANCHOR: markup
    /// Ordinary markup: the next tag, skipping text, comments, doctypes and
    /// everything else that cannot hold an href.
    fn markup(&mut self) -> Option<Tag<'a>> {
        loop {
            if !self.skip_past(b'<') {
                return None;
            }
            match self.peek()? {
                b if b.is_ascii_alphabetic() => return self.tag(false),
                b'/' => {
                    self.pos += 1;
                    match self.peek()? {
                        b if b.is_ascii_alphabetic() => return self.tag(true),
                        b'>' => self.pos += 1, // `</>` is dropped
                        _ => self.bogus_comment(),
                    }
                }
                b'!' => {
                    self.pos += 1;
                    self.markup_declaration();
                }
                b'?' => self.bogus_comment(),
                _ => {} // a `<` that starts nothing is text
            }
        }
    }
    // ANCHOR_END: markup

    /// After `<!`: a comment, a doctype, or a bogus comment.
    fn markup_declaration(&mut self) {
        let rest = &self.bytes[self.pos..];
        if rest.starts_with(b"--") {
            self.pos += 2;
            self.comment();
        } else if rest.len() >= 7 && rest[..7].eq_ignore_ascii_case(b"doctype") {
            // No state of a doctype lets a `>` through, quoted or not.
            self.skip_past(b'>');
        } else {
            // `<![CDATA[` too: outside foreign content it is a bogus comment.
            self.bogus_comment();
        }
    }

    // ANCHOR: comment
    /// After `<!--`. The comment ends at the first `-->` or `--!>`, except
    /// that `<!-->` and `<!--->` end at once.
    fn comment(&mut self) {
        let rest = &self.bytes[self.pos..];
        if rest.starts_with(b">") {
            self.pos += 1;
            return;
        }
        if rest.starts_with(b"->") {
            self.pos += 2;
            return;
        }
        let mut from = self.pos;
        while let Some(i) = memchr(b'>', &self.bytes[from..]) {
            let gt = from + i;
            let before = &self.bytes[self.pos..gt];
            if before.ends_with(b"--") || before.ends_with(b"--!") {
                self.pos = gt + 1;
                return;
            }
            from = gt + 1;
        }
        self.pos = self.bytes.len();
    }
    // ANCHOR_END: comment

    /// `<?`, `<!x`, `</3`: ends at the next `>`.
    fn bogus_comment(&mut self) {
        self.skip_past(b'>');
    }

    // ANCHOR: tag
    /// A tag whose name starts at `pos`, read to its closing `>`.
    fn tag(&mut self, end: bool) -> Option<Tag<'a>> {
        let start = self.pos;
        while !ends_name(self.peek()?) {
            self.pos += 1;
        }
        let name = &self.html[start..self.pos];
        let (self_closing, href) = self.attributes(!end)?;
        Some(Tag {
            name,
            end,
            self_closing,
            href,
        })
    }
    // ANCHOR_END: tag

    /// The attributes of a tag, from its name's end to its `>`: whether the
    /// tag closed with `/>`, and the value of its first `href` attribute if
    /// `want_href`. Quoted values may hold `>`; that is why we cannot just
    /// look for the next `>`.
    fn attributes(&mut self, want_href: bool) -> Option<(bool, Option<String>)> {
        let mut href = None;
        loop {
            // Before an attribute name.
            while is_space(self.peek()?) {
                self.pos += 1;
            }
            match self.peek()? {
                b'>' => {
                    self.pos += 1;
                    return Some((false, href));
                }
                b'/' => {
                    self.pos += 1;
                    if self.peek()? == b'>' {
                        self.pos += 1;
                        return Some((true, href));
                    }
                    continue;
                }
                _ => {}
            }
            // An attribute name. A leading `=` belongs to the name.
            let start = self.pos;
            if self.bytes[self.pos] == b'=' {
                self.pos += 1;
            }
            while !ends_name(self.peek()?) && self.bytes[self.pos] != b'=' {
                self.pos += 1;
            }
            let name = &self.bytes[start..self.pos];
            while is_space(self.peek()?) {
                self.pos += 1;
            }
            let value = if self.peek()? == b'=' {
                self.pos += 1;
                self.attribute_value()?
            } else {
                ""
            };
            // The first attribute of a name wins; later ones are dropped.
            if want_href && href.is_none() && name.eq_ignore_ascii_case(b"href") {
                href = Some(decode_attribute(value).into_owned());
            }
        }
    }

    // ANCHOR: attribute_value
    /// After `=`: the raw value, quoted or not, leaving `pos` where the
    /// next attribute (or the tag's end) may start.
    fn attribute_value(&mut self) -> Option<&'a str> {
        while is_space(self.peek()?) {
            self.pos += 1;
        }
        let quote = self.peek()?;
        if quote == b'"' || quote == b'\'' {
            let start = self.pos + 1;
            let len = memchr(quote, &self.bytes[start..])?;
            self.pos = start + len + 1;
            return Some(&self.html[start..start + len]);
        }
        // Unquoted (maybe empty, as in `href=>`): up to a space or `>`.
        let start = self.pos;
        while self.peek()? != b'>' && !is_space(self.bytes[self.pos]) {
            self.pos += 1;
        }
        Some(&self.html[start..self.pos])
    }
    // ANCHOR_END: attribute_value

    // ANCHOR: raw_text
    /// Raw text (`<style>`, `<title>`, ...): only `</name` followed by a
    /// space, `/` or `>` ends it.
    fn raw_text(&mut self, name: &str) -> Option<Tag<'a>> {
        loop {
            if !self.skip_past(b'<') {
                return None;
            }
            if let Some(tag) = self.end_tag_named(name)? {
                return Some(tag);
            }
        }
    }
    // ANCHOR_END: raw_text

    // ANCHOR: end_tag_named
    /// Just after a `<` in raw text: if `/name` and a space, `/` or `>`
    /// follow, the end tag (`Some(Some(..))`), else `Some(None)` with `pos`
    /// where the text carries on.
    fn end_tag_named(&mut self, name: &str) -> Option<Option<Tag<'a>>> {
        if self.peek()? != b'/' {
            return Some(None);
        }
        self.pos += 1;
        let start = self.pos;
        while self.peek()?.is_ascii_alphabetic() {
            self.pos += 1;
        }
        let candidate = &self.bytes[start..self.pos];
        let delimited = ends_name(self.peek()?);
        if !delimited || !candidate.eq_ignore_ascii_case(name.as_bytes()) {
            return Some(None);
        }
        let (self_closing, _) = self.attributes(false)?;
        Some(Some(Tag {
            name: &self.html[start..start + candidate.len()],
            end: true,
            self_closing,
            href: None,
        }))
    }
    // ANCHOR_END: end_tag_named

    // ANCHOR: script_text
    /// The inside of `<script>`. `<!--` starts an "escaped" part, in which
    /// `<script>` starts a "double-escaped" part that `</script>` ends
    /// without ending the script. The states are the HTML standard's.
    fn script_text(&mut self) -> Option<Tag<'a>> {
        #[derive(Clone, Copy, PartialEq)]
        enum Escape {
            None,
            Escaped,
            Double,
        }
        let mut escape = Escape::None;
        // Dashes just read in an escaped part: `-->` leaves it.
        let mut dashes = 0;
        loop {
            if escape == Escape::None {
                if !self.skip_past(b'<') {
                    return None;
                }
                if self.peek()? == b'!' {
                    self.pos += 1;
                    if self.bytes[self.pos..].starts_with(b"--") {
                        self.pos += 2;
                        escape = Escape::Escaped;
                        // `<!--` counts as the start of `-->`: `<!-->` closes.
                        dashes = 2;
                    }
                    continue;
                }
                if let Some(tag) = self.end_tag_named("script")? {
                    return Some(tag);
                }
                continue;
            }
            match self.peek()? {
                b'-' => {
                    self.pos += 1;
                    dashes += 1;
                }
                b'>' if dashes >= 2 => {
                    self.pos += 1;
                    escape = Escape::None;
                }
                b'<' => {
                    self.pos += 1;
                    dashes = 0;
                    escape = match (escape, self.peek()?) {
                        (Escape::Escaped, b'/') => match self.end_tag_named("script")? {
                            Some(tag) => return Some(tag),
                            None => escape,
                        },
                        (Escape::Escaped, b) if b.is_ascii_alphabetic() => {
                            if self.script_word()? {
                                Escape::Double
                            } else {
                                escape
                            }
                        }
                        (Escape::Double, b'/') => {
                            self.pos += 1;
                            if self.script_word()? {
                                Escape::Escaped
                            } else {
                                escape
                            }
                        }
                        _ => escape,
                    };
                }
                _ => {
                    // Until the next `-` or `<`, nothing can change state.
                    dashes = 0;
                    self.pos += 1;
                    match memchr2(b'-', b'<', &self.bytes[self.pos..]) {
                        Some(i) => self.pos += i,
                        None => return None,
                    }
                }
            }
        }
    }
    // ANCHOR_END: script_text

    /// At letters after `<` or `</` inside an escaped script: reads them and
    /// says whether they are the word `script` followed by a space, `/` or
    /// `>`. `pos` stays on the character after the letters, which is read
    /// again as script text.
    fn script_word(&mut self) -> Option<bool> {
        let start = self.pos;
        while self.peek()?.is_ascii_alphabetic() {
            self.pos += 1;
        }
        let word = &self.bytes[start..self.pos];
        let delimited = ends_name(self.peek()?);
        Some(delimited && word.eq_ignore_ascii_case(b"script"))
    }
}

// ANCHOR: decode_attribute
/// An attribute value as the tokenizer hands it over: CR and CRLF read as
/// LF, NUL as U+FFFD, and character references decoded.
fn decode_attribute(raw: &str) -> Cow<'_, str> {
    if !raw.bytes().any(|b| matches!(b, b'&' | b'\r' | b'\0')) {
        return Cow::Borrowed(raw);
    }
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(i) = rest.find(['&', '\r', '\0']) {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        rest = match rest.as_bytes()[i] {
            b'\r' => {
                out.push('\n');
                after.strip_prefix('\n').unwrap_or(after)
            }
            b'\0' => {
                out.push('\u{FFFD}');
                after
            }
            _ => match char_ref(after) {
                Some((chars, used)) => {
                    out.extend(chars.into_iter().flatten());
                    &after[used..]
                }
                None => {
                    out.push('&');
                    after
                }
            },
        };
    }
    out.push_str(rest);
    Cow::Owned(out)
}
// ANCHOR_END: decode_attribute

/// The character reference at the start of `after` (the text after an `&`
/// in an attribute value): the characters it stands for and how many bytes
/// it used, or `None` if the `&` is just an `&`.
fn char_ref(after: &str) -> Option<([Option<char>; 2], usize)> {
    let bytes = after.as_bytes();
    match *bytes.first()? {
        b'#' => numeric_ref(after),
        b if b.is_ascii_alphanumeric() => named_ref(after),
        _ => None,
    }
}

/// `#65;`, `#x41`: any number of digits, `;` optional. Out-of-range values
/// become U+FFFD, and 0x80 to 0x9F are read as windows-1252, as browsers do.
fn numeric_ref(after: &str) -> Option<([Option<char>; 2], usize)> {
    let bytes = after.as_bytes();
    let (radix, mut used) = match bytes.get(1) {
        Some(b'x' | b'X') => (16, 2),
        _ => (10, 1),
    };
    let digits_start = used;
    let mut value: u32 = 0;
    while let Some(digit) = bytes.get(used).and_then(|&b| (b as char).to_digit(radix)) {
        // Saturating: anything past U+10FFFF is U+FFFD however long it is.
        value = value.saturating_mul(radix).saturating_add(digit);
        used += 1;
    }
    if used == digits_start {
        return None;
    }
    if bytes.get(used) == Some(&b';') {
        used += 1;
    }
    let c = match value {
        0 | 0xD800..=0xDFFF | 0x11_0000.. => '\u{FFFD}',
        0x80..=0x9F => C1_REPLACEMENTS[(value - 0x80) as usize]
            .unwrap_or_else(|| char::from_u32(value).unwrap_or('\u{FFFD}')),
        _ => char::from_u32(value).unwrap_or('\u{FFFD}'),
    };
    Some(([Some(c), None], used))
}

// ANCHOR: named_ref
/// `amp;`, `lt`, `notin;`: the longest entity name the text starts with,
/// looked up in html5ever's table, which also lists every prefix of every
/// name so the search knows when to stop. In an attribute, a name without
/// `;` followed by `=` or a letter or digit is not a reference (so that
/// `?a=1&copy=2` survives).
fn named_ref(after: &str) -> Option<([Option<char>; 2], usize)> {
    let bytes = after.as_bytes();
    let mut matched = None;
    let mut len = 0;
    while len < bytes.len() && bytes[len].is_ascii() {
        len += 1;
        match NAMED_ENTITIES.get(&after[..len]) {
            Some(&(0, _)) => {}
            Some(&(c1, c2)) => matched = Some((c1, c2, len)),
            None => break,
        }
    }
    let (c1, c2, len) = matched?;
    if bytes[len - 1] != b';'
        && bytes
            .get(len)
            .is_some_and(|&b| b == b'=' || b.is_ascii_alphanumeric())
    {
        return None;
    }
    let chars = [char::from_u32(c1), char::from_u32(c2).filter(|_| c2 != 0)];
    Some((chars, len))
}
// ANCHOR_END: named_ref

#[cfg(test)]
mod tests;
