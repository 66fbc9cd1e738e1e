//! A glTF rig in centimetres or millimetres, scaled into metres. glTF is metres by its
//! specification, but exporters that convert an FBX file (assimp, three.js'
//! `GLTFExporter`) can drop its unit scale and write the avatar in the FBX units with
//! no node scaling it down: Unreal's mannequin arrives 180 units tall.
//!
//! The units are read from the rest figure's height along +Y (joints and end sites):
//! 90-260 units is a person in centimetres, 900-2600 one in millimetres, the two
//! ranges a dropped FBX unit scale leaves. Any other height is metres, as the file says
//! (a 0.3 m toy or a 3 m giant stays as written; a figure over 10 m tall too, with
//! a note saying how tall it is). `LoadOptions::units` (`--units`)
//! overrides the guess. A VRM model (1.0 or 0.x) and a VRM Animation are metres by
//! their own specifications and stay as written, whatever their size or `--units`.
//!
//! Runs once on the loaded rig (`formats::load_rig`), after every way the loader finds
//! a rest (the nodes, the inverse bind matrices, a clip frame, a figure stood up from
//! +Z, `--rest-from`). Every joint's rest translation and end site and every clip's
//! translations are multiplied by one factor: the figure and its motion scale, and no
//! rotation changes.

use std::path::Path;

use super::GltfError;
use super::humanoid_map::metres_by_spec;
use crate::formats::{Rig, Units};
use crate::skeleton::{InvalidSkeleton, Skeleton};

/// `rig` (loaded from `path`) in metres: scaled by `units` when given, else by the
/// units its height says (see the module header), with a note when a guess scaled it.
pub fn in_metres(mut rig: Rig, units: Option<Units>, path: &Path) -> Result<Rig, GltfError> {
    if rig.map_source.as_deref().is_some_and(metres_by_spec) {
        return Ok(rig);
    }
    let units = match units {
        Some(units) => units,
        None => {
            let height = rest_height(&rig);
            let units = guess_from_height(height);
            if let Some((name, symbol)) = unit_name(units) {
                rig.notes.push(format!(
                    "units: {name} (guessed from a {height:.0} {symbol} figure: glTF is metres, \
                     but an exporter that drops an FBX file's unit scale writes its units); \
                     every length scaled to metres"
                ));
            } else if height > PLAIN_METRES {
                rig.notes.push(format!(
                    "units: metres, as glTF is, for a figure {height:.2} m tall (no person's \
                     height in centimetres or millimetres either; --units reads another unit)"
                ));
            }
            units
        }
    };
    scale(&mut rig, units).map_err(|source| GltfError::Skeleton {
        path: path.to_owned(),
        source,
    })?;
    Ok(rig)
}

/// The tallest figure in metres that needs no word. A taller one (a file in
/// decimetres or inches, or exported at ten times its size) is read as written too,
/// with a note saying how tall that makes it. Small figures get none: a hand alone,
/// a toy or a prop is small in metres.
const PLAIN_METRES: f32 = 10.0;

/// Centimetres for a figure 90-260 units tall, millimetres for one 900-2600 units
/// tall, metres otherwise.
#[must_use]
fn guess_from_height(height: f32) -> Units {
    [Units::Centimetres, Units::Millimetres]
        .into_iter()
        .find(|u| (0.9..=2.6).contains(&(height * u.metres_per_unit())))
        .unwrap_or(Units::Metres)
}

/// The name and symbol of a guessed unit other than metres.
fn unit_name(units: Units) -> Option<(&'static str, &'static str)> {
    match units {
        Units::Centimetres => Some(("centimetres", "cm")),
        Units::Millimetres => Some(("millimetres", "mm")),
        _ => None,
    }
}

/// How far the rest figure reaches along +Y, joints and end sites, in file units.
fn rest_height(rig: &Rig) -> f32 {
    let world = rig.skeleton.rest_world();
    let points = rig.skeleton.joints().iter().zip(&world).flat_map(|(j, w)| {
        let end = j.end.map(|e| w.transform_point3(e).y);
        std::iter::once(w.translation.y).chain(end)
    });
    let (lo, hi) = points.fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), y| {
        (lo.min(y), hi.max(y))
    });
    (hi - lo).max(0.0)
}

