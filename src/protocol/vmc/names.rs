//! The names VMC messages carry: Unity `HumanBodyBones` bone names (thumbs shifted
//! one against VRM 1.0) and the expression names a receiver knows (VRM 1.0 or
//! VRM 0). Bone names are looked up from their bytes by a perfect hash built and
//! checked at compile time, since bone names are most of what a decoder reads.

use crate::humanoid::bone::{ALL, BONE_COUNT};
use crate::humanoid::{HumanBone, Preset};

/// Which expression names the receiver knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpressionNames {
    /// VRM 1.0 preset names (`happy`, `aa`, `blinkLeft`).
    Vrm1,
    /// VRM 0.x blend shape names (`Joy`, `A`, `Blink_L`).
    Vrm0,
}

/// Unity `HumanBodyBones` names, indexed by `HumanBone`: thumbs shifted one, as
/// Unity names them (`LeftThumbProximal` is `leftThumbMetacarpal`).
const UNITY_NAMES: [&str; BONE_COUNT] = [
    "Hips",
    "Spine",
    "Chest",
    "UpperChest",
    "Neck",
    "Head",
    "LeftEye",
    "RightEye",
    "Jaw",
    "LeftUpperLeg",
    "LeftLowerLeg",
    "LeftFoot",
    "LeftToes",
    "RightUpperLeg",
    "RightLowerLeg",
    "RightFoot",
    "RightToes",
    "LeftShoulder",
    "LeftUpperArm",
    "LeftLowerArm",
    "LeftHand",
    "RightShoulder",
    "RightUpperArm",
    "RightLowerArm",
    "RightHand",
    "LeftThumbProximal",
    "LeftThumbIntermediate",
    "LeftThumbDistal",
    "LeftIndexProximal",
    "LeftIndexIntermediate",
    "LeftIndexDistal",
    "LeftMiddleProximal",
    "LeftMiddleIntermediate",
    "LeftMiddleDistal",
    "LeftRingProximal",
    "LeftRingIntermediate",
    "LeftRingDistal",
    "LeftLittleProximal",
    "LeftLittleIntermediate",
    "LeftLittleDistal",
    "RightThumbProximal",
    "RightThumbIntermediate",
    "RightThumbDistal",
    "RightIndexProximal",
    "RightIndexIntermediate",
    "RightIndexDistal",
    "RightMiddleProximal",
    "RightMiddleIntermediate",
    "RightMiddleDistal",
    "RightRingProximal",
    "RightRingIntermediate",
    "RightRingDistal",
    "RightLittleProximal",
    "RightLittleIntermediate",
    "RightLittleDistal",
];

/// The Unity `HumanBodyBones` name of a bone (thumbs shifted one, as Unity names
/// them).
#[must_use]
pub fn unity_name(bone: HumanBone) -> &'static str {
    UNITY_NAMES[bone.index()]
}

/// The name a receiver knows a preset by.
#[must_use]
pub fn preset_name(preset: Preset, names: ExpressionNames) -> &'static str {
    if names == ExpressionNames::Vrm1 {
        return preset.name();
    }
    match preset {
        Preset::Happy => "Joy",
        Preset::Angry => "Angry",
        Preset::Sad => "Sorrow",
        Preset::Relaxed => "Fun",
        Preset::Surprised => "Surprised",
        Preset::Aa => "A",
        Preset::Ih => "I",
        Preset::Ou => "U",
        Preset::Ee => "E",
        Preset::Oh => "O",
        Preset::Blink => "Blink",
        Preset::BlinkLeft => "Blink_L",
        Preset::BlinkRight => "Blink_R",
        Preset::LookUp => "LookUp",
        Preset::LookDown => "LookDown",
        Preset::LookLeft => "LookLeft",
        Preset::LookRight => "LookRight",
        Preset::Neutral => "Neutral",
    }
}

/// The bone a Unity `HumanBodyBones` name stands for (thumbs shifted one).
#[must_use]
pub fn bone_from_unity(name: &str) -> Option<HumanBone> {
    bone_from_unity_bytes(name.as_bytes())
}

/// `bone_from_unity` on a name's bytes, as they arrive (no UTF-8 check needed).
/// Inlined into the decoder, which calls it once per bone message.
#[inline]
pub(super) fn bone_from_unity_bytes(name: &[u8]) -> Option<HumanBone> {
    bone_from_words(name_words(name)?)
}

/// Bone names are looked up as three little-endian words, the name zero-padded to
/// 24 bytes: one perfect-hash probe and one comparison of three words, instead of
/// a scan of 55 names (bone names are most of what a VMC decoder reads).
type NameWords = [u64; 3];

/// The longest Unity bone name is 23 bytes (`RightMiddleIntermediate`).
pub(super) const NAME_BYTES: usize = 24;

/// `name` as `NameWords`; `None` when longer than any bone name or holding a
/// zero byte (which the padding could not be told from).
#[inline]
const fn name_words(name: &[u8]) -> Option<NameWords> {
    if name.len() >= NAME_BYTES {
        return None;
    }
    let mut words = [0u64; 3];
    let mut i = 0;
    while i < name.len() {
        if name[i] == 0 {
            return None;
        }
        words[i / 8] |= (name[i] as u64) << (8 * (i % 8));
        i += 1;
    }
    Some(words)
}

/// Where a name lands in `BONE_SLOTS`: a multiplicative hash of its words.
const fn name_slot(words: &NameWords) -> usize {
    let key = words[0] ^ words[1].rotate_left(21) ^ words[2].rotate_left(42);
    // Found by search: no two Unity bone names share a slot (checked below).
    (key.wrapping_mul(0x49c8_080e_6618_5813) >> (64 - SLOT_BITS)) as usize
}

