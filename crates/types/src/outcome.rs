//! How a storlab command ended, and the process exit code that says so:
//! 0 ok, 1 a check or verification failed, 2 bad input or a hard error,
//! 130 stopped by Ctrl-C. The CLI exits with it; MPI ranks agree on one.

/// What a command reports back to the CLI when it ran to the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything passed.
    Ok,
    /// The command ran, but a check or verification failed (exit 1).
    Failed,
    /// The command ran but stopped on a hard error after reporting what it
    /// measured (exit 2), e.g. the disk filled up.
    Error,
    /// Stopped by Ctrl-C after reporting what it measured (exit 130).
    Interrupted,
}

impl Outcome {
    /// The process exit code of this outcome.
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Ok => 0,
            Outcome::Failed => 1,
            Outcome::Error => 2,
            Outcome::Interrupted => 130,
        }
    }

    /// The outcome of an exit code (any code not 0, 1 or 130 is an error).
    pub fn from_exit_code(code: u8) -> Outcome {
        match code {
            0 => Outcome::Ok,
            1 => Outcome::Failed,
            130 => Outcome::Interrupted,
            _ => Outcome::Error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Outcome;

    #[test]
    fn exit_codes_round_trip() {
        for o in [
            Outcome::Ok,
            Outcome::Failed,
            Outcome::Error,
            Outcome::Interrupted,
        ] {
            assert_eq!(Outcome::from_exit_code(o.exit_code()), o);
        }
        assert_eq!(Outcome::from_exit_code(3), Outcome::Error);
    }
}
