//! The one signal handling module of the front end: SIGINT, SIGTERM and
//! SIGHUP each become a stop request ([`Signals`]) that a command polls
//! (bench, md, sweep, tune, campaign), so a run stops cleanly, keeps what
//! was measured and removes its scratch files whichever signal came.

use anyhow::{Context, Result};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Which signal asked the run to stop (0 = none).
#[derive(Debug, Clone)]
pub struct Signals(Arc<AtomicUsize>);

impl Signals {
    /// Route SIGINT, SIGTERM and SIGHUP to a flag the watcher polls.
    pub fn install() -> Result<Signals> {
        let flag = Arc::new(AtomicUsize::new(0));
        for sig in [
            signal_hook::consts::SIGINT,
            signal_hook::consts::SIGTERM,
            signal_hook::consts::SIGHUP,
        ] {
            signal_hook::flag::register_usize(sig, Arc::clone(&flag), sig as usize)
                .context("cannot install the signal handlers")?;
        }
        Ok(Signals(flag))
    }

    /// Whether a stop was requested.
    pub fn requested(&self) -> bool {
        self.0.load(Ordering::Relaxed) != 0
    }

    /// The signal received, if any.
    pub fn received(&self) -> Option<i32> {
        match self.0.load(Ordering::Relaxed) {
            0 => None,
            s => i32::try_from(s).ok(),
        }
    }
}

/// How a signal is named in "interrupted by ..." (the stop reason).
pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        signal_hook::consts::SIGINT => "Ctrl-C (SIGINT)",
        signal_hook::consts::SIGTERM => "SIGTERM",
        signal_hook::consts::SIGHUP => "SIGHUP (terminal closed)",
        _ => "a signal",
    }
}
