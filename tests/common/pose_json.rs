//! The bridge's outgoing `pose` WebSocket messages read back, for the tests that
//! watch its output. A reader for tests, through `serde_json::Value`: numbers come
//! back to within an ulp, not bit for bit (the library's unit tests hold the
//! encoder to exact bits with a reader of their own).

use glam::{Quat, Vec3};
use mocap_bridge::humanoid::{CustomNames, HumanBone, HumanoidPose, LookAt, Preset};
use mocap_bridge::protocol::frame::PerformerName;
use mocap_bridge::protocol::ws::PoseHeader;
use serde_json::Value;

/// Reads a `pose` JSON message; custom expression names are interned in `custom`.
/// Any other message, or a pose missing a field, is an `Err` saying which field.
pub fn decode_pose_json(
    text: &str,
    custom: &mut CustomNames,
) -> Result<(PoseHeader, HumanoidPose), String> {
    let message: Value = serde_json::from_str(text).map_err(|err| err.to_string())?;
    if message["type"] != "pose" {
        return Err(format!("not a pose message: `type` is {}", message["type"]));
    }
    let header = PoseHeader {
        performer: message["performer"]
            .as_str()
            .and_then(PerformerName::new)
            .ok_or("`performer`: not a performer name")?,
        seq: message["seq"].as_u64().ok_or("`seq`: not a u64")?,
        time: number(&message["time"], "time")?,
    };
    let mut pose = HumanoidPose::default();
    pose.hips_position = Vec3::from_array(floats(&message["hips"], "hips")?);
    pose.rest_hips_height = number(&message["restHipsHeight"], "restHipsHeight")? as f32;
    for (name, q) in object(&message["bones"], "bones")? {
        let bone: HumanBone = name
            .parse()
            .map_err(|_| format!("`bones.{name}`: unknown bone"))?;
        pose.set_rotation(bone, Quat::from_array(floats(q, name)?));
    }
    for (name, weight) in object(&message["expressions"], "expressions")? {
        let preset: Preset = name
            .parse()
            .map_err(|()| format!("`expressions.{name}`: unknown preset"))?;
        let weight = number(weight, name)? as f32;
        pose.expressions.set_preset(preset, weight);
    }
    for (name, weight) in object(&message["customExpressions"], "customExpressions")? {
        let slot = custom
            .slot_or_insert(name)
            .ok_or("`customExpressions`: no free slot")?;
        pose.expressions
            .set_custom(slot, number(weight, name)? as f32);
    }
    if let Some(look) = message["lookAt"].as_object() {
        pose.look_at = Some(LookAt {
            yaw: number(&look["yaw"], "lookAt.yaw")? as f32,
            pitch: number(&look["pitch"], "lookAt.pitch")? as f32,
        });
    }
    Ok((header, pose))
}

fn number(value: &Value, field: &str) -> Result<f64, String> {
    value
        .as_f64()
        .ok_or_else(|| format!("`{field}`: not a number"))
}

fn floats<const N: usize>(value: &Value, field: &str) -> Result<[f32; N], String> {
    let values = value
        .as_array()
        .filter(|values| values.len() == N)
        .ok_or_else(|| format!("`{field}`: not {N} numbers"))?;
    let mut out = [0.0; N];
    for (slot, v) in out.iter_mut().zip(values) {
        *slot = number(v, field)? as f32;
    }
    Ok(out)
}

fn object<'a>(value: &'a Value, field: &str) -> Result<&'a serde_json::Map<String, Value>, String> {
    value
        .as_object()
        .ok_or_else(|| format!("`{field}`: not an object"))
}
