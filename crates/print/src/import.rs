//! What `storlab import` saved: each file's run, and the database, as
//! text for people or (serialized) the JSON document.

use serde::Serialize;

/// What `import` saved: each file's run, and the database.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Imports {
    pub database: String,
    pub imported: Vec<Imported>,
}

/// One imported file (keys in the order the JSON has always had them).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Imported {
    pub file: String,
    pub phases: Vec<String>,
    pub run_id: i64,
    pub tool: String,
    pub tool_version: String,
}

impl Imported {
    /// What saving `report` from `file` as run `run_id` imported.
    pub fn saved(file: String, run_id: i64, report: &storlab_types::BenchReport) -> Imported {
        Imported {
            file,
            run_id,
            tool: report.tool.name.clone(),
            tool_version: report.tool.version.clone(),
            phases: report
                .phases
                .iter()
                .map(|p| p.params.name.clone())
                .collect(),
        }
    }
}

impl Imports {
    /// One line per file, then where they were saved.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for i in &self.imported {
            let n = i.phases.len();
            out += &format!(
                "imported {} as run {}: {} {}, {n} phase{} ({})\n",
                i.file,
                i.run_id,
                i.tool,
                i.tool_version,
                if n == 1 { "" } else { "s" },
                i.phases.join(", ")
            );
        }
        out += &format!(
            "saved in {} (storlab runs, storlab show ID)\n",
            self.database
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use storlab_testkit::fixtures::{Spec, phase, run};
    use storlab_types::RwMode;

    /// An imported file is listed with its run id, tool and phase names.
    #[test]
    fn saved_names_the_tool_and_the_phases() {
        let phases = vec![
            phase(&Spec::new("seqread", RwMode::Read, 1 << 20, 900.0)),
            phase(&Spec::new("randwrite", RwMode::RandWrite, 4096, 80.0)),
        ];
        let r = run(3, &[], phases).report;
        let i = Imported::saved("a.json".into(), 7, &r);
        assert_eq!((i.file.as_str(), i.run_id), ("a.json", 7));
        assert_eq!(i.phases, ["seqread", "randwrite"]);
        assert_eq!((i.tool, i.tool_version), (r.tool.name, r.tool.version));
    }
}
