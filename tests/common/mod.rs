//! Helpers shared by the integration tests: random humanoid rigs, forward
//! kinematics, angle comparisons, the path to the shared real assets, the
//! bridge's `pose` messages read back (`pose_json`), and running the binary.
#![allow(dead_code)] // each test binary uses its own subset

pub mod node;
pub mod pose_json;

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::{Command, Output};

use glam::{Affine3A, Quat, Vec3};
use mocap_bridge::humanoid::HumanBone;
use mocap_bridge::skeleton::{Joint, NamedBoneMap, Skeleton, Transform};

/// Runs the `mocap-bridge` binary with `args`.
pub fn bridge(args: &[impl AsRef<OsStr>]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mocap-bridge"))
        .args(args)
        .output()
        .expect("the binary runs")
}

/// Runs the binary, asserts it succeeded, and returns its stdout.
pub fn bridge_ok(args: &[impl AsRef<OsStr>]) -> String {
    let out = bridge(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The real-file corpus, or `None` (after saying so) when a user's clone lacks it.
pub fn assets() -> Option<PathBuf> {
    mocap_bridge::assets::assets_dir()
}

/// Angle between two directions, degrees.
pub fn angle_deg(a: Vec3, b: Vec3) -> f32 {
    let a = a.normalize();
    let b = b.normalize();
    // atan2 keeps precision for tiny angles where acos does not.
    a.cross(b).length().atan2(a.dot(b)).to_degrees()
}

/// Largest component difference between two rotations, up to the quaternion sign.
pub fn quat_diff(a: Quat, b: Quat) -> f32 {
    let d1 = (Vec4Like::from(a) - Vec4Like::from(b)).max_abs();
    let d2 = (Vec4Like::from(a) + Vec4Like::from(b)).max_abs();
    d1.min(d2)
}

#[derive(Clone, Copy)]
struct Vec4Like([f32; 4]);
impl From<Quat> for Vec4Like {
    fn from(q: Quat) -> Self {
        Vec4Like(q.to_array())
    }
}
impl std::ops::Sub for Vec4Like {
    type Output = Vec4Like;
    fn sub(self, o: Self) -> Self {
        Vec4Like(std::array::from_fn(|i| self.0[i] - o.0[i]))
    }
}
impl std::ops::Add for Vec4Like {
    type Output = Vec4Like;
    fn add(self, o: Self) -> Self {
        Vec4Like(std::array::from_fn(|i| self.0[i] + o.0[i]))
    }
}
impl Vec4Like {
    fn max_abs(self) -> f32 {
        self.0.iter().fold(0.0f32, |m, v| m.max(v.abs()))
    }
}

/// World transforms of a skeleton for local rotations, with the hips translation
/// replaced.
pub fn forward(
    skeleton: &Skeleton,
    rotations: &[Quat],
    hips: usize,
    hips_translation: Vec3,
) -> Vec<Affine3A> {
    let mut translations = skeleton.rest_translations();
    translations[hips] = hips_translation;
    skeleton.world_transforms(rotations, &translations)
}

/// A tiny deterministic generator (SplitMix64) for rig details drawn from a seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        let unit = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        lo + (hi - lo) * unit
    }
    pub fn chance(&mut self, p: f32) -> bool {
        self.range(0.0, 1.0) < p
    }
    /// A uniformly random rotation.
    pub fn rotation(&mut self) -> Quat {
        let (u1, u2, u3) = (
            self.range(0.0, 1.0),
            self.range(0.0, 1.0),
            self.range(0.0, 1.0),
        );
        let tau = std::f32::consts::TAU;
        Quat::from_xyzw(
            (1.0 - u1).sqrt() * (tau * u2).sin(),
            (1.0 - u1).sqrt() * (tau * u2).cos(),
            u1.sqrt() * (tau * u3).sin(),
            u1.sqrt() * (tau * u3).cos(),
        )
        .normalize()
    }
    /// A rotation of at most `max_rad` about a random axis.
    pub fn rotation_within(&mut self, max_rad: f32) -> Quat {
        let axis = Vec3::new(
            self.range(-1.0, 1.0),
            self.range(-1.0, 1.0),
            self.range(-1.0, 1.0),
        );
        let axis = if axis.length() < 1e-3 {
            Vec3::X
        } else {
            axis.normalize()
        };
        Quat::from_axis_angle(axis, self.range(-max_rad, max_rad))
    }
}

