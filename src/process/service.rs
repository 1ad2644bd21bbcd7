//! A long-lived child that speaks over its stdin and stdout (an upstream MCP server behind
//! `mcp-pruner proxy`), started the way `bash` commands are: in its own session and process group,
//! under the [`super::shepherd`] when the binary enabled it, so that the child and everything it
//! starts die with the proxy. Owns starting and stopping the child; never reads or writes its
//! pipes (the caller does) and never interprets what it says.

use std::io;
use std::time::Duration;

/// A running child with its pipes taken by the caller.
pub struct Service {
    /// The child (its leader: the shepherd or the program).
    pub child: tokio::process::Child,
    /// Its process group (and session) id.
    pub pgid: i32,
    /// Time between SIGTERM and SIGKILL when it is stopped.
    grace: Duration,
    /// Cleared once the group was stopped.
    armed: bool,
}

/// Starts `program` with `args` in a session of its own, stdin and stdout piped, stderr
/// inherited (an upstream's logs go where the proxy's go, never to its stdout).
pub fn spawn(
    program: &str,
    args: &[String],
    env: &[(String, String)],
    grace: Duration,
) -> io::Result<Service> {
    let mut cmd = match super::SHEPHERD.get() {
        Some(exe) => {
            let mut cmd = tokio::process::Command::new(exe);
            cmd.arg(super::shepherd::ARG).arg(program);
            cmd
        }
        None => tokio::process::Command::new(program),
    };
    cmd.args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true);
    // SAFETY: setsid(2) is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.spawn()?;
    let pgid = child.id().expect("a just-spawned child has a pid") as i32;
    Ok(Service {
        child,
        pgid,
        grace,
        armed: true,
    })
}

impl Service {
    /// Stops the child and its whole tree: SIGTERM, the grace period, then SIGKILL.
    pub async fn stop(mut self) {
        self.armed = false;
        let child = &mut self.child;
        let mut reaped = false;
        let reap = move || {
            if !reaped {
                reaped = matches!(child.try_wait(), Ok(Some(_)));
            }
            reaped
        };
        super::terminate_tree(self.pgid, self.grace, reap).await;
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        // Dropped without `stop` (the proxy is going away): no grace, nothing left behind.
        super::signal_group(self.pgid, libc::SIGKILL);
        for pid in super::tree_members(self.pgid) {
            // SAFETY: kill(2) on a pid; no memory is involved.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
}
