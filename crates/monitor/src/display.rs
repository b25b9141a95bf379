//! How `storlab monitor` shows each interval, as text: the iostat-like
//! table, CSV rows and JSON lines, flagged intervals (`reset`,
//! `impossible`) shown as the flag, never as figures. Pure functions and a
//! [`Formatter`] that returns what to write; the front end writes it.

use crate::tree::Term;
use crate::{Interval, Layer, Selection};
use storlab_types::{CpuSample, DeviceSample};

/// How intervals are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The table; `clear`: redrawn in place (home and clear first).
    Table { clear: bool },
    /// One JSON object per interval.
    Jsonl,
    /// One row per device (and total) per interval.
    Csv,
    /// Nothing per interval.
    None,
}

/// The unit of the MB/s and request-size columns (table and CSV; with the
/// `clap` feature, the choices of `storlab monitor --units`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Units {
    /// MiB/s = 2^20 bytes/s and KiB, what iostat prints as MB/s and kB (default)
    #[default]
    Iec,
    /// MB/s = 10^6 bytes/s and kB = 1000 bytes
    Si,
}

impl Units {
    /// Bytes in the table's "M".
    pub fn mega(self) -> f64 {
        match self {
            Units::Iec => 1_048_576.0,
            Units::Si => 1e6,
        }
    }
    /// Bytes in the table's "k".
    pub fn kilo(self) -> f64 {
        match self {
            Units::Iec => 1024.0,
            Units::Si => 1000.0,
        }
    }
    /// Column label of a rate: `MiB/s` or `MB/s`.
    pub fn rate_label(self) -> &'static str {
        match self {
            Units::Iec => "MiB/s",
            Units::Si => "MB/s",
        }
    }
    /// The sentence the table header carries.
    pub fn note(self) -> &'static str {
        match self {
            Units::Iec => {
                "MiB/s = 2^20 bytes/s = iostat's MB/s; areq-sz in KiB; --units si for 10^6"
            }
            Units::Si => "MB/s = 10^6 bytes/s, not iostat's 2^20; areq-sz in kB = 1000 bytes",
        }
    }
    /// CSV column suffixes: (rate, size).
    pub fn csv_names(self) -> (&'static str, &'static str) {
        match self {
            Units::Iec => ("mib_per_s", "kib"),
            Units::Si => ("mb_per_s", "kb"),
        }
    }
}

/// No request of any kind completed during the interval (iostat -z). A
/// flagged interval is never idle: it is always shown.
pub fn is_idle(d: &DeviceSample) -> bool {
    d.flag.is_none() && d.r_per_s == 0.0 && d.w_per_s == 0.0 && d.d_per_s == 0.0 && d.f_per_s == 0.0
}

pub fn csv_header(units: Units) -> String {
    let (r, k) = units.csv_names();
    format!(
        "time,t_s,interval_s,kind,device,r_per_s,w_per_s,r_{r},w_{r},rrqm_per_s,wrqm_per_s,\
r_await_ms,w_await_ms,r_areq_sz_{k},w_areq_sz_{k},areq_sz_{k},aqu_sz,util_pct,d_per_s,d_{r},drqm_per_s,d_await_ms,\
d_areq_sz_{k},f_per_s,f_await_ms,cpu_user_pct,cpu_nice_pct,cpu_system_pct,cpu_iowait_pct,cpu_steal_pct,cpu_idle_pct,flag"
    )
}

pub fn describe_terms(terms: &[Term]) -> String {
    terms
        .iter()
        .map(|t| {
            if t.minus.is_empty() {
                return t.device.clone();
            }
            let minus: Vec<String> = (t.minus.iter())
                .map(|m| match t.buffered.contains(m) {
                    true => format!("{m} writes"),
                    false => m.clone(),
                })
                .collect();
            format!("({} - {})", t.device, minus.join(" - "))
        })
        .collect::<Vec<_>>()
        .join(" + ")
}

