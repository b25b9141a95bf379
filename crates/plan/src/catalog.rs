//! The hardware catalog: drive models, controllers, enclosures and links,
//! read from TOML. [`Catalog::builtin`] is `crates/plan/catalog.toml`,
//! compiled in; [`Catalog::extend`] adds a user's file on top (same name =
//! replace). Unknown names get "did you mean"; bad TOML or unknown keys get
//! the file, line and column.

use crate::error::{PlanError, suggest};
use crate::hardware::{
    ControllerSpec, DriveMedia, DriveSpec, EnclosureSpec, LinkSpec, zone_average,
};
use crate::reliability::mtbf_from_afr;
use serde::{Deserialize, Deserializer, Serialize};
use storlab_types::text::line_col;
use toml::Spanned;

/// Per-command overhead of a disk when the catalog gives none: command
/// processing plus the occasional rotational miss between chunk-sized
/// commands (an estimate; `storlab plan calibrate` fits it from a sweep).
pub const DEFAULT_HDD_CMD_OVERHEAD_S: f64 = 0.1e-3;

/// The currency of a price whose entry names none (`currency = "EUR"`
/// names it): costs are shown with their currency, and parts priced in
/// different currencies are not added up.
pub const DEFAULT_CURRENCY: &str = "USD";

/// The catalog shipped with storlab.
pub const BUILTIN_TOML: &str = include_str!("../catalog.toml");

/// A number or a string that `f` parses; any other type of value is
/// refused as "expected {expected}" (a derived untagged enum said "data
/// did not match any variant of untagged enum NumOrStr").
fn de_parsed<'de, D, T, E: std::fmt::Display>(
    d: D,
    expected: &'static str,
    f: fn(&str) -> Result<T, E>,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    struct NumOrStr(&'static str);
    impl serde::de::Visitor<'_> for NumOrStr {
        type Value = String;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str(self.0)
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<String, E> {
            Ok(v.to_string())
        }
    }
    let s = d.deserialize_any(NumOrStr(expected))?;
    f(&s).map_err(serde::de::Error::custom)
}

macro_rules! parsed_newtype {
    ($name:ident, $ty:ty, $expected:expr, $f:expr) => {
        #[derive(Debug, Clone, Copy, PartialEq, Serialize)]
        pub struct $name(pub $ty);
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                de_parsed(d, $expected, $f).map($name)
            }
        }
    };
}

parsed_newtype!(
    Size,
    u64,
    "a size like 4k or a number, such as 4096, \"4k\" or \"8TB\"",
    storlab_types::parse_size
);
parsed_newtype!(
    Rate,
    f64,
    "a rate like \"150MB/s\" or a number of bytes/s",
    storlab_types::parse_rate
);
parsed_newtype!(
    Hours,
    f64,
    "a duration like \"1.5e6h\" or \"5y\"",
    crate::reliability::parse_hours
);
parsed_newtype!(
    Percent,
    f64,
    "a percentage like \"0.44%\" or a number",
    storlab_types::parse_percent
);
parsed_newtype!(
    Seconds,
    f64,
    "a duration like \"8.5ms\" or a number of seconds",
    |s| storlab_types::parse_duration(s).map(|d| d.as_secs_f64())
);

/// A link as written in the catalog.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkEntry {
    pub name: Spanned<String>,
    #[serde(default)]
    pub description: String,
    /// Line rate per lane, Gbaud.
    pub gbaud: Option<f64>,
    /// Line code: "8b/10b", "64b/66b", "128b/130b", "128b/150b".
    pub encoding: Option<String>,
    /// Payload rate per lane before protocol overhead (instead of gbaud).
    pub rate: Option<Rate>,
    #[serde(default = "one")]
    pub protocol_efficiency: f64,
    /// Measured end-to-end efficiency when reading (data towards the host),
    /// if it differs from `protocol_efficiency`.
    pub read_efficiency: Option<f64>,
    /// The same when writing (data from the host).
    pub write_efficiency: Option<f64>,
    #[serde(default)]
    pub shared_bus: bool,
    pub source: String,
}

fn one() -> f64 {
    1.0
}

/// A drive model as written in the catalog.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DriveEntry {
    pub name: Spanned<String>,
    #[serde(default)]
    pub description: String,
    /// "hdd" or "ssd".
    pub kind: Spanned<String>,
    pub capacity: Size,
    pub rpm: Option<f64>,
    pub avg_seek: Option<Seconds>,
    /// Zone-average media rate (disks). With `seq_rate_max` and
    /// `seq_rate_min` instead, the average is computed from them.
    pub seq_rate: Option<Rate>,
    /// Media rate at the outer edge (what data sheets call "max sustained").
    pub seq_rate_max: Option<Rate>,
    /// Media rate at the inner edge.
    pub seq_rate_min: Option<Rate>,
    /// Fixed cost per command (default 0.1 ms for disks, 0 for SSDs).
    pub cmd_overhead: Option<Seconds>,
    pub read_iops: Option<f64>,
    pub write_iops: Option<f64>,
    pub seq_read: Option<Rate>,
    pub seq_write: Option<Rate>,
    pub mtbf: Option<Hours>,
    pub afr: Option<Percent>,
    pub ber: f64,
    pub sector_size: Size,
    pub rebuild_rate: Rate,
    pub price: Option<f64>,
    /// The currency of `price` (default [`DEFAULT_CURRENCY`]).
    pub currency: Option<String>,
    pub source: String,
    /// The concurrency knee `plan calibrate` fitted, per direction and
    /// pattern (`[drive.queue.rand_read]` ...; docs/MODEL.md §3.14).
    #[serde(
        default,
        skip_serializing_if = "crate::hardware::DriveQueues::is_empty"
    )]
    pub queue: crate::hardware::DriveQueues,
}

