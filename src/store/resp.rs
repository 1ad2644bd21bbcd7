//! A small client of the Redis protocol (RESP2), enough for the shared store: commands and
//! pipelines over plain TCP or TLS (rustls with ring and the platform's roots), blocking
//! ([`Pool::run`]) or, on plain TCP inside tokio, awaited ([`Pool::run_async`]); `AUTH` and
//! `SELECT` on connect, pools of idle connections, connect and I/O timeouts. Owns the sockets;
//! must never retry a command that may have run: the one retry is on a pooled connection found
//! closed by the server (after a restart), and any other failure goes to the caller.

use super::target::Target;
use crate::sync::Unpoisoned;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Connect and per-read/write timeout: a store that does not answer within it is unavailable.
pub const IO_TIMEOUT: Duration = Duration::from_secs(2);
/// Idle connections kept for reuse.
const POOL_MAX: usize = 32;

/// One reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// `$-1` or `*-1`.
    Nil,
    /// `:n`.
    Int(i64),
    /// `+OK` or a bulk string.
    Bytes(Vec<u8>),
    /// `*n`.
    Array(Vec<Value>),
    /// `-ERR ...` (a command's error, not the connection's).
    Error(String),
}

impl Value {
    /// The integer of an `Int`, or of a bulk string of digits.
    pub fn int(&self) -> Option<i64> {
        match self {
            Value::Int(n) => Some(*n),
            Value::Bytes(b) => std::str::from_utf8(b).ok()?.parse().ok(),
            _ => None,
        }
    }

    /// The bytes of a bulk or simple string.
    pub fn bytes(self) -> Option<Vec<u8>> {
        match self {
            Value::Bytes(b) => Some(b),
            _ => None,
        }
    }

    /// The text of a string reply (lossy).
    pub fn text(self) -> Option<String> {
        self.bytes()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    }
}

/// Builds one command's arguments.
#[derive(Default, Clone)]
pub struct Cmd(pub Vec<Vec<u8>>, Option<&'static str>);

impl Cmd {
    /// A command named `name`.
    pub fn new(name: &str) -> Cmd {
        Cmd(vec![name.as_bytes().to_vec()], None)
    }

    /// `EVALSHA` of the Lua `script` (sent whole with `EVAL` only when the server does not
    /// have it cached yet: first use, or after a restart); the number of keys and the
    /// arguments follow.
    pub fn script(script: &'static str) -> Cmd {
        // Keyed by where the text is and how long it is: two scripts sharing a start address
        // (one literal the prefix of another, merged by the compiler) still differ in length.
        static SHAS: Mutex<Vec<((usize, usize), String)>> = Mutex::new(Vec::new());
        let at = (script.as_ptr() as usize, script.len());
        let mut shas = SHAS.locked();
        let sha = match shas.iter().find(|(p, _)| *p == at) {
            Some((_, s)) => s.clone(),
            None => {
                let d = ring::digest::digest(
                    &ring::digest::SHA1_FOR_LEGACY_USE_ONLY,
                    script.as_bytes(),
                );
                let s: String = d.as_ref().iter().map(|b| format!("{b:02x}")).collect();
                shas.push((at, s.clone()));
                s
            }
        };
        Cmd(vec![b"EVALSHA".to_vec(), sha.into_bytes()], Some(script))
    }

    /// The same command with the script's text (`EVAL`) instead of its digest.
    fn with_body(&self) -> Option<Cmd> {
        let body = self.1?;
        let mut args = self.0.clone();
        args[0] = b"EVAL".to_vec();
        args[1] = body.as_bytes().to_vec();
        Some(Cmd(args, None))
    }

    /// Appends an argument.
    pub fn arg(mut self, a: impl AsRef<[u8]>) -> Cmd {
        self.0.push(a.as_ref().to_vec());
        self
    }

    /// Appends a number argument.
    pub fn num(self, n: impl std::fmt::Display) -> Cmd {
        let s = n.to_string();
        self.arg(s)
    }

    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(format!("*{}\r\n", self.0.len()).as_bytes());
        for a in &self.0 {
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
    }
}

trait Stream: Read + Write + Send {}

impl std::fmt::Debug for AsyncConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AsyncConn")
    }
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Conn")
    }
}
impl<T: Read + Write + Send> Stream for T {}

/// One open connection.
struct Conn {
    /// The socket (TLS or plain), buffered for reading replies.
    io: BufReader<Box<dyn Stream>>,
}

