//! Assembles a stream of VMC events into timestamped poses. VMC has no frame
//! marker: a sender's frame is `OK`, `T`, the root, the bones and the blend values
//! closed by `Blend/Apply`, so a frame ends at `Apply` (when it has bones), else
//! when the next one begins (an `OK` or `T` after bone data, or the root or a bone
//! the frame already holds: a sender that sends none of the markers, bundled or
//! one message per datagram) or the stream ends. Times come from the sender's
//! `/VMC/Ext/T` when it sends one (from the first, never going back: a sender
//! restarting its clock goes on after its last frame, `SenderClock`), else from
//! the arrival time the caller passes.
//!
//! The hips' pose is composed with the root's (`/VMC/Ext/Root/Pos`), and the
//! sender's hips height standing (`rest_hips_height`) is its rest model's, else
//! its first frame's hips height (VMC does not send it); eye bones also
//! give the lookAt; blend values become presets (VRM 1.0 or VRM 0 names) or custom
//! expressions.
//!
//! Bone rotations are local to the sender's own rest pose. By default that rest is
//! VRM 0 style: every bone's rest rotation is the identity, so a local rotation is
//! already the normalized one (what VSeeFace and Virtual Motion Capture send). A
//! sender whose avatar is not normalized has its rest given as a `SenderRest` (its
//! model's T-pose): then `N = W(parent joint) · L · W(b)⁻¹`, the joints between a
//! bone and its humanoid parent taken at rest.

use std::sync::Arc;

use glam::{Quat, Vec3};

use crate::humanoid::bone::{ALL, BONE_COUNT};
use crate::humanoid::{CustomNames, HumanBone, HumanoidPose, LookAt};
use crate::protocol::sender_clock::SenderClock;
use crate::protocol::vmc::{VmcEvent, preset_from_name};
use crate::retarget::MappedSkeleton;

/// A VMC sender's rest pose: per bone, the T-pose world rotation of the joint it
/// hangs from (`W(parent joint)`, the facing turn for a root) and the inverse of
/// its own (`W(b)⁻¹`), internal axes. Bones the model lacks stay identity.
#[derive(Debug, Clone, PartialEq)]
pub struct SenderRest {
    pre: [Quat; BONE_COUNT],
    post: [Quat; BONE_COUNT],
    /// The model's hips height in its T-pose, metres.
    hips_height: f32,
}

impl SenderRest {
    /// The rest of a sender whose avatar is `model`.
    #[must_use]
    pub fn from_mapped(model: &MappedSkeleton) -> Self {
        let world: Vec<Quat> = model
            .correction
            .t_pose_world(&model.skeleton)
            .iter()
            .map(|w| w.to_scale_rotation_translation().1.normalize())
            .collect();
        let mut rest = Self {
            pre: [Quat::IDENTITY; BONE_COUNT],
            post: [Quat::IDENTITY; BONE_COUNT],
            hips_height: model.rest_hips_height(),
        };
        for bone in ALL {
            if let Some(joint) = model.map.joint(bone) {
                rest.pre[bone.index()] = model
                    .skeleton
                    .parent(joint)
                    .map_or(model.correction.facing, |p| world[p]);
                rest.post[bone.index()] = world[joint].conjugate();
            }
        }
        rest
    }

    /// The normalized rotation of `bone` for the sender's local rotation `local`.
    #[must_use]
    pub fn normalize(&self, bone: HumanBone, local: Quat) -> Quat {
        (self.pre[bone.index()] * local * self.post[bone.index()]).normalize()
    }
}

/// The hips height standing of a sender whose first frame has its hips at `y`
/// metres over its floor: `y`, unless lower than a standing body's hips could be
/// (no hips sent, or a sender whose root is not on its floor), then a typical one.
#[must_use]
pub fn standing_hips_height(y: f32) -> f32 {
    if y > 0.3 { y } else { 0.9 }
}

/// The bit of the root in `VmcFrames::set`, after every bone's.
const ROOT_BIT: usize = BONE_COUNT;

const _: () = assert!(ROOT_BIT < 64, "a frame's set is one u64");