/// A controller as written in the catalog.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerEntry {
    pub name: Spanned<String>,
    #[serde(default)]
    pub description: String,
    pub max_throughput: Option<Rate>,
    pub max_iops: Option<f64>,
    pub parity_rate: Option<Rate>,
    /// Read-path limit (front-end bytes/s).
    pub max_read: Option<Rate>,
    /// Write-path limit (front-end bytes/s): parity engine, cache bandwidth,
    /// cache mirroring to a partner controller.
    pub max_write: Option<Rate>,
    /// What sets the write-path limit, for the explanation.
    pub write_limit_by: Option<String>,
    /// Parity is computed on the controller (RAID-on-chip / RAID processor),
    /// not by the host.
    #[serde(default)]
    pub parity_on_controller: bool,
    /// Cache memory bandwidth (all traffic through it), when published.
    pub memory_bandwidth: Option<Rate>,
    /// One LUN's read-ahead rate (per-volume prefetch), when measured or published.
    pub lun_read: Option<Rate>,
    /// One LUN's destage rate (per-volume flush to the back end).
    pub lun_write: Option<Rate>,
    /// The controller's own time per command, when published or measured
    /// (part of a request's round trip: docs/MODEL.md §3.12).
    pub cmd_latency: Option<Seconds>,
    /// The era and kind of part, for typical ranges (docs/MODEL.md §3.13).
    pub class: Option<String>,
    /// Write rates measured on comparable parts of its class, low and high
    /// (`["300MB/s", "600MB/s"]`), with `typical_source`.
    pub typical_write: Option<(Rate, Rate)>,
    /// The published measurements `typical_write` is taken from.
    pub typical_source: Option<String>,
    /// The link the write cache is mirrored over to the partner controller
    /// (a catalog link spec such as `fc2x2`), when the array mirrors.
    pub mirror_link: Option<Spanned<String>>,
    #[serde(default)]
    pub write_back: bool,
    pub backend: Spanned<String>,
    pub host: Spanned<String>,
    pub max_drives: Option<u32>,
    pub price: Option<f64>,
    /// The currency of `price` (default [`DEFAULT_CURRENCY`]).
    pub currency: Option<String>,
    pub source: String,
}

/// An enclosure as written in the catalog.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EnclosureEntry {
    pub name: Spanned<String>,
    #[serde(default)]
    pub description: String,
    pub slots: u32,
    pub uplink: Spanned<String>,
    pub price: Option<f64>,
    /// The currency of `price` (default [`DEFAULT_CURRENCY`]).
    pub currency: Option<String>,
    pub source: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogFile {
    #[serde(default)]
    link: Vec<LinkEntry>,
    #[serde(default)]
    drive: Vec<DriveEntry>,
    #[serde(default)]
    controller: Vec<ControllerEntry>,
    #[serde(default)]
    enclosure: Vec<EnclosureEntry>,
    /// `[override.drive."NAME"]` and so on: some fields of an entry
    /// already in the catalog, changed without copying the rest.
    #[serde(default, rename = "override")]
    overrides: Overrides,
}

/// The `[override.KIND."NAME"]` tables of a catalog file: entry name →
/// the fields that change.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Overrides {
    #[serde(default)]
    link: toml::Table,
    #[serde(default)]
    drive: toml::Table,
    #[serde(default)]
    controller: toml::Table,
    #[serde(default)]
    enclosure: toml::Table,
}

/// Entries with the file they came from (for error positions).
#[derive(Debug, Clone)]
struct Sourced<T> {
    entry: T,
    file: usize,
}

/// The hardware catalog.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    files: Vec<(String, String)>,
    links: Vec<Sourced<LinkEntry>>,
    drives: Vec<Sourced<DriveEntry>>,
    controllers: Vec<Sourced<ControllerEntry>>,
    enclosures: Vec<Sourced<EnclosureEntry>>,
}

fn upsert<T>(list: &mut Vec<Sourced<T>>, e: T, file: usize, name: impl Fn(&T) -> String) {
    let n = name(&e);
    match list.iter_mut().find(|x| name(&x.entry) == n) {
        Some(old) => {
            old.entry = e;
            old.file = file;
        }
        None => list.push(Sourced { entry: e, file }),
    }
}

impl Catalog {
    /// The built-in catalog.
    pub fn builtin() -> Catalog {
        let mut c = Catalog::default();
        // cannot fail: the built-in catalog is compiled in and a unit test parses it.
        c.extend("<built-in catalog>", BUILTIN_TOML)
            .expect("the built-in catalog is valid (tested)");
        c
    }

    fn err_at(&self, file: usize, span: std::ops::Range<usize>, message: String) -> PlanError {
        let (name, text) = &self.files[file];
        let (line, column) = line_col(text, span.start);
        PlanError::Catalog {
            file: name.clone(),
            line,
            column,
            message,
        }
    }

    /// Add the entries of a catalog file (`name` is for messages); an entry
    /// with a name already present replaces it. On error the catalog is
    /// left as it was.
    pub fn extend(&mut self, name: &str, text: &str) -> Result<(), PlanError> {
        let mut next = self.clone();
        next.extend_in_place(name, text)?;
        *self = next;
        Ok(())
    }

