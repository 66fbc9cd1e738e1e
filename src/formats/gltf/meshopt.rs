//! Buffer views compressed with `EXT_meshopt_compression` (or
//! `KHR_meshopt_compression`, the same layout with the codecs' later versions):
//! the view's extension names a stream in another buffer, decoded here to the
//! `count · byteStride` bytes its accessors read. gltfpack and gltf-transform
//! write animation keys and inverse bind matrices this way.
//!
//! The codecs and filters are meshoptimizer's own, through the `meshopt` crate.
//! Its safe decoders take the element size from a Rust type, and a view's stride
//! is only known from the file, so the C functions are called directly, on a
//! destination sized and a stride checked here as each one requires.

use serde_json::Value;

/// The extensions a buffer view may be compressed with, in the order looked for.
const EXTENSIONS: [&str; 2] = ["EXT_meshopt_compression", "KHR_meshopt_compression"];

/// Most bytes a compressed view decodes to (256 MiB): the file gives only a
/// count and a stride, which a hostile file can make huge.
const MAX_DECODED: usize = 1 << 28;

/// How a view's stream is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Vertex attributes (and animation keys, bind matrices): the vertex codec.
    Attributes,
    /// A triangle list's indices: the index codec.
    Triangles,
    /// Any other indices: the index sequence codec.
    Indices,
}

/// What the vertex codec's output still needs to become the view's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    None,
    /// Unit vectors in octahedral form.
    Octahedral,
    /// Unit quaternions as three components and the index of the fourth.
    Quaternion,
    /// Floats as a shared exponent and a 24-bit mantissa.
    Exponential,
    /// RGBA colors in YCoCg form (`KHR_meshopt_compression` only).
    Color,
}

impl Mode {
    /// As the extension spells it.
    fn name(self) -> &'static str {
        match self {
            Self::Attributes => "ATTRIBUTES",
            Self::Triangles => "TRIANGLES",
            Self::Indices => "INDICES",
        }
    }
}

impl Filter {
    /// As the extension spells it.
    fn name(self) -> &'static str {
        match self {
            Self::None => "NONE",
            Self::Octahedral => "OCTAHEDRAL",
            Self::Quaternion => "QUATERNION",
            Self::Exponential => "EXPONENTIAL",
            Self::Color => "COLOR",
        }
    }
}

/// Where a compressed view's stream is and how to decode it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compression {
    /// The buffer holding the stream, and where in it.
    pub buffer: usize,
    pub offset: u64,
    pub length: u64,
    /// Bytes per element of the decoded view, and how many elements.
    pub stride: usize,
    pub count: usize,
    pub mode: Mode,
    pub filter: Filter,
}

impl Compression {
    /// Bytes the view decodes to.
    #[must_use]
    pub fn decoded_len(&self) -> usize {
        self.stride.saturating_mul(self.count)
    }
}

/// The compression of buffer view `view` in the file's JSON, `None` when it has
/// none; `Err` says what is wrong with its extension, as the specification
/// constrains it (stride, count and filter against the mode).
pub fn compression(raw: &Value, view: usize) -> Result<Option<Compression>, String> {
    let Some((name, ext)) = EXTENSIONS.iter().find_map(|name| {
        raw.pointer(&format!("/bufferViews/{view}/extensions/{name}"))
            .map(|ext| (*name, ext))
    }) else {
        return Ok(None);
    };
    let bad = |what: String| format!("{name}: {what}");
    let number = |key: &str, default: Option<u64>| match ext.get(key) {
        Some(v) => v
            .as_u64()
            .ok_or_else(|| bad(format!("`{key}` is not a non-negative integer"))),
        None => default.ok_or_else(|| bad(format!("no `{key}`"))),
    };
    let size = |key: &str| {
        number(key, None)
            .and_then(|v| usize::try_from(v).map_err(|_| bad(format!("`{key}` {v} is too large"))))
    };
    let (buffer, offset, length) = (
        size("buffer")?,
        number("byteOffset", Some(0))?,
        number("byteLength", None)?,
    );
    let (stride, count) = (size("byteStride")?, size("count")?);
    let mode = match ext.get("mode").and_then(Value::as_str) {
        Some("ATTRIBUTES") => Mode::Attributes,
        Some("TRIANGLES") => Mode::Triangles,
        Some("INDICES") => Mode::Indices,
        other => {
            return Err(bad(format!(
                "mode {} is not one of ATTRIBUTES, TRIANGLES, INDICES",
                show(other)
            )));
        }
    };
    let filter = match ext.get("filter").and_then(Value::as_str) {
        None | Some("NONE") => Filter::None,
        Some("OCTAHEDRAL") => Filter::Octahedral,
        Some("QUATERNION") => Filter::Quaternion,
        Some("EXPONENTIAL") => Filter::Exponential,
        Some("COLOR") if name.starts_with("KHR") => Filter::Color,
        other => return Err(bad(format!("filter {} is not known", show(other)))),
    };
    let stride_ok = match (mode, filter) {
        (Mode::Attributes, Filter::None | Filter::Exponential) => {
            stride % 4 == 0 && (4..=256).contains(&stride)
        }
        (Mode::Attributes, Filter::Octahedral | Filter::Color) => stride == 4 || stride == 8,
        (Mode::Attributes, Filter::Quaternion) => stride == 8,
        (Mode::Triangles | Mode::Indices, Filter::None) => stride == 2 || stride == 4,
        (Mode::Triangles | Mode::Indices, _) => {
            return Err(bad("a filter on indices".to_owned()));
        }
    };
    if !stride_ok {
        return Err(bad(format!(
            "byteStride {stride} does not suit mode {} with filter {}",
            mode.name(),
            filter.name()
        )));
    }
    if mode == Mode::Triangles && count % 3 != 0 {
        return Err(bad(format!(
            "{count} triangle indices is not a multiple of 3"
        )));
    }
    let compression = Compression {
        buffer,
        offset,
        length,
        stride,
        count,
        mode,
        filter,
    };
    if compression.decoded_len() > MAX_DECODED {
        return Err(bad(format!(
            "{count} elements of {stride} bytes is too many"
        )));
    }
    Ok(Some(compression))
}

