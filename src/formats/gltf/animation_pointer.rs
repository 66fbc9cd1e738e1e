//! Animation channels keyed through KHR_animation_pointer. The extension replaces a
//! channel's `target.node` and `target.path` with a JSON pointer (`"path":
//! "pointer"`, `extensions.KHR_animation_pointer.pointer`). A pointer to a node's
//! `translation`, `rotation`, `scale` or `weights` keys exactly what a plain channel
//! on that node keys, with the same sampler output, so it is read as that channel:
//! Unity's glTF exporters (UnityGLTF, Needle) write every clip so. Pointers to
//! anything else (materials, cameras, lights, extensions) animate no joint and stay
//! out of the skeleton's channels.

use serde_json::{Value, json};

/// The plain channel target (`{"node": n, "path": p}`) a KHR_animation_pointer
/// target stands for, or `None` when it is no such target or points at no node's
/// transform or weights.
#[must_use]
pub(super) fn node_target(target: &Value) -> Option<Value> {
    if target.get("path")?.as_str()? != "pointer" {
        return None;
    }
    let pointer = target
        .get("extensions")?
        .get("KHR_animation_pointer")?
        .get("pointer")?
        .as_str()?;
    let (node, property) = pointer.strip_prefix("/nodes/")?.split_once('/')?;
    if node.is_empty() || !node.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let node: u64 = node.parse().ok()?;
    let path = match property {
        "translation" | "rotation" | "scale" | "weights" => property,
        _ => return None,
    };
    Some(json!({"node": node, "path": path}))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pointer(p: &str) -> Value {
        json!({"path": "pointer", "extensions": {"KHR_animation_pointer": {"pointer": p}}})
    }

    #[test]
    fn a_pointer_to_a_node_transform_is_that_node_channel() {
        for property in ["translation", "rotation", "scale", "weights"] {
            assert_eq!(
                node_target(&pointer(&format!("/nodes/12/{property}"))),
                Some(json!({"node": 12, "path": property}))
            );
        }
    }

    #[test]
    fn other_pointers_and_plain_targets_are_not_node_channels() {
        for p in [
            "/materials/0/pbrMetallicRoughness/baseColorFactor",
            "/nodes/3/extensions/KHR_node_visibility/visible",
            "/nodes/3",
            "/nodes//rotation",
            "/nodes/+3/rotation",
            "/nodes/x/rotation",
            "/cameras/0/perspective/yfov",
        ] {
            assert_eq!(node_target(&pointer(p)), None, "{p}");
        }
        assert_eq!(node_target(&json!({"node": 1, "path": "rotation"})), None);
        assert_eq!(node_target(&json!({"path": "pointer"})), None);
    }
}