    fn extend_in_place(&mut self, name: &str, text: &str) -> Result<(), PlanError> {
        let parsed: CatalogFile = toml::from_str(text).map_err(|e| {
            let (line, column) = e.span().map_or((1, 1), |s| line_col(text, s.start));
            PlanError::Catalog {
                file: name.to_string(),
                line,
                column,
                message: e.message().trim().to_string(),
            }
        })?;
        self.files.push((name.to_string(), text.to_string()));
        let file = self.files.len() - 1;
        // Names must be unique inside one file.
        let mut seen: Vec<(&'static str, String)> = Vec::new();
        let mut check = |kind: &'static str, n: &Spanned<String>| -> Result<(), PlanError> {
            let key = (kind, n.get_ref().to_lowercase());
            if seen.contains(&key) {
                return Err(self.err_at(
                    file,
                    n.span(),
                    format!(
                        "{kind} '{}' is defined twice in this file; rename one",
                        n.get_ref()
                    ),
                ));
            }
            seen.push(key);
            Ok(())
        };
        for l in &parsed.link {
            check("link", &l.name)?;
        }
        for d in &parsed.drive {
            check("drive", &d.name)?;
        }
        for c in &parsed.controller {
            check("controller", &c.name)?;
        }
        for e in &parsed.enclosure {
            check("enclosure", &e.name)?;
        }
        for l in parsed.link {
            upsert(&mut self.links, l, file, |e| {
                e.name.get_ref().to_lowercase()
            });
        }
        for d in parsed.drive {
            upsert(&mut self.drives, d, file, |e| {
                e.name.get_ref().to_lowercase()
            });
        }
        for c in parsed.controller {
            upsert(&mut self.controllers, c, file, |e| {
                e.name.get_ref().to_lowercase()
            });
        }
        for e in parsed.enclosure {
            upsert(&mut self.enclosures, e, file, |e| {
                e.name.get_ref().to_lowercase()
            });
        }
        self.apply_overrides(file, &parsed.overrides)?;
        // Resolve everything now so a bad entry is reported with its
        // position when the file is loaded, not when it is first used.
        for d in self.drives.clone() {
            self.resolve_drive(&d)?;
        }
        for c in self.controllers.clone() {
            self.resolve_controller(&c)?;
        }
        for e in self.enclosures.clone() {
            self.resolve_enclosure(&e)?;
        }
        Ok(())
    }

    /// Apply a file's `[override.KIND."NAME"]` tables: each names an entry
    /// already in the catalog (built in or from an earlier file) and the
    /// fields to change; the entry keeps every other field and its source
    /// says what was changed and where.
    fn apply_overrides(&mut self, file: usize, o: &Overrides) -> Result<(), PlanError> {
        for (kind, table) in [
            ("link", &o.link),
            ("drive", &o.drive),
            ("controller", &o.controller),
            ("enclosure", &o.enclosure),
        ] {
            for (name, fields) in table {
                self.apply_override(file, kind, name, fields)?;
            }
        }
        Ok(())
    }

    fn apply_override(
        &mut self,
        file: usize,
        kind: &'static str,
        name: &str,
        fields: &toml::Value,
    ) -> Result<(), PlanError> {
        let (fname, text) = self.files[file].clone();
        // Errors point at the override's header line.
        let line = text
            .lines()
            .position(|l| l.trim_start().starts_with("[override") && l.contains(name))
            .map_or(1, |i| i + 1);
        let at = |message: String| PlanError::Catalog {
            file: fname.clone(),
            line,
            column: 1,
            message: format!("[override.{kind}.\"{name}\"]: {message}"),
        };
        let Some(fields) = fields.as_table() else {
            return Err(at(format!(
                "write the fields to change under the header, e.g. [override.{kind}.\"{name}\"] then price = 300"
            )));
        };
        if fields.contains_key("name") {
            return Err(at(
                "an override cannot rename an entry; copy it under a new name instead".into(),
            ));
        }
        let known = match kind {
            "link" => self.link_names(),
            "drive" => self.drive_names(),
            "controller" => self.controller_names(),
            _ => self.enclosure_names(),
        };
        let Some(found) = known.iter().find(|k| k.eq_ignore_ascii_case(name)) else {
            let e = self.unknown(kind, name, known.clone());
            return Err(at(format!("{e}; an override changes an entry that exists")));
        };
        let found = found.to_string();
        let old_file = match kind {
            "link" => self
                .links
                .iter()
                .find(|x| *x.entry.name.get_ref() == found)
                .map(|x| x.file),
            "drive" => self
                .drives
                .iter()
                .find(|x| *x.entry.name.get_ref() == found)
                .map(|x| x.file),
            "controller" => self
                .controllers
                .iter()
                .find(|x| *x.entry.name.get_ref() == found)
                .map(|x| x.file),
            _ => self
                .enclosures
                .iter()
                .find(|x| *x.entry.name.get_ref() == found)
                .map(|x| x.file),
        }
        .unwrap_or(0);
        // The entry as its own file wrote it, with the new fields on top.
        let old_text = &self.files[old_file].1;
        let mut entry = toml::from_str::<toml::Table>(old_text)
            .ok()
            .and_then(|t| {
                t.get(kind)?.as_array()?.iter().find_map(|v| {
                    let t = v.as_table()?;
                    (t.get("name")?.as_str()? == found).then(|| t.clone())
                })
            })
            .ok_or_else(|| at(format!("the {kind} entry '{found}' could not be read back")))?;
        let mut changed = Vec::new();
        for (k, v) in fields {
            entry.insert(k.clone(), v.clone());
            changed.push(k.as_str());
        }
        let source = entry.get("source").and_then(|v| v.as_str()).unwrap_or("");
        let source = format!("{source}; {} set by {fname}", changed.join(", "));
        entry.insert("source".into(), toml::Value::String(source));
        let mut doc = toml::Table::new();
        doc.insert(
            kind.to_string(),
            toml::Value::Array(vec![toml::Value::Table(entry)]),
        );
        let merged = toml::to_string(&doc).map_err(|e| at(e.to_string()))?;
        let parsed: CatalogFile = toml::from_str(&merged).map_err(|e| {
            at(format!(
                "{} (in what the override sets: {})",
                e.message().trim(),
                changed.join(", ")
            ))
        })?;
        self.files
            .push((format!("{fname} (override of {kind} '{found}')"), merged));
        let f = self.files.len() - 1;
        let lower = |n: &Spanned<String>| n.get_ref().to_lowercase();
        for l in parsed.link {
            upsert(&mut self.links, l, f, |e| lower(&e.name));
        }
        for d in parsed.drive {
            upsert(&mut self.drives, d, f, |e| lower(&e.name));
        }
        for c in parsed.controller {
            upsert(&mut self.controllers, c, f, |e| lower(&e.name));
        }
        for e in parsed.enclosure {
            upsert(&mut self.enclosures, e, f, |e| lower(&e.name));
        }
        Ok(())
    }

