//! fio's run-control options (issue 27), each with fio's algorithm:
//!
//! * `startdelay`: a job starts late; its ramp and runtime start then
//!   ([`JobCtl::start_delay`]).
//! * `exitall` / `exit_what`: when a job ends, fio stops the jobs of its
//!   reporting group (`group`, fio's `groupid`), every running job
//!   (`stonewall`: the phase) or every job (`all`: the later phases too),
//!   as fio's `fio_terminate_threads` ([`JobCtl::done`]).
//! * `flow` / `flow_id` / `flow_sleep`: fio's token flow control
//!   (`flow.c`, `flow_threshold_exceeded`): a job whose share of its flow's
//!   I/Os is above its share of the flow's weight does not issue; it waits
//!   for its I/O in flight and sleeps `flow_sleep` ([`JobCtl::flow_wait`]).
//! * `rate_min` / `rate_iops_min` / `ratecycle`: fio's `check_min_rate`
//!   (`backend.c`): after a 2 s settle period, each `ratecycle` the rate of
//!   each direction since the last check must be at least the minimum, or
//!   the job fails with fio's message ([`JobCtl::check_rate`]).
//! * `latency_target` / `latency_window` / `latency_percentile` /
//!   `latency_run`: fio's search for the highest queue depth whose
//!   latencies meet the target (`io_u.c`, `lat_target_*`), see
//!   [`LatTarget`].
//!
//! The worker holds a [`JobCtl`] only when one of these options is set, so
//! a phase without them pays one `None` test at each hook. What the jobs
//! of a phase share (flows, stopped groups, whether the run ends) is the
//! [`Shared`] part of the run's `Control`, reset at each phase.

use crate::clock::Clock;
use crate::options::{PhaseSpec, SpecError};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use storlab_types::{ExitWhat, PhaseParams, RunControl, parse_duration};

fn err<T>(msg: impl Into<String>) -> Result<T, SpecError> {
    Err(SpecError(msg.into()))
}

/// A time option in fio's form: a bare number is in `bare_unit_ns`
/// (seconds for `startdelay`, microseconds for `flow_sleep` and the
/// latency options, milliseconds for `ratecycle`), else a duration with its
/// unit (`500ms`, `2s`).
fn fio_time(v: Option<&str>, what: &str, bare_unit_ns: u64) -> Result<u64, SpecError> {
    let Some(t) = v.map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok(0);
    };
    if t.chars().all(|c| c.is_ascii_digit()) {
        return t
            .parse::<u64>()
            .ok()
            .and_then(|n| n.checked_mul(bare_unit_ns))
            .ok_or_else(|| SpecError(format!("{what} {t} is too large")));
    }
    if t.contains('-') || t.contains(':') {
        return err(format!(
            "{what} {t}: a range (fio picks a random value per job) is not supported: give one time"
        ));
    }
    parse_duration(t)
        .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
        .map_err(|e| SpecError(format!("{what}: {e}")))
}

