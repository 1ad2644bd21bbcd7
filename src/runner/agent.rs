//! The agent child of a run: the user's command, spawned in its own process group with the
//! endpoint variables set (or removed), stdin/stdout/stderr inherited. When the runner owns the
//! terminal's foreground, the agent's group takes it over (so an interactive agent such as
//! `claude` can read the terminal and gets Ctrl-C itself) and the runner takes it back afterwards.
//! Owns the agent process, its group and the terminal hand-over; never logs events and never
//! touches the server.

use crate::process;
use std::io;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

/// A running agent.
pub struct Agent {
    /// The child; kept to reap it and learn its status.
    child: tokio::process::Child,
    /// Its pid, which is also its process group id.
    pub pid: u32,
    /// Set when the agent's group was given the terminal's foreground: the runner's own group,
    /// to give it back.
    foreground: Option<libc::pid_t>,
}

/// The environment the agent gets on top of the runner's.
#[derive(Debug, Default)]
pub struct AgentEnv {
    /// Variables to set.
    pub set: Vec<(String, String)>,
    /// Variables to remove (inherited values from an enclosing run would mislead the agent).
    pub remove: Vec<&'static str>,
}

impl Agent {
    /// Spawns `command` (program and arguments) with the runner's stdin, stdout and stderr.
    pub fn spawn(command: &[String], env: &AgentEnv) -> io::Result<Agent> {
        let (program, args) = command
            .split_first()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no agent command"))?;
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(args)
            .stdin(Stdio::inherit())
            .stdout(Stdio::inherit())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        for name in &env.remove {
            cmd.env_remove(name);
        }
        cmd.envs(env.set.iter().map(|(k, v)| (k, v)));
        let foreground = terminal_foreground();
        let take_terminal = foreground.is_some();
        // SAFETY: only async-signal-safe calls (setpgid, sigprocmask, tcsetpgrp, getpid) on
        // stack data between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setpgid(0, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
                if take_terminal {
                    with_sigttou_blocked(|| libc::tcsetpgrp(libc::STDIN_FILENO, libc::getpid()));
                }
                Ok(())
            });
        }
        let child = match cmd.spawn() {
            Ok(child) => child,
            Err(e) => {
                // The child may have taken the foreground before its exec failed.
                if let Some(runner_group) = foreground {
                    give_terminal_back(runner_group);
                }
                return Err(e);
            }
        };
        let pid = child.id().expect("a just-spawned child has a pid");
        Ok(Agent {
            child,
            pid,
            foreground,
        })
    }

    /// Waits for the agent to exit (cancel safe: usable in `select!`).
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        self.child.wait().await
    }

    /// Sends `sig` to the agent's whole group, as a terminal would.
    pub fn signal(&self, sig: i32) {
        process::signal_group(self.pid as i32, sig);
    }

    /// After the agent exited: gives the terminal back to the runner, then terminates whatever is
    /// left in the agent's group (background jobs it started). Returns `Some(kill_escalated)` when
    /// anything was left.
    pub async fn clean_up(&mut self, grace: Duration) -> Option<bool> {
        if let Some(runner_group) = self.foreground.take() {
            give_terminal_back(runner_group);
        }
        let pgid = self.pid as i32;
        // Members that already died are zombies of the runner, not leftovers.
        super::reap::reap_group(pgid);
        if !process::group_alive(pgid) {
            return None;
        }
        // The leader was reaped by `wait`; what is left are orphans re-parented to the runner.
        Some(
            process::terminate_group(pgid, grace, || {
                super::reap::reap_group(pgid);
                true
            })
            .await,
        )
    }
}

/// The runner's process group when stdin is a terminal whose foreground group it is; `None` when
/// there is no terminal to hand over.
fn terminal_foreground() -> Option<libc::pid_t> {
    // SAFETY: isatty, tcgetpgrp and getpgrp only read process and terminal state.
    unsafe {
        let own = libc::getpgrp();
        (libc::isatty(libc::STDIN_FILENO) == 1 && libc::tcgetpgrp(libc::STDIN_FILENO) == own)
            .then_some(own)
    }
}

/// Makes `runner_group` the terminal's foreground group again.
fn give_terminal_back(runner_group: libc::pid_t) {
    // SAFETY: a plain syscall on the runner's stdin; SIGTTOU is blocked because the runner is a
    // background group at this point.
    unsafe {
        with_sigttou_blocked(|| libc::tcsetpgrp(libc::STDIN_FILENO, runner_group));
    }
}

/// Runs `f` with SIGTTOU blocked in the calling thread: `tcsetpgrp` from a background group would
/// otherwise stop the caller. Async-signal-safe.
///
/// # Safety
/// `f` must itself be async-signal-safe when called between fork and exec.
unsafe fn with_sigttou_blocked(f: impl FnOnce() -> libc::c_int) -> libc::c_int {
    // SAFETY: sigset_t is plain data; the calls only change this thread's signal mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTTOU);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
        let r = f();
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        r
    }
}
