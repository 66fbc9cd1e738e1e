//! Limb IK, mocap mode and VR mode through the public API: the two-bone solver on
//! random limbs under several rest frames (property tests), limbs of random humanoid
//! rigs checked on the posed skeleton itself, VR mode and its calibration on the
//! built-in humanoid, and mocap and VR mode on real captures (skip without
//! ../shared/assets).

mod common;

use common::{RigSpec, Rng, angle_deg, assets, random_rig};
use glam::{Quat, Vec3};
use mocap_bridge::eval::{Perturbation, VrDevices, evaluate_mocap, evaluate_vr, scale_legs};
use mocap_bridge::filter::DeviceFilterConfig;
use mocap_bridge::formats::inspect::choose_map;
use mocap_bridge::formats::{LoadOptions, load_rig};
use mocap_bridge::humanoid::{DevicePose, HumanBone, HumanoidPose};
use mocap_bridge::ik::{
    BodyFrame, BodyProportions, Calibration, Limb, LimbIk, LimbRotations, MocapIkConfig, TwoBoneIk,
    VrIk, VrIkConfig, VrIkState, VrInput,
};
use mocap_bridge::retarget::{FromNormalized, MappedSkeleton, TargetRig};
use proptest::prelude::*;

/// The rest frames every limb check runs under: identity, a turned root, mirrored
/// axes, a scaled rig.
#[derive(Debug, Clone, Copy)]
enum RestFrame {
    Identity,
    Turned,
    Mirrored,
    Scaled,
}

impl RestFrame {
    fn apply(self, p: Vec3) -> Vec3 {
        match self {
            RestFrame::Identity => p,
            RestFrame::Turned => Quat::from_euler(glam::EulerRot::YXZ, 2.1, 0.7, -0.4) * p,
            RestFrame::Mirrored => Vec3::new(-p.x, p.y, p.z),
            RestFrame::Scaled => p * 0.013 + Vec3::new(5.0, -2.0, 1.0),
        }
    }
}

fn rest_frame() -> impl Strategy<Value = RestFrame> {
    prop_oneof![
        Just(RestFrame::Identity),
        Just(RestFrame::Turned),
        Just(RestFrame::Mirrored),
        Just(RestFrame::Scaled),
    ]
}

/// A coordinate in -1..1 in steps of a millionth. Drawn from integers: proptest's
/// `f32` range sampler trips its own debug assertion on rare draws of a range
/// across zero.
fn signed() -> impl Strategy<Value = f32> {
    (-1_000_000i32..1_000_000).prop_map(|n| n as f32 / 1e6)
}

fn unit() -> impl Strategy<Value = Vec3> {
    (signed(), signed(), signed())
        .prop_filter("not zero", |(x, y, z)| Vec3::new(*x, *y, *z).length() > 0.1)
        .prop_map(|(x, y, z)| Vec3::new(x, y, z).normalize())
}

/// Root, middle and end joints: bones 0.1 to 0.6 long in random directions.
fn limb() -> impl Strategy<Value = (Vec3, Vec3, Vec3)> {
    (unit(), unit(), 0.1f32..0.6, 0.1f32..0.6, unit()).prop_map(|(d1, d2, l1, l2, at)| {
        let a = at * 0.3;
        let b = a + d1 * l1;
        (a, b, b + d2 * l2)
    })
}

/// New middle and end joints of the limb `limb` solved for `target`.
fn solve_with(limb: [Vec3; 3], target: Vec3, pole: Vec3, softness: f32, weight: f32) -> [Vec3; 2] {
    let mut out = LimbRotations::default();
    let [root, middle, end] = limb;
    let job = TwoBoneIk {
        root,
        middle,
        end,
        target,
        pole,
        softness,
        weight,
        out: &mut out,
    };
    job.run().expect("a valid limb solves");
    out.apply(root, middle, end)
}

/// Solves fully, without softening.
fn solve(a: Vec3, b: Vec3, c: Vec3, target: Vec3, pole: Vec3) -> (Vec3, Vec3) {
    let [m, e] = solve_with([a, b, c], target, pole, 0.0, 1.0);
    (m, e)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn reachable_targets_are_hit_and_bone_lengths_kept(
        (a, b, c) in limb(),
        direction in unit(),
        fraction in 0.0f32..1.0,
        pole in unit(),
        frame in rest_frame(),
    ) {
        let (l1, l2) = (a.distance(b), b.distance(c));
        // Strictly inside the reachable shell [|l1 − l2|, l1 + l2].
        let (near, far) = ((l1 - l2).abs() + 1e-3, l1 + l2 - 1e-3);
        let target = a + direction * (near + fraction * (far - near));
        let f = |p| frame.apply(p);
        let scale = if matches!(frame, RestFrame::Scaled) { 0.013 } else { 1.0 };
        let (m, e) = solve(f(a), f(b), f(c), f(target), f(a + pole));
        prop_assert!(e.distance(f(target)) < 1e-4 * scale, "missed by {}", e.distance(f(target)));
        prop_assert!((m.distance(f(a)) - l1 * scale).abs() < 1e-4 * scale);
        prop_assert!((e.distance(m) - l2 * scale).abs() < 1e-4 * scale);
    }

    #[test]
    fn unreachable_targets_give_the_straight_limb_pointing_at_them(
        (a, b, c) in limb(),
        direction in unit(),
        beyond in 1.001f32..3.0,
        pole in unit(),
        frame in rest_frame(),
    ) {
        let (l1, l2) = (a.distance(b), b.distance(c));
        let target = a + direction * (l1 + l2) * beyond;
        let f = |p| frame.apply(p);
        let scale = if matches!(frame, RestFrame::Scaled) { 0.013 } else { 1.0 };
        let (m, e) = solve(f(a), f(b), f(c), f(target), f(a + pole));
        let want = f(a) + (f(target) - f(a)).normalize() * (l1 + l2) * scale;
        prop_assert!(e.distance(want) < 1e-4 * scale, "{e} vs {want}");
        prop_assert!(angle_deg(m - f(a), f(target) - f(a)) < 0.1);
        prop_assert!((m.distance(f(a)) - l1 * scale).abs() < 1e-4 * scale);
        prop_assert!((e.distance(m) - l2 * scale).abs() < 1e-4 * scale);
    }

    #[test]
    fn the_middle_joint_stays_on_the_pole_side(
        (a, b, c) in limb(),
        direction in unit(),
        fraction in 0.1f32..0.9,
        pole in unit(),
    ) {
        let (l1, l2) = (a.distance(b), b.distance(c));
        let (near, far) = ((l1 - l2).abs() + 1e-2, l1 + l2 - 1e-2);
        let target = a + direction * (near + fraction * (far - near));
        prop_assume!(pole.cross(direction).length() > 0.2);
        let (m, _) = solve(a, b, c, target, a + pole);
        let across = |v: Vec3| v - direction * direction.dot(v);
        prop_assert!(across(m - a).dot(across(pole)) > 0.0);
    }
}

