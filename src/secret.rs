//! Secrets the server makes for itself: random bytes straight from the kernel (`getrandom(2)`,
//! which needs no file descriptor, so it works when descriptors are exhausted), session ids, and
//! the process's cursor key, which seals every paging cursor (`recover_text`, `grep`) with a
//! keyed MAC (HMAC-SHA-256, cut to 128 bits) over the whole cursor and what it is bound to. A
//! failure of the random source is an error for the caller, never a constant.

use base64::Engine;
use std::sync::OnceLock;

/// Fills `buf` from the kernel's random source (`getrandom(2)`, blocking until it is seeded).
pub fn fill_random(buf: &mut [u8]) -> std::io::Result<()> {
    let mut done = 0;
    // Bounded: the kernel returns at least 256 bytes per call once seeded; a few retries for EINTR.
    let mut tries = 0;
    while done < buf.len() {
        tries += 1;
        if tries > 64 + buf.len() / 256 {
            return Err(std::io::Error::other("getrandom returned too little"));
        }
        // SAFETY: the pointer and length describe the unfilled tail of `buf`.
        let n = unsafe { libc::getrandom(buf[done..].as_mut_ptr().cast(), buf.len() - done, 0) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        done += n as usize;
    }
    Ok(())
}

/// A new session id: 128 random bits in hex, or the random source's error.
pub fn session_id() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    fill_random(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

static CURSOR_KEY: OnceLock<ring::hmac::Key> = OnceLock::new();

/// The process's cursor key (random, made once). [`init`] makes it at start so that a missing
/// random source stops the server there rather than failing a call.
fn cursor_key() -> &'static ring::hmac::Key {
    CURSOR_KEY.get_or_init(|| {
        let mut k = [0u8; 32];
        fill_random(&mut k).expect("the kernel's random source (getrandom) is unavailable");
        ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &k)
    })
}

/// Uses `key` as the cursor key (the one every replica on a shared store uses, so a cursor one
/// of them made opens on the others), unless a key was already made.
pub fn init_with(key: &[u8; 32]) {
    let _ = CURSOR_KEY.set(ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key));
}

/// Makes the cursor key now, or says why it cannot.
pub fn init() -> std::io::Result<()> {
    if CURSOR_KEY.get().is_none() {
        let mut k = [0u8; 32];
        fill_random(&mut k)?;
        let _ = CURSOR_KEY.set(ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &k));
    }
    Ok(())
}

/// SHA-256 of `bytes` (what a cursor is bound to, in a fixed size).
pub fn digest(bytes: &[u8]) -> [u8; 32] {
    let d = ring::digest::digest(&ring::digest::SHA256, bytes);
    let mut out = [0u8; 32];
    out.copy_from_slice(d.as_ref());
    out
}

/// The address ranges of this process's original argument and environment strings (what
/// `/proc/PID/cmdline` and `/proc/PID/environ` show), from `/proc/self/stat`.
fn original_blocks() -> Option<[(usize, usize); 2]> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces and parentheses): field 3 onwards.
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<usize> = rest
        .split_whitespace()
        .skip(45)
        .take(4)
        .map(|v| v.parse().ok())
        .collect::<Option<_>>()?;
    let [arg_start, arg_end, env_start, env_end] = f[..] else {
        return None;
    };
    (arg_start < arg_end && env_start < env_end)
        .then_some([(arg_start, arg_end), (env_start, env_end)])
}

/// Overwrites in place, within the process's original strings at `[start, end)`, every run of
/// bytes for which `pick` returns a range: volatile writes, so they are not optimised away.
///
/// # Safety
/// `[start, end)` must be this process's original argument or environment block (mapped,
/// writable, and not borrowed by Rust code while this runs).
unsafe fn overwrite(start: usize, end: usize, pick: &dyn Fn(&[u8]) -> Vec<std::ops::Range<usize>>) {
    let len = end - start;
    let mut copy = vec![0u8; len];
    for (i, b) in copy.iter_mut().enumerate() {
        // SAFETY: within the block (caller's contract).
        *b = unsafe { std::ptr::read_volatile((start + i) as *const u8) };
    }
    for r in pick(&copy) {
        for i in r {
            // SAFETY: within the block (caller's contract).
            unsafe { std::ptr::write_volatile((start + i) as *mut u8, b'*') };
        }
    }
}

