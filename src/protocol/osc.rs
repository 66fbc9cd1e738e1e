//! A zero-copy, allocation-free OSC 1.0 reader: `messages` walks a datagram's
//! bundles and gives each message's address and arguments as borrowed slices.
//!
//! Written by hand rather than through `rosc`: `rosc::decoder` builds a `String`
//! per address and a `Vec` per argument list, and the input path decodes every
//! datagram of every performer. This reader allocates nothing and never panics:
//! every length is checked, and a malformed element ends only that element (the
//! caller counts it) while the rest of the bundle is still read.
//!
//! Tuned for VMC traffic (see `benches/vmc.rs`): strings are scanned 8 bytes at
//! a time, a message with the same address and type tags as the one before is
//! not scanned again, and the iterator keeps its hot state out of memory. Codecs
//! read known shapes straight from `Message::data` (`str_and_floats`).

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
    /// The type tags, after their leading `,` (`sfffffff`).
    pub tags: &'a [u8],
    /// The argument bytes, for codecs that read a known shape in one go; the
    /// general reader is `args`.
    pub data: &'a [u8],
    /// Offset of `data` in the datagram, for error positions.
    at: usize,
}

/// Deepest bundle nesting read; deeper ones are malformed.
const MAX_DEPTH: usize = 8;

/// A 4-byte aligned, NUL-terminated OSC string at `at`: its bytes and the offset
/// just past its padding. Left unchecked as UTF-8: most are only compared.
///
/// Reads 8 bytes at a time, then one last 4-byte word: an OSC string's terminator
/// lies in the last 4-byte word of its padded length, so only whole words from
/// `at` are looked at, and a terminator in a cut-off last word is a truncation.
fn read_str(bytes: &[u8], at: usize) -> Result<(&[u8], usize), OscError> {
    // Each zero byte's high bit, exact up to the first zero byte (borrows only run
    // towards higher bytes); little-endian puts the first byte lowest.
    const LOW: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let found = |word_at: usize, zeros: u64| {
        let len = word_at - at + (zeros.trailing_zeros() / 8) as usize;
        Ok((&bytes[at..at + len], at + (len / 4 + 1) * 4))
    };
    let mut word_at = at;
    while let Some(&[a, b, c, d, e, f, g, h]) = bytes.get(word_at..word_at + 8) {
        let word = u64::from_le_bytes([a, b, c, d, e, f, g, h]);
        let zeros = word.wrapping_sub(LOW) & !word & HIGH;
        if zeros != 0 {
            return found(word_at, zeros);
        }
        word_at += 8;
    }
    if let Some(&[a, b, c, d]) = bytes.get(word_at..word_at + 4) {
        let word = u64::from(u32::from_le_bytes([a, b, c, d]));
        let zeros = word.wrapping_sub(LOW) & !word & HIGH & 0xffff_ffff;
        if zeros != 0 {
            return found(word_at, zeros);
        }
    }
    Err(OscError::Truncated { at })
}

fn read_u64(bytes: &[u8], at: usize) -> Result<u64, OscError> {
    let high = read_u32(bytes, at)?;
    let low = read_u32(bytes, at + 4)?;
    Ok(u64::from(high) << 32 | u64::from(low))
}

fn read_u32(bytes: &[u8], at: usize) -> Result<u32, OscError> {
    match bytes.get(at..at + 4) {
        Some(&[a, b, c, d]) => Ok(u32::from_be_bytes([a, b, c, d])),
        _ => Err(OscError::Truncated { at }),
    }
}

/// Every message of a datagram, in order: `Err` for a malformed message or bundle
/// element, which is skipped; the elements after it are still read when the
/// bundle's framing allows.
#[must_use]
pub fn messages(datagram: &[u8]) -> Messages<'_> {
    Messages {
        bytes: datagram,
        at: 0,
        end: 0,
        depth: 0,
        outer_ends: [0; MAX_DEPTH],
        started: false,
        last: Shape::default(),
    }
}

/// The iterator of `messages`: a plain loop over the bundles' framing, no
/// recursion and no heap.
///
/// Written for speed, as VMC decoding is most of an input task's work: the
/// innermost bundle's position is in plain fields and the rare paths (a bundle,
/// a message of a new shape) are a separate function that takes no `&mut self`,
/// so that, inlined into a loop, the hot state stays in registers.
#[derive(Debug, Clone)]
pub struct Messages<'a> {
    bytes: &'a [u8],
    /// Where the innermost open bundle's next element (its size) is.
    at: usize,
    /// Where the innermost open bundle ends.
    end: usize,
    /// How many bundles are open.
    depth: usize,
    /// The ends of the bundles around the innermost, outermost first (`depth - 1`
    /// in use). Each resumes where the bundle inside it ends.
    outer_ends: [usize; MAX_DEPTH],
    /// Whether the datagram itself (a bare message or the outer bundle) was read.
    started: bool,
    /// The shape of the last message read.
    last: Shape<'a>,
}

