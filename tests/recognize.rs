//! Humanoid recognition of arbitrary rigs (`skeleton::recognize`), as a user meets
//! it: every rig in ../shared/assets against a map written by hand from its joint
//! tree (`mocap-bridge inspect FILE`), the VRM files against their own humanoid
//! extension, the same rigs renamed into the common naming conventions, with
//! mirrored and stripped names, extra nodes and chains and IK/FK duplicates, random
//! rigs, and `inspect --write-map` on the command line.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{RigSpec, Rng, random_rig};
use glam::{Affine3A, Quat, Vec3};
use mocap_bridge::formats::{LoadOptions, load_rig};
use mocap_bridge::humanoid::HumanBone;
use mocap_bridge::humanoid::bone::ALL;
use mocap_bridge::skeleton::recognize::{Recognition, recognize};
use mocap_bridge::skeleton::{BoneMap, Joint, NamedBoneMap, Skeleton, Transform};
use proptest::prelude::*;

// ---------------------------------------------------------------------------------
// Expected maps, written by hand from each file's joint tree

/// Reads a map written by hand, entries split by `;`: `bone joint` for a centre
/// bone, `Kind left right` for `left<Kind>` and `right<Kind>`, and `fingers left
/// right words phalanges` for all 30 finger bones, where `left`/`right` are joint
/// name templates with `{f}` for a finger word and `{p}` for a phalanx word (thumb,
/// index, middle, ring, little; VRM 1.0 thumb metacarpal, proximal, distal).
fn map(text: &str) -> NamedBoneMap {
    let mut map = NamedBoneMap::default();
    let mut put = |bone: String, joint: String| {
        let bone: HumanBone = bone.parse().expect("bone name");
        map.bones.insert(bone, joint);
    };
    for entry in text.split(';').map(str::trim).filter(|e| !e.is_empty()) {
        match entry.split_whitespace().collect::<Vec<_>>().as_slice() {
            ["fingers", l, r, words, phalanges] => {
                let words: Vec<&str> = words.split(',').collect();
                let phalanges: Vec<&str> = phalanges.split(',').collect();
                for (f, finger) in ["Thumb", "Index", "Middle", "Ring", "Little"]
                    .iter()
                    .enumerate()
                {
                    let bones = if f == 0 {
                        ["Metacarpal", "Proximal", "Distal"]
                    } else {
                        ["Proximal", "Intermediate", "Distal"]
                    };
                    for (k, bone) in bones.iter().enumerate() {
                        let joint =
                            |t: &str| t.replace("{f}", words[f]).replace("{p}", phalanges[k]);
                        put(format!("left{finger}{bone}"), joint(l));
                        put(format!("right{finger}{bone}"), joint(r));
                    }
                }
            }
            [kind, l, r] => {
                put(format!("left{kind}"), (*l).to_owned());
                put(format!("right{kind}"), (*r).to_owned());
            }
            [bone, joint] => put((*bone).to_owned(), (*joint).to_owned()),
            _ => panic!("bad map entry `{entry}`"),
        }
    }
    map
}

/// Cesium Man: COLLADA names, arm joints numbered from the hand up on the left.
const CESIUM_MAN: &str = "hips Skeleton_torso_joint_1; spine Skeleton_torso_joint_2;
    chest torso_joint_3; neck Skeleton_neck_joint_1; head Skeleton_neck_joint_2;
    UpperArm Skeleton_arm_joint_L__4_ Skeleton_arm_joint_R; LowerArm Skeleton_arm_joint_L__3_ \
    Skeleton_arm_joint_R__2_; Hand Skeleton_arm_joint_L__2_ Skeleton_arm_joint_R__3_;
    UpperLeg leg_joint_L_1 leg_joint_R_1; LowerLeg leg_joint_L_2 leg_joint_R_2;
    Foot leg_joint_L_3 leg_joint_R_3; Toes leg_joint_L_5 leg_joint_R_5";

/// KayKit: `wrist.l` is the hand; `hand.l` and `handslot.l` are attachment points.
const KAYKIT: &str = "hips hips; spine spine; chest chest; head head;
    UpperArm upperarm.l upperarm.r; LowerArm lowerarm.l lowerarm.r; Hand wrist.l wrist.r;
    UpperLeg upperleg.l upperleg.r; LowerLeg lowerleg.l lowerleg.r; Foot foot.l foot.r;
    Toes toes.l toes.r";

/// The VRM Add-on for Blender's test armature (Example.vrm, the rest_a_pose files).
/// Its `thumb.proximal` is VRM 1.0's thumb metacarpal.
const VRM_ADDON_DOTS: &str = "hips hips; spine spine; chest chest; neck neck; head head;
    Eye eye.L eye.R; Shoulder shoulder.L shoulder.R; UpperArm upper_arm.L upper_arm.R;
    LowerArm lower_arm.L lower_arm.R; Hand hand.L hand.R; UpperLeg upper_leg.L upper_leg.R;
    LowerLeg lower_leg.L lower_leg.R; Foot foot.L foot.R; Toes toes.L toes.R; fingers \
    {f}.{p}.L {f}.{p}.R thumb,index,middle,ring,little proximal,intermediate,distal";

/// The same armature as basic_armature_vrm0/1 write it: `thumb_proximal.L`.
fn vrm_addon_underscores() -> NamedBoneMap {
    map(&VRM_ADDON_DOTS.replace("{f}.{p}", "{f}_{p}"))
}

/// The VRM expressions sample: 22 bones named after VRM's own.
const VRM_EXPRESSIONS_SAMPLE: &str = "hips Hips; spine Spine; chest Chest;
    upperChest UpperChest; neck Neck; head Head; Shoulder Shoulder.L Shoulder.R;
    UpperArm UpperArm.L UpperArm.R; LowerArm LowerArm.L LowerArm.R; Hand Hand.L Hand.R;
    UpperLeg UpperLeg.L UpperLeg.R; LowerLeg LowerLeg.L LowerLeg.R; Foot Foot.L Foot.R;
    Toes Toes.L Toes.R";

/// CMU: `LHipJoint` and `Neck1` are in-between joints; the hands' two stubs
/// (`LeftFingerBase` for all fingers, `LThumb`) are not fingers.
const CMU: &str = "hips Hips; spine LowerBack; chest Spine; upperChest Spine1; neck Neck;
    head Head; Shoulder LeftShoulder RightShoulder; UpperArm LeftArm RightArm;
    LowerArm LeftForeArm RightForeArm; Hand LeftHand RightHand;
    UpperLeg LeftUpLeg RightUpLeg; LowerLeg LeftLeg RightLeg; Foot LeftFoot RightFoot;
    Toes LeftToeBase RightToeBase";

/// pybvh's test skeleton 1: four spine joints (the third is the chest), `Neck1` in
/// between; it faces -Z with its left arm at -X.
const PYBVH_1: &str = "hips Hips; spine Spine; chest Spine2; upperChest Spine3; neck Neck;
    head Head; Shoulder LeftShoulder RightShoulder; UpperArm LeftArm RightArm;
    LowerArm LeftForeArm RightForeArm; Hand LeftHand RightHand;
    UpperLeg LeftUpLeg RightUpLeg; LowerLeg LeftLeg RightLeg; Foot LeftFoot RightFoot;
    Toes LeftToeBase RightToeBase";

/// pybvh's test skeleton 3: the same body with fingers; `LeftHandRing` and
/// `LeftHandIndex` are shared bases (metacarpals) of two digits each.
fn pybvh_3() -> NamedBoneMap {
    map(&format!(
        "{}; fingers LeftHand{{f}}{{p}} RightHand{{f}}{{p}} Thumb,Index,Middle,Ring,Pinky 1,2,3",
        PYBVH_1.replace("ToeBase", "ForeFoot")
    ))
}

/// The lab's 19-joint skeleton (test_mocapbank.bvh, config/skeletons/lab19.json):
/// joints named where the bone starts, so `LeftShoulder` is the upper arm.
const LAB19: &str = "hips Hips; spine Chest; chest Chest2; neck Neck; head Head;
    Shoulder LeftCollar RightCollar; UpperArm LeftShoulder RightShoulder;
    LowerArm LeftElbow RightElbow; Hand LeftWrist RightWrist; UpperLeg LeftHip RightHip;
    LowerLeg LeftKnee RightKnee; Foot LeftAnkle RightAnkle";

