//! Running a command the way `bash` needs it: in its own session (and process group), stdout and
//! stderr captured under a hard memory cap, a timeout, cancellation, and a tree kill (SIGTERM to
//! the group, the session and every descendant, a grace period, then SIGKILL) so that no
//! descendant outlives a timed-out or cancelled call (seed 003 part 2), not even one that moved
//! to another group (`set -m`) or session (`setsid`) while its parent lived. After a command
//! succeeds, what it left in its group is terminated too; a daemon detached on purpose (`setsid`,
//! or `set -m` job control) survives. When the binary has enabled it ([`use_shepherd`]), a
//! [`shepherd`] stands between the server and the command as its child subreaper, so that even a
//! double-forked daemon whose parent already died is still in the tree when a call times out or
//! is cancelled. Owns spawning and signals; never interprets the output.

pub mod service;
pub mod shepherd;

use crate::sync::Unpoisoned;
use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio_util::sync::CancellationToken;

/// What to run.
pub struct Spec {
    /// Program to execute.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Working directory (by path; see `cwd_dir`).
    pub cwd: PathBuf,
    /// The working directory as an open handle: when set, the command starts there (`fchdir`
    /// in the child before it executes) and `cwd` is not looked up again, so a path swapped
    /// after the caller's check cannot move the command elsewhere.
    pub cwd_dir: Option<std::fs::File>,
    /// Variables set over the inherited environment.
    pub env: Vec<(String, String)>,
    /// Hard timeout for the whole run.
    pub timeout: Duration,
    /// Time between SIGTERM and SIGKILL.
    pub kill_grace: Duration,
    /// Bytes kept per stream; more is counted but dropped.
    pub capture_max: usize,
    /// Bytes of a stream held in memory; a longer stream goes to an unlinked temp file as it
    /// arrives, so memory stays bounded whatever `capture_max` is.
    pub memory_max: usize,
}

/// How the run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Exited with this status.
    Exited(i32),
    /// Killed by this signal (not by us).
    Signaled(i32),
    /// Our timeout fired; the group was killed.
    TimedOut,
    /// The request was cancelled; the group was killed.
    Cancelled,
}

/// One stream as kept (at most `capture_max` bytes).
#[derive(Debug)]
pub enum Captured {
    /// At most `memory_max` bytes, in memory.
    Memory(Vec<u8>),
    /// More than `memory_max`: in an unlinked temp file (gone with its handle), positioned at
    /// its start.
    Spilled {
        /// The file.
        file: std::fs::File,
        /// Bytes in it.
        len: u64,
    },
}

impl Captured {
    /// Bytes kept.
    pub fn len(&self) -> u64 {
        match self {
            Captured::Memory(b) => b.len() as u64,
            Captured::Spilled { len, .. } => *len,
        }
    }

    /// Whether nothing was kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes, in memory (test helper and small streams; reads a spilled stream whole).
    pub fn into_bytes(self) -> io::Result<Vec<u8>> {
        match self {
            Captured::Memory(b) => Ok(b),
            Captured::Spilled { mut file, .. } => {
                use std::io::Read;
                let mut b = Vec::new();
                file.read_to_end(&mut b)?;
                Ok(b)
            }
        }
    }
}

/// Captured result of a run.
#[derive(Debug)]
pub struct Outcome {
    /// Captured stdout (at most `capture_max` bytes).
    pub stdout: Captured,
    /// Captured stderr (at most `capture_max` bytes).
    pub stderr: Captured,
    /// Bytes the command wrote to stdout in total.
    pub stdout_total: u64,
    /// Bytes the command wrote to stderr in total.
    pub stderr_total: u64,
    /// How it ended.
    pub ending: Ending,
    /// Whether SIGKILL was needed after the grace period.
    pub kill_escalated: bool,
    /// Whether the command left processes running in its group that had to be terminated.
    pub leftovers_killed: bool,
    /// Wall time.
    pub duration: Duration,
}