const SLOT_BITS: u32 = 7;

/// One hash slot: the name that lands here and its bone (`None`: no name does).
#[derive(Clone, Copy)]
struct BoneSlot {
    name: NameWords,
    bone: Option<HumanBone>,
}

/// Every Unity bone name in its hash slot; built, and checked, at compile time.
const BONE_SLOTS: [BoneSlot; 1 << SLOT_BITS] = {
    let mut slots = [BoneSlot {
        name: [0; 3],
        bone: None,
    }; 1 << SLOT_BITS];
    let mut b = 0;
    while b < BONE_COUNT {
        let Some(name) = name_words(UNITY_NAMES[b].as_bytes()) else {
            panic!("a Unity bone name longer than NAME_BYTES");
        };
        let slot = name_slot(&name);
        assert!(
            slots[slot].bone.is_none(),
            "two Unity bone names share a hash slot"
        );
        slots[slot] = BoneSlot {
            name,
            bone: Some(ALL[b]),
        };
        b += 1;
    }
    slots
};

#[inline(always)]
pub(super) fn bone_from_words(name: NameWords) -> Option<HumanBone> {
    let slot = &BONE_SLOTS[name_slot(&name)];
    // An empty slot holds no bone, so an empty name matching its zeros is `None`.
    // Word by word: an array `==` may load the words as one vector, which waits
    // for the separate word stores to reach memory.
    let differ = (slot.name[0] ^ name[0]) | (slot.name[1] ^ name[1]) | (slot.name[2] ^ name[2]);
    if differ == 0 { slot.bone } else { None }
}

/// The preset a VMC blend shape name stands for, in VRM 1.0 or VRM 0 spelling
/// (VRM 0 names match case-insensitively, as receivers do).
#[must_use]
pub fn preset_from_name(name: &str) -> Option<Preset> {
    if let Ok(p) = name.parse::<Preset>() {
        return Some(p);
    }
    Preset::all().find(|p| preset_name(*p, ExpressionNames::Vrm0).eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unity_names_shift_the_thumbs() {
        let cases = [
            (HumanBone::Hips, "Hips"),
            (HumanBone::LeftUpperArm, "LeftUpperArm"),
            (HumanBone::UpperChest, "UpperChest"),
            (HumanBone::LeftThumbMetacarpal, "LeftThumbProximal"),
            (HumanBone::LeftThumbProximal, "LeftThumbIntermediate"),
            (HumanBone::LeftThumbDistal, "LeftThumbDistal"),
            (HumanBone::RightThumbMetacarpal, "RightThumbProximal"),
            (HumanBone::RightLittleDistal, "RightLittleDistal"),
        ];
        for (bone, name) in cases {
            assert_eq!(unity_name(bone), name);
        }
    }

    #[test]
    fn unity_names_read_back_for_every_bone() {
        for bone in ALL {
            assert_eq!(bone_from_unity(unity_name(bone)), Some(bone));
        }
        assert_eq!(bone_from_unity("Tail"), None);
    }

    #[test]
    fn unity_names_are_the_vrm_names_capitalized_with_the_thumbs_shifted() {
        let shifted = [
            (HumanBone::LeftThumbMetacarpal, "LeftThumbProximal"),
            (HumanBone::LeftThumbProximal, "LeftThumbIntermediate"),
            (HumanBone::RightThumbMetacarpal, "RightThumbProximal"),
            (HumanBone::RightThumbProximal, "RightThumbIntermediate"),
        ];
        for bone in ALL {
            let want = match shifted.iter().find(|(b, _)| *b == bone) {
                Some((_, name)) => (*name).to_owned(),
                None => {
                    let name = bone.name();
                    name[..1].to_ascii_uppercase() + &name[1..]
                }
            };
            assert_eq!(unity_name(bone), want);
        }
    }

    #[test]
    fn the_bone_name_hash_finds_only_exact_names() {
        let names: Vec<&[u8]> = ALL.iter().map(|b| unity_name(*b).as_bytes()).collect();
        let misses: [&[u8]; 9] = [
            b"",
            b"Hip",
            b"Hips\0",
            b"hips",
            b"Jaw ",
            b"LeftMiddleDistaL",
            b"RightMiddleIntermediat",
            b"RightMiddleIntermediateX",
            b"RightMiddleIntermediate and more",
        ];
        for miss in misses {
            assert_eq!(bone_from_unity_bytes(miss), None, "{miss:?}");
        }
        // Every one-byte change of every name: a bone only when it is a name.
        for name in &names {
            for at in 0..name.len() {
                for byte in [0u8, b'a', b'L', b'R', 0x80, 0xff] {
                    let mut changed = name.to_vec();
                    changed[at] = byte;
                    let want = names
                        .iter()
                        .position(|n| *n == changed.as_slice())
                        .map(|i| ALL[i]);
                    assert_eq!(bone_from_unity_bytes(&changed), want, "{changed:?}");
                }
            }
        }
    }

    #[test]
    fn expression_names_follow_the_receiver() {
        assert_eq!(preset_name(Preset::Happy, ExpressionNames::Vrm1), "happy");
        assert_eq!(preset_name(Preset::Happy, ExpressionNames::Vrm0), "Joy");
        assert_eq!(
            preset_name(Preset::BlinkLeft, ExpressionNames::Vrm0),
            "Blink_L"
        );
        assert_eq!(preset_name(Preset::Aa, ExpressionNames::Vrm0), "A");
    }
}
