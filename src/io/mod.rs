//! The edges of the live bridge: the tasks that own sockets and move the bytes
//! `protocol` encodes and decodes. Nothing here decides what a pose is.
//!
//! - `inputs`: one task per bound socket or replayed take, pushing frames onto
//!   the solver's input rings (VMC, lab OSC, VRChat OSC, NATS, replay).
//! - `outputs`: tasks that take solved frames from their rings (VMC over UDP,
//!   NATS, the console monitor).
//! - `web`: the HTTP port: pages, data routes and WebSocket sessions.
//! - `nats`: the connection to a NATS server that the NATS input and output
//!   share.
//! - `udp`: batched receive and send shared by the UDP edges.
//! - `rate_cap`: the VMC senders' rate cap (`vmcOutputs.rateHz`, `send --rate`).
//! - `vmc_sender`: the `send` command's blocking VMC sender.

pub mod inputs;
pub mod nats;
pub mod outputs;
pub mod rate_cap;
pub mod udp;
pub mod vmc_sender;
pub mod web;
