//! Automatic humanoid recognition: which joint of an arbitrary rig drives each VRM
//! 1.0 humanoid bone, with a confidence and the reasons for every bone, or a plain
//! "not a humanoid" with the reason.
//!
//! Pure: a `Skeleton` (rest transforms and joint names) in, a `Recognition` out, no
//! I/O. `inspect::choose_map` falls back on it when a rig has no map of its own and
//! no catalog map fits; `inspect --write-map` writes its map for a user to check.
//!
//! Structure and geometry decide; names steer only where geometry cannot tell (which
//! of two coincident joints, the deforming chain over a control duplicate, which
//! finger is which) and raise or lower the confidence. Left and right always come
//! from rest positions and the facing direction, never from names alone: rigs with
//! mirrored names are common. The stages, each a function below with its heuristic:
//!
//! 1. `Rig::new`: model-space rest positions, children, what each subtree reaches,
//!    and what each name says (`NameInfo::parse`: case, separators, prefixes such as
//!    `mixamorig:`, `Bip01`, `DEF-`, `J_Bip_`, `Armature|`, numeric suffixes).
//! 2. `find_pelvis`: the hips are a joint with two legs (chains of two or more joints
//!    ending at the same level, side by side) and a body going up. Every such joint
//!    is tried and the most complete body wins; transform nodes above the pelvis
//!    never qualify, having one child. `pelvis_above` moves the hips up one joint
//!    for 3ds Max Biped, whose thighs hang from `Bip01 Spine`.
//! 3. `solve_leg`: the thigh is the first joint out to the side whose bone points
//!    down, the knee the joint halfway down, the ankle the first joint below half the
//!    knee's height, the toes the next joint.
//! 4. `BodyFrame`: the lateral axis and the midline, from the legs.
//! 5. `find_arm_branch`: the upper chest is the joint with two one-sided subtrees
//!    reaching far out to either side; the head is its tallest centred child.
//! 6. `solve_arm`: upper arm, forearm and hand along the arm's main line by
//!    proportion (upper arm about 1.15 forearms), a shoulder joint out to the side,
//!    straight twist joints and names; the clavicle lies before the upper arm.
//! 7. `facing`: toes, knees and eyes tell the front; names only when the geometry
//!    is silent, and +Z (glTF's convention) last.
//! 8. `split_spine`: the joints between the hips and the arm branch become spine,
//!    chest (the middle one) and upper chest (the branch).
//! 9. `solve_neck`: the chain above the arm branch up to its first fork, without an
//!    end nub: neck first, head last.
//! 10. `solve_fingers`: every leaf path under the hand is a digit whose last three
//!     joints are its phalanges; the thumb starts nearest the wrist; the other
//!     fingers are ordered away from the thumb.
//! 11. `solve_face`: eyes and jaw by name, or eyes as a symmetric pair of leaves on
//!     the head.
//!
//! The finished map is checked with `BoneMap::resolve` before it is returned.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use glam::Vec3;

use crate::humanoid::HumanBone as B;
use crate::humanoid::{HumanBone, Side};

use super::{BoneMap, NamedBoneMap, Skeleton};

/// How sure the recognizer is of one bone, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct BoneEvidence {
    /// 0 to 1. Structure alone gives 0.55 to 0.85 depending on how telling it is; a
    /// name that agrees adds up to 0.12, one that contradicts takes away 0.25.
    pub confidence: f32,
    /// One short line per fact used: structure, geometry, name.
    pub reasons: Vec<String>,
}

/// A rig recognized as a humanoid.
#[derive(Debug, Clone, PartialEq)]
pub struct RecognizedMap {
    /// Humanoid bone -> joint name; passes `BoneMap::resolve` against the skeleton.
    pub map: NamedBoneMap,
    /// Confidence and reasons for every bone in `map`.
    pub evidence: BTreeMap<HumanBone, BoneEvidence>,
    /// Facts about the whole rig: where it faces and how that was told, mirrored
    /// names, transform nodes skipped above the hips.
    pub notes: Vec<String>,
}

impl RecognizedMap {
    /// The mean confidence over the mapped bones, 0 to 1.
    #[must_use]
    pub fn confidence(&self) -> f32 {
        if self.evidence.is_empty() {
            return 0.0;
        }
        self.evidence.values().map(|e| e.confidence).sum::<f32>() / self.evidence.len() as f32
    }
}

/// Why a rig is not recognized as a humanoid.
#[derive(Debug, Clone, PartialEq)]
pub struct NotHumanoid {
    /// One line, lower case, naming the joints concerned.
    pub reason: String,
    /// The bones found before the recognizer gave up (a start for a map written by
    /// hand); it does not pass `BoneMap::resolve`.
    pub partial: NamedBoneMap,
}

/// What `recognize` makes of a rig.
#[derive(Debug, Clone, PartialEq)]
pub enum Recognition {
    Humanoid(RecognizedMap),
    NotHumanoid(NotHumanoid),
}

impl Recognition {
    /// The recognized map, if the rig is a humanoid.
    #[must_use]
    pub fn map(&self) -> Option<&NamedBoneMap> {
        match self {
            Recognition::Humanoid(r) => Some(&r.map),
            Recognition::NotHumanoid(_) => None,
        }
    }

    /// The recognized humanoid, if it is one.
    #[must_use]
    pub fn into_humanoid(self) -> Option<RecognizedMap> {
        match self {
            Recognition::Humanoid(r) => Some(r),
            Recognition::NotHumanoid(_) => None,
        }
    }
}

/// Recognizes the humanoid bones of `skeleton` (see the module header).
#[must_use]
pub fn recognize(skeleton: &Skeleton) -> Recognition {
    let rig = Rig::new(skeleton);
    let mut best: Option<Body> = None;
    for joint in 0..rig.len() {
        let Some(pelvis) = find_pelvis(&rig, joint) else {
            continue;
        };
        let body = assemble(&rig, &pelvis);
        if best.as_ref().is_none_or(|b| body.score() > b.score()) {
            best = Some(body);
        }
    }
    match best {
        Some(body) => body.into_recognition(&rig),
        None => Recognition::NotHumanoid(NotHumanoid {
            reason: format!(
                "no joint branches into two legs (chains of two or more joints going down to \
                 the same level, side by side) and a body going up ({} joints)",
                rig.len()
            ),
            partial: NamedBoneMap::default(),
        }),
    }
}

// ---------------------------------------------------------------------------------
// Names

/// What a joint's name says, after normalizing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Hips,
    /// `pelvis.L`, `LHipJoint`, `LeftHip`: a hip helper or the thigh.
    HipSide,
    Spine,
    Chest,
    UpperChest,
    Neck,
    Head,
    /// `HeadTop_End`: the nub above the head.
    HeadTop,
    Eye,
    /// Eyebrows, lids and the like: face parts that are not humanoid bones.
    Face,
    Jaw,
    Clavicle,
    /// `shoulder`: the clavicle (Mixamo, Rigify) or the upper arm (joint-named mocap).
    Shoulder,
    UpperArm,
    /// `arm` alone: the upper arm (CMU, Mixamo) or any arm bone (COLLADA exports).
    Arm,
    LowerArm,
    Hand,
    Thumb,
    Index,
    Middle,
    Ring,
    Little,
    Metacarpal,
    Finger,
    UpperLeg,
    /// `leg` alone: the shin (CMU, Mixamo) or any leg bone.
    Leg,
    LowerLeg,
    Foot,
    Toes,
}

/// Name fragments and the role they give, first match wins (so `upperarm` is seen
/// before `arm`, `forefoot` before `foot`, finger names before `hand`).
const ROLE_WORDS: &[(&[&str], Role)] = &[
    (&["headtop", "headend", "headnub"], Role::HeadTop),
    (
        &["eyebrow", "eyelid", "eyelash", "eyetarget", "eyeaim"],
        Role::Face,
    ),
    (&["eye"], Role::Eye),
    (&["jaw", "mandible"], Role::Jaw),
    (&["thumb", "pollex"], Role::Thumb),
    (&["index", "pointer", "forefinger"], Role::Index),
    (&["middle"], Role::Middle),
    (&["ring"], Role::Ring),
    (&["pinky", "pinkie", "little"], Role::Little),
    (&["metacarpal", "carpal", "palm"], Role::Metacarpal),
    (&["finger", "digit"], Role::Finger),
    (&["metatarsal", "forefoot", "toe", "ball"], Role::Toes),
    (&["foot", "ankle"], Role::Foot),
    (&["upperleg", "upleg", "thigh", "femur"], Role::UpperLeg),
    (
        &["lowerleg", "loleg", "calf", "shin", "knee"],
        Role::LowerLeg,
    ),
    (&["clavicle", "clav", "collar"], Role::Clavicle),
    (&["shoulder", "shldr"], Role::Shoulder),
    (&["upperarm", "uparm", "humerus"], Role::UpperArm),
    (&["forearm", "lowerarm", "loarm", "elbow"], Role::LowerArm),
    (&["hand", "wrist"], Role::Hand),
    (&["upperchest"], Role::UpperChest),
    (&["chest", "thorax", "ribcage"], Role::Chest),
    (&["neck"], Role::Neck),
    (&["head", "skull"], Role::Head),
    (&["pelvis", "hips", "hip"], Role::Hips),
    (
        &[
            "spine",
            "abdomen",
            "waist",
            "torso",
            "lowerback",
            "back",
            "belly",
            "lumbar",
        ],
        Role::Spine,
    ),
    (&["leg"], Role::Leg),
    (&["arm"], Role::Arm),
];

/// Words that carry no meaning: exporter and rig prefixes.
const NOISE_WORDS: &[&str] = &[
    "mixamorig",
    "bip",
    "j",
    "c",
    "armature",
    "skeleton",
    "joint",
    "jnt",
    "bone",
    "rig",
    "cc",
    "sk",
    "b",
    "base",
];

/// Words of control rigs (IK/FK chains, targets): never the deforming joint.
const CONTROL_WORDS: &[&str] = &[
    "ik", "fk", "ctrl", "ctl", "control", "mch", "org", "pole", "target", "tgt", "ikfk", "aim",
    "locator", "loc",
];

