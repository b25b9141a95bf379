//! What every multi-rank run (bench and md under a launcher) shares around
//! its collective steps: a step one rank failed ends every rank, rank 0
//! saying why and the others staying quiet ([`RankStop`]), and every rank
//! ends with rank 0's exit code ([`end`]).

use crate::comm::Comm;

/// The exit code of a hard error (bad input, a failed step).
pub const ERROR_EXIT: u8 = 2;

/// Why one rank's part of a step failed, in the front end's words (its
/// causes included): what rank 0 prints when the step fails.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Failed(pub String);

impl Failed {
    /// An error in its full words (`{:#}`: an `anyhow` error with its
    /// causes).
    pub fn of(e: impl std::fmt::Display) -> Failed {
        Failed(format!("{e:#}"))
    }
}

/// A collective step failed on some rank: every rank stops.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RankStop {
    /// This is rank 0, which says why.
    #[error("{0}")]
    Report(Failed),
    /// Rank 0 says why; this rank stays quiet.
    #[error("another rank failed (rank 0 says why)")]
    Quiet,
}

impl RankStop {
    /// `why` at rank 0, silence elsewhere (every rank knows the step failed).
    pub fn at_root<C: Comm>(comm: &C, why: Failed) -> RankStop {
        if comm.root() {
            RankStop::Report(why)
        } else {
            RankStop::Quiet
        }
    }
}

/// Every rank's end (collective): rank 0's error goes to `report` before
/// the broadcast of its exit code releases the other ranks (once one of
/// them exits non-zero, the launcher may kill the rest, rank 0 with its
/// message unprinted); every rank returns rank 0's exit code.
pub fn end<C: Comm>(comm: &C, r: Result<u8, RankStop>, report: impl FnOnce(&Failed)) -> u8 {
    let code = match &r {
        Ok(code) => *code,
        Err(_) => ERROR_EXIT,
    };
    if let Err(RankStop::Report(why)) = &r {
        report(why);
    }
    let all = comm.broadcast_u64(u64::from(code));
    if comm.root() {
        code
    } else {
        u8::try_from(all).unwrap_or(ERROR_EXIT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LocalComm;

    #[test]
    fn every_rank_ends_with_rank_zeros_code_and_only_rank_zero_reports() {
        let out = LocalComm::run(3, |c| {
            let mut said = None;
            let r = match c.rank() {
                0 => Err(RankStop::at_root(&c, Failed("bad option".into()))),
                1 => Err(RankStop::at_root(&c, Failed("ignored".into()))),
                _ => Ok(0),
            };
            let code = end(&c, r, |w| said = Some(w.0.clone()));
            (code, said)
        });
        assert_eq!(
            out,
            vec![(2, Some("bad option".into())), (2, None), (2, None)]
        );
        let out = LocalComm::run(2, |c| end(&c, Ok(if c.root() { 130 } else { 0 }), |_| {}));
        assert_eq!(out, vec![130, 130]);
    }
}