/// The run-control fields of a phase from its spec; None when every one
/// is off.
pub fn resolve(s: &PhaseSpec) -> Result<Option<RunControl>, SpecError> {
    let exit_what = match s.exit_what.as_deref().map(str::trim) {
        None | Some("" | "group") => ExitWhat::Group,
        Some("stonewall") => ExitWhat::Stonewall,
        Some("all") => ExitWhat::All,
        Some(v) => {
            return err(format!(
                "invalid exit_what '{v}': use group, stonewall or all (fio's words)"
            ));
        }
    };
    let (rate_min_read, rate_min_write) = match s.rate_min.as_deref() {
        Some(t) => crate::access::parse_rate(t)
            .map_err(|e| SpecError(e.0.replacen("rate", "rate_min", 1)))?,
        None => (0, 0),
    };
    let (rate_iops_min_read, rate_iops_min_write) = match s.rate_iops_min.as_deref() {
        Some(t) => iops_pair(t)?,
        None => (0, 0),
    };
    let latency_percentile = match s.latency_percentile.as_deref().map(str::trim) {
        None | Some("") => 100.0,
        Some(t) => t
            .trim_end_matches('%')
            .parse::<f64>()
            .ok()
            .filter(|p| p.is_finite() && *p > 0.0 && *p <= 100.0)
            .ok_or_else(|| {
                SpecError(format!(
                    "invalid latency_percentile '{t}': a percentage above 0 and at most 100, e.g. 99.9"
                ))
            })?,
    };
    let sprandom = resolve_sprandom(s)?;
    let rc = RunControl {
        startdelay_ns: fio_time(s.startdelay.as_deref(), "startdelay", 1_000_000_000)?,
        exitall: s.exitall.is_some_and(|f| f.0),
        exit_what,
        flow: s.flow.unwrap_or(0),
        flow_id: s.flow_id.unwrap_or(0),
        flow_sleep_ns: fio_time(s.flow_sleep.as_deref(), "flow_sleep", 1_000)?,
        rate_min_read,
        rate_min_write,
        rate_iops_min_read,
        rate_iops_min_write,
        ratecycle_ns: match s.ratecycle.as_deref() {
            None => 1_000_000_000,
            Some(t) => fio_time(Some(t), "ratecycle", 1_000_000)?.max(1_000_000),
        },
        latency_target_ns: fio_time(s.latency_target.as_deref(), "latency_target", 1_000)?,
        latency_window_ns: fio_time(s.latency_window.as_deref(), "latency_window", 1_000)?,
        latency_percentile,
        latency_run: s.latency_run.is_some_and(|f| f.0),
        sprandom,
    };
    let any = rc.sprandom.is_some()
        || rc.startdelay_ns > 0
        || rc.exitall
        || rc.flow > 0
        || rc.has_rate_min()
        || rc.latency_target_ns > 0;
    if !any {
        return Ok(None);
    }
    Ok(Some(rc))
}

/// fio's sprandom options: random writes only (fio: "sprandom requires
/// random write"), over-provisioning above 0 and at most 1.
fn resolve_sprandom(s: &PhaseSpec) -> Result<Option<storlab_types::Sprandom>, SpecError> {
    if !s.sprandom.is_some_and(|f| f.0) {
        return Ok(None);
    }
    if !matches!(s.rw, None | Some(storlab_types::RwMode::RandWrite)) {
        return err(
            "sprandom requires random writes (rw=randwrite), as in fio: its offsets are a write \
             stream",
        );
    }
    let regions = s.spr_num_regions.unwrap_or(100);
    if regions == 0 || regions > 1_000_000 {
        return err(format!(
            "invalid spr_num_regions {regions}: from 1 to 1000000"
        ));
    }
    let op = match s.spr_op.as_deref().map(str::trim) {
        None | Some("") => 0.15,
        Some(t) => t
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v > 0.0 && *v <= 1.0)
            .ok_or_else(|| {
                SpecError(format!(
                    "invalid spr_op '{t}': the over-provisioning as a fraction above 0 and at most 1, e.g. 0.15"
                ))
            })?,
    };
    Ok(Some(storlab_types::Sprandom { regions, op }))
}

/// `rate_iops_min=R[,W]`: one number for both directions, or each apart.
fn iops_pair(t: &str) -> Result<(u64, u64), SpecError> {
    let n = |x: &str| -> Result<u64, SpecError> {
        let x = x.trim();
        if x.is_empty() {
            return Ok(0);
        }
        x.parse().map_err(|_| {
            SpecError(format!(
                "invalid rate_iops_min '{t}': whole I/Os per second, R or R,W"
            ))
        })
    };
    match t.split_once(',') {
        None => {
            let v = n(t)?;
            Ok((v, v))
        }
        Some((r, w)) => Ok((n(r)?, n(w.split(',').next().unwrap_or(""))?)),
    }
}

