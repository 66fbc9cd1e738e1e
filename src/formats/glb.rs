//! The GLB container both ways. Reading: splitting a GLB into its JSON and binary
//! chunks, every length checked. Writing, for the writers that stream their binary
//! data (`vrma`, `ext_humanoid`): `write_floats` puts together the JSON around the
//! format's own properties (`asset`, then theirs, then one accessor and buffer view
//! per float array and the one buffer) and writes the 12-byte header, the JSON
//! chunk padded with spaces, the binary chunk's header, then the floats
//! little-endian through a small staging buffer, straight from the format's track
//! buffers, so that a large recording is never copied whole. A writer that builds
//! its whole JSON and binary chunk in memory (`mannequin`) uses `write_start`.

use std::io::{self, Write};

use serde_json::{Value, json};

use crate::formats::tracks::{Spool, Track};

/// The UTF-8 encoding of U+FFFD, which a text decoder writes in place of each byte
/// sequence that is not UTF-8.
const REPLACEMENT_CHARACTER: [u8; 3] = [0xEF, 0xBF, 0xBD];

/// Says why a GLB header that does not add up is so, when the header shows it: a
/// binary file read as UTF-8 text and written back (by an uploader, an editor or a
/// script that decodes it) has each byte sequence that is not UTF-8 replaced by U+FFFD,
/// its lengths and binary data lost past repair. Only for a header already found
/// wrong: a good header's length may hold those three bytes.
pub fn explain_header_error(header: &[u8], error: String) -> String {
    let fields = header.get(4..).unwrap_or_default();
    let reencoded = fields
        .windows(REPLACEMENT_CHARACTER.len())
        .any(|w| w == REPLACEMENT_CHARACTER);
    if reencoded {
        format!(
            "{error}: the header holds U+FFFD replacement characters (bytes EF BF BD), the \
             file was re-encoded as UTF-8 text and its binary data is lost"
        )
    } else {
        error
    }
}

/// Splits a GLB into its JSON chunk and optional BIN chunk, checking every length.
pub fn split_glb(bytes: &[u8]) -> Result<(&[u8], Option<&[u8]>), String> {
    let header = &bytes[..bytes.len().min(20)];
    split_chunks(bytes).map_err(|error| explain_header_error(header, error))
}

/// `split_glb` without the header's explanation.
fn split_chunks(bytes: &[u8]) -> Result<(&[u8], Option<&[u8]>), String> {
    let u32_at = |at: usize| {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    let (Some(version), Some(length)) = (u32_at(4), u32_at(8)) else {
        return Err(format!(
            "truncated GLB: {} bytes, shorter than the 12-byte header",
            bytes.len()
        ));
    };
    if version != 2 {
        return Err(format!("GLB version {version}, expected 2"));
    }
    if length > bytes.len() {
        return Err(format!(
            "truncated GLB: the header says {length} bytes, the file has {}",
            bytes.len()
        ));
    }
    let mut at = 12;
    let mut chunks = Vec::new();
    while at < length {
        let (Some(chunk_length), Some(kind)) = (u32_at(at), bytes.get(at + 4..at + 8)) else {
            return Err(format!(
                "truncated GLB: chunk {} header is cut off",
                chunks.len()
            ));
        };
        let start = at + 8;
        let Some(data) = start
            .checked_add(chunk_length)
            .filter(|&end| end <= length)
            .and_then(|end| bytes.get(start..end))
        else {
            return Err(format!(
                "truncated GLB: chunk {} is {chunk_length} bytes, only {} remain",
                chunks.len(),
                length.saturating_sub(start)
            ));
        };
        chunks.push((kind, data));
        at = start + chunk_length;
    }
    match chunks.as_slice() {
        [(b"JSON", json), rest @ ..] => {
            let bin = rest
                .first()
                .filter(|(kind, _)| *kind == b"BIN\0")
                .map(|(_, data)| *data);
            Ok((json, bin))
        }
        _ => Err("GLB does not start with a JSON chunk".to_owned()),
    }
}

/// What a written file's `asset.generator` says.
pub const GENERATOR: &str = concat!("mocap-bridge ", env!("CARGO_PKG_VERSION"));

/// The glTF type of a written accessor's elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElementType {
    Scalar,
    Vec3,
    Vec4,
    Mat4,
}

