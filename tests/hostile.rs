//! Issue 35: a hostile client's pass, one test per finding (forged cursors, session ids, the
//! token's exposure, the `cwd` race, stalled connections, abandoned calls, unbounded queues and
//! memory). Every server here binds 127.0.0.1:0; every loop is bounded in count and time.

mod common;

use common::*;
use serde_json::{Value, json};
use std::time::Duration;

/// Replaces field `i` of a dotted cursor with `with`.
fn alter(cursor: &str, i: usize, with: &str) -> String {
    let mut parts: Vec<&str> = cursor.split('.').collect();
    assert!(parts.len() > i, "{cursor}");
    parts[i] = with;
    parts.join(".")
}

/// Row 10: a `recover_text` cursor whose position was edited (or made up) is refused; only the
/// cursor as issued pages on.
#[test]
fn forged_recover_text_cursors_are_refused() {
    let root = fixture_root();
    let mut c = StdioClient::spawn(root.path(), &[]);
    c.initialize();
    let r = c.call("bash", json!({"cmd": "seq 1 3000"}));
    let id = structured(&r["result"])["artifactRef"]
        .as_str()
        .unwrap_or_else(|| panic!("a stored output: {r}"))
        .to_string();
    let page = |c: &mut StdioClient, cursor: Option<&str>| -> Value {
        let mut args = json!({"prune_id": id, "ranges": [{"start_line": 1, "end_line": 3000}], "max_output_bytes": 1024});
        if let Some(k) = cursor {
            args["cursor"] = json!(k);
        }
        c.call("recover_text", args)
    };
    let first = page(&mut c, None);
    let body: Value = serde_json::from_str(text(&first["result"])).unwrap();
    let cursor = body["nextCursor"]
        .as_str()
        .unwrap_or_else(|| panic!("a next page: {first}"))
        .to_string();
    // As issued: the next page.
    let next = page(&mut c, Some(&cursor));
    assert!(next.get("result").is_some(), "{next}");
    // Field 3 is the bytes of the row already returned: a forged skip, and a forged line.
    for forged in [alter(&cursor, 3, "2"), alter(&cursor, 2, "7d0")] {
        let r = page(&mut c, Some(&forged));
        assert_eq!(r["error"]["code"], -32602, "{forged} was accepted: {r}");
        assert_eq!(
            r["error"]["data"]["field_errors"][0]["field"], "/arguments/cursor",
            "{r}"
        );
    }
    // A cursor for other ranges of the same output is refused too.
    let r = c.call(
        "recover_text",
        json!({"prune_id": id, "ranges": [{"start_line": 1, "end_line": 2999}], "max_output_bytes": 1024, "cursor": cursor}),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

/// Row 10: a `grep` cursor with an edited offset is refused.
#[test]
fn forged_grep_cursors_are_refused() {
    let root = fixture_root();
    let lines: String = (0..400).map(|i| format!("match line {i}\n")).collect();
    std::fs::write(root.path().join("many.txt"), lines).unwrap();
    let mut c = StdioClient::spawn(root.path(), &[]);
    c.initialize();
    let args = json!({"pattern": "match", "paths": ["many.txt"], "max_matches": 10});
    let r = c.call("grep", args.clone());
    let cursor = structured(&r["result"])["nextCursor"]
        .as_str()
        .unwrap_or_else(|| panic!("a next page: {r}"))
        .to_string();
    let mut ok = args.clone();
    ok["cursor"] = json!(cursor);
    let r = c.call("grep", ok);
    assert!(r["result"]["isError"] != json!(true), "{r}");
    let mut forged = args.clone();
    forged["cursor"] = json!(alter(&cursor, 1, "c8"));
    let r = c.call("grep", forged);
    assert_eq!(
        r["error"]["code"], -32602,
        "a forged offset was accepted: {r}"
    );
}

/// A child process killed when dropped (a failed assertion leaves no server behind).
struct Reaped(std::process::Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A `serve` child with its descriptor limit set to `nofile`, and its port.
fn serve_limited(root: &std::path::Path, extra: &[&str], nofile: u64) -> (Reaped, u16) {
    use std::io::BufRead;
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new(bin());
    cmd.args(["serve", "--port", "0", "--root"])
        .arg(root)
        .args(extra)
        .env("MCP_PRUNER_NO_LEDGER", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    // SAFETY: setrlimit is async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: nofile,
                rlim_max: nofile,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut sent = false;
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if !sent
                && let Ok(v) = serde_json::from_str::<Value>(&line)
                && v["event"] == "mcp_pruner.ready"
            {
                let _ = tx.send(v["data"]["port"].as_u64().unwrap() as u16);
                sent = true;
            }
        }
    });
    let child = Reaped(child);
    let port = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("ready event");
    (child, port)
}

/// Descriptors the process `pid` holds.
fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

/// One raw HTTP/1.1 exchange on a new connection: the response's head and body.
fn raw_exchange(port: u16, request: &[u8], within: Duration) -> String {
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(within)).unwrap();
    c.write_all(request).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 8192];
    while let Ok(n) = c.read(&mut buf) {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
        let s = String::from_utf8_lossy(&got);
        if let Some((head, body)) = s.split_once("\r\n\r\n")
            && let Some(len) = head.lines().find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("content-length: ")
                    .map(|v| v.trim().parse::<usize>().unwrap_or(0))
            })
            && body.len() >= len
        {
            break;
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}

