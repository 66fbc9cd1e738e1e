//! The body being assembled from one hips candidate (`Body`): each bone found with
//! its evidence, the notes on the whole rig, the first part that could not be found,
//! and the score that picks the best candidate.
//!
//! `Body::put` turns a stage's structural confidence into the bone's confidence:
//! a name that says the bone raises it, one that says another lowers it, and a name
//! on the other side says the names are mirrored. `into_recognition` checks the
//! finished map with `BoneMap::resolve`.

use std::collections::BTreeMap;

use crate::humanoid::{HumanBone, Side};
use crate::skeleton::{BoneMap, NamedBoneMap, TPoseSource};

use super::names::{agreement, kind};
use super::rest_joints::RestJoints;
use super::{BoneEvidence, NotHumanoid, Recognition, RecognizedMap};

/// One recognized bone.
pub(super) struct Found {
    pub(super) joint: usize,
    evidence: BoneEvidence,
}

/// A body assembled from one hips candidate.
#[derive(Default)]
pub(super) struct Body {
    pub(super) bones: BTreeMap<HumanBone, Found>,
    pub(super) notes: Vec<String>,
    /// The first required part that could not be found.
    failure: Option<String>,
    /// How many parts could not be found.
    failures: usize,
    /// Why the legs whose feet, and the arms whose hands, hang outside them failed
    /// (`fail_for_limb_outside`).
    limbs_outside: Vec<String>,
    /// Why the other parts could not be found.
    not_limbs: Vec<String>,
    /// Feet (and their toes) found hanging outside the legs (`Leg::detached`), hands
    /// (and their fingers) outside the arms (`Arm::detached`): mapped only in
    /// `NotHumanoid::limbs_outside`.
    outside: Vec<HumanBone>,
    /// The failure holds in any pose (`NotHumanoid::any_pose`).
    any_pose: bool,
    /// The names' preference summed over the chosen joints (deforming chains win).
    preference: f32,
    /// The sides were told across the thighs alone (`RecognizedMap::one_foot_ahead`).
    one_foot_ahead: bool,
    /// The rest pose shows no front (`RecognizedMap::front_unseen`).
    pub(super) front_unseen: bool,
}

impl Body {
    /// Records `bone` at `joint` with the structural confidence `base` and reasons;
    /// the name's agreement and side are added here.
    pub(super) fn put(
        &mut self,
        rig: &RestJoints,
        bone: HumanBone,
        joint: usize,
        base: f32,
        reasons: Vec<String>,
    ) {
        let name = &rig.names[joint];
        let mut confidence = base;
        let mut reasons = reasons;
        let joint_name = rig.name(joint);
        match name.role.map(|r| agreement(r, bone)) {
            Some(2) => {
                confidence += 0.12;
                reasons.push(format!("name `{joint_name}` says {}", kind(bone)));
            }
            Some(1) => {
                confidence += 0.05;
                reasons.push(format!("name `{joint_name}` fits {}", kind(bone)));
            }
            Some(-1) => {
                confidence -= 0.25;
                reasons.push(format!("name `{joint_name}` says otherwise"));
            }
            _ => {}
        }
        let side = bone.side();
        match name.side {
            Some(s) if side != Side::Centre && s == side => confidence += 0.02,
            Some(_) if side != Side::Centre => {
                confidence -= 0.05;
                reasons.push(format!(
                    "name `{joint_name}` has the other side: mirrored names"
                ));
            }
            _ => {}
        }
        self.preference += name.preference;
        self.bones.insert(
            bone,
            Found {
                joint,
                evidence: BoneEvidence {
                    confidence: confidence.clamp(0.05, 0.99),
                    reasons,
                },
            },
        );
    }

    /// Marks the sides told across the thighs alone (a stance with one foot ahead),
    /// lowering every sided bone's confidence by `by`, with the reason.
    pub(super) fn sides_from_thighs(&mut self, by: f32, reason: &str) {
        self.one_foot_ahead = true;
        self.doubt_sides(by, reason);
    }

    /// Lowers every sided bone's confidence by `by`, with the reason.
    pub(super) fn doubt_sides(&mut self, by: f32, reason: &str) {
        for (bone, found) in &mut self.bones {
            if bone.side() != Side::Centre {
                let e = &mut found.evidence;
                e.confidence = (e.confidence - by).clamp(0.05, 0.99);
                e.reasons.push(reason.to_owned());
            }
        }
    }

    /// Records why a required part is missing; the first reason stays.
    pub(super) fn fail(&mut self, reason: String) {
        self.not_limbs.push(reason.clone());
        self.count_failure(reason);
    }

    /// Records a leg's failure for its foot hanging outside it (`Leg::detached`), or
    /// an arm's for its hand (`Arm::detached`), which a map driving that foot from the
    /// leg, or that hand from the arm, overcomes.
    pub(super) fn fail_for_limb_outside(&mut self, reason: String) {
        self.limbs_outside.push(reason.clone());
        self.count_failure(reason);
    }

