//! The rig as the recognizer reads it (`RestJoints`): every joint's model-space rest
//! position and bone end, its children, how low, high and deep its subtree goes,
//! and what its name says; with the walks the stages share (subtrees, paths, reach,
//! runs of coincident joints merged).
//!
//! Built once per `recognize` call from a `Skeleton`; read-only afterwards.

use glam::Vec3;

use super::names::NameInfo;
use crate::humanoid::Side;
use crate::skeleton::Skeleton;

/// One rig's joints at rest as the recognizer sees them: rest positions in model
/// space, children, what each subtree reaches, and what each name says. Indexed by
/// joint, like the skeleton's joints.
pub(super) struct RestJoints<'a> {
    pub(super) skeleton: &'a Skeleton,
    /// Model-space rest position of each joint.
    pub(super) pos: Vec<Vec3>,
    /// Model-space end of each joint's bone, when the file gives one.
    pub(super) end: Vec<Option<Vec3>>,
    pub(super) kids: Vec<Vec<usize>>,
    pub(super) names: Vec<NameInfo>,
    /// Lowest and highest y over each joint's subtree, end sites included.
    pub(super) low: Vec<f32>,
    pub(super) high: Vec<f32>,
    /// Highest y over each joint's subtree without the end nubs hanging in it (a
    /// leaf named as a bone's end, and the nubs below such a nub) nor the joints
    /// named as attachments, with what hangs from them: the figure's own height,
    /// whatever length a writer gives the nubs and wherever it puts a hat's slot.
    pub(super) body_high: Vec<f32>,
    /// Lowest y over each joint's subtree without the end nubs hanging in it: where
    /// a leg ends when its toe nub points anywhere (Blender's leaf bones, written
    /// along the parent bone's local Y whatever way the bone itself points).
    pub(super) body_low: Vec<f32>,
    /// Joints on the path from each joint down to its subtree's lowest point.
    pub(super) low_depth: Vec<u32>,
    /// Joints on the longest path down each joint's subtree.
    pub(super) depth: Vec<u32>,
    /// Distance under which two joints are in the same place.
    pub(super) eps: f32,
    /// Where the body faces, horizontal, when something besides the rest pose tells
    /// it (the knees bending in the clips: `recognize_facing`); `facing` takes it
    /// where the rest pose shows no front.
    pub(super) front: Option<Vec3>,
}

