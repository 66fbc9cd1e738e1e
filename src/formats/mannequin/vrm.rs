//! The mannequin's `VRMC_vrm` 1.0 extension: its meta (anyone may use, change and
//! pass on the file, under the VRM Public License 1.0), the humanoid map of all 55
//! bones, the preset expressions bound to the face's morph targets, lookAt turning
//! the eye bones, and which meshes a first-person camera hides.

use serde_json::{Map, Value, json};

use crate::formats::vrma::VrmaRest;
use crate::humanoid::HumanBone as B;
use crate::humanoid::bone::ALL;

use super::face::{EXPRESSIONS, blends_blink};

/// The extension's name.
pub const EXTENSION: &str = "VRMC_vrm";

/// The avatar's name in its meta.
pub const NAME: &str = "mocap-bridge mannequin";

/// The licence the meta names: VRM Public License 1.0.
pub const LICENSE_URL: &str = "https://vrm.dev/licenses/1.0/";

/// How far the eyes turn at the edge of their range, degrees, for a look 90° off
/// (horizontal, up and down).
const EYE_TURN_DEG: [f32; 3] = [12.0, 10.0, 10.0];

/// Where things are in the file the extension describes.
#[derive(Debug, Clone, Copy)]
pub struct Nodes {
    /// Node of the first bone; bone `b` is node `first_bone + b.index()`.
    pub first_bone: usize,
    /// The body's mesh node.
    pub body: usize,
    /// The face's mesh node, whose morph targets are `EXPRESSIONS` in order.
    pub face: usize,
}

/// The `VRMC_vrm` object.
#[must_use]
pub fn extension(rest: &VrmaRest, nodes: Nodes) -> Value {
    let mut bones = Map::new();
    for bone in ALL {
        bones.insert(
            bone.name().into(),
            json!({"node": nodes.first_bone + bone.index()}),
        );
    }
    let mut presets = Map::new();
    for (index, (preset, _)) in EXPRESSIONS.iter().enumerate() {
        let mut expression = json!({
            "morphTargetBinds": [{"node": nodes.face, "index": index, "weight": 1.0}],
        });
        if blends_blink(*preset) {
            expression["overrideBlink"] = json!("blend");
        }
        presets.insert(preset.name().into(), expression);
    }
    let eyes = (rest.position(B::LeftEye) + rest.position(B::RightEye)) * 0.5;
    let [horizontal, up, down] = EYE_TURN_DEG;
    let range = |degrees: f32| json!({"inputMaxValue": 90.0, "outputScale": degrees});
    json!({
        "specVersion": "1.0",
        "meta": {
            "name": NAME,
            "version": env!("CARGO_PKG_VERSION"),
            "authors": ["mocap-bridge"],
            "licenseUrl": LICENSE_URL,
            "avatarPermission": "everyone",
            "commercialUsage": "corporation",
            "creditNotation": "unnecessary",
            "allowRedistribution": true,
            "modification": "allowModificationRedistribution",
        },
        "humanoid": {"humanBones": bones},
        "firstPerson": {
            "meshAnnotations": [
                {"node": nodes.body, "type": "auto"},
                {"node": nodes.face, "type": "thirdPersonOnly"},
            ],
        },
        "lookAt": {
            "offsetFromHeadBone": (eyes - rest.position(B::Head)).to_array(),
            "type": "bone",
            "rangeMapHorizontalInner": range(horizontal),
            "rangeMapHorizontalOuter": range(horizontal),
            "rangeMapVerticalDown": range(down),
            "rangeMapVerticalUp": range(up),
        },
        "expressions": {"preset": presets},
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::humanoid::HumanBone;
    use glam::Vec3;

    fn offset_of(value: &Value) -> Vec3 {
        let o = &value["lookAt"]["offsetFromHeadBone"];
        let f = |i: usize| o[i].as_f64().unwrap_or(f64::NAN) as f32;
        Vec3::new(f(0), f(1), f(2))
    }

    const NODES: Nodes = Nodes {
        first_bone: 0,
        body: 55,
        face: 56,
    };

    #[test]
    fn the_humanoid_maps_all_55_bones_to_their_nodes() {
        let value = extension(&VrmaRest::standard(0.95), NODES);
        let bones = value["humanoid"]["humanBones"].as_object().unwrap();
        assert_eq!(bones.len(), 55);
        for (name, bone) in bones {
            let parsed: HumanBone = name.parse().unwrap();
            assert_eq!(bone["node"], parsed.index());
        }
    }

    #[test]
    fn every_expression_binds_its_own_morph_target() {
        let value = extension(&VrmaRest::standard(0.95), NODES);
        let presets = value["expressions"]["preset"].as_object().unwrap();
        assert_eq!(presets.len(), EXPRESSIONS.len());
        for (index, (preset, _)) in EXPRESSIONS.iter().enumerate() {
            let binds = &presets[preset.name()]["morphTargetBinds"];
            assert_eq!(binds[0]["index"], index);
            assert_eq!(binds[0]["node"], 56);
        }
        assert!(presets.keys().all(|name| !name.starts_with("look")));
    }

    #[test]
    fn the_meta_lets_anyone_use_change_and_pass_on_the_file() {
        let value = extension(&VrmaRest::standard(0.95), NODES);
        let meta = &value["meta"];
        assert_eq!(meta["allowRedistribution"], true);
        assert_eq!(meta["modification"], "allowModificationRedistribution");
        assert_eq!(meta["avatarPermission"], "everyone");
        assert_eq!(meta["licenseUrl"], LICENSE_URL);
        let rest = VrmaRest::standard(0.95);
        let eyes = (rest.position(B::LeftEye) + rest.position(B::RightEye)) * 0.5;
        assert!(offset_of(&value).abs_diff_eq(eyes - rest.position(B::Head), 1e-6));
    }
}
