//! Confinement under attack (issue 13, item 1, and issue 15, item 4): files and links swapped
//! while the server reads, FIFOs and devices behind links, and refusals that name nothing outside
//! the root. Spawns the real binary over stdio.

mod common;

use common::{StdioClient, structured, text};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

const SECRET: &str = "SECRET-OUTSIDE-THE-ROOT";

/// Swaps a race must overlap before it counts as a race.
const MIN_FLIPS: u64 = 50;

/// How long a race may run on past its tries waiting for [`MIN_FLIPS`] swaps.
const RACE_CAP: std::time::Duration = std::time::Duration::from_secs(60);

/// Reads `path` at least `tries` times while `swap` flips it, and on until the swapper has
/// flipped [`MIN_FLIPS`] times (a loaded machine can starve it of the filesystem) or
/// [`RACE_CAP`] has passed; returns how many answers held the secret and how many were asked.
fn race(
    client: &mut StdioClient,
    path: &str,
    tries: usize,
    tool: &str,
    flips: &AtomicU64,
) -> (usize, usize) {
    let started = std::time::Instant::now();
    let (mut leaks, mut asked) = (0, 0);
    while asked < tries
        || (flips.load(Ordering::Relaxed) < MIN_FLIPS && started.elapsed() < RACE_CAP)
    {
        let args = if tool == "read" {
            json!({"path": path})
        } else {
            json!({"pattern": "SECRET", "paths": [path]})
        };
        let r = client.call(tool, args);
        if r.to_string().contains(SECRET) {
            leaks += 1;
        }
        asked += 1;
    }
    (leaks, asked)
}

/// Flips `link` between a regular file (or a directory holding one, when `dir`) and a symlink to
/// `outside`, until `stop`, counting its swaps in `flips`.
fn swapper(
    link: std::path::PathBuf,
    outside: std::path::PathBuf,
    dir: bool,
    stop: Arc<AtomicBool>,
    flips: Arc<AtomicU64>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let tmp = link.with_extension("swap-tmp");
        while !stop.load(Ordering::Relaxed) {
            let _ = std::fs::remove_file(&tmp);
            let _ = std::fs::remove_dir_all(&tmp);
            if flips.load(Ordering::Relaxed) % 2 == 0 {
                std::os::unix::fs::symlink(&outside, &tmp).unwrap();
            } else if dir {
                std::fs::create_dir(&tmp).unwrap();
                std::fs::write(tmp.join("f"), "inside\n").unwrap();
            } else {
                std::fs::write(&tmp, "inside\n").unwrap();
            }
            // rename(2) replaces a file or a link atomically; a directory is swapped by
            // renaming the old one away first.
            if std::fs::rename(&tmp, &link).is_err() {
                let old = link.with_extension("old");
                let _ = std::fs::remove_dir_all(&old);
                let _ = std::fs::rename(&link, &old);
                let _ = std::fs::rename(&tmp, &link);
                let _ = std::fs::remove_dir_all(&old);
            }
            flips.fetch_add(1, Ordering::Relaxed);
        }
    })
}

#[test]
fn swapped_links_never_leak_a_file_outside_the_root() {
    let root_dir = tempfile::tempdir().unwrap();
    let root = root_dir.path().canonicalize().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), format!("{SECRET}\n")).unwrap();
    std::fs::create_dir(outside.path().join("dir")).unwrap();
    std::fs::write(outside.path().join("dir/f"), format!("{SECRET}\n")).unwrap();
    std::fs::write(root.join("swap"), "inside\n").unwrap();
    std::fs::create_dir(root.join("d")).unwrap();
    std::fs::write(root.join("d/f"), "inside\n").unwrap();
    let tries: usize = std::env::var("CONFINEMENT_TRIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);

    let mut client = StdioClient::spawn(&root, &["--log-level", "error"]);
    client.initialize();
    let mut report = Vec::new();
    for (name, link, target, dir, path, tool) in [
        ("file <-> link", "swap", "secret", false, "swap", "read"),
        ("dir <-> dir link", "d", "dir", true, "d/f", "read"),
        ("grep: dir <-> dir link", "d", "dir", true, "d", "grep"),
    ] {
        let stop = Arc::new(AtomicBool::new(false));
        let flips = Arc::new(AtomicU64::new(0));
        let t = swapper(
            root.join(link),
            outside.path().join(target),
            dir,
            stop.clone(),
            flips.clone(),
        );
        let (leaks, asked) = race(&mut client, path, tries, tool, &flips);
        stop.store(true, Ordering::Relaxed);
        t.join().unwrap();
        let flips = flips.load(Ordering::Relaxed);
        report.push(format!(
            "{name}: {leaks} leaks in {asked} tries ({flips} swaps)"
        ));
        assert_eq!(leaks, 0, "{report:?}");
        assert!(flips >= MIN_FLIPS, "the swapper ran: {report:?}");
    }
    eprintln!("{report:#?}");
    client.close();
}