/// The frame being assembled and what is known of the stream.
#[derive(Debug, Clone)]
pub struct VmcFrames {
    pose: HumanoidPose,
    custom: CustomNames,
    root: (Vec3, Quat),
    hips_local: Option<(Vec3, Quat)>,
    /// Sender time of the frame being assembled, and the sender's clock read as
    /// a timeline from its first frame.
    sender_time: Option<f32>,
    clock: SenderClock,
    /// Arrival time of the frame's first message.
    arrival: Option<f32>,
    has_bones: bool,
    /// What the frame has set: bit `HumanBone::index()` a bone, bit `ROOT_BIT`
    /// the root.
    set: u64,
    /// The sender's rest, when it is not VRM 0 style identity.
    rest: Option<Arc<SenderRest>>,
    /// Custom expressions that found no free slot.
    pub dropped_expressions: u64,
    /// The sender's hips height standing (each pose's `rest_hips_height`): its
    /// rest's, else its first frame's (`standing_hips_height`).
    rest_hips_height: Option<f32>,
}

impl Default for VmcFrames {
    fn default() -> Self {
        Self {
            pose: HumanoidPose::default(),
            custom: CustomNames::default(),
            root: (Vec3::ZERO, Quat::IDENTITY),
            hips_local: None,
            sender_time: None,
            clock: SenderClock::default(),
            arrival: None,
            has_bones: false,
            set: 0,
            rest: None,
            dropped_expressions: 0,
            rest_hips_height: None,
        }
    }
}

impl VmcFrames {
    /// Frames from a sender whose bone rotations are local to `rest`.
    #[must_use]
    pub fn with_rest(rest: Arc<SenderRest>) -> Self {
        Self {
            rest: Some(rest),
            ..Self::default()
        }
    }

    /// Takes one event that arrived `now` seconds after the stream began; returns
    /// the previous frame when this event starts a new one.
    pub fn event(&mut self, event: VmcEvent<'_>, now: f32) -> Option<(f32, HumanoidPose)> {
        let sets = match event {
            VmcEvent::Root { .. } => 1 << ROOT_BIT,
            VmcEvent::Bone { bone, .. } => 1 << bone.index(),
            _ => 0,
        };
        let starts_frame =
            matches!(event, VmcEvent::Available { .. } | VmcEvent::Time(_)) || self.set & sets != 0;
        let finished = if starts_frame && self.has_bones {
            self.take_frame()
        } else {
            None
        };
        self.set |= sets;
        if self.arrival.is_none() {
            self.arrival = Some(now);
        }
        match event {
            VmcEvent::Time(t) => {
                self.sender_time = Some(t);
            }
            VmcEvent::Root { position, rotation } => {
                self.root = (position, rotation);
                self.compose_hips();
            }
            VmcEvent::Bone {
                bone,
                position,
                rotation,
            } => {
                self.has_bones = true;
                let rotation = match &self.rest {
                    Some(rest) => rest.normalize(bone, rotation),
                    None => rotation,
                };
                if bone == HumanBone::Hips {
                    self.hips_local = Some((position, rotation));
                    self.compose_hips();
                } else {
                    self.pose.set_rotation(bone, rotation);
                    if bone == HumanBone::LeftEye {
                        self.pose.look_at = Some(LookAt::from_rotation(rotation));
                    }
                }
            }
            VmcEvent::Blend { name, value } => match preset_from_name(name) {
                Some(preset) => self.pose.expressions.set_preset(preset, value),
                None => match self.custom.slot_or_insert(name) {
                    Some(slot) => self.pose.expressions.set_custom(slot, value),
                    None => self.dropped_expressions += 1,
                },
            },
            VmcEvent::Apply if self.has_bones => return self.take_frame(),
            VmcEvent::Available { .. } | VmcEvent::Apply | VmcEvent::Device { .. } => {}
        }
        finished
    }

    /// The frame being assembled, if it has any bone: call when the stream ends.
    pub fn finish(&mut self) -> Option<(f32, HumanoidPose)> {
        if self.has_bones {
            self.take_frame()
        } else {
            None
        }
    }

    /// Names of the custom expressions seen, by slot.
    #[must_use]
    pub fn custom_names(&self) -> &CustomNames {
        &self.custom
    }