/// Largest bulk string or array accepted in a reply (a confused peer must not make us allocate
/// without bound).
const REPLY_MAX: usize = 1 << 30;

impl Conn {
    fn open(t: &Target, tls: Option<&Arc<rustls::ClientConfig>>) -> io::Result<Conn> {
        let addr = (t.host.as_str(), t.port)
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| io::Error::other(format!("{} does not resolve", t.host)))?;
        let tcp = TcpStream::connect_timeout(&addr, IO_TIMEOUT)?;
        tcp.set_read_timeout(Some(IO_TIMEOUT))?;
        tcp.set_write_timeout(Some(IO_TIMEOUT))?;
        tcp.set_nodelay(true)?;
        let stream: Box<dyn Stream> = match tls {
            None => Box::new(tcp),
            Some(cfg) => {
                let name = rustls::pki_types::ServerName::try_from(t.host.clone())
                    .map_err(|e| io::Error::other(format!("TLS server name: {e}")))?;
                let c =
                    rustls::ClientConnection::new(cfg.clone(), name).map_err(io::Error::other)?;
                Box::new(rustls::StreamOwned::new(c, tcp))
            }
        };
        let mut conn = Conn {
            io: BufReader::with_capacity(64 * 1024, stream),
        };
        greeted(conn.run(&hello(t))?)?;
        Ok(conn)
    }

    /// Sends `cmds` in one write and reads one reply each.
    fn run(&mut self, cmds: &[Cmd]) -> io::Result<Vec<Value>> {
        if cmds.is_empty() {
            return Ok(Vec::new());
        }
        let mut buf = Vec::new();
        for c in cmds {
            c.encode(&mut buf);
        }
        let w = self.io.get_mut();
        w.write_all(&buf)?;
        w.flush()?;
        cmds.iter().map(|_| read_value(&mut self.io, 0)).collect()
    }
}

/// The commands a new connection sends first: `AUTH` with the target's credentials, `SELECT`
/// of its database.
fn hello(t: &Target) -> Vec<Cmd> {
    let mut hello = Vec::new();
    if let Some(pass) = &t.password {
        let mut c = Cmd::new("AUTH");
        if let Some(user) = &t.user {
            c = c.arg(user);
        }
        hello.push(c.arg(pass));
    }
    if t.db != 0 {
        hello.push(Cmd::new("SELECT").num(t.db));
    }
    hello
}

/// The replies to [`hello`]: an error if the server refused any of them.
fn greeted(replies: Vec<Value>) -> io::Result<()> {
    for r in replies {
        if let Value::Error(e) = r {
            return Err(io::Error::other(format!(
                "store refused the connection: {e}"
            )));
        }
    }
    Ok(())
}

/// One open plain-TCP connection driven by tokio: a round trip on it lets the worker run other
/// tasks while the server answers, where [`Conn`] holds a thread.
struct AsyncConn {
    /// The socket.
    tcp: tokio::net::TcpStream,
    /// Bytes read and not yet parsed (a reply can arrive in pieces).
    buf: Vec<u8>,
}

impl AsyncConn {
    async fn open(t: &Target) -> io::Result<AsyncConn> {
        let addr = tokio::net::lookup_host((t.host.as_str(), t.port))
            .await?
            .next()
            .ok_or_else(|| io::Error::other(format!("{} does not resolve", t.host)))?;
        let tcp = within(tokio::net::TcpStream::connect(addr)).await?;
        tcp.set_nodelay(true)?;
        let mut conn = AsyncConn {
            tcp,
            buf: Vec::with_capacity(16 * 1024),
        };
        greeted(conn.run(&hello(t)).await?)?;
        Ok(conn)
    }

    /// Sends `cmds` in one write and reads one reply each, every step within [`IO_TIMEOUT`].
    async fn run(&mut self, cmds: &[Cmd]) -> io::Result<Vec<Value>> {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        if cmds.is_empty() {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        for c in cmds {
            c.encode(&mut out);
        }
        within(self.tcp.write_all(&out)).await?;
        let mut replies = Vec::with_capacity(cmds.len());
        let mut at = 0;
        while replies.len() < cmds.len() {
            match reply_len(&self.buf[at..], 0)? {
                Some(n) => {
                    let mut whole = &self.buf[at..at + n];
                    replies.push(read_value(&mut whole, 0)?);
                    at += n;
                }
                None => {
                    self.buf.reserve(64 * 1024);
                    if within(self.tcp.read_buf(&mut self.buf)).await? == 0 {
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "the store closed the connection",
                        ));
                    }
                }
            }
        }
        self.buf.drain(..at);
        Ok(replies)
    }
}

