//! Assembly: runs the stages on one hips candidate and records every bone found, with
//! its structural confidence and reasons, in a `Body`.
//!
//! Stage order: legs and the midline they give, the arm branch, arms, neck and face,
//! then which side faces front; only then are bones recorded, since left and right
//! follow the facing. A required part that is missing is recorded as the body's
//! failure; what was found up to there stays as a partial map.

use glam::Vec3;

use crate::humanoid::HumanBone as B;
use crate::humanoid::{HumanBone, Side};

use super::arms::{Arm, ArmBranch, ArmRefusal, find_arm_branch, mirror_hands, solve_arm};
use super::body::Body;
use super::face::{Face, solve_face};
use super::facing::{Facing, Midline, facing};
use super::fingers::{left_digit, solve_fingers};
use super::legs::{Leg, rough_knee, solve_leg};
use super::names::Role;
use super::notes;
use super::pelvis::{Pelvis, follow_down, many_legs, pelvis_above};
use super::rest_joints::{RestJoints, horizontal};
use super::spine::{Neck, solve_neck, split_spine};

/// Builds the whole body from one hips candidate, stage by stage.
pub(super) fn assemble(rig: &RestJoints, pelvis: &Pelvis) -> Body {
    let mut body = Body::default();
    let span = pelvis.span;
    if let Some((from, legs)) = many_legs(rig, pelvis) {
        let kind = if legs == 4 {
            "a body on four legs (a four-legged animal, a walking robot)"
        } else {
            "a many-legged body (a spider, an insect, a radial robot)"
        };
        body.fail_in_any_pose(format!(
            "`{}` has {legs} legs going down to the same level, not two: {kind}, not a \
             humanoid ({} joints)",
            rig.name(from),
            rig.len()
        ));
        return body;
    }

    // Legs, and the midline they give.
    let (legs, mut midline, legs_crossed) = match legs_and_midline(rig, pelvis) {
        Ok(found) => found,
        Err(e) => {
            body.fail(e);
            return body;
        }
    };
    if legs_crossed {
        body.notes.push(notes::legs_crossed(rig, &legs));
    }

    // Arms and head, across the legs' axis, else across the thighs' (`stance_midline`).
    let mut stance = false;
    let branch = match find_arm_branch(rig, pelvis, &midline) {
        Ok(b) => Some(b),
        Err(e) => {
            let across_thighs = stance_midline(rig, &legs, &midline)
                .and_then(|m| find_arm_branch(rig, pelvis, &m).ok().map(|b| (m, b)));
            match across_thighs {
                Some((m, b)) => {
                    body.notes.push(notes::stance(rig, &legs, &midline, &m));
                    midline = m;
                    stance = true;
                    Some(b)
                }
                None => {
                    body.fail(e);
                    None
                }
            }
        }
    };
    let arms = branch.as_ref().map(|b| {
        // The chest's middle: halfway between where the two arms start (the
        // spine may lean off the pelvis' midline in a posed rest).
        let chest = (rig.pos[b.arms[0]] + rig.pos[b.arms[1]]) / 2.0;
        let mut arms = b
            .arms
            .map(|root| solve_arm(rig, root, b.branch, &midline, chest, pelvis.hips));
        mirror_hands(rig, &mut arms, &midline, chest);
        arms
    });
    let neck = branch
        .as_ref()
        .and_then(|b| b.head.map(|h| solve_neck(rig, b.neck_from, h)));
    let face = neck.as_ref().map(|n| solve_face(rig, n.head, &midline));
    let eyes = face.as_ref().and_then(|f| f.eyes).map(|(a, b, _)| (a, b));

    // Sides.
    let facing = facing(
        rig,
        &midline,
        &legs,
        eyes,
        neck.as_ref().map(|n| n.head),
        span,
    );
    let front = if facing.a_is_left {
        midline.lateral.cross(Vec3::Y)
    } else {
        -midline.lateral.cross(Vec3::Y)
    };
    body.notes.push(notes::faces(front, &facing.how));
    body.front_unseen = facing.unseen;
    let biped_pelvis = pelvis_above(rig, pelvis);
    let hips = biped_pelvis.unwrap_or(pelvis.hips);
    if let Some(note) = notes::ignored_above(rig, hips) {
        body.notes.push(note);
    }

    put_hips(&mut body, rig, pelvis, hips, biped_pelvis.is_some());
    put_legs(&mut body, rig, &legs, &facing);
    let Some(branch) = branch else {
        return body;
    };
    let arms_from_neck = put_spine(
        &mut body,
        rig,
        pelvis,
        &branch,
        biped_pelvis.is_some(),
        hips,
    );
    put_head(
        &mut body,
        rig,
        branch.branch,
        neck.as_ref(),
        face,
        arms_from_neck,
        facing.a_is_left,
    );
    let Some(arms) = arms else {
        return body;
    };
    put_arms(&mut body, rig, &arms, &facing, front);
    if stance {
        // Less sure than sides told across parallel legs: a frame of a take standing
        // so ranks below every frame recognized across its legs.
        body.sides_from_thighs(
            STANCE_DOUBT,
            "sides told across the thighs alone (one foot ahead)",
        );
    } else if legs_crossed {
        // As unsure, though the body stands on both feet: a frame of a take with
        // its legs crossed ranks below every frame standing on parallel legs.
        body.doubt_sides(
            STANCE_DOUBT,
            "sides told across the thighs alone (the legs cross below them)",
        );
    }
    if let Some(note) = notes::mirrored_names(rig, &body) {
        body.notes.push(note);
    }
    body
}