fn post_request(body: &str, extra_headers: &str) -> Vec<u8> {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{extra_headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"tests"}}}"#;

/// Row 2: with one descriptor left (the accepted connection takes it), `initialize` still gets
/// a random session id: never the all-zero one another client would get too.
#[test]
fn session_ids_stay_random_when_descriptors_run_out() {
    let root = fixture_root();
    let limit = 64u64;
    let (child, port) = serve_limited(root.path(), &["--header-timeout-ms", "30000"], limit);
    let pid = child.0.id();
    // Idle connections (the server holds each for the header timeout) until one descriptor is
    // left: one more while fewer, one fewer while none.
    let mut idle = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let mut stable = 0;
    while stable < 10 && std::time::Instant::now() < deadline {
        let n = open_fds(pid) as u64;
        if n < limit - 1 {
            idle.push(std::net::TcpStream::connect(("127.0.0.1", port)).unwrap());
            stable = 0;
        } else if n == limit && !idle.is_empty() {
            idle.remove(0);
            stable = 0;
        } else {
            stable += 1;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(open_fds(pid) as u64, limit - 1, "descriptors not exhausted");
    let mut ids = Vec::new();
    for _ in 0..3 {
        let resp = raw_exchange(port, &post_request(INITIALIZE, ""), Duration::from_secs(10));
        let id = resp.lines().find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("mcp-session-id: ")
                .map(|v| v.trim().to_string())
        });
        match id {
            Some(id) => {
                assert_ne!(id, "0".repeat(32), "a constant session id: {resp}");
                assert!(!ids.contains(&id), "a session id issued twice: {resp}");
                ids.push(id);
            }
            // Refusing is fine (503), a constant id is not.
            None => assert!(resp.starts_with("HTTP/1.1 503"), "{resp}"),
        }
    }
    assert!(!ids.is_empty(), "no initialize was served");
    drop((idle, child));
}