/// Words of helper joints: ends, nubs, twist and roll bones.
const HELPER_WORDS: &[&str] = &[
    "end",
    "nub",
    "tip",
    "twist",
    "roll",
    "null",
    "dummy",
    "helper",
    "offset",
    "pivot",
    "corrective",
];

/// Name fragments of what hangs on a body without being part of it.
const ATTACHMENT_PARTS: &[&str] = &[
    "weapon", "sword", "gun", "shield", "holster", "prop", "slot", "socket", "attach", "camera",
    "hair", "skirt", "tail", "cape", "cloth", "breast", "bust", "ribbon", "spring", "physics",
];

/// What one joint's name says.
#[derive(Debug, Clone, Default)]
struct NameInfo {
    /// The side the name claims (`Left`/`Right` only).
    side: Option<Side>,
    role: Option<Role>,
    /// How strongly the name argues for a deforming body joint: negative for
    /// controls and attachments, positive for `DEF-`.
    preference: f32,
    /// An end nub, twist or roll bone, or a `__X` parent of `X`.
    helper: bool,
    /// The normalized words, joined by single spaces (to spot `__X` above `X`).
    key: String,
}

impl NameInfo {
    /// Normalizes a joint name: namespace prefixes (`mixamorig:`, `Armature|`) cut,
    /// words split at separators, case changes and digits, noise words dropped.
    fn parse(name: &str) -> NameInfo {
        let base = name.rsplit([':', '|']).next().unwrap_or(name);
        let key = split_words(base);
        let mut info = NameInfo::default();
        // Xsens vertebrae (`L5`, `L3`, `T12`, `T8`) would otherwise read as sides.
        let mut words = key.split(' ');
        if let (Some("l" | "t"), Some(digits), None) = (words.next(), words.next(), words.next())
            && digits.chars().all(|c| c.is_ascii_digit())
        {
            info.role = Some(Role::Spine);
            info.key = key;
            return info;
        }
        let mut joined = String::with_capacity(key.len());
        let mut says_mid = false;
        for w in key.split(' ') {
            if matches!(w, "l" | "left" | "lft") {
                info.side = Some(Side::Left);
            } else if matches!(w, "r" | "right" | "rt" | "rgt") {
                info.side = Some(Side::Right);
            } else if w.chars().all(|c| c.is_ascii_digit()) || NOISE_WORDS.contains(&w) {
            } else if matches!(w, "def" | "deform") {
                info.preference += 0.3;
            } else if CONTROL_WORDS.contains(&w) || matches!(w, "sec" | "ear") {
                info.preference -= 1.0;
            } else if HELPER_WORDS.contains(&w) {
                info.helper = true;
            } else if let Some(rest) = w.strip_prefix("left").filter(|r| !r.is_empty()) {
                info.side = Some(Side::Left);
                joined.push_str(rest);
            } else if let Some(rest) = w.strip_prefix("right").filter(|r| !r.is_empty()) {
                info.side = Some(Side::Right);
                joined.push_str(rest);
            } else {
                says_mid |= w == "mid";
                joined.push_str(w);
            }
        }
        let (role, attachment) = find_fragments(&joined);
        if attachment {
            info.preference -= 1.0;
        }
        info.role = if says_mid { Some(Role::Middle) } else { role };
        if info.role == Some(Role::Hips) && info.side.is_some() {
            info.role = Some(Role::HipSide);
        }
        info.key = key;
        info
    }
}

/// A name fragment and the `ROLE_WORDS` entry it belongs to (`None`: an attachment).
type Fragment = (&'static str, Option<usize>);

/// `ROLE_WORDS` fragments (with their entry's index) and `ATTACHMENT_PARTS` (`None`)
/// by first letter, so a name is scanned once rather than searched per fragment.
static FRAGMENTS: LazyLock<[Vec<Fragment>; 26]> = LazyLock::new(|| {
    let mut table: [Vec<Fragment>; 26] = Default::default();
    let entries = ROLE_WORDS
        .iter()
        .enumerate()
        .flat_map(|(i, (parts, _))| parts.iter().map(move |p| (*p, Some(i))))
        .chain(ATTACHMENT_PARTS.iter().map(|p| (*p, None)));
    for (fragment, entry) in entries {
        if let Some(slot) = fragment
            .bytes()
            .next()
            .and_then(|b| table.get_mut(usize::from(b.wrapping_sub(b'a'))))
        {
            slot.push((fragment, entry));
        }
    }
    table
});

/// The role of the first `ROLE_WORDS` entry with a fragment in `joined` (table order
/// decides, not position), and whether an attachment fragment is in it.
fn find_fragments(joined: &str) -> (Option<Role>, bool) {
    let bytes = joined.as_bytes();
    let mut first: Option<usize> = None;
    let mut attachment = false;
    for (i, b) in bytes.iter().enumerate() {
        let Some(candidates) = FRAGMENTS.get(usize::from(b.wrapping_sub(b'a'))) else {
            continue;
        };
        for &(fragment, entry) in candidates {
            if bytes[i..].starts_with(fragment.as_bytes()) {
                match entry {
                    Some(e) => first = Some(first.map_or(e, |f| f.min(e))),
                    None => attachment = true,
                }
            }
        }
    }
    let role = first.and_then(|e| ROLE_WORDS.get(e)).map(|&(_, role)| role);
    (role, attachment)
}

/// Lower-case words of a name joined by single spaces: split at anything not
/// alphanumeric, at lower-to-upper case changes (`UpperArm`), before the last capital
/// of a capital run (`LThumb`) and between letters and digits (`Spine1`).
fn split_words(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 8);
    let mut prev: Option<char> = None;
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        if !c.is_alphanumeric() {
            prev = None;
            if !out.is_empty() && !out.ends_with(' ') {
                out.push(' ');
            }
            continue;
        }
        if let Some(p) = prev {
            let next_lower = chars.peek().is_some_and(|n| n.is_lowercase());
            let boundary = (p.is_lowercase() && c.is_uppercase())
                || (p.is_alphabetic() != c.is_alphabetic())
                || (p.is_uppercase() && c.is_uppercase() && next_lower);
            if boundary {
                out.push(' ');
            }
        }
        out.extend(c.to_lowercase());
        prev = Some(c);
    }
    if out.ends_with(' ') {
        out.pop();
    }
    out
}

/// A bone's spec name without its side (`UpperArm`, `ThumbProximal`, `hips`).
fn kind(bone: HumanBone) -> &'static str {
    let name = bone.name();
    name.strip_prefix("left")
        .or_else(|| name.strip_prefix("right"))
        .unwrap_or(name)
}

/// How a name's role sits with a bone: 2 says exactly that bone, 1 is compatible,
/// 0 says nothing, -1 says something else.
fn agreement(role: Role, bone: HumanBone) -> i8 {
    let k = kind(bone);
    let torso = matches!(bone, B::Spine | B::Chest | B::UpperChest);
    let says = |exact: bool| if exact { 2 } else { -1 };
    match role {
        Role::Hips if torso => 0,
        Role::Hips => says(bone == B::Hips),
        Role::HipSide if k == "UpperLeg" => 1,
        Role::Spine if torso => 1,
        Role::Spine if matches!(bone, B::Hips | B::Neck | B::Head) => 0,
        Role::Chest if bone == B::Spine => 0,
        Role::Chest => says(matches!(bone, B::Chest | B::UpperChest)),
        Role::UpperChest if bone == B::Chest => 1,
        Role::UpperChest => says(bone == B::UpperChest),
        Role::Neck if matches!(bone, B::Head | B::UpperChest) => 0,
        Role::Neck => says(bone == B::Neck),
        Role::Head => says(bone == B::Head),
        Role::Eye => says(k == "Eye"),
        Role::Jaw => says(bone == B::Jaw),
        Role::Clavicle => says(k == "Shoulder"),
        Role::Shoulder if matches!(k, "Shoulder" | "UpperArm") => 1,
        Role::UpperArm => says(k == "UpperArm"),
        Role::Arm if k == "UpperArm" => 1,
        Role::Arm if matches!(k, "Shoulder" | "LowerArm" | "Hand") => 0,
        Role::LowerArm => says(k == "LowerArm"),
        Role::Hand => says(k == "Hand"),
        Role::Thumb => says(k.starts_with("Thumb")),
        Role::Index => says(k.starts_with("Index")),
        Role::Middle => says(k.starts_with("Middle")),
        Role::Ring => says(k.starts_with("Ring")),
        Role::Little => says(k.starts_with("Little")),
        Role::Metacarpal if k == "ThumbMetacarpal" => 1,
        Role::Metacarpal | Role::Finger if bone.is_finger() => i8::from(role == Role::Finger),
        Role::UpperLeg => says(k == "UpperLeg"),
        Role::Leg if matches!(k, "UpperLeg" | "LowerLeg") => 1,
        Role::Leg if matches!(k, "Foot" | "Toes") => 0,
        Role::LowerLeg => says(k == "LowerLeg"),
        Role::Foot => says(k == "Foot"),
        Role::Toes => says(k == "Toes"),
        _ => -1,
    }
}

/// How much a name argues for `bone` in the costs below (negative is for).
fn name_cost(rig: &Rig, joint: usize, bone: HumanBone) -> f32 {
    match rig.names[joint].role.map(|r| agreement(r, bone)) {
        Some(2) => -0.3,
        Some(1) => -0.1,
        Some(-1) => 0.3,
        _ => 0.0,
    }
}

// ---------------------------------------------------------------------------------
// The rig

/// The rig as the recognizer sees it: rest positions in model space, children, what
/// each subtree reaches, and what each name says.
struct Rig<'a> {
    skeleton: &'a Skeleton,
    /// Model-space rest position of each joint.
    pos: Vec<Vec3>,
    /// Model-space end of each joint's bone, when the file gives one.
    end: Vec<Option<Vec3>>,
    kids: Vec<Vec<usize>>,
    names: Vec<NameInfo>,
    /// Lowest and highest y over each joint's subtree, end sites included.
    low: Vec<f32>,
    high: Vec<f32>,
    /// Joints on the path from each joint down to its subtree's lowest point.
    low_depth: Vec<u32>,
    /// Joints on the longest path down each joint's subtree.
    depth: Vec<u32>,
    /// Distance under which two joints are in the same place.
    eps: f32,
}