/// Both legs along their lines down from the pelvis, and the midline they give: first
/// from the knees found roughly, then from the thighs, knees and ankles; with whether
/// the legs cross below the thighs.
///
/// Heuristic: legs crossed at the knees or feet (a curtsy, a dance step, a bye-bye
/// with the ankles crossed) put leg A's knee or foot on leg B's side, so that pair
/// points against the thighs' pair. Crossed far enough, the pairs together turn the
/// lateral axis round and the legs read on the wrong sides. The thighs hang from the
/// pelvis and never cross: when all pairs together point against the thighs', a pair
/// pointing against theirs gives no axis, and the sides are told across the thighs.
/// Feet together, a little crossed, turn the axis less and are read as before.
fn legs_and_midline(
    rig: &RestJoints,
    pelvis: &Pelvis,
) -> Result<([Leg; 2], Midline, bool), String> {
    let span = pelvis.span;
    let lines = pelvis.legs.map(|root| follow_down(rig, root, span));
    let knees = [
        rough_knee(rig, &lines[0], pelvis),
        rough_knee(rig, &lines[1], pelvis),
    ];
    // The knees give the lateral axis; the midline goes through the pelvis, since
    // the knees of a posed rest may splay unevenly.
    let Some(rough) = (match knees {
        [Some(a), Some(b)] => Midline::from_pairs(&[(rig.pos[a], rig.pos[b])]).map(|m| Midline {
            mid: rig.pos[pelvis.hips],
            ..m
        }),
        _ => None,
    }) else {
        return Err(format!(
            "legs `{}` and `{}` are not side by side",
            rig.name(pelvis.legs[0]),
            rig.name(pelvis.legs[1])
        ));
    };
    let rough_knee_lateral = rough.hip_half;
    let legs = lines.map(|line| solve_leg(rig, line, &rough, pelvis));
    let pair = |a: Option<usize>, b: Option<usize>| Some((rig.pos[a?], rig.pos[b?]));
    let mut pairs: Vec<(Vec3, Vec3)> = [
        pair(legs[0].upper, legs[1].upper),
        pair(legs[0].lower, legs[1].lower),
        pair(legs[0].foot, legs[1].foot),
    ]
    .into_iter()
    .flatten()
    .collect();
    let thighs = pair(legs[0].upper, legs[1].upper).map(|(a, b)| horizontal(a - b));
    let against = |thighs: Vec3, d: Vec3| horizontal(d).dot(thighs) < 0.0;
    let all: Vec3 = pairs.iter().map(|(a, b)| *a - *b).sum();
    let crossed = thighs.is_some_and(|t| against(t, all));
    if let Some(t) = thighs.filter(|_| crossed) {
        pairs.retain(|(a, b)| !against(t, *a - *b));
    }
    let mut midline = Midline::from_pairs(&pairs).unwrap_or(rough);
    midline.rough_knee_lateral = rough_knee_lateral;
    if midline.hip_half < 0.02 * span {
        midline.hip_half = rough_knee_lateral;
    }
    Ok((legs, midline, crossed))
}