impl Outcome {
    /// Whether either stream exceeded the capture cap.
    pub fn capture_truncated(&self) -> bool {
        self.stdout_total > self.stdout.len() || self.stderr_total > self.stderr.len()
    }
}

/// A stream being captured.
#[derive(Default)]
struct Capture {
    /// What is kept in memory (everything kept, until it passes `memory_max`).
    buf: Vec<u8>,
    /// Everything kept, once it passed `memory_max` (`buf` is then empty).
    file: Option<std::fs::File>,
    /// Bytes kept.
    kept: u64,
    /// Bytes the command wrote.
    total: u64,
    /// A write to the temp file failed: what follows is dropped as over the cap.
    failed: bool,
}

impl Capture {
    /// Keeps `chunk` (already cut to the cap), spilling to a temp file past `memory_max`.
    fn keep(&mut self, chunk: &[u8], memory_max: usize) {
        use std::io::Write;
        if chunk.is_empty() || self.failed {
            return;
        }
        if self.file.is_none() && self.buf.len() + chunk.len() > memory_max {
            match tempfile::tempfile() {
                Ok(mut f) => {
                    if f.write_all(&self.buf).is_err() {
                        self.failed = true;
                        return;
                    }
                    self.buf = Vec::new();
                    self.file = Some(f);
                }
                Err(_) => {
                    self.failed = true;
                    return;
                }
            }
        }
        match &mut self.file {
            Some(f) => {
                if f.write_all(chunk).is_err() {
                    self.failed = true;
                    return;
                }
            }
            None => self.buf.extend_from_slice(chunk),
        }
        self.kept += chunk.len() as u64;
    }

    /// What was kept.
    fn take(&mut self) -> Captured {
        use std::io::Seek;
        match self.file.take() {
            Some(mut f) => match f.rewind() {
                Ok(()) => Captured::Spilled {
                    file: f,
                    len: self.kept,
                },
                Err(_) => Captured::Memory(Vec::new()),
            },
            None => Captured::Memory(std::mem::take(&mut self.buf)),
        }
    }
}

/// The binary that re-executes as the [`shepherd`], once the binary has said so.
static SHEPHERD: OnceLock<PathBuf> = OnceLock::new();

/// Runs every later command under a [`shepherd`]: `exe` is a binary whose `main` hands
/// `exe __shepherd ...` to [`shepherd::main`] (the server passes `/proc/self/exe`). Without it
/// (tests and programs that embed the library), a command is run directly, and a descendant
/// orphaned out of its session before the kill is not found.
pub fn use_shepherd(exe: PathBuf) {
    let _ = SHEPHERD.set(exe);
}

/// Called with the newest complete output lines, for progress messages.
pub type OnOutput = Arc<dyn Fn(&str) + Send + Sync>;