/// MakeHuman's game rig (walk1.bvh): `Root` is where legs and spine meet (the joint
/// named `Hips` only carries the legs), `__X` joints are helpers above `X`.
const MAKEHUMAN_GAME: &str = "hips Root; spine Spine1; chest Spine2; upperChest Spine3;
    neck Neck; head Head; jaw Jaw; Eye Eye_L Eye_R; Shoulder Clavicle_L Clavicle_R;
    UpperArm UpArm_L UpArm_R; LowerArm LoArm_L LoArm_R; Hand Hand_L Hand_R;
    UpperLeg UpLeg_L UpLeg_R; LowerLeg LoLeg_L LoLeg_R; Foot Foot_L Foot_R; Toes Toe_L Toe_R;
    fingers {f}{p}_L {f}{p}_R Thumb,Index,Middle,Ring,Pinky 1,2,3";

/// MakeHuman's default rig (tpose.bvh, 173 joints): five spine joints numbered
/// downward, split thighs, shins and arms (the `01` halves are the bones), hip
/// helpers `pelvis.L`, a clavicle and a `shoulder01` deform bone, metacarpals, five
/// toes per foot (no single toes bone), a face rig. `finger1` is the thumb.
const MAKEHUMAN_DEFAULT: &str = "hips root; spine spine05; chest spine03;
    upperChest spine01; neck neck01; head head; jaw jaw; Eye eye.L eye.R;
    Shoulder clavicle.L clavicle.R; UpperArm upperarm01.L upperarm01.R;
    LowerArm lowerarm01.L lowerarm01.R; Hand wrist.L wrist.R;
    UpperLeg upperleg01.L upperleg01.R; LowerLeg lowerleg01.L lowerleg01.R;
    Foot foot.L foot.R; fingers finger{f}-{p}.L finger{f}-{p}.R 1,2,3,4,5 1,2,3";

/// Rokoko's export (rokoko_jesse_dance.bvh): Mixamo-like names, three spine joints,
/// `LeftInHandIndex` and the like are metacarpals under the hand (not finger
/// bones); the thumb hangs from the hand directly, `Thumb1` its metacarpal. Its zero
/// pose is no pose: the rest comes from the motion.
const ROKOKO: &str = "hips Hips; spine Spine; chest Spine1; upperChest Spine2; neck Neck;
    head Head; Shoulder LeftShoulder RightShoulder; UpperArm LeftArm RightArm;
    LowerArm LeftForeArm RightForeArm; Hand LeftHand RightHand;
    UpperLeg LeftUpLeg RightUpLeg; LowerLeg LeftLeg RightLeg; Foot LeftFoot RightFoot;
    Toes LeftToeBase RightToeBase;
    fingers LeftHand{f}{p} RightHand{f}{p} Thumb,Index,Middle,Ring,Pinky 1,2,3";

/// Rigify's metarig (rigify_metarig_male_base_mesh.glb): `spine` is the pelvis,
/// `spine.004` the neck and `spine.005` the head; `pelvis.L` and `heel.02.L` are
/// helpers beside the thigh and the toes.
const RIGIFY_METARIG: &str = "hips spine; spine spine.001; chest spine.002;
    upperChest spine.003; neck spine.004; head spine.005; Shoulder shoulder.L shoulder.R;
    UpperArm upper_arm.L upper_arm.R; LowerArm forearm.L forearm.R; Hand hand.L hand.R;
    UpperLeg thigh.L thigh.R; LowerLeg shin.L shin.R; Foot foot.L foot.R; Toes toe.L toe.R;
    fingers {f}.{p}.L {f}.{p}.R thumb,f_index,f_middle,f_ring,f_pinky 01,02,03";

/// MocapNET's Daz-like body with a MakeHuman face (cmu_49_04): `lbuttock` is a
/// static helper above the thigh `lhip`, `lshoulder` the upper arm, `neck1` a second
/// neck joint; `lthumb` is the thumb's metacarpal; five toes per foot (no single
/// toes bone); eyes and jaw under the face's helper joints.
const MOCAPNET_DAZ: &str = "hips hip; spine abdomen; chest chest; neck neck; head head;
    jaw jaw; Eye eye.l eye.r; Shoulder lcollar rcollar; UpperArm lshoulder rshoulder;
    LowerArm lelbow relbow; Hand lhand rhand; UpperLeg lhip rhip; LowerLeg lknee rknee;
    Foot lfoot rfoot; fingers finger{f}-{p}.l finger{f}-{p}.r 1,2,3,4,5 1,2,3;
    ThumbMetacarpal lthumb rthumb; ThumbProximal finger1-2.l finger1-2.r;
    ThumbDistal finger1-3.l finger1-3.r";

/// Mixamo names in a BVH (mixamo_test_freebvh.bvh); `HeadTop_End` is the nub.
const MIXAMO_BVH: &str = "hips mixamorig:Hips; spine mixamorig:Spine; chest mixamorig:Spine1;
    upperChest mixamorig:Spine2; neck mixamorig:Neck; head mixamorig:Head;
    Eye mixamorig:LeftEye mixamorig:RightEye;
    Shoulder mixamorig:LeftShoulder mixamorig:RightShoulder;
    UpperArm mixamorig:LeftArm mixamorig:RightArm;
    LowerArm mixamorig:LeftForeArm mixamorig:RightForeArm;
    Hand mixamorig:LeftHand mixamorig:RightHand;
    UpperLeg mixamorig:LeftUpLeg mixamorig:RightUpLeg; LowerLeg mixamorig:LeftLeg \
    mixamorig:RightLeg; Foot mixamorig:LeftFoot mixamorig:RightFoot;
    Toes mixamorig:LeftToeBase mixamorig:RightToeBase;
    fingers mixamorig:LeftHand{f}{p} mixamorig:RightHand{f}{p} Thumb,Index,Middle,Ring,Pinky \
    1,2,3";

/// PyMO's sparse rig: one spine joint, no neck; `LeftHand_End` and
/// `LeftHandThumb1` are single joints, no fingers.
const PYMO: &str = "hips Hips; spine Spine; head Head; Shoulder LeftShoulder RightShoulder;
    UpperArm LeftArm RightArm; LowerArm LeftForeArm RightForeArm; Hand LeftHand RightHand;
    UpperLeg LeftUpLeg RightUpLeg; LowerLeg LeftLeg RightLeg; Foot LeftFoot RightFoot;
    Toes LeftToeBase RightToeBase";

/// The FAIR capture rig, Z-up at 119.88 fps: as pybvh's skeleton 1 without `Neck1`
/// (`LeftHandEnd`, `LeftHandThumb1` are single joints, no fingers).
const FAIR: &str = PYBVH_1;

/// The ASF/AMC-style rig with no head joint (amc_style_cartwheel_noendsite.bvh):
/// the neck chain `LowerNeck`→`Neck` ends there, so its top carries the head.
const AMC_CARTWHEEL: &str = "hips pelvis; spine lowerback; chest upperback; neck LowerNeck;
    head Neck; Shoulder lclavicle rclavicle; UpperArm lhumerus rhumerus;
    LowerArm lradius rradius; Hand lhand rhand; UpperLeg lfemur rfemur;
    LowerLeg ltibia rtibia; Foot lfoot rfoot; Toes ltoes rtoes";

/// Quaternius' modular men (quaternius_modular_men_Casual.glb, four skins over one
/// armature): `Root` above `Hips`, `Abdomen`/`Torso`/`Chest`; fingers numbered from
/// 2 (no metacarpals: `Index2` is the proximal phalanx, `Thumb2` the thumb's
/// proximal, starting past the palm's base as the fingers' knuckles do), no toes.
const QUATERNIUS_MODULAR: &str = "hips Hips; spine Abdomen; chest Torso; upperChest Chest;
    neck Neck; head Head; Shoulder Shoulder.L Shoulder.R; UpperArm UpperArm.L UpperArm.R;
    LowerArm LowerArm.L LowerArm.R; Hand Hand.L Hand.R; UpperLeg UpperLeg.L UpperLeg.R;
    LowerLeg LowerLeg.L LowerLeg.R; Foot Foot.L Foot.R;
    ThumbProximal Thumb2.L Thumb2.R; ThumbDistal Thumb3.L Thumb3.R;
    IndexProximal Index2.L Index2.R; IndexIntermediate Index3.L Index3.R;
    IndexDistal Index4.L Index4.R; MiddleProximal Middle2.L Middle2.R;
    MiddleIntermediate Middle3.L Middle3.R; MiddleDistal Middle4.L Middle4.R;
    RingProximal Ring2.L Ring2.R; RingIntermediate Ring3.L Ring3.R;
    RingDistal Ring4.L Ring4.R; LittleProximal Pinky2.L Pinky2.R;
    LittleIntermediate Pinky3.L Pinky3.R; LittleDistal Pinky4.L Pinky4.R";

