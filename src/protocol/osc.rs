//! A zero-copy, allocation-free OSC 1.0 reader: walks a datagram's bundles and
//! messages, giving each message's address and arguments as borrowed slices.
//!
//! Written by hand rather than through `rosc` (used for encoding): `rosc::decoder`
//! builds a `String` per address and a `Vec` per argument list, and the input
//! path decodes every datagram of every performer. This reader allocates nothing
//! and never panics: every length is checked, and a malformed element ends only
//! that element (the caller counts it) while the rest of the bundle is still read.

/// One OSC argument, borrowed from the datagram.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arg<'a> {
    Int(i32),
    Float(f32),
    /// `h`: a 64-bit integer.
    Long(i64),
    /// `d`: a 64-bit float.
    Double(f64),
    /// A string's bytes, not yet checked as UTF-8 (`Arg::as_str` checks).
    Str(&'a [u8]),
    /// Any other type (blob, time tag, true/false, ...): present, not read.
    Other(u8),
}

/// Why (part of) a datagram could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum OscError {
    #[error("datagram cut short at byte {at}")]
    Truncated { at: usize },
    #[error("element at byte {at} is neither a message nor a bundle")]
    NotOsc { at: usize },
    #[error("message at byte {at} has no type tags")]
    NoTypeTags { at: usize },
    #[error("bundles nested deeper than {0}")]
    TooDeep(usize),
}

/// A message: its address and the raw type tags and argument bytes.
#[derive(Debug, Clone, Copy)]
pub struct Message<'a> {
    /// The address pattern's bytes (compared as bytes: no UTF-8 check needed).
    pub address: &'a [u8],
    tags: &'a [u8],
    data: &'a [u8],
    /// Offset of `data` in the datagram, for error positions.
    at: usize,
}

/// Deepest bundle nesting read; deeper ones are malformed.
const MAX_DEPTH: usize = 8;

/// A 4-byte aligned, NUL-terminated OSC string at `at`: its bytes and the offset
/// just past its padding. Left unchecked as UTF-8: most are only compared.
fn read_str(bytes: &[u8], at: usize) -> Result<(&[u8], usize), OscError> {
    let rest = bytes.get(at..).ok_or(OscError::Truncated { at })?;
    let len = rest
        .iter()
        .position(|&b| b == 0)
        .ok_or(OscError::Truncated { at })?;
    let s = &rest[..len];
    let next = at + (len / 4 + 1) * 4;
    if next > bytes.len() {
        return Err(OscError::Truncated { at });
    }
    Ok((s, next))
}

fn read_u32(bytes: &[u8], at: usize) -> Result<u32, OscError> {
    match bytes.get(at..at + 4) {
        Some(&[a, b, c, d]) => Ok(u32::from_be_bytes([a, b, c, d])),
        _ => Err(OscError::Truncated { at }),
    }
}

fn read_u64(bytes: &[u8], at: usize) -> Result<u64, OscError> {
    let high = read_u32(bytes, at)?;
    let low = read_u32(bytes, at + 4)?;
    Ok(u64::from(high) << 32 | u64::from(low))
}

/// Visits every message of a datagram in order. A malformed message or bundle
/// element is reported to `on_error` and skipped; the elements after it are still
/// read when the bundle's framing allows. Returns the number of messages visited.
pub fn visit<'a>(
    datagram: &'a [u8],
    on_message: &mut impl FnMut(Message<'a>),
    on_error: &mut impl FnMut(OscError),
) -> usize {
    let mut count = 0;
    if let Err(e) = visit_element(
        datagram,
        0,
        datagram.len(),
        0,
        on_message,
        on_error,
        &mut count,
    ) {
        on_error(e);
    }
    count
}

