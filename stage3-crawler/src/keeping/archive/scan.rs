//! Reopening an archive after a crash: what it holds, read record by record, and where its last whole record ends.

use super::originals::status_of;
use super::*;

/// What an archive held when a crawl resumed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reopened {
    /// The length of its complete records: where the torn one, if any,
    /// began.
    pub good: u64,
    /// Bytes of a torn last record, cut off.
    pub cut: u64,
    /// The target URI of every complete `response` or `revisit` record of
    /// this generation of the crawl (`--recrawl`): the exchanges it kept.
    pub responses: HashSet<String>,
    /// What its records hold whole, for revisits to point at.
    pub originals: Originals,
}

/// Whether the file's name asks for gzip members (`.warc.gz`).
pub(super) fn is_gzip(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "gz")
}

// ANCHOR: scan
/// Reads an archive record by record, as far as its records are whole:
/// the head, the block of `Content-Length` bytes, and the two CRLFs. A
/// gzip archive is read member by member (a record each), and a member
/// that does not decompress whole ends the good part too. A record that
/// runs into the end of the file was torn by a crash, and is cut off. One
/// that goes wrong before the end was damaged, not torn: if a whole record
/// starts somewhere after it, cutting would throw good records away, so
/// the file is refused (with nothing whole after it, it is a tail of
/// garbage, such as the zeros a power cut can leave, and is cut off).
pub(super) fn scan(file: &File, gzip: bool, generation: u32) -> io::Result<Reopened> {
    let len = file.metadata()?.len();
    let mut reader = BufReader::new(ReadAt { file, pos: 0 });
    let at = |r: &BufReader<ReadAt<'_>>| r.get_ref().pos - r.buffer().len() as u64;
    let mut held = Reopened::default();
    // The generation of the run that wrote the records being read: each
    // run begins with a `warcinfo` that names it.
    let mut writing = 0;
    while at(&reader) < len {
        let Some(record) = next_record(&mut reader, gzip)? else {
            break;
        };
        held.good = at(&reader);
        match record.kind.as_str() {
            "warcinfo" => writing = record.generation,
            "response" | "revisit" => {
                held.originals.read_back(&record);
                if writing == generation {
                    held.responses.extend(record.target_uri);
                }
            }
            _ => {}
        }
    }
    held.cut = len - held.good;
    let torn = at(&reader) == len;
    if held.cut > 0
        && !torn
        && let Some(whole) = find_whole_record(file, held.good + 1, gzip)?
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "it is damaged at byte {}: the record there is not whole, but the one at \
                 byte {whole} is, so this is not a record torn by a crash, and cutting it \
                 off would lose good records; move the file aside (a new archive is then \
                 started) or mend it",
                held.good
            ),
        ));
    }
    Ok(held)
}

/// The next record, if it is whole. In a gzip archive it is one member,
/// which must end right after the record (the end is where gzip checks
/// its CRC); a member that does not decompress is not whole.
pub(super) fn next_record(reader: &mut impl BufRead, gzip: bool) -> io::Result<Option<Parsed>> {
    if !gzip {
        return read_record(reader);
    }
    let mut member = BufReader::new(flate2::bufread::GzDecoder::new(reader));
    let record = match read_record(&mut member) {
        Ok(Some(record)) => record,
        Ok(None) => return Ok(None),
        Err(e) => return not_gzip(e),
    };
    match member.fill_buf() {
        Ok([]) => Ok(Some(record)),
        Ok(_) => Ok(None), // more than one record in the member
        Err(e) => not_gzip(e),
    }
}

/// A member that is not gzip, or is cut short, is not a whole record; any
/// other error (the disk's) is the scan's.
pub(super) fn not_gzip(e: io::Error) -> io::Result<Option<Parsed>> {
    match e.kind() {
        io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData | io::ErrorKind::UnexpectedEof => {
            Ok(None)
        }
        _ => Err(e),
    }
}

