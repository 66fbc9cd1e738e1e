//! End-to-end tests of `mocap-bridge run`, driven by real clients: python-osc
//! sending VMC, the `vmc` crate decoding what the bridge sends, a WebSocket client,
//! replays, recordings and crash recovery; docs/websocket.md's examples; bridges
//! fanning out through nats-server, and `/metrics` read by prometheus_client.

mod avatar_ik;
mod bad_input;
#[path = "../common/mod.rs"]
mod common;
mod console;
mod fairness;
mod harness;
mod http;
mod metrics;
mod nats;
mod origin;
mod record_commands;
mod recording;
mod senders;
mod slow_client;
mod trackers;
mod vmc;
mod websocket;
mod websocket_doc;
