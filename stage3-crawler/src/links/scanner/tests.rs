//! The scanner against html5ever's tokenizer ([`oracle::tokenizer_hrefs`](super::oracle::tokenizer_hrefs)),
//! which is the definition of right here.

use super::oracle::tokenizer_hrefs;
use super::*;

fn href(value: &str) -> Href {
    Href {
        value: value.to_string(),
        is_base: false,
    }
}

fn base(value: &str) -> Href {
    Href {
        value: value.to_string(),
        is_base: true,
    }
}

// ANCHOR: agreed
/// Checks the scanner against the tokenizer on `html`, and returns the
/// scanner's answer for an exact check.
#[track_caller]
fn agreed(html: &str) -> Vec<Href> {
    let ours = scan_hrefs(html);
    assert_eq!(ours, tokenizer_hrefs(html), "on {html:?}");
    ours
}
// ANCHOR_END: agreed

#[test]
fn tags_and_attribute_spellings() {
    assert_eq!(
        agreed(r#"<a href="a">x</a><A HREF='b'><link href=c><area hRef = "d" >"#),
        [href("a"), href("b"), href("c"), href("d")]
    );
    assert_eq!(
        agreed("<a title='x > y' href=\"z\"><a data-href=no href>"),
        [href("z"), href("")]
    );
    // The first href of a tag wins, even an empty one.
    assert_eq!(
        agreed("<a href href=x><a href=y href=z>"),
        [href(""), href("y")]
    );
    assert_eq!(agreed("<a =href=x><a\thref\n=\r\n'y'/>"), [href("y")]);
    // Missing spaces between attributes, odd slashes, `>` as a value.
    assert_eq!(
        agreed("<a x='1'href=a><a / href=b><a href=>c<a href=d/>"),
        [href("a"), href("b"), href(""), href("d/")]
    );
    // End tags never count, and a tag cut off by the end is dropped.
    assert_eq!(agreed("</a href=x><a href=y"), []);
    assert_eq!(agreed("<a href='unclosed>"), []);
}

#[test]
fn text_comments_and_declarations_hide_nothing_else() {
    assert_eq!(
        agreed(
            "a < b <3 <!-- <a href=c1> --> <!DOCTYPE html PUBLIC \"x\"> <?php <a href=p> ?> \
             </ a href=q> </> <!x <a href=bogus>> <![CDATA[ <a href=cd>]]> <a href=ok>"
        ),
        [href("ok")]
    );
    assert_eq!(
        agreed("<!--><a href=1><!---><a href=2>"),
        [href("1"), href("2")]
    );
    assert_eq!(
        agreed("<!-- --!> <a href=1> <!-- -- > <a href=no> --> <!----><a href=2>"),
        [href("1"), href("2")]
    );
    assert_eq!(agreed("<!-- never closed <a href=x>"), []);
}

#[test]
fn raw_text_elements() {
    assert_eq!(
        agreed(
            "<style><a href=s></STYLE ><a href=1><title><a href=t></titlex></title/>\
             <a href=2><textarea></textarea<a href=ta></textarea>"
        ),
        [href("1"), href("2")]
    );
    assert_eq!(
        agreed("<noscript><a href=n></noscript><xmp></xmp x='>'><a href=1>"),
        [href("1")]
    );
    assert_eq!(agreed("<plaintext></plaintext><a href=p>"), []);
    // Inside svg, style and title are ordinary, and base is not the base.
    assert_eq!(
        agreed(
            "<svg><style><a href=1></style><base href=b></svg><base href=c><svg/><title><a href=t>"
        ),
        [href("1"), href("b"), base("c")]
    );
}

// ANCHOR: script_escapes
#[test]
fn script_escapes() {
    assert_eq!(
        agreed("<script>if (a<b) x='<a href=s>'</script><a href=1>"),
        [href("1")]
    );
    assert_eq!(
        agreed("<script><!-- <script></script> <a href=in> --></script><a href=1>"),
        [href("1")]
    );
    assert_eq!(
        agreed("<script><!-- <script> </script> <a href=in></script><a href=1>"),
        [href("1")]
    );
    assert_eq!(
        agreed("<script><!-- </script><a href=1><script><!--> <a href=2"),
        [href("1")]
    );
    assert_eq!(
        agreed("<script><!--<script>--></script><a href=out></script><a href=1>"),
        [href("out"), href("1")]
    );
}
// ANCHOR_END: script_escapes

#[test]
fn character_references_in_values() {
    assert_eq!(
        agreed(
            "<a href='?a=1&amp;b=2'><a href='&lt&gt;&#65;&#x42&#X43;&#0;&#x110000;&#128;&#55296;'>\
             <a href='?x=1&copy=2&not;&notin;&notit;&amp'><a href='&;&#;&#x;&unknown;&Aacute'>"
        ),
        [
            href("?a=1&b=2"),
            href("<>ABC\u{FFFD}\u{FFFD}\u{20AC}\u{FFFD}"),
            href("?x=1&copy=2¬∉&notit;&"),
            href("&;&#;&#x;&unknown;Á"),
        ]
    );
    assert_eq!(
        agreed("<a href=\"a\r\nb\rc\0d\">"),
        [href("a\nb\nc\u{FFFD}d")]
    );
}

#[test]
fn non_ascii_text_and_names() {
    assert_eq!(
        agreed("<p>é<a href='ü/ß'>😀</a><ſcript><a href=2><é href=3>"),
        [href("ü/ß"), href("2")]
    );
}

/// A small deterministic generator (xorshift), so the test needs no crate
/// and every run checks the same fragments.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// Pieces that matter to some tokenizer state. Random sequences of them hit
/// combinations no one would write by hand.
const PIECES: &[&str] = &[
    "<a",
    "<A",
    " href",
    " HREF",
    "href",
    "=",
    "==",
    "\"",
    "'",
    ">",
    "/",
    "/>",
    " ",
    "\t",
    "\r\n",
    "\r",
    "\0",
    "x",
    "é",
    "<",
    "</",
    "</a",
    "<!",
    "<!-",
    "<!--",
    "-->",
    "--!>",
    "-",
    "--",
    "!",
    "?",
    "<?",
    "<!DOCTYPE",
    "<![CDATA[",
    "]]>",
    "<script>",
    "</script>",
    "<script",
    "</script",
    "script",
    "<style>",
    "</style>",
    "<title>",
    "</title>",
    "<textarea>",
    "</textarea",
    "<plaintext>",
    "<svg>",
    "</svg>",
    "<svg/>",
    "<math>",
    "</math>",
    "<base",
    " href=",
    " href='",
    " href=\"",
    "&",
    "&amp;",
    "&amp",
    "&lt",
    "&#",
    "&#x",
    "&#65;",
    "&#x41",
    "&#128;",
    "&notin;",
    "&not",
    "&copy=",
    "&Aacute",
    ";",
    "1",
    "`",
];

const NAMES: &[&str] = &[
    "a",
    "A",
    "base",
    "BASE",
    "svg",
    "math",
    "script",
    "style",
    "title",
    "textarea",
    "noscript",
    "plaintext",
    "link",
    "p",
    "a\0",
    "é",
];

const VALUE_PIECES: &[&str] = &[
    "x", "/p", "#f", "?q=1", "&amp;", "&amp", "&copy=", "&#65", "&#x;", "&notin", "&", ">", "\"",
    "'", " ", "\r\n", "\0", "=", "é", "<",
];

// ANCHOR: fragment_piece
/// Either a random piece, or a whole tag with random attributes, so that
/// plenty of fragments hold hrefs for the two sides to agree on.
fn fragment_piece(rng: &mut Rng, out: &mut String) {
    let pick = |rng: &mut Rng, from: &[&'static str]| from[rng.below(from.len())];
    if rng.below(2) == 0 {
        out.push_str(pick(rng, PIECES));
        return;
    }
    out.push_str(pick(rng, &["<", "<", "<", "</"]));
    out.push_str(pick(rng, NAMES));
    for _ in 0..rng.below(4) {
        out.push_str(pick(rng, &[" ", " ", "\t", "/", ""]));
        out.push_str(pick(rng, &["href", "HREF", "href", "x", "=", ""]));
        out.push_str(pick(rng, &["=", "=", " = ", "", "=>"]));
        let quote = pick(rng, &["\"", "'", ""]);
        out.push_str(quote);
        for _ in 0..rng.below(4) {
            out.push_str(pick(rng, VALUE_PIECES));
        }
        out.push_str(quote);
    }
    out.push_str(pick(rng, &[">", ">", "/>", " />", "", " "]));
}
// ANCHOR_END: fragment_piece

// ANCHOR: generated_fragments
#[test]
fn agrees_with_html5ever_on_generated_fragments() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut found = 0;
    for _ in 0..20_000 {
        let mut html = String::new();
        for _ in 0..1 + rng.below(16) {
            fragment_piece(&mut rng, &mut html);
        }
        found += agreed(&html).len();
    }
    // The generator must produce hrefs, or the agreement means little.
    assert!(found > 10_000, "only {found} hrefs in all fragments");
}
// ANCHOR_END: generated_fragments
