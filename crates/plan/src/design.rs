//! A whole design — layout, hardware, repair policy, workloads — and its
//! evaluation into one report (what `storlab plan layout` prints).

use crate::PlanError;
use crate::hardware::Hardware;
use crate::layout::{Finding, FsStripe, Geometry, Layout, Severity};
use crate::perf::{self, Prediction, Workload};
use crate::reliability::{self, ReliabilityInputs, ReliabilityReport};
use serde::Serialize;
use storlab_types::Pattern;
use storlab_types::format_rate;

/// Version of the JSON document `storlab plan` prints. Bump when a field
/// changes meaning or disappears; adding a field does not.
pub const PLAN_SCHEMA_VERSION: u32 = 1;

/// The published planning figure for analytics workloads: MB/s per core.
pub const DEFAULT_MB_PER_S_PER_CORE: f64 = 75.0;

/// Required throughput from compute: cores × MB/s per core.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Sizing {
    pub cores: u32,
    pub mb_per_s_per_core: f64,
}

/// A design to evaluate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Design {
    pub layout: Layout,
    pub hardware: Hardware,
    /// Hot spares: a failed drive's rebuild starts at once.
    pub hot_spares: u32,
    /// Without a hot spare: time until a replacement is in, hours.
    pub replace_delay_hours: f64,
    pub mission_hours: f64,
    pub fleet: u32,
    pub workloads: Vec<Workload>,
    pub fs_stripe: Option<FsStripe>,
    pub sizing: Option<Sizing>,
}

impl Design {
    /// Delay before a rebuild starts: none with a hot spare.
    pub fn effective_replace_delay_hours(&self) -> f64 {
        if self.hot_spares > 0 {
            0.0
        } else {
            self.replace_delay_hours
        }
    }

    pub fn reliability_inputs(&self) -> ReliabilityInputs {
        let d = &self.hardware.drive;
        ReliabilityInputs {
            drive_mtbf_hours: d.mtbf_hours,
            drive_capacity_bytes: d.capacity_bytes,
            ber_per_bit: d.ber_per_bit,
            sector_bytes: d.sector_bytes,
            rebuild_hours: d.rebuild_hours(),
            replace_delay_hours: self.effective_replace_delay_hours(),
            mission_hours: self.mission_hours,
            fleet: self.fleet,
        }
    }
}

/// How the design meets a compute-driven throughput requirement.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SizingReport {
    pub cores: u32,
    pub mb_per_s_per_core: f64,
    pub required_bytes_per_s: f64,
    pub checks: Vec<SizingCheck>,
    /// The verdict: every streaming workload feeds the cores.
    pub meets: bool,
    /// The verdict in words, as the table prints it: "meets ..." or
    /// "SHORT: ...".
    pub verdict: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SizingCheck {
    pub workload: String,
    pub predicted_bytes_per_s: f64,
    /// predicted / required.
    pub ratio: f64,
    pub meets: bool,
}

/// Cost of a design when the catalog has prices.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cost {
    pub total: f64,
    pub per_usable_tb: f64,
    pub drives: u32,
    pub enclosures: u32,
    /// The prices' currency (every priced part has the same one).
    pub currency: String,
}

/// The enclosures a design fills: data drives and hot spares both take bays.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnclosureUse {
    pub model: String,
    pub count: u32,
    pub bays: u32,
    pub data_drives: u32,
    pub hot_spares: u32,
}

/// Everything `storlab plan layout` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DesignReport {
    pub schema_version: u32,
    pub kind: &'static str,
    pub design: Design,
    pub geometry: Geometry,
    pub reliability: ReliabilityReport,
    pub performance: Vec<Prediction>,
    pub sizing: Option<SizingReport>,
    pub cost: Option<Cost>,
    /// The enclosures the drives and hot spares take, with an enclosure model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enclosures: Option<EnclosureUse>,
    /// Alignment, limits and advice.
    pub findings: Vec<Finding>,
}

/// Count of enclosures needed for `drives` (none without an enclosure model).
pub fn enclosures_needed(hw: &Hardware, drives: u32) -> u32 {
    hw.enclosure
        .as_ref()
        .map_or(0, |e| drives.div_ceil(e.slots))
}

