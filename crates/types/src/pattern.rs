//! [`Pattern`]: what a workload does — sequential or random, reads, writes
//! or a mix — the one I/O pattern type of `plan`'s model and `sim`'s
//! scenarios (each had its own; sim's was mapped onto plan's by hand).
//!
//! Its JSON is `plan`'s (`"seq_read"`, `{"mix": {"read_pct": 70.0,
//! "random": true}}`); a document that has always written fio's words
//! (`sim`'s scenario echo: `"read"`, `"randwrite"`) serialises the field
//! with [`fio_word`] (`#[serde(with = "storlab_types::pattern::fio_word")]`
//! or `serialize_with = "storlab_types::pattern::fio_word::serialize"`).

use serde::Serialize;

/// What a workload does.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    SeqRead,
    SeqWrite,
    RandRead,
    RandWrite,
    /// A mix of reads and writes; `read_pct` of requests are reads.
    Mix {
        read_pct: f64,
        random: bool,
    },
}

impl Pattern {
    /// Fraction of requests that read.
    pub fn read_fraction(self) -> f64 {
        match self {
            Pattern::SeqRead | Pattern::RandRead => 1.0,
            Pattern::SeqWrite | Pattern::RandWrite => 0.0,
            Pattern::Mix { read_pct, .. } => (read_pct / 100.0).clamp(0.0, 1.0),
        }
    }

    pub fn is_random(self) -> bool {
        match self {
            Pattern::RandRead | Pattern::RandWrite => true,
            Pattern::SeqRead | Pattern::SeqWrite => false,
            Pattern::Mix { random, .. } => random,
        }
    }

    /// Whether every request writes.
    pub fn is_write(self) -> bool {
        matches!(self, Pattern::SeqWrite | Pattern::RandWrite)
    }

    /// fio's `rw=` word: `read`, `write`, `randread`, `randwrite`, and `rw`
    /// / `randrw` for a mix.
    pub fn fio_word(self) -> &'static str {
        match self {
            Pattern::SeqRead => "read",
            Pattern::SeqWrite => "write",
            Pattern::RandRead => "randread",
            Pattern::RandWrite => "randwrite",
            Pattern::Mix { random: false, .. } => "rw",
            Pattern::Mix { random: true, .. } => "randrw",
        }
    }

    /// The single-direction pattern of fio's `rw=` word (`read`, `write`,
    /// `randread`, `randwrite`); a mix needs its share of reads, so `rw` and
    /// `randrw` give `None` here.
    pub fn from_fio_word(word: &str) -> Option<Pattern> {
        Some(match word {
            "read" => Pattern::SeqRead,
            "write" => Pattern::SeqWrite,
            "randread" => Pattern::RandRead,
            "randwrite" => Pattern::RandWrite,
            _ => return None,
        })
    }
}

/// Serialise a [`Pattern`] as its fio word (`"randread"`), for documents
/// that have always written it so.
pub mod fio_word {
    use super::Pattern;

    pub fn serialize<S: serde::Serializer>(p: &Pattern, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(p.fio_word())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_pattern_two_spellings() {
        for p in [
            Pattern::SeqRead,
            Pattern::SeqWrite,
            Pattern::RandRead,
            Pattern::RandWrite,
        ] {
            assert_eq!(Pattern::from_fio_word(p.fio_word()), Some(p));
        }
        let mix = Pattern::Mix {
            read_pct: 70.0,
            random: true,
        };
        assert_eq!(mix.fio_word(), "randrw");
        assert_eq!(Pattern::from_fio_word("randrw"), None);
        assert!((mix.read_fraction() - 0.7).abs() < 1e-12 && mix.is_random() && !mix.is_write());
        assert_eq!(
            serde_json::to_string(&[Pattern::SeqRead, mix]).unwrap(),
            r#"["seq_read",{"mix":{"read_pct":70.0,"random":true}}]"#
        );
        #[derive(Serialize)]
        struct Echo {
            #[serde(serialize_with = "fio_word::serialize")]
            pattern: Pattern,
        }
        let echo = Echo {
            pattern: Pattern::RandWrite,
        };
        assert_eq!(
            serde_json::to_string(&echo).unwrap(),
            r#"{"pattern":"randwrite"}"#
        );
    }
}