/// Whether `needle` occurs in `hay`.
fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Row 9: the bearer token, given by file, by variable or (deprecated) by flag, works, and is
/// not readable from the server's `/proc/PID/cmdline` or `/proc/PID/environ`, nor by a command.
#[test]
fn the_auth_token_is_not_readable_from_the_process() {
    let root = fixture_root();
    let token = "tok-3a5f0c9e-issue35-secret";
    let file = root.path().join("token");
    std::fs::write(&file, format!("{token}\n")).unwrap();
    let file = file.to_str().unwrap().to_string();
    type Way<'a> = (&'a str, Vec<&'a str>, Vec<(&'a str, &'a str)>);
    let ways: [Way; 4] = [
        (
            "MCP_PRUNER_AUTH_TOKEN",
            vec![],
            vec![("MCP_PRUNER_AUTH_TOKEN", token)],
        ),
        (
            "MCP_PRUNER_AUTH_TOKEN_FILE",
            vec![],
            vec![("MCP_PRUNER_AUTH_TOKEN_FILE", &file)],
        ),
        ("--auth-token", vec!["--auth-token", token], vec![]),
        (
            "--auth-token-file",
            vec!["--auth-token-file", &file],
            vec![],
        ),
    ];
    for (way, args, env) in ways {
        let s = HttpServer::start_env(root.path(), &args, &env);
        let pid = s.child.id();
        for what in ["cmdline", "environ"] {
            let bytes = std::fs::read(format!("/proc/{pid}/{what}")).unwrap();
            assert!(
                !contains(&bytes, token.as_bytes()),
                "{way}: the token is in /proc/PID/{what}"
            );
        }
        let post = |bearer: Option<&str>, body: &Value| {
            let mut rb = s
                .client
                .post(format!("{}/mcp", s.base))
                .header("content-type", "application/json")
                .header("accept", "application/json")
                .body(body.to_string());
            if let Some(b) = bearer {
                rb = rb.bearer_auth(b);
            }
            rb.send().unwrap()
        };
        let ping = json!({"jsonrpc":"2.0","id":1,"method":"ping","params":{}});
        assert_eq!(post(None, &ping).status(), 401, "{way}");
        assert_eq!(post(Some(token), &ping).status(), 200, "{way}");
        // A command the server runs sees neither the variable nor the token in its parent.
        let call = json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"cmd": format!("env; cat /proc/{pid}/environ /proc/{pid}/cmdline | tr '\\0' '\\n'")}}});
        let r: Value = post(Some(token), &call).json().unwrap();
        let out = r.to_string();
        assert!(out.contains("PATH="), "{way}: the command ran: {out}");
        assert!(
            !out.contains(token),
            "{way}: a command read the token: {out}"
        );
    }
}