/// Small pole motions give small elbow motions: along a slow path the elbow never jumps.
#[test]
fn an_arm_following_a_path_through_full_extension_never_flips() {
    let (mut a, mut b, mut c) = (Vec3::ZERO, Vec3::X * 0.3, Vec3::new(0.3, -0.25, 0.0));
    let pole = Vec3::new(0.15, 0.0, -1.0);
    let mut previous = None;
    for i in 0..400 {
        let t = i as f32 / 400.0 * std::f32::consts::TAU;
        // In and out past full reach, around the shoulder.
        let target = Vec3::new(t.cos(), 0.3 * t.sin(), 0.2 * (2.0 * t).sin())
            * (0.35 + 0.3 * (3.0 * t).sin().abs());
        let (m, e) = solve(a, b, c, target, pole);
        if let Some(p) = previous {
            assert!(
                m.distance(p) < 0.05,
                "frame {i}: elbow jumped {}",
                m.distance(p)
            );
        }
        previous = Some(m);
        (a, b, c) = (a, m, e);
    }
}

/// Targets stepping out through full reach, the elbow bent up while the pole is
/// behind: the arm swings its elbow back while it is bent, and it must not swing
/// back up once it is straight (its roll still comes from the pole then).
#[test]
fn a_limb_going_straight_keeps_its_roll() {
    let limb = [
        Vec3::ZERO,
        Vec3::new(0.3, 0.05, 0.0),
        Vec3::new(0.58, 0.0, 0.0),
    ];
    let pole = Vec3::new(0.3, 0.0, -1.0);
    let reach = limb[0].distance(limb[1]) + limb[1].distance(limb[2]);
    let mut previous: Option<Quat> = None;
    for i in 0..=80 {
        let target = Vec3::new(1.0, 0.1, 0.05).normalize() * reach * (0.99 + 0.00025 * i as f32);
        let mut out = LimbRotations::default();
        TwoBoneIk {
            root: limb[0],
            middle: limb[1],
            end: limb[2],
            target,
            pole,
            softness: 0.0,
            weight: 1.0,
            out: &mut out,
        }
        .run()
        .expect("a valid limb solves");
        if let Some(p) = previous {
            let step = p.angle_between(out.root);
            assert!(step < 0.05, "step {i}: the root turned {step} rad");
        }
        previous = Some(out.root);
    }
}

const STRAIGHT_ARM: [Vec3; 3] = [
    Vec3::ZERO,
    Vec3::new(0.3, 0.0, 0.0),
    Vec3::new(0.6, 0.0, 0.0),
];

#[test]
fn a_straight_arm_bends_toward_the_pole() {
    let target = Vec3::new(0.4, 0.0, 0.0);
    let [mid, end] = solve_with(STRAIGHT_ARM, target, Vec3::new(0.2, 0.0, -1.0), 0.0, 1.0);
    assert!(end.distance(target) < 1e-5, "{end}");
    assert!(mid.z < -0.1, "elbow goes back: {mid}");
    let [mid, _] = solve_with(STRAIGHT_ARM, target, Vec3::new(0.2, 1.0, 0.0), 0.0, 1.0);
    assert!(mid.y > 0.1, "elbow goes up: {mid}");
}

#[test]
fn a_knee_bent_backward_is_bent_toward_the_pole() {
    // Hyperextended knee: bent toward −z while the pole is in front (+z).
    let leg = [
        Vec3::ZERO,
        Vec3::new(0.0, -0.4, -0.02),
        Vec3::new(0.0, -0.8, 0.0),
    ];
    let target = Vec3::new(0.0, -0.6, 0.1);
    let [mid, end] = solve_with(leg, target, Vec3::new(0.0, -0.4, 1.0), 0.0, 1.0);
    assert!(end.distance(target) < 1e-5);
    assert!(mid.z > 0.1, "{mid}");
}

#[test]
fn half_weight_moves_part_way() {
    let [_, end] = solve_with(STRAIGHT_ARM, Vec3::new(0.0, 0.6, 0.0), Vec3::Z, 0.0, 0.5);
    let halfway = Vec3::new(1.0, 1.0, 0.0).normalize();
    assert!((end.normalize().dot(halfway) - 1.0).abs() < 1e-4);
}

#[test]
fn softening_stops_short_of_full_extension_but_hits_closer_targets() {
    let bent = [Vec3::ZERO, Vec3::X * 0.3, Vec3::new(0.3, 0.3, 0.0)];
    let [_, end] = solve_with(bent, Vec3::Z * 0.6, Vec3::Y, 0.1, 1.0);
    assert!(end.length() < 0.6 - 1e-3 && end.length() > 0.55, "{end}");
    let [_, end] = solve_with(bent, Vec3::Z * 0.5, Vec3::Y, 0.1, 1.0);
    assert!(end.distance(Vec3::Z * 0.5) < 1e-5);
}

fn spec(seed: u64, arm_drop_deg: f32, yaw_deg: f32, armature: bool) -> RigSpec {
    RigSpec {
        seed,
        legs: 1.1,
        torso: 0.9,
        arms: 1.2,
        arm_drop_deg,
        leg_spread_deg: 5.0,
        yaw_deg,
        chest: true,
        upper_chest: seed.is_multiple_of(2),
        neck: true,
        shoulders: true,
        toes: true,
        fingers: false,
        armature,
        extra_joints: false,
    }
}

