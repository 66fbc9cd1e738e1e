//! A glTF document opened for reading: the GLB container, the JSON (typed by
//! gltf-json and raw, for extensions gltf-json does not know), buffers (the GLB
//! chunk, base64 data URIs, files beside the glTF) and accessors, with every length,
//! offset and stride checked so that no file can make a read panic.
//!
//! Written by hand over gltf-json rather than through the `gltf` crate's readers:
//! `gltf::binary::Glb::from_slice` and its accessor iterators compute lengths with
//! unchecked arithmetic (`count - 1`, `length - 12`) and panic on hostile files.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use gltf::json;
use serde_json::Value;

/// Why a glTF document cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum DocError {
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Bad magic, a truncated GLB, JSON that does not parse as glTF.
    #[error("{path}: not a glTF file: {detail}")]
    NotGltf { path: PathBuf, detail: String },
    /// An external buffer file that is not there.
    #[error("{path}: buffer {buffer} (`{uri}`) is missing")]
    MissingBuffer {
        path: PathBuf,
        buffer: usize,
        uri: String,
    },
    /// Anything else wrong in the file; `place` is an accessor, a node, a JSON path.
    #[error("{path}: {place}: {message}")]
    Invalid {
        path: PathBuf,
        place: String,
        message: String,
    },
}

/// A parsed glTF document and its buffers.
pub struct GltfDoc<'a> {
    pub path: &'a Path,
    pub root: json::Root,
    /// The same JSON untyped, for the extensions gltf-json does not know.
    pub raw: Value,
    bin: Option<&'a [u8]>,
    /// The GLB binary chunk left in the file (`open`): file, offset and length.
    bin_file: Option<(std::fs::File, u64, u64)>,
    /// Buffers loaded so far, by index.
    buffers: HashMap<usize, Cow<'a, [u8]>>,
}

impl<'a> GltfDoc<'a> {
    /// Splits GLB or takes JSON, and parses the JSON twice: typed (gltf-json) and raw.
    pub fn from_bytes(bytes: &'a [u8], path: &'a Path) -> Result<Self, DocError> {
        let not_gltf = |detail: String| DocError::NotGltf {
            path: path.to_owned(),
            detail,
        };
        let (json_bytes, bin) = if bytes.starts_with(b"glTF") {
            split_glb(bytes).map_err(not_gltf)?
        } else {
            let text = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
            match text.iter().find(|b| !b.is_ascii_whitespace()) {
                Some(b'{') => (text, None),
                _ => {
                    let start: String = bytes.iter().take(4).map(|&b| char::from(b)).collect();
                    return Err(not_gltf(format!(
                        "starts with {start:?}, neither GLB (`glTF`) nor JSON (`{{`)"
                    )));
                }
            }
        };
        let json_bytes = trim_padding(json_bytes);
        let raw: Value = serde_json::from_slice(json_bytes).map_err(|e| not_gltf(e.to_string()))?;
        let root = json::Root::from_slice(json_bytes).map_err(|e| not_gltf(e.to_string()))?;
        Ok(Self {
            path,
            root,
            raw,
            bin,
            bin_file: None,
            buffers: HashMap::new(),
        })
    }

