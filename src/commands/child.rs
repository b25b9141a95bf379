//! Child processes that must not outlive storlab: the shell commands of a
//! campaign (setup and teardown, each in a process group of its own, so a
//! stop or a timeout ends everything the command started) and the child
//! `storlab` runs of `campaign` and `tune` (which die with their parent:
//! `PR_SET_PDEATHSIG`, SIGTERM, so a `kill -9` of the parent does not leave
//! a benchmark running; the child's own signal handling removes its
//! scratch files).

use std::os::unix::process::CommandExt;
use std::process::Command;

/// Start `c` as the leader of a new process group (its pid is the group
/// id), so [`signal_group`] reaches every process it starts.
pub fn own_group(c: &mut Command) -> &mut Command {
    c.process_group(0)
}

/// Send `sig` to the process group `pgid` (a child started with
/// [`own_group`]: the group id is its pid).
pub fn signal_group(pgid: u32, sig: i32) {
    if let Ok(pgid) = i32::try_from(pgid)
        && pgid > 1
    {
        // A negative pid names the group, which exists while our child (its
        // leader) is unreaped or any process it started lives; it is ours
        // alone. A group already gone is no error here.
        let _ = storlab_host::os::kill(-pgid, sig);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Whether `pid` runs (a zombie no longer does: a container's init
    /// may be slow to reap it).
    pub fn running(pid: &str) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit_once(')')
                .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X']))
        })
    }

    /// A shell that starts a background `sleep`: signalling the group ends
    /// both (signalling the shell alone, as before, left the sleep).
    #[test]
    fn signalling_the_group_ends_what_the_command_started() {
        use std::io::BufRead;
        let mut c = Command::new("sh");
        c.args(["-c", "sleep 1000 & echo $!; wait"])
            .stdout(std::process::Stdio::piped());
        let mut child = own_group(storlab_host::os::die_with_parent(&mut c))
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let sleep = line.trim().to_string();
        assert!(running(&sleep), "{sleep}");
        signal_group(child.id(), libc::SIGTERM);
        let _ = child.wait();
        let t0 = Instant::now();
        while running(&sleep) {
            assert!(t0.elapsed() < Duration::from_secs(10), "the sleep lived on");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