/// Removes `name` from the environment, first overwriting its value where `/proc/PID/environ`
/// shows it (the process's original environment block), so that neither a local user nor a
/// command run by the server can read it there. Returns whether it was set. Call while the
/// process has one thread.
pub fn take_env(name: &str) -> bool {
    if std::env::var_os(name).is_none() {
        return false;
    }
    if let Some([_, (start, end)]) = original_blocks() {
        let key = format!("{name}=");
        let pick = |block: &[u8]| {
            let mut out = Vec::new();
            let mut at = 0;
            for entry in block.split(|b| *b == 0) {
                if entry.starts_with(key.as_bytes()) {
                    out.push(at + key.len()..at + entry.len());
                }
                at += entry.len() + 1;
            }
            out
        };
        // SAFETY: the range is this process's original environment block, from the kernel.
        unsafe { overwrite(start, end, &pick) };
    }
    // SAFETY: called before the server starts any other thread (see `Config::from_args`).
    unsafe { std::env::remove_var(name) };
    true
}

/// Overwrites every occurrence of `secret` in the process's original command line (what
/// `/proc/PID/cmdline` and `ps` show). Call while the process has one thread.
pub fn wipe_from_command_line(secret: &str) {
    if secret.is_empty() {
        return;
    }
    if let Some([(start, end), _]) = original_blocks() {
        let needle = secret.as_bytes();
        let pick = |block: &[u8]| {
            let mut out = Vec::new();
            let mut i = 0;
            while i + needle.len() <= block.len() {
                if &block[i..i + needle.len()] == needle {
                    out.push(i..i + needle.len());
                    i += needle.len();
                } else {
                    i += 1;
                }
            }
            out
        };
        // SAFETY: the range is this process's original argument block, from the kernel.
        unsafe { overwrite(start, end, &pick) };
    }
}

/// Bytes of MAC a cursor carries.
const TAG_BYTES: usize = 16;

fn tag(kind: &str, binding: &[u8], body: &str) -> [u8; TAG_BYTES] {
    let mut ctx = ring::hmac::Context::with_key(cursor_key());
    // Each part length-prefixed, so no two different triples give the same input.
    for part in [kind.as_bytes(), binding, body.as_bytes()] {
        ctx.update(&(part.len() as u64).to_le_bytes());
        ctx.update(part);
    }
    let full = ctx.sign();
    let mut out = [0u8; TAG_BYTES];
    out.copy_from_slice(&full.as_ref()[..TAG_BYTES]);
    out
}

/// `body` (cursor text without dots' meaning to this module) sealed for `kind` and `binding`
/// (the canonical bytes of the call the cursor belongs to): `body.TAG`.
pub fn seal(kind: &str, binding: &[u8], body: &str) -> String {
    let t = tag(kind, binding, body);
    format!(
        "{body}.{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(t)
    )
}

/// The body of a cursor made by [`seal`] with the same `kind` and `binding`, or `None` for any
/// other text (forged, altered, from another call or another server process).
pub fn open<'a>(kind: &str, binding: &[u8], cursor: &'a str) -> Option<&'a str> {
    let (body, t) = cursor.rsplit_once('.')?;
    let given = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(t)
        .ok()?;
    same_bytes(&given, &tag(kind, binding, body)).then_some(body)
}

/// Whether `a` and `b` are equal, in a time that depends on their lengths only (bytes compared
/// with an early exit would tell a client how many of its bytes are right).
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_bytes_differ_and_ids_are_hex() {
        let (a, b) = (session_id().unwrap(), session_id().unwrap());
        assert_ne!(a, b);
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, "0".repeat(32));
    }

    #[test]
    fn a_sealed_cursor_opens_only_unaltered_and_for_its_binding() {
        let c = seal("k", b"call", "r3.0.1.0.0");
        assert_eq!(open("k", b"call", &c), Some("r3.0.1.0.0"));
        assert_eq!(open("k", b"other", &c), None);
        assert_eq!(open("j", b"call", &c), None);
        let (body, t) = c.rsplit_once('.').unwrap();
        assert_eq!(open("k", b"call", &format!("{body}1.{t}")), None);
        assert_eq!(open("k", b"call", &format!("r3.0.1.5.0.{t}")), None);
        assert_eq!(open("k", b"call", body), None);
    }
}