    /// Opens a file, reading only the JSON: a GLB's binary chunk stays in the file
    /// and each accessor reads just its own bytes, so a large recording never sits
    /// in memory twice. A `.gltf` (JSON) file is read whole.
    pub fn open(path: &'a Path) -> Result<Self, DocError> {
        use std::io::{Read, Seek, SeekFrom};
        let read_err = |source| DocError::Read {
            path: path.to_owned(),
            source,
        };
        let not_gltf = |detail: String| DocError::NotGltf {
            path: path.to_owned(),
            detail,
        };
        let mut file = std::fs::File::open(path).map_err(read_err)?;
        let size = file.metadata().map_err(read_err)?.len();
        let mut header = [0u8; 20];
        let got = file.read(&mut header).map_err(read_err)?;
        if got < 4 || &header[..4] != b"glTF" {
            let bytes = std::fs::read(path).map_err(read_err)?;
            let doc = GltfDoc::from_bytes(&bytes, path)?;
            return Ok(Self {
                path,
                root: doc.root,
                raw: doc.raw,
                bin: None,
                bin_file: None,
                buffers: HashMap::new(),
            });
        }
        let u32_at = |at: usize| {
            u64::from(u32::from_le_bytes([
                header[at],
                header[at + 1],
                header[at + 2],
                header[at + 3],
            ]))
        };
        if got < 20 {
            return Err(not_gltf(format!(
                "truncated GLB: {size} bytes, shorter than its headers"
            )));
        }
        let (version, length, json_length) = (u32_at(4), u32_at(8), u32_at(12));
        if version != 2 {
            return Err(not_gltf(format!("GLB version {version}, expected 2")));
        }
        if length > size {
            return Err(not_gltf(format!(
                "truncated GLB: the header says {length} bytes, the file has {size}"
            )));
        }
        if &header[16..20] != b"JSON" || 20 + json_length > length {
            return Err(not_gltf(
                "GLB does not start with a whole JSON chunk".to_owned(),
            ));
        }
        let mut json_bytes = vec![0u8; usize::try_from(json_length).unwrap_or(0)];
        file.read_exact(&mut json_bytes).map_err(read_err)?;
        let mut bin_file = None;
        let bin_header_at = 20 + json_length;
        if bin_header_at + 8 <= length {
            let mut chunk = [0u8; 8];
            file.seek(SeekFrom::Start(bin_header_at))
                .map_err(read_err)?;
            file.read_exact(&mut chunk).map_err(read_err)?;
            let bin_length =
                u64::from(u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]));
            if &chunk[4..8] == b"BIN\0" {
                if bin_header_at + 8 + bin_length > length {
                    return Err(not_gltf(format!(
                        "truncated GLB: chunk 1 is {bin_length} bytes, only {} remain",
                        length - bin_header_at - 8
                    )));
                }
                bin_file = Some((file, bin_header_at + 8, bin_length));
            }
        }
        let json_bytes = trim_padding(&json_bytes);
        let raw: Value = serde_json::from_slice(json_bytes).map_err(|e| not_gltf(e.to_string()))?;
        let root = json::Root::from_slice(json_bytes).map_err(|e| not_gltf(e.to_string()))?;
        Ok(Self {
            path,
            root,
            raw,
            bin: None,
            bin_file,
            buffers: HashMap::new(),
        })
    }

    /// `len` bytes at `offset` in buffer `index`: read from the file when the GLB's
    /// binary chunk was left there, else borrowed from the loaded buffer.
    fn buffer_range(
        &mut self,
        index: usize,
        offset: u64,
        len: u64,
    ) -> Result<Cow<'_, [u8]>, DocError> {
        use std::io::{Read, Seek, SeekFrom};
        let out_of_range = |doc: &Self| {
            doc.invalid(
                format!("buffer {index}"),
                format!("{len} bytes at {offset} reach past its end"),
            )
        };
        let from_chunk = index == 0
            && self.bin_file.is_some()
            && self.root.buffers.first().is_some_and(|b| b.uri.is_none());
        if from_chunk {
            let declared = self.root.buffers[0].byte_length.0;
            let Some((file, start, chunk_len)) = self.bin_file.as_mut() else {
                return Err(out_of_range(self));
            };
            let end = offset.checked_add(len);
            if end.is_none_or(|e| e > declared.min(*chunk_len)) {
                return Err(out_of_range(self));
            }
            let mut data = vec![0u8; usize::try_from(len).unwrap_or(0)];
            let path = self.path;
            let read_err = |source| DocError::Read {
                path: path.to_owned(),
                source,
            };
            file.seek(SeekFrom::Start(*start + offset))
                .map_err(read_err)?;
            file.read_exact(&mut data).map_err(read_err)?;
            return Ok(Cow::Owned(data));
        }
        let range = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(len).ok())
            .and_then(|(o, l)| Some(o..o.checked_add(l)?));
        let fits = {
            let data = self.buffer(index)?;
            range.clone().is_some_and(|r| r.end <= data.len())
        };
        if !fits {
            return Err(out_of_range(self));
        }
        let data = self.buffer(index)?;
        Ok(Cow::Borrowed(
            range.and_then(|r| data.get(r)).unwrap_or(&[]),
        ))
    }

    /// An error at `place` in this document.
    pub fn invalid(&self, place: impl Into<String>, message: impl Into<String>) -> DocError {
        DocError::Invalid {
            path: self.path.to_owned(),
            place: place.into(),
            message: message.into(),
        }
    }

    /// Buffer `index`'s bytes: the GLB chunk, a base64 data URI or a file next to
    /// the glTF. Checked to hold at least `byteLength` bytes, and cut to it.
    pub fn buffer(&mut self, index: usize) -> Result<&[u8], DocError> {
        if !self.buffers.contains_key(&index) {
            let data = self.load_buffer(index)?;
            self.buffers.insert(index, data);
        }
        match self.buffers.get(&index) {
            Some(data) => Ok(data),
            None => Err(self.invalid(format!("buffer {index}"), "could not be loaded")),
        }
    }

    fn load_buffer(&self, index: usize) -> Result<Cow<'a, [u8]>, DocError> {
        let place = format!("buffer {index}");
        let Some(buffer) = self.root.buffers.get(index) else {
            return Err(self.invalid(place, "does not exist"));
        };
        let declared = buffer.byte_length.0;
        let data: Cow<'a, [u8]> = match buffer.uri.as_deref() {
            None => match (index, self.bin) {
                (0, Some(bin)) => Cow::Borrowed(bin),
                (0, None) => return Err(self.invalid(place, "no uri and no GLB binary chunk")),
                _ => return Err(self.invalid(place, "no uri (only buffer 0 can be the GLB chunk)")),
            },
            Some(uri) if uri.starts_with("data:") => {
                let encoded = uri
                    .split_once(',')
                    .filter(|(header, _)| header.ends_with(";base64"))
                    .map(|(_, data)| data);
                match encoded.and_then(decode_base64) {
                    Some(bytes) => Cow::Owned(bytes),
                    None => return Err(self.invalid(place, "data URI is not valid base64")),
                }
            }
            Some(uri) if uri.contains("://") => {
                return Err(self.invalid(place, format!("`{uri}` is not a relative file path")));
            }
            Some(uri) => {
                let file = self
                    .path
                    .parent()
                    .unwrap_or(Path::new(""))
                    .join(percent_decode(uri));
                match std::fs::read(&file) {
                    Ok(bytes) => Cow::Owned(bytes),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        return Err(DocError::MissingBuffer {
                            path: self.path.to_owned(),
                            buffer: index,
                            uri: uri.to_owned(),
                        });
                    }
                    Err(source) => return Err(DocError::Read { path: file, source }),
                }
            }
        };
        let len = data.len() as u64;
        if len < declared {
            return Err(self.invalid(
                place,
                format!("holds {len} bytes, fewer than its byteLength {declared}"),
            ));
        }
        let keep = usize::try_from(declared).unwrap_or(data.len());
        Ok(match data {
            Cow::Borrowed(b) => Cow::Borrowed(b.get(..keep).unwrap_or(b)),
            Cow::Owned(mut v) => {
                v.truncate(keep);
                Cow::Owned(v)
            }
        })
    }

    /// Reads accessor `index` as floats, `components` per element (1 scalar,
    /// 3 VEC3, 4 VEC4): FLOAT, or normalized BYTE/UNSIGNED_BYTE/SHORT/UNSIGNED_SHORT
    /// (converted as the glTF spec says). Sparse accessors are refused.
    pub fn read_floats(&mut self, index: usize, components: usize) -> Result<Vec<f32>, DocError> {
        use json::accessor::{ComponentType, Type};
        use json::validation::Checked;
        let place = format!("accessor {index}");
        let Some(accessor) = self.root.accessors.get(index) else {
            return Err(self.invalid(place, "does not exist"));
        };
        let found = match accessor.type_ {
            Checked::Valid(Type::Scalar) => 1,
            Checked::Valid(Type::Vec2) => 2,
            Checked::Valid(Type::Vec3) => 3,
            Checked::Valid(Type::Vec4) => 4,
            _ => 0,
        };
        if found != components {
            return Err(self.invalid(
                place,
                format!("has {found} components per element, expected {components}"),
            ));
        }
        if accessor.sparse.is_some() {
            return Err(self.invalid(place, "sparse accessors are not supported here"));
        }
        let component = match accessor.component_type {
            Checked::Valid(json::accessor::GenericComponentType(c)) => c,
            Checked::Invalid => return Err(self.invalid(place, "unknown componentType")),
        };
        let size = match component {
            ComponentType::F32 => 4,
            ComponentType::I8 | ComponentType::U8 if accessor.normalized => 1,
            ComponentType::I16 | ComponentType::U16 if accessor.normalized => 2,
            _ => {
                return Err(self.invalid(
                    place,
                    "must be FLOAT or a normalized BYTE, UNSIGNED_BYTE, SHORT or UNSIGNED_SHORT",
                ));
            }
        };
        let count = usize::try_from(accessor.count.0).unwrap_or(usize::MAX);
        let offset = accessor.byte_offset.map_or(0, |o| o.0);
        let Some(view_index) = accessor.buffer_view.map(|v| v.value()) else {
            // No view: all zeros, as the spec says.
            return Ok(vec![0.0; count.min(1 << 24).saturating_mul(components)]);
        };
        let Some(view) = self.root.buffer_views.get(view_index) else {
            return Err(self.invalid(place, format!("buffer view {view_index} does not exist")));
        };
        let element = size * components;
        let stride = view.byte_stride.map_or(element, |s| s.0);
        let (view_offset, view_length, buffer_index) = (
            view.byte_offset.map_or(0, |o| o.0),
            view.byte_length.0,
            view.buffer.value(),
        );
        // Bytes the accessor spans inside the view: offset + stride·(count-1) + element.
        let span = (count as u64)
            .checked_sub(1)
            .and_then(|n| n.checked_mul(stride as u64))
            .and_then(|n| n.checked_add(offset))
            .and_then(|n| n.checked_add(element as u64));
        let span = match span {
            Some(end) if end <= view_length => end,
            None if count == 0 => 0,
            _ => {
                return Err(self.invalid(
                    place,
                    format!("reads past the end of buffer view {view_index}"),
                ));
            }
        };
        if stride < element {
            return Err(self.invalid(
                place,
                format!("stride {stride} is shorter than an element ({element} bytes)"),
            ));
        }
        if view_offset.checked_add(view_length).is_none() {
            return Err(self.invalid(place, format!("buffer view {view_index} is out of range")));
        }
        let bytes = match self.buffer_range(buffer_index, view_offset, span) {
            Ok(bytes) => bytes,
            Err(DocError::Invalid { .. }) => {
                return Err(self.invalid(
                    place,
                    format!("buffer view {view_index} reads past the end of buffer {buffer_index}"),
                ));
            }
            Err(e) => return Err(e),
        };
        let mut out = Vec::with_capacity(count.saturating_mul(components));
        let base = usize::try_from(offset).unwrap_or(0);
        if component == ComponentType::F32 && stride == element {
            // Tightly packed floats: one pass the compiler can vectorize.
            let packed = bytes.get(base..).unwrap_or(&[]);
            out.extend(packed.chunks_exact(4).map(|b| match b {
                &[b0, b1, b2, b3] => f32::from_le_bytes([b0, b1, b2, b3]),
                _ => 0.0,
            }));
            out.truncate(count.saturating_mul(components));
            return Ok(out);
        }
        for i in 0..count {
            let at = base + i * stride;
            for c in 0..components {
                let b = &bytes[at + c * size..at + (c + 1) * size];
                out.push(match (component, b) {
                    (ComponentType::F32, &[b0, b1, b2, b3]) => f32::from_le_bytes([b0, b1, b2, b3]),
                    (ComponentType::I8, &[b0]) => (f32::from(b0 as i8) / 127.0).max(-1.0),
                    (ComponentType::U8, &[b0]) => f32::from(b0) / 255.0,
                    (ComponentType::I16, &[b0, b1]) => {
                        (f32::from(i16::from_le_bytes([b0, b1])) / 32767.0).max(-1.0)
                    }
                    (ComponentType::U16, &[b0, b1]) => {
                        f32::from(u16::from_le_bytes([b0, b1])) / 65535.0
                    }
                    _ => 0.0,
                });
            }
        }
        Ok(out)
    }
}

/// Splits a GLB into its JSON chunk and optional BIN chunk, checking every length.
pub fn split_glb(bytes: &[u8]) -> Result<(&[u8], Option<&[u8]>), String> {
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

/// Drops the trailing spaces and NULs some exporters pad the JSON chunk with.
fn trim_padding(json: &[u8]) -> &[u8] {
    let end = json
        .iter()
        .rposition(|&b| b != 0 && !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    json.get(..end).unwrap_or(json)
}

/// Decodes standard or URL-safe base64, with or without padding.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let (mut acc, mut bits, mut padded) = (0u32, 0u32, false);
    for c in text.bytes() {
        let value = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => {
                padded = true;
                continue;
            }
            b' ' | b'\t' | b'\r' | b'\n' => continue,
            _ => return None,
        };
        if padded {
            return None;
        }
        acc = (acc << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// `%20` and friends in a relative URI, as a file path.
fn percent_decode(uri: &str) -> String {
    let bytes = uri.as_bytes();
    let hex = |i: usize| bytes.get(i).and_then(|&b| char::from(b).to_digit(16));
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match (b, hex(i + 1), hex(i + 2)) {
            (b'%', Some(high), Some(low)) => {
                out.push((high * 16 + low) as u8);
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