impl ElementType {
    /// The spelling in glTF JSON.
    fn name(self) -> &'static str {
        match self {
            Self::Scalar => "SCALAR",
            Self::Vec3 => "VEC3",
            Self::Vec4 => "VEC4",
            Self::Mat4 => "MAT4",
        }
    }

    /// Floats per element.
    fn components(self) -> usize {
        match self {
            Self::Scalar => 1,
            Self::Vec3 => 3,
            Self::Vec4 => 4,
            Self::Mat4 => 16,
        }
    }
}

/// One accessor of FLOAT components that `write_floats` writes, tightly packed in
/// a buffer view of its own, straight from the caller's slice or track.
#[derive(Debug, Clone, Copy)]
pub struct FloatAccessor<'a> {
    values: Floats<'a>,
    type_: ElementType,
    /// Each value is an element's x; its other components are written as 0.
    x_only: bool,
    /// Key times: `min` and `max` are written (the first and last value).
    key_times: bool,
}

/// Where an accessor's floats are.
#[derive(Debug, Clone, Copy)]
enum Floats<'a> {
    Slice(&'a [f32]),
    /// A writer's track, spooled to `Spool` when one is given.
    Track(&'a Track, Option<&'a Spool>),
}

impl Floats<'_> {
    fn len(&self) -> usize {
        match self {
            Self::Slice(values) => values.len(),
            Self::Track(track, _) => track.len(),
        }
    }

    fn first(&self) -> Option<f32> {
        match self {
            Self::Slice(values) => values.first().copied(),
            Self::Track(track, _) => track.first().first().copied(),
        }
    }

    fn last(&self) -> Option<f32> {
        match self {
            Self::Slice(values) => values.last().copied(),
            Self::Track(track, _) => track.last().last().copied(),
        }
    }

    fn for_each_chunk(&self, each: impl FnMut(&[f32]) -> io::Result<()>) -> io::Result<()> {
        match self {
            Self::Slice(values) => {
                let mut each = each;
                each(values)
            }
            Self::Track(track, spool) => track.for_each_chunk(*spool, each),
        }
    }
}

impl<'a> FloatAccessor<'a> {
    /// `values` as they are, `type_`'s number of components per element.
    #[must_use]
    pub fn new(values: &'a [f32], type_: ElementType) -> Self {
        Self::of(Floats::Slice(values), type_)
    }

    /// A writer's `track` (read back from `spool` where it was spooled), `type_`'s
    /// number of components per element.
    #[must_use]
    pub fn track(track: &'a Track, spool: Option<&'a Spool>, type_: ElementType) -> Self {
        Self::of(Floats::Track(track, spool), type_)
    }

    fn of(values: Floats<'a>, type_: ElementType) -> Self {
        Self {
            values,
            type_,
            x_only: false,
            key_times: false,
        }
    }

    /// An animation sampler's input: SCALAR times in seconds, non-decreasing, with
    /// the `min` and `max` glTF requires of it.
    #[must_use]
    pub fn key_times(times: &'a [f32]) -> Self {
        Self::new(times, ElementType::Scalar).as_key_times()
    }

    /// The same floats as an animation sampler's input (see `key_times`).
    #[must_use]
    pub fn as_key_times(self) -> Self {
        Self {
            key_times: true,
            type_: ElementType::Scalar,
            ..self
        }
    }

    /// One value per VEC3 element, written as `(value, 0, 0)`.
    #[must_use]
    pub fn vec3_x(values: &'a [f32]) -> Self {
        Self::new(values, ElementType::Vec3).as_vec3_x()
    }

    /// The same floats, one per VEC3 element (see `vec3_x`).
    #[must_use]
    pub fn as_vec3_x(self) -> Self {
        Self {
            x_only: true,
            type_: ElementType::Vec3,
            ..self
        }
    }