fn visit_element<'a>(
    bytes: &'a [u8],
    start: usize,
    end: usize,
    depth: usize,
    on_message: &mut impl FnMut(Message<'a>),
    on_error: &mut impl FnMut(OscError),
    count: &mut usize,
) -> Result<(), OscError> {
    let element = bytes
        .get(start..end)
        .ok_or(OscError::Truncated { at: start })?;
    if element.starts_with(b"#bundle\0") {
        if depth >= MAX_DEPTH {
            return Err(OscError::TooDeep(MAX_DEPTH));
        }
        // "#bundle\0", an 8-byte time tag, then (size, element) pairs.
        let mut at = start + 16;
        if at > end {
            return Err(OscError::Truncated { at: start });
        }
        while at < end {
            let size = read_u32(bytes, at)? as usize;
            let inner = at + 4;
            let Some(inner_end) = inner.checked_add(size).filter(|e| *e <= end) else {
                return Err(OscError::Truncated { at });
            };
            if let Err(e) = visit_element(
                bytes,
                inner,
                inner_end,
                depth + 1,
                on_message,
                on_error,
                count,
            ) {
                on_error(e);
            }
            at = inner_end;
        }
        return Ok(());
    }
    if element.first() != Some(&b'/') {
        return Err(OscError::NotOsc { at: start });
    }
    let (address, after) = read_str(&bytes[..end], start)?;
    let (tags, data_at) = match read_str(&bytes[..end], after) {
        Ok((t, next)) if t.starts_with(b",") => (t, next),
        _ => return Err(OscError::NoTypeTags { at: after }),
    };
    *count += 1;
    on_message(Message {
        address,
        tags: &tags[1..],
        data: &bytes[data_at..end],
        at: data_at,
    });
    Ok(())
}

impl<'a> Arg<'a> {
    /// A string argument as text; `None` for other types or bytes that are not
    /// UTF-8.
    #[must_use]
    pub fn as_str(&self) -> Option<&'a str> {
        match self {
            Arg::Str(bytes) => std::str::from_utf8(bytes).ok(),
            _ => None,
        }
    }
}

impl<'a> Message<'a> {
    /// A string then floats, the common shape of VMC messages, read without the
    /// general argument loop: `Some` when the type tags start with `s` and then
    /// `N` `f`s and the bytes are all there (any further arguments are ignored).
    #[must_use]
    pub fn str_and_floats<const N: usize>(&self) -> Option<(&'a [u8], [f32; N])> {
        let tags = self.tags.get(..N + 1)?;
        if tags[0] != b's' || tags[1..].iter().any(|&t| t != b'f') {
            return None;
        }
        let (name, mut at) = read_str(self.data, 0).ok()?;
        let mut floats = [0.0; N];
        for f in &mut floats {
            *f = f32::from_bits(read_u32(self.data, at).ok()?);
            at += 4;
        }
        Some((name, floats))
    }

