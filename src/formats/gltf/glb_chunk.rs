//! A GLB's buffer 0 is its binary chunk. Some exporters size that buffer's
//! `byteLength` before they append more data to the chunk (a VRM 1.0 avatar whose
//! 25 skins' inverse bind matrices sit past the declared length), so buffer views
//! reach past `byteLength` while staying inside the chunk. three.js (and so
//! three-vrm) reads the whole chunk and loads such a file; the reader here does
//! the same (`GltfDoc` keeps the chunk whole) and says so in a note.

use super::doc::GltfDoc;

/// A note when buffer views of buffer 0 reach past its `byteLength` into the rest
/// of the GLB binary chunk.
pub(super) fn views_past_byte_length(doc: &GltfDoc) -> Option<String> {
    let chunk = doc.glb_chunk_len()?;
    let declared = doc.root.buffers.first()?.byte_length.0;
    let (count, end) = doc
        .root
        .buffer_views
        .iter()
        .filter(|view| view.buffer.value() == 0)
        .filter_map(|view| {
            let offset = view.byte_offset.map_or(0, |o| o.0);
            offset.checked_add(view.byte_length.0)
        })
        .filter(|&end| end > declared && end <= chunk)
        .fold((0usize, 0u64), |(count, last), end| {
            (count + 1, last.max(end))
        });
    (count > 0).then(|| {
        format!(
            "buffer 0 declares {declared} bytes, but {count} buffer view(s) reach {end} bytes into its {chunk}-byte GLB chunk: the whole chunk is read, as three.js reads it"
        )
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::super::test_support::{
        arm_posed_down, droop_deg, glb, matrix_bytes, skinned, t_pose_bind_worlds,
    };
    use super::super::{load_skeleton, parse};

    /// The arm rig (nodes posed down, T-pose bind) as a GLB whose buffer 0 declares
    /// one matrix though the chunk holds all three inverse bind matrices.
    fn short_buffer_glb() -> Vec<u8> {
        let bind = t_pose_bind_worlds().map(|m| m.inverse());
        let mut doc = skinned(arm_posed_down(), &[0, 1, 2], &bind);
        doc["buffers"][0] = json!({"byteLength": 64});
        glb(&doc, &matrix_bytes(&bind))
    }

    #[test]
    fn views_past_a_short_glb_buffer_are_read_from_the_chunk() {
        let bytes = short_buffer_glb();
        let rig = parse(&bytes, Path::new("short.glb")).unwrap_or_else(|e| panic!("{e}"));
        // The rest comes from the inverse bind matrices (T-pose), not the nodes.
        assert!(droop_deg(&rig, "Arm", "Forearm").abs() < 0.01);
        assert!(
            rig.notes.iter().any(|n| n
                == "buffer 0 declares 64 bytes, but 1 buffer view(s) reach 192 bytes into its 192-byte GLB chunk: the whole chunk is read, as three.js reads it"),
            "{:?}",
            rig.notes
        );

        // The same through the reader that leaves the chunk in the file.
        let dir = std::env::temp_dir().join(format!("glb_chunk_test_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("short.glb");
        std::fs::write(&path, &bytes).unwrap();
        let rig = load_skeleton(&path);
        std::fs::remove_dir_all(&dir).ok();
        let rig = rig.unwrap_or_else(|e| panic!("{e}"));
        assert!(droop_deg(&rig, "Arm", "Forearm").abs() < 0.01);
    }

    #[test]
    fn views_past_the_chunk_are_still_refused() {
        let bind = t_pose_bind_worlds().map(|m| m.inverse());
        let mut doc = skinned(arm_posed_down(), &[0, 1, 2], &bind);
        doc["buffers"][0] = json!({"byteLength": 64});
        let bytes = glb(&doc, &matrix_bytes(&bind[..2]));
        let err = parse(&bytes, Path::new("cut.glb")).unwrap_err().to_string();
        assert!(err.contains("reads past the end of buffer 0"), "{err}");
    }
}
