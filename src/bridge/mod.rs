//! The live bridge: `run` wires inputs, the solver thread and outputs together.

pub mod config;
