//! Errors that say what the user can do about them.

use thiserror::Error;

/// Everything that can go wrong reading a scenario or a `--vary` value.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum SimError {
    /// The TOML itself, or a value of the wrong type, at a position.
    #[error("{file}:{line}:{col}: {message}")]
    Parse {
        file: String,
        line: usize,
        col: usize,
        message: String,
    },
    /// A value that parses but makes no sense, named by its key.
    #[error("{file}: {key}: {message}")]
    Invalid {
        file: String,
        key: String,
        message: String,
    },
    /// A `--vary` argument that cannot be used.
    #[error("--vary {arg}: {message}")]
    Vary { arg: String, message: String },
    /// A run too large for the solver asked for, with what to do instead.
    #[error("{0}")]
    TooLarge(String),
}