    fn count_failure(&mut self, reason: String) {
        self.failures += 1;
        if self.failure.is_none() {
            self.failure = Some(reason);
        }
    }

    /// Marks a bone already put as a foot (or its toes) hanging outside its leg, or a
    /// hand (or its fingers) outside its arm, whose limb has failed for it.
    pub(super) fn limb_outside(&mut self, bone: HumanBone) {
        self.outside.push(bone);
    }

    /// Records a failure that no pose of the rig changes (`NotHumanoid::any_pose`).
    pub(super) fn fail_in_any_pose(&mut self, reason: String) {
        if self.failure.is_none() {
            self.any_pose = true;
        }
        self.fail(reason);
    }

    /// Better bodies compare greater: complete, then more required bones, then more
    /// bones, then deforming chains over controls.
    /// Feet outside the legs do not count: a body whose legs hold their feet wins.
    pub(super) fn score(&self) -> (bool, usize, usize, i64) {
        let counted = || self.bones.keys().filter(|b| !self.outside.contains(b));
        (
            self.failure.is_none(),
            counted().filter(|b| b.is_required()).count(),
            counted().count(),
            (self.preference * 100.0).round() as i64,
        )
    }

    /// The recognition this body gives: the humanoid, or why it is not one.
    pub(super) fn into_recognition(self, rig: &RestJoints) -> Recognition {
        let named = |outside: bool| NamedBoneMap {
            bones: self
                .bones
                .iter()
                .filter(|(b, _)| outside || !self.outside.contains(b))
                .map(|(&b, f)| (b, rig.name(f.joint).to_owned()))
                .collect(),
            t_pose: TPoseSource::Measured,
        };
        let map = named(false);
        if let Some(reason) = self.failure {
            // Every failure a leg whose foot, or an arm whose hand, hangs outside it:
            // no strict VRM map, but one driving those feet from the legs and hands
            // from the arms, when it fits the rig.
            let whole = named(true);
            let held =
                |bones: [HumanBone; 2]| self.outside.iter().filter(|b| bones.contains(b)).count();
            let feet = held([HumanBone::LeftFoot, HumanBone::RightFoot]);
            let hands = held([HumanBone::LeftHand, HumanBone::RightHand]);
            let fits = BoneMap::resolve(&whole, rig.skeleton);
            let limbs = feet + hands;
            let limbs_outside = (limbs > 0 && self.failures == limbs && fits.is_ok()).then(|| {
                Box::new(Self::recognized(
                    self.bones,
                    self.notes,
                    whole,
                    false,
                    self.front_unseen,
                ))
            });
            // Limbs outside, and something else besides: what keeps the map driving
            // them from the body from fitting too.
            let besides = match (&fits, self.not_limbs.as_slice()) {
                _ if limbs_outside.is_some() => None,
                (_, [_, ..]) => Some(self.not_limbs.join("; ")),
                (Err(e), []) => Some(format!("its bones do not fit the rig: {e}")),
                (Ok(_), []) => None,
            };
            let driven = match (feet, hands) {
                (_, 0) => "those feet from the legs",
                (0, _) => "those hands from the arms",
                _ => "those feet from the legs and hands from the arms",
            };
            // Only when a limb outside is the first failure: a body failing before
            // (four legs, no arms) is told by that.
            let reason = match besides {
                Some(more) if self.limbs_outside.first() == Some(&reason) => {
                    format!("{reason}; nor is there a map driving {driven}: {more}")
                }
                _ => reason,
            };
            return Recognition::NotHumanoid(NotHumanoid {
                reason,
                partial: map,
                limbs_outside,
                any_pose: self.any_pose,
            });
        }
        if let Err(e) = BoneMap::resolve(&map, rig.skeleton) {
            return Recognition::NotHumanoid(NotHumanoid {
                reason: format!("the recognized map does not fit the rig: {e}"),
                partial: map,
                limbs_outside: None,
                any_pose: false,
            });
        }
        Recognition::Humanoid(Self::recognized(
            self.bones,
            self.notes,
            map,
            self.one_foot_ahead,
            self.front_unseen,
        ))
    }

    /// The recognized map `map` with the evidence of `bones` and the `notes`.
    fn recognized(
        bones: BTreeMap<HumanBone, Found>,
        notes: Vec<String>,
        map: NamedBoneMap,
        one_foot_ahead: bool,
        front_unseen: bool,
    ) -> RecognizedMap {
        RecognizedMap {
            map,
            evidence: bones.into_iter().map(|(b, f)| (b, f.evidence)).collect(),
            notes,
            one_foot_ahead,
            front_unseen,
        }
    }
}