/// One flow of fio's token flow control: the I/Os its jobs issued and the
/// sum of their weights (fio's `struct fio_flow`).
#[derive(Debug)]
struct Flow {
    id: u64,
    counter: AtomicU64,
    total_weight: AtomicU64,
}

/// One job of the phase, as `exitall=group` needs it: its index, its
/// group (the address of the parameters its clones share) and whether it
/// shares the reporting group of the group before it.
#[derive(Debug, Clone, Copy)]
struct Member {
    job: u32,
    group: usize,
    shares_report: bool,
}

/// What the jobs of a phase share (one per run, in its `Control`).
#[derive(Debug, Default)]
pub struct Shared {
    flows: Mutex<Vec<Arc<Flow>>>,
    members: Mutex<Vec<Member>>,
    /// Reporting groups (fio's `groupid` within the phase) stopped by
    /// `exitall`.
    stopped: Mutex<Vec<usize>>,
    any_stopped: AtomicBool,
    /// `exit_what=all` fired: the phases after this one do not run.
    end_run: AtomicBool,
    /// Why the run ended early (the job whose exit ended it).
    end_reason: Mutex<Option<String>>,
}

impl Shared {
    /// A new phase: no flows, members or stopped groups (the end of the
    /// run, once decided, stays).
    pub(crate) fn reset(&self) {
        lock(&self.flows).clear();
        lock(&self.members).clear();
        lock(&self.stopped).clear();
        self.any_stopped.store(false, Ordering::Relaxed);
    }

    /// Whether `exit_what=all` ended the run: the phases left do not run.
    /// The message names the job.
    pub fn run_ended(&self) -> Option<String> {
        if !self.end_run.load(Ordering::Relaxed) {
            return None;
        }
        Some(lock(&self.end_reason).clone().unwrap_or_default())
    }

    fn flow(&self, id: u64, weight: u64) -> Arc<Flow> {
        let mut flows = lock(&self.flows);
        let f = match flows.iter().find(|f| f.id == id) {
            Some(f) => f.clone(),
            None => {
                let f = Arc::new(Flow {
                    id,
                    counter: AtomicU64::new(0),
                    total_weight: AtomicU64::new(0),
                });
                flows.push(f.clone());
                f
            }
        };
        f.total_weight.fetch_add(weight, Ordering::Relaxed);
        f
    }

    /// fio's `groupid` of `job` within the phase: it grows at each group
    /// that does not share the reporting group of the one before it.
    fn group_of(&self, job: u32) -> usize {
        let mut m = lock(&self.members).clone();
        m.sort_by_key(|m| m.job);
        let mut gid = 0;
        let mut prev: Option<usize> = None;
        for x in &m {
            if prev.is_some_and(|p| p != x.group) && !x.shares_report {
                gid += 1;
            }
            prev = Some(x.group);
            if x.job == job {
                return gid;
            }
        }
        gid
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// fio's latency-target search (`io_u.c`: `lat_target_init`,
/// `lat_target_check`, `lat_target_success`, `__lat_target_failed`). The
/// depth starts at 1. Every `latency_window`, if the share of the
/// window's I/Os at or under the target is at least `latency_percentile`,
/// the depth goes up (doubling until a depth has failed, then bisecting
/// towards the lowest failed depth); otherwise it goes down (bisecting
/// towards the highest depth that met it) after the I/O in flight has
/// drained. Once a success leaves the depth where it was, fio runs one
/// more window at that depth with fresh statistics and ends the job
/// (unless `latency_run`). With `latency_percentile=100` one I/O over the
/// target lowers the depth at once, and fails the job at depth 1.
#[derive(Debug, Clone)]
pub struct LatTarget {
    target_ns: u64,
    window_ns: u64,
    percentile: f64,
    run: bool,
    iodepth: u32,
    /// fio's latency_qd, latency_qd_low, latency_qd_high.
    pub qd: u32,
    qd_low: u32,
    qd_high: u32,
    stable_count: u32,
    cycle_start_ns: u64,
    cycle_ios: u64,
    cycle_failed: u64,
    /// fio's latency_end_run: the final window at the depth found.
    end_run: bool,
    /// The search is over (fio's td->done).
    pub done: bool,
    /// Wait for the I/O in flight before issuing more (fio's quiesce).
    pub quiesce: bool,
    /// Start the measured figures afresh (fio's reset_all_stats).
    pub reset_stats: bool,
    /// A job with latency_percentile=100 missed the target at depth 1.
    pub fatal: Option<String>,
}

/// What [`LatTarget::check`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LatStep {
    None,
    Up,
    Down,
    FinalRun,
    Done,
}

impl LatTarget {
    pub fn new(rc: &RunControl, iodepth: u32, now: u64) -> LatTarget {
        LatTarget {
            target_ns: rc.latency_target_ns,
            window_ns: rc.latency_window_ns,
            percentile: rc.latency_percentile,
            run: rc.latency_run,
            iodepth: iodepth.max(1),
            qd: 1,
            qd_low: 1,
            qd_high: iodepth.max(1),
            stable_count: 0,
            cycle_start_ns: now,
            cycle_ios: 0,
            cycle_failed: 0,
            end_run: false,
            done: false,
            quiesce: false,
            reset_stats: false,
            fatal: None,
        }
    }

