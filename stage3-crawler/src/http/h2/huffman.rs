//! HPACK's Huffman code (RFC 7541 section 5.2 and Appendix B): strings in
//! header blocks may be compressed with a fixed code, short for the
//! characters headers use most. We decode it; we never encode with it (a
//! GET's few fields are not worth it).
//!
//! The code is canonical: the codes of each length are consecutive numbers,
//! and the first code of a length follows from the last of the one before.
//! So a decoder needs no tree. It reads bits one at a time into a number;
//! after each bit, if the number falls among the codes of its length, it
//! is that symbol.

use std::sync::OnceLock;

/// Each symbol's code, right-aligned, and its length in bits: the 256
/// bytes, then EOS (end of string), which may appear only as padding.
#[rustfmt::skip]
const CODES: [(u32, u8); 257] = [
    (0x1ff8, 13),
    (0x7fffd8, 23),
    (0xfffffe2, 28),
    (0xfffffe3, 28),
    (0xfffffe4, 28),
    (0xfffffe5, 28),
    (0xfffffe6, 28),
    (0xfffffe7, 28),
    (0xfffffe8, 28),
    (0xffffea, 24),
    (0x3ffffffc, 30),
    (0xfffffe9, 28),
    (0xfffffea, 28),
    (0x3ffffffd, 30),
    (0xfffffeb, 28),
    (0xfffffec, 28),
    (0xfffffed, 28),
    (0xfffffee, 28),
    (0xfffffef, 28),
    (0xffffff0, 28),
    (0xffffff1, 28),
    (0xffffff2, 28),
    (0x3ffffffe, 30),
    (0xffffff3, 28),
    (0xffffff4, 28),
    (0xffffff5, 28),
    (0xffffff6, 28),
    (0xffffff7, 28),
    (0xffffff8, 28),
    (0xffffff9, 28),
    (0xffffffa, 28),
    (0xffffffb, 28),
    (0x14, 6),
    (0x3f8, 10),
    (0x3f9, 10),
    (0xffa, 12),
    (0x1ff9, 13),
    (0x15, 6),
    (0xf8, 8),
    (0x7fa, 11),
    (0x3fa, 10),
    (0x3fb, 10),
    (0xf9, 8),
    (0x7fb, 11),
    (0xfa, 8),
    (0x16, 6),
    (0x17, 6),
    (0x18, 6),
    (0x0, 5),
    (0x1, 5),
    (0x2, 5),
    (0x19, 6),
    (0x1a, 6),
    (0x1b, 6),
    (0x1c, 6),
    (0x1d, 6),
    (0x1e, 6),
    (0x1f, 6),
    (0x5c, 7),
    (0xfb, 8),
    (0x7ffc, 15),
    (0x20, 6),
    (0xffb, 12),
    (0x3fc, 10),
    (0x1ffa, 13),
    (0x21, 6),
    (0x5d, 7),
    (0x5e, 7),
    (0x5f, 7),
    (0x60, 7),
    (0x61, 7),
    (0x62, 7),
    (0x63, 7),
    (0x64, 7),
    (0x65, 7),
    (0x66, 7),
    (0x67, 7),
    (0x68, 7),
    (0x69, 7),
    (0x6a, 7),
    (0x6b, 7),
    (0x6c, 7),
    (0x6d, 7),
    (0x6e, 7),
    (0x6f, 7),
    (0x70, 7),
    (0x71, 7),
    (0x72, 7),
    (0xfc, 8),
    (0x73, 7),
    (0xfd, 8),
    (0x1ffb, 13),
    (0x7fff0, 19),
    (0x1ffc, 13),
    (0x3ffc, 14),
    (0x22, 6),
    (0x7ffd, 15),
    (0x3, 5),
    (0x23, 6),
    (0x4, 5),
    (0x24, 6),
    (0x5, 5),
    (0x25, 6),
    (0x26, 6),
    (0x27, 6),
    (0x6, 5),
    (0x74, 7),
    (0x75, 7),
    (0x28, 6),
    (0x29, 6),
    (0x2a, 6),
    (0x7, 5),
    (0x2b, 6),
    (0x76, 7),
    (0x2c, 6),
    (0x8, 5),
    (0x9, 5),
    (0x2d, 6),
    (0x77, 7),
    (0x78, 7),
    (0x79, 7),
    (0x7a, 7),
    (0x7b, 7),
    (0x7ffe, 15),
    (0x7fc, 11),
    (0x3ffd, 14),
    (0x1ffd, 13),
    (0xffffffc, 28),
    (0xfffe6, 20),
    (0x3fffd2, 22),
    (0xfffe7, 20),
    (0xfffe8, 20),
    (0x3fffd3, 22),
    (0x3fffd4, 22),
    (0x3fffd5, 22),
    (0x7fffd9, 23),
    (0x3fffd6, 22),
    (0x7fffda, 23),
    (0x7fffdb, 23),
    (0x7fffdc, 23),
    (0x7fffdd, 23),
    (0x7fffde, 23),
    (0xffffeb, 24),
    (0x7fffdf, 23),
    (0xffffec, 24),
    (0xffffed, 24),
    (0x3fffd7, 22),
    (0x7fffe0, 23),
    (0xffffee, 24),
    (0x7fffe1, 23),
    (0x7fffe2, 23),
    (0x7fffe3, 23),
    (0x7fffe4, 23),
    (0x1fffdc, 21),
    (0x3fffd8, 22),
    (0x7fffe5, 23),
    (0x3fffd9, 22),
    (0x7fffe6, 23),
    (0x7fffe7, 23),
    (0xffffef, 24),
    (0x3fffda, 22),
    (0x1fffdd, 21),
    (0xfffe9, 20),
    (0x3fffdb, 22),
    (0x3fffdc, 22),
    (0x7fffe8, 23),
    (0x7fffe9, 23),
    (0x1fffde, 21),
    (0x7fffea, 23),
    (0x3fffdd, 22),
    (0x3fffde, 22),
    (0xfffff0, 24),
    (0x1fffdf, 21),
    (0x3fffdf, 22),
    (0x7fffeb, 23),
    (0x7fffec, 23),
    (0x1fffe0, 21),
    (0x1fffe1, 21),
    (0x3fffe0, 22),
    (0x1fffe2, 21),
    (0x7fffed, 23),
    (0x3fffe1, 22),
    (0x7fffee, 23),
    (0x7fffef, 23),
    (0xfffea, 20),
    (0x3fffe2, 22),
    (0x3fffe3, 22),
    (0x3fffe4, 22),
    (0x7ffff0, 23),
    (0x3fffe5, 22),
    (0x3fffe6, 22),
    (0x7ffff1, 23),
    (0x3ffffe0, 26),
    (0x3ffffe1, 26),
    (0xfffeb, 20),
    (0x7fff1, 19),
    (0x3fffe7, 22),
    (0x7ffff2, 23),
    (0x3fffe8, 22),
    (0x1ffffec, 25),
    (0x3ffffe2, 26),
    (0x3ffffe3, 26),
    (0x3ffffe4, 26),
    (0x7ffffde, 27),
    (0x7ffffdf, 27),
    (0x3ffffe5, 26),
    (0xfffff1, 24),
    (0x1ffffed, 25),
    (0x7fff2, 19),
    (0x1fffe3, 21),
    (0x3ffffe6, 26),
    (0x7ffffe0, 27),
    (0x7ffffe1, 27),
    (0x3ffffe7, 26),
    (0x7ffffe2, 27),
    (0xfffff2, 24),
    (0x1fffe4, 21),
    (0x1fffe5, 21),
    (0x3ffffe8, 26),
    (0x3ffffe9, 26),
    (0xffffffd, 28),
    (0x7ffffe3, 27),
    (0x7ffffe4, 27),
    (0x7ffffe5, 27),
    (0xfffec, 20),
    (0xfffff3, 24),
    (0xfffed, 20),
    (0x1fffe6, 21),
    (0x3fffe9, 22),
    (0x1fffe7, 21),
    (0x1fffe8, 21),
    (0x7ffff3, 23),
    (0x3fffea, 22),
    (0x3fffeb, 22),
    (0x1ffffee, 25),
    (0x1ffffef, 25),
    (0xfffff4, 24),
    (0xfffff5, 24),
    (0x3ffffea, 26),
    (0x7ffff4, 23),
    (0x3ffffeb, 26),
    (0x7ffffe6, 27),
    (0x3ffffec, 26),
    (0x3ffffed, 26),
    (0x7ffffe7, 27),
    (0x7ffffe8, 27),
    (0x7ffffe9, 27),
    (0x7ffffea, 27),
    (0x7ffffeb, 27),
    (0xffffffe, 28),
    (0x7ffffec, 27),
    (0x7ffffed, 27),
    (0x7ffffee, 27),
    (0x7ffffef, 27),
    (0x7fffff0, 27),
    (0x3ffffee, 26),
    (0x3fffffff, 30),
];

