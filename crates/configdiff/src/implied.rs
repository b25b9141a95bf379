//! What a comparison studies besides the explicit `--vary`: the
//! parameters the runs' own sweep tags say were varied (compare, check and
//! report share this).

use crate::Vary;
use storlab_types::StoredRun;

/// The parameters a comparison studies because the runs' sweep tags say
/// they were varied (not named by `--vary`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Implied {
    pub keys: Vec<String>,
}

impl std::fmt::Display for Implied {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "comparing along {} (the runs' sweep tags say it was varied; --vary adds more)",
            self.keys.join(", ")
        )
    }
}

/// What the runs' own tags say was varied: the keys of `sweep_params`
/// (`bs=4k,numjobs=2`) whose values differ between runs of one sweep, and
/// none when the runs are not of one sweep.
pub fn implied_vary<'a>(runs: impl IntoIterator<Item = &'a StoredRun>) -> Vec<String> {
    let runs: Vec<&StoredRun> = runs.into_iter().collect();
    let one = |tag: &str| {
        runs.len() > 1
            && runs.iter().all(|r| r.tags.contains_key(tag))
            && runs
                .iter()
                .all(|r| r.tags.get(tag) == runs[0].tags.get(tag))
    };
    let mut keys: Vec<String> = Vec::new();
    if one("sweep") {
        let mut values: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> =
            std::collections::BTreeMap::new();
        for r in &runs {
            let params = r.tags.get("sweep_params").map_or("", String::as_str);
            for kv in params.split(',').filter(|s| !s.is_empty()) {
                if let Some((k, v)) = kv.split_once('=') {
                    values
                        .entry(k.trim().to_string())
                        .or_default()
                        .insert(v.trim().to_string());
                }
            }
        }
        keys.extend(
            values
                .into_iter()
                .filter(|(_, v)| v.len() > 1)
                .map(|(k, _)| k),
        );
    }
    // Only names --vary accepts for these runs (a sweep of an option
    // compare cannot name is left to the user's --vary).
    keys.retain(|k| Vary::parse(k).is_ok_and(|v| v.check_against(runs.iter().copied()).is_ok()));
    keys
}

/// The explicit `--vary` merged with what the runs' tags say was varied,
/// and the implied part (the caller words it: [`Implied`]'s `Display`).
pub fn vary_with_implied<'a>(
    list: &[Vary],
    runs: impl IntoIterator<Item = &'a StoredRun>,
) -> (Vary, Option<Implied>) {
    let explicit = merge_vary(list);
    let implied: Vec<String> = implied_vary(runs)
        .into_iter()
        .filter(|k| !explicit.keys().any(|e| e == k))
        .collect();
    if implied.is_empty() {
        return (explicit, None);
    }
    let mut all: Vec<String> = explicit.keys().map(str::to_string).collect();
    all.extend(implied.iter().cloned());
    (
        Vary::from_list(&all).unwrap_or(explicit),
        Some(Implied { keys: implied }),
    )
}

/// Merge repeated `--vary` values.
pub fn merge_vary(list: &[Vary]) -> Vary {
    let keys: Vec<String> = list
        .iter()
        .flat_map(|v| v.keys().map(str::to_string))
        .collect();
    Vary::from_list(&keys).unwrap_or_default()
}