    fn new_cycle(&mut self, now: u64) {
        self.cycle_start_ns = now;
        self.cycle_ios = 0;
        self.cycle_failed = 0;
    }

    /// One completion of latency `lat_ns` at `now`.
    pub fn completed(&mut self, lat_ns: u64, now: u64) {
        self.cycle_ios += 1;
        if lat_ns <= self.target_ns {
            return;
        }
        if self.percentile < 100.0 {
            self.cycle_failed += 1;
            return;
        }
        // fio's __lat_target_failed, at once.
        if self.qd == 1 {
            let target = self.target_ns;
            self.fatal.get_or_insert_with(|| {
                format!(
                    "latency of {lat_ns} nsec exceeds specified max ({target} nsec) at queue depth 1 \
                     (fio: max latency exceeded)"
                )
            });
            return;
        }
        self.failed(now);
    }

    fn failed(&mut self, now: u64) {
        if self.qd == 1 {
            return;
        }
        self.qd_high = self.qd;
        if self.qd == self.qd_low {
            self.qd_low -= 1;
        }
        self.qd = (self.qd + self.qd_low) / 2;
        self.stable_count = 0;
        self.quiesce = true;
        self.new_cycle(now);
    }

    fn success(&mut self, now: u64) -> LatStep {
        let qd = self.qd;
        self.qd_low = self.qd;
        if self.qd + 1 == self.qd_high {
            self.stable_count += 1;
            if self.stable_count >= 3 {
                self.qd_high += 1;
                self.stable_count = 0;
            }
        }
        if self.qd_high != self.iodepth {
            self.qd = (self.qd + self.qd_high) / 2;
        } else {
            self.qd *= 2;
        }
        self.qd = self.qd.min(self.iodepth);
        let mut step = if self.qd > qd {
            LatStep::Up
        } else {
            LatStep::None
        };
        if !self.run && self.qd == qd {
            if self.end_run {
                self.done = true;
                step = LatStep::Done;
            } else {
                self.quiesce = true;
                self.end_run = true;
                self.reset_stats = true;
                step = LatStep::FinalRun;
            }
        }
        self.new_cycle(now);
        step
    }

    /// fio's lat_target_check: judge the window once it has lasted
    /// `latency_window`.
    pub fn check(&mut self, now: u64) -> LatStep {
        if self.done || now.saturating_sub(self.cycle_start_ns) < self.window_ns {
            return LatStep::None;
        }
        if self.cycle_ios == 0 {
            return LatStep::None;
        }
        let ok = (self.cycle_ios - self.cycle_failed) as f64 / self.cycle_ios as f64 * 100.0;
        if ok >= self.percentile {
            self.success(now)
        } else {
            self.failed(now);
            LatStep::Down
        }
    }

