//! Expression weights: the 18 VRM 1.0 presets plus a fixed number of custom slots.
//!
//! Custom expression names are interned once per performer (`CustomNames`, built
//! from config or the first frames that name them); per frame only slot indices and
//! weights move, so an `Expressions` value never touches the heap.

use std::fmt;
use std::str::FromStr;

/// One of the VRM 1.0 preset expressions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Preset {
    Happy,
    Angry,
    Sad,
    Relaxed,
    Surprised,
    Aa,
    Ih,
    Ou,
    Ee,
    Oh,
    Blink,
    BlinkLeft,
    BlinkRight,
    LookUp,
    LookDown,
    LookLeft,
    LookRight,
    Neutral,
}

/// How many presets VRM 1.0 defines.
pub const PRESET_COUNT: usize = 18;

/// How many custom expressions a pose can carry.
pub const CUSTOM_CAPACITY: usize = 16;

const PRESETS: [(Preset, &str); PRESET_COUNT] = [
    (Preset::Happy, "happy"),
    (Preset::Angry, "angry"),
    (Preset::Sad, "sad"),
    (Preset::Relaxed, "relaxed"),
    (Preset::Surprised, "surprised"),
    (Preset::Aa, "aa"),
    (Preset::Ih, "ih"),
    (Preset::Ou, "ou"),
    (Preset::Ee, "ee"),
    (Preset::Oh, "oh"),
    (Preset::Blink, "blink"),
    (Preset::BlinkLeft, "blinkLeft"),
    (Preset::BlinkRight, "blinkRight"),
    (Preset::LookUp, "lookUp"),
    (Preset::LookDown, "lookDown"),
    (Preset::LookLeft, "lookLeft"),
    (Preset::LookRight, "lookRight"),
    (Preset::Neutral, "neutral"),
];

impl Preset {
    /// Every preset in index order.
    pub fn all() -> impl Iterator<Item = Preset> {
        PRESETS.iter().map(|(p, _)| *p)
    }

    /// The VRM 1.0 name (`blinkLeft`).
    #[must_use]
    pub fn name(self) -> &'static str {
        PRESETS[self as usize].1
    }

    /// Whether this preset is driven by lookAt (`.vrma` must not animate it).
    #[must_use]
    pub fn is_look_at(self) -> bool {
        matches!(
            self,
            Preset::LookUp | Preset::LookDown | Preset::LookLeft | Preset::LookRight
        )
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Preset {
    type Err = ();

    /// Parses a VRM 1.0 preset name, exactly as spelled in the spec.
    fn from_str(s: &str) -> Result<Self, ()> {
        PRESETS
            .iter()
            .find(|(_, n)| *n == s)
            .map(|(p, _)| *p)
            .ok_or(())
    }
}

/// Names of a performer's custom expression slots, interned once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CustomNames {
    names: Vec<String>,
}

impl CustomNames {
    /// The slot for `name`, adding it when there is room; `None` when all
    /// `CUSTOM_CAPACITY` slots hold other names.
    pub fn slot_or_insert(&mut self, name: &str) -> Option<usize> {
        if let Some(i) = self.slot(name) {
            return Some(i);
        }
        if self.names.len() >= CUSTOM_CAPACITY {
            return None;
        }
        self.names.push(name.to_owned());
        Some(self.names.len() - 1)
    }

    /// Names `slot` as a stream announces it (slots are named in order, each once):
    /// a slot already named keeps its name.
    pub fn name_slot(&mut self, slot: usize, name: &str) {
        if self.name(slot).is_none() {
            self.slot_or_insert(name);
        }
    }

    /// The slot already holding `name`.
    #[must_use]
    pub fn slot(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// The name in `slot`.
    #[must_use]
    pub fn name(&self, slot: usize) -> Option<&str> {
        self.names.get(slot).map(String::as_str)
    }
}

/// Expression weights of one frame, each in [0, 1], with presence masks.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Expressions {
    preset_weights: [f32; PRESET_COUNT],
    preset_mask: u32,
    custom_weights: [f32; CUSTOM_CAPACITY],
    custom_mask: u16,
}

impl Expressions {
    /// Sets a preset's weight, clamped to [0, 1]; NaN counts as 0.
    pub fn set_preset(&mut self, preset: Preset, weight: f32) {
        self.preset_weights[preset as usize] = clamp_weight(weight);
        self.preset_mask |= 1 << preset as u32;
    }

    /// A preset's weight, if this frame sets it.
    #[must_use]
    pub fn preset(&self, preset: Preset) -> Option<f32> {
        (self.preset_mask & (1 << preset as u32) != 0).then(|| self.preset_weights[preset as usize])
    }

    /// Sets the weight of custom slot `slot` (from `CustomNames`), clamped to [0, 1].
    pub fn set_custom(&mut self, slot: usize, weight: f32) {
        if slot < CUSTOM_CAPACITY {
            self.custom_weights[slot] = clamp_weight(weight);
            self.custom_mask |= 1 << slot;
        }
    }

    /// The weight of custom slot `slot`, if this frame sets it.
    #[must_use]
    pub fn custom(&self, slot: usize) -> Option<f32> {
        (slot < CUSTOM_CAPACITY && self.custom_mask & (1 << slot) != 0)
            .then(|| self.custom_weights[slot])
    }

    /// The presets this frame sets, with their weights.
    pub fn presets(&self) -> impl Iterator<Item = (Preset, f32)> + '_ {
        Preset::all().filter_map(|p| self.preset(p).map(|w| (p, w)))
    }

    /// Whether no expression is set.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.preset_mask == 0 && self.custom_mask == 0
    }
}

fn clamp_weight(weight: f32) -> f32 {
    if weight.is_nan() {
        0.0
    } else {
        weight.clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_are_clamped_and_masked() {
        let mut e = Expressions::default();
        assert!(e.is_empty());
        e.set_preset(Preset::Happy, 1.5);
        e.set_preset(Preset::Blink, f32::NAN);
        assert_eq!(e.preset(Preset::Happy), Some(1.0));
        assert_eq!(e.preset(Preset::Blink), Some(0.0));
        assert_eq!(e.preset(Preset::Sad), None);
        assert_eq!(e.presets().count(), 2);
    }

    #[test]
    fn custom_slots_are_interned_up_to_capacity() {
        let mut names = CustomNames::default();
        for i in 0..CUSTOM_CAPACITY {
            assert_eq!(names.slot_or_insert(&format!("c{i}")), Some(i));
        }
        assert_eq!(names.slot_or_insert("c3"), Some(3));
        assert_eq!(names.slot_or_insert("one too many"), None);
        let mut e = Expressions::default();
        e.set_custom(3, 0.25);
        assert_eq!(e.custom(3), Some(0.25));
        assert_eq!(e.custom(4), None);
    }

    #[test]
    fn preset_names_round_trip() {
        for p in Preset::all() {
            assert_eq!(p.name().parse::<Preset>(), Ok(p));
        }
        assert!(Preset::LookUp.is_look_at());
        assert!(!Preset::Aa.is_look_at());
    }
}
