//! The GLB container both ways. Reading: splitting a GLB into its JSON and binary
//! chunks, every length checked. Writing, for the writers that stream their binary
//! data (`vrma`, `ext_humanoid`): the 12-byte header, the JSON chunk padded with
//! spaces, the binary chunk's header, then floats little-endian through a small
//! staging buffer so that a large recording is never copied whole.

use std::io::{self, Write};

use serde_json::Value;

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

/// Writes the GLB header, the JSON chunk and the binary chunk's header for a
/// binary chunk of `bin_len` bytes, which the caller writes next.
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
pub fn write_f32s(
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

/// Creates `path` and writes it through a buffer with `write`.
pub fn save(
    path: &std::path::Path,
    write: impl FnOnce(&mut io::BufWriter<std::fs::File>) -> io::Result<()>,
) -> io::Result<()> {
    let file = std::fs::File::create(path)?;
    let mut out = io::BufWriter::with_capacity(1 << 20, file);
    write(&mut out)?;
    out.flush()
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
mod tests {
    use super::*;

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
