//! CopyQ-driving suites: the tools against a real private CopyQ, one per suite (suites never share
//! a CopyQ, so each can assert exactly what its own holds). tests/run.sh runs this binary again per
//! backend and per CopyQ version of the matrix.

#[path = "../support/mod.rs"]
mod support;

mod audit;
mod content;
mod copyq_down;
mod faults;
mod halfdone;
mod pinned;
mod read;
mod redact;
mod safety;
mod versions;
mod where_to_look;
mod write;