/// Heuristic: the lateral axis of a body standing with one foot ahead of the other
/// (a fighting stance, a step, a curtsy with the legs crossed): the knees and feet
/// lie one behind the other, and the axis they give with the thighs turns toward the
/// front, so no arms reach out across it. The pelvis carries the thighs' line in any
/// stance: when the arms are not found across the legs' axis and the thighs' line is
/// more than 30° off it, the arms are looked for across the thighs' line alone,
/// through their middle. `None` when the thighs are not both found, coincide, or lie
/// along the legs' axis.
fn stance_midline(rig: &RestJoints, legs: &[Leg; 2], legs_axis: &Midline) -> Option<Midline> {
    let (Some(a), Some(b)) = (legs[0].upper, legs[1].upper) else {
        return None;
    };
    let thighs = Midline::from_pairs(&[(rig.pos[a], rig.pos[b])])?;
    (thighs.lateral.dot(legs_axis.lateral) < STANCE_COS).then_some(Midline {
        rough_knee_lateral: legs_axis.rough_knee_lateral,
        ..thighs
    })
}

/// `cos 30°`: the thighs' line is that far off the legs' axis in a stance with one
/// foot ahead; parallel legs, in any rest or a standing frame, agree within a few
/// degrees (`stance_midline`).
const STANCE_COS: f32 = 0.866;

/// How much less sure the sided bones are when told across the thighs alone.
const STANCE_DOUBT: f32 = 0.2;

/// `bone` (a left one) on `side`.
fn on_side(side: Side, bone: HumanBone) -> HumanBone {
    if side == Side::Left {
        bone
    } else {
        bone.mirrored()
    }
}

/// The reason a limb bone is on `side`: `left of the midline (from the toes)`.
fn where_on(side: Side, facing: &Facing) -> String {
    let side_word = if side == Side::Left { "left" } else { "right" };
    format!("{side_word} of the midline ({})", facing.how)
}

/// Records the hips: where legs and body meet, or the Biped pelvis right above.
fn put_hips(body: &mut Body, rig: &RestJoints, pelvis: &Pelvis, hips: usize, biped: bool) {
    let mut why = vec![format!(
        "legs `{}` and `{}` and the body `{}` meet here",
        rig.name(pelvis.legs[0]),
        rig.name(pelvis.legs[1]),
        rig.name(pelvis.spine_root)
    )];
    if let Some(b) = pelvis.leg_branch {
        why.push(format!("the legs hang from `{}` just below", rig.name(b)));
    }
    if biped {
        why = vec![format!(
            "named so, right above `{}` where legs and body meet (as in 3ds Max Biped)",
            rig.name(pelvis.hips)
        )];
    }
    body.put(rig, B::Hips, hips, 0.8, why);
}

/// Records both legs' bones on the sides `facing` gives, and any leg's problem as
/// the body's failure.
fn put_legs(body: &mut Body, rig: &RestJoints, legs: &[Leg; 2], facing: &Facing) {
    for (i, leg) in legs.iter().enumerate() {
        let side = facing.side(i == 0);
        match &leg.problem {
            Some(p) if leg.detached => body.fail_for_limb_outside(p.clone()),
            Some(p) => body.fail(p.clone()),
            None => {}
        }

        let foot_why = if leg.detached {
            "hangs outside the leg under its end (a foot driven by IK), driven from the leg"
        } else {
            "first joint below half the knee's height"
        };
        if let (true, Some(f)) = (leg.detached, leg.foot) {
            body.limb_outside(on_side(side, B::LeftFoot));
            if leg.toes.is_some() {
                body.limb_outside(on_side(side, B::LeftToes));
            }
            body.notes.push(format!(
                "the foot `{}` hangs from `{}`, outside the leg (a foot driven by IK): it is \
                 mapped and driven from the leg, at the end of `{}`",
                rig.name(f),
                rig.skeleton.parent(f).map_or("", |p| rig.name(p)),
                leg.lower.map_or("", |k| rig.name(k))
            ));
        }
        let parts = [
            (
                leg.upper,
                B::LeftUpperLeg,
                0.85,
                "first bone going down from the hips, out to the side",
            ),
            (
                leg.lower,
                B::LeftLowerLeg,
                0.85,
                "the joint halfway down the leg",
            ),
            (leg.foot, B::LeftFoot, 0.85, foot_why),
            (leg.toes, B::LeftToes, 0.75, "the joint after the ankle"),
        ];
        for (joint, b, conf, why) in parts {
            if let Some(j) = joint {
                body.put(
                    rig,
                    on_side(side, b),
                    j,
                    conf,
                    vec![why.to_owned(), where_on(side, facing)],
                );
            }
        }
    }
}