/// Runs `spec` to completion, timeout or cancellation.
pub async fn run(
    spec: Spec,
    cancel: &CancellationToken,
    on_output: Option<OnOutput>,
) -> io::Result<Outcome> {
    let start = Instant::now();
    // SAFETY: `spec`, which owns the directory handle, lives until `run` returns, after the
    // spawn below.
    let mut cmd = unsafe { command(&spec) };
    let mut child = cmd.spawn()?;
    let pgid = child.id().expect("a just-spawned child has a pid") as i32;
    // If this future is dropped mid-run (an HTTP client went away), the group still gets the tree
    // kill; `kill_on_drop` alone would reach only the leader.
    let mut guard = GroupGuard {
        pgid,
        grace: spec.kill_grace,
        armed: true,
    };
    let out = Arc::new(Mutex::new(Capture::default()));
    let err = Arc::new(Mutex::new(Capture::default()));
    let readers = [
        tokio::spawn(pump(
            child.stdout.take().expect("piped"),
            out.clone(),
            (spec.capture_max, spec.memory_max),
            on_output.clone(),
        )),
        tokio::spawn(pump(
            child.stderr.take().expect("piped"),
            err.clone(),
            (spec.capture_max, spec.memory_max),
            on_output,
        )),
    ];
    let deadline = tokio::time::sleep(spec.timeout);
    tokio::pin!(deadline);

    let (ending, kill_escalated) = tokio::select! {
        status = child.wait() => {
            let status = status?;
            use std::os::unix::process::ExitStatusExt;
            let ending = match (status.code(), status.signal()) {
                (Some(c), _) => Ending::Exited(c),
                (None, Some(s)) => Ending::Signaled(s),
                _ => Ending::Exited(-1),
            };
            (ending, false)
        }
        _ = &mut deadline => (Ending::TimedOut, kill_group(&mut child, pgid, spec.kill_grace).await),
        _ = cancel.cancelled() => (Ending::Cancelled, kill_group(&mut child, pgid, spec.kill_grace).await),
    };
    // The leader is reaped; an empty group is done with, and its id may be reused: disarm.
    if !group_alive(pgid) {
        guard.armed = false;
    }
    // Background children may keep the pipes open after the leader exits: drain briefly, then stop.
    // Whatever the command left running in its group is then terminated, so no call leaves
    // orphans behind (a command that wants a daemon detaches it with `setsid`).
    let drain = if matches!(ending, Ending::Exited(_) | Ending::Signaled(_)) {
        Duration::from_millis(250)
    } else {
        Duration::from_millis(100)
    };
    drain_readers(readers, drain).await;
    let leftovers_killed =
        matches!(ending, Ending::Exited(_) | Ending::Signaled(_)) && group_alive(pgid);
    let kill_escalated = if leftovers_killed {
        terminate_group(pgid, spec.kill_grace, || true).await || kill_escalated
    } else {
        kill_escalated
    };
    guard.armed = false;
    let take = |c: &Arc<Mutex<Capture>>| {
        let mut c = c.locked();
        (c.take(), c.total)
    };
    let (stdout, stdout_total) = take(&out);
    let (stderr, stderr_total) = take(&err);
    Ok(Outcome {
        stdout,
        stderr,
        stdout_total,
        stderr_total,
        ending,
        kill_escalated,
        leftovers_killed,
        duration: start.elapsed(),
    })
}

/// The command that runs `spec` (under the [`shepherd`] when there is one), its output piped,
/// its input closed, in its own session and in its working directory (entered through the
/// handle `spec.cwd_dir` when there is one: a path swapped after the caller's check cannot move
/// the command elsewhere).
///
/// # Safety
///
/// The child enters the directory through the raw descriptor of `spec.cwd_dir`, which the
/// returned command does not own: `spec` must keep that handle open until the command has
/// been spawned.
unsafe fn command(spec: &Spec) -> tokio::process::Command {
    let mut cmd = match SHEPHERD.get() {
        Some(exe) => {
            let mut cmd = tokio::process::Command::new(exe);
            cmd.arg(shepherd::ARG).arg(&spec.program);
            cmd
        }
        None => tokio::process::Command::new(&spec.program),
    };
    if spec.cwd_dir.is_none() {
        cmd.current_dir(&spec.cwd);
    }
    cmd.args(&spec.args)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    // Its own session (and so its own process group, of the same id): a descendant that moves
    // to another group (`set -m`, `setpgid`) stays in the session, and is found by it.
    // SAFETY: setsid(2) is async-signal-safe and touches no memory of the parent.
    let dir_fd = spec.cwd_dir.as_ref().map(std::os::fd::AsRawFd::as_raw_fd);
    // SAFETY: fchdir(2) is async-signal-safe; the handle stays open in the parent until spawn
    // returns (the caller's promise), so the child's copy is valid until exec closes it
    // (CLOEXEC).
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            if let Some(fd) = dir_fd
                && libc::fchdir(fd) < 0
            {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd
}

/// Waits up to `drain` for each output reader to reach the end of its pipe (background children
/// may keep the pipes open after the leader exits), then stops it.
async fn drain_readers(readers: [tokio::task::JoinHandle<()>; 2], drain: Duration) {
    for r in readers {
        let abort = r.abort_handle();
        if tokio::time::timeout(drain, r).await.is_err() {
            abort.abort();
        }
    }
}

/// Tree-kills a command's process group when [`run`] is dropped before the group was dealt with:
/// [`terminate_group`] on the runtime (SIGTERM, grace, SIGKILL), or SIGKILL at once without one.
struct GroupGuard {
    /// The group to kill.
    pgid: i32,
    /// Time between SIGTERM and SIGKILL.
    grace: Duration,
    /// Cleared once `run` has ended or killed the group itself.
    armed: bool,
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let (pgid, grace) = (self.pgid, self.grace);
        // The leader got `kill_on_drop`; tokio reaps it, so only the rest of the group counts.
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                rt.spawn(terminate_tree(pgid, grace, || true));
            }
            Err(_) => {
                signal_group(pgid, libc::SIGKILL);
                for pid in tree_members(pgid) {
                    // SAFETY: kill(2) on a pid; no memory is involved.
                    unsafe {
                        libc::kill(pid, libc::SIGKILL);
                    }
                }
            }
        }
    }
}