/// Row 8: while a thread keeps exchanging the directory `d` with a link to a directory outside
/// the root, no `bash` call with `cwd: "d"` starts outside the root (it starts in `d`, or is
/// refused as outside).
#[test]
fn a_swapped_cwd_never_starts_a_command_outside_the_root() {
    let root = fixture_root();
    let outside = tempfile::tempdir().unwrap();
    let outside_real = std::fs::canonicalize(outside.path()).unwrap();
    std::fs::create_dir(root.path().join("d")).unwrap();
    // Read through the working directory itself, whatever path names it by then.
    std::fs::write(root.path().join("d/where"), "in-the-root\n").unwrap();
    std::fs::write(outside.path().join("where"), "OUTSIDE-the-root\n").unwrap();
    std::os::unix::fs::symlink(&outside_real, root.path().join("x")).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let stop = stop.clone();
        let (d, x) = (
            std::ffi::CString::new(root.path().join("d").to_str().unwrap()).unwrap(),
            std::ffi::CString::new(root.path().join("x").to_str().unwrap()).unwrap(),
        );
        std::thread::spawn(move || {
            let until = std::time::Instant::now() + Duration::from_secs(60);
            let mut swaps = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed)
                && std::time::Instant::now() < until
            {
                // SAFETY: two valid C paths; RENAME_EXCHANGE swaps them atomically.
                let r = unsafe {
                    libc::renameat2(
                        libc::AT_FDCWD,
                        d.as_ptr(),
                        libc::AT_FDCWD,
                        x.as_ptr(),
                        libc::RENAME_EXCHANGE,
                    )
                };
                assert_eq!(r, 0, "renameat2: {}", std::io::Error::last_os_error());
                swaps += 1;
                if swaps % 64 == 0 {
                    std::thread::yield_now();
                }
            }
            swaps
        })
    };
    let mut c = StdioClient::spawn(root.path(), &[]);
    c.initialize();
    let (mut inside, mut refused, mut escaped) = (0, 0, Vec::new());
    let started = std::time::Instant::now();
    for _ in 0..150 {
        if started.elapsed() > Duration::from_secs(20) || escaped.len() >= 3 {
            break;
        }
        let r = c.call("bash", json!({"cmd": "cat where", "cwd": "d"}));
        let s = structured(&r["result"]);
        if r["result"]["isError"] == json!(true) {
            assert_eq!(s["error"]["reason"], "invalid_cwd", "{r}");
            refused += 1;
            continue;
        }
        let pwd = s["stdout"]
            .as_str()
            .unwrap_or_else(|| text(&r["result"]))
            .trim()
            .to_string();
        if pwd.contains("OUTSIDE") {
            escaped.push(pwd);
        } else {
            assert!(pwd.contains("in-the-root"), "{r}");
            inside += 1;
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    eprintln!(
        "{inside} inside, {refused} refused, {} escaped, {swaps} swaps in {:?}",
        escaped.len(),
        started.elapsed()
    );
    assert!(swaps > 100, "the swapper ran ({swaps} swaps)");
    assert!(
        escaped.is_empty(),
        "{} commands started outside the root ({inside} inside, {refused} refused): {:?}",
        escaped.len(),
        &escaped[..escaped.len().min(3)]
    );
    assert!(
        inside > 0 && refused > 0,
        "{inside} inside, {refused} refused"
    );
}

/// Waits until `what` holds, up to `within`; whether it did.
fn eventually(within: Duration, mut what: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + within;
    loop {
        if what() {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Whether the server closes `c` within `within` (reading and dropping what it sends).
fn closed_within(c: &mut std::net::TcpStream, within: Duration) -> (bool, Vec<u8>) {
    use std::io::Read;
    c.set_read_timeout(Some(within)).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match c.read(&mut buf) {
            Ok(0) => return (true, got),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            // A reset is a close too.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return (true, got),
            Err(_) => return (false, got),
        }
    }
}

/// A server whose header and body deadlines are 400 and 600 ms (given by variables, which an
/// older build ignores, so that it starts and shows what it did).
fn quick_deadlines(root: &std::path::Path) -> HttpServer {
    HttpServer::start_env(
        root,
        &[],
        &[
            ("MCP_PRUNER_HEADER_TIMEOUT_MS", "400"),
            ("MCP_PRUNER_BODY_TIMEOUT_MS", "600"),
        ],
    )
}

/// Sends `payload` on 40 connections at once; then a normal request is still answered and the
/// server soon holds no more descriptors than before.
fn flood_is_dropped(s: &HttpServer, payload: &[u8]) {
    use std::io::Write;
    let pid = s.child.id();
    let baseline = open_fds(pid);
    let mut held = Vec::new();
    for _ in 0..40 {
        let mut a = std::net::TcpStream::connect(("127.0.0.1", s.port)).unwrap();
        a.write_all(payload).unwrap();
        held.push(a);
    }
    let r = s.client.get(format!("{}/healthz", s.base)).send().unwrap();
    assert_eq!(r.status(), 200);
    assert!(
        eventually(Duration::from_secs(5), || open_fds(pid) <= baseline + 2),
        "descriptors still held: {} ({baseline} before)",
        open_fds(pid)
    );
    drop(held);
}

const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Row 1: an HTTP/2 prior-knowledge preface alone is dropped within the header deadline.
#[test]
fn h2_prefaces_are_dropped_in_time() {
    use std::io::Write;
    let root = fixture_root();
    let s = quick_deadlines(root.path());
    let mut c = std::net::TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    c.write_all(H2_PREFACE).unwrap();
    let started = std::time::Instant::now();
    let (closed, _) = closed_within(&mut c, Duration::from_secs(5));
    assert!(closed, "an HTTP/2 preface kept its connection open for 5 s");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    flood_is_dropped(&s, H2_PREFACE);
}

/// Row 3: a whole header followed by a body that stalls gets 408 and is closed within the body
/// deadline.
#[test]
fn stalled_bodies_are_dropped_in_time() {
    use std::io::Write;
    let root = fixture_root();
    let s = quick_deadlines(root.path());
    let mut c = std::net::TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    let head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: 1000000\r\n\r\n{\"jsonrpc\"";
    c.write_all(head).unwrap();
    let started = std::time::Instant::now();
    let (closed, got) = closed_within(&mut c, Duration::from_secs(5));
    assert!(closed, "a stalled body kept its connection open for 5 s");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    let got = String::from_utf8_lossy(&got);
    assert!(got.starts_with("HTTP/1.1 408"), "{got}");
    flood_is_dropped(&s, head);
}

/// Bodies being read hold a bounded share of memory together: past two bodies of the largest
/// size (64 MiB at least), a new request is refused with 503 and `Retry-After` instead of getting
/// a buffer, and the shares come back when the slow clients go.
#[test]
fn slow_bodies_share_a_bounded_amount_of_memory() {
    use std::io::Write;
    let root = fixture_root();
    let s = HttpServer::start(root.path(), &[]);
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: {}\r\n\r\n[",
        (16 << 20) - 1
    );
    // Four bodies of 16 MiB fill the 64 MiB: each is read, none finishes.
    let mut slow = Vec::new();
    for _ in 0..4 {
        let mut c = std::net::TcpStream::connect(("127.0.0.1", s.port)).unwrap();
        c.write_all(head.as_bytes()).unwrap();
        slow.push(c);
    }
    std::thread::sleep(Duration::from_millis(300));
    let mut fifth = std::net::TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    fifth.write_all(head.as_bytes()).unwrap();
    let (closed, got) = closed_within(&mut fifth, Duration::from_secs(5));
    let got = String::from_utf8_lossy(&got);
    assert!(closed, "the fifth body was not refused: {got}");
    assert!(got.starts_with("HTTP/1.1 503"), "{got}");
    assert!(got.to_ascii_lowercase().contains("retry-after: 1"), "{got}");
    assert!(got.contains("\"code\":\"unavailable\""), "{got}");
    // The slow clients go; their shares come back.
    drop(slow);
    std::thread::sleep(Duration::from_millis(500));
    let mut again = std::net::TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    again.write_all(head.as_bytes()).unwrap();
    again
        .set_read_timeout(Some(Duration::from_millis(800)))
        .unwrap();
    let mut buf = [0u8; 64];
    let read = std::io::Read::read(&mut again, &mut buf);
    assert!(
        matches!(&read, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock || e.kind() == std::io::ErrorKind::TimedOut),
        "a body after the slow ones left is read, not refused: {read:?} {:?}",
        String::from_utf8_lossy(&buf)
    );
}

/// A connection with a small receive buffer, so that a response that the client does not read
/// fills it quickly.
fn small_window_connect(port: u16) -> std::net::TcpStream {
    use std::os::fd::FromRawFd;
    // SAFETY: plain socket calls on a new descriptor that the returned stream then owns.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0);
        let size: libc::c_int = 4096;
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&size as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as u32,
        );
        let addr = libc::sockaddr_in {
            sin_family: libc::AF_INET as u16,
            sin_port: port.to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from_be_bytes([127, 0, 0, 1]).to_be(),
            },
            sin_zero: [0; 8],
        };
        let r = libc::connect(
            fd,
            (&addr as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as u32,
        );
        assert_eq!(r, 0, "{}", std::io::Error::last_os_error());
        std::net::TcpStream::from_raw_fd(fd)
    }
}

/// A deadline for the response phase too: clients that ask for a large result and never read
/// it are dropped once their writes stall for the body timeout, with what they held.
#[test]
fn clients_that_stop_reading_a_response_are_dropped() {
    use std::io::Write;
    let root = fixture_root();
    let line = "x".repeat(99) + "\n";
    std::fs::write(root.path().join("big.txt"), line.repeat(90_000)).unwrap();
    let s = HttpServer::start_env(root.path(), &[], &[("MCP_PRUNER_BODY_TIMEOUT_MS", "800")]);
    let pid = s.child.id();
    let before = open_fds(pid);
    let body = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"path":"big.txt","max_output_bytes":10485760}}}).to_string();
    let mut idle = Vec::new();
    for _ in 0..4 {
        let mut c = small_window_connect(s.port);
        c.write_all(&post_request(&body, "")).unwrap();
        idle.push(c);
    }
    assert!(
        eventually(Duration::from_secs(10), || open_fds(pid) >= before + 4),
        "the requests were taken"
    );
    assert!(
        eventually(Duration::from_secs(10), || open_fds(pid) <= before),
        "connections whose client reads nothing are still held: {} descriptors, {before} before",
        open_fds(pid)
    );
    drop(idle);
}