/// `f` within [`IO_TIMEOUT`], a timeout being an error of kind `TimedOut`.
async fn within<T>(f: impl std::future::Future<Output = io::Result<T>>) -> io::Result<T> {
    tokio::time::timeout(IO_TIMEOUT, f)
        .await
        .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "the store did not answer in time"))?
}

/// The length of the first reply in `buf` if it is all there (`None`: more bytes are needed),
/// without copying it; what [`read_value`] rejects as malformed or too large is an error here
/// too, as soon as its header shows it.
fn reply_len(buf: &[u8], depth: usize) -> io::Result<Option<usize>> {
    if depth > 8 {
        return Err(bad("nested too deep"));
    }
    let Some(end) = memchr::memmem::find(buf, b"\r\n") else {
        return if buf.len() > 64 * 1024 {
            Err(bad("unterminated line"))
        } else {
            Ok(None)
        };
    };
    let line = end + 2;
    let num = || -> io::Result<i64> {
        std::str::from_utf8(&buf[1..end])
            .ok()
            .and_then(|t| t.parse().ok())
            .ok_or_else(|| bad("not a number"))
    };
    match buf.first() {
        Some(b'+' | b'-' | b':') => Ok(Some(line)),
        Some(b'$') => {
            let n = num()?;
            if n < 0 {
                return Ok(Some(line));
            }
            if n as u64 > REPLY_MAX as u64 {
                return Err(bad("bulk string too large"));
            }
            let whole = line + n as usize + 2;
            Ok((buf.len() >= whole).then_some(whole))
        }
        Some(b'*') => {
            let n = num()?;
            if n < 0 {
                return Ok(Some(line));
            }
            if n as u64 > (REPLY_MAX / 16) as u64 {
                return Err(bad("array too large"));
            }
            let mut at = line;
            for _ in 0..n {
                match reply_len(&buf[at..], depth + 1)? {
                    Some(k) => at += k,
                    None => return Ok(None),
                }
            }
            Ok(Some(at))
        }
        _ => Err(bad("unknown type")),
    }
}

/// Whether `e` says the peer had closed the connection.
fn closed(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionAborted
    )
}

fn bad(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("bad reply: {what}"))
}

fn read_line(r: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut line = Vec::new();
    r.take(64 * 1024).read_until(b'\n', &mut line)?;
    if !line.ends_with(b"\r\n") {
        return Err(if line.is_empty() {
            io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the store closed the connection",
            )
        } else {
            bad("unterminated line")
        });
    }
    line.truncate(line.len() - 2);
    Ok(line)
}

fn read_value(r: &mut impl BufRead, depth: usize) -> io::Result<Value> {
    if depth > 8 {
        return Err(bad("nested too deep"));
    }
    let line = read_line(r)?;
    let (kind, rest) = line.split_first().ok_or_else(|| bad("empty line"))?;
    let text = std::str::from_utf8(rest).map_err(|_| bad("not UTF-8"))?;
    let num = || text.parse::<i64>().map_err(|_| bad("not a number"));
    Ok(match kind {
        b'+' => Value::Bytes(rest.to_vec()),
        b'-' => Value::Error(text.to_string()),
        b':' => Value::Int(num()?),
        b'$' => {
            let n = num()?;
            if n < 0 {
                return Ok(Value::Nil);
            }
            let n = n as usize;
            if n > REPLY_MAX {
                return Err(bad("bulk string too large"));
            }
            let mut b = vec![0u8; n + 2];
            r.read_exact(&mut b)?;
            if !b.ends_with(b"\r\n") {
                return Err(bad("bulk string not terminated"));
            }
            b.truncate(n);
            Value::Bytes(b)
        }
        b'*' => {
            let n = num()?;
            if n < 0 {
                return Ok(Value::Nil);
            }
            let n = n as usize;
            if n > REPLY_MAX / 16 {
                return Err(bad("array too large"));
            }
            let mut items = Vec::with_capacity(n.min(1024));
            for _ in 0..n {
                items.push(read_value(r, depth + 1)?);
            }
            Value::Array(items)
        }
        _ => return Err(bad("unknown type")),
    })
}

/// An idle connection of `idle`, if there is one.
fn take<C>(idle: &Mutex<Vec<C>>) -> Option<C> {
    idle.locked().pop()
}

/// Forgets every idle connection of `idle` (the server may have restarted).
fn clear<C>(idle: &Mutex<Vec<C>>) {
    idle.locked().clear();
}