    pub fn drive_names(&self) -> Vec<&str> {
        self.drives
            .iter()
            .map(|d| d.entry.name.get_ref().as_str())
            .collect()
    }
    pub fn controller_names(&self) -> Vec<&str> {
        self.controllers
            .iter()
            .map(|d| d.entry.name.get_ref().as_str())
            .collect()
    }
    pub fn enclosure_names(&self) -> Vec<&str> {
        self.enclosures
            .iter()
            .map(|d| d.entry.name.get_ref().as_str())
            .collect()
    }
    pub fn link_names(&self) -> Vec<&str> {
        self.links
            .iter()
            .map(|d| d.entry.name.get_ref().as_str())
            .collect()
    }
    pub fn drives(&self) -> impl Iterator<Item = &DriveEntry> {
        self.drives.iter().map(|d| &d.entry)
    }
    pub fn controllers(&self) -> impl Iterator<Item = &ControllerEntry> {
        self.controllers.iter().map(|d| &d.entry)
    }
    pub fn enclosures(&self) -> impl Iterator<Item = &EnclosureEntry> {
        self.enclosures.iter().map(|d| &d.entry)
    }
    pub fn links(&self) -> impl Iterator<Item = &LinkEntry> {
        self.links.iter().map(|d| &d.entry)
    }

    /// Resolve a link written `name` or `name x lanes`, e.g. `sas12x4`.
    pub fn link(&self, spec: &str) -> Result<LinkSpec, PlanError> {
        self.link_inner(spec).map_err(|reason| match reason {
            LinkErr::Unknown(base) => PlanError::Unknown {
                kind: "link",
                name: spec.to_string(),
                suggestions: suggest(&base, self.link_names()),
                extra: "(write <link>x<lanes>, e.g. sas12x4, fc8x2, pcie3x8)".to_string(),
            },
            LinkErr::Bad(r) => PlanError::invalid(format!("link '{spec}'"), r),
        })
    }

    fn link_inner(&self, spec: &str) -> Result<LinkSpec, LinkErr> {
        let s = spec.trim().to_lowercase();
        let find = |n: &str| {
            self.links
                .iter()
                .find(|l| l.entry.name.get_ref().to_lowercase() == n)
        };
        let (entry, lanes) = match find(&s) {
            Some(e) => (e, 1),
            None => {
                let (base, lanes) = s
                    .rsplit_once('x')
                    .and_then(|(b, n)| n.parse::<u32>().ok().map(|n| (b.to_string(), n)))
                    .ok_or_else(|| LinkErr::Unknown(s.clone()))?;
                let e = find(&base).ok_or(LinkErr::Unknown(base))?;
                if lanes == 0 || lanes > 1024 {
                    return Err(LinkErr::Bad(format!(
                        "{lanes} lanes is out of range (1 to 1024)"
                    )));
                }
                (e, lanes)
            }
        };
        let e = &entry.entry;
        let per_lane = match (&e.rate, e.gbaud, e.encoding.as_deref()) {
            (Some(r), _, _) => r.0,
            (None, Some(g), Some(enc)) => {
                let (d, t) = enc
                    .split_once("b/")
                    .and_then(|(d, t)| {
                        Some((
                            d.parse::<f64>().ok()?,
                            t.trim_end_matches('b').parse::<f64>().ok()?,
                        ))
                    })
                    .filter(|(d, t)| *d > 0.0 && t >= d)
                    .ok_or_else(|| {
                        LinkErr::Bad(format!(
                            "encoding '{enc}' should look like 8b/10b or 128b/130b"
                        ))
                    })?;
                g * 1e9 * d / t / 8.0
            }
            _ => {
                return Err(LinkErr::Bad(
                    "needs either rate = \"...MB/s\" or gbaud = ... with encoding = \"8b/10b\""
                        .into(),
                ));
            }
        };
        let ok = |x: f64| x > 0.0 && x <= 1.0;
        if !ok(e.protocol_efficiency)
            || !e.read_efficiency.is_none_or(ok)
            || !e.write_efficiency.is_none_or(ok)
        {
            return Err(LinkErr::Bad(
                "protocol_efficiency, read_efficiency and write_efficiency must be in (0, 1]"
                    .into(),
            ));
        }
        let lanes_f = f64::from(lanes);
        let read = per_lane * e.read_efficiency.unwrap_or(e.protocol_efficiency) * lanes_f;
        let write = per_lane * e.write_efficiency.unwrap_or(e.protocol_efficiency) * lanes_f;
        Ok(LinkSpec {
            name: if lanes == 1 {
                e.name.get_ref().clone()
            } else {
                format!("{}x{lanes}", e.name.get_ref())
            },
            lanes,
            bytes_per_s: read,
            shared_bus: e.shared_bus,
            write_bytes_per_s: (write != read).then_some(write),
        })
    }

    fn link_at(&self, file: usize, spec: &Spanned<String>) -> Result<LinkSpec, PlanError> {
        self.link(spec.get_ref())
            .map_err(|e| self.err_at(file, spec.span(), e.to_string()))
    }

    fn unknown(&self, kind: &'static str, name: &str, known: Vec<&str>) -> PlanError {
        PlanError::Unknown {
            kind,
            name: name.to_string(),
            suggestions: suggest(name, known),
            extra: String::new(),
        }
    }

    /// A drive model by name.
    pub fn drive(&self, name: &str) -> Result<DriveSpec, PlanError> {
        let d = self
            .drives
            .iter()
            .find(|d| d.entry.name.get_ref().eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| self.unknown("drive", name, self.drive_names()))?;
        self.resolve_drive(d)
    }

