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
use std::sync::Arc;

use gltf::json;
use gltf::json::accessor::{ComponentType, GenericComponentType, Type};
use gltf::json::validation::Checked;
use serde_json::Value;

use super::animation_pointer::node_target;
use super::external;
use super::meshopt;
use crate::formats::glb::{explain_header_error, split_glb};

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
    /// Key-time accessors read so far (`read_times`), by accessor index.
    times: HashMap<usize, Arc<[f32]>>,
    /// Meshopt-compressed buffer views decoded so far, by view index.
    decoded: HashMap<usize, Vec<u8>>,
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
        Self::with_json(path, json_bytes, bin, None)
    }

    /// Parses the JSON twice, typed (gltf-json) and raw, into a document over the
    /// given binary chunk.
    fn with_json(
        path: &'a Path,
        json_bytes: &[u8],
        bin: Option<&'a [u8]>,
        bin_file: Option<(std::fs::File, u64, u64)>,
    ) -> Result<Self, DocError> {
        let not_gltf = |detail: String| DocError::NotGltf {
            path: path.to_owned(),
            detail,
        };
        let json_bytes = trim_padding(json_bytes);
        let raw: Value = serde_json::from_slice(json_bytes).map_err(|e| not_gltf(e.to_string()))?;
        let root: json::Root =
            serde_path_to_error::deserialize(skeleton_part(&raw)).map_err(|e| {
                let at = e.path().to_string();
                match at.as_str() {
                    "." | "" => not_gltf(e.inner().to_string()),
                    _ => not_gltf(format!("{at}: {}", e.inner())),
                }
            })?;
        Ok(Self {
            path,
            root,
            raw,
            bin,
            bin_file,
            buffers: HashMap::new(),
            times: HashMap::new(),
            decoded: HashMap::new(),
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
                times: HashMap::new(),
                decoded: HashMap::new(),
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
        // A header that does not add up says so, and why when it shows (`glb`).
        let bad_header = |detail: String| not_gltf(explain_header_error(&header[..got], detail));
        if got < 20 {
            return Err(bad_header(format!(
                "truncated GLB: {size} bytes, shorter than its headers"
            )));
        }
        let (version, length, json_length) = (u32_at(4), u32_at(8), u32_at(12));
        if version != 2 {
            return Err(bad_header(format!("GLB version {version}, expected 2")));
        }
        if length > size {
            return Err(bad_header(format!(
                "truncated GLB: the header says {length} bytes, the file has {size}"
            )));
        }
        if &header[16..20] != b"JSON" || 20 + json_length > length {
            return Err(bad_header(
                "GLB does not start with a whole JSON chunk".to_owned(),
            ));
        }
        let mut json_bytes = vec![0u8; usize::try_from(json_length).unwrap_or(0)];
        file.read_exact(&mut json_bytes).map_err(read_err)?;
        // The chunk after the JSON is checked as `split_glb` checks it, whatever its
        // kind, so that a file gives one error however it is opened.
        let mut bin_file = None;
        let bin_header_at = 20 + json_length;
        if bin_header_at < length {
            if bin_header_at + 8 > length {
                return Err(bad_header(
                    "truncated GLB: chunk 1 header is cut off".to_owned(),
                ));
            }
            let mut chunk = [0u8; 8];
            file.seek(SeekFrom::Start(bin_header_at))
                .map_err(read_err)?;
            file.read_exact(&mut chunk).map_err(read_err)?;
            let bin_length =
                u64::from(u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]));
            if bin_header_at + 8 + bin_length > length {
                return Err(bad_header(format!(
                    "truncated GLB: chunk 1 is {bin_length} bytes, only {} remain",
                    length - bin_header_at - 8
                )));
            }
            if &chunk[4..8] == b"BIN\0" {
                bin_file = Some((file, bin_header_at + 8, bin_length));
            }
        }
        Self::with_json(path, &json_bytes, None, bin_file)
    }

    /// Whether buffer `index` is the GLB binary chunk left in the file (`open`).
    fn in_file(&self, index: usize) -> bool {
        index == 0
            && self.bin_file.is_some()
            && self.root.buffers.first().is_some_and(|b| b.uri.is_none())
    }

    /// The length of the GLB binary chunk when buffer 0 is that chunk.
    pub(super) fn glb_chunk_len(&self) -> Option<u64> {
        self.root.buffers.first().filter(|b| b.uri.is_none())?;
        match (&self.bin_file, self.bin) {
            (Some((_, _, chunk_len)), _) => Some(*chunk_len),
            (None, Some(bin)) => Some(bin.len() as u64),
            (None, None) => None,
        }
    }

    /// Buffer `index`'s length in bytes; a binary chunk left in the file is not read.
    fn buffer_len(&mut self, index: usize) -> Result<u64, DocError> {
        match (&self.bin_file, self.root.buffers.first()) {
            // The whole chunk, as three.js reads it (`glb_chunk`).
            (Some((_, _, chunk_len)), Some(_)) if self.in_file(index) => Ok(*chunk_len),
            _ => Ok(self.buffer(index)?.len() as u64),
        }
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
        let size = self.buffer_len(index)?;
        if offset.checked_add(len).is_none_or(|end| end > size) {
            return Err(out_of_range(self));
        }
        if self.in_file(index) {
            let Some((file, start, _)) = self.bin_file.as_mut() else {
                return Err(out_of_range(self));
            };
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
        // In range: `offset + len` fits in the buffer, which is in memory.
        let range = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(len).ok())
            .and_then(|(o, l)| Some(o..o.checked_add(l)?));
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
    /// the glTF. Checked to hold at least `byteLength` bytes, and cut to it; the GLB
    /// chunk is kept whole (`glb_chunk`).
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
                let folder = self.path.parent().unwrap_or(Path::new(""));
                match external::read(folder, &percent_decode(uri), declared, external::trusted()) {
                    Ok(bytes) => Cow::Owned(bytes),
                    Err(external::Refused::Missing) => {
                        return Err(DocError::MissingBuffer {
                            path: self.path.to_owned(),
                            buffer: index,
                            uri: uri.to_owned(),
                        });
                    }
                    Err(external::Refused::Read(file, source)) => {
                        return Err(DocError::Read { path: file, source });
                    }
                    Err(refused) => {
                        return Err(self.invalid(place, format!("`{uri}`: {refused}")));
                    }
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
        if index == 0 && buffer.uri.is_none() {
            // The GLB chunk is kept whole, as three.js reads it (`glb_chunk`).
            return Ok(data);
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

    /// Reads a SCALAR accessor of key times once: the channels of an animation
    /// usually share one, and a long recording's times are then held once.
    pub fn read_times(&mut self, index: usize) -> Result<Arc<[f32]>, DocError> {
        if let Some(times) = self.times.get(&index) {
            return Ok(times.clone());
        }
        let times: Arc<[f32]> = self.read_floats(index, 1)?.into();
        self.times.insert(index, times.clone());
        Ok(times)
    }

    /// Reads accessor `index` as floats, `components` per element (1 SCALAR,
    /// 2 VEC2, 3 VEC3, 4 VEC4, 16 MAT4): FLOAT, or normalized BYTE, UNSIGNED_BYTE,
    /// SHORT or UNSIGNED_SHORT. An accessor without a buffer view reads as zeros, as
    /// the spec says. Errors are at `accessor {index}`; see `read_accessor`.
    pub fn read_floats(&mut self, index: usize, components: usize) -> Result<Vec<f32>, DocError> {
        let place = format!("accessor {index}");
        let type_ = match components {
            1 => Type::Scalar,
            2 => Type::Vec2,
            3 => Type::Vec3,
            4 => Type::Vec4,
            16 => Type::Mat4,
            _ => {
                return Err(self.invalid(place, format!("{components} components per element")));
            }
        };
        let spec = AccessorSpec {
            type_,
            normalized_integers: true,
        };
        self.read_accessor_or_zeros(index, spec, &place, "")
    }

    /// Reads accessor `index` as `read_accessor` does; one without a buffer view
    /// that is not sparse reads as `count` elements of zeros, as the spec says.
    pub fn read_accessor_or_zeros(
        &mut self,
        index: usize,
        spec: AccessorSpec,
        place: &str,
        what: &str,
    ) -> Result<Vec<f32>, DocError> {
        match self.read_accessor(index, spec, place, what)? {
            Some(values) => Ok(values),
            None => {
                let count = self.root.accessors.get(index).map_or(0, |a| a.count.0);
                let count = usize::try_from(count)
                    .unwrap_or(usize::MAX)
                    .min(MAX_ZERO_FILL);
                Ok(vec![0.0; count.saturating_mul(spec.type_.multiplicity())])
            }
        }
    }

    /// Reads accessor `index` as `spec` says: every element's components as f32
    /// (normalized integers converted as the glTF spec says: `max(c / 127, -1)` for
    /// BYTE, `c / 255` for UNSIGNED_BYTE, and so on), with every offset, stride and
    /// length checked against the view and the view against its buffer. `None` when
    /// the accessor has no buffer view and is not sparse (all zeros, by the spec).
    /// Sparse accessors read as their base values with the sparse ones put in.
    /// Errors are at `place`, and their messages start with `what` (`input accessor
    /// 7 reads past the end of buffer view 2`), if not empty.
    pub fn read_accessor(
        &mut self,
        index: usize,
        spec: AccessorSpec,
        place: &str,
        what: &str,
    ) -> Result<Option<Vec<f32>>, DocError> {
        // `rest` starts with ` ` (says what the accessor is) or `: ` (says more).
        let fail = |doc: &Self, rest: String| match what {
            "" => doc.invalid(place, rest.trim_start_matches(':').trim_start()),
            _ => doc.invalid(place, format!("{what}{rest}")),
        };
        let Some(accessor) = self.root.accessors.get(index) else {
            return Err(fail(self, " does not exist".to_owned()));
        };
        let component = match (&accessor.component_type, &accessor.type_) {
            (Checked::Valid(GenericComponentType(c)), Checked::Valid(t)) if *t == spec.type_ => {
                Some(*c)
            }
            _ => None,
        };
        let component = match component {
            Some(ComponentType::F32) => ComponentType::F32,
            Some(
                c @ (ComponentType::I8
                | ComponentType::U8
                | ComponentType::I16
                | ComponentType::U16),
            ) if spec.integers() && accessor.normalized => c,
            _ => return Err(fail(self, format!(" is not {spec}"))),
        };
        let count = accessor.count.0;
        let offset = accessor.byte_offset.map_or(0, |o| o.0);
        let view = accessor.buffer_view.map(|v| v.value());
        let sparse = accessor.sparse.clone();
        let multiplicity = spec.type_.multiplicity();
        let base = match view {
            Some(view) => {
                let elements = Elements {
                    view,
                    offset,
                    count,
                    component,
                    multiplicity,
                    packed: false,
                };
                Some(self.read_elements(&elements, &fail)?)
            }
            None => None,
        };
        let Some(sparse) = sparse else {
            return Ok(base);
        };
        // Sparse: the base values (zeros without a view), then `sparse.count`
        // elements replaced at the indices given (glTF 2.0 § 3.6.2.3).
        let mut values = match base {
            Some(values) => values,
            None => {
                let len = usize::try_from(count)
                    .ok()
                    .and_then(|c| c.checked_mul(multiplicity))
                    .filter(|&len| len <= MAX_ZERO_FILL)
                    .ok_or_else(|| fail(self, format!(": {count} elements is too many")))?;
                vec![0.0; len]
            }
        };
        let index_component = match sparse.indices.component_type {
            Checked::Valid(json::accessor::IndexComponentType(c)) => c,
            Checked::Invalid => {
                return Err(fail(
                    self,
                    ": sparse indices are not of an integer type".to_owned(),
                ));
            }
        };
        let indices = Elements {
            view: sparse.indices.buffer_view.value(),
            offset: sparse.indices.byte_offset.0,
            count: sparse.count.0,
            component: index_component,
            multiplicity: 1,
            packed: true,
        };
        let indices = self.read_indices(&indices, &fail)?;
        let replacements = Elements {
            view: sparse.values.buffer_view.value(),
            offset: sparse.values.byte_offset.0,
            count: sparse.count.0,
            component,
            multiplicity,
            packed: true,
        };
        let replacements = self.read_elements(&replacements, &fail)?;
        for (&i, value) in indices.iter().zip(replacements.chunks_exact(multiplicity)) {
            let at = usize::try_from(i).unwrap_or(usize::MAX);
            let Some(slot) = at
                .checked_mul(multiplicity)
                .and_then(|start| values.get_mut(start..start.checked_add(multiplicity)?))
            else {
                return Err(fail(
                    self,
                    format!(": sparse index {i} is past its {count} elements"),
                ));
            };
            slot.copy_from_slice(value);
        }
        Ok(Some(values))
    }

    /// The bytes of `elements` (each `element` bytes, `stride` apart) and the stride,
    /// with the elements checked to lie inside the view and the view inside its
    /// buffer. Errors through `fail` (see `read_accessor`).
    fn element_bytes(
        &mut self,
        elements: &Elements,
        element: usize,
        fail: &dyn Fn(&Self, String) -> DocError,
    ) -> Result<(Cow<'_, [u8]>, usize), DocError> {
        let Elements {
            view: view_index,
            offset: accessor_offset,
            count,
            packed,
            ..
        } = *elements;
        let Some(view) = self.root.buffer_views.get(view_index) else {
            return Err(fail(
                self,
                format!(": buffer view {view_index} does not exist"),
            ));
        };
        let stride = match (packed, view.byte_stride) {
            (false, Some(s)) => s.0,
            _ => element,
        };
        if stride < element {
            return Err(fail(
                self,
                format!(
                    ": buffer view {view_index} has byteStride {stride}, less than its {element}-byte elements"
                ),
            ));
        }
        // Bytes the accessor spans in the view: offset + stride·(count-1) + element.
        let accessor_end = count
            .checked_sub(1)
            .and_then(|last| last.checked_mul(stride as u64))
            .and_then(|v| v.checked_add(accessor_offset))
            .and_then(|v| v.checked_add(element as u64))
            .unwrap_or(if count == 0 { 0 } else { u64::MAX });
        if accessor_end > view.byte_length.0 {
            return Err(fail(
                self,
                format!(" reads past the end of buffer view {view_index}"),
            ));
        }
        let view_offset = view.byte_offset.map_or(0, |o| o.0);
        let view_end = view_offset.checked_add(view.byte_length.0);
        let buffer_index = view.buffer.value();
        if let Some(decoded) = self.decoded_view(view_index, fail)? {
            // The view's own bytes are a fallback that may hold nothing: the
            // accessor reads the decoded view.
            let range = usize::try_from(accessor_offset)
                .ok()
                .zip(usize::try_from(accessor_end).ok())
                .filter(|&(start, end)| start <= end && end <= decoded);
            let Some((start, end)) = range else {
                return Err(fail(
                    self,
                    format!(
                        " reads past the end of buffer view {view_index} as decoded ({decoded} bytes)"
                    ),
                ));
            };
            let bytes = self
                .decoded
                .get(&view_index)
                .and_then(|d| d.get(start..end));
            return Ok((Cow::Borrowed(bytes.unwrap_or(&[])), stride));
        }
        let buffer_len = self.buffer_len(buffer_index)?;
        if view_end.is_none_or(|end| end > buffer_len) {
            return Err(fail(
                self,
                format!(" reads past the end of buffer {buffer_index}"),
            ));
        }
        if count == 0 {
            return Ok((Cow::Borrowed(&[]), stride));
        }
        // In bounds from here: the accessor fits in the view, the view in the buffer.
        let start = view_offset + accessor_offset;
        let past_end = fail(
            self,
            format!(" reads past the end of buffer {buffer_index}"),
        );
        match self.buffer_range(buffer_index, start, accessor_end - accessor_offset) {
            Ok(bytes) => Ok((bytes, stride)),
            Err(DocError::Invalid { .. }) => Err(past_end),
            Err(e) => Err(e),
        }
    }

    /// How many bytes buffer view `view` decodes to when it is meshopt-compressed
    /// (decoded on first use and kept), else `None`. Errors through `fail`.
    fn decoded_view(
        &mut self,
        view: usize,
        fail: &dyn Fn(&Self, String) -> DocError,
    ) -> Result<Option<usize>, DocError> {
        if let Some(bytes) = self.decoded.get(&view) {
            return Ok(Some(bytes.len()));
        }
        let compression = match meshopt::compression(&self.raw, view) {
            Ok(Some(c)) => c,
            Ok(None) => return Ok(None),
            Err(e) => return Err(fail(self, format!(": buffer view {view}: {e}"))),
        };
        let stream =
            self.buffer_range(compression.buffer, compression.offset, compression.length)?;
        let decoded = meshopt::decode(&compression, &stream);
        drop(stream);
        let bytes = decoded.map_err(|e| fail(self, format!(": buffer view {view}: {e}")))?;
        let len = bytes.len();
        self.decoded.insert(view, bytes);
        Ok(Some(len))
    }

    /// `elements` as floats (normalized integers converted as the glTF spec says:
    /// `max(c / 127, -1)` for BYTE, `c / 255` for UNSIGNED_BYTE, and so on).
    fn read_elements(
        &mut self,
        elements: &Elements,
        fail: &dyn Fn(&Self, String) -> DocError,
    ) -> Result<Vec<f32>, DocError> {
        let component = elements.component;
        let size = component.size();
        let element = elements.multiplicity * size;
        let (bytes, stride) = self.element_bytes(elements, element, fail)?;
        let count = usize::try_from(elements.count).unwrap_or(usize::MAX);
        let mut values = Vec::with_capacity(count.saturating_mul(elements.multiplicity));
        if component == ComponentType::F32 && stride == element {
            // Tightly packed floats: one pass the compiler can vectorize.
            values.extend(bytes.chunks_exact(4).map(|b| match *b {
                [b0, b1, b2, b3] => f32::from_le_bytes([b0, b1, b2, b3]),
                _ => 0.0,
            }));
            return Ok(values);
        }
        for i in 0..count {
            let at = i.saturating_mul(stride);
            let Some(bytes) = bytes.get(at..at.saturating_add(element)) else {
                break;
            };
            values.extend(bytes.chunks_exact(size).map(|chunk| match *chunk {
                [b0, b1, b2, b3] => f32::from_le_bytes([b0, b1, b2, b3]),
                [b0, b1] if component == ComponentType::I16 => {
                    (f32::from(i16::from_le_bytes([b0, b1])) / 32767.0).max(-1.0)
                }
                [b0, b1] => f32::from(u16::from_le_bytes([b0, b1])) / 65535.0,
                [b0] if component == ComponentType::I8 => {
                    (f32::from(i8::from_le_bytes([b0])) / 127.0).max(-1.0)
                }
                [b0] => f32::from(b0) / 255.0,
                _ => 0.0,
            }));
        }
        Ok(values)
    }

    /// `elements` as unsigned integers (a sparse accessor's indices), strictly
    /// increasing as the spec requires.
    fn read_indices(
        &mut self,
        elements: &Elements,
        fail: &dyn Fn(&Self, String) -> DocError,
    ) -> Result<Vec<u64>, DocError> {
        let size = elements.component.size();
        let (bytes, _) = self.element_bytes(elements, size, fail)?;
        let indices: Vec<u64> = bytes
            .chunks_exact(size)
            .map(|chunk| match *chunk {
                [b0, b1, b2, b3] => u64::from(u32::from_le_bytes([b0, b1, b2, b3])),
                [b0, b1] => u64::from(u16::from_le_bytes([b0, b1])),
                [b0] => u64::from(b0),
                _ => u64::MAX,
            })
            .collect();
        if indices.windows(2).any(|w| w[0] >= w[1]) {
            return Err(fail(
                self,
                ": sparse indices do not strictly increase".to_owned(),
            ));
        }
        Ok(indices)
    }
}

/// Most zeros an accessor without a buffer view reads as (16 M floats): the file
/// says only a count, which a hostile file can make huge.
const MAX_ZERO_FILL: usize = 1 << 24;

/// Where an accessor's elements (or a sparse accessor's indices or values) lie.
struct Elements {
    view: usize,
    /// Byte offset in the view.
    offset: u64,
    count: u64,
    component: ComponentType,
    /// Components per element.
    multiplicity: usize,
    /// Packed one after another whatever the view's byteStride (sparse data).
    packed: bool,
}

/// What `GltfDoc::read_accessor` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccessorSpec {
    pub type_: Type,
    /// Also accept normalized BYTE, UNSIGNED_BYTE, SHORT and UNSIGNED_SHORT, as the
    /// glTF spec allows for rotation outputs (FLOAT is always accepted). Not for
    /// MAT2 and MAT3, whose integer columns are padded.
    pub normalized_integers: bool,
}

impl AccessorSpec {
    /// FLOAT only.
    pub const fn floats(type_: Type) -> Self {
        Self {
            type_,
            normalized_integers: false,
        }
    }

    /// Whether normalized integers are accepted.
    fn integers(&self) -> bool {
        self.normalized_integers && !matches!(self.type_, Type::Mat2 | Type::Mat3)
    }
}

/// For messages: `MAT4 of floats`, `VEC4 of floats or normalized integers`.
impl std::fmt::Display for AccessorSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = match self.type_ {
            Type::Scalar => "SCALAR",
            Type::Vec2 => "VEC2",
            Type::Vec3 => "VEC3",
            Type::Vec4 => "VEC4",
            Type::Mat2 => "MAT2",
            Type::Mat3 => "MAT3",
            Type::Mat4 => "MAT4",
        };
        let integers = if self.integers() {
            " or normalized integers"
        } else {
            ""
        };
        write!(f, "{name} of floats{integers}")
    }
}

