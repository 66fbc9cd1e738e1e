//! Length units and up axes of source files, and the conversion of a whole rig
//! (rest and motion) into metres and glTF axes (+Y up).
//!
//! The conversion is a change of basis `B` with a uniform scale `s`: translations
//! become `s·B·t`, rotations `B·q·B⁻¹`. Applied to every joint and every frame it
//! leaves the motion the same motion, only expressed in the internal space.

use glam::{Quat, Vec3};

use crate::skeleton::Joint;

/// Length unit of a file's offsets and positions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Units {
    Metres,
    Decimetres,
    Centimetres,
    Millimetres,
    Inches,
    /// Metres per file unit, as given by the user.
    Scale(f32),
}

impl Units {
    /// Metres per file unit.
    #[must_use]
    pub fn metres_per_unit(self) -> f32 {
        match self {
            Units::Metres => 1.0,
            Units::Decimetres => 0.1,
            Units::Centimetres => 0.01,
            Units::Millimetres => 0.001,
            Units::Inches => 0.0254,
            Units::Scale(s) => s,
        }
    }

    /// Parses `m`, `dm`, `cm`, `mm`, `in` or a number of metres per unit.
    pub fn parse(s: &str) -> Option<Units> {
        match s {
            "m" | "metres" | "meters" => Some(Units::Metres),
            "dm" | "decimetres" | "decimeters" => Some(Units::Decimetres),
            "cm" | "centimetres" | "centimeters" => Some(Units::Centimetres),
            "mm" | "millimetres" | "millimeters" => Some(Units::Millimetres),
            "in" | "inches" => Some(Units::Inches),
            other => other
                .parse::<f32>()
                .ok()
                .filter(|v| v.is_finite() && *v > 0.0)
                .map(Units::Scale),
        }
    }

    /// Guesses the unit from a standing figure's height in file units: a person is
    /// 0.9-2.6 m tall, so 90-260 is centimetres, 900-2600 millimetres. Failing those,
    /// the rarer units count only for an adult's 1.4-2.1 m: 55-83 is inches (Poser and
    /// Second Life files) and 14-21 decimetres (MakeHuman's exports). Anything else
    /// (CMU's 1/0.45-inch unit, toys, giants) is scaled to 1.7 m, and said so.
    #[must_use]
    pub fn guess_from_height(height: f32) -> (Units, Option<String>) {
        let common = [Units::Metres, Units::Centimetres, Units::Millimetres];
        let rarer = [Units::Inches, Units::Decimetres];
        let tall = |units: Units, range: std::ops::RangeInclusive<f32>| {
            range.contains(&(height * units.metres_per_unit()))
        };
        let guess = (common.into_iter().find(|&u| tall(u, 0.9..=2.6)))
            .or_else(|| rarer.into_iter().find(|&u| tall(u, 1.4..=2.1)));
        if let Some(units) = guess {
            return (units, None);
        }
        if !(height.is_finite() && height > 0.0) {
            return (
                Units::Metres,
                Some("cannot tell the units; assumed metres".into()),
            );
        }
        let scale = 1.7 / height;
        (
            Units::Scale(scale),
            Some(format!(
                "units not recognised (figure is {height:.2} units tall); scaled to 1.70 m ({scale:.4} m per unit)"
            )),
        )
    }
}

/// Which file axis points up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpAxis {
    Y,
    Z,
}

impl UpAxis {
    /// Parses `y` or `z`.
    pub fn parse(s: &str) -> Option<UpAxis> {
        match s.to_ascii_lowercase().as_str() {
            "y" | "+y" => Some(UpAxis::Y),
            "z" | "+z" => Some(UpAxis::Z),
            _ => None,
        }
    }

    /// The rotation taking this up axis to +Y (the identity for Y-up).
    #[must_use]
    pub fn to_y_up(self) -> Quat {
        match self {
            UpAxis::Y => Quat::IDENTITY,
            UpAxis::Z => Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2),
        }
    }
}

/// A change of basis with uniform scale, applied to a whole rig.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Basis {
    pub rotation: Quat,
    pub scale: f32,
}

impl Basis {
    /// The conversion for a file in `units` with `up` pointing up.
    #[must_use]
    pub fn new(units: Units, up: UpAxis) -> Self {
        Self {
            rotation: up.to_y_up(),
            scale: units.metres_per_unit(),
        }
    }

    /// A file position or offset in internal space.
    #[must_use]
    pub fn position(&self, v: Vec3) -> Vec3 {
        self.rotation * v * self.scale
    }

    /// A file rotation in internal space: `B·q·B⁻¹`.
    #[must_use]
    pub fn rotation(&self, q: Quat) -> Quat {
        self.rotation * q * self.rotation.conjugate()
    }

    /// Converts every joint's rest transform and end offset in place.
    pub fn apply_to_joints(&self, joints: &mut [Joint]) {
        for joint in joints {
            joint.rest.translation = self.position(joint.rest.translation);
            joint.rest.rotation = self.rotation(joint.rest.rotation);
            joint.end = joint.end.map(|e| self.position(e));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_guessed_from_height() {
        assert_eq!(Units::guess_from_height(175.0).0, Units::Centimetres);
        assert_eq!(Units::guess_from_height(1.75).0, Units::Metres);
        assert_eq!(Units::guess_from_height(1750.0).0, Units::Millimetres);
        // An adult in inches or decimetres; a child's height in those is no guess.
        assert_eq!(Units::guess_from_height(72.0).0, Units::Inches);
        assert_eq!(Units::guess_from_height(16.4).0, Units::Decimetres);
        assert!(matches!(Units::guess_from_height(40.0).0, Units::Scale(_)));
        let (units, note) = Units::guess_from_height(30.0);
        assert!((units.metres_per_unit() * 30.0 - 1.7).abs() < 1e-5);
        assert!(note.is_some());
    }

    #[test]
    fn z_up_becomes_y_up_and_rotations_follow() {
        let basis = Basis::new(Units::Centimetres, UpAxis::Z);
        let up = basis.position(Vec3::new(0.0, 0.0, 100.0));
        assert!(up.abs_diff_eq(Vec3::Y, 1e-6));
        // A rotation about the file's up axis is a rotation about +Y inside.
        let turn = basis.rotation(Quat::from_rotation_z(0.3));
        assert!(turn.abs_diff_eq(Quat::from_rotation_y(0.3), 1e-6));
    }
}
