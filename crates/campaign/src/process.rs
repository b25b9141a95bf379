//! A campaign's child processes, which must not outlive storlab: the
//! shell commands of a cell (setup and teardown, each in a process group
//! of its own, so a stop or a timeout ends everything the command
//! started) and the child `storlab` runs (which die with their parent:
//! `PR_SET_PDEATHSIG`, SIGTERM, so a `kill -9` of the campaign does not
//! leave a benchmark running; the child's own signal handling removes its
//! scratch files). Every command's output goes to the cell's log under a
//! header line. A stop request is a `&dyn Fn() -> bool` (the front end's
//! signals).

use crate::spec::{Cell, matrix_env};
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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

/// What went wrong with one command.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CmdError {
    /// It could not start or exited non-zero.
    #[error("{0}")]
    Failed(String),
    /// A signal asked the campaign to stop while it ran.
    #[error("interrupted")]
    Interrupted,
    /// It ran past its time limit and was stopped.
    #[error(
        "still running after {} s (teardown_timeout), so it and every process it started \
         were stopped",
        .0.as_secs()
    )]
    TimedOut(Duration),
}

/// How the teardown of a cell went.
#[derive(Debug, Default)]
pub struct Teardown {
    /// The first command that failed, and why.
    pub failed: Option<String>,
    /// A command ran past the timeout (the rest were not run).
    pub hung: bool,
}

/// The cell's teardown commands, each bounded by `timeout`; run also after
/// a stop request (they are not interrupted by one).
pub fn teardown(cell: &Cell, log: &mut std::fs::File, timeout: Duration) -> Teardown {
    let mut end = Teardown::default();
    for cmd in &cell.teardown {
        if let Err(e) = shell(cmd, cell, log, &|| false, Some(timeout)) {
            let hung = matches!(e, CmdError::TimedOut(_));
            let msg = format!("teardown `{cmd}`: {e}");
            if hung {
                // The hang is the news, not an earlier failure.
                end.failed = Some(msg);
                end.hung = true;
                break;
            }
            end.failed.get_or_insert(msg);
        }
    }
    end
}

/// A setup or teardown command: `sh -c`, in a process group of its own
/// (a stop or a timeout ends everything it started), dying with storlab,
/// the cell's matrix values, name and target in its environment.
pub fn shell(
    cmd: &str,
    cell: &Cell,
    log: &mut std::fs::File,
    stop: &dyn Fn() -> bool,
    timeout: Option<Duration>,
) -> Result<(), CmdError> {
    let mut c = Command::new("sh");
    c.args(["-c", cmd])
        .env("STORLAB_CELL", &cell.name)
        .env("STORLAB_TARGET", &cell.target);
    for (k, v) in &cell.matrix {
        c.env(matrix_env(k), v);
    }
    own_group(storlab_host::os::die_with_parent(&mut c));
    // The values the command reads from its environment, for the reader.
    let env: Vec<String> = cell
        .matrix
        .iter()
        .map(|(k, v)| format!("{}={v:?}", matrix_env(k)))
        .collect();
    let header = if env.is_empty() {
        format!("$ {cmd}")
    } else {
        format!("$ {cmd}   (with {})", env.join(" "))
    };
    run_logged(c, &header, log, stop, Group::Own, timeout)
}

/// A child `storlab` with `args`, dying with the campaign (a kill -9 of
/// the campaign ends its storlab child too), its output in `log`.
pub fn storlab(
    exe: &std::path::Path,
    args: &[String],
    log: &mut std::fs::File,
    stop: &dyn Fn() -> bool,
) -> Result<(), CmdError> {
    let line = format!("storlab {}", args.join(" "));
    let mut c = Command::new(exe);
    storlab_host::os::die_with_parent(&mut c).args(args);
    run_logged(c, &line, log, stop, Group::No, None)
}

/// Whether a child leads a process group of its own.
#[derive(Clone, Copy, PartialEq)]
enum Group {
    /// Signals go to the whole group (setup and teardown commands).
    Own,
    /// Signals go to the child (a storlab run; it stops its workers).
    No,
}

/// How long a stopped command has after SIGTERM before SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(10);