/// Each part's price with its currency (the catalog's default where an
/// entry names none), in the order drive, controller, enclosure; `None`
/// for a part without a price.
fn priced(hw: &Hardware) -> Vec<(&'static str, Option<(f64, String)>)> {
    let with = |p: Option<f64>, c: &Option<String>| {
        p.map(|p| {
            (
                p,
                c.clone()
                    .unwrap_or_else(|| crate::catalog::DEFAULT_CURRENCY.to_string()),
            )
        })
    };
    let mut v = vec![
        ("drive", with(hw.drive.price, &hw.drive.currency)),
        (
            "controller",
            with(hw.controller.price, &hw.controller.currency),
        ),
    ];
    if let Some(e) = &hw.enclosure {
        v.push(("enclosure", with(e.price, &e.currency)));
    }
    v
}

/// The parts whose prices are in different currencies, as
/// "drive USD, controller EUR", when they are: such prices are not added.
pub fn mixed_currencies(hw: &Hardware) -> Option<String> {
    let p = priced(hw);
    let mut cs = p.iter().filter_map(|(_, x)| x.as_ref().map(|x| &x.1));
    let first = cs.next()?;
    cs.any(|c| c != first).then(|| {
        p.iter()
            .filter_map(|(k, x)| x.as_ref().map(|x| format!("{k} {}", x.1)))
            .collect::<Vec<_>>()
            .join(", ")
    })
}

/// Total price, if every part has one and all in one currency.
pub fn cost(hw: &Hardware, drives: u32, usable_bytes: u64) -> Option<Cost> {
    let enclosures = enclosures_needed(hw, drives);
    let parts = priced(hw);
    let currency = parts.first()?.1.as_ref()?.1.clone();
    if mixed_currencies(hw).is_some() {
        return None;
    }
    let mut total = hw.drive.price? * f64::from(drives);
    total += hw.controller.price? * f64::from(hw.controllers.max(1));
    if let Some(e) = &hw.enclosure {
        total += e.price? * f64::from(enclosures);
    }
    Some(Cost {
        total,
        per_usable_tb: total / (usable_bytes as f64 / 1e12),
        drives,
        enclosures,
        currency,
    })
}

/// What the validation against published measurements found for SSD arrays
/// whose controller has no published limit (docs/MODEL.md §7): the host binds
/// before the drives, and the model does not know the host.
pub const SSD_HOST_NOTE: &str = "the host (CPU, memory, PCIe topology) is not modelled, and SSD arrays often reach it before their drives: \
published Linux md RAID 0 arrays of 8-24 SATA SSDs measured 1.2-2.9 times below this model (docs/MODEL.md section 7)";

/// How the design meets `--cores` x `--mbps-per-core`: each streaming
/// workload against the requirement, a warning per shortfall, the verdict.
fn sizing_report(
    s: Sizing,
    performance: &[perf::Prediction],
    findings: &mut Vec<Finding>,
) -> SizingReport {
    let required = f64::from(s.cores) * s.mb_per_s_per_core * 1e6;
    let checks = performance
        .iter()
        .filter(|p| match p.pattern {
            Pattern::SeqRead | Pattern::SeqWrite => true,
            Pattern::Mix { random, .. } => !random,
            _ => false,
        })
        .map(|p| SizingCheck {
            workload: p.workload.clone(),
            predicted_bytes_per_s: p.bytes_per_s,
            ratio: p.bytes_per_s / required,
            meets: p.bytes_per_s >= required,
        })
        .collect::<Vec<_>>();
    for c in &checks {
        if !c.meets {
            findings.push(Finding::warning(format!(
                "{}: {} predicted, {} required by {} cores x {} MB/s: short by {:.0}%",
                c.workload,
                format_rate(c.predicted_bytes_per_s),
                format_rate(required),
                s.cores,
                s.mb_per_s_per_core,
                (1.0 - c.ratio) * 100.0
            )));
        }
    }
    let short: Vec<&str> = checks
        .iter()
        .filter(|c| !c.meets)
        .map(|c| c.workload.as_str())
        .collect();
    let need = format!(
        "{} cores x {} MB/s = {}",
        s.cores,
        s.mb_per_s_per_core,
        format_rate(required)
    );
    let verdict = if short.is_empty() {
        format!("meets {need}")
    } else {
        format!("SHORT of {need}: {}", short.join(", "))
    };
    SizingReport {
        cores: s.cores,
        mb_per_s_per_core: s.mb_per_s_per_core,
        required_bytes_per_s: required,
        meets: short.is_empty(),
        verdict,
        checks,
    }
}