/// CPU seconds (user + system) the process `pid` has used.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let rest = &stat[stat.rfind(')').unwrap() + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // Fields 14 and 15 (utime, stime), counted from 1 with the pid; `rest` starts at field 3.
    let ticks: u64 = f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
    // SAFETY: sysconf has no side effects.
    ticks as f64 / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
}

/// Row 6: a `grep` whose HTTP client goes away stops (it burned CPU for its whole timeout).
#[test]
fn an_abandoned_grep_stops() {
    let root = fixture_root();
    let words = [
        "alpha", "beta", "gamma", "delta", "eps1", "zeta22", "eta", "theta",
    ];
    let mut text = String::with_capacity(24 << 20);
    let mut x = 12345u64;
    while text.len() < 24 << 20 {
        for i in 0..12 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            text.push_str(words[(x >> 33) as usize % words.len()]);
            text.push(if i == 11 { '\n' } else { ' ' });
        }
    }
    std::fs::write(root.path().join("big.txt"), &text).unwrap();
    drop(text);
    let s = HttpServer::start(root.path(), &[]);
    let pid = s.child.id();
    // No literal to skip by, no match: about a second of CPU per path on this machine class.
    let body = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"grep","arguments":{"pattern":"(\\w+\\s){4}\\w{7}","paths": vec!["big.txt"; 100],"timeout_ms":120000}}});
    let impatient = blocking_client(Duration::from_millis(1500));
    let r = impatient
        .post(format!("{}/mcp", s.base))
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .body(body.to_string())
        .send();
    assert!(r.is_err(), "the client gave up before the search ended");
    std::thread::sleep(Duration::from_millis(500));
    let before = cpu_seconds(pid);
    std::thread::sleep(Duration::from_secs(2));
    let burned = cpu_seconds(pid) - before;
    assert!(
        burned < 0.4,
        "the abandoned grep burned {burned:.2} CPU-seconds in the 2 s after its client left"
    );
}