/// World position of `bone` on the skeleton posed from `pose` by `FromNormalized`, in
/// the facing-corrected model space.
fn skeleton_position(m: &MappedSkeleton, pose: &HumanoidPose, bone: HumanBone) -> Vec3 {
    let target = TargetRig::new(m);
    let mut locals = vec![Quat::IDENTITY; m.skeleton.len()];
    let mut translations = m.skeleton.rest_translations();
    FromNormalized {
        target: &target,
        pose,
        local_rotations: &mut locals,
        hips_translation: &mut translations[target.hips_joint()],
    }
    .run()
    .unwrap();
    let world = m.skeleton.world_transforms(&locals, &translations);
    m.correction.facing * Vec3::from(world[m.map.joint(bone).unwrap()].translation)
}

#[test]
fn limbs_of_random_rigs_reach_their_targets_on_the_posed_skeleton() {
    let mut rng = Rng::new(7);
    let frames = [
        (0.0, 0.0, false),
        (0.0, 70.0, true),
        (45.0, -30.0, false),
        (80.0, 180.0, true),
    ];
    for (seed, (drop, yaw, armature)) in frames.into_iter().enumerate() {
        let rig = random_rig(&spec(seed as u64, drop, yaw, armature));
        let m = MappedSkeleton::new(rig.skeleton, &rig.map).unwrap();
        let body = BodyProportions::new(&m);
        for _ in 0..20 {
            let mut pose = HumanoidPose::default();
            for bone in mocap_bridge::humanoid::bone::ALL {
                if m.map.joint(bone).is_some() && bone != HumanBone::Hips {
                    pose.set_rotation(bone, rng.rotation_within(0.6));
                }
            }
            pose.rest_hips_height = m.rest_hips_height();
            pose.hips_position = Vec3::new(0.1, m.rest_hips_height(), -0.2);
            let mut frame = BodyFrame::default();
            frame.update(&body, &pose);
            // Forward kinematics of the body agrees with the skeleton's.
            for bone in [HumanBone::LeftHand, HumanBone::RightFoot, HumanBone::Head] {
                let want = skeleton_position(&m, &pose, bone);
                assert!(
                    frame.position(bone).distance(want) < 1e-4,
                    "seed {seed} {bone}"
                );
            }
            for limb in Limb::ALL {
                let [root, _, end] = limb.bones();
                let (l1, l2) = body.limb_lengths(limb);
                let dir = Vec3::new(
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                );
                let target = frame.position(root)
                    + dir.normalize_or(Vec3::Y) * (l1 + l2) * rng.range(0.4, 0.95);
                let hand_turn = rng.rotation();
                LimbIk {
                    body: &body,
                    limb,
                    target,
                    pole: frame.position(root) + Vec3::new(0.0, 0.0, -1.0),
                    end_rotation: Some(hand_turn),
                    softness: 0.0,
                    weight: 1.0,
                    frame: &mut frame,
                    pose: &mut pose,
                }
                .run()
                .unwrap();
                let got = skeleton_position(&m, &pose, end);
                assert!(
                    got.distance(target) < 1e-4,
                    "seed {seed} {limb:?}: {}",
                    got.distance(target)
                );
                assert!(frame.position(end).distance(target) < 1e-4);
                let model = pose.model_rotations()[end.index()];
                assert!(
                    model.dot(hand_turn).abs() > 1.0 - 1e-5,
                    "{limb:?} end rotation"
                );
            }
        }
    }
}