fn error_of(r: &Value) -> (String, String, String) {
    let meta = &structured(r)["error"];
    (
        meta["code"].as_str().unwrap_or_default().to_string(),
        meta["reason"].as_str().unwrap_or_default().to_string(),
        text(r).to_string(),
    )
}

#[test]
fn special_files_and_links_out_are_refused_quickly_without_naming_the_outside() {
    let root_dir = tempfile::tempdir().unwrap();
    let root = root_dir.path().canonicalize().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let outside_path = outside.path().canonicalize().unwrap();
    std::fs::write(outside_path.join("exists"), "x").unwrap();
    let link = |target: &Path, name: &str| {
        std::os::unix::fs::symlink(target, root.join(name)).unwrap();
    };
    link(Path::new("/dev/zero"), "zero");
    link(&outside_path.join("exists"), "out-exists");
    link(&outside_path.join("missing"), "out-missing");
    let fifo = std::ffi::CString::new(root.join("fifo").to_str().unwrap()).unwrap();
    // SAFETY: a valid C string path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    link(Path::new("fifo"), "fifo-link");

    let mut client = StdioClient::spawn(&root, &["--log-level", "error"]);
    client.initialize();
    for (path, reason) in [
        ("zero", "invalid_path"),
        ("fifo", "invalid_path"),
        ("fifo-link", "invalid_path"),
        ("out-exists", "invalid_path"),
        ("out-missing", "invalid_path"),
    ] {
        let started = std::time::Instant::now();
        let r = client.call("read", json!({"path": path}))["result"].clone();
        let (code, why, message) = error_of(&r);
        assert_eq!(r["isError"], true, "{path}: {r}");
        assert_eq!(
            (code.as_str(), why.as_str()),
            ("INVALID_REQUEST", reason),
            "{path}: {r}"
        );
        assert!(
            !message.contains(outside_path.to_str().unwrap()) && !message.contains("/dev/"),
            "{path}: the refusal names what is outside: {message}"
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(2),
            "{path} took {:?}",
            started.elapsed()
        );
    }
    // The two links out answer the same whether their target exists or not.
    let a = text(&client.call("read", json!({"path": "out-exists"}))["result"])
        .replace("out-exists", "X");
    let b = text(&client.call("read", json!({"path": "out-missing"}))["result"])
        .replace("out-missing", "X");
    assert_eq!(a, b);
    client.close();
}

#[test]
fn grep_keeps_its_timeout_inside_one_huge_file() {
    let root_dir = tempfile::tempdir().unwrap();
    let root = root_dir.path().canonicalize().unwrap();
    {
        use std::io::Write;
        let mut f = std::io::BufWriter::new(std::fs::File::create(root.join("big.log")).unwrap());
        let line = "2026-11-24 12:00:00 INFO worker processed a request without trouble\n";
        for _ in 0..(120 << 20) / line.len() {
            f.write_all(line.as_bytes()).unwrap();
        }
    }
    let mut client = StdioClient::spawn(&root, &["--log-level", "error"]);
    client.initialize();
    let started = std::time::Instant::now();
    let r = client.call(
        "grep",
        json!({"pattern": "INFO", "paths": ["big.log"], "timeout_ms": 100}),
    )["result"]
        .clone();
    let took = started.elapsed();
    assert_eq!(structured(&r)["error"]["reason"], json!("timeout"), "{r}");
    assert!(
        took < std::time::Duration::from_millis(100 + 750),
        "grep with timeout_ms 100 answered after {took:?}"
    );
    client.close();
}