    /// Elements (the accessor's `count`).
    fn count(&self) -> usize {
        if self.x_only {
            self.values.len()
        } else {
            self.values.len() / self.type_.components()
        }
    }

    /// Bytes in the binary chunk.
    fn byte_len(&self) -> usize {
        if self.x_only {
            self.values.len() * 3 * 4
        } else {
            self.values.len() * 4
        }
    }
}

/// Writes a GLB whose JSON is `asset`, then the format's own top-level
/// `properties` in the given order (`scenes`, `nodes`, `animations`, its
/// extension), then `accessors`, `bufferViews` and `buffers` for `accessors`
/// (accessor `i` in buffer view `i`, all in buffer 0); the binary chunk is the
/// accessors' floats in order.
pub fn write_floats(
    out: &mut impl Write,
    properties: impl IntoIterator<Item = (&'static str, Value)>,
    accessors: &[FloatAccessor],
) -> io::Result<()> {
    let mut json = serde_json::Map::new();
    json.insert(
        "asset".into(),
        json!({"version": "2.0", "generator": GENERATOR}),
    );
    for (key, value) in properties {
        json.insert(key.into(), value);
    }
    let mut accessor_json = Vec::with_capacity(accessors.len());
    let mut views = Vec::with_capacity(accessors.len());
    let mut offset = 0usize;
    for (i, accessor) in accessors.iter().enumerate() {
        let len = accessor.byte_len();
        views.push(json!({"buffer": 0, "byteOffset": offset, "byteLength": len}));
        let mut entry = json!({
            "bufferView": i,
            "componentType": 5126, // FLOAT
            "count": accessor.count(),
            "type": accessor.type_.name(),
        });
        if accessor.key_times {
            let min = accessor.values.first().unwrap_or(0.0);
            let max = accessor.values.last().unwrap_or(0.0);
            entry["min"] = json!([min]);
            entry["max"] = json!([max]);
        }
        accessor_json.push(entry);
        offset += len;
    }
    json.insert("accessors".into(), Value::Array(accessor_json));
    json.insert("bufferViews".into(), Value::Array(views));
    json.insert("buffers".into(), json!([{"byteLength": offset}]));

    write_start(out, &Value::Object(json), offset)?;
    let mut staging = Vec::with_capacity(1 << 16);
    for accessor in accessors {
        accessor.values.for_each_chunk(|chunk| {
            let values = chunk.iter().copied();
            if accessor.x_only {
                write_f32s(out, values.flat_map(|x| [x, 0.0, 0.0]), &mut staging)
            } else {
                write_f32s(out, values, &mut staging)
            }
        })?;
    }
    Ok(())
}

/// Writes the GLB header, the JSON chunk and the binary chunk's header for a
/// binary chunk of `bin_len` bytes (a multiple of 4), which the caller writes next.
pub fn write_start(out: &mut impl Write, json: &Value, bin_len: usize) -> io::Result<()> {
    let mut json_bytes = serde_json::to_vec(json).map_err(io::Error::other)?;
    while !json_bytes.len().is_multiple_of(4) {
        json_bytes.push(b' ');
    }
    let total = 12 + 8 + json_bytes.len() + 8 + bin_len;
    let too_large = || io::Error::other("a GLB cannot be larger than 4 GiB");
    let total = u32::try_from(total).map_err(|_| too_large())?;
    let json_len = u32::try_from(json_bytes.len()).map_err(|_| too_large())?;
    let bin_len = u32::try_from(bin_len).map_err(|_| too_large())?;
    out.write_all(b"glTF")?;
    out.write_all(&2u32.to_le_bytes())?;
    out.write_all(&total.to_le_bytes())?;
    out.write_all(&json_len.to_le_bytes())?;
    out.write_all(b"JSON")?;
    out.write_all(&json_bytes)?;
    out.write_all(&bin_len.to_le_bytes())?;
    out.write_all(b"BIN\0")
}

/// Streams floats little-endian through `staging` (reused between calls).
fn write_f32s(
    out: &mut impl Write,
    values: impl IntoIterator<Item = f32>,
    staging: &mut Vec<u8>,
) -> io::Result<()> {
    for v in values {
        staging.extend_from_slice(&v.to_le_bytes());
        if staging.len() >= 1 << 16 {
            out.write_all(staging)?;
            staging.clear();
        }
    }
    out.write_all(staging)?;
    staging.clear();
    Ok(())
}

/// A file written as one GLB (a `.vrma`, an EXT_skeleton_humanoid clip): each
/// format writes its own bytes; the bytes in memory and the file on disk come
/// from here.
pub trait GlbFile {
    /// Writes the whole GLB to `out`.
    fn write_to<W: Write>(&self, out: &mut W) -> io::Result<()>;

    /// The whole file as bytes. Writing into a `Vec` cannot fail.
    #[must_use]
    fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let _ = self.write_to(&mut out);
        out
    }

    /// Creates `path` and writes the file through a buffer.
    fn write_file(&self, path: &std::path::Path) -> io::Result<()> {
        let file = std::fs::File::create(path)?;
        let mut out = io::BufWriter::with_capacity(1 << 20, file);
        self.write_to(&mut out)?;
        out.flush()
    }
}

