//! Wire protocols, as pure codecs over bytes: no sockets here (the CLI and the
//! live bridge's network tasks move the bytes). `osc` reads OSC; `vmc` is VMC
//! both ways; `lab_osc` (a lab's own skeleton over OSC) assembles datagrams into the
//! fixed-size frames of `frame`; `vrchat` reads VRChat's OSC trackers into
//! `frame::TrackerFrame`s; `ws` is the WebSocket schema; `nats` is what bridges
//! publish to one another over NATS; `record_control` reads the bridge's own
//! `/bridge/record/start|stop` OSC messages; `ticks` frames OSC streams whose
//! messages arrive bare by the sender's tick; `sender_clock` reads a sender's
//! clock as a timeline that never goes back.

pub mod frame;
pub mod lab_osc;
pub mod nats;
pub mod osc;
pub mod record_control;
pub mod sender_clock;
pub mod ticks;
pub mod vmc;
pub mod vrchat;
pub mod ws;
