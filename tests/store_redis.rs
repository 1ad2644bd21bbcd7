//! The shared recovery store (issue 38): real `serve` replicas on a real `redis-server` (or
//! `valkey-server`) started by the test. An id issued by one replica is recovered byte-exact by
//! another, paged and by question; sessions' listings stay scoped; eviction, a store restart and
//! a store that is down give their own -32004 reasons; an output the store cannot take is
//! answered unpruned and says it is not recoverable. Skipped, saying why, without a server binary.

mod common;

use common::*;
use serde_json::{Value, json};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A Valkey/Redis server on a free loopback port, killed on drop.
struct Redis {
    bin: String,
    port: u16,
    child: Option<Child>,
    /// TLS only (`rediss://`): the server's certificate, key and CA files.
    tls: Option<[std::path::PathBuf; 3]>,
}

impl Redis {
    /// Starts one, or says why not (no server binary) and returns `None`.
    fn start(test: &str) -> Option<Redis> {
        let bin = ["valkey-server", "redis-server"]
            .into_iter()
            .find_map(|b| {
                std::env::var_os("PATH").and_then(|p| {
                    std::env::split_paths(&p)
                        .map(|d| d.join(b))
                        .find(|f| f.is_file())
                })
            })
            .or_else(|| {
                let p = std::path::PathBuf::from("/usr/bin/redis-server");
                p.is_file().then_some(p)
            });
        let Some(bin) = bin else {
            eprintln!(
                "{test}: skipped: no valkey-server or redis-server on PATH (apt-get install redis-server)"
            );
            return None;
        };
        let port = free_port();
        let mut r = Redis {
            bin: bin.to_string_lossy().into_owned(),
            port,
            child: None,
            tls: None,
        };
        r.up();
        Some(r)
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// Starts the server (empty: no persistence) and waits until it answers.
    fn up(&mut self) {
        let mut cmd = Command::new(&self.bin);
        match &self.tls {
            None => cmd.args(["--port", &self.port.to_string()]),
            Some([cert, key, ca]) => cmd
                .args(["--port", "0", "--tls-port", &self.port.to_string()])
                .arg("--tls-cert-file")
                .arg(cert)
                .arg("--tls-key-file")
                .arg(key)
                .arg("--tls-ca-cert-file")
                .arg(ca)
                .args(["--tls-auth-clients", "no"]),
        };
        let child = cmd
            .args(["--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(mut c) = std::net::TcpStream::connect(("127.0.0.1", self.port)) {
                if self.tls.is_some() {
                    // Listening on its TLS port: ready (a plain PING would not be answered).
                    return;
                }
                use std::io::{Read, Write};
                c.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
                c.write_all(b"PING\r\n").unwrap();
                let mut b = [0u8; 7];
                if c.read_exact(&mut b).is_ok() && &b == b"+PONG\r\n" {
                    return;
                }
            }
            assert!(Instant::now() < deadline, "the store did not start");
            if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                panic!(
                    "the store exited at start ({status}): {} without TLS?",
                    self.bin
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Kills the server (its data goes with it).
    fn down(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.down();
    }
}

/// How long a replica may still answer from its near copy of a text the store no longer holds
/// (`store::near::STALE_AFTER`, 100 ms), with a margin.
const NEAR_STALE_AFTER: Duration = Duration::from_millis(250);

/// The value of `/metrics` sample `name` on `s`.
fn metric(s: &HttpServer, name: &str) -> f64 {
    let text = s
        .client
        .get(format!("{}/metrics", s.base))
        .send()
        .unwrap()
        .text()
        .unwrap();
    metric_sample(&text, name)
}

/// A file of numbered, distinct lines (`n` of them).
fn numbered_file(root: &std::path::Path, name: &str, n: usize) -> String {
    let text: String = (1..=n)
        .map(|i| format!("line {i:05} of {name}: fn item_{i}() -> u32 {{ {i} }} ✓\n"))
        .collect();
    std::fs::write(root.join(name), &text).unwrap();
    text
}

/// The artifact id of a cut `read` of `name`.
fn read_id(s: &HttpServer, sid: &str, name: &str) -> String {
    let r = s.call(sid, "read", json!({"path": name}));
    structured(&r["result"])["artifactRef"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| panic!("a stored output: {r}"))
}

/// The whole text behind `id`, paged through `servers` in turn (each page from the next one).
fn recover_all(servers: &[&HttpServer], sid: &[&str], id: &str) -> String {
    let mut out = String::new();
    let mut cursor: Option<String> = None;
    for turn in 0.. {
        let k = turn % servers.len();
        let mut args = json!({"prune_id": id, "include_line_numbers": false});
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let r = servers[k].call(sid[k], "recover_text", args);
        assert!(r.get("result").is_some(), "page {turn}: {r}");
        let body: Value =
            serde_json::from_str(text(&r["result"])).unwrap_or_else(|e| panic!("{e}: {r}"));
        out.push_str(body["raw_text"].as_str().unwrap());
        match body["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => return out,
        }
        assert!(turn < 10_000, "paging never ended");
    }
    unreachable!()
}

/// The JSON-RPC error of a `recover_text` call.
fn recover_error(s: &HttpServer, sid: &str, id: &str) -> Value {
    let r = s.call(
        sid,
        "recover_text",
        json!({"prune_id": id, "ranges": [{"start_line": 1, "end_line": 3}]}),
    );
    r.get("error")
        .cloned()
        .unwrap_or_else(|| panic!("an error: {r}"))
}

#[test]
fn an_id_from_one_replica_is_recovered_byte_exact_by_another() {
    let Some(redis) = Redis::start("an_id_from_one_replica_is_recovered_byte_exact_by_another")
    else {
        return;
    };
    let root = fixture_root();
    let file = numbered_file(root.path(), "big.rs", 3000);
    let store = redis.url();
    let args = ["--store", store.as_str(), "--max-output-bytes", "4096"];
    let a = HttpServer::start(root.path(), &args);
    let b = HttpServer::start(root.path(), &args);
    let c = HttpServer::start(root.path(), &args);
    let (sa, sb, sc) = (a.initialize(), b.initialize(), c.initialize());
    let id = read_id(&a, &sa, "big.rs");
    // Whole text, paged across the three replicas in turn.
    let got = recover_all(&[&b, &c, &a], &[&sb, &sc, &sa], &id);
    assert!(
        got == file,
        "recovered {} of {} bytes",
        got.len(),
        file.len()
    );
    // A range in the middle (past several index marks), exact bytes.
    let r = c.call(
        &sc,
        "recover_text",
        json!({"prune_id": id, "ranges": [{"start_line": 1000, "end_line": 1002}], "include_line_numbers": false}),
    );
    let body: Value = serde_json::from_str(text(&r["result"])).unwrap();
    let want: String = file
        .lines()
        .skip(999)
        .take(3)
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(body["raw_text"], want.as_str(), "{r}");
    assert_eq!(body["metadata"]["total_lines"], 3000);
    // The same output read on another replica re-issues the same id.
    assert_eq!(read_id(&b, &sb, "big.rs"), id);
    // Listings stay per session, whichever replica answers.
    let list = |s: &HttpServer, sid: &str| s.resource_names(Some(sid));
    assert!(list(&a, &sa).contains(&id));
    assert!(list(&b, &sb).contains(&id), "re-issued to b's session");
    assert!(!list(&c, &sc).contains(&id));
    // resources/read on a third replica: the whole text.
    let r = c.post(
        "/mcp",
        &json!({"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri": format!("prune://{id}")}}),
        Some(&sc),
    );
    let v: Value = r.json().unwrap();
    assert_eq!(v["result"]["contents"][0]["text"], file.as_str());
}

#[test]
fn a_recovery_by_question_on_another_replica_skips_what_was_shown() {
    let Some(redis) =
        Redis::start("a_recovery_by_question_on_another_replica_skips_what_was_shown")
    else {
        return;
    };
    let root = fixture_root();
    let q: String = (1..=400)
        .map(|i| match i {
            200 => "fn zeta_checksum() -> u32 { 0x5eed }\n".to_string(),
            _ => format!("// filler comment number {i} about nothing in particular\n"),
        })
        .collect();
    std::fs::write(root.path().join("q.rs"), q).unwrap();
    let store = redis.url();
    let args = ["--store", store.as_str()];
    let a = HttpServer::start(root.path(), &args);
    let b = HttpServer::start(root.path(), &args);
    let (sa, sb) = (a.initialize(), b.initialize());
    let r = a.call(
        &sa,
        "read",
        json!({"path": "q.rs", "context_focus_question": "what does zeta_checksum return?"}),
    );
    let p = &structured(&r["result"])["pruning"];
    assert_eq!(p["applied"], true, "{r}");
    let id = p["prune_id"].as_str().unwrap().to_string();
    let shown = text(&r["result"]).to_string();
    // The lines a's result left out, from its markers (`[… lines A-B]`).
    let hidden: Vec<(u64, u64)> = shown
        .split("[… lines ")
        .skip(1)
        .filter_map(|m| {
            let (a, rest) = m.split_once('-')?;
            let b = rest.split(|c: char| !c.is_ascii_digit()).next()?;
            Some((a.parse().ok()?, b.parse().ok()?))
        })
        .collect();
    assert!(!hidden.is_empty(), "{shown}");
    let r = b.call(
        &sb,
        "recover_text",
        json!({"prune_id": id, "context_focus_question": "what does zeta_checksum return?"}),
    );
    let body = structured(&r["result"]);
    // The rows it returns, located by its markers (an answer by question lists no ranges).
    let rows = located(answer_lines(&r["result"]));
    assert!(!rows.is_empty(), "{body}");
    assert_eq!(body["metadata"]["returned_lines"], rows.len(), "{body}");
    for (n, _) in &rows {
        let n = *n as u64;
        assert!(
            hidden.iter().any(|&(a, b)| a <= n && n <= b),
            "b returns only lines a's result did not show: line {n} vs {hidden:?}"
        );
    }
    // What b returned is added to what the store records as shown: asked again on a, none of
    // it comes back.
    let r = a.call(
        &sa,
        "recover_text",
        json!({"prune_id": id, "context_focus_question": "what does zeta_checksum return?"}),
    );
    let before: std::collections::HashSet<usize> = rows.iter().map(|(n, _)| *n).collect();
    for (n, _) in located(answer_lines(&r["result"])) {
        assert!(!before.contains(&n), "line {n} returned twice");
    }
}

#[test]
fn eviction_restart_and_an_unreachable_store_say_why() {
    let Some(mut redis) = Redis::start("eviction_restart_and_an_unreachable_store_say_why") else {
        return;
    };
    let root = fixture_root();
    for n in ["a.rs", "b.rs", "c.rs"] {
        numbered_file(root.path(), n, 800);
    }
    let store = redis.url();
    let args = [
        "--store",
        store.as_str(),
        "--store-max-entries",
        "2",
        "--max-output-bytes",
        "4096",
    ];
    let a = HttpServer::start(root.path(), &args);
    let b = HttpServer::start(root.path(), &args);
    let (sa, sb) = (a.initialize(), b.initialize());
    let first = read_id(&a, &sa, "a.rs");
    read_id(&b, &sb, "b.rs");
    let third = read_id(&a, &sa, "c.rs");
    // The cap holds for both replicas together: b's second entry evicted a's first.
    let e = recover_error(&b, &sb, &first);
    assert_eq!(e["code"], -32004, "{e}");
    assert!(e.to_string().contains("evicted"), "{e}");
    // The store restarts empty: a clear reason, never other lines. `a` holds a near copy of
    // `third`; a replica drops its copies within a tick of the restart (100 ms, STALE_AFTER).
    redis.down();
    redis.up();
    std::thread::sleep(NEAR_STALE_AFTER);
    for (s, sid) in [(&a, &sa), (&b, &sb)] {
        let e = recover_error(s, sid, &third);
        assert_eq!(e["code"], -32004, "{e}");
        assert!(e.to_string().contains("lost its data"), "{e}");
    }
    // The store down: reads still answer, say nothing is recoverable, prune nothing.
    redis.down();
    let e = recover_error(&b, &sb, &third);
    assert_eq!(e["code"], -32004, "{e}");
    assert!(e.to_string().contains("unreachable"), "{e}");
    let r = a.call(&sa, "read", json!({"path": "a.rs"}));
    let t = text(&r["result"]);
    assert!(
        t.contains("not stored") && t.contains("could not be reached"),
        "the cut page says its rest is not recoverable: {t}"
    );
    let r = a.call(
        &sa,
        "read",
        json!({"path": "src/lib.rs", "context_focus_question": "what does beta return?"}),
    );
    let p = &structured(&r["result"])["pruning"];
    assert_eq!(p["applied"], false, "{r}");
    assert!(
        p.get("prune_id").is_none(),
        "no id for an output not stored: {p}"
    );
    assert!(
        p["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not stored"),
        "{p}"
    );
    assert_eq!(
        text(&r["result"]),
        std::fs::read_to_string(root.path().join("src/lib.rs")).unwrap(),
        "the raw text, whole"
    );
    // Back up: new outputs are stored again.
    redis.up();
    let id = read_id(&b, &sb, "b.rs");
    let r = a.call(
        &sa,
        "recover_text",
        json!({"prune_id": id, "ranges": [{"start_line": 2, "end_line": 2}], "include_line_numbers": false}),
    );
    let body: Value = serde_json::from_str(text(&r["result"])).unwrap();
    assert!(
        body["raw_text"]
            .as_str()
            .unwrap()
            .starts_with("line 00002 of b.rs"),
        "{r}"
    );
}

#[test]
fn a_replica_answers_from_its_near_copy_until_the_store_evicts_it() {
    let Some(redis) =
        Redis::start("a_replica_answers_from_its_near_copy_until_the_store_evicts_it")
    else {
        return;
    };
    let root = fixture_root();
    let texts: Vec<String> = ["x.rs", "y.rs", "z.rs"]
        .iter()
        .map(|n| numbered_file(root.path(), n, 800))
        .collect();
    let store = redis.url();
    let args = ["--store", store.as_str(), "--store-max-entries", "2"];
    let a = HttpServer::start(root.path(), &args);
    let b = HttpServer::start(root.path(), &args);
    let (sa, sb) = (a.initialize(), b.initialize());
    let x = read_id(&a, &sa, "x.rs");
    // The same output again: its id re-issued, from the copy once a check has run.
    std::thread::sleep(NEAR_STALE_AFTER);
    assert_eq!(read_id(&a, &sa, "x.rs"), x, "the same output keeps its id");
    let hits = metric(&a, "mcp_pruner_store_near_hits_total");
    assert!(hits >= 1.0, "the re-issue came from the near copy: {hits}");
    assert_eq!(
        recover_all(&[&a], &[&sa], &x),
        texts[0],
        "pages from the copy"
    );
    assert!(metric(&a, "mcp_pruner_store_near_hits_total") > hits);
    assert!(metric(&a, "mcp_pruner_store_near_bytes") >= texts[0].len() as f64);
    // The other replica has no copy: its pages come from the store, byte-exact.
    assert_eq!(recover_all(&[&b], &[&sb], &x), texts[0]);
    assert_eq!(metric(&b, "mcp_pruner_store_near_hits_total"), 0.0);
    // The same output read on the other replica: the server re-issues the id (uploaded and
    // admitted in one trip, the upload dropped).
    assert_eq!(
        read_id(&b, &sb, "x.rs"),
        x,
        "any replica re-issues the same output's id"
    );
    // `a` sends the recency of the pages it served from its copy at its next tick: let it land
    // before `y` is stored, or on a loaded machine `x` may be used after `y` and `y` evicted.
    std::thread::sleep(Duration::from_secs(1));
    // `b` fills the store past its cap: `x` (least recently used) is evicted there, and `a`
    // drops its copy within a tick: the same reason as from any replica, never the old text.
    read_id(&b, &sb, "y.rs");
    read_id(&b, &sb, "z.rs");
    std::thread::sleep(NEAR_STALE_AFTER);
    for (s, sid) in [(&a, &sa), (&b, &sb)] {
        let e = recover_error(s, sid, &x);
        assert_eq!(e["code"], -32004, "{e}");
        assert!(e.to_string().contains("evicted"), "{e}");
    }
    // Read again, `x` is a new entry with a new id.
    let again = read_id(&a, &sa, "x.rs");
    assert_ne!(again, x);
    assert_eq!(recover_all(&[&b, &a], &[&sb, &sa], &again), texts[0]);
}

/// A CA and a server certificate for `localhost` and 127.0.0.1 signed by it, made by the
/// `openssl` command in `dir`: `[cert, key, ca]`; `None` (saying why) without `openssl`.
fn test_certificates(dir: &std::path::Path) -> Option<[std::path::PathBuf; 3]> {
    let run = |args: &[&str]| {
        Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    std::fs::write(
        dir.join("ext.cnf"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    let made = run(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=mcp-pruner test CA",
    ]) && run(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "srv.key",
        "-out",
        "srv.csr",
        "-subj",
        "/CN=localhost",
    ]) && run(&[
        "x509",
        "-req",
        "-in",
        "srv.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "srv.pem",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
    ]);
    if !made {
        eprintln!("rediss test: skipped: no `openssl` command to make test certificates");
        return None;
    }
    Some([dir.join("srv.pem"), dir.join("srv.key"), dir.join("ca.pem")])
}

#[test]
fn rediss_checks_the_store_certificate_and_carries_every_call() {
    let Some(mut redis) =
        Redis::start("rediss_checks_the_store_certificate_and_carries_every_call")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let Some(files) = test_certificates(dir.path()) else {
        return;
    };
    let ca = files[2].to_str().unwrap().to_string();
    redis.down();
    redis.tls = Some(files);
    redis.up();
    let root = fixture_root();
    let raw = numbered_file(root.path(), "t.rs", 800);
    let store = format!("rediss://localhost:{}/0", redis.port);
    // The CA given by SSL_CERT_FILE: stored over TLS, recovered byte-exact by another replica.
    let trusting = [("SSL_CERT_FILE", ca.as_str())];
    let a = HttpServer::start_env(root.path(), &["--store", &store], &trusting);
    let b = HttpServer::start_env(root.path(), &["--store", &store], &trusting);
    let (sa, sb) = (a.initialize(), b.initialize());
    let id = read_id(&a, &sa, "t.rs");
    assert_eq!(recover_all(&[&b], &[&sb], &id), raw);
    // Without that CA the server is not trusted: nothing goes to it, and the call says so.
    let empty = dir.path().join("no-roots.pem");
    std::fs::write(&empty, "").unwrap();
    let c = HttpServer::start_env(
        root.path(),
        &["--store", &store],
        &[("SSL_CERT_FILE", empty.to_str().unwrap())],
    );
    let sc = c.initialize();
    let r = c.call(&sc, "read", json!({"path": "t.rs"}));
    let t = text(&r["result"]);
    assert!(
        t.contains("not stored") && t.contains("could not be reached"),
        "an untrusted store takes nothing: {t}"
    );
    let e = recover_error(&c, &sc, &id);
    assert_eq!(e["code"], -32004, "{e}");
    assert!(e.to_string().contains("unreachable"), "{e}");
}

#[test]
fn doctor_names_the_shared_store_and_fails_when_it_cannot_be_reached() {
    let Some(mut redis) =
        Redis::start("doctor_names_the_shared_store_and_fails_when_it_cannot_be_reached")
    else {
        return;
    };
    let root = fixture_root();
    let home = tempfile::tempdir().unwrap();
    let doctor = |store: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_mcp-pruner"))
            .args(["doctor", "--no-ledger", "--store", store, "--root"])
            .arg(root.path())
            .env("HOME", home.path())
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        let line = out
            .lines()
            .find(|l| l.contains(" store "))
            .unwrap_or_else(|| panic!("a store line in\n{out}"))
            .to_string();
        (o.status.code(), line)
    };
    let (_, line) = doctor(&redis.url());
    assert!(
        line.starts_with("ok")
            && line.contains(&redis.url())
            && (line.contains("(redis ") || line.contains("(valkey ")),
        "{line}"
    );
    redis.down();
    let (code, line) = doctor(&redis.url());
    assert!(
        line.starts_with("FAIL") && line.contains("cannot be used"),
        "{line}"
    );
    assert_eq!(code, Some(1), "doctor fails the run");
}

#[test]
fn a_grep_cursor_from_one_replica_pages_the_stored_matches_on_another() {
    let Some(redis) =
        Redis::start("a_grep_cursor_from_one_replica_pages_the_stored_matches_on_another")
    else {
        return;
    };
    let root = fixture_root();
    for f in ["m1.txt", "m2.txt", "m3.txt"] {
        let text: String = (1..=300).map(|i| format!("needle {i} in {f}\n")).collect();
        std::fs::write(root.path().join(f), text).unwrap();
    }
    let store = redis.url();
    let a = HttpServer::start(root.path(), &["--store", &store]);
    let b = HttpServer::start(root.path(), &["--store", &store]);
    let (sa, sb) = (a.initialize(), b.initialize());
    let args = json!({"pattern": "needle", "max_matches": 50});
    let first = structured(&a.call(&sa, "grep", args.clone())["result"]).clone();
    assert!(
        first["artifactRef"].is_string(),
        "the matches are stored: {first}"
    );
    let cursor = first["nextCursor"]
        .as_str()
        .expect("more pages")
        .to_string();
    let mut next = args.clone();
    next["cursor"] = json!(cursor);
    let want = a.call(&sa, "grep", next.clone());
    // The files change: a replica that searched again would see it. The other replica pages
    // the matches stored when the cursor was made, as the first one does.
    std::fs::remove_file(root.path().join("m1.txt")).unwrap();
    let got = b.call(&sb, "grep", next);
    assert_eq!(text(&got["result"]), text(&want["result"]), "the same page");
    let s = structured(&got["result"]);
    assert_eq!(s["match_count"], 900);
    assert_eq!(s["artifactRef"], first["artifactRef"]);
    assert!(
        text(&got["result"]).contains("m1.txt"),
        "from the stored matches, not a new search: {got}"
    );
}

/// The rows of a `read` window's page from line `first`, located by its markers (which give the
/// file's line numbers); the note naming the prune id is not a row.
fn window_rows(page: &str, first: usize) -> Vec<usize> {
    let body: String = page
        .lines()
        .filter(|l| !l.starts_with("[pruned"))
        .map(|l| format!("{l}\n"))
        .collect();
    // `located` numbers from line 1: shift every row by the window's start, and a marker's
    // numbers are the file's already.
    let marker = regex::Regex::new(mcp_pruner::prune::render::COMPACT_MARKER_PATTERN).unwrap();
    let mut next = first;
    let mut rows = Vec::new();
    for l in body.lines() {
        match marker.captures(l) {
            Some(m) => {
                let end = m.name("end").unwrap_or(m.name("start").unwrap());
                next = end.as_str().parse::<usize>().unwrap() + 1;
            }
            None => {
                rows.push(next);
                next += 1;
            }
        }
    }
    rows
}

/// Six windows of one file read with questions at the same moment, three on each of two
/// replicas, all land in the shared store's record of shown lines (each adds its lines in one
/// script, never a read of the record then a write of it): a recovery by any of their questions
/// returns no line a window showed. Ten files, so a lost addition would show in one of them.
#[test]
fn windows_read_at_once_on_two_replicas_all_count_as_shown() {
    let Some(redis) = Redis::start("windows_read_at_once_on_two_replicas_all_count_as_shown")
    else {
        return;
    };
    let root = fixture_root();
    let store = redis.url();
    let args = ["--store", store.as_str()];
    let servers = [
        HttpServer::start(root.path(), &args),
        HttpServer::start(root.path(), &args),
    ];
    let sessions = [servers[0].initialize(), servers[1].initialize()];
    let offsets = [400usize, 700, 1000, 1300, 1600, 1900];
    let questions: Vec<String> = offsets
        .iter()
        .map(|o| format!("how does func_{} compute step 3?", (o + 100) / 9))
        .collect();
    for trial in 0..10 {
        let name = format!("rc{trial}.py");
        let src: String = (0..240)
            .map(|k| {
                format!(
                    "def func_{k}(x):\n    a = x + {k}\n    b = a * 3  # step 3\n    c = b - 1\n    \
                     d = c // 2\n    e = d + a\n    f = e * b\n    return f\n\n"
                )
            })
            .collect();
        std::fs::write(root.path().join(&name), src).unwrap();
        let barrier = std::sync::Barrier::new(offsets.len());
        let pages: Vec<Value> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..offsets.len())
                .map(|j| {
                    let (server, sid) = (&servers[j % 2], &sessions[j % 2]);
                    let (name, barrier, question) = (&name, &barrier, &questions[j]);
                    s.spawn(move || {
                        barrier.wait();
                        server.call(
                            sid,
                            "read",
                            json!({"path": name, "offset": offsets[j], "limit": 300,
                                   "context_focus_question": question}),
                        )
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut shown = std::collections::HashSet::new();
        let mut id = None;
        for (page, &first) in pages.iter().zip(&offsets) {
            let p = &structured(&page["result"])["pruning"];
            assert_eq!(p["applied"], true, "{page}");
            let pid = p["prune_id"].as_str().unwrap().to_string();
            assert!(
                id.get_or_insert(pid.clone()) == &pid,
                "windows share one id"
            );
            shown.extend(window_rows(text(&page["result"]), first));
        }
        let id = id.unwrap();
        for q in &questions {
            let r = servers[0].call(
                &sessions[0],
                "recover_text",
                json!({"prune_id": id, "context_focus_question": q, "max_output_bytes": 100000}),
            );
            for (n, line) in located(answer_lines(&r["result"])) {
                assert!(
                    !shown.contains(&n),
                    "trial {trial}: line {n} ({line}) was shown by a window and came back"
                );
            }
        }
    }
}