    fn resolve_drive(&self, d: &Sourced<DriveEntry>) -> Result<DriveSpec, PlanError> {
        let e = &d.entry;
        let at = |msg: String| self.err_at(d.file, e.name.span(), msg);
        let n = e.name.get_ref();
        let zone = match (e.seq_rate_max, e.seq_rate_min) {
            (Some(o), Some(i)) if o.0 > 0.0 && i.0 > 0.0 && i.0 <= o.0 => Some((o.0, i.0)),
            (None, None) => None,
            _ => {
                return Err(at(format!(
                    "drive '{n}': give both seq_rate_max (outer edge) and seq_rate_min (inner edge), with min <= max"
                )));
            }
        };
        let media = match e.kind.get_ref().as_str() {
            "hdd" => match (
                e.rpm,
                e.avg_seek,
                e.seq_rate
                    .map(|r| r.0)
                    .or(zone.map(|(o, i)| zone_average(o, i, 1.0))),
            ) {
                (Some(rpm), Some(seek), Some(rate)) if rpm > 0.0 && rate > 0.0 => DriveMedia::Hdd {
                    rpm,
                    avg_seek_s: seek.0,
                    seq_bytes_per_s: rate,
                },
                _ => {
                    return Err(at(format!(
                        "hdd '{n}' needs rpm, avg_seek and seq_rate (the zone average) or seq_rate_max and seq_rate_min (e.g. rpm = 7200, avg_seek = \"8.5ms\", seq_rate = \"200MB/s\")"
                    )));
                }
            },
            "ssd" => match (e.read_iops, e.write_iops, e.seq_read, e.seq_write) {
                (Some(r), Some(w), Some(sr), Some(sw))
                    if r > 0.0 && w > 0.0 && sr.0 > 0.0 && sw.0 > 0.0 =>
                {
                    DriveMedia::Ssd {
                        read_iops: r,
                        write_iops: w,
                        seq_read_bytes_per_s: sr.0,
                        seq_write_bytes_per_s: sw.0,
                    }
                }
                _ => {
                    return Err(at(format!(
                        "ssd '{n}' needs positive read_iops, write_iops, seq_read and seq_write"
                    )));
                }
            },
            other => {
                return Err(self.err_at(
                    d.file,
                    e.kind.span(),
                    format!("drive kind '{other}' is not hdd or ssd"),
                ));
            }
        };
        let mtbf = match (e.mtbf, e.afr) {
            (Some(h), None) if h.0 > 0.0 => h.0,
            (None, Some(p)) if p.0 > 0.0 && p.0 < 100.0 => mtbf_from_afr(p.0 / 100.0),
            _ => {
                return Err(at(format!(
                    "drive '{n}' needs exactly one of mtbf = \"1200000h\" or afr = \"0.73%\" (positive)"
                )));
            }
        };
        if !(e.ber > 0.0 && e.ber < 1e-6) {
            return Err(at(format!(
                "drive '{n}': ber = {} is not a per-bit error rate such as 1e-15",
                e.ber
            )));
        }
        if e.capacity.0 == 0 || e.sector_size.0 == 0 || e.rebuild_rate.0 <= 0.0 {
            return Err(at(format!(
                "drive '{n}': capacity, sector_size and rebuild_rate must be positive"
            )));
        }
        Ok(DriveSpec {
            name: n.clone(),
            capacity_bytes: e.capacity.0,
            media,
            mtbf_hours: mtbf,
            ber_per_bit: e.ber,
            sector_bytes: e.sector_size.0,
            rebuild_bytes_per_s: e.rebuild_rate.0,
            rebuild_hours: None,
            price: e.price,
            currency: e.currency.clone(),
            cmd_overhead_s: match e.cmd_overhead {
                Some(c) if c.0 >= 0.0 && c.0 < 1.0 => c.0,
                Some(_) => {
                    return Err(at(format!(
                        "drive '{n}': cmd_overhead must be a short time such as \"0.1ms\""
                    )));
                }
                None if e.kind.get_ref() == "hdd" => DEFAULT_HDD_CMD_OVERHEAD_S,
                None => 0.0,
            },
            seq_outer_bytes_per_s: zone.map(|z| z.0),
            seq_inner_bytes_per_s: zone.map(|z| z.1),
            overrides: Vec::new(),
            queue: self.checked_queues(&e.queue, &at, n)?,
        })
    }

    /// A drive's calibrated queueing curves, each checked.
    fn checked_queues(
        &self,
        q: &crate::hardware::DriveQueues,
        at: &dyn Fn(String) -> PlanError,
        n: &str,
    ) -> Result<crate::hardware::DriveQueues, PlanError> {
        let one = |f: &Option<crate::calibrate::QueueFit>, kind: &str| {
            f.clone()
                .map(|f| {
                    f.checked()
                        .map_err(|e| at(format!("drive '{n}': queue.{kind}: {e}")))
                })
                .transpose()
        };
        Ok(crate::hardware::DriveQueues {
            seq_read: one(&q.seq_read, "seq_read")?,
            rand_read: one(&q.rand_read, "rand_read")?,
            seq_write: one(&q.seq_write, "seq_write")?,
            rand_write: one(&q.rand_write, "rand_write")?,
        })
    }

    /// A controller by name.
    pub fn controller(&self, name: &str) -> Result<ControllerSpec, PlanError> {
        let c = self
            .controllers
            .iter()
            .find(|d| d.entry.name.get_ref().eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| self.unknown("controller", name, self.controller_names()))?;
        self.resolve_controller(c)
    }