/// Reads a stream into `cap` up to `max` bytes (held in memory up to `memory_max`, in a temp
/// file beyond), counting the rest, reporting newest lines.
async fn pump(
    mut stream: impl AsyncRead + Unpin,
    cap: Arc<Mutex<Capture>>,
    (max, memory_max): (usize, usize),
    on_output: Option<OnOutput>,
) {
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        {
            let mut c = cap.locked();
            c.total += n as u64;
            let room = (max as u64).saturating_sub(c.kept);
            let keep = room.min(n as u64) as usize;
            c.keep(&chunk[..keep], memory_max);
        }
        if let Some(f) = &on_output {
            let text = String::from_utf8_lossy(&chunk[..n]);
            let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            let tail = lines[lines.len().saturating_sub(3)..].join("\n");
            if !tail.is_empty() {
                f(&tail);
            }
        }
    }
}

/// SIGTERM to the command's whole tree ([`tree_members`]: its group, its session, and every
/// descendant of those), wait up to `grace` for it to empty, then SIGKILL whatever is left, again
/// until nothing is (a member may fork while it dies). Returns whether SIGKILL was needed.
async fn kill_group(child: &mut tokio::process::Child, pgid: i32, grace: Duration) -> bool {
    let mut leader_reaped = false;
    let reaped = move || {
        if !leader_reaped {
            leader_reaped = matches!(child.try_wait(), Ok(Some(_)));
        }
        leader_reaped
    };
    terminate_tree(pgid, grace, reaped).await
}