    /// The arguments, read into `out`; returns how many there are (at most
    /// `out.len()`; later ones are not read). Fails on a truncated argument.
    pub fn args(&self, out: &mut [Arg<'a>]) -> Result<usize, OscError> {
        let mut at = 0;
        let mut n = 0;
        for &tag in self.tags {
            if n == out.len() {
                break;
            }
            let here = self.at + at;
            let arg = match tag {
                b'i' => {
                    let v =
                        read_u32(self.data, at).map_err(|_| OscError::Truncated { at: here })?;
                    at += 4;
                    Arg::Int(v as i32)
                }
                b'f' => {
                    let v =
                        read_u32(self.data, at).map_err(|_| OscError::Truncated { at: here })?;
                    at += 4;
                    Arg::Float(f32::from_bits(v))
                }
                b's' | b'S' => {
                    let (s, next) =
                        read_str(self.data, at).map_err(|_| OscError::Truncated { at: here })?;
                    at = next;
                    Arg::Str(s)
                }
                b'b' => {
                    let len = read_u32(self.data, at)
                        .map_err(|_| OscError::Truncated { at: here })?
                        as usize;
                    let padded = len.div_ceil(4) * 4;
                    at = at
                        .checked_add(4 + padded)
                        .filter(|e| *e <= self.data.len())
                        .ok_or(OscError::Truncated { at: here })?;
                    Arg::Other(tag)
                }
                b'h' | b'd' => {
                    let bits =
                        read_u64(self.data, at).map_err(|_| OscError::Truncated { at: here })?;
                    at += 8;
                    if tag == b'h' {
                        Arg::Long(bits as i64)
                    } else {
                        Arg::Double(f64::from_bits(bits))
                    }
                }
                b't' => {
                    at += 8;
                    Arg::Other(tag)
                }
                b'c' | b'r' | b'm' => {
                    at += 4;
                    Arg::Other(tag)
                }
                _ => Arg::Other(tag),
            };
            if at > self.data.len() {
                return Err(OscError::Truncated { at: here });
            }
            out[n] = arg;
            n += 1;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rosc::{OscBundle, OscMessage, OscPacket, OscTime, OscType};

    fn encode(packet: &OscPacket) -> Vec<u8> {
        rosc::encoder::encode(packet).unwrap()
    }

    fn messages(datagram: &[u8]) -> (Vec<(String, Vec<String>)>, Vec<OscError>) {
        let mut got = Vec::new();
        let mut errors = Vec::new();
        let errors_cell = std::cell::RefCell::new(&mut errors);
        visit(
            datagram,
            &mut |m| {
                let mut args = [Arg::Int(0); 16];
                match m.args(&mut args) {
                    Ok(n) => got.push((
                        String::from_utf8_lossy(m.address).into_owned(),
                        args[..n].iter().map(|a| format!("{a:?}")).collect(),
                    )),
                    Err(e) => errors_cell.borrow_mut().push(e),
                }
            },
            &mut |e| errors_cell.borrow_mut().push(e),
        );
        (got, errors)
    }

    #[test]
    fn reads_what_rosc_writes() {
        let message = OscPacket::Message(OscMessage {
            addr: "/VMC/Ext/Bone/Pos".into(),
            args: vec![
                OscType::String("Hips".into()),
                1.5f32.into(),
                OscType::Int(-3),
                OscType::Blob(vec![1, 2, 3]),
                2.0f32.into(),
                OscType::Long(-5_000_000_000),
                OscType::Double(0.1),
            ],
        });
        let bundle = OscPacket::Bundle(OscBundle {
            timetag: OscTime {
                seconds: 0,
                fractional: 1,
            },
            content: vec![
                message.clone(),
                OscPacket::Bundle(OscBundle {
                    timetag: OscTime {
                        seconds: 0,
                        fractional: 1,
                    },
                    content: vec![message.clone()],
                }),
            ],
        });
        let (got, errors) = messages(&encode(&bundle));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].0, "/VMC/Ext/Bone/Pos");
        assert_eq!(
            got[0].1,
            [
                "Str([72, 105, 112, 115])",
                "Float(1.5)",
                "Int(-3)",
                "Other(98)",
                "Float(2.0)",
                "Long(-5000000000)",
                "Double(0.1)"
            ]
        );
    }

    #[test]
    fn bad_input_is_reported_and_the_rest_still_read() {
        let good = encode(&OscPacket::Message(OscMessage {
            addr: "/a".into(),
            args: vec![1.0f32.into()],
        }));
        // A bundle with a garbage element between two good messages.
        let mut bundle = b"#bundle\0".to_vec();
        bundle.extend_from_slice(&1u64.to_be_bytes());
        for element in [&good[..], b"garbage!", &good[..]] {
            bundle.extend_from_slice(&(element.len() as u32).to_be_bytes());
            bundle.extend_from_slice(element);
        }
        let (got, errors) = messages(&bundle);
        assert_eq!(got.len(), 2);
        assert_eq!(
            errors,
            [OscError::NotOsc {
                at: 16 + 4 + good.len() + 4
            }]
        );
        // Every prefix of a valid datagram: no panic.
        for len in 0..bundle.len() {
            let _ = messages(&bundle[..len]);
        }
        // A message whose float argument is cut off.
        let cut = &good[..good.len() - 2];
        let (_, errors) = messages(cut);
        assert!(!errors.is_empty());
        // Not OSC at all.
        assert_eq!(messages(b"hello").1, [OscError::NotOsc { at: 0 }]);
    }
}