    /// Whether one more I/O may go with `in_flight` I/Os out.
    pub fn may_issue(&mut self, in_flight: usize) -> bool {
        if self.quiesce {
            if in_flight > 0 {
                return false;
            }
            self.quiesce = false;
        }
        !self.done && in_flight < self.qd as usize
    }

    /// Whether the search settled (its final window ran).
    pub fn settled(&self) -> bool {
        self.end_run
    }
}

/// fio's `check_min_rate` state of one direction.
#[derive(Debug, Clone, Copy, Default)]
struct RateCheck {
    last_bytes: u64,
    last_ios: u64,
    last_ns: u64,
}

/// What [`JobCtl::hold`] lets the worker do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hold {
    /// Issue the I/O.
    Go,
    /// Not now: reap the I/O in flight first (the latency search's depth).
    Wait,
    /// Not before this time (fio's flow_sleep; the I/O in flight first).
    Until(u64),
    /// The job is done (the latency search settled).
    Stop,
}

/// What [`JobCtl::reaped`] asks of the worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reaped {
    Go,
    /// Fail the job (kind, message), as fio does.
    Fail(&'static str, String),
    /// Start the measured figures afresh (the latency search's final
    /// window).
    Restart,
}

/// One job's run-control state (None in the worker when no option is set).
#[derive(Debug)]
pub(crate) struct JobCtl<'a> {
    rc: RunControl,
    name: String,
    job: u32,
    shared: &'a Shared,
    flow: Option<Arc<Flow>>,
    flow_counter: u64,
    /// fio's reporting group of this job, found on first use.
    group: Option<usize>,
    /// Bytes and I/Os completed per direction (read, write), and where the
    /// job started (the settle period counts from there).
    bytes: [u64; 2],
    ios: [u64; 2],
    started_ns: u64,
    next_rate_check_ns: u64,
    rate: [RateCheck; 2],
    pub lat: Option<LatTarget>,
}

impl<'a> JobCtl<'a> {
    /// The state of job `job` running `p`, registered with the phase
    /// before the workers are released; None without run-control options.
    pub(crate) fn of(job: u32, p: &PhaseParams, shared: &'a Shared) -> Option<JobCtl<'a>> {
        let rc = p.run_control?;
        lock(&shared.members).push(Member {
            job,
            group: p as *const PhaseParams as usize,
            shares_report: p.shares_report,
        });
        let flow = (rc.flow > 0).then(|| shared.flow(rc.flow_id, rc.flow));
        let depth = match p.engine {
            storlab_types::EngineKind::Psync => 1,
            _ => p.iodepth.max(1),
        };
        Some(JobCtl {
            rc,
            name: p.name.clone(),
            job,
            shared,
            flow,
            flow_counter: 0,
            group: None,
            bytes: [0; 2],
            ios: [0; 2],
            started_ns: 0,
            next_rate_check_ns: 0,
            rate: [RateCheck::default(); 2],
            lat: (rc.latency_target_ns > 0).then(|| LatTarget::new(&rc, depth, 0)),
        })
    }

    /// fio's startdelay: wait before starting, in short sleeps so that a
    /// stop (Ctrl-C, another job's exitall) is noticed; returns at once
    /// when the phase is being stopped.
    pub(crate) fn start_delay(&mut self, stop: &AtomicBool, phase_stop: &AtomicBool) {
        let until = std::time::Instant::now() + Duration::from_nanos(self.rc.startdelay_ns);
        loop {
            if stop.load(Ordering::Relaxed)
                || phase_stop.load(Ordering::Relaxed)
                || self.stopped_by_group()
            {
                return;
            }
            let left = until.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return;
            }
            std::thread::sleep(left.min(Duration::from_millis(20)));
        }
    }

    /// The job starts issuing at `now` (after its delay): the rate checks
    /// and the latency search count from here.
    pub(crate) fn started(&mut self, now: u64) {
        self.started_ns = now;
        self.next_rate_check_ns = now.saturating_add(2_000_000_000);
        if let Some(l) = &mut self.lat {
            l.new_cycle(now);
        }
    }