/// A message's shape: its first `header.len()` bytes, the address and type tags
/// with their padding. A message whose first bytes are the same has the same
/// address and tags, so it is not scanned again: VMC bundles are mostly runs of
/// one shape (`/VMC/Ext/Bone/Pos ,sfffffff`).
#[derive(Debug, Clone, Copy, Default)]
struct Shape<'a> {
    /// Empty before the first message.
    header: &'a [u8],
    address_len: usize,
    /// Where the tags (after the ',') are in `header`, and their length.
    tags_at: usize,
    tags_len: usize,
}

impl<'a> Shape<'a> {
    fn of(message: &Message<'a>, element: &'a [u8], start: usize) -> Self {
        Self {
            header: &element[..message.at - start],
            address_len: message.address.len(),
            // The tags follow the padded address and their leading ','.
            tags_at: (message.address.len() / 4 + 1) * 4 + 1,
            tags_len: message.tags.len(),
        }
    }

    /// The message in `element` (at `start` in the datagram) when it has this
    /// shape.
    #[inline(always)]
    fn read(&self, element: &'a [u8], start: usize) -> Option<Message<'a>> {
        if self.header.is_empty() || !starts_with_words(element, self.header) {
            return None;
        }
        Some(Message {
            address: element.get(..self.address_len)?,
            tags: element.get(self.tags_at..self.tags_at + self.tags_len)?,
            data: element.get(self.header.len()..)?,
            at: start + self.header.len(),
        })
    }
}

/// What an element that is not a message of the last shape is.
enum NewElement<'a> {
    Bundle,
    Message(Message<'a>, Shape<'a>),
    Broken(OscError),
}

/// Reads the element at `start..end`, which is not a message of the last shape.
#[inline(never)]
fn new_element(bytes: &[u8], start: usize, end: usize) -> NewElement<'_> {
    let bytes = &bytes[..end];
    let element = &bytes[start..];
    if element.starts_with(b"#bundle\0") {
        return NewElement::Bundle;
    }
    match message(bytes, start) {
        Ok(m) => NewElement::Message(m, Shape::of(&m, element, start)),
        Err(e) => NewElement::Broken(e),
    }
}

impl<'a> Iterator for Messages<'a> {
    type Item = Result<Message<'a>, OscError>;

    // Always inlined, so that its state and the message it gives stay in
    // registers (a `Message` returned through memory is read back in pieces).
    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (start, end) = if self.depth > 0 {
                let at = self.at;
                if at >= self.end {
                    self.close();
                    continue;
                }
                // Each element: a 4-byte big-endian size, then its bytes. A size
                // that cannot be read or runs past the bundle ends the bundle.
                let inner = at + 4;
                let inner_end = read_u32(&self.bytes[..self.end], at)
                    .ok()
                    .and_then(|size| inner.checked_add(size as usize))
                    .filter(|e| *e <= self.end);
                let Some(inner_end) = inner_end else {
                    self.close();
                    return Some(Err(OscError::Truncated { at }));
                };
                self.at = inner_end;
                (inner, inner_end)
            } else if !self.started {
                self.started = true;
                (0, self.bytes.len())
            } else {
                return None;
            };
            if let Some(message) = self.last.read(&self.bytes[start..end], start) {
                return Some(Ok(message));
            }
            match new_element(self.bytes, start, end) {
                NewElement::Message(message, shape) => {
                    self.last = shape;
                    return Some(Ok(message));
                }
                NewElement::Broken(e) => return Some(Err(e)),
                NewElement::Bundle => {
                    if self.depth >= MAX_DEPTH {
                        return Some(Err(OscError::TooDeep(MAX_DEPTH)));
                    }
                    // "#bundle\0", an 8-byte time tag, then (size, element) pairs.
                    if end - start < 16 {
                        return Some(Err(OscError::Truncated { at: start }));
                    }
                    if self.depth > 0 {
                        self.outer_ends[self.depth - 1] = self.end;
                    }
                    (self.at, self.end) = (start + 16, end);
                    self.depth += 1;
                }
            }
        }
    }
}

impl Messages<'_> {
    /// Closes the innermost bundle: the one around it resumes after it.
    fn close(&mut self) {
        self.depth -= 1;
        if self.depth > 0 {
            self.at = self.end;
            self.end = self.outer_ends[self.depth - 1];
        }
    }
}