/// Resident and peak memory of `pid` in MiB (VmRSS, VmHWM).
fn rss_mb(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .unwrap_or(0)
            / 1024
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Row 7: a stdio client that sends 20,000 reads and never reads stdout: the server stops
/// reading stdin once its replies back up, and its memory stays bounded.
#[test]
fn stdio_replies_do_not_pile_up_when_stdout_is_not_read() {
    use std::io::Write;
    let root = fixture_root();
    std::fs::write(
        root.path().join("page.txt"),
        "some text to read\n".repeat(2000),
    )
    .unwrap();
    let mut child = Reaped(
        std::process::Command::new(bin())
            .args(["stdio", "--root"])
            .arg(root.path())
            .env("MCP_PRUNER_NO_LEDGER", "1")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let pid = child.0.id();
    let _unread = child.0.stdout.take().unwrap();
    let mut stdin = child.0.stdin.take().unwrap();
    let sent = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let writer = {
        let sent = sent.clone();
        std::thread::spawn(move || {
            let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t"}}});
            if writeln!(stdin, "{init}").is_err() {
                return;
            }
            for i in 1..=20_000 {
                let call = json!({"jsonrpc":"2.0","id":i,"method":"tools/call","params":{"name":"read","arguments":{"path":"page.txt"}}});
                // Blocks once the server stops reading; fails once it is killed.
                if writeln!(stdin, "{call}").is_err() {
                    return;
                }
                sent.store(i, std::sync::atomic::Ordering::Relaxed);
            }
        })
    };
    std::thread::sleep(Duration::from_secs(6));
    let (rss, peak) = rss_mb(pid);
    let taken = sent.load(std::sync::atomic::Ordering::Relaxed);
    drop(child);
    let _ = writer.join();
    eprintln!("{taken} requests taken, {rss} MiB resident, {peak} MiB peak");
    assert!(
        taken < 20_000,
        "the server read all 20,000 requests although no reply was read"
    );
    assert!(peak < 150, "{peak} MiB peak ({taken} requests taken)");
}

/// A batch of 40 `read`s of a 10 MiB file, each at the largest `max_output_bytes`.
fn big_read_batch(root: &std::path::Path) -> Value {
    let line = "y".repeat(99) + "\n";
    std::fs::write(root.join("ten.txt"), line.repeat(10 * 1024 * 1024 / 100)).unwrap();
    Value::Array(
        (1..=40)
            .map(|i| json!({"jsonrpc":"2.0","id":i,"method":"tools/call","params":{"name":"read","arguments":{"path":"ten.txt","max_output_bytes":10485760}}}))
            .collect(),
    )
}

/// What a batch's replies say: their serialized bytes, and how many were refused for the
/// batch's bound.
fn batch_replies(replies: &Value) -> (usize, usize) {
    let all = replies
        .as_array()
        .unwrap_or_else(|| panic!("not a batch reply: {replies:.300}"));
    assert_eq!(all.len(), 40);
    let refused = all
        .iter()
        .filter(|r| {
            r["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("the bound of one request"))
        })
        .count();
    (replies.to_string().len(), refused)
}

/// Row 4: a batch's replies together stay within what one request may return, over HTTP and
/// stdio, and the server's memory with them.
#[test]
fn a_batch_is_bounded_like_one_request() {
    let root = fixture_root();
    let batch = big_read_batch(root.path());
    let s = HttpServer::start(root.path(), &[]);
    let r: Value = s
        .client
        .post(format!("{}/mcp", s.base))
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .body(batch.to_string())
        .send()
        .unwrap()
        .json()
        .unwrap();
    let (bytes, refused) = batch_replies(&r);
    let (_, peak) = rss_mb(s.child.id());
    eprintln!("HTTP: {bytes} bytes of replies, {refused} refused, {peak} MiB peak");
    assert!(bytes <= 11 << 20, "{bytes} bytes of replies to one batch");
    assert!(refused >= 38, "{refused} refused");
    assert!(peak < 250, "{peak} MiB peak over HTTP");
    drop(s);
    let mut c = StdioClient::spawn(root.path(), &[]);
    c.initialize();
    c.send(&batch);
    let r = c.next_message(Duration::from_secs(120));
    let (bytes, refused) = batch_replies(&r);
    let (_, peak) = rss_mb(c.child.id());
    eprintln!("stdio: {bytes} bytes of replies, {refused} refused, {peak} MiB peak");
    assert!(bytes <= 11 << 20, "{bytes} bytes of replies to one batch");
    assert!(peak < 250, "{peak} MiB peak over stdio");
}

/// Row 5: outputs under the spill threshold are stored on disk once the store's memory bound is
/// reached: 40 commands of 4.4 MB each (176 MB stored) leave the server well under that.
#[test]
fn the_store_holds_a_bounded_amount_in_memory() {
    let root = fixture_root();
    let mut c = StdioClient::spawn(root.path(), &[]);
    c.initialize();
    let mut ids = Vec::new();
    for i in 0..40 {
        // Distinct outputs (a repeated one would only re-issue its id).
        let r = c.call(
            "bash",
            json!({"cmd": format!("seq {} {}", i * 1_000_000, i * 1_000_000 + 550_000)}),
        );
        let id = structured(&r["result"])["artifactRef"]
            .as_str()
            .unwrap_or_else(|| panic!("a stored output: {:.300}", r.to_string()))
            .to_string();
        ids.push(id);
    }
    let (rss, peak) = rss_mb(c.child.id());
    let health = c.call("health", json!({}));
    eprintln!(
        "{rss} MiB resident, {peak} MiB peak; {:.400}",
        health.to_string()
    );
    // Every output is still there, the first one too.
    let r = c.call(
        "recover_text",
        json!({"prune_id": ids[0], "ranges": [{"start_line": 1, "end_line": 2}], "include_line_numbers": false}),
    );
    let body: Value = serde_json::from_str(text(&r["result"])).unwrap();
    assert_eq!(body["raw_text"], "0\n1\n", "{r}");
    assert!(
        rss < 200,
        "{rss} MiB resident with 40 stored outputs of 4.4 MB"
    );
}

/// Minor rows: a request in absolute form is judged by the host its target names (RFC 9112
/// section 3.2.2), not by a loopback `Host`; a message with two `id` members is refused, over
/// HTTP and stdio, instead of the last one winning silently.
#[test]
fn absolute_form_targets_and_repeated_ids_are_refused() {
    let root = fixture_root();
    let s = HttpServer::start(root.path(), &[]);
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}"#;
    let absolute = |target: &str| {
        raw_exchange(
            s.port,
            format!(
                "POST {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{ping}",
                ping.len()
            )
            .as_bytes(),
            Duration::from_secs(10),
        )
    };
    let evil = absolute("http://evil.example/mcp");
    assert!(evil.starts_with("HTTP/1.1 403"), "{evil}");
    let local = absolute(&format!("http://127.0.0.1:{}/mcp", s.port));
    assert!(local.starts_with("HTTP/1.1 200"), "{local}");
    let twice = r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{},"id":2}"#;
    let r = raw_exchange(s.port, &post_request(twice, ""), Duration::from_secs(10));
    assert!(r.contains(r#""code":-32600"#), "{r}");
    assert!(!r.contains(r#""id":2"#), "{r}");
    let mut c = StdioClient::spawn(root.path(), &[]);
    c.initialize();
    c.send_raw(twice);
    let r = c.next_message(Duration::from_secs(10));
    assert_eq!(r["error"]["code"], -32600, "{r}");
    assert_eq!(r["id"], Value::Null, "{r}");
}