/// After a run that ended `ok`, `conn` goes back to `idle` (up to [`POOL_MAX`]); after a
/// failure it is dropped and the pool emptied: a store restart closes every pooled connection.
fn settle<C>(idle: &Mutex<Vec<C>>, conn: C, ok: bool) {
    let mut idle = idle.locked();
    if !ok {
        idle.clear();
    } else if idle.len() < POOL_MAX {
        idle.push(conn);
    }
}

/// The scripts among `cmds` that did not run because the server had not cached them
/// (`NOSCRIPT`, first use or after a restart): their index and the command with the script's
/// text, to send again on the same connection.
fn uncached(replies: &[Value], cmds: &[Cmd]) -> Vec<(usize, Cmd)> {
    replies
        .iter()
        .zip(cmds)
        .enumerate()
        .filter(|(_, (r, _))| matches!(r, Value::Error(e) if e.starts_with("NOSCRIPT")))
        .filter_map(|(i, (_, c))| c.with_body().map(|eval| (i, eval)))
        .collect()
}

/// Puts `reply`, that of a script sent again with its text, in place of reply `i` of `out` (its
/// `NOSCRIPT`); a failure of that round trip fails the whole run. Whether to go on.
fn resent(out: &mut io::Result<Vec<Value>>, i: usize, reply: io::Result<Vec<Value>>) -> bool {
    match (out.as_mut(), reply) {
        (Ok(replies), Ok(mut v)) => {
            replies[i] = v.pop().unwrap_or(Value::Nil);
            true
        }
        (_, Err(e)) => {
            *out = Err(e);
            false
        }
        (Err(_), Ok(_)) => false,
    }
}

/// Connections to one server, opened on demand and kept while idle (up to [`POOL_MAX`]).
#[derive(Debug)]
pub struct Pool {
    /// The server, and how to authenticate to it.
    target: Target,
    /// TLS settings for a `rediss://` target; `None` for plain TCP.
    tls: Option<Arc<rustls::ClientConfig>>,
    /// Idle connections of the blocking calls.
    idle: Mutex<Vec<Conn>>,
    /// Idle connections of [`Pool::run_async`] (plain TCP only).
    idle_async: Mutex<Vec<AsyncConn>>,
}

impl Pool {
    /// A pool for `target` (nothing is opened yet). TLS (`rediss://`) verifies the server with
    /// the platform's roots (`SSL_CERT_FILE` is honoured).
    pub fn new(target: Target) -> io::Result<Pool> {
        let tls = if target.tls {
            crate::http_client::install_tls_provider();
            use rustls_platform_verifier::ConfigVerifierExt;
            Some(Arc::new(
                rustls::ClientConfig::with_platform_verifier().map_err(io::Error::other)?,
            ))
        } else {
            None
        };
        Ok(Pool {
            target,
            tls,
            idle: Mutex::new(Vec::new()),
            idle_async: Mutex::new(Vec::new()),
        })
    }

    /// The server this pool talks to (without credentials), for messages.
    pub fn describe(&self) -> String {
        self.target.to_string()
    }

    /// Runs `cmds` as one pipeline on one connection; the connection goes back to the pool only
    /// if every reply was read.
    ///
    /// Blocks on the network; on a worker of a multi-threaded tokio runtime it says so first
    /// (`block_in_place`), so the worker's other tasks move to another thread meanwhile.
    pub fn run(&self, cmds: &[Cmd]) -> io::Result<Vec<Value>> {
        use tokio::runtime::{Handle, RuntimeFlavor};
        match Handle::try_current() {
            Ok(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(|| self.run_here(cmds))
            }
            _ => self.run_here(cmds),
        }
    }

    fn run_here(&self, cmds: &[Cmd]) -> io::Result<Vec<Value>> {
        let pooled = take(&self.idle);
        let reused = pooled.is_some();
        let mut conn = match pooled {
            Some(c) => c,
            None => Conn::open(&self.target, self.tls.as_ref())?,
        };
        let mut out = conn.run(cmds);
        if reused && out.as_ref().is_err_and(closed) {
            // An idle connection the server closed (a restart): the commands never reached a
            // live server. Once more, on a new connection.
            clear(&self.idle);
            conn = Conn::open(&self.target, self.tls.as_ref())?;
            out = conn.run(cmds);
        }
        let again = out.as_ref().map(|r| uncached(r, cmds)).unwrap_or_default();
        for (i, eval) in again {
            let reply = conn.run(std::slice::from_ref(&eval));
            if !resent(&mut out, i, reply) {
                break;
            }
        }
        settle(&self.idle, conn, out.is_ok());
        out
    }