impl<'a> RestJoints<'a> {
    pub(super) fn new(skeleton: &'a Skeleton) -> Self {
        let joints = skeleton.joints();
        let n = joints.len();
        let world = skeleton.rest_world();
        let pos: Vec<Vec3> = world.iter().map(|w| Vec3::from(w.translation)).collect();
        let end: Vec<Option<Vec3>> = joints
            .iter()
            .zip(&world)
            .map(|(j, w)| j.end.map(|e| w.transform_point3(e)))
            .collect();
        let mut kids = vec![Vec::new(); n];
        for (i, joint) in joints.iter().enumerate() {
            if let Some(p) = joint.parent {
                kids[p].push(i);
            }
        }
        let own = |i: usize, f: fn(f32, f32) -> f32| end[i].map_or(pos[i].y, |e| f(e.y, pos[i].y));
        let mut low: Vec<f32> = (0..n).map(|i| own(i, f32::min)).collect();
        let mut high: Vec<f32> = (0..n).map(|i| own(i, f32::max)).collect();
        let mut body_high = high.clone();
        let mut body_low = low.clone();
        let mut names: Vec<NameInfo> = joints.iter().map(|j| NameInfo::parse(&j.name)).collect();
        // A nub is named as one and has only nubs below it; it adds nothing to the
        // figure's height (`body_high`).
        let mut nub: Vec<bool> = names.iter().map(|n| n.nub).collect();
        let mut low_depth = vec![1u32; n];
        let mut depth = vec![1u32; n];
        // Children come after their parents: one backward sweep folds subtrees up.
        for i in (0..n).rev() {
            if let Some(p) = joints[i].parent {
                if low[i] < low[p] {
                    low[p] = low[i];
                    low_depth[p] = low_depth[i] + 1;
                }
                high[p] = high[p].max(high[i]);
                depth[p] = depth[p].max(depth[i] + 1);
                nub[p] &= nub[i];
                if !nub[i] {
                    // A point named for what it carries (a `hat_slot` high above a
                    // big head, a weapon socket) is no part of the figure's height.
                    if !names[i].attachment {
                        body_high[p] = body_high[p].max(body_high[i]);
                    }
                    body_low[p] = body_low[p].min(body_low[i]);
                }
            }
        }
        // A chain named as controls that the body hangs from is the rig's own, named
        // for the rig it came from (a Maya FK spine exported as the skeleton:
        // `FK_back3_jnt` carrying both arms, `FK_back4_jnt` below it the head): a
        // control carrying body parts of both sides is a body joint, and so is a
        // control below it that leads to a body part. A control carrying one limb's
        // part (an IK target holding the foot) stays a control.
        let mut carries = vec![[false; 3]; n];
        for i in (0..n).rev() {
            if let Some(p) = joints[i].parent {
                let info = &names[i];
                let part = info.role.is_some() && !info.control && !info.attachment && !info.helper;
                let [below, left, right] = carries[i];
                let own = |side| part && info.side == Some(side);
                carries[p][0] |= below || part;
                carries[p][1] |= left || own(Side::Left);
                carries[p][2] |= right || own(Side::Right);
            }
        }
        let mut body_control = vec![false; n];
        for i in 0..n {
            let [below, left, right] = carries[i];
            let info = &mut names[i];
            let chain = joints[i].parent.is_some_and(|p| body_control[p]);
            if info.control && !info.attachment && below && ((left && right) || chain) {
                body_control[i] = true;
                info.preference = info.preference.max(0.0);
            }
        }
        let floor = low.iter().copied().fold(f32::INFINITY, f32::min);
        let top = high.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let eps = ((top - floor) * 1e-3).max(1e-6);
        // A node wrapping its only child is a helper: `__Clavicle_L` above
        // `Clavicle_L` (MakeHuman's game rig), or, in the child's place, the child's
        // name with words added (`Head_14_scaleCompensation` above `Head_14`: Sketchfab's
        // conversions of Maya rigs, a node the skin does not bind).
        for i in 0..n {
            if let [only] = kids[i].as_slice()
                && !names[i].key.is_empty()
            {
                let (outer, inner) = (&names[i].key, &names[*only].key);
                let same_name = outer == inner;
                let named_around = !inner.is_empty()
                    && outer
                        .strip_prefix(inner.as_str())
                        .is_some_and(|rest| rest.starts_with(' '))
                    && pos[i].distance(pos[*only]) <= eps;
                if same_name || named_around {
                    names[i].helper = true;
                }
            }
        }
        RestJoints {
            skeleton,
            pos,
            end,
            kids,
            names,
            low,
            high,
            body_high,
            body_low,
            low_depth,
            depth,
            eps,
            front: None,
        }
    }

    /// How many joints the rig has.
    pub(super) fn len(&self) -> usize {
        self.pos.len()
    }

    /// The joint's name as the file spells it.
    pub(super) fn name(&self, joint: usize) -> &str {
        &self.skeleton.joints()[joint].name
    }

    /// How strongly the joint's name argues for a deforming body joint
    /// (`NameInfo::preference`).
    pub(super) fn pref(&self, joint: usize) -> f32 {
        self.names[joint].preference
    }

    /// Controls and attachments: never part of the body when there is a choice.
    pub(super) fn avoid(&self, joint: usize) -> bool {
        self.names[joint].preference < -0.25
    }

    /// Children that are not controls or attachments (helpers included: a `__X`
    /// parent or a twist bone still leads somewhere).
    pub(super) fn body_kids(&self, joint: usize) -> Vec<usize> {
        self.kids[joint]
            .iter()
            .copied()
            .filter(|&c| !self.avoid(c))
            .collect()
    }

    /// Children that are neither controls, attachments nor helpers.
    pub(super) fn plain_kids(&self, joint: usize) -> Vec<usize> {
        self.kids[joint]
            .iter()
            .copied()
            .filter(|&c| !self.avoid(c) && !self.names[c].helper)
            .collect()
    }

    /// Heuristic: a zero-length branch joint: at the place of a parent that branches,
    /// with one child going on from it (SMPL-derived rigs such as MoDi's put
    /// `Pelvis_Spine1`, `Spine3_Neck` and `Spine3_L_Collar` at the pelvis and upper
    /// chest, one per branch). Its child carries the branch's first bone.
    pub(super) fn is_branch_pivot(&self, joint: usize) -> bool {
        let Some(parent) = self.skeleton.joints()[joint].parent else {
            return false;
        };
        self.coincident(parent, joint)
            && self.body_kids(parent).len() >= 2
            && matches!(self.body_kids(joint).as_slice(), [only] if !self.coincident(joint, *only))
    }

