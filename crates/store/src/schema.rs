//! The database schema: one SQL migration per schema version.
//!
//! `PRAGMA user_version` holds the version a file is at. Opening a file runs
//! every migration above its version, each in its own transaction that also
//! bumps `user_version`, so a failed migration leaves the file at the version
//! before it. A file whose version is above [`LATEST`] was written by a newer
//! storlab and is refused. `PRAGMA application_id` marks the file as storlab's
//! so another program's SQLite file is never migrated. `docs/store.md`
//! describes the tables and the policy for adding a migration.

/// `PRAGMA application_id` of a storlab database: "STLB" in ASCII.
pub const APPLICATION_ID: i64 = 0x5354_4c42;

/// Migration `i` takes a file from version `i` to version `i + 1`. Never edit
/// a migration that has shipped: add a new one.
pub const MIGRATIONS: &[&str] = &[
    // v1: runs, their tags and their phases. Typed columns hold what
    // commands filter and sort on; the *_json columns hold the full records
    // so nothing measured is lost.
    r#"
CREATE TABLE runs (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    kind         TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('running', 'finished', 'interrupted')),
    started_at   TEXT NOT NULL,
    finished_at  TEXT,
    host         TEXT NOT NULL,
    target       TEXT NOT NULL,
    tool         TEXT NOT NULL,
    tool_version TEXT NOT NULL,
    note         TEXT,
    report_json  TEXT NOT NULL
);
CREATE INDEX runs_started_at ON runs (started_at);
CREATE TABLE run_tags (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    key    TEXT NOT NULL,
    value  TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
);
CREATE INDEX run_tags_key_value ON run_tags (key, value);
CREATE TABLE phases (
    run_id         INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq            INTEGER NOT NULL,
    name           TEXT NOT NULL,
    rw             TEXT NOT NULL,
    bs_bytes       INTEGER NOT NULL,
    numjobs        INTEGER NOT NULL,
    iodepth        INTEGER NOT NULL,
    engine         TEXT NOT NULL,
    cache          TEXT NOT NULL,
    size_bytes     INTEGER NOT NULL,
    elapsed_ns     INTEGER NOT NULL,
    bw_bytes_per_s REAL NOT NULL,
    iops           REAL NOT NULL,
    interrupted    INTEGER NOT NULL,
    phase_json     TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE INDEX phases_rw ON phases (rw);
"#,
    // v2: typed p99 latency columns (filled from the stored JSON for phases
    // saved by v1) and device timelines from `monitor --record` and
    // `bench --monitor`.
    r#"
ALTER TABLE phases ADD COLUMN read_lat_p99_ns INTEGER;
ALTER TABLE phases ADD COLUMN write_lat_p99_ns INTEGER;
UPDATE phases SET
    read_lat_p99_ns  = json_extract(phase_json, '$.read.lat_ns.p99'),
    write_lat_p99_ns = json_extract(phase_json, '$.write.lat_ns.p99');
CREATE TABLE monitors (
    run_id        INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq           INTEGER NOT NULL,
    started_at    TEXT NOT NULL,
    interval_ns   INTEGER NOT NULL,
    devices       TEXT NOT NULL,
    samples       INTEGER NOT NULL,
    timeline_json TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
"#,
    // v3: which process writes a run that is not finished yet, so a run
    // whose storlab died shows as `unfinished` rather than `running`.
    r#"
ALTER TABLE runs ADD COLUMN writer_host TEXT;
ALTER TABLE runs ADD COLUMN writer_pid INTEGER;
"#,
    // v4: the job groups of a phase (several workloads run at once) as rows
    // of their own, filled from the stored JSON for phases saved before.
    r#"
CREATE TABLE phase_groups (
    run_id           INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq              INTEGER NOT NULL,
    gseq             INTEGER NOT NULL,
    name             TEXT NOT NULL,
    rw               TEXT NOT NULL,
    bs_bytes         INTEGER NOT NULL,
    numjobs          INTEGER NOT NULL,
    iodepth          INTEGER NOT NULL,
    first_job        INTEGER NOT NULL,
    elapsed_ns       INTEGER NOT NULL,
    read_bytes       INTEGER NOT NULL,
    write_bytes      INTEGER NOT NULL,
    bw_bytes_per_s   REAL NOT NULL,
    iops             REAL NOT NULL,
    read_lat_p99_ns  INTEGER,
    write_lat_p99_ns INTEGER,
    PRIMARY KEY (run_id, seq, gseq)
);
INSERT INTO phase_groups
SELECT p.run_id, p.seq, g.key,
       json_extract(g.value, '$.name'),
       json_extract(g.value, '$.params.rw'),
       (SELECT max(json_extract(b.value, '$.bs_bytes')) FROM json_each(g.value, '$.params.bs') AS b),
       json_extract(g.value, '$.params.numjobs'),
       json_extract(g.value, '$.params.iodepth'),
       json_extract(g.value, '$.first_job'),
       json_extract(g.value, '$.elapsed_ns'),
       json_extract(g.value, '$.read.bytes'),
       json_extract(g.value, '$.write.bytes'),
       json_extract(g.value, '$.total.bw_bytes_per_s'),
       json_extract(g.value, '$.total.iops'),
       json_extract(g.value, '$.read.lat_ns.p99'),
       json_extract(g.value, '$.write.lat_ns.p99')
FROM phases AS p, json_each(p.phase_json, '$.groups.groups') AS g
WHERE json_type(p.phase_json, '$.groups.groups') = 'array';
"#,
];

/// The schema version this storlab writes.
pub const LATEST: i64 = MIGRATIONS.len() as i64;