/// [`terminate_group`] for a command run in its own session `leader`: every member of the tree
/// gets the signals, not only those still in the group.
async fn terminate_tree(
    leader: i32,
    grace: Duration,
    mut reap_leader: impl FnMut() -> bool,
) -> bool {
    // Every member ever seen stays a target: once its parent dies, an orphan that left the
    // session is reparented and no scan would find it again.
    let mut known: std::collections::HashSet<i32> = std::collections::HashSet::new();
    let mut signal_all = |sig: i32| {
        // Scanned before signalling: a parent killed first would orphan its children out of
        // the tree before they are seen.
        known.extend(tree_members(leader));
        known.retain(|&pid| pid_alive(pid));
        signal_group(leader, sig);
        for &pid in known.iter() {
            // SAFETY: kill(2) on a pid; no memory is involved.
            unsafe {
                libc::kill(pid, sig);
            }
        }
        known.is_empty()
    };
    signal_all(libc::SIGTERM);
    signal_all(libc::SIGCONT);
    let deadline = Instant::now() + grace;
    loop {
        if reap_leader() && signal_all(0) {
            return false;
        }
        if Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    for _ in 0..200 {
        if signal_all(libc::SIGKILL) && reap_leader() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    true
}

/// The running processes of the tree of a command that leads session and group `leader`: those
/// in its group or its session, and every descendant of them (a child that called `setsid` is
/// still found through its parent). Zombies do not count. One pass over `/proc`.
pub fn tree_members(leader: i32) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    // (pid, ppid, pgrp, session, alive)
    let procs: Vec<(i32, i32, i32, i32, bool)> = dir
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<i32>().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // `pid (comm) state ppid pgrp session ...`
            let (_, rest) = stat.rsplit_once(") ")?;
            let mut f = rest.split(' ');
            let state = f.next()?;
            let ppid = f.next()?.parse().ok()?;
            let pgrp = f.next()?.parse().ok()?;
            let session = f.next()?.parse().ok()?;
            Some((pid, ppid, pgrp, session, state != "Z" && state != "X"))
        })
        .collect();
    let mut member: std::collections::HashSet<i32> = procs
        .iter()
        .filter(|p| p.0 == leader || p.2 == leader || p.3 == leader)
        .map(|p| p.0)
        .collect();
    loop {
        let before = member.len();
        for p in &procs {
            if member.contains(&p.1) {
                member.insert(p.0);
            }
        }
        if member.len() == before {
            break;
        }
    }
    procs
        .iter()
        .filter(|p| p.4 && member.contains(&p.0))
        .map(|p| p.0)
        .collect()
}

/// SIGTERM (and SIGCONT, so a stopped member can act on it) to group `pgid`, wait up to `grace`
/// until `reap_leader` reports the leader reaped and the group is empty, then SIGKILL and wait
/// (bounded) until the kernel has torn the group down. `reap_leader` reaps the leader if it is our
/// child (a zombie still counts as a group member) and says whether it is gone; pass `|| true` for
/// a group whose leader was already reaped. Returns whether SIGKILL was needed.
pub async fn terminate_group(
    pgid: i32,
    grace: Duration,
    mut reap_leader: impl FnMut() -> bool,
) -> bool {
    signal_group(pgid, libc::SIGTERM);
    signal_group(pgid, libc::SIGCONT);
    let deadline = Instant::now() + grace;
    loop {
        if reap_leader() && !group_alive(pgid) {
            return false;
        }
        if Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    signal_group(pgid, libc::SIGKILL);
    for _ in 0..200 {
        if reap_leader() && !group_alive(pgid) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    true
}

/// Sends `sig` to every process of group `pgid`; a vanished group is not an error.
pub fn signal_group(pgid: i32, sig: i32) {
    // SAFETY: kill(2) with a negative pid addresses a process group; no memory is involved.
    unsafe {
        libc::kill(-pgid, sig);
    }
}

/// Whether process `pid` is running (a zombie, dead but not yet reaped by its parent, is not).
pub fn pid_alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name: `pid (comm) S ...`.
        Ok(stat) => stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.chars().next())
            .is_some_and(|state| state != 'Z' && state != 'X'),
        Err(_) => false,
    }
}

