//! Where a body's humanoid bones sit: T-pose positions (`BodyProportions`, built
//! once from a `MappedSkeleton`) and, for one normalized pose, the model rotation and
//! position of every bone (`BodyFrame`, per frame, no heap).
//!
//! Forward kinematics in humanoid model space, matching what `FromNormalized` gives
//! the skeleton (facing turn factored out): with `M(b)` the product of normalized
//! rotations from the hips down to `b` (absent bones: identity) and `q` the nearest
//! ancestor of `b` the body has,
//!
//! ```text
//! P(hips) = hips_position · (rest hips height of the body / of the pose)
//! P(b)    = P(q) + M(q) · (T(b) − T(q))        T: T-pose model position
//! ```

use glam::{Quat, Vec3, Vec3A};

use crate::humanoid::bone::ALL;
use crate::humanoid::{BONE_COUNT, HumanBone, HumanoidPose};
use crate::retarget::MappedSkeleton;

/// One of the four two-bone limbs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Limb {
    LeftArm,
    RightArm,
    LeftLeg,
    RightLeg,
}

impl Limb {
    pub const ALL: [Limb; 4] = [Limb::LeftArm, Limb::RightArm, Limb::LeftLeg, Limb::RightLeg];

    /// The root, middle and end bones: upper arm, lower arm, hand (or upper leg,
    /// lower leg, foot).
    #[must_use]
    pub const fn bones(self) -> [HumanBone; 3] {
        use HumanBone as B;
        match self {
            Limb::LeftArm => [B::LeftUpperArm, B::LeftLowerArm, B::LeftHand],
            Limb::RightArm => [B::RightUpperArm, B::RightLowerArm, B::RightHand],
            Limb::LeftLeg => [B::LeftUpperLeg, B::LeftLowerLeg, B::LeftFoot],
            Limb::RightLeg => [B::RightUpperLeg, B::RightLowerLeg, B::RightFoot],
        }
    }

    /// Whether this is a leg.
    #[must_use]
    pub const fn is_leg(self) -> bool {
        matches!(self, Limb::LeftLeg | Limb::RightLeg)
    }
}

/// The torso, hips to head, parents first: what VR mode's spine stages move.
pub const TORSO: [HumanBone; 6] = [
    HumanBone::Hips,
    HumanBone::Spine,
    HumanBone::Chest,
    HumanBone::UpperChest,
    HumanBone::Neck,
    HumanBone::Head,
];

/// The shoulders and the four limbs, parents first; their humanoid parents (hips,
/// upperChest) are in `TORSO`.
pub const LIMBS: [HumanBone; 14] = {
    use HumanBone as B;
    [
        B::LeftUpperLeg,
        B::LeftLowerLeg,
        B::LeftFoot,
        B::RightUpperLeg,
        B::RightLowerLeg,
        B::RightFoot,
        B::LeftShoulder,
        B::LeftUpperArm,
        B::LeftLowerArm,
        B::LeftHand,
        B::RightShoulder,
        B::RightUpperArm,
        B::RightLowerArm,
        B::RightHand,
    ]
};

/// No ancestor in the body (the hips).
const NO_PARENT: u8 = u8::MAX;

/// T-pose model positions of a skeleton's humanoid bones. Built once.
#[derive(Debug, Clone, PartialEq)]
pub struct BodyProportions {
    /// T-pose position of every present bone, humanoid model space, metres; an
    /// absent bone holds its nearest present ancestor's.
    rest_positions: [Vec3; BONE_COUNT],
    /// `T(b) − T(q)`, `q` the nearest present ancestor.
    offsets: [Vec3A; BONE_COUNT],
    /// Index of `q`, or `NO_PARENT`.
    parents: [u8; BONE_COUNT],
    present: u64,
    rest_hips_height: f32,
    /// `limb_lengths` of each limb, in `Limb::ALL` order.
    limb_lengths: [(f32, f32); 4],
}

impl BodyProportions {
    /// The humanoid bones of `mapped` in its T-pose.
    #[must_use]
    pub fn new(mapped: &MappedSkeleton) -> Self {
        let world = mapped.correction.t_pose_world(&mapped.skeleton);
        let mut positions = [None; BONE_COUNT];
        for (bone, joint) in mapped.map.pairs() {
            positions[bone.index()] = world.get(joint).map(|w| Vec3::from(w.translation));
        }
        Self::from_positions(&positions, mapped.rest_hips_height())
    }

    /// A body from T-pose model positions (`None`: the bone is absent) and the hips
    /// height above the floor. The hips must be present.
    #[must_use]
    pub fn from_positions(positions: &[Option<Vec3>; BONE_COUNT], rest_hips_height: f32) -> Self {
        let mut body = Self {
            rest_positions: [Vec3::ZERO; BONE_COUNT],
            offsets: [Vec3A::ZERO; BONE_COUNT],
            parents: [NO_PARENT; BONE_COUNT],
            present: 0,
            rest_hips_height,
            limb_lengths: [(0.0, 0.0); 4],
        };
        for bone in ALL {
            let i = bone.index();
            let q = bone.parent_in(|b| positions[b.index()].is_some());
            let anchor = q.map_or(Vec3::ZERO, |q| body.rest_positions[q.index()]);
            match positions[i] {
                Some(p) => {
                    body.rest_positions[i] = p;
                    body.offsets[i] = (p - anchor).into();
                    body.present |= 1 << i;
                }
                None => body.rest_positions[i] = anchor,
            }
            body.parents[i] = q.map_or(NO_PARENT, |q| q.index() as u8);
        }
        body.limb_lengths = Limb::ALL.map(|limb| {
            let [a, b, c] = limb.bones().map(|b| body.rest_position(b));
            (a.distance(b), b.distance(c))
        });
        body
    }

