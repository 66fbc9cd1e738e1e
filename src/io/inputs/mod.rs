//! Input tasks: each owns one socket (or one replayed take) and pushes what it
//! decodes onto performers' input rings. Bad input is counted and dropped.

pub mod lab;
pub mod nats;
mod record_commands;
pub mod replay;
pub mod vmc;
pub mod vrchat;

pub use record_commands::RecordCommands;