/// Whether any running process is left in group `pgid`. Zombies do not count: orphans killed by
/// our signal are reparented to PID 1, which may take a while to reap them, and waiting for that
/// would turn every SIGTERM into a needless SIGKILL after the full grace period.
pub fn group_alive(pgid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence and permission.
    if unsafe { libc::kill(-pgid, 0) } != 0 {
        return false;
    }
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return true;
    };
    dir.filter_map(Result::ok).any(|entry| {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            return false;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        // `pid (comm) state ppid pgrp ...`
        let Some((_, rest)) = stat.rsplit_once(") ") else {
            return false;
        };
        let mut fields = rest.split(' ');
        let state = fields.next().unwrap_or("Z");
        let pgrp = fields.nth(1).and_then(|g| g.parse::<i32>().ok());
        pgrp == Some(pgid) && state != "Z" && state != "X"
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(cmd: &str, timeout_ms: u64, cap: usize) -> Spec {
        Spec {
            cwd_dir: None,
            program: "bash".into(),
            args: vec!["-c".into(), cmd.into()],
            cwd: std::env::temp_dir(),
            env: vec![],
            timeout: Duration::from_millis(timeout_ms),
            kill_grace: Duration::from_millis(300),
            capture_max: cap,
            memory_max: 512,
        }
    }

    #[tokio::test]
    async fn captures_and_caps() {
        let o = run(
            spec("echo hi; echo err >&2; exit 3", 5000, 1024),
            &CancellationToken::new(),
            None,
        )
        .await
        .unwrap();
        assert_eq!(o.ending, Ending::Exited(3));
        assert_eq!(
            (
                o.stdout.into_bytes().unwrap(),
                o.stderr.into_bytes().unwrap()
            ),
            (b"hi\n".to_vec(), b"err\n".to_vec())
        );
        let o = run(
            spec("head -c 100000 /dev/zero", 5000, 1000),
            &CancellationToken::new(),
            None,
        )
        .await
        .unwrap();
        assert_eq!((o.stdout.len(), o.stdout_total), (1000, 100_000));
        assert!(o.capture_truncated());
        // Past `memory_max` (512 here) the stream is in a temp file, exactly.
        assert!(matches!(o.stdout, Captured::Spilled { .. }));
        assert_eq!(o.stdout.into_bytes().unwrap(), vec![0u8; 1000]);
        let o = run(
            spec("seq 1 300", 5000, 1 << 20),
            &CancellationToken::new(),
            None,
        )
        .await
        .unwrap();
        let expected: String = (1..=300).map(|i| format!("{i}\n")).collect();
        assert!(!o.capture_truncated());
        assert_eq!(o.stdout.into_bytes().unwrap(), expected.into_bytes());
    }

    #[tokio::test]
    async fn timeout_kills_children_that_left_the_group_or_the_session() {
        let o = run(
            spec(
                // The command waits until the setsid child has written its pid: a loaded
                // machine can take longer than the timeout to start it.
                "set -m; (trap '' TERM; sleep 30) & echo $!; set +m; f=$(mktemp -u); \
                 setsid bash -c \"echo \\$\\$; : > $f; trap '' TERM; sleep 30\" & \
                 while [ ! -e $f ]; do sleep 0.01; done; rm -f $f; sleep 30",
                3000,
                1024,
            ),
            &CancellationToken::new(),
            None,
        )
        .await
        .unwrap();
        assert_eq!(o.ending, Ending::TimedOut);
        let out = String::from_utf8_lossy(&o.stdout.into_bytes().unwrap()).to_string();
        let pids: Vec<i32> = out.split_whitespace().map(|p| p.parse().unwrap()).collect();
        assert_eq!(pids.len(), 2, "{out}");
        for pid in pids {
            assert!(!pid_alive(pid), "descendant {pid} survived the timeout");
        }
    }

    #[tokio::test]
    async fn timeout_kills_the_whole_group() {
        let o = run(
            spec(
                "trap '' TERM; (trap '' TERM; sleep 30) & echo $! ; sleep 30",
                300,
                1024,
            ),
            &CancellationToken::new(),
            None,
        )
        .await
        .unwrap();
        assert_eq!(o.ending, Ending::TimedOut);
        assert!(o.kill_escalated, "both ignore SIGTERM, SIGKILL must follow");
        let pid: i32 = String::from_utf8_lossy(&o.stdout.into_bytes().unwrap())
            .trim()
            .parse()
            .unwrap();
        assert!(!pid_alive(pid), "background child {pid} survived");
    }

    #[tokio::test]
    async fn cancel_stops_promptly() {
        let token = CancellationToken::new();
        let t = token.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            t.cancel();
        });
        let o = run(spec("sleep 30", 60_000, 1024), &token, None)
            .await
            .unwrap();
        assert_eq!(o.ending, Ending::Cancelled);
        assert!(o.duration < Duration::from_secs(5));
    }
}