    fn resolve_controller(
        &self,
        c: &Sourced<ControllerEntry>,
    ) -> Result<ControllerSpec, PlanError> {
        let e = &c.entry;
        Ok(ControllerSpec {
            max_bytes_per_s: e.max_throughput.map(|r| r.0),
            max_iops: e.max_iops,
            parity_bytes_per_s: e.parity_rate.map(|r| r.0),
            max_read_bytes_per_s: e.max_read.map(|r| r.0),
            max_write_bytes_per_s: e.max_write.map(|r| r.0),
            write_limit_by: e.write_limit_by.clone(),
            memory_bytes_per_s: e.memory_bandwidth.map(|r| r.0),
            parity_on_controller: e.parity_on_controller,
            lun_read_bytes_per_s: e.lun_read.map(|r| r.0),
            lun_write_bytes_per_s: e.lun_write.map(|r| r.0),
            cmd_latency_s: e.cmd_latency.map(|t| t.0),
            class: e.class.clone(),
            typical_write: self.typical(c)?,
            mirror: e
                .mirror_link
                .as_ref()
                .map(|l| self.link_at(c.file, l))
                .transpose()?,
            write_back: e.write_back,
            max_drives: e.max_drives,
            price: e.price,
            currency: e.currency.clone(),
            ..ControllerSpec::new(
                e.name.get_ref().clone(),
                self.link_at(c.file, &e.backend)?,
                self.link_at(c.file, &e.host)?,
            )
        })
    }

    /// A controller entry's typical write range: both ends, low ≤ high,
    /// with a class and the measurements' sources (a range without them is
    /// refused: only sourced figures may stand beside a bound).
    fn typical(
        &self,
        c: &Sourced<ControllerEntry>,
    ) -> Result<Option<crate::hardware::TypicalRange>, PlanError> {
        let e = &c.entry;
        let Some((lo, hi)) = e.typical_write else {
            return Ok(None);
        };
        let refuse = |why: &str| {
            self.err_at(
                c.file,
                e.name.span(),
                format!("controller '{}': typical_write {why}", e.name.get_ref()),
            )
        };
        let source = match (&e.class, &e.typical_source) {
            (Some(_), Some(s)) if !s.trim().is_empty() => s.clone(),
            _ => {
                return Err(refuse(
                    "needs class (the era and kind of part) and typical_source (the published measurements it is taken from)",
                ));
            }
        };
        if !(lo.0 > 0.0 && lo.0 <= hi.0) {
            return Err(refuse(
                "must be two rates, low then high, e.g. [\"300MB/s\", \"600MB/s\"]",
            ));
        }
        Ok(Some(crate::hardware::TypicalRange {
            low_bytes_per_s: lo.0,
            high_bytes_per_s: hi.0,
            source,
        }))
    }

    /// An enclosure by name.
    pub fn enclosure(&self, name: &str) -> Result<EnclosureSpec, PlanError> {
        let c = self
            .enclosures
            .iter()
            .find(|d| d.entry.name.get_ref().eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| self.unknown("enclosure", name, self.enclosure_names()))?;
        self.resolve_enclosure(c)
    }

    fn resolve_enclosure(&self, c: &Sourced<EnclosureEntry>) -> Result<EnclosureSpec, PlanError> {
        let e = &c.entry;
        if e.slots == 0 {
            return Err(self.err_at(c.file, e.name.span(), "slots must be at least 1".into()));
        }
        Ok(EnclosureSpec {
            name: e.name.get_ref().clone(),
            slots: e.slots,
            uplink: self.link_at(c.file, &e.uplink)?,
            price: e.price,
            currency: e.currency.clone(),
            hot_spares: 0,
        })
    }
}

enum LinkErr {
    Unknown(String),
    Bad(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_of_the_wrong_type_names_the_expected_form_not_serde_internals() {
        let text = "[[drive]]\nname = \"x\"\nkind = \"hdd\"\ncapacity = true\n";
        let e = Catalog::builtin()
            .extend("cat.toml", text)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("cat.toml:4:")
                && e.contains("expected a size like 4k or a number")
                && e.contains("boolean")
                && !e.contains("untagged"),
            "{e}"
        );
    }

    #[test]
    fn plain_tcp_and_jumbo_gbe_links_are_framing_bounds() {
        // 1.25 Gbaud x 8/10 / 8 = 125 MB/s; x 1448/1538 (MTU 1500) = 117.5,
        // x 8948/9038 (MTU 9000) = 123.75 MB/s.
        let c = Catalog::builtin();
        let rate = |n: &str| c.link(n).unwrap().bytes_per_s;
        assert!((rate("1gbe-tcp") - 117.5e6).abs() < 1.0);
        assert!((rate("1gbe-tcp-jumbo") - 123.75e6).abs() < 1.0);
        assert!((rate("10gbe-tcp") - 10.3125e9 * 64.0 / 66.0 / 8.0 * 0.94).abs() < 1.0);
        assert!(rate("10gbe-tcp-jumbo") > rate("10gbe-tcp"));
        // Jumbo iSCSI on GbE: the measured 0.88 x about 5 %.
        let j = c.link("1gbe-iscsi-jumbo").unwrap();
        assert!((j.bytes_per_s - 115e6).abs() < 1.0 && (j.write_rate() - 110e6).abs() < 1.0);
    }

    #[test]
    fn builtin_loads_and_resolves_everything() {
        let c = Catalog::builtin();
        assert!(c.drive_names().len() >= 10);
        for n in c.drive_names() {
            let d = c.drive(n).unwrap();
            assert!(d.capacity_bytes > 0 && d.mtbf_hours > 0.0);
        }
        for n in c.controller_names() {
            c.controller(n).unwrap();
        }
        for n in c.enclosure_names() {
            c.enclosure(n).unwrap();
        }
        for e in c.links() {
            assert!(!e.source.is_empty());
        }
        assert!(c.drives().all(|d| !d.source.is_empty()));
    }

