//! VMC decoding, ours against the `vmc` crate (pykeio/vmc: rosc's decoder, then
//! its parser) on the same datagrams: one frame of a full 55-bone pose with
//! expressions, as `VmcEncoder` packs it. Reported per message. Then encoding that
//! frame with `encode_into` into reused buffers (the `rosc` encoder it replaced
//! took about 7x longer, README).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use glam::Quat;
use mocap_bridge::formats::vrma::VrmaRest;
use mocap_bridge::humanoid::bone::ALL;
use mocap_bridge::humanoid::{CustomNames, Preset};
use mocap_bridge::protocol::vmc::{Datagrams, ExpressionNames, VmcEncoder, decode};

fn benches(c: &mut Criterion) {
    let mut pose = mocap_bridge::takes::demo::pose_at(0.5, 0.9);
    for (k, bone) in ALL.iter().enumerate() {
        pose.set_rotation(*bone, Quat::from_rotation_y(0.01 * k as f32));
    }
    for preset in Preset::all() {
        pose.expressions.set_preset(preset, 0.5);
    }
    let encoder = VmcEncoder::new(ExpressionNames::Vrm0, &VrmaRest::standard(0.9));
    let custom = CustomNames::default();
    let mut out = Datagrams::new();
    encoder.encode_into(0.5, &pose, &custom, &mut out);
    let datagrams: Vec<Vec<u8>> = out.iter().map(<[u8]>::to_vec).collect();
    let messages: u32 = datagrams
        .iter()
        .map(|d| decode(d, &mut |_| {}).events)
        .sum();
    println!(
        "{} datagrams, {messages} messages per frame",
        datagrams.len()
    );

    let mut group = c.benchmark_group(format!("vmc decode one frame ({messages} messages)"));
    group.bench_function("mocap-bridge", |b| {
        b.iter(|| {
            let mut n = 0u32;
            for d in &datagrams {
                decode(black_box(d), &mut |e| {
                    black_box(e);
                    n += 1;
                });
            }
            n
        })
    });
    group.bench_function("vmc crate (rosc + vmc::parse)", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for d in &datagrams {
                let (_, packet) = rosc::decoder::decode_udp(black_box(d)).expect("OSC");
                n += vmc::parse(packet).expect("VMC").len();
            }
            n
        })
    });
    group.finish();

    let mut group = c.benchmark_group("vmc encode 55-bone frame");
    group.bench_function("encode_into", |b| {
        b.iter(|| {
            encoder.encode_into(black_box(0.5), black_box(&pose), &custom, &mut out);
            out.len()
        })
    });
    group.finish();
}

criterion_group! {
    name = vmc_decode;
    config = Criterion::default().warm_up_time(std::time::Duration::from_millis(500)).measurement_time(std::time::Duration::from_secs(2));
    targets = benches
}
criterion_main!(vmc_decode);
