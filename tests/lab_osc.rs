//! `mocap-bridge simulate` as a bridge meets it: the built binary streams to a UDP
//! socket bound on 127.0.0.1:0; every datagram is read with `rosc` (an independent
//! OSC decoder) to check the lab OSC schema, and with `LabAssembler` (under an
//! allocation counter) to check the joints against the source: the built-in lab19
//! performance always, `test_mocapbank.bvh` when ../shared/assets is there.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::net::UdpSocket;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use glam::Quat;
use mocap_bridge::formats::skeleton_json::{StreamFormat, parse_with_stream};
use mocap_bridge::formats::{LoadOptions, Motion, Rig, bvh};
use mocap_bridge::protocol::frame::JointFrame;
use mocap_bridge::protocol::lab_osc::{LabAssembler, LabSkeleton, LabStats, MAX_DATAGRAM};
use mocap_bridge::retarget::MappedSkeleton;
use mocap_bridge::skeleton::Skeleton;
use mocap_bridge::takes::demo;
use rosc::{OscPacket, OscType};

/// Counts allocations made on a thread while it has counting on.
struct CountingAllocator;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            ALLOCATIONS.with(|a| a.set(a.get() + 1));
        }
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// What `simulate` printed and what arrived.
struct Run {
    stdout: String,
    datagrams: Vec<Vec<u8>>,
}

/// Runs `simulate --fast` to a socket of our own and keeps every datagram.
fn simulate(args: &[&str]) -> Run {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    socket
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    // Room for a whole run, so that a busy machine loses nothing (the kernel caps
    // it at net.core.rmem_max).
    let _ = socket2::SockRef::from(&socket).set_recv_buffer_size(1 << 22);
    let to = socket.local_addr().unwrap().to_string();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mocap-bridge"))
        .arg("simulate")
        .args(args)
        .args(["--fast", "--to", &to])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut datagrams = Vec::new();
    let mut buf = vec![0u8; 65_536];
    let mut ended = false;
    loop {
        match socket.recv(&mut buf) {
            Ok(n) => datagrams.push(buf[..n].to_vec()),
            // Quiet once the sender had ended (all it sent was queued here by
            // then): the socket is drained. (Quiet before it was seen ended, it
            // may have sent its last datagrams in between.)
            Err(_) if ended => break,
            Err(_) => ended = child.try_wait().unwrap().is_some(),
        }
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Run { stdout, datagrams }
}

/// The number before `word` in the summary line (`... in 480 datagrams ...`).
fn summary_count(stdout: &str, word: &str) -> usize {
    let line = stdout.lines().last().unwrap_or_default();
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == word).unwrap();
    words[at - 1].parse().unwrap()
}

/// Checks every datagram against the schema with `rosc`: a bundle of a
/// `/lab/frame` header (s i d i i), `/lab/root` (f f f) in part 0 only, then
/// `/lab/joint` (s f f f: lab19 streams Euler angles) naming lab19 joints. Returns
/// the joints seen per (subject, frame).
fn check_schema(
    datagrams: &[Vec<u8>],
    lab19: &Skeleton,
) -> BTreeMap<(String, i32), BTreeSet<String>> {
    let names: BTreeSet<&str> = lab19.joints().iter().map(|j| j.name.as_str()).collect();
    let mut seen: BTreeMap<(String, i32), BTreeSet<String>> = BTreeMap::new();
    for d in datagrams {
        assert!(d.len() <= MAX_DATAGRAM, "{} bytes", d.len());
        let (rest, packet) = rosc::decoder::decode_udp(d).expect("rosc reads every datagram");
        assert!(rest.is_empty());
        let OscPacket::Bundle(bundle) = packet else {
            panic!("not a bundle: {packet:?}");
        };
        let mut messages = bundle.content.iter().map(|p| match p {
            OscPacket::Message(m) => m,
            OscPacket::Bundle(_) => panic!("nested bundle"),
        });
        let header = messages.next().expect("a header");
        assert_eq!(header.addr, "/lab/frame");
        let [
            OscType::String(subject),
            OscType::Int(frame),
            OscType::Double(time),
            OscType::Int(part),
            OscType::Int(parts),
        ] = header.args.as_slice()
        else {
            panic!("header arguments: {:?}", header.args);
        };
        assert!(time.is_finite() && *frame >= 0 && (0..*parts).contains(part));
        let joints = seen.entry((subject.clone(), *frame)).or_default();
        for m in messages {
            match (m.addr.as_str(), m.args.as_slice()) {
                ("/lab/root", [OscType::Float(_), OscType::Float(_), OscType::Float(_)]) => {
                    assert_eq!(*part, 0, "root outside part 0");
                }
                (
                    "/lab/joint",
                    [
                        OscType::String(name),
                        OscType::Float(a),
                        OscType::Float(b),
                        OscType::Float(c),
                    ],
                ) => {
                    assert!(names.contains(name.as_str()), "unknown joint {name}");
                    assert!([a, b, c].iter().all(|v| v.is_finite()));
                    assert!(joints.insert(name.clone()), "{name} sent twice");
                }
                (addr, args) => panic!("unexpected {addr} {args:?}"),
            }
        }
    }
    seen
}