/// EOS's symbol number.
const EOS: usize = 256;

/// The tables a canonical decoder needs, built once from [`CODES`].
struct Canonical {
    /// For each length, the first code of that length and where its
    /// symbols start in `symbols`.
    first: [u32; 31],
    count: [u32; 31],
    offset: [usize; 31],
    /// The symbols sorted by (length, code).
    symbols: Vec<u16>,
}

fn canonical() -> &'static Canonical {
    static TABLE: OnceLock<Canonical> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut symbols: Vec<u16> = (0..=EOS as u16).collect();
        symbols.sort_by_key(|&s| (CODES[usize::from(s)].1, CODES[usize::from(s)].0));
        let mut table = Canonical {
            first: [0; 31],
            count: [0; 31],
            offset: [0; 31],
            symbols,
        };
        for (i, &s) in table.symbols.iter().enumerate().rev() {
            let (code, len) = CODES[usize::from(s)];
            let len = usize::from(len);
            table.first[len] = code;
            table.offset[len] = i;
            table.count[len] += 1;
        }
        table
    })
}

/// Why a Huffman-coded string could not be decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HuffmanError {
    /// Bits that are no symbol's code (longer than the longest code).
    BadCode,
    /// The EOS symbol, which may not be sent as a symbol.
    Eos,
    /// The string ends with more than 7 bits of padding, or padding that
    /// is not all ones.
    BadPadding,
}