    /// Whether another job's `exitall` stopped this job's reporting group.
    pub(crate) fn stopped_by_group(&mut self) -> bool {
        if !self.shared.any_stopped.load(Ordering::Relaxed) {
            return false;
        }
        let g = match self.group {
            Some(g) => g,
            None => {
                let g = self.shared.group_of(self.job);
                self.group = Some(g);
                g
            }
        };
        lock(&self.shared.stopped).contains(&g)
    }

    /// fio's flow_threshold_exceeded: None when this job may issue one
    /// more I/O (counted), else when to look again (`flow_sleep` from
    /// `now`; the worker first waits for its I/O in flight).
    #[inline]
    pub(crate) fn flow_wait(&mut self, now: u64) -> Option<u64> {
        let flow = self.flow.as_ref()?;
        let total = flow.counter.load(Ordering::Relaxed);
        let weight = flow.total_weight.load(Ordering::Relaxed);
        // fio divides by the flow's counter: 0/0 is NaN, never "above".
        if total > 0 && weight > 0 {
            let mine = self.flow_counter as f64 / total as f64;
            let share = self.rc.flow as f64 / weight as f64;
            if mine > share {
                if self.rc.flow_sleep_ns == 0 {
                    // fio loops at once; give the CPU to the jobs this one
                    // waits for (they may share it).
                    std::thread::yield_now();
                }
                return Some(now.saturating_add(self.rc.flow_sleep_ns));
            }
        }
        flow.counter.fetch_add(1, Ordering::Relaxed);
        self.flow_counter += 1;
        None
    }

    /// One completion (any, measured or not): the minimum rate and the
    /// latency search count it.
    #[inline]
    pub(crate) fn completed(&mut self, read: bool, bytes: u64, lat_ns: u64, now: u64) {
        let d = usize::from(!read);
        self.bytes[d] += bytes;
        self.ios[d] += 1;
        if let Some(l) = &mut self.lat {
            l.completed(lat_ns, now);
        }
    }

    /// fio's check_min_rate after a reap at `now`: Err with fio's message
    /// when a direction ran below its minimum over the last `ratecycle`.
    pub(crate) fn check_rate(&mut self, now: u64) -> Result<(), String> {
        if !self.rc.has_rate_min() || now < self.next_rate_check_ns {
            return Ok(());
        }
        let mins = [
            (self.rc.rate_min_read, self.rc.rate_iops_min_read),
            (self.rc.rate_min_write, self.rc.rate_iops_min_write),
        ];
        for (d, &(min_bw, min_iops)) in mins.iter().enumerate() {
            if self.bytes[d] == 0 || (min_bw == 0 && min_iops == 0) {
                continue;
            }
            let r = &mut self.rate[d];
            if r.last_bytes > 0 || r.last_ios > 0 {
                let spent_ms = now.saturating_sub(r.last_ns) / 1_000_000;
                if spent_ms < self.rc.ratecycle_ns / 1_000_000 || spent_ms == 0 {
                    continue;
                }
                if min_bw > 0 {
                    let got = (self.bytes[d] - r.last_bytes) * 1000 / spent_ms;
                    if got < min_bw {
                        return Err(format!(
                            "{}: rate_min={min_bw}B/s not met, got {got}B/s",
                            self.name
                        ));
                    }
                } else {
                    let got = (self.ios[d] - r.last_ios) * 1000 / spent_ms;
                    if got < min_iops {
                        return Err(format!(
                            "{}: rate_iops_min={min_iops} not met, got {got} IOPS",
                            self.name
                        ));
                    }
                }
            }
            *r = RateCheck {
                last_bytes: self.bytes[d],
                last_ios: self.ios[d],
                last_ns: now,
            };
        }
        Ok(())
    }

