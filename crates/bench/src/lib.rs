//! `storlab-bench`: the single-node I/O engine (work in progress).
