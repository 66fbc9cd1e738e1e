//! The live bridge: `run` wires inputs, the solver thread and outputs together.

pub mod config;
pub mod monitor;
pub mod status;