    /// The job has ended: leave its flow (the others' shares grow, as
    /// fio's flow_exit_job) and, with `exitall`, stop the jobs
    /// `exit_what` names.
    pub(crate) fn done(&self, phase_stop: &AtomicBool) {
        if let Some(f) = &self.flow {
            f.total_weight.fetch_sub(self.rc.flow, Ordering::Relaxed);
        }
        if !self.rc.exitall {
            return;
        }
        match self.rc.exit_what {
            ExitWhat::Group => {
                let g = self.shared.group_of(self.job);
                lock(&self.shared.stopped).push(g);
                self.shared.any_stopped.store(true, Ordering::Relaxed);
            }
            ExitWhat::Stonewall => phase_stop.store(true, Ordering::Relaxed),
            ExitWhat::All => {
                lock(&self.shared.end_reason).get_or_insert_with(|| {
                    format!(
                        "job {} ended with exitall and exit_what=all: the jobs after it did not run",
                        self.name
                    )
                });
                self.shared.end_run.store(true, Ordering::Relaxed);
                phase_stop.store(true, Ordering::Relaxed);
            }
        }
    }

    /// Before the worker issues one more I/O with `out` I/Os queued or in
    /// flight (`fresh`: a new one, not one the rate cap held back, which
    /// passed the flow check already): the latency search's depth, then
    /// fio's flow control.
    #[inline]
    pub(crate) fn hold<C: Clock>(&mut self, out: usize, fresh: bool, clock: &C) -> Hold {
        if let Some(l) = &mut self.lat {
            if l.done {
                return Hold::Stop;
            }
            if !l.may_issue(out) {
                return Hold::Wait;
            }
        }
        if fresh && self.flow.is_some() {
            if let Some(due) = self.flow_wait(clock.now()) {
                return Hold::Until(due);
            }
        }
        Hold::Go
    }

    /// After a reap at `now`: fio's minimum-rate check and the latency
    /// search's judgement of its window.
    pub(crate) fn reaped(&mut self, now: u64) -> Reaped {
        if let Err(msg) = self.check_rate(now) {
            return Reaped::Fail("RATE_MIN", msg);
        }
        let Some(l) = &mut self.lat else {
            return Reaped::Go;
        };
        if let Some(msg) = l.fatal.take() {
            return Reaped::Fail("ETIMEDOUT", format!("{}: {msg}", self.name));
        }
        l.check(now);
        if std::mem::take(&mut l.reset_stats) {
            return Reaped::Restart;
        }
        Reaped::Go
    }

    /// What the latency search found: (depth, settled, failed).
    pub(crate) fn lat_found(&self) -> Option<(u32, bool, bool)> {
        self.lat
            .as_ref()
            .map(|l| (l.qd, l.settled(), l.fatal.is_some()))
    }
}

/// Why a phase keeps fewer I/Os in flight than its depth on purpose (fio's
/// latency-target search, or its flow control), for the depth warning.
pub(crate) fn depth_cause(p: &PhaseParams) -> Option<&'static str> {
    let rc = p.run_control?;
    if rc.latency_target_ns > 0 {
        return Some(
            "latency_target chose the depth, as asked (fio's search: depth.latency_target in the \
             JSON)",
        );
    }
    (rc.flow > 0).then_some(
        "flow held this job back to keep its flow's ratio, as asked (fio's flow control)",
    )
}

/// The latency search's outcome over a phase's jobs (each job's depth,
/// whether it settled, whether it failed); None without a search.
pub(crate) fn found(
    jobs: impl Iterator<Item = Option<(u32, bool, bool)>>,
) -> Option<storlab_types::LatencyTargetResult> {
    let jobs: Vec<(u32, bool, bool)> = jobs.flatten().collect();
    let depth = jobs.iter().map(|j| j.0).min()?;
    Some(storlab_types::LatencyTargetResult {
        depth,
        depth_max: jobs.iter().map(|j| j.0).max().unwrap_or(depth),
        settled: jobs.iter().all(|j| j.1),
        failed: jobs.iter().any(|j| j.2),
    })
}

#[cfg(test)]
mod tests;