    /// Whether the body has `bone`.
    #[must_use]
    pub fn has(&self, bone: HumanBone) -> bool {
        self.present & (1 << bone.index()) != 0
    }

    /// T-pose model position of `bone` (its nearest present ancestor's when absent).
    #[must_use]
    pub fn rest_position(&self, bone: HumanBone) -> Vec3 {
        self.rest_positions[bone.index()]
    }

    /// Hips height above the floor in the T-pose, metres.
    #[must_use]
    pub fn rest_hips_height(&self) -> f32 {
        self.rest_hips_height
    }

    /// Height of `bone` above the floor in the T-pose, metres.
    #[must_use]
    pub fn rest_height(&self, bone: HumanBone) -> f32 {
        let floor = self.rest_position(HumanBone::Hips).y - self.rest_hips_height;
        self.rest_position(bone).y - floor
    }

    /// T-pose lengths of a limb's two bones (root to middle, middle to end), metres.
    #[must_use]
    pub fn limb_lengths(&self, limb: Limb) -> (f32, f32) {
        self.limb_lengths[limb as usize]
    }
}

/// Model rotation and position of every humanoid bone for one pose. Per frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BodyFrame {
    /// Rotation relative to the T-pose, humanoid model space (`M(b)` above).
    pub model_rotations: [Quat; BONE_COUNT],
    /// Humanoid model space, metres; an absent bone holds its nearest present
    /// ancestor's.
    pub model_positions: [Vec3A; BONE_COUNT],
}

impl Default for BodyFrame {
    fn default() -> Self {
        Self {
            model_rotations: [Quat::IDENTITY; BONE_COUNT],
            model_positions: [Vec3A::ZERO; BONE_COUNT],
        }
    }
}

impl BodyFrame {
    /// Forward kinematics of `pose` on `body` (formulas in the module header).
    pub fn update(&mut self, body: &BodyProportions, pose: &HumanoidPose) {
        self.update_bones(body, pose, &ALL);
    }

    /// Forward kinematics of `bones` only, in the order given; every other entry is
    /// left as it was. A bone's humanoid parent must be up to date: listed before it,
    /// or updated earlier for this pose. What the IK jobs use between their stages
    /// (`TORSO`, `LIMBS`, a single chain).
    pub fn update_bones(
        &mut self,
        body: &BodyProportions,
        pose: &HumanoidPose,
        bones: &[HumanBone],
    ) {
        let hips =
            Vec3A::from(pose.hips_position) * (body.rest_hips_height / pose.rest_hips_height);
        for &bone in bones {
            let parent_rotation = bone
                .parent()
                .map_or(Quat::IDENTITY, |p| self.model_rotations[p.index()]);
            self.model_rotations[bone.index()] = parent_rotation * pose.rotation_or_identity(bone);
            self.place(body, bone, hips);
        }
    }

    /// `update_bones` of one pose on two bodies at once (the model rotations are the
    /// same on every body; each frame gets its body's positions).
    pub fn update_bones_pair(
        (first, first_body): (&mut BodyFrame, &BodyProportions),
        (second, second_body): (&mut BodyFrame, &BodyProportions),
        pose: &HumanoidPose,
        bones: &[HumanBone],
    ) {
        let scale = |body: &BodyProportions| body.rest_hips_height / pose.rest_hips_height;
        let hips = Vec3A::from(pose.hips_position);
        let (first_hips, second_hips) = (hips * scale(first_body), hips * scale(second_body));
        for &bone in bones {
            let parent_rotation = bone
                .parent()
                .map_or(Quat::IDENTITY, |p| first.model_rotations[p.index()]);
            let rotation = parent_rotation * pose.rotation_or_identity(bone);
            first.model_rotations[bone.index()] = rotation;
            second.model_rotations[bone.index()] = rotation;
            first.place(first_body, bone, first_hips);
            second.place(second_body, bone, second_hips);
        }
    }

    /// Puts `bone` where its nearest present ancestor's position and rotation say,
    /// the hips at `hips`.
    #[inline]
    fn place(&mut self, body: &BodyProportions, bone: HumanBone, hips: Vec3A) {
        let i = bone.index();
        self.model_positions[i] = match body.parents[i] {
            NO_PARENT => hips,
            q => {
                let q = usize::from(q);
                self.model_positions[q] + self.model_rotations[q] * body.offsets[i]
            }
        };
    }

    /// Model position of `bone`.
    #[must_use]
    pub fn position(&self, bone: HumanBone) -> Vec3 {
        self.model_positions[bone.index()].into()
    }

    /// Model rotation of `bone`, relative to its T-pose.
    #[must_use]
    pub fn rotation(&self, bone: HumanBone) -> Quat {
        self.model_rotations[bone.index()]
    }

    /// Moves `bones` by `offset` (what moving the hips does to them); every other
    /// entry is left as it was.
    pub fn translate_bones(&mut self, offset: Vec3, bones: &[HumanBone]) {
        let offset = Vec3A::from(offset);
        for bone in bones {
            self.model_positions[bone.index()] += offset;
        }
    }
}