/// Turns each interval into the text to write, in the chosen format.
#[derive(Debug)]
pub struct Formatter {
    kind: Kind,
    units: Units,
    /// `-z`: leave out devices that completed no I/O in the interval.
    hide_idle: bool,
    /// `-t`: the wall-clock time on each table.
    timestamps: bool,
    layer: Layer,
    header_done: bool,
    /// Total rows' explanation (which devices, what is taken out).
    totals_note: String,
}

impl Formatter {
    pub fn new(
        kind: Kind,
        units: Units,
        (hide_idle, timestamps): (bool, bool),
        layer: Layer,
        sel: Option<&Selection>,
    ) -> Self {
        let totals_note = sel
            .map(|s| {
                s.totals
                    .iter()
                    .map(|g| format!("{} = {}", g.name, describe_terms(&g.terms)))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default();
        Formatter {
            kind,
            units,
            hide_idle,
            timestamps,
            layer,
            header_done: false,
            totals_note,
        }
    }

    /// The text of one interval (empty: nothing to write).
    pub fn interval(&mut self, i: &Interval) -> Result<String, serde_json::Error> {
        let shown: Vec<&DeviceSample> = i
            .devices
            .iter()
            .filter(|d| !(self.hide_idle && is_idle(d)))
            .collect();
        let time = i.wall.as_deref().unwrap_or("");
        Ok(match self.kind {
            Kind::None => String::new(),
            Kind::Jsonl => {
                let v = serde_json::json!({
                    "time": i.wall,
                    "t_ns": i.t_ns,
                    "interval_ns": i.interval_ns,
                    "layer": self.layer.as_str(),
                    "devices": shown,
                    "totals": i.totals,
                    "cpu": i.cpu,
                });
                serde_json::to_string(&v)? + "\n"
            }
            Kind::Csv => {
                let mut s = String::new();
                if !self.header_done {
                    s.push_str(&csv_header(self.units));
                    s.push('\n');
                    self.header_done = true;
                }
                for (kind, d) in shown
                    .iter()
                    .map(|d| ("device", *d))
                    .chain(i.totals.iter().map(|d| ("total", d)))
                {
                    s.push_str(&csv_row(i, time, kind, d, self.units));
                }
                s
            }
            Kind::Table { clear } => {
                let mut s = String::new();
                if clear {
                    // Home and clear: the table is redrawn in place.
                    s.push_str("\x1b[H\x1b[2J");
                }
                let stamp = self.timestamps.then_some(time);
                s.push_str(&table(i, &shown, self.layer, self.units, stamp));
                // How the totals were formed: every refresh in place, once
                // when scrolling.
                if (clear || !self.header_done) && !self.totals_note.is_empty() {
                    s.push_str(&self.totals_note);
                    s.push('\n');
                }
                self.header_done = true;
                if !clear {
                    s.push('\n');
                }
                s
            }
        })
    }
}

pub fn csv_row(i: &Interval, time: &str, kind: &str, d: &DeviceSample, units: Units) -> String {
    if let Some(flag) = d.flag {
        // No figures: empty fields, not zeros that would average in.
        return format!(
            "{},{:.3},{:.3},{kind},{}{}{}\n",
            storlab_types::csv::field(time),
            i.t_ns as f64 / 1e9,
            i.interval_ns as f64 / 1e9,
            storlab_types::csv::field(&d.device),
            ",".repeat(csv_header(units).split(',').count() - 5),
            flag.as_str()
        );
    }
    let c = i.cpu.clone().unwrap_or_default();
    let mb = |x: f64| x / units.mega();
    let kb = |x: f64| x / units.kilo();
    let cpu = |x: f64| {
        if i.cpu.is_some() {
            format!("{x:.2}")
        } else {
            String::new()
        }
    };
    format!(
        "{},{:.3},{:.3},{kind},{},{:.2},{:.2},{:.3},{:.3},{:.2},{:.2},{:.3},{:.3},{:.2},{:.2},{:.2},{:.3},{:.2},{:.2},{:.3},{:.2},{:.3},{:.2},{:.2},{:.3},{},{},{},{},{},{},\n",
        storlab_types::csv::field(time),
        i.t_ns as f64 / 1e9,
        i.interval_ns as f64 / 1e9,
        storlab_types::csv::field(&d.device),
        d.r_per_s,
        d.w_per_s,
        mb(d.r_bytes_per_s),
        mb(d.w_bytes_per_s),
        d.rrqm_per_s,
        d.wrqm_per_s,
        d.r_await_ms,
        d.w_await_ms,
        kb(d.r_areq_sz_bytes),
        kb(d.w_areq_sz_bytes),
        kb(d.areq_sz_bytes),
        d.aqu_sz,
        d.util_pct,
        d.d_per_s,
        mb(d.d_bytes_per_s),
        d.drqm_per_s,
        d.d_await_ms,
        kb(d.d_areq_sz_bytes),
        d.f_per_s,
        d.f_await_ms,
        cpu(c.user_pct),
        cpu(c.nice_pct),
        cpu(c.system_pct),
        cpu(c.iowait_pct),
        cpu(c.steal_pct),
        cpu(c.idle_pct),
    )
}

pub fn table(
    i: &Interval,
    devices: &[&DeviceSample],
    layer: Layer,
    units: Units,
    stamp: Option<&str>,
) -> String {
    let mut s = String::new();
    if let Some(t) = stamp {
        s.push_str(if t.is_empty() {
            "(no wall-clock time)"
        } else {
            t
        });
        s.push('\n');
    }
    s.push_str(&format!(
        "storlab monitor  layer {}  t={:.1}s  interval {:.2}s  ({})\n",
        layer.as_str(),
        i.t_ns as f64 / 1e9,
        i.interval_ns as f64 / 1e9,
        units.note()
    ));
    if let Some(c) = &i.cpu {
        s.push_str(&cpu_line(c));
    }
    let rate = units.rate_label();
    s.push_str(&format!(
        "{:<16} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8} {:>7} {:>6} {:>8} {:>8}\n",
        "Device",
        "r/s",
        "w/s",
        format!("r{rate}"),
        format!("w{rate}"),
        "rrqm/s",
        "wrqm/s",
        "r_await",
        "w_await",
        "areq-sz",
        "aqu-sz",
        "%util",
        "d/s",
        "f/s"
    ));
    let row = |name: &str, d: &DeviceSample| {
        format!(
            "{:<16} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>7.2} {:>6.1} {:>8.2} {:>8.2}\n",
            name,
            d.r_per_s,
            d.w_per_s,
            d.r_bytes_per_s / units.mega(),
            d.w_bytes_per_s / units.mega(),
            d.rrqm_per_s,
            d.wrqm_per_s,
            d.r_await_ms,
            d.w_await_ms,
            d.areq_sz_bytes / units.kilo(),
            d.aqu_sz,
            d.util_pct,
            d.d_per_s,
            d.f_per_s
        )
    };
    let line = |name: &str, d: &DeviceSample| match d.flag {
        // No figures for a flagged interval: what happened instead.
        Some(flag) => format!(
            "{:<16} {} ({})\n",
            name,
            flag.as_str(),
            d.flag_detail.as_deref().unwrap_or("")
        ),
        None => row(name, d),
    };
    for d in devices {
        s.push_str(&line(&d.device, d));
    }
    for d in &i.totals {
        s.push_str(&line(&format!("= {}", d.device), d));
    }
    s
}

pub fn cpu_line(c: &CpuSample) -> String {
    format!(
        "cpu  %user {:.1}  %nice {:.1}  %system {:.1}  %iowait {:.1}  %steal {:.1}  %idle {:.1}\n",
        c.user_pct, c.nice_pct, c.system_pct, c.iowait_pct, c.steal_pct, c.idle_pct
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval() -> Interval {
        Interval {
            t_ns: 2_000_000_000,
            interval_ns: 1_000_000_000,
            devices: vec![
                DeviceSample {
                    device: "busy".into(),
                    w_per_s: 10.0,
                    w_bytes_per_s: 3.0 * 1_048_576.0,
                    ..DeviceSample::default()
                },
                DeviceSample {
                    device: "idle".into(),
                    ..DeviceSample::default()
                },
            ],
            wall: Some("2026-11-25T17:00:00.000Z".into()),
            ..Interval::default()
        }
    }

    /// A flagged interval shows the flag, never figures: in the table, in
    /// CSV (empty fields and the `flag` column), and it is never hidden as
    /// idle.
    #[test]
    fn flagged_intervals_are_marked() {
        let mut i = interval();
        i.devices[1] = crate::rates::flagged_sample(
            "idle",
            2_000_000_000,
            storlab_types::SampleFlag::Reset,
            "rd_ios went backwards (9 -> 1)",
        );
        assert!(!is_idle(&i.devices[1]));
        let all: Vec<&DeviceSample> = i.devices.iter().collect();
        let t = table(&i, &all, Layer::Top, Units::Iec, None);
        let row = t.lines().find(|l| l.starts_with("idle")).unwrap();
        assert!(
            row.contains("reset (rd_ios went backwards (9 -> 1))"),
            "{t}"
        );
        let header = csv_header(Units::Iec);
        let flag_col = header.split(',').position(|c| c == "flag").unwrap();
        let row = csv_row(&i, "", "device", &i.devices[1], Units::Iec);
        let fields: Vec<&str> = row.trim_end().split(',').collect();
        assert_eq!(fields.len(), header.split(',').count(), "{row}");
        assert_eq!(fields[flag_col], "reset");
        let col = header.split(',').position(|c| c == "r_per_s").unwrap();
        assert_eq!(fields[col], "");
        let ok = csv_row(&i, "", "device", &i.devices[0], Units::Iec);
        let fields: Vec<&str> = ok.trim_end().split(',').collect();
        assert_eq!(fields.len(), header.split(',').count(), "{ok}");
        assert_eq!(fields[flag_col], "");
    }

    #[test]
    fn units_and_idle_devices() {
        let i = interval();
        let all: Vec<&DeviceSample> = i.devices.iter().collect();
        let t = table(&i, &all, Layer::Top, Units::Iec, None);
        assert!(t.contains("wMiB/s") && t.contains("2^20"), "{t}");
        let busy = t.lines().find(|l| l.starts_with("busy")).unwrap();
        assert_eq!(busy.split_whitespace().nth(4), Some("3.00"), "{t}");
        let t = table(
            &i,
            &all,
            Layer::Top,
            Units::Si,
            Some("2026-11-25T17:00:00.000Z"),
        );
        assert!(t.starts_with("2026-11-25T17:00:00.000Z\n"), "{t}");
        let busy = t.lines().find(|l| l.starts_with("busy")).unwrap();
        assert_eq!(busy.split_whitespace().nth(4), Some("3.15"), "{t}");
        assert!(t.contains("wMB/s") && t.contains("10^6"), "{t}");
        assert!(is_idle(&i.devices[1]) && !is_idle(&i.devices[0]));
        let row = csv_row(
            &i,
            "2026-11-25T17:00:00.000Z",
            "device",
            &i.devices[0],
            Units::Iec,
        );
        let header = csv_header(Units::Iec);
        assert_eq!(row.trim_end().split(',').count(), header.split(',').count());
        let col = header.split(',').position(|c| c == "w_mib_per_s").unwrap();
        assert_eq!(row.split(',').nth(col), Some("3.000"));
        assert!(row.starts_with("2026-11-25T17:00:00.000Z,2.000,1.000,device,busy,"));
    }
}
