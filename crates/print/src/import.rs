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