/// Decodes every datagram with the assembler, counting its allocations.
fn decode(datagrams: &[Vec<u8>], lab: &LabSkeleton) -> (Vec<JointFrame>, LabStats) {
    let mut assembler = LabAssembler::default();
    let received = Instant::now();
    let mut frames = Vec::with_capacity(datagrams.len());
    let mut total = LabStats::default();
    ALLOCATIONS.with(|a| a.set(0));
    for d in datagrams {
        COUNTING.with(|c| c.set(true));
        let stats = assembler.datagram(d, received, |_| Some(lab), |f| frames.push(*f));
        COUNTING.with(|c| c.set(false));
        total += stats;
    }
    assert_eq!(ALLOCATIONS.with(Cell::get), 0, "the decoder allocated");
    (frames, total)
}

fn lab19() -> (Rig, StreamFormat) {
    parse_with_stream(
        mocap_bridge::skeleton::builtin::LAB19_JSON,
        Path::new("lab19.json"),
        &LoadOptions::default(),
    )
    .unwrap()
}

/// Angle between two rotations, radians, computed in f64.
fn angle(a: Quat, b: Quat) -> f64 {
    let d = a.as_dquat().conjugate() * b.as_dquat();
    2.0 * d.xyz().length().atan2(d.w.abs())
}

/// Every decoded frame of `subject` against frame `frame + shift` of the source
/// (joints matched by name); returns how many were checked.
fn compare(
    frames: &[JointFrame],
    subject: &str,
    shift: usize,
    lab19: &Skeleton,
    source: &Skeleton,
    motion: &Motion,
) -> usize {
    let mut checked = 0;
    for f in frames.iter().filter(|f| f.performer.as_str() == subject) {
        let k = f.frame as usize + shift;
        if k >= motion.frame_count() {
            continue;
        }
        let expected = motion.frame(k);
        for (j, joint) in lab19.joints().iter().enumerate() {
            let s = source.find(&joint.name).unwrap();
            assert!(f.has(j));
            let angle = angle(expected.rotations[s], f.rotations[j]);
            assert!(angle < 1e-4, "{subject} frame {k} {}: {angle}", joint.name);
        }
        let root = f.root_position.unwrap();
        let hips = source.find(&lab19.joints()[0].name).unwrap();
        let distance = root.distance(expected.translations[hips]);
        assert!(
            distance < 1e-4,
            "{subject} frame {k} root off by {distance} m"
        );
        checked += 1;
    }
    checked
}

/// A good share of what was sent arrived: loopback UDP drops what does not fit
/// the receive buffer while the receiver falls behind a sender going flat out.
fn assert_most_arrived(run: &Run) {
    let sent = summary_count(&run.stdout, "datagrams");
    let got = run.datagrams.len();
    assert!(got <= sent && 4 * got >= sent, "{got} of {sent} arrived");
    if got < sent {
        eprintln!("{} of {sent} datagrams lost on loopback", sent - got);
    }
}

