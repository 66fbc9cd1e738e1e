//! The mannequin's materials: plain glTF metallic-roughness colours, no textures,
//! which every glTF and VRM viewer draws.

use serde_json::{Value, json};

/// One material; its index in the file is its place in `ALL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Material {
    /// The body, a light wood.
    Body,
    /// The white of the eyes.
    EyeWhite,
    Iris,
    Brow,
    Mouth,
}

impl Material {
    /// Every material, in file order.
    pub const ALL: [Material; 5] = [
        Material::Body,
        Material::EyeWhite,
        Material::Iris,
        Material::Brow,
        Material::Mouth,
    ];

    /// The index in the file's `materials`.
    #[must_use]
    pub fn index(self) -> usize {
        self as usize
    }

    /// The glTF material.
    #[must_use]
    pub fn to_json(self) -> Value {
        let (name, colour, roughness) = match self {
            Material::Body => ("body", [0.80, 0.68, 0.54], 0.6),
            Material::EyeWhite => ("eye white", [0.93, 0.93, 0.90], 0.3),
            Material::Iris => ("iris", [0.06, 0.09, 0.16], 0.25),
            Material::Brow => ("brow", [0.28, 0.19, 0.12], 0.8),
            Material::Mouth => ("mouth", [0.32, 0.06, 0.07], 0.5),
        };
        json!({
            "name": name,
            "pbrMetallicRoughness": {
                "baseColorFactor": [colour[0], colour[1], colour[2], 1.0],
                "metallicFactor": 0.0,
                "roughnessFactor": roughness,
            },
        })
    }
}