/// Rewrites the JSON chunk of a GLB with `edit` (tests build bad files with it).
///
/// # Panics
/// When `bytes` is not a GLB with a JSON chunk.
#[cfg(test)]
pub fn with_json(bytes: &[u8], edit: impl Fn(&mut Value)) -> Vec<u8> {
    let (json, bin) = split_glb(bytes).expect("a GLB");
    let mut value: Value = serde_json::from_slice(json).expect("JSON");
    edit(&mut value);
    let bin = bin.unwrap_or(&[]);
    let mut out = Vec::new();
    write_start(&mut out, &value, bin.len()).expect("writing into a Vec");
    out.extend_from_slice(bin);
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A 400-byte GLB (a JSON chunk and a zeroed binary chunk): its length field,
    /// `90 01 00 00`, holds a byte that is not UTF-8, as most GLBs' lengths do.
    pub(crate) fn glb_of_400_bytes() -> Vec<u8> {
        let json = br#"{"asset":{"version":"2.0"}} "#;
        let bin = 400 - 12 - 8 - json.len() - 8;
        let mut out = b"glTF".to_vec();
        for word in [2, 400, json.len() as u32] {
            out.extend(word.to_le_bytes());
        }
        out.extend(b"JSON");
        out.extend(json);
        out.extend((bin as u32).to_le_bytes());
        out.extend(b"BIN\0");
        out.resize(400, 0);
        out
    }

    /// What a tool that reads a file as UTF-8 text and writes it back leaves.
    pub(crate) fn reencoded_as_text(bytes: &[u8]) -> Vec<u8> {
        String::from_utf8_lossy(bytes).into_owned().into_bytes()
    }

    #[test]
    fn a_glb_reencoded_as_text_is_named_so_and_a_cut_one_is_not() {
        let good = glb_of_400_bytes();
        assert!(split_glb(&good).is_ok());

        let err = split_glb(&reencoded_as_text(&good)).unwrap_err();
        assert!(
            err.starts_with("truncated GLB: the header says 29212655 bytes, the file has 402")
                && err.ends_with(
                    "the header holds U+FFFD replacement characters (bytes EF BF BD), the \
                     file was re-encoded as UTF-8 text and its binary data is lost"
                ),
            "{err}"
        );

        let err = split_glb(&good[..300]).unwrap_err();
        assert_eq!(
            err,
            "truncated GLB: the header says 400 bytes, the file has 300"
        );
    }

    #[test]
    fn written_containers_split_back() {
        let mut out = Vec::new();
        write_start(
            &mut out,
            &serde_json::json!({"asset": {"version": "2.0"}}),
            8,
        )
        .unwrap();
        write_f32s(&mut out, [1.5f32, -2.0], &mut Vec::new()).unwrap();
        let (json, bin) = split_glb(&out).unwrap();
        assert!(json.len().is_multiple_of(4));
        assert_eq!(
            bin.unwrap(),
            [1.5f32.to_le_bytes(), (-2.0f32).to_le_bytes()].concat()
        );
    }
}