/// Evaluate a design.
pub fn evaluate(design: &Design) -> Result<DesignReport, PlanError> {
    let hw = &design.hardware;
    let geo = design.layout.geometry(hw.drive.capacity_bytes)?;
    let rel = reliability::evaluate(
        geo.span,
        geo.parity_drives_per_group,
        geo.groups,
        &design.reliability_inputs(),
    )?;
    let performance = design
        .workloads
        .iter()
        .map(|w| perf::predict_geo(&design.layout, &geo, hw, w))
        .collect::<Result<Vec<_>, _>>()?;
    let mut findings = design.layout.alignment(design.fs_stripe);
    let all_drives = geo.drives + design.hot_spares;
    if let Some(max) = hw.controller.max_drives {
        let per = all_drives.div_ceil(hw.controllers.max(1));
        if per > max {
            findings.push(Finding::warning(format!(
                "{per} drives per controller is more than {} supports ({max}); add controllers (--controllers, with LVM) or choose another",
                hw.controller.name
            )));
        }
    }
    let ctl = &hw.controller;
    let mut missing = Vec::new();
    if ctl.max_bytes_per_s.is_none() && ctl.max_read_bytes_per_s.is_none() {
        missing.push("read");
    }
    if ctl.max_bytes_per_s.is_none() && ctl.max_write_bytes_per_s.is_none() {
        missing.push("write");
    }
    if ctl.max_iops.is_none() {
        missing.push("IOPS");
    }
    if !missing.is_empty() {
        findings.push(Finding::note(format!(
            "the catalog has no published {} limit for {}: predictions bound by links may be optimistic, above all for small requests; \
             give --controller-max-read / --controller-max-write / --controller-max-iops from a measurement, or fit one with storlab plan calibrate",
            match missing.as_slice() {
                ["read", "write", "IOPS"] => "throughput or IOPS".to_string(),
                ["read", "write"] => "throughput".to_string(),
                m => m.join(" or "),
            },
            ctl.name
        )));
    }
    if !hw.drive.is_hdd() && !missing.is_empty() && hw.host_bytes_per_s.is_none() {
        findings.push(Finding::note(format!(
            "{SSD_HOST_NOTE}; give --host-limit from a measurement of this host"
        )));
    }
    if hw.enclosure.is_none() && all_drives > 8 * hw.controllers.max(1) {
        findings.push(Finding::note(format!(
            "{all_drives} drives need expanders or enclosures behind {} controller(s); give --enclosure to model their uplinks",
            hw.controllers.max(1)
        )));
    }
    if rel.ure_share_of_loss > 0.5 {
        findings.push(Finding::warning(format!(
            "{:.0}% of the data-loss risk is unrecoverable read errors during rebuild ({:.1}% chance per rebuild without redundancy, reading {:.1} TB); \
             {}narrower groups or drives with a lower error rate help more than faster rebuilds",
            rel.ure_share_of_loss * 100.0,
            rel.ure_probability_per_critical_rebuild * 100.0,
            rel.critical_rebuild_read_bytes / 1e12,
            if geo.parity_drives_per_group < 2 && geo.span > 2 {
                "more parity per group (RAID 6), "
            } else {
                ""
            }
        )));
    }
    if geo.parity_drives_per_group == 0 {
        findings.push(Finding::warning(
            "no redundancy: any drive failure loses the volume".to_string(),
        ));
    }
    let sizing = design
        .sizing
        .map(|s| sizing_report(s, &performance, &mut findings));
    let cost = cost(hw, all_drives, geo.usable_bytes);
    if let Some(mixed) = mixed_currencies(hw) {
        findings.push(Finding::warning(format!(
            "prices in different currencies ({mixed}): no cost is shown; give the entries one currency (currency = \"...\" in a --catalog file)"
        )));
    }
    let enclosures = hw.enclosure.as_ref().map(|e| EnclosureUse {
        model: e.name.clone(),
        count: hw.enclosures_for(geo.drives),
        bays: hw.enclosures_for(geo.drives) * e.slots,
        data_drives: geo.drives,
        hot_spares: design.hot_spares,
    });
    findings.sort_by_key(|f| match f.severity {
        Severity::Warning => 0,
        Severity::Note => 1,
        Severity::Ok => 2,
    });
    Ok(DesignReport {
        schema_version: PLAN_SCHEMA_VERSION,
        kind: "plan.layout",
        design: design.clone(),
        geometry: geo,
        reliability: rel,
        performance,
        sizing,
        cost,
        enclosures,
        findings,
    })
}
