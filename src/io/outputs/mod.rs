//! Output tasks: each takes solved frames from its own ring and sends them on
//! (VMC over UDP, NATS) or shows them (the console monitor). A slow output drops its
//! oldest frames and counts them; nobody else slows down.

pub mod monitor;
pub mod nats;
pub mod vmc;