impl<'a> Rig<'a> {
    fn new(skeleton: &'a Skeleton) -> Self {
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
            }
        }
        let mut names: Vec<NameInfo> = joints.iter().map(|j| NameInfo::parse(&j.name)).collect();
        // `__Clavicle_L` above `Clavicle_L` (MakeHuman's game rig): a helper.
        for i in 0..n {
            if let [only] = kids[i].as_slice()
                && !names[i].key.is_empty()
                && names[i].key == names[*only].key
            {
                names[i].helper = true;
            }
        }
        let floor = low.iter().copied().fold(f32::INFINITY, f32::min);
        let top = high.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let eps = ((top - floor) * 1e-3).max(1e-6);
        Rig {
            skeleton,
            pos,
            end,
            kids,
            names,
            low,
            high,
            low_depth,
            depth,
            eps,
        }
    }

    fn len(&self) -> usize {
        self.pos.len()
    }

    fn name(&self, joint: usize) -> &str {
        &self.skeleton.joints()[joint].name
    }

    fn pref(&self, joint: usize) -> f32 {
        self.names[joint].preference
    }

    /// Controls and attachments: never part of the body when there is a choice.
    fn avoid(&self, joint: usize) -> bool {
        self.names[joint].preference < -0.25
    }

    /// Children that are not controls or attachments (helpers included: a `__X`
    /// parent or a twist bone still leads somewhere).
    fn body_kids(&self, joint: usize) -> Vec<usize> {
        self.kids[joint]
            .iter()
            .copied()
            .filter(|&c| !self.avoid(c))
            .collect()
    }

    /// Children that are neither controls, attachments nor helpers.
    fn plain_kids(&self, joint: usize) -> Vec<usize> {
        self.kids[joint]
            .iter()
            .copied()
            .filter(|&c| !self.avoid(c) && !self.names[c].helper)
            .collect()
    }

    fn coincident(&self, a: usize, b: usize) -> bool {
        self.pos[a].distance(self.pos[b]) <= self.eps
    }

    /// `root` and everything below it, parents first.
    fn subtree(&self, root: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack = vec![root];
        while let Some(j) = stack.pop() {
            out.push(j);
            stack.extend(self.kids[j].iter().rev());
        }
        out
    }

    /// The farthest any joint or end site below `root` (itself included) gets from
    /// `from`, leaving out controls and attachments (a sword is not the arm).
    fn reach(&self, root: usize, from: Vec3) -> f32 {
        let mut far = 0.0f32;
        let mut stack = vec![root];
        while let Some(j) = stack.pop() {
            for p in std::iter::once(self.pos[j]).chain(self.end[j]) {
                far = far.max(p.distance(from));
            }
            stack.extend(self.kids[j].iter().copied().filter(|&c| !self.avoid(c)));
        }
        far
    }

    /// The joints from `top` down to `bottom`, both included (`top` must be an
    /// ancestor of `bottom` or `bottom` itself).
    fn path(&self, top: usize, bottom: usize) -> Vec<usize> {
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
    fn collapse(&self, line: &[usize]) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        for &j in line {
            match out.last_mut() {
                Some(last) if self.coincident(*last, j) => {
                    if !self.names[j].helper || self.names[*last].helper {
                        *last = j;
                    }
                }
                _ => out.push(j),
            }
        }
        out
    }

    /// Direction of the bone of `line[k]`: to the next joint of the line, or to its
    /// end site for the last one.
    fn bone_dir(&self, line: &[usize], k: usize) -> Option<Vec3> {
        let from = self.pos[line[k]];
        let to = match line.get(k + 1) {
            Some(&next) => self.pos[next],
            None => self.end[line[k]]?,
        };
        (to - from).try_normalize()
    }
}

fn horizontal(v: Vec3) -> Vec3 {
    Vec3::new(v.x, 0.0, v.z)
}

/// Distance of `p` from the line through `a` and `b`.
fn off_line(p: Vec3, a: Vec3, b: Vec3) -> f32 {
    match (b - a).try_normalize() {
        Some(d) => (p - a).reject_from_normalized(d).length(),
        None => p.distance(a),
    }
}

// ---------------------------------------------------------------------------------
// The body being assembled

/// One recognized bone.
struct Found {
    joint: usize,
    evidence: BoneEvidence,
}

/// A body assembled from one hips candidate.
#[derive(Default)]
struct Body {
    bones: BTreeMap<HumanBone, Found>,
    notes: Vec<String>,
    /// The first required part that could not be found.
    failure: Option<String>,
    /// The names' preference summed over the chosen joints (deforming chains win).
    preference: f32,
}