/// What a random humanoid rig looks like.
#[derive(Debug, Clone)]
pub struct RigSpec {
    pub seed: u64,
    /// Scales legs, torso and arms independently.
    pub legs: f32,
    pub torso: f32,
    pub arms: f32,
    /// Arms rotated down from the T-pose by this many degrees (0 = T-pose rest).
    pub arm_drop_deg: f32,
    /// Legs spread by this many degrees.
    pub leg_spread_deg: f32,
    /// Turn of the whole rig about +Y, degrees (0 = facing +Z).
    pub yaw_deg: f32,
    pub chest: bool,
    pub upper_chest: bool,
    pub neck: bool,
    pub shoulders: bool,
    pub toes: bool,
    pub fingers: bool,
    /// An `Armature` node above the hips with a random rotation and scale.
    pub armature: bool,
    /// Non-humanoid joints between humanoid ones (hip joints, arm twist joints).
    pub extra_joints: bool,
}

/// A random rig: skeleton with random joint axes (rest rotations) and its map.
pub struct RandomRig {
    pub skeleton: Skeleton,
    pub map: NamedBoneMap,
}

struct Builder {
    names: Vec<String>,
    parents: Vec<Option<usize>>,
    positions: Vec<Vec3>,
    map: NamedBoneMap,
}

impl Builder {
    fn add(
        &mut self,
        name: &str,
        parent: Option<usize>,
        position: Vec3,
        bone: Option<HumanBone>,
    ) -> usize {
        self.names.push(name.to_owned());
        self.parents.push(parent);
        self.positions.push(position);
        if let Some(b) = bone {
            self.map.bones.insert(b, name.to_owned());
        }
        self.names.len() - 1
    }
}