    #[test]
    fn link_rates_follow_the_standards() {
        let c = Catalog::builtin();
        let mbs = |s: &str| c.link(s).unwrap().bytes_per_s / 1e6;
        assert!((mbs("sas12") - 1200.0 * 0.95).abs() < 1e-6);
        assert!((mbs("sas12x4") - 4.0 * 1200.0 * 0.95).abs() < 1e-6);
        assert!((mbs("sas24") - 2400.0 * 0.95).abs() < 1e-6);
        assert!((mbs("fc8") - 799.0).abs() < 1.0);
        assert!((mbs("fc16") - 1598.0).abs() < 2.0);
        assert!((mbs("pcie3x8") - 8.0 * 984.6 * 0.9).abs() < 1.0);
        assert!((mbs("u320") - 272.0).abs() < 1e-6);
        assert!(c.link("sas12x4").unwrap().lanes == 4);
        let e = c.link("sas13x4").unwrap_err().to_string();
        assert!(e.contains("did you mean") && e.contains("sas12"), "{e}");
        assert!(c.link("sas12x0").is_err());
    }

    #[test]
    fn links_have_a_rate_per_direction() {
        let c = Catalog::builtin();
        let l = c.link("1gbe-iscsix2").unwrap();
        // 2 x 125 MB/s x 0.88 reading, x 0.84 writing.
        assert!((l.bytes_per_s - 220e6).abs() < 1.0, "{}", l.bytes_per_s);
        assert!((l.write_rate() - 210e6).abs() < 1.0, "{}", l.write_rate());
        let sas = c.link("sas12x4").unwrap();
        assert_eq!(sas.write_bytes_per_s, None);
        let mut c2 = c.clone();
        let e = c2
            .extend(
                "l.toml",
                "[[link]]\nname = \"x\"\nrate = \"100MB/s\"\nwrite_efficiency = 1.5\nsource = \"me\"\n[[controller]]\nname = \"c\"\nbackend = \"x\"\nhost = \"x\"\nsource = \"me\"\n",
            )
            .unwrap_err()
            .to_string();
        assert!(e.contains("write_efficiency"), "{e}");
    }

    #[test]
    fn disks_use_the_zone_average_and_a_command_overhead() {
        let c = Catalog::builtin();
        let d = c.drive("exos-x18-18tb").unwrap();
        match d.media {
            DriveMedia::Hdd {
                seq_bytes_per_s, ..
            } => assert!((seq_bytes_per_s - 202.5e6).abs() < 1.0, "{seq_bytes_per_s}"),
            _ => panic!("a disk"),
        }
        assert_eq!(d.seq_outer_bytes_per_s, Some(270e6));
        assert_eq!(d.cmd_overhead_s, DEFAULT_HDD_CMD_OVERHEAD_S);
        assert_eq!(c.drive("p4510-4tb").unwrap().cmd_overhead_s, 0.0);
        let p = c.controller("perc-6e").unwrap();
        assert_eq!(p.max_read_bytes_per_s, Some(1.5e9));
        let e = c.controller("equallogic-ps4000").unwrap();
        assert!(e.write_limit_by.is_some());
        assert!(c.controllers().all(|x| !x.source.is_empty()));
        // Half a zone pair is an error that says what to add.
        let mut c2 = c.clone();
        let text = "[[drive]]\nname = \"d\"\nkind = \"hdd\"\ncapacity = \"2TB\"\nrpm = 7200\navg_seek = \"8ms\"\nseq_rate_max = \"200MB/s\"\nmtbf = \"1000000h\"\nber = 1e-15\nsector_size = 512\nrebuild_rate = \"50MB/s\"\nsource = \"me\"\n";
        let e = c2.extend("z.toml", text).unwrap_err().to_string();
        assert!(e.contains("seq_rate_min"), "{e}");
    }

    /// The arrays of published HPC studies carry the figures their manuals
    /// give, and none they do not.
    #[test]
    fn hpc_study_arrays_have_their_documented_figures() {
        let c = Catalog::builtin();
        // SANnet II 200 FC manual: four 2Gb FC host channels, two 2Gb FC
        // drive channels, write-back cache mirrored to the partner.
        let d = c.controller("dothill-sannet2-200fc").unwrap();
        assert_eq!(d.host.lanes, 4);
        assert_eq!(d.backend.lanes, 2);
        let fc2 = c.link("fc2").unwrap().bytes_per_s;
        assert!((d.host.bytes_per_s - 4.0 * fc2).abs() < 1.0);
        assert!((d.backend.bytes_per_s - 2.0 * fc2).abs() < 1.0);
        assert!(d.write_back && d.write_limit_by.is_some());
        // No limit was published: none is invented.
        assert_eq!(d.max_read_bytes_per_s, None);
        assert_eq!(d.max_write_bytes_per_s, None);
        assert_eq!(d.max_bytes_per_s, None);
        assert_eq!(d.max_drives, None);
        let e = c
            .controllers()
            .find(|e| e.name.get_ref() == "dothill-sannet2-200fc")
            .unwrap();
        assert!(e.source.contains("83-00003261") && e.source.contains("7124"));
    }

    #[test]
    fn unknown_names_suggest() {
        let c = Catalog::builtin();
        let e = c.drive("exos-x18-18").unwrap_err().to_string();
        assert!(e.contains("did you mean 'exos-x18-18tb'"), "{e}");
        let e = c.controller("megaraid-9361").unwrap_err().to_string();
        assert!(e.contains("megaraid-9361-8i"), "{e}");
    }