#[test]
fn simulate_streams_the_built_in_performance_as_lab19_would() {
    let run = simulate(&["--loops", "1", "--subjects", "2"]);
    assert!(run.stdout.contains("joint by joint"), "{}", run.stdout);
    assert_most_arrived(&run);
    let (rig, stream) = lab19();
    let seen = check_schema(&run.datagrams, &rig.skeleton);
    assert!(seen.values().all(|joints| joints.len() == 19));
    assert!(seen.keys().any(|(s, _)| s == "subject-2"));

    let lab = LabSkeleton::new(&rig.skeleton, stream).unwrap();
    let (frames, stats) = decode(&run.datagrams, &lab);
    assert_eq!(stats.dropped(), 0, "{stats:?}");
    assert_eq!(frames.len(), run.datagrams.len());
    let mapped = MappedSkeleton::new(rig.skeleton.clone(), rig.bone_map.as_ref().unwrap()).unwrap();
    let motion = demo::lab19_performance(&mapped, 1);
    let checked = compare(
        &frames,
        "subject-1",
        0,
        &rig.skeleton,
        &rig.skeleton,
        &motion,
    );
    assert!(
        checked * 2 >= motion.frame_count(),
        "{checked} frames checked"
    );
    // The second subject is a quarter second (15 frames) further on.
    let shift = (0.25 * demo::FPS) as usize;
    let ahead = compare(
        &frames,
        "subject-2",
        shift,
        &rig.skeleton,
        &rig.skeleton,
        &motion,
    );
    assert!(ahead > 0);
}

/// The opening line the guide's `simulate` section shows is the one it prints.
#[test]
fn simulate_opens_with_the_line_the_guide_shows() {
    let guide =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/guide.md"))
            .unwrap();
    let lead = "It opens with a line naming what it plays and how (`";
    let start = guide.find(lead).expect("the guide shows the opening line") + lead.len();
    let quoted = &guide[start..start + guide[start..].find('`').unwrap()];
    let shown = quoted.split_whitespace().collect::<Vec<_>>().join(" ");
    // What follows `simulating ...`, up to the address (a socket of the test's own).
    let (_, shown) = shown.split_once("... ").unwrap();
    let shown = shown.strip_suffix("127.0.0.1:39541").unwrap();
    let run = simulate(&["--loops", "1"]);
    let first = run.stdout.lines().next().unwrap_or_default();
    assert!(first.starts_with("simulating "), "{first}");
    assert!(
        first.contains(shown),
        "the guide shows `{shown}`; it prints `{first}`"
    );
}

#[test]
fn simulate_streams_the_lab_bvh_joint_by_joint() {
    let Some(assets) = common::assets() else {
        return;
    };
    let path = assets.join("bvh/test_mocapbank.bvh");
    let run = simulate(&[path.to_str().unwrap()]);
    assert!(run.stdout.contains("joint by joint"), "{}", run.stdout);
    assert_most_arrived(&run);
    let (rig, stream) = lab19();
    check_schema(&run.datagrams, &rig.skeleton);
    let lab = LabSkeleton::new(&rig.skeleton, stream).unwrap();
    let (frames, stats) = decode(&run.datagrams, &lab);
    assert_eq!(stats.dropped(), 0, "{stats:?}");
    let source = bvh::load(&path, &LoadOptions::default()).unwrap();
    let motion = &source.clips[0].motion;
    let checked = compare(
        &frames,
        "subject-1",
        0,
        &rig.skeleton,
        &source.skeleton,
        motion,
    );
    assert!(
        checked * 2 >= motion.frame_count(),
        "{checked} frames checked"
    );
}

#[test]
fn simulate_refuses_bad_options_in_one_line_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let bad_stream = dir.path().join("lab.json");
    std::fs::write(
        &bad_stream,
        r#"{"joints": [{"name": "a", "offset": [0, 0, 0]}], "stream": {"format": "euler"}}"#,
    )
    .unwrap();
    let bad_stream = bad_stream.to_str().unwrap();
    let cases: [(&[&str], &str); 5] = [
        (&["--skeleton", bad_stream], "lab.json: stream.eulerOrder"),
        (&["--rate", "0"], "--rate 0"),
        (&["--subjects", "0"], "--subjects 0"),
        (&["--subject", "a", "--subject", "a"], "`a` is given twice"),
        (&["--subject", &"x".repeat(33)], "1 to 32 bytes"),
    ];
    for (args, needle) in cases {
        let out = Command::new(env!("CARGO_BIN_EXE_mocap-bridge"))
            .arg("simulate")
            .args(args)
            .args(["--fast", "--to", "127.0.0.1:9"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains(needle),
            "{stderr}"
        );
    }
}