impl Body {
    /// Records `bone` at `joint` with the structural confidence `base` and reasons;
    /// the name's agreement and side are added here.
    fn put(&mut self, rig: &Rig, bone: HumanBone, joint: usize, base: f32, reasons: Vec<String>) {
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

    fn fail(&mut self, reason: String) {
        if self.failure.is_none() {
            self.failure = Some(reason);
        }
    }

    /// Better bodies compare greater: complete, then more required bones, then more
    /// bones, then deforming chains over controls.
    fn score(&self) -> (bool, usize, usize, i64) {
        let required = self.bones.keys().filter(|b| b.is_required()).count();
        (
            self.failure.is_none(),
            required,
            self.bones.len(),
            (self.preference * 100.0).round() as i64,
        )
    }

    fn into_recognition(self, rig: &Rig) -> Recognition {
        let map = NamedBoneMap {
            bones: self
                .bones
                .iter()
                .map(|(&b, f)| (b, rig.name(f.joint).to_owned()))
                .collect(),
        };
        if let Some(reason) = self.failure {
            return Recognition::NotHumanoid(NotHumanoid {
                reason,
                partial: map,
            });
        }
        if let Err(e) = BoneMap::resolve(&map, rig.skeleton) {
            return Recognition::NotHumanoid(NotHumanoid {
                reason: format!("the recognized map does not fit the rig: {e}"),
                partial: map,
            });
        }
        Recognition::Humanoid(RecognizedMap {
            map,
            evidence: self
                .bones
                .into_iter()
                .map(|(b, f)| (b, f.evidence))
                .collect(),
            notes: self.notes,
        })
    }
}

// ---------------------------------------------------------------------------------
// Stage 2: the pelvis

/// A hips candidate: the joint, its two legs and the root of the body above.
struct Pelvis {
    hips: usize,
    legs: [usize; 2],
    /// The joint both legs hang from, when it is not the hips themselves.
    leg_branch: Option<usize>,
    spine_root: usize,
    /// Height of the hips above the lowest point of their subtree.
    span: f32,
    floor: f32,
}

/// Heuristic: the pelvis is where two legs and the body meet. Legs are a pair of
/// child chains of two or more joints going down (rising above the joint by less
/// than half their drop, where the body carries a head) and ending at the same level
/// (within 12% of their drop) side by side, symmetric about the joint; the deepest such pair wins, then
/// deforming names over IK/FK duplicates. Their end is the floor; no global lowest
/// point is trusted, so hands hanging below the feet do not matter. Both legs may
/// hang from one joint close below (a game rig's `Hips` under `Root`). The body is
/// the child reaching highest, at least 15% of the hips' height above them (the
/// arms, found next, are the real test).
fn find_pelvis(rig: &Rig, joint: usize) -> Option<Pelvis> {
    if rig.kids[joint].len() < 2 {
        return None;
    }
    let y = rig.pos[joint].y;
    // The body: the plain child reaching highest (never a leg, whatever its arms reach).
    let spine_root = rig.kids[joint].iter().copied().max_by(|&a, &b| {
        (!rig.avoid(a), rig.high[a])
            .partial_cmp(&(!rig.avoid(b), rig.high[b]))
            .unwrap_or(std::cmp::Ordering::Equal)
    })?;
    let pair_below = |j: usize| -> Option<([usize; 2], f32)> {
        let candidates: Vec<usize> = rig.kids[j]
            .iter()
            .copied()
            .filter(|&c| {
                let drop = y - rig.low[c];
                c != spine_root
                    && rig.low_depth[c] >= 2
                    && drop > rig.eps
                    && rig.high[c] - y <= 0.5 * drop
            })
            .collect();
        best_leg_pair(rig, joint, &candidates)
    };
    let (legs, floor, leg_branch) = match pair_below(joint) {
        Some((legs, floor)) => (legs, floor, None),
        None => rig.kids[joint]
            .iter()
            .copied()
            .filter(|&c| c != spine_root)
            .find_map(|c| {
                let (legs, floor) = pair_below(c)?;
                let near = rig.pos[c].distance(rig.pos[joint]) <= 0.35 * (y - floor);
                near.then_some((legs, floor, Some(c)))
            })?,
    };
    let span = y - floor;
    if span <= rig.eps
        || span < 0.25 * (rig.high[joint] - floor)
        || rig.high[spine_root] < y + 0.15 * span
    {
        return None;
    }
    Some(Pelvis {
        hips: joint,
        legs,
        leg_branch,
        spine_root,
        span,
        floor,
    })
}

/// The line of joints from `root` down toward the floor: at each joint the child
/// reaching lowest (names break ties), stopping at a leaf or at a toe fan (three or
/// more children near the floor).
fn follow_down(rig: &Rig, root: usize, span: f32) -> Vec<usize> {
    let mut line = vec![root];
    let mut j = root;
    loop {
        let kept = rig.body_kids(j);
        let kids = if kept.is_empty() {
            rig.kids[j].clone()
        } else {
            kept
        };
        let near_floor = rig.pos[j].y - rig.low[j] < 0.3 * span;
        if kids.is_empty() || (kids.len() >= 3 && near_floor) {
            return line;
        }
        let next = kids.iter().copied().min_by(|&a, &b| {
            let key = |j: usize| (rig.low[j], -rig.pref(j), rig.names[j].helper);
            key(a)
                .partial_cmp(&key(b))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        match next {
            Some(n) => {
                line.push(n);
                j = n;
            }
            None => return line,
        }
    }
}

/// The deepest matched pair of `roots` side by side (see `find_pelvis`), with the
/// level they reach.
fn best_leg_pair(rig: &Rig, hips: usize, roots: &[usize]) -> Option<([usize; 2], f32)> {
    let y = rig.pos[hips].y;
    let deepest = roots.iter().map(|&r| rig.low[r]).reduce(f32::min)?;
    let centroid = |root: usize| -> Vec3 {
        let line = follow_down(rig, root, y - rig.low[root]);
        horizontal(line.iter().map(|&j| rig.pos[j]).sum::<Vec3>() / line.len() as f32)
    };
    let centroids: Vec<Vec3> = roots.iter().map(|&r| centroid(r)).collect();
    let mut best: Option<(f32, [usize; 2], f32)> = None;
    for (i, &a) in roots.iter().enumerate() {
        for (k, &b) in roots.iter().enumerate().skip(i + 1) {
            let (low_a, low_b) = (rig.low[a], rig.low[b]);
            let drop = y - low_a.max(low_b);
            let (ca, cb) = (centroids[i], centroids[k]);
            if (low_a - low_b).abs() > 0.12 * drop || ca.distance(cb) < 0.05 * drop {
                continue;
            }
            let off_centre = ((ca + cb) * 0.5).distance(horizontal(rig.pos[hips]));
            let score = rig.pref(a) + rig.pref(b)
                - 5.0 * (low_a.max(low_b) - deepest) / drop
                - off_centre / drop;
            if best.is_none_or(|(s, ..)| score > s) {
                best = Some((score, [a, b], low_a.min(low_b)));
            }
        }
    }
    best.map(|(_, pair, floor)| (pair, floor))
}

// ---------------------------------------------------------------------------------
// Stage 3: legs

/// One leg's joints along its line.
#[derive(Default, Clone)]
struct Leg {
    line: Vec<usize>,
    upper: Option<usize>,
    lower: Option<usize>,
    foot: Option<usize>,
    toes: Option<usize>,
    problem: Option<String>,
}

/// The knee before the thigh is known: the line joint nearest half the hips' height.
fn rough_knee(rig: &Rig, line: &[usize], pelvis: &Pelvis) -> Option<usize> {
    let half = pelvis.floor + 0.5 * pelvis.span;
    line.iter().copied().min_by(|&a, &b| {
        (rig.pos[a].y - half)
            .abs()
            .partial_cmp(&(rig.pos[b].y - half).abs())
            .unwrap_or(std::cmp::Ordering::Equal)
    })
}

/// Heuristic: the thigh is the first joint of the leg's line out to the side (at
/// least 35% of the knee's distance from the midline: hip helpers start at the
/// centre) whose bone points down; the knee is the joint nearest half the thigh's
/// height above the floor; the ankle the first joint below half the knee's height;
/// the toes the next joint, unless it is an end nub. Names steer between candidates
/// that the geometry allows.
fn solve_leg(rig: &Rig, line: Vec<usize>, frame: &BodyFrame) -> Leg {
    let reps = rig.collapse(&line);
    let mut leg = Leg {
        line,
        ..Leg::default()
    };
    let Some(&root) = reps.first() else {
        return leg;
    };
    let floor = rig.low[root];
    let knee_out = frame.rough_knee_lateral.max(rig.eps);
    let thigh_like = |k: usize| {
        frame.lateral_of(rig.pos[reps[k]]).abs() >= 0.35 * knee_out
            && rig.bone_dir(&reps, k).is_some_and(|d| d.y < -0.5)
    };
    let named = (0..reps.len()).find(|&k| {
        thigh_like(k)
            && !rig.names[reps[k]].helper
            && rig.names[reps[k]].role == Some(Role::UpperLeg)
    });
    let Some(u) = named.or_else(|| (0..reps.len()).find(|&k| thigh_like(k))) else {
        leg.problem = Some(format!(
            "leg `{}`: no joint out to the side with a bone going down",
            rig.name(root)
        ));
        return leg;
    };
    leg.upper = Some(reps[u]);
    let length = rig.pos[reps[u]].y - floor;
    if length <= rig.eps {
        leg.problem = Some(format!("leg `{}` does not go down", rig.name(reps[u])));
        return leg;
    }
    let rel = |k: usize| (rig.pos[reps[k]].y - floor) / length;
    let knee = (u + 1..reps.len())
        .find(|&k| {
            rig.names[reps[k]].role == Some(Role::LowerLeg)
                && !rig.names[reps[k]].helper
                && (0.25..=0.75).contains(&rel(k))
        })
        .or_else(|| {
            (u + 1..reps.len())
                .filter(|&k| (0.2..=0.85).contains(&rel(k)))
                .min_by(|&a, &b| {
                    (rel(a) - 0.5)
                        .abs()
                        .partial_cmp(&(rel(b) - 0.5).abs())
                        .unwrap_or(std::cmp::Ordering::Equal)
                })
        });
    let Some(k) = knee else {
        leg.problem = Some(format!(
            "leg `{}`: no knee joint halfway down",
            rig.name(reps[u])
        ));
        return leg;
    };
    leg.lower = Some(reps[k]);
    let knee_rel = rel(k);
    let ankle = (k + 1..reps.len())
        .find(|&i| {
            rig.names[reps[i]].role == Some(Role::Foot)
                && !rig.names[reps[i]].helper
                && rel(i) < 0.75 * knee_rel
        })
        .or_else(|| (k + 1..reps.len()).find(|&i| rel(i) < 0.5 * knee_rel));
    let Some(a) = ankle else {
        leg.problem = Some(format!(
            "leg `{}`: no foot joint below the knee `{}` (the line ends at `{}`)",
            rig.name(reps[u]),
            rig.name(reps[k]),
            rig.name(reps[reps.len() - 1])
        ));
        return leg;
    };
    leg.foot = Some(reps[a]);
    leg.toes = reps
        .get(a + 1)
        .copied()
        .filter(|&t| !rig.names[t].helper && rig.names[t].role != Some(Role::HeadTop));
    leg
}

// ---------------------------------------------------------------------------------
// Stage 4: the body frame

/// The body's lateral axis and midline, from the legs.
struct BodyFrame {
    /// Midline point (its horizontal part matters).
    mid: Vec3,
    /// Horizontal unit vector from leg B to leg A (`pelvis.legs[1]` to `[0]`).
    lateral: Vec3,
    /// Half the distance between the thighs (or knees), metres.
    hip_half: f32,
    /// Distance of the knees from the midline, before the thighs are known.
    rough_knee_lateral: f32,
}

impl BodyFrame {
    /// From pairs of matching joints of leg A and leg B.
    fn from_pairs(pairs: &[(Vec3, Vec3)]) -> Option<BodyFrame> {
        let (&(a0, b0), _) = pairs.split_first()?;
        let lateral =
            horizontal(pairs.iter().map(|(a, b)| *a - *b).sum::<Vec3>()).try_normalize()?;
        let mid = pairs.iter().map(|(a, b)| (*a + *b) * 0.5).sum::<Vec3>() / pairs.len() as f32;
        let hip_half = 0.5 * (a0 - b0).dot(lateral).abs();
        Some(BodyFrame {
            mid,
            lateral,
            hip_half,
            rough_knee_lateral: hip_half,
        })
    }

    fn lateral_of(&self, p: Vec3) -> f32 {
        (p - self.mid).dot(self.lateral)
    }
}

// ---------------------------------------------------------------------------------
// Stage 5: the arm branch

/// Where the arms and the head leave the body.
struct ArmBranch {
    branch: usize,
    /// Arm roots: `[0]` on leg A's side of the midline, `[1]` on leg B's.
    arms: [usize; 2],
    head: Option<usize>,
}

/// Heuristic: the upper chest is the joint (in the body above the hips) with two
/// children whose subtrees each reach out to one side, at least 1.4 hip half-widths
/// from the midline, crossing it by less than half a hip half-width, and three or
/// more joints deep (a quadruped's front legs are no wider than its hind legs, so
/// they do not qualify). Among several, deforming
/// names win, then the farthest reach (hands are the body's farthest-out joints in
/// any rest pose). The head is the branch's tallest child starting near the midline.
fn find_arm_branch(rig: &Rig, pelvis: &Pelvis, frame: &BodyFrame) -> Result<ArmBranch, String> {
    let n = rig.len();
    let mut lat_hi = vec![f32::NEG_INFINITY; n];
    let mut lat_lo = vec![f32::INFINITY; n];
    let body = rig.subtree(pelvis.spine_root);
    for &j in body.iter().rev() {
        for p in std::iter::once(rig.pos[j]).chain(rig.end[j]) {
            let l = frame.lateral_of(p);
            lat_hi[j] = lat_hi[j].max(l);
            lat_lo[j] = lat_lo[j].min(l);
        }
        for &c in &rig.kids[j] {
            lat_hi[j] = lat_hi[j].max(lat_hi[c]);
            lat_lo[j] = lat_lo[j].min(lat_lo[c]);
        }
    }
    let half = frame.hip_half.max(0.02 * pelvis.span);
    let mut best: Option<((f32, f32), ArmBranch)> = None;
    for &b in &body {
        if rig.kids[b].len() < 2 {
            continue;
        }
        let mut sides: [Option<(f32, f32, usize)>; 2] = [None, None];
        for &c in &rig.kids[b] {
            if rig.depth[c] < 3 {
                continue;
            }
            for (s, (far, back)) in [(lat_hi[c], -lat_lo[c]), (-lat_lo[c], lat_hi[c])]
                .into_iter()
                .enumerate()
            {
                if far >= 1.4 * half && back <= 0.5 * half {
                    let candidate = (rig.pref(c), far / half, c);
                    if sides[s].is_none_or(|(p, f, _)| (candidate.0, candidate.1) > (p, f)) {
                        sides[s] = Some(candidate);
                    }
                }
            }
        }
        let [Some((pa, fa, a)), Some((pb, fb, bb))] = sides else {
            continue;
        };
        let head = rig.kids[b]
            .iter()
            .copied()
            .filter(|&c| {
                c != a
                    && c != bb
                    && !rig.avoid(c)
                    && rig.high[c] > rig.pos[b].y + 0.02 * pelvis.span
                    && frame.lateral_of(rig.pos[c]).abs() < half
            })
            .max_by(|&x, &y| {
                (rig.pref(x), rig.high[x])
                    .partial_cmp(&(rig.pref(y), rig.high[y]))
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
        let key = (pa + pb, fa.min(fb));
        if best.as_ref().is_none_or(|(k, _)| key > *k) {
            best = Some((
                key,
                ArmBranch {
                    branch: b,
                    arms: [a, bb],
                    head,
                },
            ));
        }
    }
    best.map(|(_, branch)| branch).ok_or_else(|| {
        format!(
            "no arms: no joint above the hips `{}` has two chains reaching out to either side",
            rig.name(pelvis.hips)
        )
    })
}

// ---------------------------------------------------------------------------------
// Stage 6: arms

/// One arm's joints.
struct Arm {
    shoulder: Option<usize>,
    upper: usize,
    lower: usize,
    hand: usize,
    /// The line ended at a fork of short chains: the hand with its fingers.
    hand_fork: bool,
    /// How well the proportions fit (0 is perfect), for the confidence.
    cost: f32,
}

/// The line of joints from an arm's root out to the hand: at each joint the child
/// reaching farthest from the arm branch. It stops at a leaf or at the hand's fork:
/// two or more children, none reaching farther from their parent than 0.6 of the
/// parent's distance from the branch (fingers; a twist bone's fork does not qualify
/// since the forearm beside it is long).
fn follow_out(rig: &Rig, root: usize, branch: usize) -> (Vec<usize>, bool) {
    let origin = rig.pos[branch];
    let mut line = vec![root];
    let mut j = root;
    loop {
        let kids = rig.body_kids(j);
        if kids.is_empty() {
            return (line, false);
        }
        if kids.len() >= 2 {
            let fork_reach = kids
                .iter()
                .map(|&c| rig.reach(c, rig.pos[j]))
                .fold(0.0, f32::max);
            if fork_reach <= 0.6 * rig.pos[j].distance(origin) {
                return (line, true);
            }
        }
        let next = kids.iter().copied().max_by(|&a, &b| {
            (rig.reach(a, origin), rig.pref(a))
                .partial_cmp(&(rig.reach(b, origin), rig.pref(b)))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        match next {
            Some(n) => {
                line.push(n);
                j = n;
            }
            None => return (line, false),
        }
    }
}

/// Heuristic: upper arm, elbow and hand are the joints `u < e < h` of the arm's line
/// (coincident joints merged) minimizing a cost: the upper arm 1.15 forearms long
/// (log ratio, 0.4 to 2.5 allowed), the upper arm starting out to the side (at least
/// 1.15 hip half-widths from the midline: clavicles start near it), what hangs past
/// the hand no longer than the forearm, joints in between on the straight line
/// (twist bones), and names (-0.3 for one that says the bone, +0.3 for one that says
/// another). The hand is the fork of the fingers when there is one. The shoulder is
/// the joint before the upper arm that names call a clavicle, else the one whose bone
/// is longest weighted by how near the midline it starts (a clavicle, not a deltoid
/// helper or an offset node at the centre).
fn solve_arm(rig: &Rig, root: usize, branch: usize, frame: &BodyFrame) -> Result<Arm, String> {
    let (line, hand_fork) = follow_out(rig, root, branch);
    let reps = rig.collapse(&line);
    let n = reps.len();
    let half = frame.hip_half.max(rig.eps);
    let mut best: Option<(f32, usize, usize, usize)> = None;
    let hands = if hand_fork { n - 1..n } else { 2..n };
    for h in hands {
        let tail = if h + 1 < n || !hand_fork {
            rig.reach(reps[h], rig.pos[reps[h]])
        } else {
            0.0
        };
        for e in 1..h {
            let fore = rig.pos[reps[e]].distance(rig.pos[reps[h]]);
            for u in 0..e {
                let upper = rig.pos[reps[u]].distance(rig.pos[reps[e]]);
                if fore <= rig.eps || upper <= rig.eps {
                    continue;
                }
                let ratio = upper / fore;
                if !(0.4..=2.5).contains(&ratio) {
                    continue;
                }
                let mut cost = (ratio / 1.15).ln().abs();
                cost += 2.0 * (1.15 - frame.lateral_of(rig.pos[reps[u]]).abs() / half).max(0.0);
                cost += 2.0 * (tail / fore - 1.0).max(0.0);
                let (pu, pe, ph) = (rig.pos[reps[u]], rig.pos[reps[e]], rig.pos[reps[h]]);
                for &m in &reps[u + 1..e] {
                    cost += 2.0 * off_line(rig.pos[m], pu, pe) / upper;
                }
                for &m in &reps[e + 1..h] {
                    cost += 2.0 * off_line(rig.pos[m], pe, ph) / fore;
                }
                cost += name_cost(rig, reps[u], B::LeftUpperArm)
                    + name_cost(rig, reps[e], B::LeftLowerArm)
                    + name_cost(rig, reps[h], B::LeftHand);
                if best.is_none_or(|(c, ..)| cost < c) {
                    best = Some((cost, u, e, h));
                }
            }
        }
    }
    let Some((cost, u, e, h)) = best else {
        return Err(format!(
            "arm `{}`: no upper arm, forearm and hand in proportion along `{}`",
            rig.name(root),
            line.iter()
                .map(|&j| rig.name(j))
                .collect::<Vec<_>>()
                .join("`, `")
        ));
    };
    let upper = reps[u];
    let before: Vec<usize> = line
        .iter()
        .copied()
        .take_while(|&j| j != upper)
        .filter(|&j| !rig.coincident(j, upper))
        .collect();
    let upper_out = frame.lateral_of(rig.pos[upper]).abs().max(rig.eps);
    let shoulder = before.iter().copied().max_by(|&a, &b| {
        let key = |j: usize| {
            let named = match rig.names[j].role {
                Some(Role::Clavicle) => 2.0,
                Some(Role::Shoulder) => 1.0,
                _ => 0.0,
            };
            let helper = if rig.names[j].helper { -3.0 } else { 0.0 };
            // The clavicle: a long bone starting near the midline.
            let bone = line
                .iter()
                .skip_while(|&&x| x != j)
                .nth(1)
                .map_or(0.0, |&x| rig.pos[x].distance(rig.pos[j]));
            let inward = 1.0 - frame.lateral_of(rig.pos[j]).abs() / upper_out;
            (named + helper, bone * inward.max(0.0))
        };
        key(a)
            .partial_cmp(&key(b))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    Ok(Arm {
        shoulder,
        upper,
        lower: reps[e],
        hand: reps[h],
        hand_fork,
        cost,
    })
}

// ---------------------------------------------------------------------------------
// Stage 7: facing

/// Which leg is the left one, and how that was told.
struct Facing {
    /// Leg A (`pelvis.legs[0]`, positive lateral) is the left leg.
    a_is_left: bool,
    how: String,
}

/// Heuristic: the front is where the toes point from the ankles (weight 1), where
/// the knees bulge from the thigh-ankle line (0.5) and where the eyes sit from the
/// head (1). With A on the left, the front is `lateral × up`. When the geometry says
/// nothing, the names' sides decide; when they do not either, the rig faces +Z as
/// glTF says.
fn facing(
    rig: &Rig,
    frame: &BodyFrame,
    legs: &[Leg; 2],
    eyes: Option<(usize, usize)>,
    head: Option<usize>,
    span: f32,
) -> Facing {
    let front_if_a_left = frame.lateral.cross(Vec3::Y);
    let mut vote = 0.0;
    let mut cues = Vec::new();
    for leg in legs {
        if let Some(ankle) = leg.foot {
            let ahead: Vec<Vec3> = rig
                .subtree(ankle)
                .into_iter()
                .flat_map(|j| std::iter::once(rig.pos[j]).chain(rig.end[j]))
                .filter(|p| p.distance(rig.pos[ankle]) > rig.eps)
                .collect();
            if !ahead.is_empty() {
                let toward = ahead.iter().sum::<Vec3>() / ahead.len() as f32 - rig.pos[ankle];
                vote += horizontal(toward).dot(front_if_a_left) / span;
                cues.push("toes");
            }
        }
        if let (Some(u), Some(k), Some(a)) = (leg.upper, leg.lower, leg.foot) {
            let bulge = rig.pos[k] - (rig.pos[u] + rig.pos[a]) * 0.5;
            vote += 0.5 * horizontal(bulge).dot(front_if_a_left) / span;
        }
    }
    if let (Some((l, r)), Some(h)) = (eyes, head) {
        let toward = (rig.pos[l] + rig.pos[r]) * 0.5 - rig.pos[h];
        vote += horizontal(toward).dot(front_if_a_left) / span;
        cues.push("eyes");
    }
    cues.dedup();
    if vote.abs() > 2e-3 {
        let cue = if cues.is_empty() {
            "knees".to_owned()
        } else {
            cues.join(" and ")
        };
        return Facing {
            a_is_left: vote > 0.0,
            how: format!("from the {cue}"),
        };
    }
    let mut names = 0i32;
    for (leg, sign) in legs.iter().zip([1, -1]) {
        for &j in &leg.line {
            match rig.names[j].side {
                Some(Side::Left) => names += sign,
                Some(Side::Right) => names -= sign,
                _ => {}
            }
        }
    }
    if names != 0 {
        return Facing {
            a_is_left: names > 0,
            how: "from the names (the rest pose does not show the front)".to_owned(),
        };
    }
    Facing {
        a_is_left: front_if_a_left.z >= 0.0,
        how: "assumed +Z as glTF says (neither the rest pose nor the names show the front)"
            .to_owned(),
    }
}

fn direction_name(v: Vec3) -> String {
    let axes = [
        (Vec3::X, "+X"),
        (Vec3::NEG_X, "-X"),
        (Vec3::Z, "+Z"),
        (Vec3::NEG_Z, "-Z"),
    ];
    let (axis, name) = axes
        .iter()
        .copied()
        .max_by(|a, b| {
            a.0.dot(v)
                .partial_cmp(&b.0.dot(v))
                .unwrap_or(std::cmp::Ordering::Equal)
        })
        .unwrap_or((Vec3::Z, "+Z"));
    if axis.dot(v) > 0.996 {
        name.to_owned()
    } else {
        format!("({:+.2}, {:+.2})", v.x, v.z)
    }
}

// ---------------------------------------------------------------------------------
// Stages 8 and 9: spine, neck and head

/// Heuristic: the spine chain is every joint from the hips' body child to the arm
/// branch (coincident joints merged). One joint is the spine; two are spine and
/// chest (upper chest if so named); three or more are spine (first), chest (the middle one, or the one named
/// chest) and upper chest (the branch). When the arms hang from a joint named neck
/// (3ds Max Biped), that joint is the neck and the chain ends below it.
fn split_spine(rig: &Rig, chain: &[usize]) -> Vec<(HumanBone, usize, f32, String)> {
    let reps = rig.collapse(chain);
    let k = reps.len();
    let at = |bone, i: usize, conf, why: &str| (bone, reps[i], conf, why.to_owned());
    match k {
        0 => Vec::new(),
        1 => vec![at(B::Spine, 0, 0.8, "the only joint between hips and arms")],
        2 => {
            // A second joint named upper chest (with no chest) stays one.
            let named_upper = rig.names[reps[1]].role == Some(Role::UpperChest);
            let second = if named_upper { B::UpperChest } else { B::Chest };
            vec![
                at(B::Spine, 0, 0.8, "first joint above the hips"),
                at(second, 1, 0.8, "the arms and the head branch here"),
            ]
        }
        _ => {
            let named = (1..k - 1).filter(|&i| rig.names[reps[i]].role == Some(Role::Chest));
            let chest = match named.collect::<Vec<_>>().as_slice() {
                [only] => *only,
                _ => k / 2,
            };
            let conf = if k == 3 { 0.8 } else { 0.6 };
            vec![
                at(B::Spine, 0, 0.8, "first joint above the hips"),
                at(
                    B::Chest,
                    chest,
                    conf,
                    &format!("middle of the {k} spine joints"),
                ),
                at(
                    B::UpperChest,
                    k - 1,
                    0.8,
                    "the arms and the head branch here",
                ),
            ]
        }
    }
}

/// The neck and head found above the arm branch.
struct Neck {
    neck: Option<usize>,
    head: usize,
    /// An end nub dropped from the top of the chain.
    nub: Option<usize>,
}

/// Heuristic: the head chain climbs from the branch's head child through single
/// children (controls and helpers ignored) to the first fork or leaf: the head.
/// A leaf at the top of three or more joints without an end site, whose bone is 1.5
/// times the others or whose name says end, is the nub above the head (Mixamo's
/// `HeadTop_End`). With two or more joints left, the first is the neck.
fn solve_neck(rig: &Rig, branch: usize, head_root: usize) -> Neck {
    let mut line = vec![head_root];
    let mut j = head_root;
    while let [only] = rig.plain_kids(j).as_slice() {
        line.push(*only);
        j = *only;
    }
    let mut nub = None;
    if let [.., prev, last] = line.as_slice()
        && rig.kids[*last].is_empty()
        && rig.end[*last].is_none()
    {
        let mut below = vec![rig.pos[branch]];
        below.extend(line[..line.len() - 1].iter().map(|&x| rig.pos[x]));
        let segments: Vec<f32> = below.windows(2).map(|w| w[0].distance(w[1])).collect();
        let mean = segments.iter().sum::<f32>() / segments.len().max(1) as f32;
        let long = rig.pos[*last].distance(rig.pos[*prev]) >= 1.5 * mean && line.len() >= 3;
        let named = rig.names[*last].helper || rig.names[*last].role == Some(Role::HeadTop);
        if long || named {
            nub = Some(*last);
        }
    }
    if nub.is_some() {
        line.pop();
    }
    let reps = rig.collapse(&line);
    let named_head = reps
        .iter()
        .skip(1)
        .position(|&x| rig.names[x].role == Some(Role::Head))
        .map(|p| p + 1);
    let head_at = named_head.unwrap_or(reps.len().saturating_sub(1));
    let head = reps.get(head_at).copied().unwrap_or(head_root);
    let neck = (head_at > 0).then(|| reps[0]);
    Neck { neck, head, nub }
}

// ---------------------------------------------------------------------------------
// Stage 10: fingers

/// The left hand's bone for phalanx `k` (0..3) of finger `f` (0 thumb .. 4 little;
/// the right hand's are their mirror). Finger bones follow `leftThumbMetacarpal`
/// three by three in `HumanBone` order.
fn left_digit(f: usize, k: usize) -> Option<HumanBone> {
    HumanBone::from_index(B::LeftThumbMetacarpal.index() + 3 * f.min(4) + k.min(2))
}

const DIGIT_ROLES: [Role; 5] = [
    Role::Thumb,
    Role::Index,
    Role::Middle,
    Role::Ring,
    Role::Little,
];

/// One digit: its phalanges (up to three) and which finger it is (0 thumb .. 4
/// little).
struct Digit {
    joints: Vec<usize>,
    finger: usize,
    by_name: bool,
}

/// Heuristic: every leaf path below the hand is a digit (controls and attachments
/// left out); its phalanges are its last three joints, once coincident joints are
/// merged and an end nub dropped (a fourth joint past the third, unless the first
/// joint is a metacarpal: named so, or a bone 1.9 times the next, where a proximal
/// phalanx is about 1.6 times, or the last joint has an end site). Three or more digits are needed. Fingers are named by their
/// names when every digit has a distinct finger name; otherwise the thumb is the
/// digit starting nearest the hand (by a clear margin, or always with five digits)
/// and the others are ordered from the thumb's side (index) away (little).
fn solve_fingers(rig: &Rig, hand: usize, front: Vec3) -> Vec<Digit> {
    let mut paths: Vec<Vec<usize>> = Vec::new();
    for start in rig.body_kids(hand) {
        for leaf in rig.subtree(start) {
            if !rig.kids[leaf].is_empty() {
                continue;
            }
            let path = rig.path(start, leaf);
            // End nubs are dropped below; controls and attachments are not digits.
            if path.iter().all(|&x| !rig.avoid(x) || rig.names[x].helper) {
                paths.push(path);
            }
        }
    }
    let mut digits: Vec<Vec<usize>> = paths.iter().map(|p| phalanges(rig, p)).collect();
    digits.retain(|d| !d.is_empty());
    if digits.len() > 5 {
        digits.retain(|d| d.len() >= 2);
        digits.sort_by(|a, b| {
            let len = |d: &Vec<usize>| rig.pos[d[0]].distance(rig.pos[d[d.len() - 1]]);
            len(b)
                .partial_cmp(&len(a))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        digits.truncate(5);
    }
    if digits.len() < 3 {
        return Vec::new();
    }
    let hand_pos = rig.pos[hand];
    // By name, when every digit names a different finger.
    let named: Vec<Option<usize>> = digits
        .iter()
        .map(|d| {
            d.iter().find_map(|&j| {
                rig.names[j]
                    .role
                    .and_then(|r| DIGIT_ROLES.iter().position(|&x| x == r))
            })
        })
        .collect();
    let mut distinct: Vec<usize> = named.iter().flatten().copied().collect();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() == digits.len() && named.iter().all(Option::is_some) {
        return digits
            .into_iter()
            .zip(named)
            .filter_map(|(joints, f)| {
                f.map(|finger| Digit {
                    joints,
                    finger,
                    by_name: true,
                })
            })
            .collect();
    }
    // By geometry: the thumb starts nearest the hand.
    let start: Vec<f32> = digits
        .iter()
        .map(|d| rig.pos[d[0]].distance(hand_pos))
        .collect();
    let nearest = (0..digits.len()).min_by(|&a, &b| {
        start[a]
            .partial_cmp(&start[b])
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let mut sorted = start.clone();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    // The median start of the digits other than the nearest one.
    let median_other = sorted
        .get(1 + (sorted.len() - 1) / 2)
        .copied()
        .unwrap_or(0.0);
    let thumb = nearest.filter(|&t| digits.len() == 5 || start[t] <= 0.75 * median_other);
    let fingers: Vec<usize> = (0..digits.len()).filter(|&i| Some(i) != thumb).collect();
    let along = (fingers.iter().map(|&i| rig.pos[digits[i][0]]).sum::<Vec3>()
        / fingers.len().max(1) as f32
        - hand_pos)
        .normalize_or_zero();
    let toward_thumb = match thumb {
        Some(t) => (rig.pos[digits[t][0]] - hand_pos).reject_from(along),
        None => front.reject_from(along),
    }
    .normalize_or_zero();
    let mut order = fingers.clone();
    order.sort_by(|&a, &b| {
        let s = |i: usize| (rig.pos[digits[i][0]] - hand_pos).dot(toward_thumb);
        s(b).partial_cmp(&s(a)).unwrap_or(std::cmp::Ordering::Equal)
    });
    let mut out = Vec::new();
    let mut slots = digits.into_iter().map(Some).collect::<Vec<_>>();
    if let Some(t) = thumb
        && let Some(joints) = slots[t].take()
    {
        out.push(Digit {
            joints,
            finger: 0,
            by_name: false,
        });
    }
    for (rank, i) in order.into_iter().take(4).enumerate() {
        if let Some(joints) = slots[i].take() {
            out.push(Digit {
                joints,
                finger: rank + 1,
                by_name: false,
            });
        }
    }
    out
}

/// The phalanges of one leaf path below the hand (see `solve_fingers`).
fn phalanges(rig: &Rig, path: &[usize]) -> Vec<usize> {
    let mut joints = rig.collapse(path);
    while joints.last().is_some_and(|&j| rig.names[j].helper) {
        joints.pop();
    }
    while joints.len() > 2
        && joints
            .first()
            .is_some_and(|&j| rig.names[j].role == Some(Role::Metacarpal))
    {
        joints.remove(0);
    }
    if joints.len() >= 4 {
        let n = joints.len();
        let last = joints[n - 1];
        let first_bone = rig.pos[joints[0]].distance(rig.pos[joints[1]]);
        let second_bone = rig.pos[joints[1]].distance(rig.pos[joints[2]]);
        let metacarpal = rig.names[joints[0]].role == Some(Role::Metacarpal)
            || first_bone >= 1.9 * second_bone
            || rig.end[last].is_some();
        if !metacarpal && rig.kids[last].is_empty() {
            joints.pop();
        }
    }
    let n = joints.len();
    joints.split_off(n.saturating_sub(3))
}

// ---------------------------------------------------------------------------------
// Stage 11: face

/// Heuristic: eyes are joints below the head named eye (not brow, lid or lash),
/// the non-helper nearest the head on each side; without such names, the only pair
/// of the head's plain leaf children sitting mirrored about it, above it.
/// The jaw is the nearest joint below the head named jaw.
fn solve_face(
    rig: &Rig,
    head: usize,
    frame: &BodyFrame,
) -> (Option<(usize, usize, bool)>, Option<usize>) {
    let below = rig.subtree(head);
    let depth_of = |j: usize| rig.path(head, j).len();
    let pick = |role: Role, side: Option<f32>| {
        below
            .iter()
            .copied()
            .filter(|&j| j != head && rig.names[j].role == Some(role) && rig.pref(j) > -0.9)
            .filter(|&j| {
                side.is_none_or(|s| {
                    (frame.lateral_of(rig.pos[j]) - frame.lateral_of(rig.pos[head])) * s > 0.0
                })
            })
            .min_by_key(|&j| (rig.names[j].helper, depth_of(j), j))
    };
    let jaw = pick(Role::Jaw, None);
    if let (Some(a), Some(b)) = (pick(Role::Eye, Some(1.0)), pick(Role::Eye, Some(-1.0))) {
        return (Some((a, b, true)), jaw);
    }
    let leaves: Vec<usize> = rig
        .plain_kids(head)
        .into_iter()
        .filter(|&c| rig.kids[c].is_empty())
        .collect();
    let centre = frame.lateral_of(rig.pos[head]);
    let mut pairs = Vec::new();
    for (i, &x) in leaves.iter().enumerate() {
        for &y in &leaves[i + 1..] {
            let (lx, ly) = (
                frame.lateral_of(rig.pos[x]) - centre,
                frame.lateral_of(rig.pos[y]) - centre,
            );
            let apart = (lx - ly).abs();
            let mirrored = apart > rig.eps
                && (lx + ly).abs() < 0.25 * apart
                && (rig.pos[x].y - rig.pos[y].y).abs() < 0.25 * apart
                && rig.pos[x].y >= rig.pos[head].y;
            if mirrored {
                pairs.push(if lx > 0.0 {
                    (x, y, false)
                } else {
                    (y, x, false)
                });
            }
        }
    }
    let pair = match pairs.as_slice() {
        [only] => Some(*only),
        _ => None,
    };
    (pair, jaw)
}

/// Heuristic: 3ds Max Biped hangs the thighs from `Bip01 Spine`, below which
/// `Bip01 Pelvis` is the only parent. When the joint where legs and body meet is
/// named spine and its parent, close by (but not in the same place: that is an
/// offset node) with no other child, is named pelvis or hips, the parent is the hips
/// and the joint the first spine joint.
fn pelvis_above(rig: &Rig, pelvis: &Pelvis) -> Option<usize> {
    let parent = rig.skeleton.parent(pelvis.hips)?;
    let named = rig.names[pelvis.hips].role == Some(Role::Spine)
        && rig.names[parent].role == Some(Role::Hips);
    let alone = rig.kids[parent].len() == 1;
    let apart = rig.pos[parent].distance(rig.pos[pelvis.hips]);
    let near = apart > rig.eps && apart <= 0.3 * pelvis.span;
    (named && alone && near).then_some(parent)
}

// ---------------------------------------------------------------------------------
// Assembly

/// Builds the whole body from one hips candidate, stage by stage.
fn assemble(rig: &Rig, pelvis: &Pelvis) -> Body {
    let mut body = Body::default();
    let span = pelvis.span;

    // Legs, and the frame they give.
    let lines = pelvis.legs.map(|root| follow_down(rig, root, span));
    let knees = [
        rough_knee(rig, &lines[0], pelvis),
        rough_knee(rig, &lines[1], pelvis),
    ];
    let Some(rough) = (match knees {
        [Some(a), Some(b)] => BodyFrame::from_pairs(&[(rig.pos[a], rig.pos[b])]),
        _ => None,
    }) else {
        body.fail(format!(
            "legs `{}` and `{}` are not side by side",
            rig.name(pelvis.legs[0]),
            rig.name(pelvis.legs[1])
        ));
        return body;
    };
    let rough_knee_lateral = rough.hip_half;
    let legs = lines.map(|line| solve_leg(rig, line, &rough));
    let pairs: Vec<(Vec3, Vec3)> = [
        (legs[0].upper, legs[1].upper),
        (legs[0].lower, legs[1].lower),
        (legs[0].foot, legs[1].foot),
    ]
    .into_iter()
    .filter_map(|pair| match pair {
        (Some(a), Some(b)) => Some((rig.pos[a], rig.pos[b])),
        _ => None,
    })
    .collect();
    let mut frame = BodyFrame::from_pairs(&pairs).unwrap_or(rough);
    frame.rough_knee_lateral = rough_knee_lateral;
    if frame.hip_half < 0.02 * span {
        frame.hip_half = rough_knee_lateral;
    }

    // Arms and head.
    let branch = match find_arm_branch(rig, pelvis, &frame) {
        Ok(b) => Some(b),
        Err(e) => {
            body.fail(e);
            None
        }
    };
    let arms = branch
        .as_ref()
        .map(|b| b.arms.map(|root| solve_arm(rig, root, b.branch, &frame)));
    let neck = branch
        .as_ref()
        .and_then(|b| b.head.map(|h| solve_neck(rig, b.branch, h)));
    let face = neck.as_ref().map(|n| solve_face(rig, n.head, &frame));
    let eyes = face.as_ref().and_then(|f| f.0).map(|(a, b, _)| (a, b));

    // Sides.
    let facing = facing(
        rig,
        &frame,
        &legs,
        eyes,
        neck.as_ref().map(|n| n.head),
        span,
    );
    let front = if facing.a_is_left {
        frame.lateral.cross(Vec3::Y)
    } else {
        -frame.lateral.cross(Vec3::Y)
    };
    body.notes
        .push(format!("faces {} ({})", direction_name(front), facing.how));
    let side_of = |a_side: bool| {
        if a_side == facing.a_is_left {
            Side::Left
        } else {
            Side::Right
        }
    };
    let biped_pelvis = pelvis_above(rig, pelvis);
    let hips = biped_pelvis.unwrap_or(pelvis.hips);
    let mut above = Vec::new();
    let mut up = rig.skeleton.parent(hips);
    while let Some(p) = up {
        above.push(rig.name(p));
        up = rig.skeleton.parent(p);
    }
    if !above.is_empty() {
        above.reverse();
        body.notes.push(format!(
            "{} node(s) above the hips ignored (`{}`)",
            above.len(),
            above.join("`, `")
        ));
    }

    // Hips.
    let mut why = vec![format!(
        "legs `{}` and `{}` and the body `{}` meet here",
        rig.name(pelvis.legs[0]),
        rig.name(pelvis.legs[1]),
        rig.name(pelvis.spine_root)
    )];
    if let Some(b) = pelvis.leg_branch {
        why.push(format!("the legs hang from `{}` just below", rig.name(b)));
    }
    if biped_pelvis.is_some() {
        why = vec![format!(
            "named so, right above `{}` where legs and body meet (as in 3ds Max Biped)",
            rig.name(pelvis.hips)
        )];
    }
    body.put(rig, B::Hips, hips, 0.8, why);

    // Legs.
    for (i, leg) in legs.iter().enumerate() {
        let side = side_of(i == 0);
        let bone = |b: HumanBone| if side == Side::Left { b } else { b.mirrored() };
        let side_word = if side == Side::Left { "left" } else { "right" };
        if let Some(p) = &leg.problem {
            body.fail(p.clone());
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
            (
                leg.foot,
                B::LeftFoot,
                0.85,
                "first joint below half the knee's height",
            ),
            (leg.toes, B::LeftToes, 0.75, "the joint after the ankle"),
        ];
        for (joint, b, conf, why) in parts {
            if let Some(j) = joint {
                body.put(
                    rig,
                    bone(b),
                    j,
                    conf,
                    vec![
                        why.to_owned(),
                        format!("{side_word} of the midline ({})", facing.how),
                    ],
                );
            }
        }
    }

    let Some(branch) = branch else {
        return body;
    };

    // Spine.
    let mut chain = rig.path(pelvis.spine_root, branch.branch);
    if biped_pelvis.is_some() {
        chain.insert(0, pelvis.hips);
    }
    let arms_from_neck = rig.names[branch.branch].role == Some(Role::Neck) && chain.len() >= 2;
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

    // Neck and head.
    match &neck {
        None => body.fail(format!(
            "no head: nothing goes up from `{}`, where the arms branch",
            rig.name(branch.branch)
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
                    branch.branch,
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
    if let Some((eyes, jaw)) = face {
        if let Some((a, b, by_name)) = eyes {
            let (left, right) = if facing.a_is_left { (a, b) } else { (b, a) };
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

    // Arms, hands and fingers.
    let Some(arms) = arms else {
        return body;
    };
    for (i, arm) in arms.iter().enumerate() {
        let side = side_of(i == 0);
        let bone = |b: HumanBone| if side == Side::Left { b } else { b.mirrored() };
        let side_word = if side == Side::Left { "left" } else { "right" };
        let arm = match arm {
            Ok(a) => a,
            Err(e) => {
                body.fail(e.clone());
                continue;
            }
        };
        let fit = (0.9 - 0.15 * arm.cost).clamp(0.55, 0.88);
        let where_ = format!("{side_word} of the midline ({})", facing.how);
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
        let hand_why = if arm.hand_fork {
            "the fingers fork here"
        } else {
            "end of the forearm"
        };
        body.put(
            rig,
            bone(B::LeftHand),
            arm.hand,
            fit,
            vec![hand_why.to_owned(), where_.clone()],
        );
        for digit in solve_fingers(rig, arm.hand, front) {
            let (conf, why) = match (digit.by_name, digit.finger) {
                (true, _) => (0.8, "digit of the hand, named so"),
                (false, 0) => (0.7, "the digit starting nearest the wrist: the thumb"),
                (false, _) => (0.65, "digits ordered from the thumb's side"),
            };
            for (k, &j) in digit.joints.iter().enumerate() {
                if let Some(b) = left_digit(digit.finger, k) {
                    body.put(rig, bone(b), j, conf, vec![why.to_owned()]);
                }
            }
        }
    }
    // Names on the limbs all on the other side: say so once.
    let mirrored = body
        .bones
        .iter()
        .filter(|(b, f)| {
            b.side() != Side::Centre && rig.names[f.joint].side.is_some_and(|s| s != b.side())
        })
        .count();
    if mirrored * 2
        > body
            .bones
            .keys()
            .filter(|b| b.side() != Side::Centre)
            .count()
    {
        body.notes
            .push("left and right are swapped in the names; sides follow the geometry".to_owned());
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skeleton::{Joint, Transform};

    /// A skeleton from `(name, parent, model-space position)`, parents first.
    fn skeleton(table: &[(&str, Option<&str>, [f32; 3])]) -> Skeleton {
        let at = |name: &str| table.iter().position(|(n, ..)| *n == name);
        let joints = table
            .iter()
            .map(|&(name, parent, p)| {
                let parent = parent.and_then(at);
                let from = parent.map_or(Vec3::ZERO, |i| Vec3::from(table[i].2));
                Joint {
                    name: name.to_owned(),
                    parent,
                    rest: Transform::from_translation(Vec3::from(p) - from),
                    end: None,
                }
            })
            .collect();
        Skeleton::new(joints).unwrap()
    }

    /// A T-pose humanoid facing +Z (or -Z, turned 180 degrees) under two transform
    /// nodes, with a nub above the head; `left`/`right` prefix the limb names.
    fn small_humanoid(facing_minus_z: bool, left: &str, right: &str) -> Skeleton {
        let turn = |[x, y, z]: [f32; 3]| {
            if facing_minus_z {
                [-x, y, -z]
            } else {
                [x, y, z]
            }
        };
        let mut table: Vec<(String, Option<String>, [f32; 3])> = vec![
            ("Scene".into(), None, [0.0, 0.0, 0.0]),
            ("Armature".into(), Some("Scene".into()), [0.0, 0.0, 0.0]),
            ("n_hips".into(), Some("Armature".into()), [0.0, 1.0, 0.0]),
            ("n_spine".into(), Some("n_hips".into()), [0.0, 1.1, 0.0]),
            ("n_chest".into(), Some("n_spine".into()), [0.0, 1.3, 0.0]),
            ("n_neck".into(), Some("n_chest".into()), [0.0, 1.45, 0.0]),
            ("n_head".into(), Some("n_neck".into()), [0.0, 1.55, 0.0]),
            ("n_top".into(), Some("n_head".into()), [0.0, 1.78, 0.0]),
        ];
        for (prefix, x) in [(left, 1.0f32), (right, -1.0)] {
            let limb = [
                ("arm", "n_chest", [0.18, 1.4, 0.0]),
                ("forearm", "arm", [0.46, 1.4, 0.0]),
                ("hand", "forearm", [0.71, 1.4, 0.0]),
                ("thigh", "n_hips", [0.1, 0.95, 0.0]),
                ("shin", "thigh", [0.1, 0.5, 0.0]),
                ("foot", "shin", [0.1, 0.08, 0.0]),
                ("toe", "foot", [0.1, 0.0, 0.12]),
            ];
            for (name, parent, [px, py, pz]) in limb {
                let parent = if parent.starts_with("n_") {
                    parent.to_owned()
                } else {
                    format!("{prefix}{parent}")
                };
                table.push((format!("{prefix}{name}"), Some(parent), [x * px, py, pz]));
            }
        }
        let table: Vec<(&str, Option<&str>, [f32; 3])> = table
            .iter()
            .map(|(n, p, pos)| (n.as_str(), p.as_deref(), turn(*pos)))
            .collect();
        skeleton(&table)
    }

    fn joint_of(r: &RecognizedMap, bone: HumanBone) -> &str {
        r.map.bones.get(&bone).map_or("", String::as_str)
    }

    #[test]
    fn hips_are_where_legs_and_body_meet_and_an_end_nub_is_not_the_head() {
        let r = recognize(&small_humanoid(false, "a_", "b_"))
            .into_humanoid()
            .unwrap();
        assert_eq!(joint_of(&r, B::Hips), "n_hips");
        assert!(
            r.notes.iter().any(|n| n.contains("`Scene`, `Armature`")),
            "{:?}",
            r.notes
        );
        assert_eq!(joint_of(&r, B::Neck), "n_neck");
        assert_eq!(joint_of(&r, B::Head), "n_head");
    }

    #[test]
    fn sides_follow_the_toes_not_the_names() {
        // `small_humanoid(_, l, r)` puts `l` limbs on the character's left, whichever
        // way it faces; swapping the prefixes mirrors the names.
        for facing_minus_z in [false, true] {
            for (l, r, mirrored) in [("Left_", "Right_", false), ("Right_", "Left_", true)] {
                let s = small_humanoid(facing_minus_z, l, r);
                let got = recognize(&s).into_humanoid().unwrap();
                assert_eq!(joint_of(&got, B::LeftUpperLeg), format!("{l}thigh"));
                assert_eq!(joint_of(&got, B::RightHand), format!("{r}hand"));
                let said = got.notes.iter().any(|n| n.contains("swapped"));
                assert_eq!(said, mirrored, "{:?}", got.notes);
                let faces = if facing_minus_z {
                    "faces -Z"
                } else {
                    "faces +Z"
                };
                assert!(
                    got.notes.iter().any(|n| n.starts_with(faces)),
                    "{:?}",
                    got.notes
                );
            }
        }
    }

    #[test]
    fn fourth_finger_joint_is_a_nub_unless_the_first_is_a_metacarpal() {
        // A proximal phalanx is about 1.6 times the next bone, a metacarpal twice.
        for (bones, want) in [
            ([0.045, 0.025, 0.02], ["f1", "f2", "f3"]),
            ([0.09, 0.045, 0.025], ["f2", "f3", "f4"]),
        ] {
            let x1 = 0.01;
            let x2 = x1 + bones[0];
            let x3 = x2 + bones[1];
            let x4 = x3 + bones[2];
            let s = skeleton(&[
                ("hand", None, [0.0, 0.0, 0.0]),
                ("f1", Some("hand"), [x1, 0.0, 0.0]),
                ("f2", Some("f1"), [x2, 0.0, 0.0]),
                ("f3", Some("f2"), [x3, 0.0, 0.0]),
                ("f4", Some("f3"), [x4, 0.0, 0.0]),
            ]);
            let rig = Rig::new(&s);
            let got: Vec<&str> = phalanges(&rig, &[1, 2, 3, 4])
                .into_iter()
                .map(|j| rig.name(j))
                .collect();
            assert_eq!(got, want, "bones {bones:?}");
        }
    }

    #[test]
    fn names_split_into_words() {
        let cases: [(&str, &[&str]); 8] = [
            ("mixamorig:LeftUpLeg", &["left", "up", "leg"]),
            ("J_Bip_L_UpperArm", &["j", "bip", "l", "upper", "arm"]),
            ("LThumb", &["l", "thumb"]),
            ("lShldr", &["l", "shldr"]),
            ("Bip01 L UpperArm", &["bip", "01", "l", "upper", "arm"]),
            (
                "Skeleton_arm_joint_L__4_",
                &["skeleton", "arm", "joint", "l", "4"],
            ),
            ("Armature|DEF-upper_arm.L", &["def", "upper", "arm", "l"]),
            ("toe1-1.L", &["toe", "1", "1", "l"]),
        ];
        for (name, words) in cases {
            let base = name.rsplit([':', '|']).next().unwrap_or(name);
            assert_eq!(split_words(base), words.join(" "), "{name}");
        }
    }

    #[test]
    fn names_give_roles_and_sides() {
        let cases = [
            (
                "mixamorig:LeftForeArm",
                Some(Role::LowerArm),
                Some(Side::Left),
            ),
            ("J_Bip_R_UpperArm", Some(Role::UpperArm), Some(Side::Right)),
            ("upperarm_l", Some(Role::UpperArm), Some(Side::Left)),
            ("calf_r", Some(Role::LowerLeg), Some(Side::Right)),
            ("DEF-upper_arm.L", Some(Role::UpperArm), Some(Side::Left)),
            ("Bip01 L Clavicle", Some(Role::Clavicle), Some(Side::Left)),
            ("lShldr", Some(Role::Shoulder), Some(Side::Left)),
            ("LeftHandIndex1", Some(Role::Index), Some(Side::Left)),
            ("UpperArmL", Some(Role::UpperArm), Some(Side::Left)),
            ("LHipJoint", Some(Role::HipSide), Some(Side::Left)),
            ("hip", Some(Role::Hips), None),
            ("L5", Some(Role::Spine), None),
            ("T12", Some(Role::Spine), None),
            ("HeadTop_End", Some(Role::HeadTop), None),
            ("LeftForeFoot", Some(Role::Toes), Some(Side::Left)),
            ("lMid1", Some(Role::Middle), Some(Side::Left)),
            ("J_Adj_L_FaceEye", Some(Role::Eye), Some(Side::Left)),
        ];
        for (name, role, side) in cases {
            let info = NameInfo::parse(name);
            assert_eq!((info.role, info.side), (role, side), "{name}");
        }
        assert!(NameInfo::parse("upper_arm_ik.L").preference < -0.5);
        assert!(NameInfo::parse("handslot.l").preference < -0.5);
        assert!(NameInfo::parse("LeftToe_End").helper);
        assert!(NameInfo::parse("DEF-thigh.L").preference > 0.0);
    }
}
