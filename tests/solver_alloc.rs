//! The solver's per-frame path allocates nothing: a counting allocator counts every
//! allocation made on the solver thread, after its performers have appeared
//! (adding a performer allocates its state, once), over frames of every kind.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::time::{Duration, Instant};

use glam::{Quat, Vec3};
use mocap_bridge::filter::{DeviceFilterConfig, OneEuroConfig};
use mocap_bridge::humanoid::DevicePose;
use mocap_bridge::pipeline::performer::{Avatar, PerformerSettings, StreamSkeleton};
use mocap_bridge::pipeline::solver::{Solver, SolverConfig};
use mocap_bridge::pipeline::{
    Delivery, InputFrame, OutputMsg, SourceFrame, input_ring, output_ring,
};
use mocap_bridge::protocol::frame::{JointFrame, PerformerName, TrackedPoint, TrackerFrame};
use mocap_bridge::retarget::MappedSkeleton;
use mocap_bridge::takes::demo;

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static MEASURED: Cell<bool> = const { Cell::new(false) };
}

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if MEASURED.with(Cell::get) {
            ALLOCATIONS.fetch_add(1, SeqCst);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if MEASURED.with(Cell::get) {
            ALLOCATIONS.fetch_add(1, SeqCst);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn mapped(name: &str, json: &str) -> MappedSkeleton {
    let rig = mocap_bridge::formats::skeleton_json::embedded_rig(name, json);
    let map = rig.bone_map.clone().expect("map");
    MappedSkeleton::new(rig.skeleton, &map).expect("maps")
}

#[test]
fn the_solver_allocates_nothing_per_frame() {
    let lab19 = mapped("lab19", mocap_bridge::skeleton::builtin::LAB19_JSON);
    let motion = demo::lab19_performance(&lab19, 1);
    let skeletons: Arc<[StreamSkeleton]> = vec![StreamSkeleton::new("lab19", lab19)].into();
    let avatar = Avatar::new(&mapped(
        "humanoid",
        mocap_bridge::skeleton::builtin::HUMANOID_JSON,
    ));
    // Every stage on: mocap IK for the skeleton, VR IK for trackers, filters (the
    // device filter designs its taps as the frame rate settles, on the stack).
    let settings = PerformerSettings {
        filter: Some(OneEuroConfig::default()),
        device_filter: Some(DeviceFilterConfig::default()),
        mocap_ik: Default::default(),
        vr_ik: Default::default(),
        calibration: None,
    };
    let config = SolverConfig {
        performer_timeout: Duration::from_secs(60),
        max_performers: 8,
        humanoid: settings,
        skeleton: settings,
        trackers: settings,
        performers: HashMap::new(),
    };
    let stop = Arc::new(AtomicBool::new(false));
    let (solver_tx, solver_rx) = std::sync::mpsc::channel::<Solver>();
    let flag = stop.clone();
    let thread = std::thread::spawn(move || {
        let solver = solver_rx.recv().expect("a solver");
        MEASURED.with(|m| m.set(true));
        solver.run(&flag);
        MEASURED.with(|m| m.set(false));
    });
    let (mut port, ring) = input_ring("test", 4096, thread.thread().clone());
    let (out_port, mut out) = output_ring("out", 8192, Delivery::Newest);
    // A client wants the sources too (the viewer's "sources"): that path is measured.
    let out_port =
        out_port.with_sources(std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(1)));
    let (_control, control_rx) = std::sync::mpsc::channel();
    let solver = Solver::new(
        config,
        skeletons,
        avatar,
        vec![ring],
        vec![out_port],
        control_rx,
    );
    let stats = solver.stats.clone();
    solver_tx.send(solver).expect("send");

    let name = |s: &str| PerformerName::new(s).expect("name");
    let mut send = |i: usize| {
        let received = Instant::now();
        let t = i as f64 / 60.0;
        let mut pose = demo::pose_at(t as f32, 0.95);
        pose.expressions
            .set_preset(mocap_bridge::humanoid::Preset::Happy, 0.5);
        port.push(InputFrame {
            received,
            frame: SourceFrame::Humanoid {
                performer: name("vmc"),
                time: t,
                pose,
            },
        });
        let f = motion.frame(i % motion.frame_count());
        let mut joints = JointFrame::new(name("lab"));
        joints.time = t;
        for (j, q) in f.rotations.iter().enumerate() {
            joints.set(j, *q);
        }
        joints.root_position = Some(f.translations[0]);
        port.push(InputFrame {
            received,
            frame: SourceFrame::Joints {
                skeleton: 0,
                frame: joints,
            },
        });
        let mut trackers = TrackerFrame::new(name("vr"));
        trackers.time = t;
        let sway = (t as f32).sin() * 0.1;
        trackers.set(
            TrackedPoint::Head,
            DevicePose::new(Vec3::new(sway, 1.6, 0.0), Quat::IDENTITY),
        );
        trackers.set(
            TrackedPoint::LeftHand,
            DevicePose::new(Vec3::new(0.5, 1.2, 0.2), Quat::IDENTITY),
        );
        trackers.set(
            TrackedPoint::RightHand,
            DevicePose::new(Vec3::new(-0.5, 1.2 + sway, 0.2), Quat::IDENTITY),
        );
        port.push(InputFrame {
            received,
            frame: SourceFrame::Trackers(trackers),
        });
    };
    let wait_for = |n: u64| {
        let deadline = Instant::now() + Duration::from_secs(30);
        while stats.frames.load(SeqCst) < n && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(stats.frames.load(SeqCst), n, "frames solved");
    };
    // Warm-up: the three performers appear (their state is allocated now).
    for i in 0..10 {
        send(i);
    }
    wait_for(30);
    let before = ALLOCATIONS.load(SeqCst);
    // The counter counts: adding the performers allocated their state.
    assert!(before > 0);
    for i in 10..310 {
        send(i);
        if i % 50 == 0 {
            while out.try_pop().is_some() {}
        }
    }
    wait_for(930);
    let during = ALLOCATIONS.load(SeqCst) - before;
    stop.store(true, SeqCst);
    thread.thread().unpark();
    thread.join().expect("solver thread");
    let (mut poses, mut sources) = (0, 0);
    while let Some(m) = out.try_pop() {
        poses += usize::from(matches!(m, OutputMsg::Pose(_)));
        sources += usize::from(matches!(m, OutputMsg::Source(_)));
    }
    println!(
        "900 frames (VMC, lab19 skeleton + mocap IK, VR trackers; filters on; sources asked for): {during} allocations on the solver thread; {poses} poses and {sources} sources left in the ring"
    );
    assert!(sources > 0, "the sources path ran");
    assert_eq!(stats.errors.load(SeqCst), 0);
    assert_eq!(during, 0);
}