    #[test]
    fn bad_files_report_line_and_column() {
        let mut c = Catalog::builtin();
        let e = c
            .extend("mine.toml", "[[drive]]\nname = \"a\"\ncolour = \"red\"\n")
            .unwrap_err();
        match &e {
            PlanError::Catalog { file, line, .. } => {
                assert_eq!(file, "mine.toml");
                assert_eq!(*line, 3);
            }
            other => panic!("{other}"),
        }
        assert!(e.to_string().contains("colour"), "{e}");
        // A failed file leaves the catalog as it was.
        assert_eq!(
            c.drive_names().len(),
            Catalog::builtin().drive_names().len()
        );
        let e = c.extend("x.toml", "[[drive]\n").unwrap_err();
        assert!(e.to_string().starts_with("x.toml:1:"), "{e}");
        let text = "[[drive]]\nname = \"d\"\nkind = \"hdd\"\ncapacity = \"2TB\"\nrpm = 7200\navg_seek = \"8ms\"\nseq_rate = \"fast\"\nmtbf = \"1000000h\"\nber = 1e-15\nsector_size = 512\nrebuild_rate = \"50MB/s\"\nsource = \"me\"\n";
        let e = c.extend("y.toml", text).unwrap_err().to_string();
        assert!(e.starts_with("y.toml:7:"), "{e}");
        assert!(e.contains("invalid rate"), "{e}");
        let e = c
            .extend(
                "z.toml",
                "[[controller]]\nname = \"c\"\nbackend = \"sas12x4\"\nhost = \"pcie9x8\"\nsource = \"me\"\n",
            )
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("z.toml:4:"), "{e}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(96))]

        #[test]
        fn link_specs_never_panic(s in "\\PC{0,16}", lanes in "(x[0-9]{0,12})?") {
            let c = Catalog::builtin();
            let _ = c.link(&s);
            let _ = c.link(&format!("sas12{lanes}"));
            let _ = c.link(&format!("{s}{lanes}"));
        }

        #[test]
        fn catalog_text_never_panics(s in "\\PC{0,200}") {
            let mut c = Catalog::default();
            let _ = c.extend("fuzz.toml", &s);
        }

        #[test]
        fn near_miss_entries_never_panic(
            key in "(name|kind|capacity|rpm|avg_seek|seq_rate|seq_rate_max|seq_rate_min|cmd_overhead|mtbf|afr|ber|sector_size|rebuild_rate|source|slots|uplink|max_read|max_write|write_limit_by|read_efficiency|write_efficiency)",
            val in "(\"[a-z0-9./%]{0,8}\"|-?[0-9]{1,5}(\\.[0-9])?|1e-1[0-9])",
            table in "(drive|controller|enclosure|link)",
        ) {
            let mut c = Catalog::builtin();
            let _ = c.extend("fuzz.toml", &format!("[[{table}]]\n{key} = {val}\nname = \"n\"\nsource = \"s\"\n"));
        }
    }

    #[test]
    fn user_entries_add_and_replace() {
        let mut c = Catalog::builtin();
        let n = c.drive_names().len();
        let text = "[[drive]]\nname = \"exos-x18-18tb\"\nkind = \"hdd\"\ncapacity = \"18TB\"\nrpm = 7200\navg_seek = \"8ms\"\nseq_rate = \"250MB/s\"\nafr = \"1.5%\"\nber = 1e-15\nsector_size = 4096\nrebuild_rate = \"100MB/s\"\nprice = 400\nsource = \"my quote\"\n";
        c.extend("mine.toml", text).unwrap();
        assert_eq!(c.drive_names().len(), n);
        let d = c.drive("exos-x18-18tb").unwrap();
        assert_eq!(d.price, Some(400.0));
        assert!((crate::reliability::afr_from_mtbf(d.mtbf_hours) - 0.015).abs() < 1e-9);
    }
}

#[cfg(test)]
mod override_tests {
    use super::*;

    /// One field of a built-in entry changes; every other field, and the
    /// other entries, stay as built in; the source says what changed.
    #[test]
    fn an_override_changes_one_field_and_keeps_the_rest() {
        let built = Catalog::builtin();
        let mut cat = Catalog::builtin();
        cat.extend(
            "mine.toml",
            "[override.drive.\"EXOS-X18-18TB\"]\nprice = 280\n\n[override.enclosure.\"jbod-2u24-sas12\"]\nslots = 25\n",
        )
        .unwrap();
        let (a, b) = (
            built.drive("exos-x18-18tb").unwrap(),
            cat.drive("exos-x18-18tb").unwrap(),
        );
        assert_eq!(b.price, Some(280.0));
        assert_eq!(b.currency, None);
        assert_eq!(
            DriveSpec {
                price: None,
                ..b.clone()
            },
            a
        );
        assert_eq!(cat.enclosure("jbod-2u24-sas12").unwrap().slots, 25);
        let e = cat
            .drives()
            .find(|d| d.name.get_ref() == "exos-x18-18tb")
            .unwrap();
        assert!(
            e.source.ends_with("; price set by mine.toml"),
            "{}",
            e.source
        );
        assert_eq!(cat.drive_names(), built.drive_names());
        // A later override of the overridden entry builds on it.
        cat.extend(
            "more.toml",
            "[override.drive.\"exos-x18-18tb\"]\ncurrency = \"EUR\"\n",
        )
        .unwrap();
        let c = cat.drive("exos-x18-18tb").unwrap();
        assert_eq!((c.price, c.currency.as_deref()), (Some(280.0), Some("EUR")));
    }

    #[test]
    fn a_bad_override_names_the_entry_the_field_and_the_fix() {
        let mut cat = Catalog::builtin();
        let text = "# prices\n\n[override.drive.\"exos-x18\"]\nprice = 1\n";
        let e = cat.extend("p.toml", text).unwrap_err().to_string();
        assert!(
            e.starts_with("p.toml:3:1: [override.drive.\"exos-x18\"]"),
            "{e}"
        );
        assert!(e.contains("did you mean 'exos-x18-18tb'"), "{e}");
        let e = cat
            .extend(
                "p.toml",
                "[override.drive.\"exos-x18-18tb\"]\nname = \"x\"\n",
            )
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot rename"), "{e}");
        let e = cat
            .extend(
                "p.toml",
                "[override.drive.\"exos-x18-18tb\"]\nprice = \"cheap\"\n",
            )
            .unwrap_err()
            .to_string();
        assert!(e.contains("p.toml") && e.contains("price"), "{e}");
        let e = cat
            .extend("p.toml", "[override.drive.\"exos-x18-18tb\"]\nrpm = 0\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("p.toml"), "{e}");
        // The catalog is as it was after each refusal.
        assert_eq!(
            cat.drive("exos-x18-18tb").unwrap(),
            Catalog::builtin().drive("exos-x18-18tb").unwrap()
        );
    }
}
