//! `JournalReader`: a journal read back, the header when opened, then frame by
//! frame up to the end of the file or the first torn or corrupt record, whose
//! place and kind it reports (`JournalEnd`).

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};

use super::JournalError;
use super::format::{
    HEADER_START, JournalHeader, KIND_FRAME, KIND_NAMES, MAGIC, MAX_FRAME_RECORD, MAX_HEADER_BODY,
    MAX_RECORD, VERSION, decode_frame, decode_header_body, decode_names,
};
use crate::humanoid::{CustomNames, HumanoidPose};

/// Where a journal's good records end, and why.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JournalEnd {
    /// Bytes after the last good record: a torn or corrupt tail, dropped.
    pub dropped_tail_bytes: u64,
    /// What was wrong at the end; `None` when the file ended on a record boundary.
    pub defect: Option<TailDefect>,
}

/// The first bad record of a journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("byte {at}: {problem}")]
pub struct TailDefect {
    /// Byte offset of the record's start.
    pub at: u64,
    pub problem: TailProblem,
}

/// What is wrong with a journal's first bad record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TailProblem {
    /// The file ends inside the record (a crash while it was being written).
    #[error("the last record is cut short")]
    CutShort,
    #[error("the record is corrupt (checksum mismatch)")]
    BadChecksum,
    #[error("bad record: {0}")]
    BadRecord(&'static str),
}

/// Reads a journal: the header when made, then frames one by one.
#[derive(Debug)]
pub struct JournalReader<R> {
    input: R,
    path: PathBuf,
    pub(super) header: JournalHeader,
    /// Byte offset of the next record.
    offset: u64,
    /// The record being read: kind, payload, checksum.
    record: Vec<u8>,
    pub(super) custom_names: CustomNames,
    pub(super) end: Option<JournalEnd>,
}

impl JournalReader<BufReader<File>> {
    /// Opens the journal at `path` and reads its header.
    pub fn open(path: &Path) -> Result<Self, JournalError> {
        let file = File::open(path).map_err(|source| JournalError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::new(BufReader::with_capacity(1 << 16, file), path)
    }
}

impl<R: Read> JournalReader<R> {
    /// Reads the header from `input`; `path` names the journal in messages.
    pub fn new(mut input: R, path: &Path) -> Result<Self, JournalError> {
        let (header, offset) = read_header(&mut input, path)?;
        Ok(Self {
            input,
            path: path.to_owned(),
            header,
            offset,
            record: Vec::with_capacity(MAX_FRAME_RECORD),
            custom_names: CustomNames::default(),
            end: None,
        })
    }

    /// The journal's header.
    #[must_use]
    pub fn header(&self) -> &JournalHeader {
        &self.header
    }

    /// The custom names in force for the last frame read.
    #[must_use]
    pub fn custom_names(&self) -> &CustomNames {
        &self.custom_names
    }

    /// How the journal ended, once `next_frame` has returned `None`.
    #[must_use]
    pub fn end(&self) -> Option<JournalEnd> {
        self.end
    }

    /// The next frame: its time and pose, exactly as appended. `None` at the end of
    /// the file or at the first torn or corrupt record (see `end`); an error only when
    /// the file cannot be read.
    pub fn next_frame(&mut self) -> Result<Option<(f32, HumanoidPose)>, JournalError> {
        while self.end.is_none() {
            let start = self.offset;
            let mut len_bytes = [0u8; 4];
            let got = read_up_to(&mut self.input, &mut len_bytes)
                .map_err(|source| self.read_error(source))?;
            if got == 0 {
                self.end = Some(JournalEnd {
                    dropped_tail_bytes: 0,
                    defect: None,
                });
                break;
            }
            if got < 4 {
                self.stop(start, got as u64, TailProblem::CutShort)?;
                break;
            }
            let len = u32::from_le_bytes(len_bytes);
            if len == 0 || len > MAX_RECORD {
                self.stop(start, 4, TailProblem::BadRecord("impossible record length"))?;
                break;
            }
            let body = len as usize + 4;
            self.record.resize(body, 0);
            let got = read_up_to(&mut self.input, &mut self.record)
                .map_err(|source| self.read_error(source))?;
            if got < body {
                self.stop(start, 4 + got as u64, TailProblem::CutShort)?;
                break;
            }
            let (content, crc) = self.record.split_at(len as usize);
            let mut hasher = crc32fast::Hasher::new();
            hasher.update(&len_bytes);
            hasher.update(content);
            if crc != hasher.finalize().to_le_bytes() {
                self.stop(start, 4 + body as u64, TailProblem::BadChecksum)?;
                break;
            }
            let (kind, payload) = (content[0], &content[1..]);
            let decoded = match kind {
                KIND_FRAME => decode_frame(payload).map(Some),
                KIND_NAMES => decode_names(payload).map(|names| {
                    self.custom_names = names;
                    None
                }),
                _ => Err("unknown record kind"),
            };
            match decoded {
                Err(what) => {
                    self.stop(start, 4 + body as u64, TailProblem::BadRecord(what))?;
                    break;
                }
                Ok(frame) => {
                    self.offset = start + 4 + body as u64;
                    if frame.is_some() {
                        return Ok(frame);
                    }
                }
            }
        }
        Ok(None)
    }