/// Multiplies every length of `rig` by `units`' metres per unit and records the unit;
/// fails when a length leaves the finite numbers (`--units` far out of range).
fn scale(rig: &mut Rig, units: Units) -> Result<(), InvalidSkeleton> {
    rig.units = units;
    let s = units.metres_per_unit();
    if s == 1.0 {
        return Ok(());
    }
    let mut joints = rig.skeleton.joints().to_vec();
    for joint in &mut joints {
        joint.rest.translation *= s;
        joint.end = joint.end.map(|e| e * s);
    }
    rig.skeleton = Skeleton::new(joints)?;
    for clip in &mut rig.clips {
        clip.motion
            .map_joints(|_, rotation, translation| (rotation, translation * s));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{Fixture, position};
    use super::*;
    use crate::formats::skeleton_json::embedded_rig;
    use crate::formats::{LoadOptions, load_rig};
    use glam::Vec3;
    use serde_json::{Value, json};

    /// Where the built-in humanoid's hips are in its rest and where the clip of
    /// `figure` moves them, metres.
    const HIPS: Vec3 = Vec3::new(0.0, 0.95, 0.0);
    const STEP: Vec3 = Vec3::new(0.0, 0.95, 0.4);

    /// The built-in humanoid (1.52 m tall, joints and end sites) as plain glTF nodes, `size` times
    /// its size, written with `units` file units to a metre and no node scaling
    /// them, with a clip that moves the hips from `HIPS` to `STEP`.
    fn figure(size: f32, units: f32) -> Value {
        let humanoid = embedded_rig("humanoid", crate::skeleton::builtin::HUMANOID_JSON);
        let scale = size * units;
        let nodes: Vec<Value> = (humanoid.skeleton.joints().iter().enumerate())
            .map(|(j, joint)| {
                let children: Vec<usize> = humanoid.skeleton.children(j).collect();
                let mut node = json!({
                    "name": joint.name,
                    "translation": (joint.rest.translation * scale).to_array(),
                });
                if !children.is_empty() {
                    node["children"] = json!(children);
                }
                node
            })
            .collect();
        let mut fixture = Fixture::new(json!({
            "asset": {"version": "2.0"},
            "scenes": [{"nodes": [0]}],
            "nodes": nodes,
        }));
        let times = fixture.floats("SCALAR", &[0.0, 1.0]);
        let keys = [HIPS, STEP].map(|p| (p * scale).to_array());
        let places = fixture.floats("VEC3", keys.as_flattened());
        fixture.doc["animations"] = json!([{
            "name": "step",
            "samplers": [{"input": times, "output": places}],
            "channels": [{"sampler": 0, "target": {"node": 0, "path": "translation"}}]
        }]);
        fixture.finish()
    }

    /// `doc` written as `name` and loaded as the commands load it, with `units`.
    fn load(doc: &Value, name: &str, units: Option<Units>) -> Rig {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join(name);
        std::fs::write(&path, doc.to_string()).expect("written");
        let options = LoadOptions {
            units,
            ..LoadOptions::default()
        };
        load_rig(&path, &options).unwrap_or_else(|e| panic!("{e}"))
    }

    fn unit_notes(rig: &Rig) -> Vec<&str> {
        let notes = rig.notes.iter().map(String::as_str);
        notes.filter(|n| n.starts_with("units")).collect()
    }

    /// The hips in the rest and in the clip's last frame, metres.
    fn hips(rig: &Rig) -> (Vec3, Vec3) {
        let motion = &rig.clips[0].motion;
        let last = motion.frame(motion.frame_count() - 1);
        let j = rig.skeleton.find("hips").expect("the hips");
        (position(rig, "hips"), last.translations[j])
    }

    fn assert_near(got: Vec3, want: Vec3, what: &str) {
        assert!(
            got.abs_diff_eq(want, 1e-4 * want.length().max(1.0)),
            "{what}: {got}, expected {want}"
        );
    }

    #[test]
    fn a_figure_in_centimetres_or_millimetres_loads_in_metres_with_a_note() {
        let cases = [
            (
                100.0,
                Units::Centimetres,
                "centimetres (guessed from a 152 cm figure",
            ),
            (
                1000.0,
                Units::Millimetres,
                "millimetres (guessed from a 1520 mm figure",
            ),
        ];
        for (units, unit, note) in cases {
            let rig = load(&figure(1.0, units), "avatar.glb", None);
            let notes = unit_notes(&rig);
            let what = format!("{unit:?}");
            assert!(
                notes.len() == 1 && notes[0].starts_with(&format!("units: {note}")),
                "{what}: {notes:?}"
            );
            assert!(
                notes[0].ends_with("every length scaled to metres"),
                "{what}"
            );
            assert_eq!(rig.units, unit);
            let (rest, stepped) = hips(&rig);
            assert_near(rest, HIPS, &what);
            assert_near(stepped, STEP, &what);
        }
    }

    #[test]
    fn a_figure_in_metres_stays_as_written_toy_person_or_giant() {
        // 0.3 m, 1.52 m and 3.04 m tall.
        for size in [0.2, 1.0, 2.0] {
            let rig = load(&figure(size, 1.0), "figure.gltf", None);
            let what = format!("{size} times the humanoid");
            assert_eq!(unit_notes(&rig), Vec::<&str>::new(), "{what}");
            assert_eq!(rig.units, Units::Metres);
            let (rest, stepped) = hips(&rig);
            assert_near(rest, HIPS * size, &what);
            assert_near(stepped, STEP * size, &what);
        }
    }

    #[test]
    fn a_figure_over_ten_metres_tall_is_read_as_metres_with_a_note() {
        // 18.2 m tall: no unit band fits.
        let rig = load(&figure(12.0, 1.0), "figure.glb", None);
        let notes = unit_notes(&rig);
        let want = "units: metres, as glTF is, for a figure 18.24 m tall";
        assert!(notes.len() == 1 && notes[0].starts_with(want), "{notes:?}");
        assert_eq!(rig.units, Units::Metres);
        assert_near(hips(&rig).0, HIPS * 12.0, "as written");
        // 0.15 m tall (a hand's size): no note.
        let rig = load(&figure(0.1, 1.0), "figure.glb", None);
        assert_eq!(unit_notes(&rig), Vec::<&str>::new());
        // Asked for metres: no note.
        let rig = load(&figure(12.0, 1.0), "figure.glb", Some(Units::Metres));
        assert_eq!(unit_notes(&rig), Vec::<&str>::new());
    }

    #[test]
    fn units_given_override_the_guess() {
        let cm = figure(1.0, 100.0);
        // As written, as glTF says: a figure 152 m tall.
        let rig = load(&cm, "cm.gltf", Some(Units::Metres));
        assert_eq!(unit_notes(&rig), Vec::<&str>::new());
        assert_near(hips(&rig).0, HIPS * 100.0, "--units m");
        let rig = load(&cm, "cm.gltf", Some(Units::Scale(0.02)));
        assert_near(hips(&rig).0, HIPS * 2.0, "--units 0.02");
        // A figure in metres read as centimetres, as asked.
        let rig = load(&figure(1.0, 1.0), "m.gltf", Some(Units::Centimetres));
        assert_eq!(rig.units, Units::Centimetres);
        assert_near(hips(&rig).1, STEP * 0.01, "--units cm");
    }

    #[test]
    fn a_vrm_stays_as_written_whatever_its_size_and_units_given() {
        let mut doc = figure(1.0, 100.0);
        let bones: serde_json::Map<String, Value> = ["hips", "spine", "head"]
            .into_iter()
            .map(|bone| {
                let nodes = doc["nodes"].as_array().expect("nodes");
                let node = nodes.iter().position(|n| n["name"] == bone);
                (bone.to_owned(), json!({ "node": node }))
            })
            .collect();
        doc["extensions"] = json!({
            "VRMC_vrm": {"specVersion": "1.0", "humanoid": {"humanBones": bones}}
        });
        for units in [None, Some(Units::Centimetres)] {
            let rig = load(&doc, "big.vrm", units);
            assert_eq!(unit_notes(&rig), Vec::<&str>::new());
            assert_eq!(rig.units, Units::Metres);
            assert_near(hips(&rig).0, HIPS * 100.0, "a VRM");
        }
    }
}