/// Whether `bytes` starts with `prefix`, compared 8 bytes at a time, inline
/// (`starts_with` calls `memcmp`, slower for the 20 to 40 bytes of an OSC
/// address and type tags).
#[inline(always)]
fn starts_with_words(bytes: &[u8], prefix: &[u8]) -> bool {
    let Some(mut head) = bytes.get(..prefix.len()) else {
        return false;
    };
    let mut prefix = prefix;
    while let (Some((a, head_rest)), Some((b, prefix_rest))) = (
        head.split_first_chunk::<8>(),
        prefix.split_first_chunk::<8>(),
    ) {
        if a != b {
            return false;
        }
        (head, prefix) = (head_rest, prefix_rest);
    }
    // An OSC header's length is a multiple of 4: at most one word is left.
    match (head.first_chunk::<4>(), prefix.first_chunk::<4>()) {
        (Some(a), Some(b)) if head.len() == 4 => a == b,
        _ => head == prefix,
    }
}

/// The message starting at `start` and filling the rest of `bytes`.
fn message(bytes: &[u8], start: usize) -> Result<Message<'_>, OscError> {
    if bytes.get(start) != Some(&b'/') {
        return Err(OscError::NotOsc { at: start });
    }
    let (address, after) = read_str(bytes, start)?;
    let (tags, data_at) = match read_str(bytes, after) {
        Ok(([b',', tags @ ..], next)) => (tags, next),
        _ => return Err(OscError::NoTypeTags { at: after }),
    };
    Ok(Message {
        address,
        tags,
        data: &bytes[data_at..],
        at: data_at,
    })
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
        match self.tags.split_first() {
            Some((b's', floats)) if floats.get(..N)? == [b'f'; N] => {}
            _ => return None,
        }
        let (name, at) = read_str(self.data, 0).ok()?;
        let bytes = self.data.get(at..at + 4 * N)?;
        let mut floats = [0.0; N];
        for (f, b) in floats.iter_mut().zip(bytes.chunks_exact(4)) {
            *f = f32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        }
        Some((name, floats))
    }

    /// `N` floats and nothing before them (`/tracking/trackers/1/position`), read
    /// without the general argument loop: `Some` when the type tags start with
    /// `N` `f`s and the bytes are all there (any further arguments are ignored).
    #[must_use]
    pub fn floats<const N: usize>(&self) -> Option<[f32; N]> {
        if self.tags.get(..N)? != [b'f'; N] {
            return None;
        }
        let bytes = self.data.get(..4 * N)?;
        let mut floats = [0.0; N];
        for (f, b) in floats.iter_mut().zip(bytes.chunks_exact(4)) {
            *f = f32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        }
        Some(floats)
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

    fn read_all(datagram: &[u8]) -> (Vec<(String, Vec<String>)>, Vec<OscError>) {
        let mut got = Vec::new();
        let mut errors = Vec::new();
        for m in messages(datagram) {
            let mut args = [Arg::Int(0); 16];
            match m.and_then(|m| Ok((m, m.args(&mut args)?))) {
                Ok((m, n)) => got.push((
                    String::from_utf8_lossy(m.address).into_owned(),
                    args[..n].iter().map(|a| format!("{a:?}")).collect(),
                )),
                Err(e) => errors.push(e),
            }
        }
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
        let (got, errors) = read_all(&encode(&bundle));
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
                "Float(2.0)"
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
        let (got, errors) = read_all(&bundle);
        assert_eq!(got.len(), 2);
        assert_eq!(
            errors,
            [OscError::NotOsc {
                at: 16 + 4 + good.len() + 4
            }]
        );
        // Every prefix of a valid datagram: no panic.
        for len in 0..bundle.len() {
            let _ = read_all(&bundle[..len]);
        }
        // A message whose float argument is cut off.
        let cut = &good[..good.len() - 2];
        let (_, errors) = read_all(cut);
        assert!(!errors.is_empty());
        // Not OSC at all.
        assert_eq!(read_all(b"hello").1, [OscError::NotOsc { at: 0 }]);
    }

    #[test]
    fn strings_are_read_a_word_at_a_time_within_their_padding() {
        let t = |at| OscError::Truncated { at };
        type Read<'a> = Result<(&'a [u8], usize), OscError>;
        let cases: [(&[u8], usize, Read); 10] = [
            (b"abc\0", 0, Ok((b"abc", 4))),
            (b"abcd\0\0\0\0", 0, Ok((b"abcd", 8))),
            (b"\0\0\0\0", 0, Ok((b"", 4))),
            (b"xxxxab\0\0", 4, Ok((b"ab", 8))),
            // Bytes after the terminator are padding, whatever they hold.
            (b"a\0bc", 0, Ok((b"a", 4))),
            (b"\xff\x80\x01\0", 0, Ok((b"\xff\x80\x01", 4))),
            // The terminator in a word that is cut off, or none at all.
            (b"abcd\0\0", 0, Err(t(0))),
            (b"abcd", 0, Err(t(0))),
            (b"", 0, Err(t(0))),
            (b"abcd", 9, Err(t(9))),
        ];
        for (bytes, at, want) in cases {
            assert_eq!(read_str(bytes, at), want, "{bytes:?} at {at}");
        }
    }

    #[test]
    fn bundles_nest_up_to_the_limit() {
        let message = OscPacket::Message(OscMessage {
            addr: "/a".into(),
            args: vec![OscType::Int(7)],
        });
        let mut packet = message;
        for depth in 1..=MAX_DEPTH + 1 {
            packet = OscPacket::Bundle(OscBundle {
                timetag: OscTime {
                    seconds: 0,
                    fractional: 1,
                },
                content: vec![packet],
            });
            let (got, errors) = read_all(&encode(&packet));
            if depth <= MAX_DEPTH {
                assert_eq!((got.len(), errors.len()), (1, 0), "{depth}");
            } else {
                assert_eq!(errors, [OscError::TooDeep(MAX_DEPTH)]);
            }
        }
    }

    /// A small deterministic generator, so the random cases are the same each run.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    fn random_packet(rng: &mut Rng, depth: usize) -> OscPacket {
        if depth < 3 && rng.below(4) == 0 {
            let content = (0..rng.below(4))
                .map(|_| random_packet(rng, depth + 1))
                .collect();
            return OscPacket::Bundle(OscBundle {
                timetag: OscTime {
                    seconds: 0,
                    fractional: 1,
                },
                content,
            });
        }
        let text = |rng: &mut Rng| -> String {
            (0..rng.below(12))
                .map(|_| char::from(b'a' + rng.below(26) as u8))
                .collect()
        };
        let args = (0..rng.below(9))
            .map(|_| match rng.below(5) {
                0 => OscType::Int(rng.next() as i32),
                1 => OscType::Float(f32::from_bits(rng.next() as u32 & 0x7f7f_ffff)),
                2 => OscType::String(text(rng)),
                3 => OscType::Blob((0..rng.below(7)).map(|_| rng.next() as u8).collect()),
                _ => OscType::Double(1.5),
            })
            .collect();
        OscPacket::Message(OscMessage {
            addr: format!("/{}", text(rng)),
            args,
        })
    }

    /// What rosc reads, in the form of `read_all`.
    fn rosc_read(packet: &OscPacket, out: &mut Vec<(String, Vec<String>)>) {
        match packet {
            OscPacket::Bundle(b) => b.content.iter().for_each(|p| rosc_read(p, out)),
            OscPacket::Message(m) => out.push((
                m.addr.clone(),
                m.args
                    .iter()
                    .map(|a| match a {
                        OscType::Int(v) => format!("{:?}", Arg::Int(*v)),
                        OscType::Float(v) => format!("{:?}", Arg::Float(*v)),
                        OscType::String(v) => format!("{:?}", Arg::Str(v.as_bytes())),
                        OscType::Blob(_) => format!("{:?}", Arg::Other(b'b')),
                        OscType::Long(v) => format!("{:?}", Arg::Long(*v)),
                        OscType::Double(v) => format!("{:?}", Arg::Double(*v)),
                        _ => format!("{:?}", Arg::Other(b't')),
                    })
                    .collect(),
            )),
        }
    }

    #[test]
    fn random_packets_read_as_rosc_reads_them_and_damage_never_panics() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..500 {
            let packet = random_packet(&mut rng, 0);
            let bytes = encode(&packet);
            let (_, back) = rosc::decoder::decode_udp(&bytes).unwrap();
            let mut want = Vec::new();
            rosc_read(&back, &mut want);
            let (got, errors) = read_all(&bytes);
            assert!(errors.is_empty(), "{errors:?}");
            assert_eq!(got, want);
            // Damaged copies: a byte changed, or the end cut off.
            let mut damaged = bytes.clone();
            let at = rng.below(bytes.len() as u64) as usize;
            damaged[at] = rng.next() as u8;
            let _ = read_all(&damaged);
            let _ = read_all(&bytes[..at]);
        }
    }
}