#[test]
fn mocap_config_deserializes_from_partial_json_with_defaults() {
    let config: MocapIkConfig =
        serde_json::from_str(r#"{"hands": false, "footWeight": 0.5}"#).unwrap();
    assert!(!config.hands);
    assert_eq!(config.foot_weight, 0.5);
    assert_eq!(config.contact_speed, MocapIkConfig::default().contact_speed);
    assert!(serde_json::from_str::<MocapIkConfig>(r#"{"hand": 1}"#).is_err());
}

fn load(path: &std::path::Path) -> (mocap_bridge::formats::Rig, MappedSkeleton) {
    let rig = load_rig(path, &LoadOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let chosen = choose_map(&rig, None).expect("a map");
    let m = MappedSkeleton::new(rig.skeleton.clone(), &chosen.map).unwrap();
    (rig, m)
}

#[test]
fn cmu_walk_onto_example_vrm_with_longer_and_shorter_legs_keeps_planted_feet_still() {
    let Some(dir) = assets() else { return };
    let (rig, source) = load(&dir.join("bvh/cmu_12_01_walk.bvh"));
    let (_, example) = load(&dir.join("vrm/Example.vrm"));
    let motion = &rig.clips[0].motion;
    for factor in [1.2, 1.0, 0.8] {
        let target = scale_legs(&example, factor).unwrap();
        let r = evaluate_mocap(&source, motion, &target, &MocapIkConfig::default()).unwrap();
        println!("legs x{factor}: {r:?}");
        assert!(r.contact_frames > r.frames / 2, "{r:?}");
        assert!(r.with_ik.skate_cm <= 0.5, "{r:?}");
        assert!(r.with_ik.lowest_ankle_cm >= 0.0, "{r:?}");
    }
}

fn builtin_humanoid() -> MappedSkeleton {
    let rig = mocap_bridge::formats::skeleton_json::embedded_rig(
        "humanoid.json",
        mocap_bridge::skeleton::builtin::HUMANOID_JSON,
    );
    let chosen = choose_map(&rig, None).expect("a map");
    MappedSkeleton::new(rig.skeleton.clone(), &chosen.map).unwrap()
}

#[test]
fn calibration_from_a_t_pose_recovers_head_and_wrists_through_any_device_mount() {
    let mount = [
        Quat::from_euler(glam::EulerRot::YXZ, 0.3, -0.5, 0.2),
        Quat::from_euler(glam::EulerRot::YXZ, -1.0, 0.4, 2.0),
        Quat::from_euler(glam::EulerRot::YXZ, 2.5, 0.1, -0.7),
    ];
    let head_joint = Vec3::new(0.0, 1.5, 0.0);
    let wrists = [Vec3::new(0.75, 1.35, 0.0), Vec3::new(-0.75, 1.35, 0.0)];
    let grip = mocap_bridge::ik::calibration::GRIP_OFFSET;
    let eye = mocap_bridge::ik::calibration::HEAD_TO_EYE;
    let hmd = DevicePose::new(head_joint + eye, mount[0]);
    let left = DevicePose::new(wrists[0] + Vec3::X * grip, mount[1]);
    let right = DevicePose::new(wrists[1] - Vec3::X * grip, mount[2]);
    let cal = Calibration::from_t_pose(hmd, left, right);
    assert!((cal.height - 1.5).abs() < 1e-5, "{cal:?}");
    assert!((cal.arm_span - 1.5).abs() < 1e-5, "{cal:?}");
    // The user turns and moves: bones turn by `turn`, devices go with them.
    let turn = Quat::from_euler(glam::EulerRot::YXZ, 0.8, 0.3, -0.2);
    let moved = |d: DevicePose, joint: Vec3, to: Vec3| {
        DevicePose::new(to + turn * (d.position - joint), turn * d.rotation)
    };
    let head_to = Vec3::new(0.2, 1.3, 0.4);
    let head = cal.head(&moved(hmd, head_joint, head_to));
    assert!(head.position.distance(head_to) < 1e-5);
    assert!(head.rotation.angle_between(turn) < 1e-3);
    let wrist_to = Vec3::new(0.3, 1.0, 0.5);
    let hand = cal.hand(1, &moved(right, wrists[1], wrist_to));
    assert!(hand.position.distance(wrist_to) < 1e-5);
    assert!(hand.rotation.angle_between(turn) < 1e-3);
    let json = serde_json::to_string(&cal).unwrap();
    assert_eq!(serde_json::from_str::<Calibration>(&json).unwrap(), cal);
}

/// Devices for a body standing with its head at `head` and wrists at `hands`.
fn devices(cal: &Calibration, head: Vec3, yaw: f32, hands: [Vec3; 2]) -> VrInput {
    let turn = Quat::from_rotation_y(yaw);
    VrInput {
        head: DevicePose::new(head + turn * cal.head_to_eye, turn),
        hands: hands.map(|h| Some(DevicePose::new(h, turn))),
        ..VrInput::default()
    }
}

fn vr_solve(
    body: &BodyProportions,
    cal: &Calibration,
    input: &VrInput,
    state: &mut VrIkState,
) -> (HumanoidPose, BodyFrame) {
    let mut pose = HumanoidPose::default();
    VrIk {
        config: &VrIkConfig::default(),
        body,
        calibration: cal,
        input,
        dt: 1.0 / 90.0,
        state,
        pose: &mut pose,
    }
    .run()
    .expect("vr ik runs");
    let mut frame = BodyFrame::default();
    frame.update(body, &pose);
    (pose, frame)
}

#[test]
fn vr_mode_puts_head_and_hands_on_their_targets_and_keeps_bones_whole() {
    let m = builtin_humanoid();
    let body = BodyProportions::new(&m);
    let cal = Calibration::of_body(&body, mocap_bridge::ik::calibration::HEAD_TO_EYE);
    let head0 = body.rest_position(HumanBone::Head);
    let mut rng = Rng::new(7);
    let mut state = VrIkState::default();
    for _ in 0..200 {
        let yaw = rng.range(-3.0, 3.0);
        let head = head0
            + Vec3::new(
                rng.range(-0.5, 0.5),
                rng.range(-0.3, 0.05),
                rng.range(-0.5, 0.5),
            );
        let turn = Quat::from_rotation_y(yaw);
        // Hands within easy reach: in front of the chest.
        let hands = [1.0f32, -1.0].map(|side| {
            head + turn
                * Vec3::new(
                    side * rng.range(0.1, 0.3),
                    rng.range(-0.5, -0.2),
                    rng.range(0.1, 0.3),
                )
        });
        let input = devices(&cal, head, yaw, hands);
        let (pose, frame) = vr_solve(&body, &cal, &input, &mut state);
        assert!(frame.position(HumanBone::Head).distance(head) < 1e-3);
        for (side, bone) in [HumanBone::LeftHand, HumanBone::RightHand]
            .into_iter()
            .enumerate()
        {
            let miss = frame.position(bone).distance(hands[side]);
            assert!(miss < 1e-3, "hand {side} misses by {miss} m: {pose:?}");
        }
        for limb in Limb::ALL {
            let [a, b, c] = limb.bones().map(|x| frame.position(x));
            let (l1, l2) = body.limb_lengths(limb);
            assert!((a.distance(b) - l1).abs() < 1e-4 && (b.distance(c) - l2).abs() < 1e-4);
        }
        // Normalized: the forward kinematics' product of five turns drifts off unit
        // length by a few 1e-7, which alone reads as 1e-3 rad in `angle_between`.
        let head = frame.rotation(HumanBone::Head).normalize();
        assert!(head.angle_between(turn) < 1e-3);
    }
}

#[test]
fn vr_mode_keeps_feet_planted_until_the_body_moves_away_then_steps() {
    let m = builtin_humanoid();
    let body = BodyProportions::new(&m);
    let cal = Calibration::of_body(&body, mocap_bridge::ik::calibration::HEAD_TO_EYE);
    let head0 = body.rest_position(HumanBone::Head);
    let arms = [Vec3::new(0.2, -0.6, 0.1), Vec3::new(-0.2, -0.6, 0.1)];
    let mut state = VrIkState::default();
    let feet =
        |frame: &BodyFrame| [HumanBone::LeftFoot, HumanBone::RightFoot].map(|b| frame.position(b));
    let (_, first) = vr_solve(
        &body,
        &cal,
        &devices(&cal, head0, 0.0, arms.map(|a| head0 + a)),
        &mut state,
    );
    let planted = feet(&first);
    // Sway 5 cm: the feet stay (within 1 cm: the straight standing leg cannot quite
    // reach once the hips move off).
    for i in 0..30 {
        let head = head0 + Vec3::X * 0.05 * (i as f32 / 30.0);
        let (_, f) = vr_solve(
            &body,
            &cal,
            &devices(&cal, head, 0.0, arms.map(|a| head + a)),
            &mut state,
        );
        for (now, was) in feet(&f).iter().zip(&planted) {
            assert!(now.distance(*was) < 1e-2, "{now} left {was}");
        }
    }
    // Walk 1 m forward over two seconds: the feet follow, stepping.
    let mut last = first;
    for i in 0..180 {
        let head = head0 + Vec3::Z * (i as f32 / 180.0);
        (_, last) = vr_solve(
            &body,
            &cal,
            &devices(&cal, head, 0.0, arms.map(|a| head + a)),
            &mut state,
        );
    }
    for _ in 0..60 {
        let head = head0 + Vec3::Z;
        (_, last) = vr_solve(
            &body,
            &cal,
            &devices(&cal, head, 0.0, arms.map(|a| head + a)),
            &mut state,
        );
    }
    for (now, was) in feet(&last).iter().zip(&planted) {
        assert!(
            (now.z - was.z - 1.0).abs() < 0.1 * cal.height,
            "{now} from {was}"
        );
        assert!((now.y - was.y).abs() < 1e-2, "{now} from {was}");
    }
}

#[test]
fn vr_mode_crouches_with_the_hips_back_when_the_head_drops() {
    // Facing +X, the head drops 20 cm below its standing height and stays: the hips
    // settle `crouchBack` of the drop behind the head (the way the body faces),
    // and straight under it with `crouchBack` 0. Standing, they are under it.
    let m = builtin_humanoid();
    let body = BodyProportions::new(&m);
    let cal = Calibration::of_body(&body, mocap_bridge::ik::calibration::HEAD_TO_EYE);
    let head0 = body.rest_position(HumanBone::Head);
    let yaw = std::f32::consts::FRAC_PI_2;
    let arms = [Vec3::new(0.1, -0.6, 0.2), Vec3::new(0.1, -0.6, -0.2)];
    let behind = |crouch_back: f32, drop: f32| {
        let config = VrIkConfig {
            crouch_back,
            ..VrIkConfig::default()
        };
        let mut state = VrIkState::default();
        let mut pose = HumanoidPose::default();
        let head = head0 - Vec3::Y * drop;
        let input = devices(&cal, head, yaw, arms.map(|a| head + a));
        for _ in 0..90 {
            VrIk {
                config: &config,
                body: &body,
                calibration: &cal,
                input: &input,
                dt: 1.0 / 90.0,
                state: &mut state,
                pose: &mut pose,
            }
            .run()
            .expect("vr ik runs");
        }
        let mut frame = BodyFrame::default();
        frame.update(&body, &pose);
        assert!(frame.position(HumanBone::Head).distance(head) < 1e-3);
        let d = frame.position(HumanBone::Head) - frame.position(HumanBone::Hips);
        // Along where the body faces (+X), and across it.
        (d.x, d.z)
    };
    let config = VrIkConfig::default();
    let (back, across) = behind(config.crouch_back, 0.2);
    assert!(
        (back - config.crouch_back * 0.2).abs() < 0.02 && across.abs() < 0.01,
        "{back} {across}"
    );
    let (back, _) = behind(0.0, 0.2);
    assert!(back.abs() < 0.02, "{back}");
    let (back, _) = behind(config.crouch_back, 0.0);
    assert!(back.abs() < 0.02, "{back}");
}

#[test]
fn vr_mode_on_a_curve_lands_the_steps_on_the_path() {
    // Walking 1.3 m/s around a circle of 2 m radius, facing along the path, the arms
    // swinging against the legs (1 s stride): each step lands within 13 cm of where
    // its foot walks beside the path (10.5 cm here), although the body's facing lags
    // the turn (led along that facing instead of the head's travel, 14-16 cm).
    let m = builtin_humanoid();
    let body = BodyProportions::new(&m);
    let cal = Calibration::of_body(&body, mocap_bridge::ik::calibration::HEAD_TO_EYE);
    let head0 = body.rest_position(HumanBone::Head);
    let (radius, speed, stride, dt) = (2.0f32, 1.3f32, 1.0f32, 1.0 / 90.0);
    // Half the feet's rest distance apart: where each foot walks beside the path.
    let width = body
        .rest_position(HumanBone::LeftFoot)
        .distance(body.rest_position(HumanBone::RightFoot))
        / 2.0;
    let mut state = VrIkState::default();
    let mut worst = 0.0f32;
    let mut landed = 0;
    for i in 0..(6.0 / dt) as usize {
        let t = i as f32 * dt;
        let angle = speed * t / radius;
        // Counter-clockwise from above, starting at +X facing +Z.
        let head = Vec3::new(radius * angle.cos(), head0.y, radius * angle.sin());
        let yaw = -angle;
        let turn = Quat::from_rotation_y(yaw);
        let swing = 0.15 * (std::f32::consts::TAU * t / stride).sin();
        let hands = [
            head + turn * Vec3::new(0.2, -0.6, swing),
            head + turn * Vec3::new(-0.2, -0.6, -swing),
        ];
        let was = [state.is_planted(0), state.is_planted(1)];
        let (_, frame) = vr_solve(&body, &cal, &devices(&cal, head, yaw, hands), &mut state);
        for (side, foot) in [HumanBone::LeftFoot, HumanBone::RightFoot]
            .into_iter()
            .enumerate()
        {
            if t > 2.0 && !was[side] && state.is_planted(side) {
                let at = frame.position(foot);
                // The left foot (+X at the start) is on the outside of the turn.
                let lane = radius + if side == 0 { width } else { -width };
                let off = (Vec3::new(at.x, 0.0, at.z).length() - lane).abs();
                worst = worst.max(off);
                landed += 1;
            }
        }
    }
    assert!(landed >= 6, "{landed} steps landed");
    assert!(worst < 0.13, "a step landed {worst} m off its lane");
}

/// The head's path for `vr_mode_steps_no_more_jerkily_than_a_minimum_jerk_walker`:
/// along +Z at `speed` m/s until `t0` s, slowing to a stop over `slow` s, turning
/// around in place, and walking back, speeding up over `slow` s; the head's
/// distance along +Z and its yaw at time `t`.
fn there_and_back(t: f32, speed: f32, t0: f32, slow: f32) -> (f32, f32) {
    use std::f32::consts::PI;
    let t1 = t0 + slow;
    let out = speed * t0 + speed * slow / 2.0;
    let (turn_start, turn_end) = (t1 + 0.3, t1 + 0.9);
    let back = turn_end + 0.2;
    if t < t0 {
        (speed * t, 0.0)
    } else if t < t1 {
        let u = t - t0;
        (speed * t0 + speed * u - speed * u * u / (2.0 * slow), 0.0)
    } else if t < turn_start {
        (out, 0.0)
    } else if t < turn_end {
        let u = (t - turn_start) / (turn_end - turn_start);
        (out, PI * u * u * (3.0 - 2.0 * u))
    } else if t < back {
        (out, PI)
    } else {
        let u = t - back;
        let d = if u < slow {
            speed * u * u / (2.0 * slow)
        } else {
            speed * slow / 2.0 + speed * (u - slow)
        };
        (out - d, PI)
    }
}

#[test]
fn vr_mode_steps_no_more_jerkily_than_a_minimum_jerk_walker() {
    // Three-point VR (head and hands only) at 90 Hz, walkers of several speeds and
    // strides (the arms swing ±15 cm against the legs): a walk, slowing to a stop,
    // turning around and walking back. A walker at its cadence moves each foot a
    // stride (speed · stride) in at most a half stride, one foot in the air at a
    // time: a minimum-jerk step of that length over that time gives a foot a mean
    // jerk of 23.1 · d / T³ over its swing (23.1 = ∫|s‴| of the quintic
    // s = 10u³ − 15u⁴ + 6u⁵), half of that over the walk. The feet, measured as
    // `eval-ik` does (third differences over 1/30 s), stay within it: a step
    // hurried to land, a short step chasing a far landing, or a knee whose softness
    // swings with the hips' speed jerks them beyond it (1.5-1.8 times it here).
    let m = builtin_humanoid();
    let body = BodyProportions::new(&m);
    let cal = Calibration::of_body(&body, mocap_bridge::ik::calibration::HEAD_TO_EYE);
    let head0 = body.rest_position(HumanBone::Head);
    let dt = 1.0f32 / 90.0;
    // Speed m/s, stride s.
    for (speed, stride) in [(0.8f32, 0.8f32), (0.9, 0.75), (1.0, 0.7), (1.2, 1.0)] {
        let mut state = VrIkState::default();
        let mut feet = Vec::new();
        for i in 0..(7.0 / dt) as usize {
            let t = i as f32 * dt;
            let (z, yaw) = there_and_back(t, speed, 2.5, 0.6);
            let head = head0 + Vec3::Z * z;
            let turn = Quat::from_rotation_y(yaw);
            let swing = 0.15 * (std::f32::consts::TAU * t / stride).sin();
            let hands = [
                head + turn * Vec3::new(0.2, -0.6, swing),
                head + turn * Vec3::new(-0.2, -0.6, -swing),
            ];
            let (_, frame) = vr_solve(&body, &cal, &devices(&cal, head, yaw, hands), &mut state);
            feet.push([HumanBone::LeftFoot, HumanBone::RightFoot].map(|b| frame.position(b)));
        }
        // 1/30 s at 90 Hz.
        let s = 3;
        let h = s as f32 * dt;
        let mut sum = [0.0f32; 2];
        let mut count = 0;
        for i in 3 * s..feet.len() {
            for (side, total) in sum.iter_mut().enumerate() {
                let at = |k: usize| feet[k][side];
                let third = at(i) - 3.0 * at(i - s) + 3.0 * at(i - 2 * s) - at(i - 3 * s);
                *total += third.length() / (h * h * h);
            }
            count += 1;
        }
        let (d, t) = (speed * stride, stride / 2.0);
        let walker = 23.1 * d / (t * t * t) / 2.0;
        for (side, total) in sum.iter().enumerate() {
            let mean = total / count as f32;
            assert!(
                mean <= walker,
                "{speed} m/s, {stride} s stride, foot {side}: mean jerk {mean:.0} m/s³ over \
                 a minimum-jerk walker's {walker:.0}"
            );
        }
    }
}

#[test]
fn vr_mode_rejects_a_bad_interval_and_a_non_finite_device() {
    let m = builtin_humanoid();
    let body = BodyProportions::new(&m);
    let cal = Calibration::of_body(&body, Vec3::ZERO);
    let mut input = devices(&cal, Vec3::Y, 0.0, [Vec3::X, -Vec3::X]);
    let mut state = VrIkState::default();
    let mut pose = HumanoidPose::default();
    let config = VrIkConfig::default();
    let job = VrIk {
        config: &config,
        body: &body,
        calibration: &cal,
        input: &input,
        dt: 0.0,
        state: &mut state,
        pose: &mut pose,
    };
    assert!(job.validate().is_err());
    input.hands[1].as_mut().expect("held").rotation = Quat::from_xyzw(0.0, f32::NAN, 0.0, 1.0);
    let job = VrIk {
        config: &config,
        body: &body,
        calibration: &cal,
        input: &input,
        dt: 0.01,
        state: &mut state,
        pose: &mut pose,
    };
    assert!(job.validate().is_err());
    input.hands[1].as_mut().expect("held").rotation = Quat::IDENTITY;
    input.feet[0] = Some(DevicePose::new(Vec3::NAN, Quat::IDENTITY));
    let job = VrIk {
        config: &config,
        body: &body,
        calibration: &cal,
        input: &input,
        dt: 0.01,
        state: &mut state,
        pose: &mut pose,
    };
    assert!(job.validate().is_err());
}

#[test]
fn vr_mode_on_the_cmu_walk_hits_head_and_hands_without_flips() {
    let Some(dir) = assets() else { return };
    let (rig, source) = load(&dir.join("bvh/cmu_12_01_walk.bvh"));
    let target = builtin_humanoid();
    let motion = &rig.clips[0].motion;
    let config = VrIkConfig::default();
    let perturbation = Perturbation::default();
    // The perturbed devices through the device filter told their noise, as the
    // bridge takes them (and as `eval-ik` prints them).
    let smoothing = DeviceFilterConfig {
        noise_m: perturbation.noise,
        rotation_noise_deg: perturbation.rotation_noise_deg,
        ..DeviceFilterConfig::default()
    };
    let perturbed = Some((&perturbation, &smoothing));
    // The issue's goals, ideal and perturbed alike.
    let runs = [
        ("3-point", VrDevices::ThreePoint, None, 8.0),
        ("6-point", VrDevices::SixPoint, None, 3.0),
        ("3-point perturbed", VrDevices::ThreePoint, perturbed, 8.0),
        ("6-point perturbed", VrDevices::SixPoint, perturbed, 3.0),
    ];
    for (name, devices, perturb, mpjpe_cm) in runs {
        let r = evaluate_vr(
            &source,
            motion,
            &target,
            devices,
            perturb.map(|p| p.0),
            &config,
            perturb.map(|p| p.1),
        )
        .unwrap();
        println!("{name}: {r:?}");
        assert_eq!(r.frames, motion.frame_count());
        assert_eq!(r.flips, 0, "{name}: {r:?}");
        assert!(r.mpjpe_cm <= mpjpe_cm, "{name}: {r:?}");
        // Head and hands on their (filtered) targets, hands whenever those are
        // within reach.
        assert!(r.max_reachable_hand_error_mm <= 1.0, "{name}: {r:?}");
        assert!(r.max_head_error_mm <= 1.0, "{name}: {r:?}");
        if perturb.is_none() {
            assert!(r.hand_error_cm <= 0.1, "{name}: {r:?}");
        }
        if perturb.is_none() {
            // The gait-stepped feet, the smoothed torso and the arms: no more jerk
            // than the capture's own over 1/30 s steps.
            assert!(r.jitter <= r.ground_truth_jitter, "{name}: {r:?}");
        } else {
            // The filtered devices: frame to frame at 120 Hz, no more jerk than the
            // capture's own noise (over 1/30 s steps the filtered 1 cm of noise is
            // above the truth's, docs/performance.md).
            assert!(
                r.frame_jitter <= r.ground_truth_frame_jitter,
                "{name}: {r:?}"
            );
        }
        if devices == VrDevices::ThreePoint {
            // Planted feet that stay put.
            assert!(r.skate_cm <= 0.3, "{name}: {r:?}");
        }
    }
    // Unfiltered, 1 cm of noise passes into the pose as jerk.
    let raw = evaluate_vr(
        &source,
        motion,
        &target,
        VrDevices::SixPoint,
        Some(&perturbation),
        &config,
        None,
    )
    .unwrap();
    assert!(
        raw.frame_jitter > 10.0 * raw.ground_truth_frame_jitter,
        "{raw:?}"
    );
    assert!(raw.jitter > 10.0 * raw.ground_truth_jitter, "{raw:?}");
}

#[test]
fn vr_mode_with_noisy_device_rotations_stays_smooth() {
    let Some(dir) = assets() else { return };
    let (rig, source) = load(&dir.join("bvh/cmu_12_01_walk.bvh"));
    let target = builtin_humanoid();
    let motion = &rig.clips[0].motion;
    let config = VrIkConfig::default();
    // The perturbed run with 1° of noise on every device rotation too.
    let perturbation = Perturbation {
        rotation_noise_deg: 1.0,
        ..Perturbation::default()
    };
    let told = |rotation_noise_deg| DeviceFilterConfig {
        noise_m: perturbation.noise,
        rotation_noise_deg,
        ..DeviceFilterConfig::default()
    };
    let run = |devices, smoothing: &DeviceFilterConfig| {
        evaluate_vr(
            &source,
            motion,
            &target,
            devices,
            Some(&perturbation),
            &config,
            Some(smoothing),
        )
        .unwrap()
    };
    for (name, devices, mpjpe_cm) in [
        ("3-point", VrDevices::ThreePoint, 8.0),
        ("6-point", VrDevices::SixPoint, 3.0),
    ] {
        let r = run(devices, &told(1.0));
        println!("{name}, rotations filtered: {r:?}");
        assert_eq!(r.flips, 0, "{name}: {r:?}");
        assert!(r.mpjpe_cm <= mpjpe_cm, "{name}: {r:?}");
        assert!(r.max_reachable_hand_error_mm <= 1.0, "{name}: {r:?}");
        assert!(r.max_head_error_mm <= 1.0, "{name}: {r:?}");
        assert!(
            r.frame_jitter <= r.ground_truth_frame_jitter,
            "{name}: {r:?}"
        );
        // Positions filtered, rotations not: the headset's and trackers' turns
        // shake the body.
        let raw = run(devices, &told(0.0));
        println!("{name}, rotations unfiltered: {raw:?}");
        assert!(
            raw.frame_jitter > 3.0 * raw.ground_truth_frame_jitter,
            "{name}: {raw:?}"
        );
    }
}

#[test]
fn vr_mode_follows_every_tracker_it_gets() {
    let m = builtin_humanoid();
    let body = BodyProportions::new(&m);
    let cal = Calibration::of_body(&body, mocap_bridge::ik::calibration::HEAD_TO_EYE);
    let rest = |b: HumanBone| body.rest_position(b);
    let head = rest(HumanBone::Head) + Vec3::new(0.03, -0.04, 0.05);
    let hands = [
        rest(HumanBone::Head) + Vec3::new(0.25, -0.5, 0.25),
        rest(HumanBone::Head) + Vec3::new(-0.2, -0.4, 0.3),
    ];
    let mut input = devices(&cal, head, 0.2, hands);
    let chest = Quat::from_euler(glam::EulerRot::YXZ, 0.15, 0.1, 0.0);
    input.hips = Some(DevicePose::new(
        rest(HumanBone::Hips) + Vec3::new(0.02, -0.03, 0.0),
        Quat::from_rotation_y(0.1),
    ));
    input.chest = Some(DevicePose::new(Vec3::ZERO, chest));
    let feet = [
        rest(HumanBone::LeftFoot) + Vec3::new(0.0, 0.02, 0.1),
        rest(HumanBone::RightFoot) + Vec3::new(0.0, 0.0, -0.1),
    ];
    input.feet = feet.map(|f| Some(DevicePose::new(f, Quat::from_rotation_y(0.1))));
    // Elbows out to the sides, knees forward.
    input.elbows = [Some(hands[0] + Vec3::X), Some(hands[1] - Vec3::X)];
    input.knees = [
        Some(feet[0] + Vec3::new(0.0, 0.4, 1.0)),
        Some(feet[1] + Vec3::new(0.0, 0.4, 1.0)),
    ];
    let (_, frame) = vr_solve(&body, &cal, &input, &mut VrIkState::default());
    assert!(frame.position(HumanBone::Head).distance(head) < 1e-3);
    assert!(frame.rotation(HumanBone::UpperChest).angle_between(chest) < 1e-3);
    for (side, limb) in [Limb::LeftArm, Limb::RightArm].into_iter().enumerate() {
        let [a, b, c] = limb.bones().map(|x| frame.position(x));
        assert!(c.distance(hands[side]) < 1e-3);
        let out = if side == 0 { 1.0 } else { -1.0 };
        assert!((b - a.lerp(c, 0.5)).x * out > 0.0, "elbow {side} not out");
    }
    for (side, limb) in [Limb::LeftLeg, Limb::RightLeg].into_iter().enumerate() {
        let [a, b, c] = limb.bones().map(|x| frame.position(x));
        assert!(
            c.distance(feet[side]) < 1e-3,
            "foot {side}: {c} for {}",
            feet[side]
        );
        assert!((b - a.lerp(c, 0.5)).z > 0.0, "knee {side} not forward");
    }
}

#[test]
fn vr_mode_keeps_the_standing_foot_planted_through_noisy_controllers() {
    // Three-point VR at 90 Hz, walking 1 m/s with a 1.1 s stride, the arms swinging
    // ±5 cm against the legs, and 1 cm of noise on every device position, filtered
    // as the bridge filters devices (eight seeds). Near the arms' turns the noise
    // reads as the side the body is over flipping and back within a few frames;
    // that must not lift the foot the body stands on (both feet in the air for a
    // step's time, the standing one sliding along under the walker). A walker has
    // one foot in the air at a time, and the steps overlap only where one lands and
    // the next lifts, both slowly: on no frame do both feet move faster than 1.35
    // m/s (1.5 cm a frame; 2-3 cm with every flip read, on 6 of the 8 seeds).
    let m = builtin_humanoid();
    let body = BodyProportions::new(&m);
    let cal = Calibration::of_body(&body, mocap_bridge::ik::calibration::HEAD_TO_EYE);
    let head0 = body.rest_position(HumanBone::Head);
    let dt = 1.0f32 / 90.0;
    let (speed, stride, swing, noise) = (1.0f32, 1.1f32, 0.05f32, 0.01f32);
    for seed in 1..=8u64 {
        let mut rng = Rng::new(seed);
        // Roughly normal: the sum of four uniforms, scaled to `noise` RMS.
        let mut jitter = || {
            let mut g = || (0..4).map(|_| rng.range(-1.0, 1.0)).sum::<f32>() * 0.75f32.sqrt();
            Vec3::new(g(), g(), g()) * noise
        };
        let mut filter = mocap_bridge::filter::DeviceFilter::<3>::new(DeviceFilterConfig {
            noise_m: noise,
            ..DeviceFilterConfig::default()
        });
        let mut state = VrIkState::default();
        let mut last: Option<[Vec3; 2]> = None;
        for i in 0..(6.0 / dt) as usize {
            let t = i as f32 * dt;
            let head = head0 + Vec3::Z * speed * t;
            let ahead = swing * (std::f32::consts::TAU * t / stride).sin();
            let hands = [
                head + Vec3::new(0.2, -0.6, ahead),
                head + Vec3::new(-0.2, -0.6, -ahead),
            ];
            let mut input = devices(&cal, head, 0.0, hands);
            filter.step(dt);
            let [Some(left), Some(right)] = &mut input.hands else {
                panic!("both hands held");
            };
            for (k, d) in [&mut input.head, left, right].into_iter().enumerate() {
                d.position = filter.filter(k, d.position + jitter());
            }
            let (_, frame) = vr_solve(&body, &cal, &input, &mut state);
            let feet = [HumanBone::LeftFoot, HumanBone::RightFoot].map(|b| frame.position(b));
            if let Some(was) = last {
                let moved = [0, 1].map(|s| {
                    let d = feet[s] - was[s];
                    Vec3::new(d.x, 0.0, d.z).length()
                });
                assert!(
                    moved[0].min(moved[1]) <= 0.015,
                    "seed {seed}, {t:.2} s: both feet moving, {moved:?} m this frame"
                );
            }
            last = Some(feet);
        }
    }
}

#[test]
fn vr_mode_seen_from_the_middle_of_a_walk_steps_the_lagging_foot_at_once() {
    // Three-point VR at 90 Hz, the solve started on a walker already under way
    // (1 m/s along +Z, the arms swinging ±15 cm against the legs, a 1 s stride), as
    // when the bridge starts or the tracking comes back mid-walk. Both feet start
    // under the body and fall behind where they land: once the gait has read the
    // side the body is over, the other foot steps, well before the first change of
    // side (it lifts at 0.08 s; without the first step, neither foot left the floor
    // for 0.54 s).
    let m = builtin_humanoid();
    let body = BodyProportions::new(&m);
    let cal = Calibration::of_body(&body, mocap_bridge::ik::calibration::HEAD_TO_EYE);
    let head0 = body.rest_position(HumanBone::Head);
    let (speed, stride, dt) = (1.0f32, 1.0f32, 1.0f32 / 90.0);
    let mut state = VrIkState::default();
    let mut first_lift = None;
    for i in 0..(2.0 / dt) as usize {
        let t = i as f32 * dt;
        let head = head0 + Vec3::Z * (speed * t);
        // A quarter stride in: the left arm forward, the right foot ahead.
        let swing = 0.15 * (std::f32::consts::TAU * (t / stride + 0.25)).sin();
        let hands = [
            head + Vec3::new(0.2, -0.6, swing),
            head + Vec3::new(-0.2, -0.6, -swing),
        ];
        vr_solve(&body, &cal, &devices(&cal, head, 0.0, hands), &mut state);
        if first_lift.is_none() && !(state.is_planted(0) && state.is_planted(1)) {
            first_lift = Some(t);
        }
    }
    let first_lift = first_lift.expect("a foot stepped");
    assert!(first_lift < 0.35, "the first foot lifted at {first_lift} s");
}