/// Decodes a Huffman-coded string, appending its bytes to `out`.
pub(crate) fn decode(input: &[u8], out: &mut Vec<u8>) -> Result<(), HuffmanError> {
    let table = canonical();
    let mut code: u32 = 0;
    let mut len = 0usize;
    // Whether every bit since the last symbol was a one: padding must be.
    let mut all_ones = true;
    for &byte in input {
        for shift in (0..8).rev() {
            let bit = u32::from(byte >> shift & 1);
            code = code << 1 | bit;
            len += 1;
            all_ones &= bit == 1;
            if len > 30 {
                return Err(HuffmanError::BadCode);
            }
            if table.count[len] > 0 && code >= table.first[len] {
                let index = (code - table.first[len]) as usize;
                if index < table.count[len] as usize {
                    let symbol = table.symbols[table.offset[len] + index];
                    if usize::from(symbol) == EOS {
                        return Err(HuffmanError::Eos);
                    }
                    out.push(symbol as u8);
                    (code, len, all_ones) = (0, 0, true);
                }
            }
        }
    }
    if len > 7 || !all_ones {
        return Err(HuffmanError::BadPadding);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Encodes with the table, for the tests: what a server does.
    fn encode(input: &[u8]) -> Vec<u8> {
        let (mut bits, mut n, mut out) = (0u64, 0u32, Vec::new());
        for &b in input {
            let (code, len) = CODES[usize::from(b)];
            bits = bits << len | u64::from(code);
            n += u32::from(len);
            while n >= 8 {
                out.push((bits >> (n - 8)) as u8);
                n -= 8;
            }
        }
        if n > 0 {
            // Pad with the most significant bits of EOS: ones.
            out.push((bits << (8 - n)) as u8 | (0xff >> n));
        }
        out
    }

    #[test]
    fn every_byte_decodes_to_itself() {
        let all: Vec<u8> = (0..=255).collect();
        let mut out = Vec::new();
        decode(&encode(&all), &mut out).unwrap();
        assert_eq!(out, all);
    }

    #[test]
    fn the_rfc_example_decodes() {
        // RFC 7541 C.4.1: "www.example.com".
        let coded = [
            0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff,
        ];
        let mut out = Vec::new();
        decode(&coded, &mut out).unwrap();
        assert_eq!(out, b"www.example.com");
    }

    #[test]
    fn bad_padding_eos_and_long_codes_are_refused() {
        let decoded = |coded: &[u8]| {
            let mut out = Vec::new();
            decode(coded, &mut out).map(|()| out)
        };
        // "a" is 00011 (5 bits), padded with ones.
        assert_eq!(decoded(&[0b0001_1111]), Ok(b"a".to_vec()));
        // Padded with 000 instead of 111.
        assert_eq!(decoded(&[0b0001_1000]), Err(HuffmanError::BadPadding));
        // A whole byte of ones after it: 11 bits of padding.
        assert_eq!(decoded(&[0b0001_1111, 0xff]), Err(HuffmanError::BadPadding));
        // EOS is thirty ones; thirty-two ones contain it.
        assert_eq!(decoded(&[0xff; 4]), Err(HuffmanError::Eos));
    }
}