/// Run `c` with its output appended to `log` under a header line; a stop
/// request is passed on to it (SIGTERM; SIGKILL if it is still there
/// [`KILL_GRACE`] later) and waited for; so is running past `timeout`.
fn run_logged(
    mut c: Command,
    header: &str,
    log: &mut std::fs::File,
    stop: &dyn Fn() -> bool,
    group: Group,
    timeout: Option<Duration>,
) -> Result<(), CmdError> {
    let when = storlab_types::time::now_rfc3339();
    let _ = writeln!(log, "# {when} {header}");
    let _ = log.flush();
    let out = log
        .try_clone()
        .map_err(|e| CmdError::Failed(format!("log: {e}")))?;
    let err = log
        .try_clone()
        .map_err(|e| CmdError::Failed(format!("log: {e}")))?;
    let mut running = c
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .spawn()
        .map_err(|e| CmdError::Failed(format!("cannot start: {e}")))?;
    let started = Instant::now();
    let pid = running.id();
    let signal = |sig: i32| match group {
        Group::Own => signal_group(pid, sig),
        Group::No => terminate(pid, sig),
    };
    let mut signalled: Option<Instant> = None;
    let mut timed_out = false;
    let status = loop {
        match running.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) => {}
            Err(e) => return Err(CmdError::Failed(format!("waiting: {e}"))),
        }
        if signalled.is_none() {
            if stop() {
                signalled = Some(Instant::now());
            } else if timeout.is_some_and(|t| started.elapsed() >= t) {
                timed_out = true;
                signalled = Some(Instant::now());
            }
            if signalled.is_some() {
                // A terminal's Ctrl-C reaches a storlab child too; a
                // SIGTERM sent to the campaign alone is passed on, and a
                // setup command's group is not in the terminal's.
                signal(libc::SIGTERM);
            }
        } else if signalled.is_some_and(|t| t.elapsed() >= KILL_GRACE) {
            signal(libc::SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    if group == Group::Own && signalled.is_some() {
        // What the command started and left behind goes with it.
        signal_group(pid, libc::SIGKILL);
    }
    let _ = writeln!(log, "# exit {status}");
    if let (true, Some(t)) = (timed_out, timeout) {
        let _ = writeln!(log, "# stopped: still running after {} s", t.as_secs());
        return Err(CmdError::TimedOut(t));
    }
    if stop() {
        return Err(CmdError::Interrupted);
    }
    if status.success() {
        Ok(())
    } else {
        Err(CmdError::Failed(format!(
            "exited with {status} (see the log)"
        )))
    }
}

/// Send `sig` to a child process (SIGTERM: it stops as after Ctrl-C,
/// keeping its results).
fn terminate(pid: u32, sig: i32) {
    if let Ok(pid) = i32::try_from(pid) {
        // `pid` is our own child, not yet reaped (try_wait said it was
        // running), so the id cannot be reused.
        let _ = storlab_host::os::kill(pid, sig);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    fn cell() -> Cell {
        Cell {
            name: "ext4".into(),
            matrix: [("fs".to_string(), "ext4".to_string())].into(),
            tags: Default::default(),
            setup: Vec::new(),
            teardown: Vec::new(),
            target: "/tmp/x".into(),
            run: Vec::new(),
        }
    }

    /// A setup command sees the cell in its environment, its output and
    /// exit go to the log; a failure names its exit status.
    #[test]
    fn a_command_reads_the_cell_from_its_environment_and_logs_its_output() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("log");
        let mut log = std::fs::File::create(&path).unwrap();
        let cmd = "echo \"$STORLAB_CELL $STORLAB_MATRIX_FS $STORLAB_TARGET\"";
        shell(cmd, &cell(), &mut log, &|| false, None).unwrap();
        let e = shell("exit 3", &cell(), &mut log, &|| false, None).unwrap_err();
        assert!(
            e.to_string().starts_with("exited with exit status: 3"),
            "{e}"
        );
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("(with STORLAB_MATRIX_FS=\"ext4\")"), "{text}");
        assert!(
            text.contains("\next4 ext4 /tmp/x\n# exit exit status: 0\n"),
            "{text}"
        );
    }

    /// A teardown command past its time is stopped, with what it started,
    /// and the rest are not run; a stop request interrupts a setup command.
    #[test]
    fn a_hung_teardown_is_stopped_and_a_stop_interrupts_a_setup() {
        let d = tempfile::tempdir().unwrap();
        let mut log = std::fs::File::create(d.path().join("log")).unwrap();
        let mut c = cell();
        c.teardown = vec!["false".into(), "sleep 1000".into(), "touch never".into()];
        let t0 = Instant::now();
        let end = teardown(&c, &mut log, Duration::from_millis(300));
        assert!(t0.elapsed() < Duration::from_secs(8));
        assert!(end.hung);
        assert_eq!(
            end.failed.as_deref(),
            Some(
                "teardown `sleep 1000`: still running after 0 s (teardown_timeout), so it and \
                 every process it started were stopped"
            )
        );
        let e = shell("sleep 1000", &c, &mut log, &|| true, None).unwrap_err();
        assert_eq!(e, CmdError::Interrupted);
    }
}
