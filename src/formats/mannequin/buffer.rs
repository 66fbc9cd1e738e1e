//! The mannequin's binary chunk, built in memory: each array becomes a buffer view
//! of its own (4-byte aligned, with its glTF target) and an accessor, with the
//! `min`/`max` glTF asks of positions. The bounds are written as the doubles the
//! stored floats are, so a reader comparing them with the data finds them equal.

use glam::{Mat4, Vec3};
use serde_json::{Value, json};

/// glTF component types and buffer view targets.
const FLOAT: u32 = 5126;
const UNSIGNED_BYTE: u32 = 5121;
const UNSIGNED_SHORT: u32 = 5123;
const ARRAY_BUFFER: u32 = 34962;
const ELEMENT_ARRAY_BUFFER: u32 = 34963;

/// Accessors, their buffer views and the bytes behind them (buffer 0).
#[derive(Debug, Default)]
pub struct Buffer {
    bytes: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

/// What `Buffer::finish` hands back: the JSON arrays and the binary chunk.
#[derive(Debug)]
pub struct Finished {
    pub accessors: Value,
    pub buffer_views: Value,
    pub buffers: Value,
    pub bytes: Vec<u8>,
}

impl Buffer {
    /// Appends `data` as a buffer view, padded to 4 bytes; its index.
    fn view(&mut self, data: &[u8], target: Option<u32>) -> usize {
        let mut view =
            json!({"buffer": 0, "byteOffset": self.bytes.len(), "byteLength": data.len()});
        if let Some(target) = target {
            view["target"] = json!(target);
        }
        self.bytes.extend_from_slice(data);
        while !self.bytes.len().is_multiple_of(4) {
            self.bytes.push(0);
        }
        self.views.push(view);
        self.views.len() - 1
    }

    /// Adds an accessor over a new view; its index.
    fn accessor(&mut self, data: &[u8], target: Option<u32>, mut accessor: Value) -> usize {
        accessor["bufferView"] = json!(self.view(data, target));
        self.accessors.push(accessor);
        self.accessors.len() - 1
    }

    /// VEC3 floats of a vertex attribute; `bounded` adds `min` and `max`
    /// (positions and position offsets must have them).
    pub fn vec3(&mut self, values: &[Vec3], bounded: bool) -> usize {
        let data: Vec<u8> = values
            .iter()
            .flat_map(|v| v.to_array())
            .flat_map(f32::to_le_bytes)
            .collect();
        let mut accessor = json!({"componentType": FLOAT, "count": values.len(), "type": "VEC3"});
        if bounded {
            let min = values
                .iter()
                .copied()
                .fold(Vec3::splat(f32::MAX), Vec3::min);
            let max = values
                .iter()
                .copied()
                .fold(Vec3::splat(f32::MIN), Vec3::max);
            let exact = |v: Vec3| v.to_array().map(f64::from);
            accessor["min"] = json!(exact(min));
            accessor["max"] = json!(exact(max));
        }
        self.accessor(&data, Some(ARRAY_BUFFER), accessor)
    }

    /// VEC4 floats of a vertex attribute (skin weights).
    pub fn vec4(&mut self, values: &[[f32; 4]]) -> usize {
        let data: Vec<u8> = values
            .iter()
            .flatten()
            .flat_map(|f| f.to_le_bytes())
            .collect();
        let accessor = json!({"componentType": FLOAT, "count": values.len(), "type": "VEC4"});
        self.accessor(&data, Some(ARRAY_BUFFER), accessor)
    }

    /// VEC4 unsigned bytes of a vertex attribute (skin joints).
    pub fn joints(&mut self, values: &[[u8; 4]]) -> usize {
        let data: Vec<u8> = values.iter().flatten().copied().collect();
        let accessor =
            json!({"componentType": UNSIGNED_BYTE, "count": values.len(), "type": "VEC4"});
        self.accessor(&data, Some(ARRAY_BUFFER), accessor)
    }

    /// Triangle indices.
    pub fn indices(&mut self, values: &[u16]) -> usize {
        let data: Vec<u8> = values.iter().flat_map(|i| i.to_le_bytes()).collect();
        let accessor =
            json!({"componentType": UNSIGNED_SHORT, "count": values.len(), "type": "SCALAR"});
        self.accessor(&data, Some(ELEMENT_ARRAY_BUFFER), accessor)
    }

    /// MAT4 floats, column-major (inverse bind matrices).
    pub fn mat4(&mut self, values: &[Mat4]) -> usize {
        let data: Vec<u8> = values
            .iter()
            .flat_map(Mat4::to_cols_array)
            .flat_map(f32::to_le_bytes)
            .collect();
        let accessor = json!({"componentType": FLOAT, "count": values.len(), "type": "MAT4"});
        self.accessor(&data, None, accessor)
    }

    /// The JSON arrays and the bytes of buffer 0.
    #[must_use]
    pub fn finish(self) -> Finished {
        Finished {
            accessors: Value::Array(self.accessors),
            buffer_views: Value::Array(self.views),
            buffers: json!([{"byteLength": self.bytes.len()}]),
            bytes: self.bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_stay_aligned_and_bounds_are_the_stored_floats() {
        let mut b = Buffer::default();
        assert_eq!(b.indices(&[0, 1, 2]), 0);
        let positions = [Vec3::new(0.1, -0.2, 0.3), Vec3::new(-0.1, 0.2, 0.0)];
        assert_eq!(b.vec3(&positions, true), 1);
        let done = b.finish();
        assert_eq!(done.buffer_views[0]["byteLength"], 6);
        assert_eq!(done.buffer_views[1]["byteOffset"], 8);
        assert_eq!(done.bytes.len(), 8 + 24);
        let min = &done.accessors[1]["min"];
        assert_eq!(min[0].as_f64(), Some(f64::from(-0.1f32)));
        assert_eq!(
            done.accessors[1]["max"][1].as_f64(),
            Some(f64::from(0.2f32))
        );
        assert_eq!(done.buffers[0]["byteLength"], 32);
    }
}