    /// Whether joints `a` and `b` are in the same place (within `eps`).
    pub(super) fn coincident(&self, a: usize, b: usize) -> bool {
        self.pos[a].distance(self.pos[b]) <= self.eps
    }

    /// A helper in the place of its only child (`Head_scaleCompensation` above
    /// `Head`): the line of the body goes on through it to that child.
    pub(super) fn wraps_its_child(&self, joint: usize) -> bool {
        self.names[joint].helper
            && matches!(self.kids[joint].as_slice(), [only] if self.coincident(joint, *only))
    }

    /// The joints outside the body of `hips` that hang from a joint above it (the
    /// root or an armature node), directly or through controls: where game rigs hang
    /// the feet and hands that IK moves. Neither in the hips' subtree nor above it.
    pub(super) fn outside_body(&self, hips: usize) -> Vec<usize> {
        let body = self.subtree(hips);
        let hangs_from_the_root = |j: usize| {
            std::iter::successors(self.skeleton.parent(j), |&p| self.skeleton.parent(p))
                .any(|p| self.skeleton.is_ancestor(p, hips))
        };
        (0..self.len())
            .filter(|&j| {
                !body.contains(&j) && !self.skeleton.is_ancestor(j, hips) && hangs_from_the_root(j)
            })
            .collect()
    }

    /// `root` and everything below it, parents first.
    pub(super) fn subtree(&self, root: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack = vec![root];
        while let Some(j) = stack.pop() {
            out.push(j);
            stack.extend(self.kids[j].iter().rev());
        }
        out
    }

    /// The farthest any joint or end site below `root` (itself included) gets from
    /// `from`, leaving out controls and attachments (a sword is not the arm) and the
    /// joints named as end nubs below it, which a writer puts at any length (Blender
    /// re-exporting an FBX import writes its `_end` leaves in the armature's
    /// unscaled units, a hundred times their bones' length).
    pub(super) fn reach(&self, root: usize, from: Vec3) -> f32 {
        let mut far = 0.0f32;
        let mut stack = vec![root];
        while let Some(j) = stack.pop() {
            for p in std::iter::once(self.pos[j]).chain(self.end[j]) {
                far = far.max(p.distance(from));
            }
            stack.extend(
                self.kids[j]
                    .iter()
                    .copied()
                    .filter(|&c| !self.avoid(c) && !self.names[c].nub),
            );
        }
        far
    }

    /// The joints from `top` down to `bottom`, both included (`top` must be an
    /// ancestor of `bottom` or `bottom` itself).
    pub(super) fn path(&self, top: usize, bottom: usize) -> Vec<usize> {
        let mut path = vec![bottom];
        let mut j = bottom;
        while j != top {
            match self.skeleton.parent(j) {
                Some(p) => {
                    path.push(p);
                    j = p;
                }
                None => break,
            }
        }
        path.reverse();
        path
    }

    /// Consecutive joints of `line` in the same place, as one: the last of each
    /// group (the one carrying the rest of the line), unless that one is a helper
    /// and an earlier one is not.
    pub(super) fn collapse(&self, line: &[usize]) -> Vec<usize> {
        self.collapse_groups(line).0
    }

    /// `collapse`, with the index in the collapsed line of each joint of `line`.
    pub(super) fn collapse_groups(&self, line: &[usize]) -> (Vec<usize>, Vec<usize>) {
        let mut out: Vec<usize> = Vec::new();
        let mut group = Vec::with_capacity(line.len());
        for &j in line {
            match out.last_mut() {
                Some(last) if self.coincident(*last, j) => {
                    if !self.names[j].helper || self.names[*last].helper {
                        *last = j;
                    }
                }
                _ => out.push(j),
            }
            group.push(out.len() - 1);
        }
        (out, group)
    }

    /// Direction of the bone of `line[k]`: to the next joint of the line, or to its
    /// end site for the last one.
    pub(super) fn bone_dir(&self, line: &[usize], k: usize) -> Option<Vec3> {
        let from = self.pos[line[k]];
        let to = match line.get(k + 1) {
            Some(&next) => self.pos[next],
            None => self.end[line[k]]?,
        };
        (to - from).try_normalize()
    }
}

/// `v` with its vertical part dropped.
pub(super) fn horizontal(v: Vec3) -> Vec3 {
    Vec3::new(v.x, 0.0, v.z)
}

/// Distance of `p` from the line through `a` and `b`.
pub(super) fn off_line(p: Vec3, a: Vec3, b: Vec3) -> f32 {
    match (b - a).try_normalize() {
        Some(d) => (p - a).reject_from_normalized(d).length(),
        None => p.distance(a),
    }
}
