//! SCRAM-SHA-256 (RFC 5802, RFC 7677), the password exchange PostgreSQL
//! uses by default: the password never crosses the network, and the server
//! proves it knows the password's verifier too.
//!
//! The SHA-256 is the `sha2` crate's; HMAC and PBKDF2 are written here
//! because each is a few lines on top of it and reads like the RFC.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use sha2::{Digest, Sha256};

/// The most PBKDF2 iterations a server may ask for. PostgreSQL uses 4096;
/// a peer asking for billions would keep our loop thread busy for minutes.
const MAX_ITERATIONS: u32 = 1_000_000;

/// HMAC-SHA-256 (RFC 2104): hash the key, padded and xored two ways,
/// around the message.
pub fn hmac(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut block = [0u8; 64];
    if key.len() > 64 {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(block.map(|b| b ^ 0x36));
    inner.update(message);
    let mut outer = Sha256::new();
    outer.update(block.map(|b| b ^ 0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

/// PBKDF2-HMAC-SHA-256 for one 32-byte block: SCRAM's `Hi()`.
fn hi(password: &[u8], salt: &[u8], iterations: u32) -> [u8; 32] {
    let mut first = salt.to_vec();
    first.extend_from_slice(&1u32.to_be_bytes());
    let mut u = hmac(password, &first);
    let mut out = u;
    for _ in 1..iterations {
        u = hmac(password, &u);
        for (o, x) in out.iter_mut().zip(u) {
            *o ^= x;
        }
    }
    out
}

/// One client's side of the exchange.
pub struct Scram {
    password: Vec<u8>,
    client_first_bare: String,
    nonce: String,
    /// Set by [`client_final`](Self::client_final): what the server's last
    /// message must carry.
    server_signature: Option<[u8; 32]>,
}

impl Scram {
    /// Starts an exchange with a fresh random nonce. PostgreSQL takes the
    /// user name from the startup message, so the SCRAM one is empty.
    pub fn new(password: &str) -> Result<Scram, String> {
        let mut raw = [0u8; 18];
        getrandom::getrandom(&mut raw).map_err(|e| format!("no random nonce: {e}"))?;
        Ok(Scram::with_nonce(password, "", &BASE64.encode(raw)))
    }

    fn with_nonce(password: &str, user: &str, nonce: &str) -> Scram {
        Scram {
            password: password.as_bytes().to_vec(),
            client_first_bare: format!("n={user},r={nonce}"),
            nonce: nonce.to_string(),
            server_signature: None,
        }
    }

    /// `n,,n=,r=NONCE`: no channel binding, then the bare message.
    pub fn client_first(&self) -> String {
        format!("n,,{}", self.client_first_bare)
    }

    // ANCHOR: client_final
    /// Answers the server's first message (`r=…,s=…,i=…`) with the proof
    /// that we know the password.
    pub fn client_final(&mut self, server_first: &str) -> Result<String, String> {
        let (mut nonce, mut salt, mut iterations) = (None, None, None);
        for part in server_first.split(',') {
            match part.split_once('=') {
                Some(("r", v)) => nonce = Some(v),
                Some(("s", v)) => salt = BASE64.decode(v).ok(),
                Some(("i", v)) => iterations = v.parse::<u32>().ok(),
                _ => {}
            }
        }
        let (Some(nonce), Some(salt), Some(iterations)) = (nonce, salt, iterations) else {
            return Err("the server's SCRAM message lacks a nonce, salt or count".into());
        };
        // The server extends our nonce; anything else is a replay or a bug.
        if !nonce.starts_with(&self.nonce) || nonce.len() == self.nonce.len() {
            return Err("the server's SCRAM nonce does not extend ours".into());
        }
        if !(1..=MAX_ITERATIONS).contains(&iterations) {
            return Err(format!("the server asks for {iterations} SCRAM iterations"));
        }
        let salted = hi(&self.password, &salt, iterations);
        let client_key = hmac(&salted, b"Client Key");
        let stored_key: [u8; 32] = Sha256::digest(client_key).into();
        // "biws" is base64 of "n,,", the header we sent.
        let without_proof = format!("c=biws,r={nonce}");
        let auth_message = format!("{},{server_first},{without_proof}", self.client_first_bare);
        let signature = hmac(&stored_key, auth_message.as_bytes());
        let proof: Vec<u8> = client_key
            .iter()
            .zip(signature)
            .map(|(k, s)| k ^ s)
            .collect();
        let server_key = hmac(&salted, b"Server Key");
        self.server_signature = Some(hmac(&server_key, auth_message.as_bytes()));
        Ok(format!("{without_proof},p={}", BASE64.encode(proof)))
    }
    // ANCHOR_END: client_final

    /// Checks the server's last message (`v=SIGNATURE`): a server that
    /// does not know the password's verifier cannot make it.
    pub fn verify(&self, server_final: &str) -> Result<(), String> {
        let expected = self
            .server_signature
            .ok_or("the server finished SCRAM before we sent our proof")?;
        match server_final.strip_prefix("v=").map(|v| BASE64.decode(v)) {
            Some(Ok(sig)) if sig == expected => Ok(()),
            _ => Err("the server's SCRAM signature is wrong: it does not know the password".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231() {
        // Test case 2.
        let mac = hmac(b"Jefe", b"what do ya want for nothing?");
        assert_eq!(
            BASE64.encode(mac),
            BASE64.encode([
                0x5b, 0xdc, 0xc1, 0x46, 0xbf, 0x60, 0x75, 0x4e, 0x6a, 0x04, 0x24, 0x26, 0x08, 0x95,
                0x75, 0xc7, 0x5a, 0x00, 0x3f, 0x08, 0x9d, 0x27, 0x39, 0x83, 0x9d, 0xec, 0x58, 0xb9,
                0x64, 0xec, 0x38, 0x43
            ])
        );
    }

    #[test]
    fn the_exchange_matches_rfc_7677() {
        let mut scram = Scram::with_nonce("pencil", "user", "rOprNGfwEbeRWgbNEkqO");
        assert_eq!(scram.client_first(), "n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
        let server_first = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,\
                            s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        assert_eq!(
            scram.client_final(server_first).unwrap(),
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,\
             p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        scram
            .verify("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
            .unwrap();
        assert!(scram.verify("v=AAAA").is_err());
    }

    #[test]
    fn a_bad_server_message_is_an_error() {
        let mut scram = Scram::with_nonce("pw", "", "abc");
        assert_eq!(
            scram.client_final("r=xyz123,s=AAAA,i=4096"),
            Err("the server's SCRAM nonce does not extend ours".into())
        );
        assert_eq!(
            scram.client_final("r=abcd,s=AAAA,i=4000000000"),
            Err("the server asks for 4000000000 SCRAM iterations".into())
        );
        assert_eq!(
            scram.client_final("garbage"),
            Err("the server's SCRAM message lacks a nonce, salt or count".into())
        );
    }
}
