//! The closed vocabularies of a run record, as enums: what kind of run it
//! is ([`RunKind`]), what was measured ([`TargetKind`]), the page-cache
//! state a phase reports ([`CacheState`]) and which layer of the device
//! stack a timeline shows ([`MonitorLayer`]).
//!
//! Each is written in JSON (and in the store) as the same word the records
//! have always held (`"bench"`, `"block_device"`, `"cold"`, `"top"`), so no
//! document changes. A word this version does not know (a record written
//! by a later storlab, or edited by hand) is kept as it is in `Other` and
//! written back unchanged: loading a record never fails on one of these.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Defines a string-valued enum with a fixed word per variant, `Other`
/// for any other word, `as_str`, `parse` (known words only), `Display`,
/// `From<&str>` and serde as that word.
macro_rules! word_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident => $word:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
            /// A word this version does not know, kept as written.
            Other(String),
        }

        impl $name {
            /// Every known value, in declaration order.
            pub const KNOWN: &'static [$name] = &[$($name::$variant),+];

            /// The word in JSON, in the store and in messages.
            pub fn as_str(&self) -> &str {
                match self {
                    $( $name::$variant => $word, )+
                    $name::Other(s) => s,
                }
            }

            /// The known value spelled `s`, if any (`Other` is never returned).
            pub fn parse(s: &str) -> Option<$name> {
                match s {
                    $( $word => Some($name::$variant), )+
                    _ => None,
                }
            }
        }

        /// The empty word (what a record made without one holds).
        impl Default for $name {
            fn default() -> $name {
                $name::Other(String::new())
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> $name {
                $name::parse(s).unwrap_or_else(|| $name::Other(s.to_string()))
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> $name {
                $name::parse(&s).unwrap_or($name::Other(s))
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.as_str() == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$name, D::Error> {
                Ok($name::from(String::deserialize(d)?))
            }
        }
    };
}

word_enum! {
    /// What produced a stored run (the store's `kind` column,
    /// `StoredRun::kind`, `storlab runs --kind`).
    pub enum RunKind {
        /// `storlab bench` (also each point of `sweep`, `tune` and campaigns).
        Bench => "bench",
        /// `storlab md`: metadata phases.
        Md => "md",
        /// `storlab sim`: simulated, not measured.
        Sim => "sim",
        /// `storlab monitor --record`: a device timeline, no phases.
        Monitor => "monitor",
        /// `storlab import` of fio's JSON output.
        FioImport => "fio-import",
        /// `storlab import` of a storlab JSON document.
        Import => "import",
        /// `storlab import` of an IO500 result directory (one phase per
        /// IO500 phase).
        Io500 => "io500",
        /// `storlab replay`: a recorded trace issued again.
        Replay => "replay",
    }
}

word_enum! {
    /// What a run measured (`TargetInfo::kind`).
    pub enum TargetKind {
        /// A directory storlab laid its files out in.
        Directory => "directory",
        /// One regular file.
        File => "file",
        /// A block device.
        BlockDevice => "block_device",
        /// The devices a `monitor` timeline watched.
        Devices => "devices",
        /// The scenario file of a `storlab sim` run.
        Simulation => "simulation",
    }
}

word_enum! {
    /// The page-cache state a phase reports (`CacheReport::mode`): the
    /// declared [`crate::CacheMode`], or what a phase without one did.
    pub enum CacheState {
        /// O_DIRECT.
        Direct => "direct",
        /// Buffered, the file's pages evicted before the timed window.
        Cold => "cold",
        /// Buffered, the file pre-read.
        Warm => "warm",
        /// Buffered, the page cache left as it was (`CacheMode::Buffered`,
        /// `storlab md`).
        Buffered => "buffered",
        /// Job groups with different modes in one phase.
        Mixed => "mixed",
    }
}

impl From<crate::CacheMode> for CacheState {
    fn from(m: crate::CacheMode) -> CacheState {
        match m {
            crate::CacheMode::Direct => CacheState::Direct,
            crate::CacheMode::Cold => CacheState::Cold,
            crate::CacheMode::Warm => CacheState::Warm,
            crate::CacheMode::Buffered => CacheState::Buffered,
        }
    }
}

word_enum! {
    /// Which devices of the stack a monitor timeline shows
    /// (`MonitorTimeline::layer`, `monitor --layer`).
    pub enum MonitorLayer {
        /// What file systems sit on.
        Top => "top",
        /// Physical devices.
        Leaf => "leaf",
        /// Every device, with totals per level.
        All => "all",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T>(known: &[T])
    where
        T: Serialize + for<'de> Deserialize<'de> + PartialEq + std::fmt::Debug + Clone,
        T: From<&'static str>,
    {
        for k in known {
            let j = serde_json::to_string(k).unwrap();
            let back: T = serde_json::from_str(&j).unwrap();
            assert_eq!(&back, k);
        }
        // An unknown word loads and is written back as it was.
        let other: T = serde_json::from_str("\"from-a-later-version\"").unwrap();
        assert_eq!(other, T::from("from-a-later-version"));
        assert_eq!(
            serde_json::to_string(&other).unwrap(),
            "\"from-a-later-version\""
        );
    }

    #[test]
    fn words_are_the_ones_records_always_held() {
        let words = |v: &[&dyn std::fmt::Display]| -> Vec<String> {
            v.iter().map(|d| d.to_string()).collect()
        };
        let runs: Vec<&dyn std::fmt::Display> = RunKind::KNOWN.iter().map(|k| k as _).collect();
        assert_eq!(
            words(&runs),
            [
                "bench",
                "md",
                "sim",
                "monitor",
                "fio-import",
                "import",
                "io500",
                "replay"
            ]
        );
        let targets: Vec<&dyn std::fmt::Display> =
            TargetKind::KNOWN.iter().map(|k| k as _).collect();
        assert_eq!(
            words(&targets),
            ["directory", "file", "block_device", "devices", "simulation"]
        );
        let caches: Vec<&dyn std::fmt::Display> =
            CacheState::KNOWN.iter().map(|k| k as _).collect();
        assert_eq!(
            words(&caches),
            ["direct", "cold", "warm", "buffered", "mixed"]
        );
        let layers: Vec<&dyn std::fmt::Display> =
            MonitorLayer::KNOWN.iter().map(|k| k as _).collect();
        assert_eq!(words(&layers), ["top", "leaf", "all"]);
        for m in crate::CacheMode::ALL {
            assert_eq!(CacheState::from(m).as_str(), m.as_str());
        }
    }

    #[test]
    fn every_word_round_trips_and_unknown_words_are_kept() {
        round_trip(RunKind::KNOWN);
        round_trip(TargetKind::KNOWN);
        round_trip(CacheState::KNOWN);
        round_trip(MonitorLayer::KNOWN);
        assert_eq!(RunKind::parse("fio-import"), Some(RunKind::FioImport));
        assert_eq!(RunKind::parse("nope"), None);
        assert_eq!(TargetKind::from("block_device"), TargetKind::BlockDevice);
        assert!(TargetKind::BlockDevice == "block_device");
        // A record made without a target kind held "" and still does.
        assert_eq!(
            serde_json::to_string(&TargetKind::default()).unwrap(),
            "\"\""
        );
    }
}
