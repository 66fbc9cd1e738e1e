//! The fuzz targets of mocap-bridge: one function per network decoder and file
//! reader, each handing any bytes to the code that reads them from a socket or a
//! file, as untrusted input arrives. A target passes when it returns: errors are
//! the expected answer to bad bytes; a panic, a hang or runaway memory is a bug.
//!
//! `fuzz_targets/` wraps each function for libFuzzer (`fuzz/run TARGET`, or
//! `cargo fuzz run TARGET` with a nightly toolchain); `tests/smoke.rs` runs each
//! over its seeds in `corpus/TARGET/` and thousands of mutations of them on any
//! toolchain, in CI.

use std::path::Path;
use std::sync::LazyLock;
use std::time::Instant;

use mocap_bridge::formats::{self, LoadOptions, Rig};
use mocap_bridge::protocol::frame::JointFrame;
use mocap_bridge::protocol::lab_osc::{LabAssembler, LabSkeleton};
use mocap_bridge::protocol::vmc::frames::VmcFrames;
use mocap_bridge::protocol::vrchat::{TrackerAssignment, VrchatTrackers};
use mocap_bridge::protocol::{nats, osc, vmc, ws};
use mocap_bridge::record::journal::JournalReader;
use mocap_bridge::skeleton::Skeleton;

/// A fuzz target: its name (the binary's and the seed folder's) and its function.
pub struct Target {
    pub name: &'static str,
    pub run: fn(&[u8]),
    /// A network decoder (fuzzed for ≥1M runs), else a file reader (≥100k).
    pub network: bool,
}

/// Every target.
pub const TARGETS: &[Target] = &[
    Target {
        name: "vmc",
        run: vmc,
        network: true,
    },
    Target {
        name: "osc",
        run: osc,
        network: true,
    },
    Target {
        name: "vrchat",
        run: vrchat,
        network: true,
    },
    Target {
        name: "lab_osc",
        run: lab_osc,
        network: true,
    },
    Target {
        name: "websocket",
        run: websocket,
        network: true,
    },
    Target {
        name: "nats",
        run: nats,
        network: true,
    },
    Target {
        name: "bvh",
        run: bvh,
        network: false,
    },
    Target {
        name: "gltf",
        run: gltf,
        network: false,
    },
    Target {
        name: "vrma",
        run: vrma,
        network: false,
    },
    Target {
        name: "ext_humanoid",
        run: ext_humanoid,
        network: false,
    },
    Target {
        name: "skeleton_json",
        run: skeleton_json,
        network: false,
    },
    Target {
        name: "journal",
        run: journal,
        network: false,
    },
];

/// The built-in lab19 skeleton, which streamed frames are matched against.
static LAB19: LazyLock<(Skeleton, LabSkeleton)> = LazyLock::new(|| {
    let (rig, stream) = formats::skeleton_json::parse_with_stream(
        mocap_bridge::skeleton::builtin::LAB19_JSON,
        Path::new("lab19.json"),
        &LoadOptions::default(),
    )
    .expect("the built-in lab19 skeleton");
    let lab = LabSkeleton::new(&rig.skeleton, stream).expect("lab19 streams");
    (rig.skeleton, lab)
});

/// A VMC datagram: decoded, and assembled into frames as a VMC input does.
pub fn vmc(data: &[u8]) {
    let mut frames = VmcFrames::default();
    vmc::decode(data, &mut |event| {
        let _ = frames.event(event, 0.0);
    });
}

/// Any OSC datagram: every message and its arguments read.
pub fn osc(data: &[u8]) {
    let mut args = [osc::Arg::Int(0); 16];
    for message in osc::messages(data).flatten() {
        if let Ok(n) = message.args(&mut args) {
            for arg in &args[..n] {
                let _ = arg.as_str();
            }
        }
        let _ = message.floats::<7>();
    }
}

/// A VRChat OSC trackers datagram, into a tracker frame.
pub fn vrchat(data: &[u8]) {
    let mut trackers = VrchatTrackers::new(TrackerAssignment::default());
    let Some(performer) = mocap_bridge::protocol::frame::PerformerName::new("fuzz") else {
        return;
    };
    let mut frame = mocap_bridge::protocol::frame::TrackerFrame::new(performer);
    // A datagram may hold several ticks: each is written out as the input does.
    let _ = trackers.decode(data, 0.0, |ticked| ticked.write_frame(&mut frame));
    trackers.write_frame(&mut frame);
}

/// A lab OSC datagram against the lab19 skeleton.
pub fn lab_osc(data: &[u8]) {
    let mut assembler = LabAssembler::new(4);
    let lab = &LAB19.1;
    let _ = assembler.datagram(data, Instant::now(), |_| Some(lab), |_| {});
}

/// A WebSocket text message: parsed, and a skeleton frame decoded against lab19.
pub fn websocket(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = ws::rejected_request_id(&text);
    if let Ok(ws::ClientMessage::Skeleton(message)) = ws::parse(&text) {
        let mut frame = JointFrame::new(message.performer());
        let _ = message.decode_into(&LAB19.0, &mut frame);
    }
}

/// A NATS message payload, read as a pose (as the NATS input does), as a bundle
/// (each of its poses read as a pose) and as a source.
pub fn nats(data: &[u8]) {
    let mut names = mocap_bridge::humanoid::CustomNames::default();
    let _ = nats::decode_pose(data, |_| &mut names);
    if let Ok(poses) = nats::split_bundle(data) {
        for pose in poses {
            let _ = nats::decode_pose(pose, |_| &mut names);
        }
    }
    let _ = nats::decode_source(data);
}

/// Puts a rig that loaded on the humanoid, as `inspect` does.
fn map(rig: &Rig) {
    let _ = formats::inspect::map_rig("fuzz", rig, None);
}

/// A BVH file, and its skeleton recognized.
pub fn bvh(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(rig) = formats::bvh::parse(&text, Path::new("fuzz.bvh"), &LoadOptions::default()) {
        map(&rig);
    }
}

/// A glTF, GLB or VRM file, and its skeleton recognized.
pub fn gltf(data: &[u8]) {
    if let Ok(rig) = formats::gltf::parse(data, Path::new("fuzz.glb")) {
        map(&rig);
    }
}

/// A `.vrma` file: every animation read and sampled.
pub fn vrma(data: &[u8]) {
    if let Ok(animations) = formats::vrma::parse_all(data, Path::new("fuzz.vrma")) {
        let mut pose = mocap_bridge::humanoid::HumanoidPose::default();
        for animation in animations {
            for t in [0.0, animation.duration * 0.5, animation.duration] {
                animation.sample(t, &mut pose);
            }
        }
    }
}

/// An EXT_skeleton_humanoid clip.
pub fn ext_humanoid(data: &[u8]) {
    let _ = formats::ext_humanoid::parse(data, Path::new("fuzz.glb"), None);
}

/// A skeleton JSON file, and its skeleton recognized.
pub fn skeleton_json(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(rig) =
        formats::skeleton_json::parse(&text, Path::new("fuzz.json"), &LoadOptions::default())
    {
        map(&rig);
    }
}

/// A recording journal: the header, then every frame.
pub fn journal(data: &[u8]) {
    if let Ok(mut reader) = JournalReader::new(data, Path::new("fuzz.journal")) {
        while let Ok(Some(_)) = reader.next_frame() {}
    }
}
