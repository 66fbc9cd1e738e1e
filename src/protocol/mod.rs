//! Wire protocols, as pure codecs over bytes: no sockets here (the CLI and, later,
//! the live bridge's network tasks move the bytes). `vmc` decodes
//! datagrams into events; `lab_osc` (a lab's own skeleton over OSC) assembles them
//! into the fixed-size frames of `frame`. Both read with the allocation-free `osc`.

pub mod frame;
pub mod lab_osc;
pub mod osc;
pub mod vmc;
pub mod ws;