/// One uncompressed record, if it is whole. Its block is read through,
/// never held: a length from a damaged or hostile head (or a gzip member
/// that inflates to gigabytes) costs time, not memory.
pub(super) fn read_record(reader: &mut impl BufRead) -> io::Result<Option<Parsed>> {
    // The head, line by line, to its blank line.
    let mut head = Vec::new();
    loop {
        let room = MAX_HEAD.saturating_sub(head.len() as u64);
        let n = reader.by_ref().take(room).read_until(b'\n', &mut head)?;
        if n == 0 || !head.ends_with(b"\n") {
            return Ok(None); // the file ends in the head, or it is no WARC head
        }
        if head.ends_with(b"\r\n\r\n") {
            break;
        }
    }
    let Some(mut record) = crate::keeping::warc::parse_head(&head) else {
        return Ok(None);
    };
    // A response's block begins with its HTTP head: its status and
    // validators, for revisits. A warcinfo's fields may name the crawl's
    // generation.
    let mut start = Vec::new();
    if record.kind == "response" {
        read_head(reader, record.length, &mut start)?;
        record.status = status_of(&start);
        record.validators = crate::http::Validators::in_head(&start);
    } else if record.kind == "warcinfo" {
        read_head(reader, record.length, &mut start)?;
        record.generation = generation_in(&start);
    }
    let rest = record.length - start.len() as u64;
    let block = start.len() as u64 + io::copy(&mut reader.by_ref().take(rest), &mut io::sink())?;
    let mut end = [0u8; 4];
    match reader.read_exact(&mut end) {
        Ok(()) if block == record.length && &end == b"\r\n\r\n" => Ok(Some(record)),
        Ok(()) => Ok(None),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(None),
        Err(e) => Err(e),
    }
}
// ANCHOR_END: scan

/// The longest HTTP head (or warcinfo) read from a block; the response
/// heads the client takes are at most 64 KiB.
const MAX_BLOCK_HEAD: u64 = 64 * 1024;

/// Reads the start of a block of `length` bytes into `start`, to the end
/// of its head (a blank line) or [`MAX_BLOCK_HEAD`], whichever is first.
fn read_head(reader: &mut impl BufRead, length: u64, start: &mut Vec<u8>) -> io::Result<()> {
    let mut limited = reader.by_ref().take(length.min(MAX_BLOCK_HEAD));
    loop {
        let n = limited.read_until(b'\n', start)?;
        if n == 0 || start.ends_with(b"\r\n\r\n") || start.ends_with(b"\n\n") {
            return Ok(());
        }
    }
}

/// The generation a warcinfo's fields name; 0 if none.
fn generation_in(fields: &[u8]) -> u32 {
    String::from_utf8_lossy(fields)
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            (name.trim() == crate::keeping::warc::GENERATION_FIELD)
                .then(|| value.trim().parse().ok())
                .flatten()
        })
        .unwrap_or(0)
}

/// The longest record head we read back; ours are a few hundred bytes.
pub(super) const MAX_HEAD: u64 = 1 << 20;

/// Where the first whole record at or after `from` starts, trying every
/// place where one could (a line starting `WARC/`; gzip's magic bytes).
fn find_whole_record(file: &File, from: u64, gzip: bool) -> io::Result<Option<u64>> {
    let magic: &[u8] = if gzip { &[0x1f, 0x8b, 0x08] } else { b"WARC/" };
    let mut chunk = vec![0u8; 64 * 1024];
    let mut at = from;
    loop {
        let n = read_full_at(file, &mut chunk, at)?;
        for (i, window) in chunk[..n].windows(magic.len()).enumerate() {
            if window != magic {
                continue;
            }
            let start = at + i as u64;
            let mut reader = BufReader::new(ReadAt { file, pos: start });
            if next_record(&mut reader, gzip)?.is_some() {
                return Ok(Some(start));
            }
        }
        if n < chunk.len() {
            return Ok(None);
        }
        // The next chunk overlaps this one by a magic less a byte, so a
        // match across the seam is seen once.
        at += (n - (magic.len() - 1)) as u64;
    }
}

/// Fills `buf` from `offset` as far as the file goes; returns how much.
pub(super) fn read_full_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read_at(&mut buf[n..], offset + n as u64) {
            Ok(0) => break,
            Ok(read) => n += read,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Reads a file from a position of its own (`pread`), leaving the file's
/// offset alone: the scan and the search for a whole record each have one.
pub(super) struct ReadAt<'a> {
    file: &'a File,
    pos: u64,
}

impl Read for ReadAt<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read_at(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}