/// Records spine, chest and upper chest from the hips' body child up to the arm
/// branch (from the hips' own joint for Biped); whether the arms hang from a joint
/// named neck, which is then the neck and not part of the spine.
fn put_spine(
    body: &mut Body,
    rig: &RestJoints,
    pelvis: &Pelvis,
    branch: &ArmBranch,
    biped: bool,
    hips: usize,
) -> bool {
    // A head leaving the spine below the arms ends the spine there: the joints up to
    // the arms stay unmapped, so neck and shoulders both hang below the top spine bone.
    let top = branch.neck_from;
    let mut chain = rig.path(pelvis.spine_root, top);
    if biped {
        chain.insert(0, pelvis.hips);
    }
    if top != branch.branch {
        body.notes.push(format!(
            "the neck `{}` leaves the spine at `{}`, below `{}` where the arms branch: the \
             spine ends at `{}`",
            rig.name(branch.head.unwrap_or(top)),
            rig.name(top),
            rig.name(branch.branch),
            rig.name(top)
        ));
    }
    let arms_from_neck = top == branch.branch
        && rig.names[branch.branch].role == Some(Role::Neck)
        && chain.len() >= 2;
    let torso = if arms_from_neck {
        &chain[..chain.len() - 1]
    } else {
        &chain[..]
    };
    for (bone, joint, conf, why) in split_spine(rig, torso) {
        body.put(rig, bone, joint, conf, vec![why]);
    }
    if !body.bones.contains_key(&B::Spine) {
        body.fail(format!(
            "no spine joint between the hips `{}` and the arms at `{}`",
            rig.name(hips),
            rig.name(branch.branch)
        ));
    }
    arms_from_neck
}

/// Records neck and head above the arm `branch` (the branch itself is the neck when
/// the arms hang from a neck), then eyes (left by `a_is_left`) and jaw.
fn put_head(
    body: &mut Body,
    rig: &RestJoints,
    branch: usize,
    neck: Option<&Neck>,
    face: Option<Face>,
    arms_from_neck: bool,
    a_is_left: bool,
) {
    match neck {
        None => body.fail(format!(
            "no head: nothing goes up from `{}`, where the arms branch",
            rig.name(branch)
        )),
        Some(n) => {
            let mut head_why =
                vec!["top of the chain above the arms, where it forks or ends".to_owned()];
            let mut head_conf = 0.8;
            if let Some(nub) = n.nub {
                head_why.push(format!("`{}` above it is an end nub", rig.name(nub)));
                head_conf = 0.7;
            }
            if arms_from_neck {
                body.put(
                    rig,
                    B::Neck,
                    branch,
                    0.7,
                    vec!["named neck, and the arms hang from it".to_owned()],
                );
            } else if let Some(nk) = n.neck {
                body.put(
                    rig,
                    B::Neck,
                    nk,
                    0.75,
                    vec!["first joint of the chain above the arms".to_owned()],
                );
            }
            body.put(rig, B::Head, n.head, head_conf, head_why);
        }
    }
    if let Some(Face { eyes, jaw }) = face {
        if let Some((a, b, by_name)) = eyes {
            let (left, right) = if a_is_left { (a, b) } else { (b, a) };
            let (conf, why) = if by_name {
                (0.75, "named eye, below the head")
            } else {
                (0.55, "a mirrored pair of leaves on the head")
            };
            body.put(rig, B::LeftEye, left, conf, vec![why.to_owned()]);
            body.put(rig, B::RightEye, right, conf, vec![why.to_owned()]);
        }
        if let Some(j) = jaw {
            body.put(
                rig,
                B::Jaw,
                j,
                0.75,
                vec!["named jaw, below the head".to_owned()],
            );
        }
    }
}

