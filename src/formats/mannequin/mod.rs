//! The avatar the bridge ships: a mannequin VRM 1.0 the project writes itself, so
//! that it is ours to give away (its meta lets anyone use, change and pass it on).
//!
//! It stands in the built-in humanoid's T-pose (`config/skeletons/humanoid.json`,
//! the bones that file lacks placed by `VrmaRest`'s standard proportions, as the
//! bridge's built-in avatar does), with each hand's fingers moved across the hand
//! so that the middle finger's base lies on the arm's axis: then its rest is
//! exactly the canonical T-pose (no bone off its canonical direction), the one the
//! bridge measures for rigs without a VRM map. Every one of the 55 VRM 1.0 bones is a node with an identity
//! rotation, facing +Z, left arm toward +X, metres, soles on y = 0.
//! Its body is skinned capsules along the bones (`body`, `shape`, `skin`), its face
//! has the preset expressions as morph targets (`face`), its eyes turn by lookAt on
//! the eye bones, and its `VRMC_vrm` extension maps all of it (`vrm`).
//!
//! Pure: the same bytes on every call, built in memory.

mod body;
mod buffer;
mod document;
mod face;
mod material;
mod shape;
mod skin;
mod vrm;

pub use document::Mannequin;
pub use vrm::{LICENSE_URL, NAME};

use glam::Vec3;

use crate::formats::glb::GlbFile;
use crate::formats::skeleton_json;
use crate::formats::vrma::VrmaRest;
use crate::humanoid::bone::{ALL, BONE_COUNT};
use crate::humanoid::{HumanBone, HumanBone as B, Side};
use crate::retarget::MappedSkeleton;
use crate::skeleton::builtin::HUMANOID_JSON;

/// The mannequin as a `.vrm` file (a GLB), in the built-in humanoid's T-pose.
#[must_use]
pub fn mannequin_vrm() -> Vec<u8> {
    Mannequin::new(&rest()).to_bytes()
}

/// Where the mannequin's bones stand: the built-in humanoid's T-pose, completed by
/// the standard proportions, the fingers moved by `finger_shift`.
#[must_use]
pub fn rest() -> VrmaRest {
    let built_in = built_in_rest();
    let mut positions = [None; BONE_COUNT];
    for bone in ALL {
        positions[bone.index()] = Some(built_in.position(bone) - finger_shift(&built_in, bone));
    }
    VrmaRest::from_positions(&positions, None)
}

/// The T-pose of the bridge's built-in avatar: the embedded humanoid, its missing
/// bones placed by the standard proportions.
#[must_use]
pub fn built_in_rest() -> VrmaRest {
    let rig = skeleton_json::embedded_rig("humanoid", HUMANOID_JSON);
    let map = rig.bone_map.clone().unwrap_or_default();
    match MappedSkeleton::new(rig.skeleton, &map) {
        Ok(mapped) => VrmaRest::from_mapped(&mapped),
        // The test suite loads the embedded humanoid with its map.
        Err(e) => unreachable!("the embedded humanoid is valid: {e}"),
    }
}

/// How far the mannequin moves a finger bone from `rest` (zero for other bones):
/// across the arm, by where the middle finger's base is off the arm's axis (the
/// arm lies along x in the T-pose).
#[must_use]
pub fn finger_shift(rest: &VrmaRest, bone: HumanBone) -> Vec3 {
    if !bone.is_finger() {
        return Vec3::ZERO;
    }
    let (hand, middle) = match bone.side() {
        Side::Right => (B::RightHand, B::RightMiddleProximal),
        _ => (B::LeftHand, B::LeftMiddleProximal),
    };
    let off = rest.position(middle) - rest.position(hand);
    Vec3::new(0.0, off.y, off.z)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::glb::split_glb;

    #[test]
    fn the_fingers_move_so_the_hand_points_along_the_arm() {
        let (built_in, rest) = (built_in_rest(), rest());
        for (hand, middle) in [
            (B::LeftHand, B::LeftMiddleProximal),
            (B::RightHand, B::RightMiddleProximal),
        ] {
            let direction = (rest.position(middle) - rest.position(hand)).normalize();
            assert!(direction.abs_diff_eq(Vec3::X * direction.x.signum(), 1e-6));
        }
        for bone in ALL {
            let moved = built_in.position(bone).distance(rest.position(bone));
            assert_eq!(moved > 0.0, bone.is_finger(), "{bone} moved {moved} m");
            assert!(moved < 0.01);
        }
    }

    #[test]
    fn the_file_is_the_same_on_every_call() {
        assert_eq!(mannequin_vrm(), mannequin_vrm());
    }

    #[test]
    fn every_skin_weight_sums_to_one_and_every_bone_has_geometry() {
        let bytes = mannequin_vrm();
        let (json, bin) = split_glb(&bytes).unwrap();
        let json: serde_json::Value = serde_json::from_slice(json).unwrap();
        let bin = bin.unwrap();
        let accessor = |index: &serde_json::Value| -> &[u8] {
            let a = &json["accessors"][index.as_u64().unwrap() as usize];
            let v = &json["bufferViews"][a["bufferView"].as_u64().unwrap() as usize];
            let start = v["byteOffset"].as_u64().unwrap() as usize;
            &bin[start..start + v["byteLength"].as_u64().unwrap() as usize]
        };
        let mut weighted = [false; 55];
        for mesh in json["meshes"].as_array().unwrap() {
            for p in mesh["primitives"].as_array().unwrap() {
                let joints = accessor(&p["attributes"]["JOINTS_0"]);
                let weights = accessor(&p["attributes"]["WEIGHTS_0"]);
                for (j, w) in joints.chunks(4).zip(weights.chunks(16)) {
                    let w: Vec<f32> = w
                        .chunks(4)
                        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                        .collect();
                    assert_eq!(w.iter().sum::<f32>(), 1.0);
                    for (joint, weight) in j.iter().zip(&w) {
                        if *weight > 0.0 {
                            weighted[*joint as usize] = true;
                        }
                    }
                }
            }
        }
        for bone in ALL {
            assert!(weighted[bone.index()], "no vertex on {bone}");
        }
    }
}
