//! The scenario file: an architecture and a workload in TOML, read into a
//! [`Scenario`] and resolved (catalog names looked up, units parsed, every
//! value checked) into a [`Resolved`] the solvers use. Errors quote the file,
//! line and column, or the key, and say what to write instead.
//!
//! `--vary KEY=V1,V2,...` edits the TOML table ([`Scenario::with`]) and
//! resolves again, so any scenario value can be swept; [`parse_vary`] reads
//! the argument.

use crate::catalog::SimCatalog;
use crate::error::SimError;
use serde::{Deserialize, Serialize};
use storlab_types::params::{SIM_PARAMS, sim_lookup, sim_param_at};
use storlab_types::text::line_col;
use storlab_types::{parse_duration, parse_rate, parse_size};
use toml::Spanned;

/// A number or a string with a unit, as written.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Quantity {
    Int(i64),
    Float(f64),
    Text(String),
}

/// What a scenario value must look like, for the type error of any other
/// (a derived untagged enum said "data did not match any variant of
/// untagged enum Quantity").
const QUANTITY_EXPECTED: &str =
    "a number or a string with a unit, such as 4, \"1MiB\", \"1.6GB/s\" or \"5ms\"";

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Quantity;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(QUANTITY_EXPECTED)
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Quantity, E> {
                Ok(Quantity::Int(v))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Quantity, E> {
                Ok(i64::try_from(v).map_or(Quantity::Float(v as f64), Quantity::Int))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Quantity, E> {
                Ok(Quantity::Float(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Quantity, E> {
                Ok(Quantity::Text(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

impl Quantity {
    fn text(&self) -> String {
        match self {
            Quantity::Int(i) => i.to_string(),
            Quantity::Float(f) => f.to_string(),
            Quantity::Text(s) => s.clone(),
        }
    }
}

type Q = Spanned<Quantity>;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioFile {
    name: Option<String>,
    #[serde(default)]
    description: String,
    #[serde(default = "one_u64")]
    seed: u64,
    #[serde(default)]
    cache_policy: CachePolicy,
    clients: ClientsSection,
    #[serde(default)]
    network: NetworkSection,
    movers: Option<MoversSection>,
    #[serde(default)]
    filesystem: FsSection,
    array: ArraySection,
    workload: WorkloadSection,
}

/// What the read caches keep of data re-read in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CachePolicy {
    /// A cache holds what fits and keeps it while a larger sequential
    /// re-read passes (the first part of the data hits): array and
    /// page caches that detect streams behave so.
    #[default]
    ScanResistant,
    /// Least recently used: a sequential re-read larger than the cache
    /// evicts each block before it is wanted again, so it hits nothing; one
    /// that fits hits everything. Random reads hit cache / working set
    /// under either policy.
    Lru,
}

fn one_u64() -> u64 {
    1
}
fn one_u32() -> u32 {
    1
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClientsSection {
    count: Spanned<u32>,
    nic: Q,
    rate: Option<Q>,
    page_cache: Option<Q>,
    page_cache_rate: Option<Q>,
    /// The page cache's policy; default the scenario's `cache_policy`.
    cache_policy: Option<CachePolicy>,
    /// Processes per client, each running the workload (its own file for
    /// n-n) with `iodepth` in flight; they share the client's NIC, own
    /// limit and page cache.
    #[serde(default = "one_u32")]
    processes: u32,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct NetworkSection {
    uplink: Option<Q>,
    #[serde(default = "one_u32")]
    uplinks: u32,
    /// Without `uplink`: the uplink is the clients' NICs together / this.
    oversubscription: Option<f64>,
    latency: Option<Q>,
}

impl Default for NetworkSection {
    fn default() -> Self {
        NetworkSection {
            uplink: None,
            uplinks: 1,
            oversubscription: None,
            latency: None,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct MoversSection {
    count: Spanned<u32>,
    client_port: Q,
    #[serde(default = "one_u32")]
    client_ports: u32,
    storage_port: Q,
    #[serde(default = "one_u32")]
    storage_ports: u32,
    rate: Option<Q>,
    cache: Option<Q>,
    /// The movers' read cache policy; default the scenario's.
    cache_policy: Option<CachePolicy>,
    /// Each mover serves only its own targets (a Lustre OSS its OSTs):
    /// array a is behind mover a mod count, and a request goes through the
    /// mover of the array its data is on. Default: a client uses one mover.
    #[serde(default)]
    own_targets: bool,
    /// "802.3ad": the client ports are a bond that hashes each client's
    /// connection onto one link; default: a perfect pool.
    bonding: Option<Spanned<String>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FsSection {
    kind: Option<Spanned<String>>,
    lock_handoff: Option<Q>,
    stripe_size: Option<Q>,
    stripe_count: Option<Spanned<u32>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ArraySection {
    #[serde(default = "one_u32")]
    count: u32,
    /// Front-end port; without it a catalog controller's host link.
    port: Option<Q>,
    #[serde(default = "one_u32")]
    ports: u32,
    cache: Option<Q>,
    cache_rate: Option<Q>,
    read_limit: Option<Q>,
    write_limit: Option<Q>,
    backend: Option<Q>,
    backend_iops: Option<Q>,
    raid: Option<Spanned<String>>,
    drive: Option<Spanned<String>>,
    /// A RAID controller from plan's catalog: plan's model of it applies.
    controller: Option<Spanned<String>>,
    /// The array cache's policy; default the scenario's.
    cache_policy: Option<CachePolicy>,
    /// LUNs the clients' data spreads over (per-LUN rates, paths in use).
    #[serde(default = "one_u32")]
    luns: u32,
    /// One LUN's read-ahead and destage rates (a measured single-LUN limit).
    lun_read_rate: Option<Q>,
    lun_write_rate: Option<Q>,
    /// "failover" or "balanced"; without it every port works.
    multipath: Option<Spanned<String>>,
    /// "active-active" (default) or "active-passive".
    ownership: Option<Spanned<String>>,
    /// Controllers whose ports make up the array's ports (active-passive).
    #[serde(default = "two_u32")]
    controller_count: u32,
    /// The controller's own time per command (a measured or published
    /// figure): part of one request's round trip.
    latency: Option<Q>,
}

fn two_u32() -> u32 {
    2
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkloadSection {
    pattern: Spanned<String>,
    #[serde(default)]
    sharing: Option<Spanned<String>>,
    bs: Q,
    file_size: Q,
    #[serde(default = "one_u32")]
    iodepth: u32,
    #[serde(default)]
    warm: bool,
    /// `pattern = "rw"` or `"randrw"`: the percentage of requests that
    /// read (fio's word; default 50).
    rwmixread: Option<Spanned<f64>>,
}

/// I/O pattern of the workload: the one pattern type plan's model uses
/// too (`storlab_types::Pattern`); a scenario names it with fio's words
/// and its echo writes them back (`pattern::fio_word`).
pub use storlab_types::Pattern;

/// Who writes which file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Sharing {
    /// N clients, N files (file per process).
    #[serde(rename = "n-n")]
    NN,
    /// N clients, one shared file.
    #[serde(rename = "n-1")]
    N1,
}

/// The file-system layer between clients and arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FsKind {
    /// A cluster file system on a shared block volume striped over every
    /// array; a distributed lock manager serialises writes to one file.
    SharedBlock,
    /// A parallel file system: each file striped over `stripe_count` servers.
    Parallel,
}

/// Data movers (I/O servers) between the clients and the arrays.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Movers {
    pub count: u32,
    /// All client-side ports of one mover, bytes/s.
    pub client_side_bytes_per_s: f64,
    /// All storage-side ports of one mover, bytes/s.
    pub storage_side_bytes_per_s: f64,
    /// What one mover itself can move (CPU, memory), bytes/s.
    pub rate_bytes_per_s: Option<f64>,
    pub cache_bytes: u64,
    /// Movers own their targets: the data path follows the data's array.
    pub own_targets: bool,
}

/// A storage array or RAID controller with its drives.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Array {
    pub count: u32,
    /// All front-end ports of one array, bytes/s.
    pub ports_bytes_per_s: f64,
    pub cache_bytes: u64,
    /// Controller limit for this workload's direction (cache speed, read or
    /// write limit), bytes/s.
    pub controller_bytes_per_s: Option<f64>,
    /// Back end (drives and RAID work) for this workload, bytes/s.
    pub backend_bytes_per_s: f64,
    /// Where the back-end figure came from.
    pub backend_source: String,
    /// Independent servers inside the back end for random requests (the
    /// drives); 1 for streams or a back end given as one figure.
    pub backend_units: u32,
    /// Parts of the array without a published limit for this workload
    /// (plan's `path::unknowns`): the answer is then an upper bound.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknowns: Vec<String>,
    /// Beside such a bound, what comparable parts of the controller's class
    /// measured, or that no sourced range exists (plan's
    /// `path::typical_write`; docs/MODEL.md §3.13).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub typical: Option<storlab_plan::path::Typical>,
    /// The controller's own time per request, s (`array.latency`, or the
    /// catalog controller's `cmd_latency`; 0 when neither gives it).
    pub cmd_latency_s: f64,
    /// The drives' time one request of a stream waits for, s, from plan's
    /// model (0 for random work, whose drives are queues of their own, and
    /// for a back end given as a figure).
    pub drive_latency_s: f64,
    /// Set when the controller's command time is not known: a stream bound
    /// by its round trip is then an upper bound (plan's `path::stream_unknown`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_unknown: Option<String>,
    /// The drives are a calibrated queue (plan's `path::device_queue`: the
    /// drive carries the concurrency knee `plan calibrate` fitted): the
    /// back end is `backend_units` stations of the fitted demand and
    /// `drive_latency_s` is the fitted delay, for streams and random
    /// requests alike, and MVA gives the throughput (docs/SIM.md).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub queued: bool,
    /// A calibrated queue's host centre (plan's `path::DeviceQueue`: the
    /// host's cost per request and per system call, the call shared by the
    /// requests waiting at the host): each stream's own host, a
    /// load-dependent station in front of the array (docs/SIM.md). Zero:
    /// none.
    #[serde(skip_serializing_if = "is_zero")]
    pub host_s: f64,
    #[serde(skip_serializing_if = "is_zero")]
    pub host_call_s: f64,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

impl Array {
    /// The calibrated host centre in front of the array (none: both 0).
    pub fn host(&self) -> storlab_plan::calibrate::HostCentre {
        storlab_plan::calibrate::HostCentre {
            io_s: self.host_s,
            call_s: self.host_call_s,
        }
    }
}

/// The workload every client runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Workload {
    #[serde(serialize_with = "storlab_types::pattern::fio_word::serialize")]
    pub pattern: Pattern,
    pub sharing: Sharing,
    pub bs_bytes: u64,
    /// Per client for N-N; the shared file's size for N-1.
    pub file_size_bytes: u64,
    pub iodepth: u32,
    /// Reads: the data is already where the caches put it (just written or
    /// read before), so each cache holds what fits.
    pub warm: bool,
}

/// Everything the solvers need, every unit resolved.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Resolved {
    pub name: String,
    pub description: String,
    pub seed: u64,
    /// The scenario's default cache policy.
    pub cache_policy: CachePolicy,
    /// Each cache's own policy (a page cache in front of a scan-resistant
    /// array cache), defaulting to `cache_policy`.
    pub page_cache_policy: CachePolicy,
    pub mover_cache_policy: CachePolicy,
    pub array_cache_policy: CachePolicy,
    pub clients: u32,
    /// Processes per client (streams sharing its NIC, own limit and page
    /// cache; each runs the workload).
    pub processes: u32,
    /// One client's NIC, bytes/s.
    pub client_nic_bytes_per_s: f64,
    /// One client's own limit (CPU, application), bytes/s.
    pub client_rate_bytes_per_s: Option<f64>,
    pub page_cache_bytes: u64,
    pub page_cache_bytes_per_s: f64,
    /// The switch's uplinks toward storage, all together, bytes/s.
    pub uplink_bytes_per_s: Option<f64>,
    /// One-way request latency added to every request (network, protocol), s.
    pub latency_s: f64,
    pub movers: Option<Movers>,
    pub fs: FsKind,
    /// DLM: time to hand a file's write lock from one client to another, s.
    pub lock_handoff_s: f64,
    pub stripe_bytes: u64,
    /// Arrays (or servers) one file spans (parallel file system).
    pub stripe_count: u32,
    pub array: Array,
    pub workload: Workload,
}

/// What a full-duplex path with `read` and `write` rates (bytes/s) carries
/// of a workload whose bytes are a share `r` read: each direction carries
/// its share at once, the busier binds (`r = 1`: `read`; `r = 0`:
/// `write`; a symmetric link carries `rate / max(r, 1 − r)` of a mix).
pub fn mixed_rate(r: f64, read: f64, write: f64) -> f64 {
    let t = (r / read).max((1.0 - r) / write);
    if t > 0.0 { 1.0 / t } else { f64::INFINITY }
}

/// What one processor with a `read` and a `write` path (bytes/s) does for a
/// workload whose bytes are a share `r` read: the times add up (plan's
/// controller read and write paths, docs/MODEL.md §3.3).
pub fn serial_rate(r: f64, read: Option<f64>, write: Option<f64>) -> Option<f64> {
    let t = read.map_or(0.0, |x| if r > 0.0 { r / x } else { 0.0 })
        + write.map_or(0.0, |x| if r < 1.0 { (1.0 - r) / x } else { 0.0 });
    (t > 0.0).then(|| 1.0 / t)
}

impl Resolved {
    /// Streams in all: every process of every client runs the workload.
    pub fn streams(&self) -> u32 {
        self.clients.saturating_mul(self.processes.max(1))
    }

    /// One stream's share of a client's resource (NIC, own limit, page
    /// cache and its rate): its processes run the same workload at once.
    pub fn per_stream(&self, x: f64) -> f64 {
        x / f64::from(self.processes.max(1))
    }
}

/// Default speed of a client's page cache (memory copy), bytes/s.
pub const DEFAULT_PAGE_CACHE_RATE: f64 = 4e9;
/// Default DLM lock handoff time (revoke, flush, grant), seconds.
pub const DEFAULT_LOCK_HANDOFF_S: f64 = 0.001;

/// A scenario as read: the text (kept for error positions) and its table.
#[derive(Debug, Clone)]
pub struct Scenario {
    file: String,
    text: String,
    parsed: ScenarioFile,
    /// `--vary` values applied so far, for messages.
    edits: Vec<String>,
}

/// The names `--vary` accepts for the values swept most, in order: each key
/// of the one registry's sim section (`storlab_types::params::SIM_PARAMS`)
/// and its aliases.
/// `storlab sim --vary`'s help: the range forms, and the keys of the
/// registry's sim section.
pub fn vary_help() -> String {
    let keys: Vec<&str> = SIM_PARAMS.iter().map(|p| p.key).collect();
    format!(
        "Sweep one scenario value: clients=1,2,4 or clients=1..10000 (doubling) or \
         clients=1..1000/1000 (evenly spaced) or clients=1..64:x2 or 1..16:+1 \
         (docs/parameters.md); keys: {}, or any dotted path such as array.cache_rate",
        keys.join(", ")
    )
}

fn vary_names() -> Vec<&'static str> {
    SIM_PARAMS
        .iter()
        .flat_map(|p| std::iter::once(p.key).chain(p.aliases.iter().copied()))
        .collect()
}

impl Scenario {
    /// Read scenario `text`; `file` names it in messages.
    pub fn parse(file: &str, text: &str) -> Result<Scenario, SimError> {
        let parsed: ScenarioFile = toml::from_str(text).map_err(|e| {
            let (line, col) = e.span().map_or((1, 1), |s| line_col(text, s.start));
            SimError::Parse {
                file: file.to_string(),
                line,
                col,
                message: e.message().trim().to_string(),
            }
        })?;
        Ok(Scenario {
            file: file.to_string(),
            text: text.to_string(),
            parsed,
            edits: Vec::new(),
        })
    }

    /// The scenario with `key` (dotted, e.g. `array.count`, or a shorthand
    /// such as `clients`) set to `value`.
    pub fn with(&self, key: &str, value: &str) -> Result<Scenario, SimError> {
        let arg = format!("{key}={value}");
        let verr = |message: String| SimError::Vary {
            arg: arg.clone(),
            message,
        };
        let path = sim_lookup(key).and_then(|p| p.option).unwrap_or(key);
        let mut table: toml::Table = toml::from_str(&self.text)
            .map_err(|e| verr(format!("the scenario cannot be edited: {}", e.message())))?;
        let parts: Vec<&str> = path.split('.').collect();
        if parts.iter().any(|p| p.is_empty()) {
            return Err(verr(
                "the key is empty; write e.g. clients=1,2,4 or array.count=1,2,3".into(),
            ));
        }
        let Some((last, sections)) = parts.split_last() else {
            return Err(verr("the key is empty".into()));
        };
        let mut t = &mut table;
        for s in sections {
            let entry = t
                .entry((*s).to_string())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            t = entry
                .as_table_mut()
                .ok_or_else(|| verr(format!("`{s}` is a value, not a section")))?;
        }
        let v = if let Ok(i) = value.parse::<i64>() {
            toml::Value::Integer(i)
        } else if let Ok(f) = value.parse::<f64>() {
            toml::Value::Float(f)
        } else if value == "true" || value == "false" {
            toml::Value::Boolean(value == "true")
        } else {
            toml::Value::String(value.to_string())
        };
        t.insert((*last).to_string(), v);
        let text = toml::to_string(&table)
            .map_err(|e| verr(format!("the edited scenario cannot be written: {e}")))?;
        let mut s = Scenario::parse(&self.file, &text).map_err(|e| {
            let msg = match e {
                SimError::Parse { message, .. } => message,
                other => other.to_string(),
            };
            verr(format!(
                "{msg} (keys: {}; or a dotted path such as array.cache_rate)",
                vary_names().join(", ")
            ))
        })?;
        s.edits = self.edits.clone();
        s.edits.push(arg);
        Ok(s)
    }

    pub fn file(&self) -> &str {
        &self.file
    }

    fn at<T>(&self, q: &Spanned<T>, message: String) -> SimError {
        if self.edits.is_empty() {
            let (line, col) = line_col(&self.text, q.span().start);
            SimError::Parse {
                file: self.file.clone(),
                line,
                col,
                message,
            }
        } else {
            SimError::Vary {
                arg: self.edits.join(" "),
                message,
            }
        }
    }

    fn size(&self, key: &str, q: &Q) -> Result<u64, SimError> {
        let s = q.get_ref().text();
        parse_size(&s).map_err(|e| self.at(q, format!("{key}: {e} (e.g. 4GiB, 512MiB, 0)")))
    }

    fn rate(&self, key: &str, q: &Q) -> Result<f64, SimError> {
        let s = q.get_ref().text();
        let r = parse_rate(&s)
            .map_err(|e| self.at(q, format!("{key}: {e} (e.g. 200MB/s, 1.5GB/s)")))?;
        if r <= 0.0 {
            return Err(self.at(q, format!("{key}: must be above zero")));
        }
        Ok(r)
    }

    /// The share of the workload's bytes that are read (1 for reads, 0 for
    /// writes, `rwmixread` / 100 for a mix): links are read in the
    /// directions the data goes.
    fn read_fraction(&self) -> f64 {
        let w = &self.parsed.workload;
        match w.pattern.get_ref().as_str() {
            "write" | "randwrite" => 0.0,
            "rw" | "randrw" => w
                .rwmixread
                .as_ref()
                .map_or(0.5, |p| (p.get_ref() / 100.0).clamp(0.0, 1.0)),
            _ => 1.0,
        }
    }

    /// A link from the catalog (`fc1`, `10gbe-iscsi`, `fc4x2`) or a rate,
    /// in the direction the workload moves data; for a mix, what the
    /// full-duplex link carries of it (each direction its share:
    /// `1 / max(r / read rate, (1 − r) / write rate)`, plan's
    /// `LinkSpec::capacity`).
    fn link(&self, key: &str, q: &Q, cat: &SimCatalog) -> Result<f64, SimError> {
        let s = q.get_ref().text();
        let (read, write) = if let Ok(r) = parse_rate(&s) {
            if r <= 0.0 {
                return Err(self.at(q, format!("{key}: must be above zero")));
            }
            (r, r)
        } else {
            let rate = |w| {
                cat.link_rate(&s, w)
                    .map_err(|e| self.at(q, format!("{key}: {e}; or give a rate such as 100MB/s")))
            };
            (rate(false)?, rate(true)?)
        };
        Ok(mixed_rate(self.read_fraction(), read, write))
    }

    fn count(
        &self,
        key: &str,
        n: u32,
        q: Option<&Spanned<u32>>,
        max: u32,
    ) -> Result<u32, SimError> {
        // A value a `--vary` key sets is bounded and refused by the one
        // registry, worded as every out-of-bounds value is.
        if let Some(p) = sim_param_at(key) {
            debug_assert_eq!(p.max, Some(u64::from(max)), "{key}");
            if let Err(e) = p.check_number(u64::from(n)) {
                return Err(match q {
                    Some(q) => self.at(q, format!("{key}: {e}")),
                    None => self.invalid(key, e.to_string()),
                });
            }
            return Ok(n);
        }
        if n == 0 || n > max {
            let message = format!("{key} = {n}: must be from 1 to {max}");
            return Err(match q {
                Some(q) => self.at(q, message),
                None => self.invalid(key, message),
            });
        }
        Ok(n)
    }

    fn invalid(&self, key: &str, message: String) -> SimError {
        if self.edits.is_empty() {
            SimError::Invalid {
                file: self.file.clone(),
                key: key.to_string(),
                message,
            }
        } else {
            SimError::Vary {
                arg: self.edits.join(" "),
                message: format!("{key}: {message}"),
            }
        }
    }

    fn movers(&self, cat: &SimCatalog, clients: u32) -> Result<Option<Movers>, SimError> {
        Ok(match &self.parsed.movers {
            None => None,
            Some(m) => {
                let count = self.count(
                    "movers.count",
                    *m.count.get_ref(),
                    Some(&m.count),
                    1_000_000,
                )?;
                let cp = self.count("movers.client_ports", m.client_ports, None, 1024)?;
                // A bond hashes each client's connection onto one of its
                // links: the links in use, not all of them, carry traffic.
                let cp_used = match &m.bonding {
                    None => f64::from(cp),
                    Some(b) if b.get_ref() == "802.3ad" => storlab_plan::path::bonded_links_in_use(
                        cp,
                        u64::from(clients).div_ceil(u64::from(count)),
                    ),
                    Some(b) => {
                        return Err(self.at(
                            b,
                            format!(
                                "movers.bonding = \"{}\": write \"802.3ad\" (per-flow hashing) or leave it out (a perfect pool)",
                                b.get_ref()
                            ),
                        ));
                    }
                };
                let sp = self.count("movers.storage_ports", m.storage_ports, None, 1024)?;
                Some(Movers {
                    count,
                    client_side_bytes_per_s: self.link(
                        "movers.client_port",
                        &m.client_port,
                        cat,
                    )? * cp_used,
                    storage_side_bytes_per_s: self.link(
                        "movers.storage_port",
                        &m.storage_port,
                        cat,
                    )? * f64::from(sp),
                    rate_bytes_per_s: m
                        .rate
                        .as_ref()
                        .map(|q| self.rate("movers.rate", q))
                        .transpose()?,
                    cache_bytes: m
                        .cache
                        .as_ref()
                        .map(|q| self.size("movers.cache", q))
                        .transpose()?
                        .unwrap_or(0),
                    own_targets: m.own_targets,
                })
            }
        })
    }

    /// (kind, lock handoff s, stripe bytes, stripe count).
    fn filesystem(&self) -> Result<(FsKind, f64, u64, u32), SimError> {
        let f = &self.parsed.filesystem;
        let fs = match &f.kind {
            None => FsKind::SharedBlock,
            Some(k) if k.get_ref() == "shared-block" => FsKind::SharedBlock,
            Some(k) if k.get_ref() == "parallel" => FsKind::Parallel,
            Some(k) => {
                let other = k.get_ref();
                return Err(self.at(
                    k,
                    format!("filesystem.kind = \"{other}\": write \"shared-block\" (cluster file system with a lock manager on a SAN volume) or \"parallel\" (files striped over servers)"),
                ));
            }
        };
        let lock_handoff_s = match &f.lock_handoff {
            None => DEFAULT_LOCK_HANDOFF_S,
            Some(q) => parse_duration(&q.get_ref().text())
                .map_err(|e| self.at(q, format!("filesystem.lock_handoff: {e} (e.g. 1ms)")))?
                .as_secs_f64(),
        };
        let stripe_bytes = f
            .stripe_size
            .as_ref()
            .map(|q| self.size("filesystem.stripe_size", q))
            .transpose()?
            .unwrap_or(1 << 20);
        if stripe_bytes == 0 {
            return Err(self.invalid(
                "filesystem.stripe_size",
                "must be above zero (e.g. 1MiB)".into(),
            ));
        }
        let array_count = self.count("array.count", self.parsed.array.count, None, 1_000_000)?;
        let stripe_count = match &f.stripe_count {
            None => array_count,
            Some(q) => self.count("filesystem.stripe_count", *q.get_ref(), Some(q), 1_000_000)?,
        };
        if fs == FsKind::SharedBlock && f.stripe_count.is_some() {
            return Err(self.invalid(
                "filesystem.stripe_count",
                "applies to kind = \"parallel\"; a shared-block volume spans every array".into(),
            ));
        }
        let stripe_count = stripe_count.min(array_count);

        Ok((fs, lock_handoff_s, stripe_bytes, stripe_count))
    }

    fn workload(&self) -> Result<Workload, SimError> {
        let w = &self.parsed.workload;
        let word = w.pattern.get_ref().as_str();
        let pattern = match (Pattern::from_fio_word(word), word) {
            (Some(p), _) => p,
            (None, "rw" | "randrw") => Pattern::Mix {
                read_pct: self.read_fraction() * 100.0,
                random: word == "randrw",
            },
            (None, other) => {
                return Err(self.at(
                    &w.pattern,
                    format!(
                        "workload.pattern = \"{other}\": write read, write, randread, randwrite, or rw / randrw (a mix, with rwmixread = 70)"
                    ),
                ));
            }
        };
        if let Some(m) = &w.rwmixread {
            let v = *m.get_ref();
            if !matches!(pattern, Pattern::Mix { .. }) {
                return Err(self.at(
                    m,
                    format!("workload.rwmixread applies to pattern = \"rw\" or \"randrw\", not \"{word}\""),
                ));
            }
            if !(0.0..=100.0).contains(&v) {
                return Err(self.at(
                    m,
                    format!("workload.rwmixread = {v}: give the percentage of requests that read, 0 to 100"),
                ));
            }
        }
        let sharing = match &w.sharing {
            None => Sharing::NN,
            Some(s) if s.get_ref() == "n-n" => Sharing::NN,
            Some(s) if s.get_ref() == "n-1" => Sharing::N1,
            Some(s) => {
                let other = s.get_ref();
                return Err(self.at(
                    s,
                    format!("workload.sharing = \"{other}\": write \"n-n\" (a file per client) or \"n-1\" (one shared file)"),
                ));
            }
        };
        let bs = self.size("workload.bs", &w.bs)?;
        if bs == 0 {
            return Err(self.at(&w.bs, "workload.bs: must be above zero (e.g. 1MiB)".into()));
        }
        let file_size = self.size("workload.file_size", &w.file_size)?;
        if file_size < bs {
            return Err(self.at(
                &w.file_size,
                format!("workload.file_size: {file_size} bytes is smaller than one request (bs = {bs}); give at least one block"),
            ));
        }
        let iodepth = self.count("workload.iodepth", w.iodepth, None, 4096)?;

        Ok(Workload {
            pattern,
            sharing,
            bs_bytes: bs,
            file_size_bytes: file_size,
            iodepth,
            warm: w.warm,
        })
    }

    fn array(&self, cat: &SimCatalog, w: &Workload) -> Result<Array, SimError> {
        let a = &self.parsed.array;
        let array_count = self.count("array.count", a.count, None, 1_000_000)?;
        let (pattern, bs) = (w.pattern, w.bs_bytes);
        let ports = self.count("array.ports", a.ports, None, 1024)?;
        let cache = a
            .cache
            .as_ref()
            .map(|q| self.size("array.cache", q))
            .transpose()?
            .unwrap_or(0);
        let mut controller: Option<f64> = a
            .cache_rate
            .as_ref()
            .map(|q| self.rate("array.cache_rate", q))
            .transpose()?;
        let read_limit = a
            .read_limit
            .as_ref()
            .map(|q| self.rate("array.read_limit", q))
            .transpose()?;
        let write_limit = a
            .write_limit
            .as_ref()
            .map(|q| self.rate("array.write_limit", q))
            .transpose()?;
        // One processor: for a mix its read and write paths' times add up.
        let dir_limit = serial_rate(pattern.read_fraction(), read_limit, write_limit);
        if let Some(l) = dir_limit {
            controller = Some(controller.map_or(l, |c| c.min(l)));
        }
        let luns = self.count("array.luns", a.luns, None, 100_000)?;
        let ctrl = self.array_controller(a, cat, luns)?;
        let raid = match (&a.raid, &a.drive) {
            (Some(r), Some(d)) => Some((r, d)),
            (Some(r), None) => {
                return Err(self.at(r, "array.raid needs array.drive (a drive from the catalog, e.g. cheetah-15k7-600gb)".into()));
            }
            (None, Some(d)) => {
                return Err(self.at(
                    d,
                    "array.drive needs array.raid (plan's layout notation, e.g. R5/8/16)".into(),
                ));
            }
            (None, None) => None,
        };
        // plan's model of the array (controller, RAID back end, drives and
        // drive-side links): the one function both tools call.
        let path = cat
            .array_path(
                ctrl.as_ref(),
                raid.map(|(r, d)| (r.get_ref().as_str(), d.get_ref().as_str())),
                pattern,
                bs,
                w.iodepth,
            )
            .map_err(|e| match raid {
                Some((r, _)) => self.at(r, format!("array.raid/array.drive: {e}")),
                None => self.invalid("array.controller", e.to_string()),
            })?;
        if let Some((l, _)) = &path.controller {
            controller = Some(controller.map_or(*l, |c| c.min(*l)));
        }
        let host_lanes = ctrl.as_ref().map_or(1, |c| c.host.lanes);
        // A transparent controller (per-LUN rates or a latency without a
        // catalog controller) has no host link of its own.
        let host_link = path.host_link.filter(|_| a.controller.is_some());
        let (ports_rate, port_count) = match (&a.port, host_link) {
            (Some(q), _) => (self.link("array.port", q, cat)? * f64::from(ports), ports),
            (None, Some(_)) if ports != 1 => {
                return Err(self.invalid(
                    "array.ports",
                    "counts the ports of array.port; without port the controller's host link is the ports (give port = \"fc8\" with ports, or leave ports out)".into(),
                ));
            }
            (None, Some(h)) => (h, host_lanes),
            (None, None) => {
                return Err(self.invalid(
                    "array.port",
                    "give the array's front-end port (port = \"fc8\", ports = 2) or a controller from the catalog (controller = \"perc-6e\"), whose host link is then the ports".into(),
                ));
            }
        };
        let ports_rate = ports_rate * self.ports_in_use(a, port_count, luns)?;
        let drives = path.backend.clone();
        let (backend, backend_source, backend_units, explicit) =
            self.backend(a, drives.as_ref(), pattern, bs)?;
        let rt = path.round_trip;
        let queue = path
            .queue
            .filter(|_| explicit.is_none() && a.backend_iops.is_none());
        let drive_latency_s = if let Some(q) = &queue {
            q.delay_s
        } else if pattern.is_random() || drives.is_none() || explicit.is_some() {
            0.0
        } else {
            rt.drive_s
        };
        Ok(Array {
            count: array_count,
            ports_bytes_per_s: ports_rate,
            cache_bytes: cache,
            controller_bytes_per_s: controller,
            backend_bytes_per_s: backend,
            backend_source,
            backend_units,
            typical: if path.unknowns.is_empty() {
                None
            } else {
                ctrl.as_ref().and_then(storlab_plan::path::typical_write)
            },
            unknowns: path.unknowns,
            cmd_latency_s: rt.controller_s,
            drive_latency_s,
            queued: queue.is_some(),
            host_s: queue.map_or(0.0, |q| q.host_s),
            host_call_s: queue.map_or(0.0, |q| q.host_call_s),
            stream_unknown: match &ctrl {
                Some(c) => storlab_plan::path::stream_unknown(c),
                None => {
                    storlab_plan::path::stream_unknown(&crate::catalog::transparent_controller())
                }
            },
        })
    }

    /// The array's back end for the workload: a figure the scenario gives
    /// (`backend`, `backend_iops`) or plan's (`drives`), with where it came
    /// from, its independent units, and the explicit figure if any.
    fn backend(
        &self,
        a: &ArraySection,
        drives_ref: Option<&crate::catalog::Backend>,
        pattern: Pattern,
        bs: u64,
    ) -> Result<(f64, String, u32, Option<f64>), SimError> {
        let explicit = a
            .backend
            .as_ref()
            .map(|q| self.rate("array.backend", q))
            .transpose()?;
        let explicit_iops = match &a.backend_iops {
            None => None,
            Some(q) => {
                let v: f64 = q.get_ref().text().parse().map_err(|_| {
                    self.at(
                        q,
                        "array.backend_iops: expected a number of operations per second, e.g. 2000"
                            .into(),
                    )
                })?;
                if !(v > 0.0 && v.is_finite()) {
                    return Err(self.at(q, "array.backend_iops: must be above zero".into()));
                }
                Some(v)
            }
        };
        let backend_units = match (drives_ref, explicit_iops, explicit) {
            (Some(b), None, None) => b.units.max(1),
            _ => 1,
        };
        let (backend, backend_source) = if pattern.is_random() {
            match (explicit_iops, drives_ref) {
                (Some(iops), _) => (
                    explicit.map_or(iops * bs as f64, |b| b.min(iops * bs as f64)),
                    format!("backend_iops = {iops}"),
                ),
                (None, Some(b)) => (b.bytes_per_s, b.source.clone()),
                (None, None) => {
                    return Err(self.invalid(
                        "array.backend_iops",
                        "a random workload needs the back end's operations per second: give backend_iops = N, or raid and drive".into(),
                    ));
                }
            }
        } else {
            match (explicit, drives_ref) {
                (Some(b), _) => (b, "backend".to_string()),
                (None, Some(b)) => (b.bytes_per_s, b.source.clone()),
                (None, None) => {
                    return Err(self.invalid(
                        "array.backend",
                        "give the back end's bandwidth (backend = \"400MB/s\"), or raid and drive from the catalog".into(),
                    ));
                }
            }
        };
        Ok((backend, backend_source, backend_units, explicit))
    }

    /// The array's catalog controller with the scenario's per-LUN figures
    /// (a transparent controller when only those are given).
    fn array_controller(
        &self,
        a: &ArraySection,
        cat: &SimCatalog,
        luns: u32,
    ) -> Result<Option<storlab_plan::hardware::ControllerSpec>, SimError> {
        let mut ctrl = a
            .controller
            .as_ref()
            .map(|name| {
                cat.controller(name.get_ref())
                    .map_err(|e| self.at(name, format!("array.controller: {e}")))
            })
            .transpose()?;
        let lun_read = a
            .lun_read_rate
            .as_ref()
            .map(|q| self.rate("array.lun_read_rate", q))
            .transpose()?;
        let lun_write = a
            .lun_write_rate
            .as_ref()
            .map(|q| self.rate("array.lun_write_rate", q))
            .transpose()?;
        let latency = a
            .latency
            .as_ref()
            .map(|q| {
                parse_duration(&q.get_ref().text())
                    .map(|d| d.as_secs_f64())
                    .map_err(|e| self.at(q, format!("array.latency: {e} (e.g. 50us)")))
            })
            .transpose()?;
        if ctrl.is_none() && (lun_read.is_some() || lun_write.is_some() || latency.is_some()) {
            ctrl = Some(crate::catalog::transparent_controller());
        }
        if let Some(c) = ctrl.as_mut() {
            c.cmd_latency_s = latency.or(c.cmd_latency_s);
            c.luns = luns;
            c.lun_read_bytes_per_s = lun_read.or(c.lun_read_bytes_per_s);
            c.lun_write_bytes_per_s = lun_write.or(c.lun_write_bytes_per_s);
        }
        Ok(ctrl)
    }

    /// The share of the array's `ports` that carry traffic with its LUN
    /// ownership and the clients' multipathing (plan's
    /// `path::ports_in_use`); 1 without `multipath`.
    fn ports_in_use(&self, a: &ArraySection, ports: u32, luns: u32) -> Result<f64, SimError> {
        use storlab_plan::path::{Multipath, Ownership, ports_in_use};
        let Some(m) = &a.multipath else {
            if let Some(o) = &a.ownership {
                return Err(self.at(
                    o,
                    "array.ownership applies with array.multipath (\"failover\" or \"balanced\")"
                        .into(),
                ));
            }
            return Ok(1.0);
        };
        let mp = Multipath::parse(m.get_ref())
            .map_err(|e| self.at(m, format!("array.multipath: {e}")))?;
        let own = match &a.ownership {
            None => Ownership::ActiveActive,
            Some(o) => Ownership::parse(o.get_ref())
                .map_err(|e| self.at(o, format!("array.ownership: {e}")))?,
        };
        let ctrls = self.count("array.controller_count", a.controller_count, None, 64)?;
        let used = ports_in_use(ports, ctrls, luns, own, mp);
        Ok(f64::from(used) / f64::from(ports.max(1)))
    }

    /// Look everything up and check it.
    pub fn resolve(&self, cat: &SimCatalog) -> Result<Resolved, SimError> {
        let p = &self.parsed;
        let c = &p.clients;
        let clients = self.count(
            "clients.count",
            *c.count.get_ref(),
            Some(&c.count),
            10_000_000,
        )?;
        let processes = self.count("clients.processes", c.processes, None, 4096)?;
        if u64::from(clients) * u64::from(processes) > 10_000_000 {
            return Err(self.invalid(
                "clients.processes",
                format!(
                    "{clients} clients × {processes} processes: at most 10000000 streams in all"
                ),
            ));
        }
        let client_nic = self.link("clients.nic", &c.nic, cat)?;
        let client_rate = c
            .rate
            .as_ref()
            .map(|q| self.rate("clients.rate", q))
            .transpose()?;
        let page_cache = c
            .page_cache
            .as_ref()
            .map(|q| self.size("clients.page_cache", q))
            .transpose()?
            .unwrap_or(0);
        let page_cache_rate = c
            .page_cache_rate
            .as_ref()
            .map(|q| self.rate("clients.page_cache_rate", q))
            .transpose()?
            .unwrap_or(DEFAULT_PAGE_CACHE_RATE);
        let n = &p.network;
        let uplinks = self.count("network.uplinks", n.uplinks, None, 100_000)?;
        let mut uplink = n
            .uplink
            .as_ref()
            .map(|q| {
                self.link("network.uplink", q, cat)
                    .map(|r| r * f64::from(uplinks))
            })
            .transpose()?;
        if let Some(o) = n.oversubscription {
            if !(o.is_finite() && o >= 1.0) {
                return Err(self.invalid(
                    "network.oversubscription",
                    format!("{o}: must be 1 or more (4 means the uplinks carry a quarter of what the clients' NICs can send)"),
                ));
            }
            if uplink.is_some() {
                return Err(self.invalid(
                    "network.oversubscription",
                    "give either uplink (and uplinks) or oversubscription, not both".into(),
                ));
            }
            uplink = Some(client_nic * f64::from(clients) / o);
        }
        let latency_s = match &n.latency {
            None => 0.0,
            Some(q) => parse_duration(&q.get_ref().text())
                .map_err(|e| self.at(q, format!("network.latency: {e} (e.g. 100us, 1ms)")))?
                .as_secs_f64(),
        };
        // Each process is a connection of its own on a hashed bond.
        let movers = self.movers(cat, clients.saturating_mul(processes))?;
        let (fs, lock_handoff_s, stripe_bytes, stripe_count) = self.filesystem()?;

        let workload = self.workload()?;
        let array = self.array(cat, &workload)?;
        Ok(Resolved {
            name: p.name.clone().unwrap_or_else(|| {
                std::path::Path::new(&self.file).file_stem().map_or_else(
                    || "scenario".to_string(),
                    |s| s.to_string_lossy().into_owned(),
                )
            }),
            description: p.description.clone(),
            seed: p.seed,
            cache_policy: p.cache_policy,
            page_cache_policy: c.cache_policy.unwrap_or(p.cache_policy),
            mover_cache_policy: p
                .movers
                .as_ref()
                .and_then(|m| m.cache_policy)
                .unwrap_or(p.cache_policy),
            array_cache_policy: p.array.cache_policy.unwrap_or(p.cache_policy),
            clients,
            processes,
            client_nic_bytes_per_s: client_nic,
            client_rate_bytes_per_s: client_rate,
            page_cache_bytes: page_cache,
            page_cache_bytes_per_s: page_cache_rate,
            uplink_bytes_per_s: uplink,
            latency_s,
            movers,
            fs,
            lock_handoff_s,
            stripe_bytes,
            stripe_count,
            array,
            workload,
        })
    }
}

/// One `--vary` argument: the key and its values in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Vary {
    pub key: String,
    pub values: Vec<String>,
}

/// Read `KEY=V1,V2,...` with the one range grammar (`docs/parameters.md`):
/// `A..B` (integers) expands to A, 2A, 4A, ... up to B (B included);
/// `A..B/N` to N evenly spaced integers from A to B; `A..B:xN` multiplies
/// by N and `A..B:+N` adds N, as in `sweep --vary`.
pub fn parse_vary(arg: &str) -> Result<Vary, SimError> {
    let err = |m: &str| SimError::Vary {
        arg: arg.to_string(),
        message: m.to_string(),
    };
    let (key, vals) = arg
        .split_once('=')
        .ok_or_else(|| err("expected KEY=V1,V2,... (e.g. clients=1,2,4,8 or clients=1..1024)"))?;
    let key = key.trim();
    if key.is_empty()
        || !key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
    {
        return Err(err(
            "the key must be a scenario key such as clients or array.count",
        ));
    }
    // The one range grammar of `sweep --vary` and `sim --vary`
    // (storlab_types::range): a bare `A..B` doubles here, as it always has.
    let values = storlab_types::range::expand_list(
        vals,
        storlab_types::range::Bare::Doubling,
        storlab_types::range::whole,
        |v| v.to_string(),
    )
    .map_err(|e| err(&e.to_string()))?;
    Ok(Vary {
        key: key.to_string(),
        values,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mix_crosses_links_each_way_and_a_processor_in_turn() {
        // Full duplex: a 70/30 mix on 100 MB/s read, 80 MB/s write moves
        // 1 / max(0.7/100, 0.3/80) = 142.857 MB/s; a symmetric link
        // carries rate / 0.7 of it.
        assert!((mixed_rate(0.7, 100e6, 80e6) - 1e8 / 0.7).abs() < 1e-3);
        assert!((mixed_rate(0.2, 100e6, 80e6) - 80e6 / 0.8).abs() < 1e-3);
        assert_eq!(mixed_rate(1.0, 100e6, 80e6), 100e6);
        assert_eq!(mixed_rate(0.0, 100e6, 80e6), 80e6);
        // One processor: 50/50 on a 100 MB/s read and 50 MB/s write path
        // takes 0.5/100 + 0.5/50 per MB: 66.667 MB/s; a read path alone
        // (1.5 GB/s) carries 1.5 / 0.7 = 2,142.857 MB/s of a 70/30 mix.
        let s = serial_rate(0.5, Some(100e6), Some(50e6)).unwrap();
        assert!((s - 1e8 / 1.5).abs() < 1e-3);
        let s = serial_rate(0.7, Some(1.5e9), None).unwrap();
        assert!((s - 1.5e9 / 0.7).abs() < 1e-3);
        assert_eq!(serial_rate(1.0, None, Some(1e9)), None);
    }
    use proptest::prelude::*;

    pub const BASIC: &str = r#"
name = "basic"
[clients]
count = 4
nic = "1gbe-iscsi"
[array]
port = "fc1"
ports = 2
backend = "400MB/s"
[workload]
pattern = "write"
bs = "1MiB"
file_size = "1GiB"
"#;

    fn cat() -> SimCatalog {
        SimCatalog::builtin()
    }

    #[test]
    fn a_value_of_the_wrong_type_names_the_expected_form_not_serde_internals() {
        for (from, to) in [
            ("bs = \"1MiB\"", "bs = true"),
            ("backend = \"400MB/s\"", "backend = [400]"),
        ] {
            let text = BASIC.replace(from, to);
            let line = text.lines().position(|l| l == to).unwrap() + 1;
            let e = Scenario::parse("s.toml", &text).unwrap_err().to_string();
            assert!(
                e.contains(&format!("s.toml:{line}:"))
                    && e.contains("expected a number or a string with a unit, such as 4")
                    && !e.contains("untagged"),
                "{to}: {e}"
            );
        }
    }

    /// A `--vary` value out of bounds gets the one refusal of the registry
    /// (the words bench gives `--iodepth 0`), naming the scenario path it
    /// set.
    #[test]
    fn out_of_bounds_vary_values_get_the_registrys_refusal() {
        let s = Scenario::parse("basic.toml", BASIC).unwrap();
        for (key, path, v) in [
            ("iodepth", "workload.iodepth", "0"),
            ("iodepth", "workload.iodepth", "5000"),
            ("clients", "clients.count", "0"),
            ("arrays", "array.count", "0"),
            ("ports", "array.ports", "2000"),
        ] {
            let e = s.with(key, v).and_then(|s| s.resolve(&cat()).map(|_| ()));
            let e = e.unwrap_err().to_string();
            let p = sim_lookup(key).unwrap();
            let refusal = p.refuse(v).to_string();
            assert!(
                e.contains(&format!("{path}: {refusal}")),
                "{key}={v}: {e} lacks {refusal}"
            );
        }
        let bench = storlab_types::params::lookup("iodepth").unwrap().refuse(0);
        let e = s.with("iodepth", "0").unwrap().resolve(&cat()).unwrap_err();
        assert!(e.to_string().ends_with(&bench.to_string()), "{e}");
    }

    #[test]
    fn a_basic_scenario_resolves_with_catalog_links() {
        let s = Scenario::parse("basic.toml", BASIC).unwrap();
        let r = s.resolve(&cat()).unwrap();
        assert_eq!(r.clients, 4);
        // fc1: 1.0625 Gbaud × 8/10 / 8 × 0.94 = 99.9 MB/s per port.
        assert!((r.array.ports_bytes_per_s - 2.0 * 1.0625e9 * 0.8 / 8.0 * 0.94).abs() < 1.0);
        assert_eq!(r.array.backend_bytes_per_s, 400e6);
        assert_eq!(r.workload.sharing, Sharing::NN);
        assert_eq!(r.fs, FsKind::SharedBlock);
    }

    #[test]
    fn errors_name_line_column_and_fix() {
        let bad = BASIC.replace("pattern = \"write\"", "pattern = \"scribble\"");
        let e = Scenario::parse("x.toml", &bad)
            .unwrap()
            .resolve(&cat())
            .unwrap_err();
        let m = e.to_string();
        assert!(m.starts_with("x.toml:11:"), "{m}");
        assert!(m.contains("randwrite"), "{m}");

        let bad = BASIC.replace("nic = \"1gbe-iscsi\"", "nic = \"1gbe-iscsy\"");
        let m = Scenario::parse("x.toml", &bad)
            .unwrap()
            .resolve(&cat())
            .unwrap_err()
            .to_string();
        assert!(m.contains("x.toml:5:") && m.contains("1gbe-iscsi"), "{m}");

        let bad = BASIC.replace("ports = 2", "ports = 2\nspeed = 3");
        let m = Scenario::parse("x.toml", &bad).unwrap_err().to_string();
        assert!(m.contains("x.toml:9:") && m.contains("speed"), "{m}");

        let bad = BASIC.replace("backend = \"400MB/s\"", "");
        let m = Scenario::parse("x.toml", &bad)
            .unwrap()
            .resolve(&cat())
            .unwrap_err()
            .to_string();
        assert!(m.contains("array.backend") && m.contains("raid"), "{m}");
    }

    #[test]
    fn vary_edits_any_key_and_shorthands() {
        let s = Scenario::parse("basic.toml", BASIC).unwrap();
        let r = s.with("clients", "1000").unwrap().resolve(&cat()).unwrap();
        assert_eq!(r.clients, 1000);
        let r = s
            .with("array.cache", "8GiB")
            .unwrap()
            .resolve(&cat())
            .unwrap();
        assert_eq!(r.array.cache_bytes, 8 << 30);
        let e = s
            .with("clients", "0")
            .unwrap()
            .resolve(&cat())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--vary clients=0") && e.contains("from 1"),
            "{e}"
        );
        let e = s.with("array.colour", "red").unwrap_err().to_string();
        assert!(e.contains("colour"), "{e}");
    }

    #[test]
    fn oversubscription_and_catalog_controllers() {
        let t = BASIC.replace(
            "[array]",
            "[network]\noversubscription = 4.0\n[array]\ncontroller = \"megaraid-9361-8i\"",
        );
        let r = Scenario::parse("o.toml", &t)
            .unwrap()
            .resolve(&cat())
            .unwrap();
        let want = 4.0 * r.client_nic_bytes_per_s / 4.0;
        assert!((r.uplink_bytes_per_s.unwrap() - want).abs() < 1e-6);
        let bad = t.replace("oversubscription = 4.0", "oversubscription = 0.5");
        let e = Scenario::parse("o.toml", &bad)
            .unwrap()
            .resolve(&cat())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("oversubscription") && e.contains("1 or more"),
            "{e}"
        );
        let bad = t.replace("megaraid-9361-8i", "megaraid-9999");
        let e = Scenario::parse("o.toml", &bad)
            .unwrap()
            .resolve(&cat())
            .unwrap_err()
            .to_string();
        assert!(e.contains("array.controller"), "{e}");
    }

    #[test]
    fn vary_ranges() {
        assert_eq!(
            parse_vary("clients=1..8").unwrap().values,
            ["1", "2", "4", "8"]
        );
        assert_eq!(
            parse_vary("clients=1..10").unwrap().values,
            ["1", "2", "4", "8", "10"]
        );
        assert_eq!(
            parse_vary("clients=1..5/5").unwrap().values,
            ["1", "2", "3", "4", "5"]
        );
        assert_eq!(
            parse_vary("file_size=1GiB,4GiB").unwrap().values,
            ["1GiB", "4GiB"]
        );
        // The sweep's step forms, from the one grammar.
        assert_eq!(
            parse_vary("clients=1..16:x4").unwrap().values,
            ["1", "4", "16"]
        );
        assert_eq!(
            parse_vary("clients=2..8:+3,64").unwrap().values,
            ["2", "5", "8", "64"]
        );
        for bad in [
            "clients",
            "=1",
            "clients=",
            "clients=1,,2",
            "clients=4..2",
            "clients=0..4",
            "clients=1..9/1",
        ] {
            assert!(parse_vary(bad).is_err(), "{bad}");
        }
    }

    proptest! {
        #[test]
        fn vary_parser_never_panics(s in ".{0,40}") {
            let _ = parse_vary(&s);
        }

        #[test]
        fn doubling_ranges_are_increasing_and_end_at_b(a in 1u64..1000, k in 0u64..100000) {
            let b = a + k;
            let v = parse_vary(&format!("clients={a}..{b}")).unwrap();
            let n: Vec<u64> = v.values.iter().map(|x| x.parse().unwrap()).collect();
            prop_assert_eq!(n[0], a);
            prop_assert_eq!(*n.last().unwrap(), b);
            prop_assert!(n.windows(2).all(|w| w[0] < w[1]));
        }

        #[test]
        fn scenario_parser_never_panics(s in "[a-z_=\\[\\]\"0-9. \n]{0,200}") {
            if let Ok(sc) = Scenario::parse("p.toml", &s) {
                let _ = sc.resolve(&SimCatalog::builtin());
            }
        }

        #[test]
        fn any_client_count_resolves_or_says_why(n in 0u64..20_000_000) {
            let s = Scenario::parse("basic.toml", BASIC).unwrap();
            match s.with("clients", &n.to_string()).and_then(|s| s.resolve(&SimCatalog::builtin())) {
                Ok(r) => prop_assert_eq!(u64::from(r.clients), n),
                Err(e) => prop_assert!(n == 0 || n > 10_000_000, "{}", e),
            }
        }
    }
}