/// Records both arms, hands and fingers on the sides `facing` gives; an arm that
/// could not be solved is the body's failure.
fn put_arms(
    body: &mut Body,
    rig: &RestJoints,
    arms: &[Result<Arm, ArmRefusal>; 2],
    facing: &Facing,
    front: Vec3,
) {
    for (i, arm) in arms.iter().enumerate() {
        let side = facing.side(i == 0);
        let bone = |b: HumanBone| on_side(side, b);
        let arm = match arm {
            Ok(a) => a,
            Err(e) if e.any_pose => {
                body.fail_in_any_pose(e.reason.clone());
                continue;
            }
            Err(e) => {
                body.fail(e.reason.clone());
                continue;
            }
        };
        let fit = (0.9 - 0.15 * arm.cost).clamp(0.55, 0.88);
        let where_ = where_on(side, facing);
        if let Some(s) = arm.shoulder {
            body.put(
                rig,
                bone(B::LeftShoulder),
                s,
                0.7,
                vec![
                    "between the upper chest and the upper arm".to_owned(),
                    where_.clone(),
                ],
            );
        }
        body.put(
            rig,
            bone(B::LeftUpperArm),
            arm.upper,
            fit,
            vec![
                "upper arm in proportion to the forearm, starting out to the side".to_owned(),
                where_.clone(),
            ],
        );
        body.put(
            rig,
            bone(B::LeftLowerArm),
            arm.lower,
            fit,
            vec![
                "the elbow: forearm in proportion to the upper arm".to_owned(),
                where_.clone(),
            ],
        );
        let hand_why = match (arm.detached, arm.hand_fork) {
            (true, _) => {
                "hangs outside the arm past its end (a hand driven by IK), driven from the arm"
            }
            (false, true) => "the fingers fork here",
            (false, false) => "end of the forearm",
        };
        body.put(
            rig,
            bone(B::LeftHand),
            arm.hand,
            fit,
            vec![hand_why.to_owned(), where_.clone()],
        );
        let held_by = rig.skeleton.parent(arm.hand).map_or("", |p| rig.name(p));
        if arm.detached {
            body.fail_for_limb_outside(format!(
                "arm `{}`: no hand joint past the forearm `{}`; the hand `{}` hangs from \
                 `{held_by}`, outside the arm (a hand driven by IK), so no VRM map has the \
                 required hands",
                rig.name(arm.upper),
                rig.name(arm.lower),
                rig.name(arm.hand),
            ));
            body.limb_outside(bone(B::LeftHand));
            body.notes.push(format!(
                "the hand `{}` hangs from `{held_by}`, outside the arm (a hand driven by IK): \
                 it is mapped and driven from the arm, at the end of `{}`",
                rig.name(arm.hand),
                rig.name(arm.lower)
            ));
        }
        for digit in solve_fingers(rig, arm.hand, front) {
            let (conf, why) = match (digit.by_name, digit.finger) {
                (true, _) => (0.8, "digit of the hand, named so"),
                (false, 0) => (0.7, "the digit starting nearest the wrist: the thumb"),
                (false, _) => (0.65, "digits ordered from the thumb's side"),
            };
            for (k, &j) in digit.joints.iter().enumerate() {
                if let Some(b) = left_digit(digit.finger, digit.first + k) {
                    body.put(rig, bone(b), j, conf, vec![why.to_owned()]);
                    if arm.detached {
                        body.limb_outside(bone(b));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{recognized_with_limbs, skeleton};
    use super::super::{Recognition, recognize};
    use crate::humanoid::HumanBone as B;

    #[test]
    fn a_body_standing_with_one_foot_ahead_is_told_across_its_thighs() {
        // A frame of a capture caught mid-curtsy, facing +Z, leg A's foot crossed in
        // front of leg B's, so knees and feet lie one behind the other; the arms hang
        // out at the sides. The joints' names say nothing of the sides.
        let s = skeleton(&[
            ("Hips", None, [0.0, 0.939, -0.03]),
            ("Spine", Some("Hips"), [-0.017, 1.095, -0.013]),
            ("Chest", Some("Spine"), [-0.022, 1.184, -0.005]),
            ("Neck", Some("Chest"), [-0.02, 1.348, 0.002]),
            ("Head", Some("Neck"), [-0.014, 1.412, -0.007]),
            ("CollarA", Some("Chest"), [0.028, 1.313, 0.013]),
            ("ArmA", Some("CollarA"), [0.079, 1.308, 0.028]),
            ("ElbowA", Some("ArmA"), [0.257, 1.143, 0.032]),
            ("WristA", Some("ElbowA"), [0.412, 0.993, 0.09]),
            ("CollarB", Some("Chest"), [-0.068, 1.315, -0.016]),
            ("ArmB", Some("CollarB"), [-0.121, 1.313, -0.022]),
            ("ElbowB", Some("ArmB"), [-0.244, 1.104, -0.038]),
            ("WristB", Some("ElbowB"), [-0.359, 0.914, -0.017]),
            ("ThighA", Some("Hips"), [0.06, 0.921, -0.003]),
            ("ShinA", Some("ThighA"), [0.014, 0.542, 0.086]),
            ("AnkleA", Some("ShinA"), [-0.013, 0.134, 0.099]),
            ("ToeA", Some("AnkleA"), [-0.018, 0.059, 0.189]),
            ("ThighB", Some("Hips"), [-0.055, 0.915, -0.062]),
            ("ShinB", Some("ThighB"), [-0.035, 0.525, -0.075]),
            ("AnkleB", Some("ShinB"), [0.067, 0.134, -0.143]),
            ("ToeB", Some("AnkleB"), [-0.022, 0.059, -0.126]),
        ]);
        let r = match recognize(&s) {
            Recognition::Humanoid(r) => r,
            Recognition::NotHumanoid(n) => panic!("not a humanoid: {}", n.reason),
        };
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::LeftUpperLeg), Some("ThighA"));
        assert_eq!(at(B::LeftFoot), Some("AnkleA"));
        assert_eq!(at(B::RightFoot), Some("AnkleB"));
        assert_eq!(at(B::LeftUpperArm), Some("ArmA"));
        assert_eq!(at(B::LeftHand), Some("WristA"));
        assert_eq!(at(B::RightHand), Some("WristB"));
        assert!(
            r.notes.iter().any(|n| n.contains("one foot ahead")),
            "{:?}",
            r.notes
        );
        assert!(r.one_foot_ahead);
        // The sided bones say they are less sure; the centre ones, no side decides.
        let doubted = |bone| {
            r.evidence[&bone]
                .reasons
                .iter()
                .any(|why| why.contains("across the thighs alone"))
        };
        assert!(doubted(B::LeftUpperArm) && doubted(B::RightFoot));
        assert!(!doubted(B::Spine));
    }

    #[test]
    fn legs_crossed_below_the_thighs_keep_their_sides() {
        // A frame of a take standing with the legs crossed at the knees, facing +Z:
        // leg A hangs from the hips at +X, its knee and foot across the midline at
        // -X, and leg B's the other way round. The names say nothing of the sides.
        let body = [
            ("Hips", "", [0.0, 0.95, 0.0]),
            ("Spine", "Hips", [0.0, 1.1, 0.0]),
            ("Chest", "Spine", [0.0, 1.3, 0.0]),
            ("Neck", "Chest", [0.0, 1.48, 0.0]),
            ("Head", "Neck", [0.0, 1.58, 0.0]),
        ];
        let limb = [
            ("Collar", "Chest", [0.03, 1.42, 0.0]),
            ("Arm", "Collar", [0.17, 1.42, 0.0]),
            ("Elbow", "Arm", [0.26, 1.17, 0.0]),
            ("Wrist", "Elbow", [0.3, 0.92, 0.0]),
            ("Thigh", "Hips", [0.09, 0.92, 0.0]),
            ("Shin", "Thigh", [-0.03, 0.52, 0.02]),
            ("Ankle", "Shin", [-0.08, 0.09, 0.0]),
            ("Toe", "Ankle", [-0.08, 0.02, 0.13]),
        ];
        let r = recognized_with_limbs(&body, ["A", "B"], &limb);
        let at = |bone| r.map.bones.get(&bone).map(String::as_str);
        assert_eq!(at(B::LeftUpperLeg), Some("AThigh"));
        assert_eq!(at(B::LeftFoot), Some("AAnkle"));
        assert_eq!(at(B::RightLowerLeg), Some("BShin"));
        assert_eq!(at(B::LeftUpperArm), Some("AArm"));
        assert_eq!(at(B::RightHand), Some("BWrist"));
        assert!(
            r.notes
                .iter()
                .any(|n| n.contains("the legs cross below the thighs")),
            "{:?}",
            r.notes
        );
        // Less sure of the sides, though standing on both feet.
        assert!(!r.one_foot_ahead);
        assert!(
            r.evidence[&B::LeftFoot]
                .reasons
                .iter()
                .any(|why| why.contains("the legs cross below them"))
        );
    }
}