    /// [`Pool::run`] for async callers: on plain TCP inside a tokio runtime, the round trip is
    /// awaited on a connection of its own pool, so the worker serves other tasks meanwhile (and
    /// no thread is handed over, as `block_in_place` does). TLS goes through [`Pool::run`].
    pub async fn run_async(&self, cmds: &[Cmd]) -> io::Result<Vec<Value>> {
        if self.tls.is_some() || tokio::runtime::Handle::try_current().is_err() {
            return self.run(cmds);
        }
        let pooled = take(&self.idle_async);
        let reused = pooled.is_some();
        let mut conn = match pooled {
            Some(c) => c,
            None => AsyncConn::open(&self.target).await?,
        };
        let mut out = conn.run(cmds).await;
        if reused && out.as_ref().is_err_and(closed) {
            clear(&self.idle_async);
            conn = AsyncConn::open(&self.target).await?;
            out = conn.run(cmds).await;
        }
        let again = out.as_ref().map(|r| uncached(r, cmds)).unwrap_or_default();
        for (i, eval) in again {
            let reply = conn.run(std::slice::from_ref(&eval)).await;
            if !resent(&mut out, i, reply) {
                break;
            }
        }
        settle(&self.idle_async, conn, out.is_ok());
        out
    }

    /// Runs one command; a command error is an `Err` too.
    pub fn one(&self, cmd: Cmd) -> io::Result<Value> {
        match self.run(std::slice::from_ref(&cmd))?.pop() {
            Some(Value::Error(e)) => Err(io::Error::other(format!("store: {e}"))),
            Some(v) => Ok(v),
            None => Err(bad("no reply")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_parse() {
        let mut r: &[u8] =
            b"+OK\r\n:-3\r\n$3\r\na\r\n\r\n$-1\r\n*2\r\n$1\r\nx\r\n:1\r\n-ERR no\r\n";
        assert_eq!(read_value(&mut r, 0).unwrap(), Value::Bytes(b"OK".to_vec()));
        assert_eq!(read_value(&mut r, 0).unwrap(), Value::Int(-3));
        assert_eq!(
            read_value(&mut r, 0).unwrap(),
            Value::Bytes(b"a\r\n".to_vec())
        );
        assert_eq!(read_value(&mut r, 0).unwrap(), Value::Nil);
        assert_eq!(
            read_value(&mut r, 0).unwrap(),
            Value::Array(vec![Value::Bytes(b"x".to_vec()), Value::Int(1)])
        );
        assert_eq!(
            read_value(&mut r, 0).unwrap(),
            Value::Error("ERR no".into())
        );
        assert!(read_value(&mut r, 0).is_err(), "end of input");
    }

    /// A reply is complete only once all its bytes are there, whatever piece the network
    /// delivered last; complete, it parses as [`read_value`] parses the whole stream.
    #[test]
    fn reply_len_waits_for_whole_replies() {
        let stream: &[u8] =
            b"+OK\r\n:-3\r\n$3\r\na\r\n\r\n$-1\r\n*2\r\n$1\r\nx\r\n*1\r\n:1\r\n-ERR no\r\n*-1\r\n";
        let mut whole = stream;
        let mut expected = Vec::new();
        while !whole.is_empty() {
            expected.push(read_value(&mut whole, 0).unwrap());
        }
        for cut in 0..=stream.len() {
            let mut got = Vec::new();
            let mut at = 0;
            while let Some(n) = reply_len(&stream[at..cut], 0).unwrap() {
                let mut one = &stream[at..at + n];
                got.push(read_value(&mut one, 0).unwrap());
                assert!(one.is_empty(), "the reply is exactly {n} bytes");
                at += n;
            }
            assert_eq!(got, expected[..got.len()], "prefix of {cut} bytes");
            if cut == stream.len() {
                assert_eq!(got.len(), expected.len());
            }
        }
        assert!(reply_len(b"$99999999999\r\n", 0).is_err(), "too large");
        assert!(reply_len(b"?x\r\n", 0).is_err(), "unknown type");
    }

    #[test]
    fn commands_encode_as_bulk_arrays() {
        let mut b = Vec::new();
        Cmd::new("GET").arg("k\r\n").encode(&mut b);
        assert_eq!(b, b"*2\r\n$3\r\nGET\r\n$3\r\nk\r\n\r\n");
    }
}