/// Builds the rig described by `spec` (T-pose template, then proportions, then the
/// rest-pose drop of arms and spread of legs, then random joint axes).
pub fn random_rig(spec: &RigSpec) -> RandomRig {
    use HumanBone as B;
    let mut rng = Rng::new(spec.seed);
    let mut b = Builder {
        names: vec![],
        parents: vec![],
        positions: vec![],
        map: NamedBoneMap::default(),
    };
    let armature = spec
        .armature
        .then(|| b.add("Armature", None, Vec3::ZERO, None));
    let hips_pos = Vec3::new(0.0, 0.95 * spec.legs, 0.0);
    let hips = b.add("Hips", armature, hips_pos, Some(B::Hips));
    let t = spec.torso;
    let spine = b.add(
        "Spine",
        Some(hips),
        hips_pos + Vec3::Y * 0.1 * t,
        Some(B::Spine),
    );
    let mut top = spine;
    let mut y = hips_pos.y + 0.1 * t;
    for (present, name, bone) in [
        (spec.chest, "Chest", B::Chest),
        (spec.upper_chest, "UpperChest", B::UpperChest),
    ] {
        if present {
            y += 0.12 * t;
            top = b.add(name, Some(top), Vec3::new(0.0, y, 0.0), Some(bone));
        }
    }
    let shoulder_y = y + 0.1 * t;
    let neck_y = y + 0.14 * t;
    let head_parent = if spec.neck {
        b.add(
            "Neck",
            Some(top),
            Vec3::new(0.0, neck_y, 0.0),
            Some(B::Neck),
        )
    } else {
        top
    };
    let head = b.add(
        "Head",
        Some(head_parent),
        Vec3::new(0.0, neck_y + 0.1 * t, 0.0),
        Some(B::Head),
    );
    let mut arm_chains = Vec::new();
    for (sign, side) in [(1.0f32, "L"), (-1.0, "R")] {
        let bone = |l: B, r: B| if sign > 0.0 { l } else { r };
        let x = |d: f32| Vec3::new(sign * d, 0.0, 0.0);
        let base = Vec3::new(0.0, shoulder_y, 0.0);
        let collar_parent = if spec.shoulders {
            b.add(
                &format!("Shoulder{side}"),
                Some(top),
                base + x(0.03),
                Some(bone(B::LeftShoulder, B::RightShoulder)),
            )
        } else {
            top
        };
        let a = spec.arms;
        let upper_pos = base + x(0.15);
        let upper = b.add(
            &format!("UpperArm{side}"),
            Some(collar_parent),
            upper_pos,
            Some(bone(B::LeftUpperArm, B::RightUpperArm)),
        );
        let lower_pos = upper_pos + x(0.28 * a);
        let mut lower_parent = upper;
        if spec.extra_joints {
            lower_parent = b.add(
                &format!("ArmTwist{side}"),
                Some(upper),
                upper_pos + x(0.14 * a),
                None,
            );
        }
        let lower = b.add(
            &format!("LowerArm{side}"),
            Some(lower_parent),
            lower_pos,
            Some(bone(B::LeftLowerArm, B::RightLowerArm)),
        );
        let hand_pos = lower_pos + x(0.25 * a);
        let hand = b.add(
            &format!("Hand{side}"),
            Some(lower),
            hand_pos,
            Some(bone(B::LeftHand, B::RightHand)),
        );
        if spec.fingers {
            let fingers = [
                (
                    "Index",
                    0.02,
                    [
                        B::LeftIndexProximal,
                        B::LeftIndexIntermediate,
                        B::LeftIndexDistal,
                    ],
                ),
                (
                    "Middle",
                    0.0,
                    [
                        B::LeftMiddleProximal,
                        B::LeftMiddleIntermediate,
                        B::LeftMiddleDistal,
                    ],
                ),
                (
                    "Ring",
                    -0.02,
                    [
                        B::LeftRingProximal,
                        B::LeftRingIntermediate,
                        B::LeftRingDistal,
                    ],
                ),
                (
                    "Little",
                    -0.04,
                    [
                        B::LeftLittleProximal,
                        B::LeftLittleIntermediate,
                        B::LeftLittleDistal,
                    ],
                ),
            ];
            for (name, z, bones) in fingers {
                let mut p = hand_pos + x(0.08 * a) + Vec3::Z * z * a;
                let mut parent = hand;
                for (i, fb) in bones.iter().enumerate() {
                    let fb = if sign > 0.0 { *fb } else { fb.mirrored() };
                    parent = b.add(&format!("{name}{}{side}", i + 1), Some(parent), p, Some(fb));
                    p += x([0.04, 0.025, 0.02][i] * a);
                }
                b.add(&format!("{name}End{side}"), Some(parent), p, None);
            }
            let thumb_dir = Vec3::new(sign, 0.0, 1.0).normalize();
            let mut p = hand_pos + x(0.02 * a) + Vec3::Z * 0.02 * a;
            let mut parent = hand;
            for (i, tb) in [
                B::LeftThumbMetacarpal,
                B::LeftThumbProximal,
                B::LeftThumbDistal,
            ]
            .iter()
            .enumerate()
            {
                let tb = if sign > 0.0 { *tb } else { tb.mirrored() };
                parent = b.add(&format!("Thumb{}{side}", i + 1), Some(parent), p, Some(tb));
                p += thumb_dir * [0.04, 0.035, 0.03][i] * a;
            }
            b.add(&format!("ThumbEnd{side}"), Some(parent), p, None);
        } else {
            b.add(
                &format!("HandEnd{side}"),
                Some(hand),
                hand_pos + x(0.15 * a),
                None,
            );
        }
        arm_chains.push((upper, upper_pos));
    }
    let mut leg_chains = Vec::new();
    for (sign, side) in [(1.0f32, "L"), (-1.0, "R")] {
        let bone = |l: B, r: B| if sign > 0.0 { l } else { r };
        let l = spec.legs;
        let upper_pos = hips_pos + Vec3::new(sign * 0.09, -0.05 * l, 0.0);
        let mut parent = hips;
        if spec.extra_joints {
            parent = b.add(&format!("HipJoint{side}"), Some(hips), hips_pos, None);
        }
        let upper = b.add(
            &format!("UpperLeg{side}"),
            Some(parent),
            upper_pos,
            Some(bone(B::LeftUpperLeg, B::RightUpperLeg)),
        );
        let lower_pos = upper_pos - Vec3::Y * 0.42 * l;
        let lower = b.add(
            &format!("LowerLeg{side}"),
            Some(upper),
            lower_pos,
            Some(bone(B::LeftLowerLeg, B::RightLowerLeg)),
        );
        let foot_pos = lower_pos - Vec3::Y * 0.40 * l;
        let foot = b.add(
            &format!("Foot{side}"),
            Some(lower),
            foot_pos,
            Some(bone(B::LeftFoot, B::RightFoot)),
        );
        let toe_pos = foot_pos + Vec3::new(0.0, -0.06, 0.12) * l;
        if spec.toes {
            let toes = b.add(
                &format!("Toes{side}"),
                Some(foot),
                toe_pos,
                Some(bone(B::LeftToes, B::RightToes)),
            );
            b.add(
                &format!("ToesEnd{side}"),
                Some(toes),
                toe_pos + Vec3::Z * 0.05 * l,
                None,
            );
        } else {
            b.add(&format!("FootEnd{side}"), Some(foot), toe_pos, None);
        }
        leg_chains.push((upper, upper_pos, sign));
    }
    b.add(
        "HeadEnd",
        Some(head),
        Vec3::new(0.0, neck_y + 0.3 * t, 0.0),
        None,
    );

    // World rotations: random axes for every joint.
    let n = b.names.len();
    let mut world_rot: Vec<Quat> = (0..n).map(|_| rng.rotation()).collect();
    // Rest pose: drop the arms (and a small twist), spread the legs.
    let descendants = |root: usize, parents: &[Option<usize>]| -> Vec<usize> {
        (0..parents.len())
            .filter(|&j| {
                let mut k = Some(j);
                while let Some(x) = k {
                    if x == root {
                        return true;
                    }
                    k = parents[x];
                }
                false
            })
            .collect()
    };
    for (i, (upper, pivot)) in arm_chains.iter().enumerate() {
        let sign = if i == 0 { -1.0 } else { 1.0 };
        let drop = Quat::from_rotation_z(sign * spec.arm_drop_deg.to_radians())
            * Quat::from_rotation_x(rng.range(-0.2, 0.2));
        for j in descendants(*upper, &b.parents) {
            b.positions[j] = *pivot + drop * (b.positions[j] - *pivot);
            world_rot[j] = drop * world_rot[j];
        }
    }
    for (upper, pivot, sign) in &leg_chains {
        let spread = Quat::from_rotation_z(sign * spec.leg_spread_deg.to_radians());
        for j in descendants(*upper, &b.parents) {
            b.positions[j] = *pivot + spread * (b.positions[j] - *pivot);
            world_rot[j] = spread * world_rot[j];
        }
    }
    // Facing: turn everything about +Y.
    let yaw = Quat::from_rotation_y(spec.yaw_deg.to_radians());
    for (position, rotation) in b.positions.iter_mut().zip(world_rot.iter_mut()) {
        *position = yaw * *position;
        *rotation = yaw * *rotation;
    }
    // Armature: a uniform scale (like Blender's 0.01) on the root node.
    let armature_scale = if spec.armature {
        rng.range(0.01, 2.0)
    } else {
        1.0
    };
    let joints = (0..n)
        .map(|j| {
            let (rotation, translation, scale) = match b.parents[j] {
                None => (world_rot[j], b.positions[j], Vec3::splat(armature_scale)),
                Some(p) => {
                    let parent_scale = armature_scale;
                    (
                        world_rot[p].conjugate() * world_rot[j],
                        world_rot[p].conjugate() * (b.positions[j] - b.positions[p]) / parent_scale,
                        Vec3::ONE,
                    )
                }
            };
            Joint {
                name: b.names[j].clone(),
                parent: b.parents[j],
                rest: Transform {
                    translation,
                    rotation,
                    scale,
                },
                end: None,
            }
        })
        .collect();
    RandomRig {
        skeleton: Skeleton::new(joints).expect("generated rig is valid"),
        map: b.map,
    }
}

/// The property tests' seed: a fixed one unless `PROPTEST_RNG_SEED` names
/// another, so every run (CI's too) draws the same cases and none fails by the
/// chance of drawing a case no run before drew (each property in recognize.rs
/// and retarget_props.rs held over 50,000 random cases).
pub fn proptest_seed() -> proptest::test_runner::RngSeed {
    use proptest::test_runner::{Config, RngSeed};
    match Config::default().rng_seed {
        RngSeed::Random => RngSeed::Fixed(0x6d6f_6361_7062_7264),
        chosen => chosen,
    }
}
