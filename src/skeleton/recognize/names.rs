//! What a joint's name says: its words (`split_words`), the role and side they give
//! (`NameInfo::parse`), and how a role sits with a humanoid bone (`agreement`).
//!
//! Exporter prefixes (`mixamorig:`, `Bip01`, `J_Bip_`, `Armature|`), separators,
//! case changes and numeric suffixes are taken apart here; control rigs, helper
//! joints and attachments are told by their words. Rigs named in French (`epaule_L`,
//! `coude_L`, `poignet_L`, `machoire`, `arme`) are read by whole words. Names only
//! steer the geometric stages and raise or lower the confidence; they never decide a
//! side alone.

use std::sync::LazyLock;

use crate::humanoid::HumanBone as B;
use crate::humanoid::{HumanBone, Side};

use super::rest_joints::RestJoints;

/// What a joint's name says, after normalizing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
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

/// Name fragments of the jaw.
const JAW_WORDS: &[&str] = &["jaw", "mandible"];

/// Name fragments and the role they give, first match wins (so `upperarm` is seen
/// before `arm`, `forefoot` before `foot`, finger names before `hand`, a metacarpal
/// before a finger's name but after the thumb's).
const ROLE_WORDS: &[(&[&str], Role)] = &[
    (&["headtop", "headend", "headnub"], Role::HeadTop),
    (
        // `eyerid`: an eyelid as Japanese-made rigs often spell it.
        &[
            "eyebrow",
            "eyelid",
            "eyerid",
            "eyelash",
            "eyetarget",
            "eyeaim",
        ],
        Role::Face,
    ),
    (&["eye"], Role::Eye),
    (JAW_WORDS, Role::Jaw),
    (&["thumb", "pollex"], Role::Thumb),
    // Before the fingers: UE5's `index_metacarpal_l` is no finger bone (the
    // thumb's metacarpal is a humanoid bone: `thumb` comes first).
    (&["metacarpal", "carpal", "palm"], Role::Metacarpal),
    (&["index", "pointer", "forefinger"], Role::Index),
    (&["middle"], Role::Middle),
    (&["ring"], Role::Ring),
    (&["pinky", "pinkie", "little"], Role::Little),
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

/// French words and their roles, matched as whole words (`coude_L_010`, `tete`): as
/// fragments they would be found inside other names (`cou` in `couple`), and `arme`
/// (a weapon) would read as `arm`. `pied` (the foot, or the ball of the foot) and
/// `main` (the hand, or a rig's `Main` root) are left out: either reading is common.
const FRENCH_WORDS: &[(&[&str], Role)] = &[
    (&["bassin"], Role::Hips),
    (&["hanche"], Role::Hips),
    (&["colonne"], Role::Spine),
    (&["poitrine", "torse"], Role::Chest),
    (&["cou"], Role::Neck),
    (&["tete", "tête"], Role::Head),
    (&["machoire", "mâchoire"], Role::Jaw),
    (&["oeil", "œil", "yeux"], Role::Eye),
    (&["clavicule"], Role::Clavicle),
    (&["epaule", "épaule"], Role::Shoulder),
    (&["bras"], Role::Arm),
    (&["coude"], Role::LowerArm),
    (&["poignet"], Role::Hand),
    (&["pouce"], Role::Thumb),
    (&["doigt"], Role::Finger),
    (&["cuisse"], Role::UpperLeg),
    (&["jambe"], Role::Leg),
    (&["genou"], Role::LowerLeg),
    (&["cheville"], Role::Foot),
    (&["orteil"], Role::Toes),
];

/// French words of what hangs on a body without being part of it, whole words.
const FRENCH_ATTACHMENTS: &[&str] = &["arme", "epee", "épée", "bouclier"];

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

/// Words of control rigs (IK/FK chains, targets, joints aimed at a target by a
/// constraint: `aim`, Blender's Track To as in Auto-Rig Pro's `c_eye_ref_track.l`
/// beside the eye `c_eye.l`): never the deforming joint.
const CONTROL_WORDS: &[&str] = &[
    "ik", "fk", "ctrl", "ctl", "control", "mch", "org", "pole", "target", "tgt", "ikfk", "aim",
    "track", "locator", "loc",
];

/// Words of helper joints: ends, nubs, twist and roll bones (`endsite`: a BVH End Site
/// written as a node of its own, `ENDSITE`, by converters to glTF; `share`: Character
/// Creator's skinning helpers beside a joint, `CC_Base_L_ToeBaseShareBone` beside
/// `CC_Base_L_ToeBase`, which carries the toes).
const HELPER_WORDS: &[&str] = &[
    "end",
    "share",
    "endsite",
    "fin",
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

/// Name fragments of what hangs on a body without being part of it (`rigmesh`:
/// MotionBuilder's proxy geometry, a leaf beside each bone; `equip`: the joints
/// games hang weapons from, `equip_right_hand` beside a biped's fingers; `hold`: the
/// point held items hang from, `hold.l` in the palm among the fingers).
const ATTACHMENT_PARTS: &[&str] = &[
    "weapon", "sword", "gun", "shield", "holster", "prop", "slot", "socket", "attach", "camera",
    "equip", "hair", "skirt", "tail", "cape", "cloth", "breast", "bust", "ribbon", "spring",
    "physics", "dress", "robe", "rigmesh", "hold",
];

/// What one joint's name says.
#[derive(Debug, Clone, Default)]
pub(crate) struct NameInfo {
    /// The side the name claims (`Left`/`Right` only).
    pub(super) side: Option<Side>,
    pub(super) role: Option<Role>,
    /// How strongly the name argues for a deforming body joint: negative for
    /// controls and attachments, positive for `DEF-`.
    pub(super) preference: f32,
    /// An end nub, twist or roll bone, or a `__X` parent of `X`.
    pub(super) helper: bool,
    /// An end nub (`_end`, `_fin`, `_nub`, `HeadTop_End`): where a bone ends.
    pub(crate) nub: bool,
    /// A twist or roll bone (`upperarm_twist_01_l`, `CC_Base_NeckTwist01`).
    pub(super) twist: bool,
    /// Named for what hangs on the body (`ATTACHMENT_PARTS`, `FRENCH_ATTACHMENTS`):
    /// a hat's slot, a weapon, hair.
    pub(super) attachment: bool,
    /// Named as a control (`CONTROL_WORDS`: `FK_back2_jnt`, `upper_arm_ik.L`).
    pub(super) control: bool,
    /// The normalized words, joined by single spaces (to spot `__X` above `X`).
    pub(super) key: String,
}

impl NameInfo {
    /// Normalizes a joint name: namespace prefixes (`mixamorig:`, `Armature|`) cut,
    /// words split at separators, case changes and digits, noise words dropped.
    pub(crate) fn parse(name: &str) -> NameInfo {
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
        // The role of a whole French word, and whether one names an attachment.
        let mut french = None;
        let mut french_attachment = false;
        for w in key.split(' ') {
            if matches!(w, "l" | "left" | "lft" | "gauche") {
                info.side = Some(Side::Left);
            } else if matches!(w, "r" | "right" | "rt" | "rgt" | "droite" | "droit") {
                info.side = Some(Side::Right);
            } else if let Some(&(_, role)) = FRENCH_WORDS.iter().find(|(ws, _)| ws.contains(&w)) {
                french.get_or_insert(role);
            } else if FRENCH_ATTACHMENTS.contains(&w) {
                french_attachment = true;
            } else if w.chars().all(|c| c.is_ascii_digit()) || NOISE_WORDS.contains(&w) {
            } else if matches!(w, "def" | "deform") {
                info.preference += 0.3;
            } else if CONTROL_WORDS.contains(&w) || matches!(w, "sec" | "ear") {
                info.preference -= 1.0;
                info.control |= CONTROL_WORDS.contains(&w);
            } else if let Some(stem) = w.strip_suffix("endsite").filter(|s| !s.is_empty()) {
                // An End Site written as a joint, named after the joint it closes with
                // the word glued on (`Headendsite_x_joint`): a nub, whatever the stem.
                info.helper = true;
                info.nub = true;
                joined.push_str(stem);
            } else if HELPER_WORDS.contains(&w) {
                info.helper = true;
                info.nub |= matches!(w, "end" | "endsite" | "fin" | "nub");
                info.twist |= matches!(w, "twist" | "roll");
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
        if attachment || french_attachment {
            info.preference -= 1.0;
            info.attachment = true;
        }
        info.role = if says_mid {
            Some(Role::Middle)
        } else {
            role.or(french)
        };
        if info.role == Some(Role::Hips) && info.side.is_some() {
            info.role = Some(Role::HipSide);
        }
        info.nub |= info.role == Some(Role::HeadTop);
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
/// decides, not position), and whether an attachment fragment is in it. An
/// attachment fragment inside a role fragment is part of that word, no attachment:
/// `hold` in `shoulder`.
fn find_fragments(joined: &str) -> (Option<Role>, bool) {
    let bytes = joined.as_bytes();
    let mut first: Option<usize> = None;
    let mut roles: Vec<(usize, usize)> = Vec::new();
    let mut attachments: Vec<(usize, usize)> = Vec::new();
    for (i, b) in bytes.iter().enumerate() {
        let Some(candidates) = FRAGMENTS.get(usize::from(b.wrapping_sub(b'a'))) else {
            continue;
        };
        for &(fragment, entry) in candidates {
            if bytes[i..].starts_with(fragment.as_bytes()) {
                let span = (i, i + fragment.len());
                match entry {
                    Some(e) => {
                        first = Some(first.map_or(e, |f| f.min(e)));
                        roles.push(span);
                    }
                    None => attachments.push(span),
                }
            }
        }
    }
    let attachment = attachments
        .iter()
        .any(|&(a, b)| !roles.iter().any(|&(s, e)| s <= a && b <= e));
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
pub(super) fn kind(bone: HumanBone) -> &'static str {
    let name = bone.name();
    name.strip_prefix("left")
        .or_else(|| name.strip_prefix("right"))
        .unwrap_or(name)
}

/// Which of two stacked parts a name says: `JawUp_048` / `JawLow_057`,
/// `CC_Base_UpperJaw`, `lowerJaw`, `jaw_bottom`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Level {
    Upper,
    Lower,
}

/// Words saying the upper part (`u` alone: `Jaw_U`), then the lower one.
const LEVEL_WORDS: [(&[&str], Level); 2] = [
    (
        &["up", "upper", "upr", "top", "u", "superior"],
        Level::Upper,
    ),
    (
        &[
            "low", "lower", "lo", "lwr", "bottom", "bot", "btm", "down", "dn", "inferior",
        ],
        Level::Lower,
    ),
];

/// The level a jaw's name says: a word of the name, or what is glued to the jaw's
/// word inside one (`jawup`, `upperjaw`: names written without separators or in
/// one case). `None` when the name says neither or both.
pub(super) fn jaw_level(info: &NameInfo) -> Option<Level> {
    let mut found = None;
    for w in info.key.split(' ') {
        let rest = JAW_WORDS
            .iter()
            .find(|part| w.contains(*part))
            .map_or_else(|| w.to_owned(), |part| w.replacen(part, "", 1));
        let level = LEVEL_WORDS
            .iter()
            .find(|(words, _)| words.contains(&rest.as_str()))
            .map(|&(_, level)| level);
        match (found, level) {
            (_, None) => {}
            (None, Some(l)) => found = Some(l),
            (Some(f), Some(l)) if f != l => return None,
            _ => {}
        }
    }
    found
}

/// How a name's role sits with a bone: 2 says exactly that bone, 1 is compatible,
/// 0 says nothing, -1 says something else.
pub(super) fn agreement(role: Role, bone: HumanBone) -> i8 {
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
pub(super) fn name_cost(rig: &RestJoints, joint: usize, bone: HumanBone) -> f32 {
    role_cost(rig.names[joint].role, bone)
}

/// `name_cost` for a name read as `role` (a role the name's context settles).
pub(super) fn role_cost(role: Option<Role>, bone: HumanBone) -> f32 {
    match role.map(|r| agreement(r, bone)) {
        Some(2) => -0.3,
        Some(1) => -0.1,
        Some(-1) => 0.3,
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn an_attachment_word_inside_a_body_word_names_no_attachment() {
        // `hold` (the point held items hang from) is in `shoulder`: every rig's
        // shoulders read as attachments, never part of the body when there is a
        // choice, nor of the figure's height.
        for name in [
            "mixamorig:LeftShoulder",
            "Shoulder.R",
            "J_Bip_L_Shoulder",
            "shoulder_l",
        ] {
            let info = NameInfo::parse(name);
            assert_eq!(info.role, Some(Role::Shoulder), "{name}");
            assert!(info.preference > -0.25, "{name}: {}", info.preference);
        }
        // Beside a body word, the attachment word still counts.
        assert!(NameInfo::parse("shoulder_hold.L").preference < -0.25);
        assert!(NameInfo::parse("hand_slot.L").preference < -0.25);
    }

    #[test]
    fn jaw_names_say_their_level() {
        let cases = [
            ("JawUp_048", Some(Level::Upper)),
            ("JawLow_057", Some(Level::Lower)),
            ("CC_Base_UpperJaw", Some(Level::Upper)),
            ("lowerJaw", Some(Level::Lower)),
            ("upperjaw", Some(Level::Upper)),
            ("jaw_bottom", Some(Level::Lower)),
            ("Jaw_U", Some(Level::Upper)),
            ("CC_Base_JawRoot", None),
            ("DEF-jaw.L", None),
            ("jaw_up_low", None),
        ];
        for (name, level) in cases {
            assert_eq!(jaw_level(&NameInfo::parse(name)), level, "{name}");
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
            ("eyerid_Left_056", Some(Role::Face), Some(Side::Left)),
            ("eye_Left_057", Some(Role::Eye), Some(Side::Left)),
            ("epaule_L_09", Some(Role::Shoulder), Some(Side::Left)),
            ("coude_R_017", Some(Role::LowerArm), Some(Side::Right)),
            ("poignet_L_011", Some(Role::Hand), Some(Side::Left)),
            ("hanche_R_023", Some(Role::HipSide), Some(Side::Right)),
            ("cheville_gauche", Some(Role::Foot), Some(Side::Left)),
            ("cou_013_scaleCompensation", Some(Role::Neck), None),
            ("tête", Some(Role::Head), None),
            ("machoire_015", Some(Role::Jaw), None),
            ("couple", None, None),
            ("main1_L_012", None, Some(Side::Left)),
        ];
        for (name, role, side) in cases {
            let info = NameInfo::parse(name);
            assert_eq!((info.role, info.side), (role, side), "{name}");
        }
        assert!(NameInfo::parse("upper_arm_ik.L").preference < -0.5);
        assert!(NameInfo::parse("hold.l").preference < -0.5);
        assert!(NameInfo::parse("handslot.l").preference < -0.5);
        assert!(NameInfo::parse("Neck_RIGMESH").preference < -0.5);
        assert!(NameInfo::parse("arme_020").preference < -0.5);
        assert_eq!(NameInfo::parse("arme_020").role, None);
        assert!(NameInfo::parse("LeftArmExtra").preference > -0.5);
        assert!(NameInfo::parse("LeftToe_End").helper);
        assert!(NameInfo::parse("DEF-thigh.L").preference > 0.0);
    }
}