/// The parts of the JSON a skeleton and its animations are read from, for the
/// typed parse: asset, scenes, nodes, skins, animations, accessors, buffer views and
/// buffers. Meshes, materials, textures, images, cameras and extensions are left
/// out, so whatever they hold (Draco or meshopt compression, lights, textures
/// without a source) cannot refuse the file; gltf-json is stricter than the spec
/// in two places the skeleton needs, made up here: a scene may lack `nodes`, and a
/// channel may lack `target.node` when an extension replaces it
/// (EXT_skeleton_humanoid's `humanoidBoneName`, KHR_animation_pointer); a pointer to
/// a node's transform or weights is read as that node's channel
/// (`animation_pointer`), other such channels are left out of the typed JSON and
/// stay in `raw` for their readers.
fn skeleton_part(raw: &Value) -> Value {
    const KEYS: [&str; 9] = [
        "asset",
        "scene",
        "scenes",
        "nodes",
        "skins",
        "animations",
        "accessors",
        "bufferViews",
        "buffers",
    ];
    let mut part = serde_json::Map::new();
    for key in KEYS {
        if let Some(value) = raw.get(key) {
            part.insert(key.to_owned(), value.clone());
        }
    }
    if let Some(scenes) = part.get_mut("scenes").and_then(Value::as_array_mut) {
        for scene in scenes.iter_mut().filter_map(Value::as_object_mut) {
            scene
                .entry("nodes")
                .or_insert_with(|| Value::Array(Vec::new()));
        }
    }
    let nodeless = |channel: &Value| {
        channel
            .get("target")
            .is_some_and(|t| t.get("node").is_none())
    };
    if let Some(animations) = part.get_mut("animations").and_then(Value::as_array_mut) {
        for animation in animations {
            if let Some(channels) = animation.get_mut("channels").and_then(Value::as_array_mut) {
                for channel in channels.iter_mut() {
                    let plain = channel.get("target").and_then(node_target);
                    if let Some(target) = plain {
                        channel["target"] = target;
                    }
                }
                channels.retain(|c| !nodeless(c));
            }
        }
    }
    Value::Object(part)
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
pub(super) fn decode_base64(text: &str) -> Option<Vec<u8>> {
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
pub(super) fn percent_decode(uri: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// One data-URI buffer: a normalized SHORT VEC4 `(0, 0, 0, 1)` (accessor 0) and
    /// a FLOAT MAT4, the identity (accessor 1).
    fn two_accessors() -> Value {
        let data = "AAAAAAAA/38AAIA/AAAAAAAAAAAAAAAAAAAAAAAAgD8AAAAAAAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAAAAAAIA/";
        json!({
            "asset": {"version": "2.0"},
            "accessors": [
                {"bufferView": 0, "componentType": 5122, "normalized": true, "count": 1, "type": "VEC4"},
                {"bufferView": 1, "componentType": 5126, "count": 1, "type": "MAT4"}
            ],
            "bufferViews": [
                {"buffer": 0, "byteLength": 8},
                {"buffer": 0, "byteOffset": 8, "byteLength": 64}
            ],
            "buffers": [{"byteLength": 72, "uri": format!("data:application/octet-stream;base64,{data}")}]
        })
    }

    #[test]
    fn accessors_read_as_their_spec_says_or_name_the_problem() {
        let text = two_accessors().to_string();
        let mut doc = GltfDoc::from_bytes(text.as_bytes(), Path::new("t.gltf")).unwrap();
        assert_eq!(doc.read_floats(0, 4).unwrap(), [0.0, 0.0, 0.0, 1.0]);
        assert_eq!(
            doc.read_floats(1, 16).unwrap(),
            glam::Mat4::IDENTITY.to_cols_array()
        );
        let floats = AccessorSpec::floats(Type::Vec4);
        let err = doc.read_accessor(0, floats, "skin 0", "accessor 0");
        assert_eq!(
            err.unwrap_err().to_string(),
            "t.gltf: skin 0: accessor 0 is not VEC4 of floats"
        );
        assert_eq!(
            doc.read_floats(1, 4).unwrap_err().to_string(),
            "t.gltf: accessor 1: is not VEC4 of floats or normalized integers"
        );

        let mut long_view = two_accessors();
        long_view["bufferViews"][1]["byteLength"] = json!(100);
        let text = long_view.to_string();
        let mut doc = GltfDoc::from_bytes(text.as_bytes(), Path::new("t.gltf")).unwrap();
        let err = doc.read_accessor(1, AccessorSpec::floats(Type::Mat4), "skin 0", "ibm");
        assert_eq!(
            err.unwrap_err().to_string(),
            "t.gltf: skin 0: ibm reads past the end of buffer 0"
        );
    }

    #[test]
    fn base64_decoder_accepts_padding_and_rejects_junk() {
        assert_eq!(decode_base64("aGVsbG8="), Some(b"hello".to_vec()));
        assert_eq!(decode_base64("aGVsbG8"), Some(b"hello".to_vec()));
        assert_eq!(decode_base64("AP8HCA=="), Some(vec![0, 255, 7, 8]));
        assert_eq!(decode_base64("-_-_"), Some(vec![0xFB, 0xFF, 0xBF]));
        assert_eq!(decode_base64("+/+/"), Some(vec![0xFB, 0xFF, 0xBF]));
        assert_eq!(decode_base64("aG*s"), None);
        assert_eq!(decode_base64("aG=s"), None);
    }

    #[test]
    fn a_glb_file_reencoded_as_text_is_named_so() {
        use crate::formats::glb::tests::{glb_of_400_bytes, reencoded_as_text};
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("text.glb");
        std::fs::write(&path, reencoded_as_text(&glb_of_400_bytes())).expect("write");
        let err = GltfDoc::open(&path).err().expect("refused").to_string();
        assert!(
            err.contains("not a glTF file: truncated GLB: the header says 29212655 bytes")
                && err
                    .ends_with("the file was re-encoded as UTF-8 text and its binary data is lost"),
            "{err}"
        );
    }

    #[test]
    fn a_json_chunk_length_too_long_gives_one_error_however_the_file_is_opened() {
        // The JSON chunk's length runs 4 bytes into the binary chunk's header: the
        // next "chunk" is read from `BIN\0` on, a length far past the file's end.
        // Read whole or JSON first, the file is refused with the same line.
        use crate::formats::glb::tests::glb_of_400_bytes;
        let mut bytes = glb_of_400_bytes();
        let json_length = u32::from_le_bytes([bytes[12], bytes[13], bytes[14], bytes[15]]);
        bytes[12..16].copy_from_slice(&(json_length + 4).to_le_bytes());
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("long_json.glb");
        std::fs::write(&path, &bytes).expect("write");
        let opened = GltfDoc::open(&path).err().expect("refused").to_string();
        let whole = GltfDoc::from_bytes(&bytes, &path)
            .err()
            .expect("refused")
            .to_string();
        assert_eq!(opened, whole);
        assert!(opened.contains("truncated GLB: chunk 1 is"), "{opened}");
    }
}