    fn read_error(&self, source: io::Error) -> JournalError {
        JournalError::Read {
            path: self.path.clone(),
            source,
        }
    }

    /// Ends reading at the bad record starting at `start`, of which `consumed` bytes
    /// were read: everything from `start` to the end of the file is dropped.
    fn stop(
        &mut self,
        start: u64,
        consumed: u64,
        problem: TailProblem,
    ) -> Result<(), JournalError> {
        let rest =
            io::copy(&mut self.input, &mut io::sink()).map_err(|source| self.read_error(source))?;
        self.end = Some(JournalEnd {
            dropped_tail_bytes: consumed + rest,
            defect: Some(TailDefect { at: start, problem }),
        });
        Ok(())
    }
}

/// Reads `buffer.len()` bytes or until the end of `input`; returns how many.
fn read_up_to(input: &mut impl Read, buffer: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match input.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Reads and checks the header; returns it and the offset of the first record.
fn read_header(input: &mut impl Read, path: &Path) -> Result<(JournalHeader, u64), JournalError> {
    let path_buf = || path.to_owned();
    let read_error = |source| JournalError::Read {
        path: path_buf(),
        source,
    };
    let mut start = [0u8; HEADER_START];
    let got = read_up_to(input, &mut start).map_err(read_error)?;
    let magic = got.min(MAGIC.len());
    if got == 0 {
        return Err(JournalError::Empty { path: path_buf() });
    }
    if start[..magic] != MAGIC[..magic] {
        return Err(JournalError::BadMagic { path: path_buf() });
    }
    if got < HEADER_START {
        return Err(JournalError::ShortHeader {
            path: path_buf(),
            at: got as u64,
        });
    }
    let found = u16::from_le_bytes([start[8], start[9]]);
    if found != VERSION {
        return Err(JournalError::Version {
            path: path_buf(),
            found,
        });
    }
    let body_len = u32::from_le_bytes([start[10], start[11], start[12], start[13]]);
    if body_len > MAX_HEADER_BODY {
        return Err(JournalError::BadHeader {
            path: path_buf(),
            at: 10,
            what: "impossible header length",
        });
    }
    let mut body = vec![0u8; body_len as usize + 4];
    let got = read_up_to(input, &mut body).map_err(read_error)?;
    if got < body.len() {
        return Err(JournalError::ShortHeader {
            path: path_buf(),
            at: (HEADER_START + got) as u64,
        });
    }
    let (content, crc) = body.split_at(body_len as usize);
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&start);
    hasher.update(content);
    let end = HEADER_START as u64 + u64::from(body_len);
    if crc != hasher.finalize().to_le_bytes() {
        return Err(JournalError::HeaderChecksum {
            path: path_buf(),
            at: end,
        });
    }
    let header = decode_header_body(content).map_err(|what| JournalError::BadHeader {
        path: path_buf(),
        at: HEADER_START as u64,
        what,
    })?;
    Ok((header, end + 4))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::journal::format::{begin_record, encode_frame, end_record};
    use crate::record::journal::test_support::{bits, journal_bytes, read_all, reader, take};

    /// Where every record ends, from the length prefixes (names records included).
    fn record_ends(bytes: &[u8], header_end: usize) -> Vec<usize> {
        let mut ends = vec![header_end];
        while let Some(&at) = ends.last().filter(|at| **at < bytes.len()) {
            let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
            ends.push(at + 4 + len as usize + 4);
        }
        ends
    }

    #[test]
    fn a_cut_at_any_byte_of_the_last_records_keeps_every_record_before_it() {
        let frames = take(24);
        let (bytes, ends) = journal_bytes(&frames);
        let records = record_ends(&bytes, ends[0]);
        assert_eq!(records.len(), 1 + 24 + 3, "24 frames and 3 names records");
        let from = ends[ends.len() - 5];
        for cut in from..=bytes.len() {
            let (got, end) = read_all(&bytes[..cut]);
            let complete = ends[1..].iter().filter(|e| **e <= cut).count();
            assert_eq!(got.len(), complete, "cut at {cut}");
            for ((t, pose), (time, want, _)) in got.iter().zip(&frames) {
                assert_eq!((t.to_bits(), bits(pose)), (time.to_bits(), bits(want)));
            }
            let good_end = records.iter().rev().find(|e| **e <= cut).copied().unwrap();
            let dropped = (cut - good_end) as u64;
            assert_eq!(end.dropped_tail_bytes, dropped, "cut at {cut}");
            match end.defect {
                None => assert_eq!(cut, good_end, "cut at {cut}"),
                Some(defect) => {
                    assert_eq!(defect.at, good_end as u64, "cut at {cut}");
                    assert_eq!(defect.problem, TailProblem::CutShort, "cut at {cut}");
                }
            }
        }
    }

    #[test]
    fn a_flipped_byte_stops_reading_at_its_record() {
        let frames = take(30);
        let (bytes, ends) = journal_bytes(&frames);
        // Frame 20's group holds a names record and the frame record.
        for k in [17, 20] {
            for at in ends[k]..ends[k + 1] {
                for flip in [0x01, 0x80, 0xff] {
                    let mut broken = bytes.clone();
                    broken[at] ^= flip;
                    let (got, end) = read_all(&broken);
                    let defect = end.defect.expect("a defect");
                    let frame_start = ends[k + 1] - frame_record_len(&frames[k]);
                    // Frame 20's names record before it may be the good one.
                    let record_start = if at >= frame_start {
                        frame_start
                    } else {
                        ends[k]
                    };
                    assert_eq!(got.len(), k, "byte {at}");
                    assert_eq!(defect.at, record_start as u64, "byte {at}");
                    assert_eq!(end.dropped_tail_bytes, bytes.len() as u64 - defect.at);
                    assert!(
                        matches!(
                            defect.problem,
                            TailProblem::BadChecksum
                                | TailProblem::CutShort
                                | TailProblem::BadRecord("impossible record length")
                        ),
                        "byte {at}: {defect}"
                    );
                }
            }
        }
    }

    fn frame_record_len(frame: &(f32, HumanoidPose, CustomNames)) -> usize {
        let mut buffer = Vec::new();
        let start = begin_record(&mut buffer, KIND_FRAME);
        encode_frame(&mut buffer, frame.0, &frame.1);
        end_record(&mut buffer, start);
        buffer.len()
    }

    #[test]
    fn bad_headers_give_one_line_naming_the_file_and_byte() {
        let (good, ends) = journal_bytes(&[]);
        let body_len = ends[0] - HEADER_START - 4;
        let mut version = good.clone();
        version[8] = 2;
        let mut huge = good.clone();
        huge[10..14].copy_from_slice(&u32::MAX.to_le_bytes());
        let mut garbled = good.clone();
        garbled[HEADER_START + 20] ^= 0x10;
        let cases: Vec<(Vec<u8>, String)> = vec![
            (
                vec![],
                "byte 0: the file is empty, so no journal header was written".into(),
            ),
            (
                b"glTF\x02\0\0\0".to_vec(),
                "byte 0: not a mocap-bridge journal (bad magic)".into(),
            ),
            (
                b"MBJ".to_vec(),
                "byte 3: the journal header is cut short".into(),
            ),
            (
                good[..12].to_vec(),
                "byte 12: the journal header is cut short".into(),
            ),
            (
                good[..40].to_vec(),
                "byte 40: the journal header is cut short".into(),
            ),
            (
                version,
                "byte 8: journal version 2 is not supported (this build reads 1)".into(),
            ),
            (
                huge,
                "byte 10: bad journal header: impossible header length".into(),
            ),
            (
                garbled,
                format!(
                    "byte {}: the journal header is corrupt (checksum mismatch)",
                    HEADER_START + body_len
                ),
            ),
        ];
        for (bytes, expected) in cases {
            let err = reader(&bytes).unwrap_err().to_string();
            assert_eq!(err, format!("take.journal: {expected}"));
        }
        assert!(reader(&good).is_ok());
    }
}
