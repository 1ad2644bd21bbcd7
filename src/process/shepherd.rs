//! The shepherd: a small process between the server and a command, so that nothing the command
//! starts can slip out of reach. The server re-executes its own binary as
//! `mcp-pruner __shepherd PROGRAM ARGS...` (in the command's fresh session); the shepherd marks
//! itself a child subreaper (`PR_SET_CHILD_SUBREAPER`), starts the command, and reaps until the
//! command exits, then exits the same way. A descendant orphaned while the command runs (a
//! double-forked `setsid` daemon whose parent already died) is re-parented to the shepherd
//! instead of PID 1, so the server's tree walk from the session leader still finds it on a
//! timeout or cancel. Once the command has *succeeded* the shepherd is gone, and a daemon the
//! command detached on purpose lives on under PID 1. If the server dies while the command runs
//! (killed, crashed), the shepherd learns it (`PR_SET_PDEATHSIG`, checked against its parent
//! pid) and kills the command's whole tree: nothing outlives the server that started it.
//!
//! Owns only this process's own life: never reads or writes the command's output (the output
//! pipes belong to the command and its descendants) and never signals anything.

use std::ffi::OsString;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Set by the parent-death signal; read by the wait loop.
static PARENT_GONE: AtomicBool = AtomicBool::new(false);

extern "C" fn on_parent_death(_: libc::c_int) {
    PARENT_GONE.store(true, Ordering::SeqCst);
}

/// How often the shepherd looks at its parent once the death signal can no longer be relied on.
const PARENT_POLL: Duration = Duration::from_millis(200);

/// The argument that turns the binary into a shepherd (first, before any subcommand).
pub const ARG: &str = "__shepherd";

/// Runs the shepherd with `args` = the command's program and its arguments; never returns.
pub fn main(args: Vec<OsString>) -> ! {
    let Some((program, rest)) = args.split_first() else {
        eprintln!("mcp-pruner {ARG}: expected a program to run");
        std::process::exit(2);
    };
    // SAFETY: getppid has no side effects.
    let server = unsafe { libc::getppid() };
    #[cfg(target_os = "linux")]
    // SAFETY: prctl sets flags on this process; sigaction installs a handler that only stores to
    // an atomic (async-signal-safe). No SA_RESTART: the signal interrupts the wait.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1);
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_parent_death as *const () as usize;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGUSR1, &action, std::ptr::null_mut());
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGUSR1);
    }
    // SAFETY: getppid has no side effects.
    if unsafe { libc::getppid() } != server {
        // The server died before the death signal was armed.
        std::process::exit(137);
    }
    let child = match std::process::Command::new(program).args(rest).spawn() {
        Ok(child) => child,
        Err(e) => {
            eprintln!(
                "mcp-pruner: cannot start {}: {e}",
                program.to_string_lossy()
            );
            std::process::exit(127);
        }
    };
    let pid = child.id() as libc::pid_t;
    // SAFETY: plain syscalls on this process's own descriptors and signal dispositions.
    unsafe {
        // The command and its descendants hold the output pipes; our copies would keep them
        // open after the last of those closed its own.
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            libc::dup2(null, 1);
            libc::dup2(null, 2);
            libc::close(null);
        }
        // The server's SIGTERM round reaches the whole session, the shepherd included: it stays
        // until the command is gone, adopting what the dying tree orphans, and leaves SIGKILL
        // to end it.
        for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT] {
            libc::signal(sig, libc::SIG_IGN);
        }
    }
    // The death signal comes when the *thread* that started us ends, which is the server's
    // death only if our parent changed; after a thread's end no signal will come, so the
    // parent is then polled.
    let mut polling = false;
    loop {
        let mut status = 0;
        let flags = if polling { libc::WNOHANG } else { 0 };
        // SAFETY: waitpid writes only `status`.
        let reaped = unsafe { libc::waitpid(-1, &mut status, flags) };
        if reaped == pid {
            exit_like(status);
        }
        let errno = std::io::Error::last_os_error().raw_os_error();
        if PARENT_GONE.swap(false, Ordering::SeqCst) {
            polling = true;
        }
        if polling {
            // SAFETY: getppid has no side effects.
            if unsafe { libc::getppid() } != server {
                end_tree();
            }
            if reaped <= 0 {
                std::thread::sleep(PARENT_POLL);
            }
            continue;
        }
        if reaped < 0 && errno != Some(libc::EINTR) {
            // No child left at all: the command is gone without our seeing it (cannot happen
            // while it is our child; kept so a bug cannot spin).
            std::process::exit(127);
        }
        // Otherwise an adopted orphan was reaped, or a signal interrupted the wait.
    }
}

/// The server is gone: SIGKILL to every process of the command's tree (its session and every
/// descendant, adopted orphans included), until none is left, then exit.
fn end_tree() -> ! {
    // SAFETY: getpid has no side effects.
    let me = unsafe { libc::getpid() };
    for _ in 0..100 {
        let members: Vec<i32> = super::tree_members(me)
            .into_iter()
            .filter(|&p| p != me)
            .collect();
        if members.is_empty() {
            break;
        }
        for p in members {
            // SAFETY: kill(2) on a pid; no memory is involved.
            unsafe {
                libc::kill(p, libc::SIGKILL);
            }
        }
        // Reap what died (our children and adopted orphans), then look again.
        std::thread::sleep(Duration::from_millis(10));
        // SAFETY: waitpid with WNOHANG writes only `status`.
        while unsafe { libc::waitpid(-1, &mut 0, libc::WNOHANG) } > 0 {}
    }
    std::process::exit(137);
}

/// Ends this process the way the command ended: the same exit code, or the same signal (without
/// a core dump of the shepherd itself).
fn exit_like(status: libc::c_int) -> ! {
    if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        // SAFETY: resetting a disposition, limiting core size and signalling ourselves.
        unsafe {
            let none = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &none);
            libc::signal(sig, libc::SIG_DFL);
            libc::kill(libc::getpid(), sig);
        }
        std::process::exit(128 + sig);
    }
    std::process::exit(libc::WEXITSTATUS(status));
}