/// What a file should be recognized as.
enum Expected {
    Humanoid(NamedBoneMap),
    /// Not a humanoid; the reason must mention this.
    Rejected(&'static str),
}

fn asset_table() -> Vec<(&'static str, Expected)> {
    use Expected::{Humanoid, Rejected};
    vec![
        ("gltf/CesiumMan.glb", Humanoid(map(CESIUM_MAN))),
        ("gltf/Med_General.glb", Humanoid(map(KAYKIT))),
        ("gltf/RiggedSimple.glb", Rejected("no joint branches")),
        // The robot's feet are IK targets outside the legs: its legs end at the knee.
        ("gltf/RobotExpressive.glb", Rejected("no foot joint")),
        ("vrm/Example.vrm", Humanoid(map(VRM_ADDON_DOTS))),
        (
            "vrm/VRMC_vrm_expressions_isBinary_Overrides.vrm",
            Humanoid(map(VRM_EXPRESSIONS_SAMPLE)),
        ),
        (
            "vrm/basic_armature_vrm0.vrm",
            Humanoid(vrm_addon_underscores()),
        ),
        (
            "vrm/basic_armature_vrm1.vrm",
            Humanoid(vrm_addon_underscores()),
        ),
        (
            "vrm/rest_a_pose_t_position_pose_vrm0.vrm",
            Humanoid(map(VRM_ADDON_DOTS)),
        ),
        (
            "vrm/rest_a_pose_t_position_rest_vrm0.vrm",
            Humanoid(map(VRM_ADDON_DOTS)),
        ),
        ("bvh/cmu_12_01_walk.bvh", Humanoid(map(CMU))),
        ("bvh/12_03.bvh", Humanoid(map(CMU))),
        ("bvh/bvh_test1.bvh", Humanoid(map(PYBVH_1))),
        ("bvh/bvh_test3.bvh", Humanoid(pybvh_3())),
        ("bvh/test_mocapbank.bvh", Humanoid(map(LAB19))),
        ("bvh/walk1.bvh", Humanoid(map(MAKEHUMAN_GAME))),
        ("bvh/tpose.bvh", Humanoid(map(MAKEHUMAN_DEFAULT))),
        ("bvh/rokoko_jesse_dance.bvh", Humanoid(map(ROKOKO))),
        (
            "bvh/cmu_49_04_mocapnet_daz_face165.bvh",
            Humanoid(map(MOCAPNET_DAZ)),
        ),
        ("bvh/mixamo_test_freebvh.bvh", Humanoid(map(MIXAMO_BVH))),
        ("bvh/pymo_AV_8Walk_Meredith.bvh", Humanoid(map(PYMO))),
        ("bvh/fair1_wave_hello_zup.bvh", Humanoid(map(FAIR))),
        (
            "bvh/amc_style_cartwheel_noendsite.bvh",
            Humanoid(map(AMC_CARTWHEEL)),
        ),
        (
            "gltf/rigify_metarig_male_base_mesh.glb",
            Humanoid(map(RIGIFY_METARIG)),
        ),
        (
            "gltf/quaternius_modular_men_Casual.glb",
            Humanoid(map(QUATERNIUS_MODULAR)),
        ),
        // Quaternius' feet are IK bones under the root: no VRM map has them.
        (
            "gltf/quaternius_KnightCharacter.glb",
            Rejected("driven by IK"),
        ),
        (
            "gltf/quaternius_Astronaut_draco.glb",
            Rejected("driven by IK"),
        ),
        (
            "gltf/quaternius_Adventurer_6scenes.gltf",
            Rejected("driven by IK"),
        ),
        // Not humanoids: quadrupeds (one with humanoid names), legs alone, a hand
        // alone, a 7-joint toy, a 4-joint chain.
        ("gltf/Fox.glb", Rejected("four legs, no arms")),
        ("gltf/quaternius_Horse.glb", Rejected("four legs, no arms")),
        ("gltf/quaternius_witch_legs_only.glb", Rejected("no arms")),
        ("gltf/LeftHandHumanoid.gltf", Rejected("no joint branches")),
        (
            "gltf/kenney_mini_character-female-a.glb",
            Rejected("no joint branches"),
        ),
        (
            "bvh/fairmotion_sinusoidal_4joint.bvh",
            Rejected("no joint branches"),
        ),
    ]
}

fn assets() -> Option<PathBuf> {
    common::assets()
}

fn load(path: &Path) -> mocap_bridge::formats::Rig {
    load_rig(path, &LoadOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Bones right, bones expected, bones mapped that should not be.
fn score(expected: &NamedBoneMap, got: &NamedBoneMap) -> (usize, usize, usize) {
    let right = expected
        .bones
        .iter()
        .filter(|(b, j)| got.bones.get(b) == Some(j))
        .count();
    let extra = got
        .bones
        .keys()
        .filter(|b| !expected.bones.contains_key(b))
        .count();
    (right, expected.bones.len(), extra)
}

/// Lines describing where two maps differ.
fn differences(expected: &NamedBoneMap, got: &NamedBoneMap) -> Vec<String> {
    ALL.iter()
        .filter_map(|b| match (expected.bones.get(b), got.bones.get(b)) {
            (e, g) if e == g => None,
            (e, g) => Some(format!(
                "{b}: expected {}, got {}",
                e.map_or("nothing", String::as_str),
                g.map_or("nothing", String::as_str)
            )),
        })
        .collect()
}

#[test]
fn every_asset_is_recognized_as_written_by_hand() {
    let Some(dir) = assets() else { return };
    let (mut right_all, mut counted_all) = (0, 0);
    let mut failures = Vec::new();
    for (file, expected) in asset_table() {
        let rig = load(&dir.join(file));
        let started = std::time::Instant::now();
        let recognition = recognize(&rig.skeleton);
        let took = started.elapsed();
        match (expected, recognition) {
            (Expected::Rejected(why), Recognition::NotHumanoid(n)) => {
                println!("{file:<52} rejected: {} ({took:.0?})", n.reason);
                if !n.reason.contains(why) {
                    failures.push(format!("{file}: reason `{}` lacks `{why}`", n.reason));
                }
            }
            (Expected::Rejected(_), Recognition::Humanoid(r)) => {
                failures.push(format!("{file}: recognized as a humanoid: {:?}", r.map));
            }
            (Expected::Humanoid(e), recognition) => {
                let got = match &recognition {
                    Recognition::Humanoid(r) => r.map.clone(),
                    Recognition::NotHumanoid(n) => {
                        failures.push(format!("{file}: rejected: {}", n.reason));
                        n.partial.clone()
                    }
                };
                let (right, present, extra) = score(&e, &got);
                let required_right = e
                    .bones
                    .iter()
                    .filter(|(b, j)| b.is_required() && got.bones.get(b) == Some(j))
                    .count();
                let confidence = match &recognition {
                    Recognition::Humanoid(r) => format!("confidence {:.2}", r.confidence()),
                    Recognition::NotHumanoid(_) => "rejected".to_owned(),
                };
                println!(
                    "{file:<52} {right:>2}/{present:<2} bones right, {extra} extra, \
                     {required_right}/15 required, {confidence} ({took:.0?})"
                );
                if required_right < 15 {
                    failures.push(format!("{file}: required bones wrong"));
                }
                for d in differences(&e, &got) {
                    println!("    {d}");
                }
                right_all += right;
                counted_all += present + extra;
            }
        }
    }
    let ratio = right_all as f64 / counted_all.max(1) as f64;
    println!(
        "all humanoid assets: {right_all}/{counted_all} bones right ({:.1}%)",
        ratio * 100.0
    );
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(ratio >= 0.98, "only {:.1}% right", ratio * 100.0);
}

#[test]
fn vrm_files_are_recognized_as_their_humanoid_extension_says() {
    let Some(dir) = assets() else { return };
    for file in [
        "vrm/Example.vrm",
        "vrm/VRMC_vrm_expressions_isBinary_Overrides.vrm",
        "vrm/basic_armature_vrm0.vrm",
        "vrm/basic_armature_vrm1.vrm",
        "vrm/rest_a_pose_t_position_pose_vrm0.vrm",
        "vrm/rest_a_pose_t_position_rest_vrm0.vrm",
    ] {
        let rig = load(&dir.join(file));
        let declared = rig.bone_map.clone().expect("a VRM declares its humanoid");
        // The recognizer sees only the skeleton: the extension is ignored.
        let got = recognize(&rig.skeleton)
            .into_humanoid()
            .unwrap_or_else(|| panic!("{file}: not recognized"));
        assert_eq!(
            differences(&declared, &got.map),
            Vec::<String>::new(),
            "{file}"
        );
    }
}

#[test]
fn recognized_maps_fit_their_rigs_and_explain_every_bone() {
    let Some(dir) = assets() else { return };
    for (file, expected) in asset_table() {
        let rig = load(&dir.join(file));
        let Some(r) = recognize(&rig.skeleton).into_humanoid() else {
            assert!(matches!(expected, Expected::Rejected(_)), "{file}");
            continue;
        };
        BoneMap::resolve(&r.map, &rig.skeleton).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(r.evidence.len(), r.map.bones.len(), "{file}");
        for (bone, e) in &r.evidence {
            assert!((0.0..=1.0).contains(&e.confidence), "{file} {bone}");
            assert!(!e.reasons.is_empty(), "{file} {bone}");
        }
        assert!(r.notes.iter().any(|n| n.starts_with("faces ")), "{file}");
    }
}

// ---------------------------------------------------------------------------------
// Editable rigs for the synthetic variants

#[derive(Clone)]
struct Node {
    name: String,
    parent: Option<usize>,
    rest: Transform,
    end: Option<Vec3>,
}

/// A skeleton being edited, with the humanoid bone of each node that has one.
#[derive(Clone)]
struct Tree {
    nodes: Vec<Node>,
    bones: BTreeMap<usize, HumanBone>,
}

impl Tree {
    fn new(skeleton: &Skeleton, map: &NamedBoneMap) -> Tree {
        let nodes = skeleton
            .joints()
            .iter()
            .map(|j| Node {
                name: j.name.clone(),
                parent: j.parent,
                rest: j.rest,
                end: j.end,
            })
            .collect();
        let bones = map
            .bones
            .iter()
            .map(|(b, name)| (skeleton.find(name).expect("mapped joint exists"), *b))
            .collect();
        Tree { nodes, bones }
    }

    fn node(&self, bone: HumanBone) -> Option<usize> {
        self.bones
            .iter()
            .find(|(_, b)| **b == bone)
            .map(|(n, _)| *n)
    }

    fn world(&self, node: usize) -> Affine3A {
        let n = &self.nodes[node];
        let local = n.rest.to_affine();
        match n.parent {
            Some(p) => self.world(p) * local,
            None => local,
        }
    }

    fn push(&mut self, name: String, parent: Option<usize>, rest: Transform) -> usize {
        self.nodes.push(Node {
            name,
            parent,
            rest,
            end: None,
        });
        self.nodes.len() - 1
    }

    /// A joint at `position` (model space) under `parent`.
    fn add(&mut self, parent: usize, name: &str, position: Vec3) -> usize {
        let local = self.world(parent).inverse().transform_point3(position);
        self.push(
            name.to_owned(),
            Some(parent),
            Transform::from_translation(local),
        )
    }

    /// A chain under `parent` starting at `start`, each joint `step` further.
    fn chain(&mut self, parent: usize, name: &str, start: Vec3, step: Vec3, count: usize) {
        let mut p = parent;
        for i in 0..count {
            p = self.add(p, &format!("{name}_{i}"), start + step * i as f32);
        }
    }

    fn position(&self, node: usize) -> Vec3 {
        self.world(node).translation.into()
    }

    /// Hangs `child` from `parent`, keeping it where it is.
    fn reparent(&mut self, child: usize, parent: usize) {
        let local = self.world(parent).inverse() * self.world(child);
        let (scale, rotation, translation) = local.to_scale_rotation_translation();
        self.nodes[child].parent = Some(parent);
        self.nodes[child].rest = Transform {
            translation,
            rotation,
            scale,
        };
    }

    /// A new parent above `child`, in the same place.
    fn insert_above(&mut self, child: usize, name: &str) -> usize {
        let rest = self.nodes[child].rest;
        let parent = self.nodes[child].parent;
        let new = self.push(name.to_owned(), parent, rest);
        self.nodes[child].parent = Some(new);
        self.nodes[child].rest = Transform::IDENTITY;
        new
    }

    /// A new joint halfway along the bone from `child`'s parent to `child`.
    fn insert_midway(&mut self, child: usize, name: &str) {
        let Transform {
            translation,
            rotation,
            scale,
        } = self.nodes[child].rest;
        let parent = self.nodes[child].parent;
        let new = self.push(
            name.to_owned(),
            parent,
            Transform::from_translation(translation * 0.5),
        );
        self.nodes[child].parent = Some(new);
        self.nodes[child].rest = Transform {
            translation: translation * 0.5,
            rotation,
            scale,
        };
    }

    /// A copy of `root`'s subtree beside it, every name with `suffix`.
    fn duplicate(&mut self, root: usize, suffix: &str) {
        let mut copies: BTreeMap<usize, usize> = BTreeMap::new();
        let mut stack = vec![root];
        while let Some(j) = stack.pop() {
            let node = self.nodes[j].clone();
            let parent = if j == root {
                node.parent
            } else {
                node.parent.and_then(|p| copies.get(&p).copied())
            };
            let copy = self.push(format!("{}{suffix}", node.name), parent, node.rest);
            copies.insert(j, copy);
            stack.extend((0..self.nodes.len()).filter(|&c| self.nodes[c].parent == Some(j)));
        }
    }

    /// Parents first, as `Skeleton::new` wants.
    fn skeleton(&self) -> Skeleton {
        let mut order = Vec::new();
        let mut stack: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| self.nodes[i].parent.is_none())
            .rev()
            .collect();
        while let Some(j) = stack.pop() {
            order.push(j);
            stack.extend(
                (0..self.nodes.len())
                    .rev()
                    .filter(|&c| self.nodes[c].parent == Some(j)),
            );
        }
        let index: BTreeMap<usize, usize> =
            order.iter().enumerate().map(|(i, &j)| (j, i)).collect();
        let joints = order
            .iter()
            .map(|&j| {
                let n = &self.nodes[j];
                Joint {
                    name: n.name.clone(),
                    parent: n.parent.map(|p| index[&p]),
                    rest: n.rest,
                    end: n.end,
                }
            })
            .collect();
        Skeleton::new(joints).expect("edited rig is valid")
    }

    fn expected(&self) -> NamedBoneMap {
        NamedBoneMap {
            bones: self
                .bones
                .iter()
                .map(|(&n, &b)| (b, self.nodes[n].name.clone()))
                .collect(),
            ..NamedBoneMap::default()
        }
    }
}

/// A full VRM 1.0 humanoid in T-pose facing +Z, all 54 bones but the jaw (nothing
/// about a jaw's place tells it without a name), under an `Armature` node.
fn full_humanoid() -> Tree {
    use HumanBone as B;
    let mut tree = Tree {
        nodes: Vec::new(),
        bones: BTreeMap::new(),
    };
    let armature = tree.push("Armature".into(), None, Transform::IDENTITY);
    let mut at: BTreeMap<HumanBone, usize> = BTreeMap::new();
    let mut put = |tree: &mut Tree, bone: HumanBone, parent: Option<HumanBone>, p: Vec3| {
        let parent = parent.map_or(armature, |b| at[&b]);
        let node = tree.add(parent, bone.name(), p);
        tree.bones.insert(node, bone);
        at.insert(bone, node);
    };
    let centre = [
        (B::Hips, None, Vec3::new(0.0, 0.95, 0.0)),
        (B::Spine, Some(B::Hips), Vec3::new(0.0, 1.05, 0.0)),
        (B::Chest, Some(B::Spine), Vec3::new(0.0, 1.17, 0.0)),
        (B::UpperChest, Some(B::Chest), Vec3::new(0.0, 1.29, 0.0)),
        (B::Neck, Some(B::UpperChest), Vec3::new(0.0, 1.43, 0.0)),
        (B::Head, Some(B::Neck), Vec3::new(0.0, 1.53, 0.0)),
    ];
    for (bone, parent, p) in centre {
        put(&mut tree, bone, parent, p);
    }
    for sign in [1.0f32, -1.0] {
        let s = |b: HumanBone| if sign > 0.0 { b } else { b.mirrored() };
        let v = |x: f32, y: f32, z: f32| Vec3::new(sign * x, y, z);
        let limbs = [
            (B::LeftEye, B::Head, v(0.03, 1.6, 0.08)),
            (B::LeftShoulder, B::UpperChest, v(0.02, 1.39, 0.0)),
            (B::LeftUpperArm, B::LeftShoulder, v(0.16, 1.39, 0.0)),
            (B::LeftLowerArm, B::LeftUpperArm, v(0.44, 1.39, 0.0)),
            (B::LeftHand, B::LeftLowerArm, v(0.69, 1.39, 0.0)),
            (B::LeftUpperLeg, B::Hips, v(0.09, 0.89, 0.0)),
            (B::LeftLowerLeg, B::LeftUpperLeg, v(0.09, 0.47, 0.0)),
            (B::LeftFoot, B::LeftLowerLeg, v(0.09, 0.07, 0.0)),
            (B::LeftToes, B::LeftFoot, v(0.09, 0.01, 0.12)),
        ];
        for (bone, parent, p) in limbs {
            put(&mut tree, s(bone), Some(s(parent)), p);
        }
        // Thumb, index, middle, ring, little: where each starts, and its phalanx.
        let digits = [
            (v(0.71, 1.38, 0.03), v(0.025, 0.0, 0.025)),
            (v(0.78, 1.39, 0.03), v(0.03, 0.0, 0.0)),
            (v(0.785, 1.39, 0.01), v(0.032, 0.0, 0.0)),
            (v(0.78, 1.39, -0.01), v(0.03, 0.0, 0.0)),
            (v(0.77, 1.39, -0.03), v(0.024, 0.0, 0.0)),
        ];
        for (f, (start, step)) in digits.into_iter().enumerate() {
            let mut parent = s(B::LeftHand);
            for k in 0..3 {
                // Finger bones follow leftThumbMetacarpal three by three.
                let index = B::LeftThumbMetacarpal.index() + 3 * f + k;
                let bone = HumanBone::from_index(index).expect("a finger bone");
                put(&mut tree, s(bone), Some(parent), start + step * k as f32);
                parent = s(bone);
            }
        }
    }
    tree
}

// ---------------------------------------------------------------------------------
// Naming conventions

/// The naming conventions, one a line, fields split by `;` and names by `,`: name;
/// prefix; left and right words; hips, spine, chest, upperChest, neck, head, jaw;
/// eye, shoulder, upper arm, lower arm, hand, upper leg, lower leg, foot, toes; a
/// phalanx; thumb, index, middle, ring, little; first, second, third phalanx. In
/// templates `{s}` is the side word, `{f}` the finger and `{p}` the phalanx.
const CONVENTIONS: &str = "\
VRM/Unity;;Left,Right;Hips,Spine,Chest,UpperChest,Neck,Head,Jaw;{s}Eye,{s}Shoulder,{s}UpperArm,{s}LowerArm,{s}Hand,{s}UpperLeg,{s}LowerLeg,{s}Foot,{s}Toes;{s}{f}{p};Thumb,Index,Middle,Ring,Little;Proximal,Intermediate,Distal
Mixamo;mixamorig:;Left,Right;Hips,Spine,Spine1,Spine2,Neck,Head,Jaw;{s}Eye,{s}Shoulder,{s}Arm,{s}ForeArm,{s}Hand,{s}UpLeg,{s}Leg,{s}Foot,{s}ToeBase;{s}Hand{f}{p};Thumb,Index,Middle,Ring,Pinky;1,2,3
VRoid;;L,R;J_Bip_C_Hips,J_Bip_C_Spine,J_Bip_C_Chest,J_Bip_C_UpperChest,J_Bip_C_Neck,J_Bip_C_Head,J_Bip_C_Jaw;J_Adj_{s}_FaceEye,J_Bip_{s}_Shoulder,J_Bip_{s}_UpperArm,J_Bip_{s}_LowerArm,J_Bip_{s}_Hand,J_Bip_{s}_UpperLeg,J_Bip_{s}_LowerLeg,J_Bip_{s}_Foot,J_Bip_{s}_ToeBase;J_Bip_{s}_{f}{p};Thumb,Index,Middle,Ring,Little;1,2,3
Unreal;;l,r;pelvis,spine_01,spine_02,spine_03,neck_01,head,FACIAL_C_Jaw;FACIAL_{s}_Eye,clavicle_{s},upperarm_{s},lowerarm_{s},hand_{s},thigh_{s},calf_{s},foot_{s},ball_{s};{f}_{p}_{s};thumb,index,middle,ring,pinky;01,02,03
Rigify;DEF-;L,R;spine,spine.001,spine.002,spine.003,spine.004,spine.006,jaw;eye.{s},shoulder.{s},upper_arm.{s},forearm.{s},hand.{s},thigh.{s},shin.{s},foot.{s},toe.{s};{f}.{p}.{s};thumb,f_index,f_middle,f_ring,f_pinky;01,02,03
Blender .L/.R;Armature|;L,R;hips,spine,chest,upper_chest,neck,head,jaw;eye.{s},shoulder.{s},upper_arm.{s},forearm.{s},hand.{s},thigh.{s},shin.{s},foot.{s},toe.{s};{f}.{p}.{s};thumb,index,middle,ring,pinky;01,02,03
3ds Max Biped;Bip01 ;L,R;Pelvis,Spine,Spine1,Spine2,Neck,Head,Jaw;{s} Eye,{s} Clavicle,{s} UpperArm,{s} Forearm,{s} Hand,{s} Thigh,{s} Calf,{s} Foot,{s} Toe0;{s} Finger{f}{p};0,1,2,3,4;,1,2
MakeHuman;;L,R;root,spine05,spine03,spine01,neck01,head,jaw;eye.{s},clavicle.{s},upperarm01.{s},lowerarm01.{s},wrist.{s},upperleg01.{s},lowerleg01.{s},foot.{s},toe1-1.{s};finger{f}-{p}.{s};1,2,3,4,5;1,2,3
CMU/MotionBuilder;;Left,Right;Hips,LowerBack,Spine,Spine1,Neck,Head,Jaw;{s}Eye,{s}Shoulder,{s}Arm,{s}ForeArm,{s}Hand,{s}UpLeg,{s}Leg,{s}Foot,{s}ToeBase;{s}Hand{f}{p};Thumb,Index,Middle,Ring,Pinky;1,2,3
Daz/Poser;;l,r;hip,abdomen,abdomen2,chest,neck,head,lowerJaw;{s}Eye,{s}Collar,{s}Shldr,{s}ForeArm,{s}Hand,{s}Thigh,{s}Shin,{s}Foot,{s}Toe;{s}{f}{p};Thumb,Index,Mid,Ring,Pinky;1,2,3
Xsens;;Left,Right;Pelvis,L5,L3,T8,Neck,Head,Jaw;{s}Eye,{s}Shoulder,{s}UpperArm,{s}ForeArm,{s}Hand,{s}UpperLeg,{s}LowerLeg,{s}Foot,{s}Toe;{s}{f}{p};First,Second,Third,Fourth,Fifth;PP,MP,DP
joint-named mocap;;Left,Right;Hips,Chest,Chest2,Chest3,Neck,Head,Jaw;{s}Eye,{s}Collar,{s}Shoulder,{s}Elbow,{s}Wrist,{s}Hip,{s}Knee,{s}Ankle,{s}Toe;{s}{f}{p};Thumb,Index,Middle,Ring,Pinky;1,2,3
Cesium/COLLADA;;L,R;Skeleton_torso_joint_1,Skeleton_torso_joint_2,torso_joint_3,torso_joint_4,Skeleton_neck_joint_1,Skeleton_neck_joint_2,Skeleton_jaw_joint;Skeleton_eye_joint_{s},Skeleton_arm_joint_{s}__5_,Skeleton_arm_joint_{s}__4_,Skeleton_arm_joint_{s}__3_,Skeleton_arm_joint_{s}__2_,leg_joint_{s}_1,leg_joint_{s}_2,leg_joint_{s}_3,leg_joint_{s}_5;Skeleton_finger_joint_{s}_{f}_{p};1,2,3,4,5;1,2,3
Quaternius;;L,R;Hips,Abdomen,Torso,Chest,Neck,Head,Jaw;Eye{s},Shoulder{s},UpperArm{s},LowerArm{s},Hand{s},UpperLeg{s},LowerLeg{s},Foot{s},Toes{s};{f}{p}{s};Thumb,Index,Middle,Ring,Pinky;,2,3";

/// One line of `CONVENTIONS`: its name and the names of each other field.
struct Convention {
    name: String,
    fields: Vec<Vec<String>>,
}

/// The bones of `CONVENTIONS`' third field and the kinds of its fourth.
const CENTRE: [HumanBone; 7] = [
    HumanBone::Hips,
    HumanBone::Spine,
    HumanBone::Chest,
    HumanBone::UpperChest,
    HumanBone::Neck,
    HumanBone::Head,
    HumanBone::Jaw,
];
const LIMBS: [&str; 9] = [
    "Eye", "Shoulder", "UpperArm", "LowerArm", "Hand", "UpperLeg", "LowerLeg", "Foot", "Toes",
];

fn conventions() -> Vec<Convention> {
    CONVENTIONS
        .lines()
        .map(|line| {
            let mut fields = line.split(';');
            let name = fields.next().unwrap_or_default().to_owned();
            let fields = fields
                .map(|f| f.split(',').map(str::to_owned).collect())
                .collect();
            Convention { name, fields }
        })
        .collect()
}

fn convention(name: &str) -> Convention {
    conventions()
        .into_iter()
        .find(|c| c.name == name)
        .expect("a convention of the table")
}

impl Convention {
    /// The joint name for `bone`, on the other side when `mirrored`.
    fn joint_name(&self, bone: HumanBone, mirrored: bool) -> String {
        let [prefix, sides, centre, limbs, digit, fingers, phalanges] = &self.fields[..] else {
            panic!("{}: expected 7 fields", self.name);
        };
        let name = bone.name();
        let (left, kind) = match (name.strip_prefix("left"), name.strip_prefix("right")) {
            (Some(k), _) => (true, k),
            (_, Some(k)) => (false, k),
            _ => (true, name),
        };
        let side = &sides[usize::from(left == mirrored)];
        let template = if let Some(i) = CENTRE.iter().position(|&b| b == bone) {
            centre[i].clone()
        } else if let Some(i) = LIMBS.iter().position(|&k| k == kind) {
            limbs[i].clone()
        } else {
            // Finger bones follow leftThumbMetacarpal three by three.
            let left_bone = if left { bone } else { bone.mirrored() };
            let i = left_bone.index() - HumanBone::LeftThumbMetacarpal.index();
            digit[0]
                .replace("{f}", &fingers[i / 3])
                .replace("{p}", &phalanges[i % 3])
        };
        format!("{}{}", prefix[0], template.replace("{s}", side))
    }
}

/// Every mapped joint renamed by `convention` (sides swapped when `mirrored`), every
/// other joint given a name that says nothing.
fn renamed(tree: &Tree, convention: &Convention, mirrored: bool) -> Tree {
    let mut out = tree.clone();
    for (i, node) in out.nodes.iter_mut().enumerate() {
        node.name = match tree.bones.get(&i) {
            Some(&bone) => convention.joint_name(bone, mirrored),
            None => format!("x{i}"),
        };
    }
    out
}

fn stripped(tree: &Tree) -> Tree {
    let mut out = tree.clone();
    for (i, node) in out.nodes.iter_mut().enumerate() {
        node.name = format!("node{i}");
    }
    out
}

/// Transform nodes above the root (one turned 90° about +Y with scale 0.01, as an
/// exporter's armature), a coincident offset node above the hips, the shoulders,
/// hands, every finger and the thighs, and a joint halfway along each upper arm,
/// forearm, thigh and shin (as twist bones sit).
fn with_extra_nodes(tree: &Tree) -> Tree {
    use HumanBone as B;
    let mut out = tree.clone();
    let roots: Vec<usize> = (0..out.nodes.len())
        .filter(|&i| out.nodes[i].parent.is_none())
        .collect();
    let scene = out.push("Scene".into(), None, Transform::IDENTITY);
    let armature = out.push(
        "RootNode".into(),
        Some(scene),
        Transform {
            translation: Vec3::ZERO,
            rotation: Quat::from_rotation_y(std::f32::consts::FRAC_PI_2),
            scale: Vec3::splat(0.01),
        },
    );
    for r in roots {
        out.nodes[r].parent = Some(armature);
        out.nodes[r].rest.translation *= 100.0;
        out.nodes[r].rest.scale *= 100.0;
    }
    let mut above = vec![B::Hips];
    let mut midway = Vec::new();
    for side in [B::LeftHand, B::RightHand] {
        let s = |b: HumanBone| if side == B::LeftHand { b } else { b.mirrored() };
        above.extend([s(B::LeftUpperArm), s(B::LeftHand), s(B::LeftUpperLeg)]);
        above.extend(
            [
                B::LeftThumbMetacarpal,
                B::LeftIndexProximal,
                B::LeftMiddleProximal,
                B::LeftRingProximal,
                B::LeftLittleProximal,
            ]
            .map(s),
        );
        midway.extend([
            s(B::LeftLowerArm),
            s(B::LeftHand),
            s(B::LeftLowerLeg),
            s(B::LeftFoot),
        ]);
    }
    for bone in above {
        if let Some(n) = out.node(bone) {
            out.insert_above(n, &format!("{}_offset", bone.name()));
        }
    }
    for bone in midway {
        if let Some(n) = out.node(bone) {
            out.insert_midway(n, &format!("{}_mid", bone.name()));
        }
    }
    out
}

/// Hair on the head, a skirt and a tail on the hips, a cape on the upper chest,
/// breasts on the chest, a sword in the right hand and a prop at the root.
fn with_extra_chains(tree: &Tree) -> Tree {
    use HumanBone as B;
    let mut out = tree.clone();
    let at = |bone: HumanBone| out.node(bone);
    let (Some(hips), Some(head)) = (at(B::Hips), at(B::Head)) else {
        return out;
    };
    let top = at(B::UpperChest)
        .or(at(B::Chest))
        .or(at(B::Spine))
        .unwrap_or(hips);
    let hand = at(B::RightHand);
    let chest = at(B::Chest).unwrap_or(top);
    let (hp, headp, topp) = (out.position(hips), out.position(head), out.position(top));
    let height = headp.y - out.position(at(B::LeftFoot).unwrap_or(hips)).y;
    let u = height / 1.5;
    // Three strands of hair on the head and of a cape on the upper chest.
    let strands = [
        (
            head,
            headp,
            "hair",
            0.06,
            Vec3::new(0.0, 0.1, -0.08),
            -0.08,
            4,
        ),
        (top, topp, "cape", 0.1, Vec3::new(0.0, 0.0, -0.1), -0.3, 3),
    ];
    for (parent, base, name, apart, offset, down, count) in strands {
        for k in 0..3 {
            let x = apart * (k as f32 - 1.0);
            let start = base + (offset + Vec3::X * x) * u;
            let step = Vec3::new(0.0, down, -0.02) * u;
            out.chain(parent, &format!("{name}_{k}"), start, step, count);
        }
    }
    for k in 0..8 {
        let a = k as f32 * std::f32::consts::TAU / 8.0;
        let ring = Vec3::new(a.cos(), 0.0, a.sin());
        let start = hp + ring * 0.13 * u - Vec3::Y * 0.05 * u;
        out.chain(
            hips,
            &format!("skirt_{k}"),
            start,
            (ring * 0.03 - Vec3::Y * 0.12) * u,
            3,
        );
    }
    let tail = hp - Vec3::Z * 0.1 * u;
    out.chain(hips, "tail", tail, Vec3::new(0.0, -0.1, -0.1) * u, 5);
    let cp = out.position(chest);
    for (name, x) in [("breast_L", 0.08f32), ("breast_R", -0.08)] {
        out.add(chest, name, cp + Vec3::new(x, 0.05, 0.1) * u);
    }
    if let Some(hand) = hand {
        let p = out.position(hand);
        out.chain(
            hand,
            "weapon_r",
            p + Vec3::new(0.0, 0.0, 0.05) * u,
            Vec3::Z * 0.5 * u,
            2,
        );
    }
    let root = (0..out.nodes.len())
        .find(|&i| out.nodes[i].parent.is_none())
        .unwrap_or(hips);
    out.chain(
        root,
        "prop_crate",
        Vec3::new(0.5, 0.0, 0.5) * u,
        Vec3::Y * 0.3 * u,
        2,
    );
    out
}

/// An IK and an FK copy of every limb beside the deforming one (as control rigs
/// export), plus IK targets and pole targets at the root.
fn with_ik_fk_duplicates(tree: &Tree) -> Tree {
    use HumanBone as B;
    let mut out = tree.clone();
    // Each limb from its first humanoid joint: the shoulder when there is one.
    let limbs = [
        [B::LeftUpperLeg, B::LeftUpperLeg],
        [B::RightUpperLeg, B::RightUpperLeg],
        [B::LeftShoulder, B::LeftUpperArm],
        [B::RightShoulder, B::RightUpperArm],
    ];
    for [first, second] in limbs {
        if let Some(r) = out.node(first).or_else(|| out.node(second)) {
            out.duplicate(r, "_IK");
            out.duplicate(r, "_FK");
        }
    }
    let root = (0..out.nodes.len())
        .find(|&i| out.nodes[i].parent.is_none())
        .unwrap_or(0);
    for (bone, name) in [
        (B::LeftHand, "hand_ik_target.L"),
        (B::RightHand, "hand_ik_target.R"),
        (B::LeftFoot, "foot_ik_target.L"),
        (B::RightFoot, "foot_ik_target.R"),
        (B::LeftLowerLeg, "knee_pole.L"),
        (B::RightLowerLeg, "knee_pole.R"),
    ] {
        if let Some(n) = out.node(bone) {
            let p = out.position(n) + Vec3::Z * 0.3;
            out.add(root, name, p);
        }
    }
    out
}

/// The rigs the variants are made from: a full synthetic humanoid and the lab's
/// skeleton (always), and asset rigs when ../shared/assets is there.
fn base_rigs() -> Vec<(String, Tree)> {
    let mut bases = vec![("synthetic humanoid".to_owned(), full_humanoid())];
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lab = load(&root.join("config/skeletons/lab19.json"));
    bases.push(("lab19.json".into(), Tree::new(&lab.skeleton, &map(LAB19))));
    if let Some(dir) = assets() {
        for (file, map) in [
            ("vrm/Example.vrm", map(VRM_ADDON_DOTS)),
            ("bvh/cmu_12_01_walk.bvh", map(CMU)),
            ("gltf/CesiumMan.glb", map(CESIUM_MAN)),
            ("gltf/Med_General.glb", map(KAYKIT)),
            ("bvh/bvh_test3.bvh", pybvh_3()),
            ("bvh/tpose.bvh", map(MAKEHUMAN_DEFAULT)),
        ] {
            let rig = load(&dir.join(file));
            bases.push((file.to_owned(), Tree::new(&rig.skeleton, &map)));
        }
    }
    bases
}

/// Recognizes `tree` and returns the differences from its expected map.
fn check(tree: &Tree) -> Vec<String> {
    let skeleton = tree.skeleton();
    let expected = tree.expected();
    match recognize(&skeleton) {
        Recognition::Humanoid(r) => differences(&expected, &r.map),
        Recognition::NotHumanoid(n) => vec![format!("rejected: {}", n.reason)],
    }
}

fn run_variants(name: &str, make: &dyn Fn(&Tree) -> Tree) {
    let mut failures = Vec::new();
    let mut count = 0;
    for (base, tree) in base_rigs() {
        let variant = make(&tree);
        let diff = check(&variant);
        count += 1;
        if !diff.is_empty() {
            failures.push(format!("{base} ({name}): {diff:#?}"));
        }
    }
    println!(
        "{name}: {}/{count} rigs give the same map",
        count - failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_naming_convention_gives_the_same_map() {
    for c in conventions() {
        run_variants(&c.name, &|t| renamed(t, &c, false));
    }
}

#[test]
fn mirrored_names_give_the_same_map() {
    for c in conventions() {
        run_variants(&format!("{}, L/R swapped", c.name), &|t| {
            renamed(t, &c, true)
        });
    }
}

#[test]
fn stripped_names_give_the_same_map() {
    run_variants("all joints node0..", &|t| {
        let mut out = stripped(t);
        // MakeHuman's eyes and jaw sit among the 60 joints of its face rig, where
        // nothing but a name tells them (see the next test).
        if out.nodes.len() > 150 {
            out.bones.retain(|_, b| {
                !matches!(b, HumanBone::LeftEye | HumanBone::RightEye | HumanBone::Jaw)
            });
        }
        out
    });
}

#[test]
fn stripped_face_rig_loses_only_eyes_and_jaw() {
    let Some(dir) = assets() else { return };
    let rig = load(&dir.join("bvh/tpose.bvh"));
    let tree = stripped(&Tree::new(&rig.skeleton, &map(MAKEHUMAN_DEFAULT)));
    let got = recognize(&tree.skeleton())
        .into_humanoid()
        .expect("still a humanoid");
    let mut lost = differences(&tree.expected(), &got.map);
    lost.sort();
    assert_eq!(
        lost,
        [
            "jaw: expected node115, got nothing",
            "leftEye: expected node165, got nothing",
            "rightEye: expected node160, got nothing",
        ]
    );
}

#[test]
fn extra_intermediate_nodes_give_the_same_map() {
    run_variants("extra nodes", &with_extra_nodes);
}

#[test]
fn hair_skirt_tail_cape_and_weapon_chains_give_the_same_map() {
    run_variants("extra chains", &with_extra_chains);
}

#[test]
fn ik_and_fk_duplicates_give_the_same_map() {
    run_variants("IK/FK duplicates", &with_ik_fk_duplicates);
}

#[test]
fn everything_at_once_gives_the_same_map() {
    run_variants(
        "Mixamo names, mirrored, extra nodes, chains and IK/FK",
        &|t| {
            // Chains first: they are placed in the rig's own frame, which the extra
            // nodes then turn and scale.
            with_ik_fk_duplicates(&with_extra_nodes(&with_extra_chains(&renamed(
                t,
                &convention("Mixamo"),
                true,
            ))))
        },
    );
}

/// 3ds Max Biped as it exports: `Bip01` above `Bip01 Pelvis`, the thighs hanging
/// from `Bip01 Spine` and the clavicles from `Bip01 Neck`.
#[test]
fn biped_layout_keeps_the_pelvis_as_hips() {
    use HumanBone as B;
    let mut tree = renamed(&full_humanoid(), &convention("3ds Max Biped"), false);
    let at = |t: &Tree, b: HumanBone| t.node(b).expect("bone in the synthetic rig");
    let (spine, neck) = (at(&tree, B::Spine), at(&tree, B::Neck));
    for thigh in [B::LeftUpperLeg, B::RightUpperLeg] {
        let n = at(&tree, thigh);
        tree.reparent(n, spine);
    }
    for clavicle in [B::LeftShoulder, B::RightShoulder] {
        let n = at(&tree, clavicle);
        tree.reparent(n, neck);
    }
    tree.nodes[0].name = "Bip01".into();
    assert_eq!(check(&tree), Vec::<String>::new());
    let got = recognize(&tree.skeleton()).into_humanoid().unwrap();
    assert_eq!(got.map.bones[&B::Hips], "Bip01 Pelvis");
    assert_eq!(got.map.bones[&B::Spine], "Bip01 Spine");
    assert_eq!(got.map.bones[&B::Neck], "Bip01 Neck");
}

// ---------------------------------------------------------------------------------
// Rejections

/// A joint named and placed by hand.
fn joint(name: &str, parent: Option<usize>, offset: [f32; 3]) -> Joint {
    Joint {
        name: name.into(),
        parent,
        rest: Transform::from_translation(Vec3::from(offset)),
        end: None,
    }
}

#[test]
fn non_humanoids_are_rejected_with_a_reason() {
    // A chain (RiggedSimple-like), a lone joint, a quadruped, a legless upper body.
    let chain = Skeleton::new(vec![
        joint("Root", None, [0.0, 0.0, 0.0]),
        joint("Bone", Some(0), [0.0, 1.0, 0.0]),
        joint("Bone.001", Some(1), [0.0, 1.0, 0.0]),
        joint("Bone.002", Some(2), [0.0, 1.0, 0.0]),
    ])
    .unwrap();
    let lone = Skeleton::new(vec![joint("only", None, [0.0, 1.0, 0.0])]).unwrap();
    let mut dog = vec![
        joint("pelvis", None, [0.0, 0.5, -0.4]),
        joint("spine", Some(0), [0.0, 0.05, 0.4]),
        joint("chest", Some(1), [0.0, 0.0, 0.4]),
        joint("neck", Some(2), [0.0, 0.2, 0.15]),
        joint("head", Some(3), [0.0, 0.1, 0.1]),
    ];
    for (root, x, name) in [
        (0usize, 0.1f32, "hind_l"),
        (0, -0.1, "hind_r"),
        (2, 0.1, "front_l"),
        (2, -0.1, "front_r"),
    ] {
        let base = dog.len();
        dog.push(joint(&format!("{name}_1"), Some(root), [x, -0.05, 0.0]));
        dog.push(joint(&format!("{name}_2"), Some(base), [0.0, -0.22, 0.02]));
        dog.push(joint(
            &format!("{name}_3"),
            Some(base + 1),
            [0.0, -0.22, -0.02],
        ));
    }
    let dog = Skeleton::new(dog).unwrap();
    let torso = Skeleton::new(vec![
        joint("Spine", None, [0.0, 1.0, 0.0]),
        joint("Chest", Some(0), [0.0, 0.3, 0.0]),
        joint("Head", Some(1), [0.0, 0.3, 0.0]),
        joint("LeftArm", Some(1), [0.2, 0.2, 0.0]),
        joint("LeftForeArm", Some(3), [0.3, 0.0, 0.0]),
        joint("LeftHand", Some(4), [0.3, 0.0, 0.0]),
        joint("RightArm", Some(1), [-0.2, 0.2, 0.0]),
        joint("RightForeArm", Some(6), [-0.3, 0.0, 0.0]),
        joint("RightHand", Some(7), [-0.3, 0.0, 0.0]),
    ])
    .unwrap();
    for (what, skeleton, needle) in [
        ("chain", chain, "no joint branches into two legs"),
        ("lone joint", lone, "no joint branches into two legs"),
        ("quadruped", dog, "no arms"),
        ("upper body", torso, "no joint branches into two legs"),
    ] {
        match recognize(&skeleton) {
            Recognition::NotHumanoid(n) => {
                assert!(n.reason.contains(needle), "{what}: {}", n.reason);
            }
            Recognition::Humanoid(r) => panic!("{what} recognized: {:?}", r.map),
        }
    }
}

#[test]
fn robot_without_feet_is_rejected_but_its_partial_map_is_right() {
    let Some(dir) = assets() else { return };
    let rig = load(&dir.join("gltf/RobotExpressive.glb"));
    let Recognition::NotHumanoid(n) = recognize(&rig.skeleton) else {
        panic!("RobotExpressive has no foot joints: it cannot be a VRM humanoid");
    };
    assert!(n.reason.contains("UpperLeg"), "{}", n.reason);
    // The body, legs and arms down to the elbows are found all the same.
    let expected = map(
        "hips Body; spine Hips; chest Abdomen; upperChest Torso_1; neck Neck;
        head Head; UpperLeg UpperLegL UpperLegR; LowerLeg LowerLegL LowerLegR;
        Shoulder ShoulderL ShoulderR; UpperArm UpperArmL UpperArmR; LowerArm LowerArmL LowerArmR",
    );
    for (bone, joint) in &expected.bones {
        assert_eq!(n.partial.bones.get(bone), Some(joint), "{bone}");
    }
}

// ---------------------------------------------------------------------------------
// Random rigs

/// A random rig description from a seed, over the same ranges as the retargeting
/// property tests: proportions 0.6 to 1.4, arms in T-pose, 20-50 or 75-88 degrees
/// down, legs spread up to 12 degrees, any facing, every optional part by chance.
fn rig_spec(seed: u64) -> RigSpec {
    let mut rng = Rng::new(seed);
    let arm_drop_deg = match rng.next_u64() % 3 {
        0 => 0.0,
        1 => rng.range(20.0, 50.0),
        _ => rng.range(75.0, 88.0),
    };
    let yaw_deg = match rng.next_u64() % 3 {
        0 => 0.0,
        1 => 180.0,
        _ => rng.range(-180.0, 180.0),
    };
    RigSpec {
        seed,
        legs: rng.range(0.6, 1.4),
        torso: rng.range(0.6, 1.4),
        arms: rng.range(0.6, 1.4),
        arm_drop_deg,
        leg_spread_deg: rng.range(0.0, 12.0),
        yaw_deg,
        chest: rng.chance(0.5),
        upper_chest: rng.chance(0.5),
        neck: rng.chance(0.5),
        shoulders: rng.chance(0.5),
        toes: rng.chance(0.5),
        fingers: rng.chance(0.5),
        armature: rng.chance(0.5),
        extra_joints: rng.chance(0.5),
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        rng_seed: common::proptest_seed(),
        ..ProptestConfig::default()
    })]

    /// Random proportions, rest poses (T, A, arms down), facing, optional bones,
    /// armature nodes and in-between joints: the generator's own map comes back.
    #[test]
    fn random_rigs_are_recognized(seed in any::<u64>()) {
        let spec = rig_spec(seed);
        let rig = random_rig(&spec);
        let got = recognize(&rig.skeleton);
        let diff = match &got {
            Recognition::Humanoid(r) => differences(&rig.map, &r.map),
            Recognition::NotHumanoid(n) => vec![n.reason.clone()],
        };
        prop_assert!(diff.is_empty(), "{spec:?}: {diff:#?}");
    }

    /// The same with every name stripped. A head or a foot ending in an unnamed end
    /// nub looks exactly like a neck-and-head or foot-and-toes pair, so these rigs
    /// keep their neck and toes.
    #[test]
    fn random_rigs_without_names_are_recognized(seed in any::<u64>()) {
        let spec = RigSpec { neck: true, toes: true, ..rig_spec(seed) };
        let mut rig = random_rig(&spec);
        // Without names, the second of two torso joints is the chest (the generator
        // may call it the upper chest; both are valid VRM maps).
        if !rig.map.bones.contains_key(&HumanBone::Chest)
            && let Some(joint) = rig.map.bones.remove(&HumanBone::UpperChest)
        {
            rig.map.bones.insert(HumanBone::Chest, joint);
        }
        let tree = stripped(&Tree::new(&rig.skeleton, &rig.map));
        let diff = check(&tree);
        prop_assert!(diff.is_empty(), "{spec:?}: {diff:#?}");
    }
}

// ---------------------------------------------------------------------------------
// The command line

/// `mocap-bridge inspect FILE`, with `--option PATH` pairs.
fn inspect(file: &Path, options: &[(&str, &Path)]) -> std::process::Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mocap-bridge"));
    command.arg("inspect").arg(file);
    for (option, path) in options {
        command.arg(option).arg(path);
    }
    command.output().expect("the binary runs")
}

#[test]
fn inspect_writes_the_recognized_map_and_reads_it_back() {
    let Some(dir) = assets() else { return };
    let file = dir.join("bvh/bvh_test3.bvh");
    let out_dir = tempfile::tempdir().unwrap();
    let written = out_dir.path().join("map.json");
    let out = inspect(&file, &[("--write-map", &written)]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("bone map: recognized (confidence 0."),
        "{stdout}"
    );
    let map = NamedBoneMap::load(&written).unwrap();
    assert_eq!(differences(&pybvh_3(), &map), Vec::<String>::new());
    // Loadable back with --map, as a user does after editing it.
    let again = inspect(&file, &[("--map", &written)]);
    let stdout = String::from_utf8_lossy(&again.stdout);
    assert!(again.status.success());
    assert!(
        stdout.contains(&format!("bone map: {}", written.display())),
        "{stdout}"
    );
}

#[test]
fn inspect_says_why_a_rig_is_not_a_humanoid() {
    let Some(dir) = assets() else { return };
    let file = dir.join("gltf/RiggedSimple.glb");
    let out = inspect(&file, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("not recognized as a humanoid: no joint branches"),
        "{stdout}"
    );
    let out_dir = tempfile::tempdir().unwrap();
    let out = inspect(&file, &[("--write-map", &out_dir.path().join("map.json"))]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no bone map to write"), "{stderr}");
    assert!(!out_dir.path().join("map.json").exists());
}