    /// Hips in the sender's world: the root's transform applied to the hips' local.
    fn compose_hips(&mut self) {
        if let Some((position, rotation)) = self.hips_local {
            let (root_position, root_rotation) = self.root;
            self.pose.hips_position = root_position + root_rotation * position;
            self.pose
                .set_rotation(HumanBone::Hips, (root_rotation * rotation).normalize());
        }
    }

    /// Hands out the assembled frame; the next frame starts from it (senders may
    /// send only what changed).
    fn take_frame(&mut self) -> Option<(f32, HumanoidPose)> {
        let time = match self.sender_time {
            Some(t) => {
                let arrived = f64::from(self.arrival.unwrap_or(0.0));
                self.clock.time(f64::from(t), arrived) as f32
            }
            None => self.arrival.unwrap_or(0.0),
        };
        self.arrival = None;
        self.has_bones = false;
        self.set = 0;
        let (rest, hips) = (&self.rest, self.pose.hips_position.y);
        self.pose.rest_hips_height = *self.rest_hips_height.get_or_insert_with(|| match rest {
            Some(rest) => rest.hips_height,
            None => standing_hips_height(hips),
        });
        Some((time, self.pose))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bone(bone: HumanBone, position: Vec3, rotation: Quat) -> VmcEvent<'static> {
        VmcEvent::Bone {
            bone,
            position,
            rotation,
        }
    }

    #[test]
    fn a_sender_without_markers_is_framed_when_a_bone_repeats() {
        let mut frames = VmcFrames::default();
        let mut got = Vec::new();
        for tick in 0..5 {
            let turn = Quat::from_rotation_y(tick as f32 * 0.1);
            for b in [HumanBone::Hips, HumanBone::Spine, HumanBone::Head] {
                let now = tick as f32 / 60.0;
                got.extend(frames.event(bone(b, Vec3::ZERO, turn), now));
            }
        }
        got.extend(frames.finish());
        assert_eq!(got.len(), 5, "one frame per tick");
        for (tick, (t, pose)) in got.iter().enumerate() {
            let turn = Quat::from_rotation_y(tick as f32 * 0.1);
            assert_eq!(*t, tick as f32 / 60.0);
            assert_eq!(pose.rotation(HumanBone::Head), Some(turn));
            assert_eq!(pose.rotation(HumanBone::Spine), Some(turn));
        }
    }

    #[test]
    fn the_rest_hips_height_is_the_first_frames_hips_height() {
        // VMC sends no rest: a sender whose hips stand at 0.8 m, then crouch.
        let mut frames = VmcFrames::default();
        let hips = |y: f32| bone(HumanBone::Hips, Vec3::new(0.0, y, 0.0), Quat::IDENTITY);
        frames.event(hips(0.8), 0.0);
        frames.event(VmcEvent::Apply, 0.0);
        frames.event(hips(0.5), 0.1);
        let (_, crouched) = frames.finish().unwrap();
        assert_eq!(crouched.hips_position.y, 0.5);
        assert_eq!(crouched.rest_hips_height, 0.8);
        // No hips sent: a typical standing height, never the 0 the hips are at.
        let mut frames = VmcFrames::default();
        frames.event(bone(HumanBone::Head, Vec3::ZERO, Quat::IDENTITY), 0.0);
        assert_eq!(frames.finish().unwrap().1.rest_hips_height, 0.9);
    }

    #[test]
    fn frames_end_when_the_next_begins_and_use_sender_time() {
        let mut frames = VmcFrames::default();
        let turn = Quat::from_rotation_y(0.5);
        assert!(frames.event(VmcEvent::Time(10.0), 0.0).is_none());
        assert!(
            frames
                .event(bone(HumanBone::Spine, Vec3::ZERO, turn), 0.0)
                .is_none()
        );
        let (t, pose) = frames.event(VmcEvent::Time(10.5), 0.6).unwrap();
        assert_eq!(t, 0.0);
        assert_eq!(pose.rotation(HumanBone::Spine), Some(turn));
        frames.event(bone(HumanBone::Head, Vec3::ZERO, turn), 0.6);
        let (t, pose) = frames.finish().unwrap();
        assert_eq!(t, 0.5);
        // What a frame does not resend holds.
        assert_eq!(pose.rotation(HumanBone::Spine), Some(turn));
        assert!(frames.finish().is_none());
    }