/// `Some("X")` as `` `X` ``, `None` as "missing".
fn show(value: Option<&str>) -> String {
    value.map_or_else(|| "missing".to_owned(), |v| format!("`{v}`"))
}

/// Decodes `stream` as `c` says, to `c.decoded_len()` bytes; `Err` when the
/// stream is not what its extension says (meshoptimizer's decoders check every
/// read against the stream's end).
pub fn decode(c: &Compression, stream: &[u8]) -> Result<Vec<u8>, String> {
    let len = c.decoded_len();
    // Words, so that the filters' 16- and 32-bit components are aligned.
    let mut words = vec![0u32; len.div_ceil(4)];
    let destination = words.as_mut_ptr().cast::<std::ffi::c_void>();
    // SAFETY: `destination` holds at least `count · stride` bytes; the decoders
    // write no more than that and read no more than `stream.len()` bytes.
    let code = unsafe {
        match c.mode {
            Mode::Attributes => ::meshopt::ffi::meshopt_decodeVertexBuffer(
                destination,
                c.count,
                c.stride,
                stream.as_ptr(),
                stream.len(),
            ),
            Mode::Triangles => ::meshopt::ffi::meshopt_decodeIndexBuffer(
                destination,
                c.count,
                c.stride,
                stream.as_ptr(),
                stream.len(),
            ),
            Mode::Indices => ::meshopt::ffi::meshopt_decodeIndexSequence(
                destination,
                c.count,
                c.stride,
                stream.as_ptr(),
                stream.len(),
            ),
        }
    };
    if code != 0 {
        return Err(format!(
            "the {} stream of {} bytes does not decode to {} elements of {} bytes",
            c.mode.name(),
            stream.len(),
            c.count,
            c.stride
        ));
    }
    // SAFETY: the filters rewrite `count` elements `stride` bytes apart in place,
    // on a stride `compression` checked to be one each filter takes.
    unsafe {
        match c.filter {
            Filter::None => {}
            Filter::Octahedral => {
                ::meshopt::ffi::meshopt_decodeFilterOct(destination, c.count, c.stride)
            }
            Filter::Quaternion => {
                ::meshopt::ffi::meshopt_decodeFilterQuat(destination, c.count, c.stride)
            }
            Filter::Exponential => {
                ::meshopt::ffi::meshopt_decodeFilterExp(destination, c.count, c.stride)
            }
            Filter::Color => {
                ::meshopt::ffi::meshopt_decodeFilterColor(destination, c.count, c.stride)
            }
        }
    }
    let mut bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
    bytes.truncate(len);
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn view(ext: Value) -> Value {
        json!({"bufferViews": [{"buffer": 1, "byteLength": 0, "extensions": ext}]})
    }

    fn ext(fields: Value) -> Value {
        json!({"EXT_meshopt_compression": fields})
    }

    #[test]
    fn a_view_reads_its_compression_and_the_specifications_limits() {
        assert_eq!(compression(&json!({"bufferViews": [{}]}), 0), Ok(None));
        let fields = json!({"buffer": 0, "byteLength": 9, "byteStride": 8, "count": 2,
            "mode": "ATTRIBUTES", "filter": "QUATERNION"});
        let c = compression(&view(ext(fields.clone())), 0).unwrap().unwrap();
        assert_eq!(
            (c.offset, c.decoded_len(), c.filter),
            (0, 16, Filter::Quaternion)
        );
        let refused = |change: Value, ext_name: &str| {
            let mut f = fields.clone();
            for (k, v) in change.as_object().unwrap() {
                f[k] = v.clone();
            }
            compression(&view(json!({ext_name: f})), 0).unwrap_err()
        };
        let ext_name = "EXT_meshopt_compression";
        assert!(
            refused(json!({"byteStride": 12}), ext_name).contains("byteStride 12 does not suit")
        );
        assert!(refused(json!({"mode": "TRIANGLES"}), ext_name).contains("a filter on indices"));
        assert!(refused(json!({"mode": "STRIPS"}), ext_name).contains("mode `STRIPS`"));
        assert!(refused(json!({"filter": "COLOR"}), ext_name).contains("filter `COLOR`"));
        assert!(refused(json!({"count": 1u64 << 40}), ext_name).contains("is too many"));
        assert!(refused(json!({"buffer": -1}), ext_name).contains("`buffer` is not"));
        // COLOR is KHR_meshopt_compression's.
        let mut f = fields.clone();
        f["filter"] = json!("COLOR");
        f["byteStride"] = json!(4);
        let c = compression(&view(json!({"KHR_meshopt_compression": f})), 0).unwrap();
        assert_eq!(c.map(|c| c.filter), Some(Filter::Color));
        let triangles = json!({"buffer": 0, "byteLength": 9, "byteStride": 2, "count": 4,
            "mode": "TRIANGLES"});
        assert!(
            compression(&view(ext(triangles)), 0)
                .unwrap_err()
                .contains("not a multiple of 3")
        );
    }

    fn decoded(mode: Mode, filter: Filter, stride: usize, count: usize, stream: &[u8]) -> Vec<u8> {
        let c = Compression {
            buffer: 0,
            offset: 0,
            length: stream.len() as u64,
            stride,
            count,
            mode,
            filter,
        };
        decode(&c, stream).unwrap()
    }

    #[test]
    fn streams_decode_to_what_meshoptimizer_encoded() {
        // Triangle and sequence indices, 16 and 32 bits.
        let triangles = [0u32, 1, 2, 2, 1, 3, 3, 1, 4];
        let stream = ::meshopt::encode_index_buffer(&triangles, 5).unwrap();
        let bytes = decoded(Mode::Triangles, Filter::None, 4, 9, &stream);
        let words: Vec<u32> = bytes
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        assert_eq!(words, triangles);
        let sequence = [7u32, 3, 900, 2];
        let stream = ::meshopt::encode_index_sequence(&sequence, 901).unwrap();
        let bytes = decoded(Mode::Indices, Filter::None, 2, 4, &stream);
        let halves: Vec<u32> = bytes
            .chunks_exact(2)
            .map(|b| u32::from(u16::from_le_bytes([b[0], b[1]])))
            .collect();
        assert_eq!(halves, sequence);
        // Unit normals through the octahedral filter, 16 bits.
        let normals = [
            [0.0f32, 0.0, 1.0, 0.0],
            [0.6, 0.0, -0.8, 0.0],
            [0.0, -1.0, 0.0, 0.0],
        ];
        let encoded = ::meshopt::encode_filter_oct::<i16>(&normals, 16);
        let stream = ::meshopt::encode_vertex_buffer(&encoded).unwrap();
        let bytes = decoded(Mode::Attributes, Filter::Octahedral, 8, 3, &stream);
        for (n, b) in normals.iter().zip(bytes.chunks_exact(8)) {
            let c = |i: usize| f32::from(i16::from_le_bytes([b[2 * i], b[2 * i + 1]])) / 32767.0;
            for (i, want) in n.iter().take(3).enumerate() {
                assert!((c(i) - want).abs() < 1e-3, "{n:?}: {}", c(i));
            }
        }
    }

    #[test]
    fn a_stream_too_short_for_its_count_is_an_error() {
        let stream = ::meshopt::encode_vertex_buffer(&[1.0f32, 2.0, 3.0]).unwrap();
        let c = Compression {
            buffer: 0,
            offset: 0,
            length: stream.len() as u64,
            stride: 4,
            count: 300,
            mode: Mode::Attributes,
            filter: Filter::None,
        };
        let message = decode(&c, &stream).unwrap_err();
        assert!(
            message.contains("does not decode to 300 elements of 4 bytes"),
            "{message}"
        );
        assert!(decode(&c, &[]).is_err());
    }
}
