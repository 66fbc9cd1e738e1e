//! Network edges: sockets that move the bytes `protocol` encodes. Nothing here
//! decides what a pose is; it only sends.

pub mod lab_input;
pub mod udp;
pub mod vmc_devices;
pub mod vmc_input;
pub mod vmc_out;
pub mod vmc_output;
pub mod vrchat_input;
pub mod websocket;