    #[test]
    fn a_sender_rest_turns_model_locals_into_normalized_rotations() {
        use crate::retarget::{FromNormalized, TargetRig};
        let rig = crate::formats::skeleton_json::embedded_rig(
            "lab19",
            crate::skeleton::builtin::LAB19_JSON,
        );
        let model = MappedSkeleton::new(rig.skeleton, &rig.bone_map.unwrap()).unwrap();
        let rest = Arc::new(SenderRest::from_mapped(&model));
        let target = TargetRig::new(&model);
        let want = crate::takes::demo::pose_at(0.7, 0.95);
        let mut locals = vec![Quat::IDENTITY; target.joint_count()];
        let mut hips = Vec3::ZERO;
        FromNormalized {
            target: &target,
            pose: &want,
            local_rotations: &mut locals,
            hips_translation: &mut hips,
        }
        .run()
        .unwrap();
        // The sender sends its model's local rotations, bone by bone.
        let mut frames = VmcFrames::with_rest(rest);
        frames.event(VmcEvent::Time(0.0), 0.0);
        for (bone, _) in want.bones() {
            if bone == HumanBone::Hips {
                continue;
            }
            let joint = model.map.joint(bone).unwrap();
            frames.event(
                VmcEvent::Bone {
                    bone,
                    position: Vec3::ZERO,
                    rotation: locals[joint],
                },
                0.0,
            );
        }
        let (_, got) = frames.finish().unwrap();
        for (bone, q) in want.bones().filter(|(b, _)| *b != HumanBone::Hips) {
            let g = got.rotation(bone).unwrap();
            let same = g.abs_diff_eq(q, 1e-5) || g.abs_diff_eq(-q, 1e-5);
            assert!(same, "{bone}: {g} vs {q}");
        }
        // The model's hips height, not the first frame's (no hips were sent).
        assert_eq!(got.rest_hips_height, model.rest_hips_height());
    }

    #[test]
    fn apply_ends_a_frame_with_bones() {
        let mut frames = VmcFrames::default();
        assert!(frames.event(VmcEvent::Apply, 0.0).is_none());
        frames.event(VmcEvent::Time(1.0), 0.0);
        frames.event(bone(HumanBone::Head, Vec3::ZERO, Quat::IDENTITY), 0.0);
        let (t, pose) = frames.event(VmcEvent::Apply, 0.0).unwrap();
        assert_eq!(t, 0.0);
        assert!(pose.has(HumanBone::Head));
        // The next frame's start does not hand the same frame out again.
        assert!(frames.event(VmcEvent::Time(2.0), 0.1).is_none());
        assert!(frames.finish().is_none());
    }

    #[test]
    fn hips_compose_with_the_root_and_names_become_expressions() {
        let mut frames = VmcFrames::default();
        let root = Quat::from_rotation_y(std::f32::consts::FRAC_PI_2);
        frames.event(
            VmcEvent::Root {
                position: Vec3::new(1.0, 0.0, 0.0),
                rotation: root,
            },
            0.0,
        );
        frames.event(
            bone(HumanBone::Hips, Vec3::new(0.0, 0.9, 0.5), Quat::IDENTITY),
            0.0,
        );
        frames.event(
            VmcEvent::Blend {
                name: "Joy",
                value: 0.5,
            },
            0.0,
        );
        frames.event(
            VmcEvent::Blend {
                name: "Smirk",
                value: 0.25,
            },
            0.0,
        );
        let (_, pose) = frames.finish().unwrap();
        assert!(
            pose.hips_position
                .abs_diff_eq(Vec3::new(1.5, 0.9, 0.0), 1e-6)
        );
        assert!(
            pose.rotation(HumanBone::Hips)
                .unwrap()
                .abs_diff_eq(root, 1e-6)
        );
        assert_eq!(
            pose.expressions.preset(crate::humanoid::Preset::Happy),
            Some(0.5)
        );
        let slot = frames.custom_names().slot("Smirk").unwrap();
        assert_eq!(pose.expressions.custom(slot), Some(0.25));
    }
}
