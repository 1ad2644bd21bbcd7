//! The last line of defence against leftover processes. Process groups catch most descendants,
//! but not those that moved to a group of their own: the server runs every `bash` tool command in
//! a new group, and an agent may daemonize. On Linux the runner makes itself a child subreaper, so
//! such orphans are re-parented to it instead of to init, and [`sweep`] kills and reaps whatever
//! child it still has once the server and the agent are gone. Owns only that; it must never run
//! while the server or agent child is still to be waited for (it would reap them).

use std::time::Duration;

/// Makes the runner the subreaper of its descendants (Linux; a no-op elsewhere). Not inherited by
/// children. Best effort: on failure orphans go to init as usual.
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER only sets a flag on this process.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1);
    }
}

/// Kills and reaps every remaining child of the runner, repeating while killing one re-parents
/// its own children to the runner (bounded to about a second). Returns the pids killed.
pub async fn sweep() -> Vec<i32> {
    let mut killed = Vec::new();
    for _ in 0..50 {
        let children = children();
        if children.is_empty() {
            break;
        }
        for pid in children {
            // A zombie is already dead (killed with its group): reap it, do not report it.
            let alive = crate::process::pid_alive(pid);
            // SAFETY: kill and waitpid on a pid whose parent is this process: it cannot be
            // recycled before we reap it.
            unsafe {
                if alive {
                    libc::kill(pid, libc::SIGKILL);
                }
                let mut status = 0;
                libc::waitpid(pid, &mut status, libc::WNOHANG);
            }
            if alive && !killed.contains(&pid) {
                killed.push(pid);
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    killed
}

/// Reaps the zombies of group `pgid` that are children of the runner: members that lost their
/// parent and were re-parented to it as the subreaper. A zombie still counts as a group member, so
/// a group is not empty until they are reaped. Call only once the group's leader, if it is a child
/// the runtime waits for, has been reaped (this would take its status otherwise).
pub fn reap_group(pgid: i32) {
    let mut status = 0;
    // SAFETY: waitpid on a process group of our own children, without blocking.
    while unsafe { libc::waitpid(-pgid, &mut status, libc::WNOHANG) } > 0 {}
}

/// Pids whose parent is this process, from `/proc/*/stat` (empty where there is no `/proc`).
fn children() -> Vec<i32> {
    let me = std::process::id() as i32;
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| parent_of(*pid) == Some(me))
        .collect()
}

/// The parent pid in `/proc/PID/stat`: the field after the state, which follows the
/// parenthesised command name (itself free to contain spaces and parentheses).
fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_os = "linux")]
    fn reads_parent_pids() {
        let me = std::process::id() as i32;
        // SAFETY: getppid has no preconditions.
        let parent = unsafe { libc::getppid() };
        assert_eq!(parent_of(me), Some(parent));
        assert_eq!(parent_of(-1), None);
    }
}
