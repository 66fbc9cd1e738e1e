//! Wire protocols, as pure codecs over bytes: no sockets here (the CLI and, later,
//! the live bridge's network tasks move the bytes). `osc` reads OSC; `vmc` is VMC
//! both ways; `vrchat` reads VRChat's OSC trackers into `frame::TrackerFrame`s.

pub mod frame;
pub mod osc;
pub mod vmc;
pub mod vrchat;
