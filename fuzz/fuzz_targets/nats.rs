//! libFuzzer target: `mocap_bridge_fuzz::nats` on every input.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mocap_bridge_fuzz::nats(data));
