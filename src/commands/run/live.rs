//! While a run goes on: the watcher turns a signal ([`Signals`]: SIGINT,
//! SIGTERM and SIGHUP each become a stop request that keeps what was
//! measured and removes scratch files) into a stop of the run and draws the
//! live progress line on a terminal (indicatif), including layout.

use crate::commands::signals::{Signals, signal_name};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use storlab_bench::{Control, ProgressSnapshot};
use storlab_print::progress::Rate;

/// What a watcher watches: a run it can ask to stop, and the progress line
/// it draws (bench's phases, md's items).
pub trait Watched: Send + 'static {
    /// Whether the run was already asked to stop.
    fn stopping(&self) -> bool;
    /// Ask the run to stop, saying why.
    fn request_stop(&self, why: &str);
    /// Update the progress line (called every half second).
    fn draw(&mut self, bar: &ProgressBar);
}

/// The watcher thread: turns signals into stop requests and draws progress.
pub struct Live {
    done: Arc<std::sync::atomic::AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Live {
    /// Start watching a bench run's `control`; progress is drawn only on
    /// a terminal and unless `quiet`.
    pub fn start(control: Arc<Control>, signals: Signals, quiet: bool, names: Vec<String>) -> Live {
        let bench = Bench {
            control,
            names,
            last: None,
        };
        Live::watch(bench, signals, quiet)
    }

    /// Start watching any run (see [`Live::start`]).
    pub fn watch(run: impl Watched, signals: Signals, quiet: bool) -> Live {
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let show = !quiet && std::io::stderr().is_terminal();
        let d = Arc::clone(&done);
        let handle = std::thread::Builder::new()
            .name("storlab-watch".into())
            .spawn(move || watch(run, &signals, &d, show))
            .ok();
        if handle.is_none() {
            // Without the watcher Ctrl-C cannot stop the run: say so, run on.
            eprintln!(
                "storlab: warning: cannot start the progress/signal thread; Ctrl-C will not stop this run cleanly"
            );
        }
        Live { done, handle }
    }

    /// Stop watching (clears the progress line).
    pub fn stop(mut self) {
        self.done.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn watch(
    mut run: impl Watched,
    signals: &Signals,
    done: &std::sync::atomic::AtomicBool,
    show: bool,
) {
    let bar = if show {
        let b = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
        b.set_style(
            ProgressStyle::with_template("{prefix} [{bar:24}] {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        Some(b)
    } else {
        None
    };
    let mut tick = 0u32;
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
        if let Some(sig) = signals.received()
            && !run.stopping()
        {
            run.request_stop(&format!("interrupted by {}", signal_name(sig)));
        }
        tick += 1;
        if let Some(b) = &bar
            && tick % 5 == 0
        {
            run.draw(b);
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
}

/// A bench run watched: its phases' names and the last snapshot's rate.
struct Bench {
    control: Arc<Control>,
    names: Vec<String>,
    last: Option<Rate>,
}

impl Watched for Bench {
    fn stopping(&self) -> bool {
        self.control.stop.load(Ordering::Relaxed)
    }
    fn request_stop(&self, why: &str) {
        self.control.request_stop(why);
    }
    fn draw(&mut self, bar: &ProgressBar) {
        draw(bar, &self.control.snapshot(), &mut self.last, &self.names);
    }
}

fn draw(bar: &ProgressBar, s: &ProgressSnapshot, last: &mut Option<Rate>, names: &[String]) {
    let line = storlab_print::progress::bench_line(s, last, names, Instant::now());
    bar.set_prefix(line.prefix);
    if let Some((length, position)) = line.bar {
        bar.set_length(length);
        bar.set_position(position);
    }
    bar.set_message(line.message);
}
