//! Wire protocols, as pure codecs over bytes: no sockets here (the CLI and, later,
//! the live bridge's network tasks move the bytes).

pub mod frame;
pub mod osc;
pub mod vmc;
pub mod ws;
