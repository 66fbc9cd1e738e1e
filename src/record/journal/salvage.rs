//! Salvage: the records of a damaged journal that still hold. A flipped bit in the
//! header, or a damaged record in the middle, need not cost the frames after it:
//! every record carries its own length and checksum, so a scan from the damage on
//! finds each later record whose length is possible, whose checksum holds and
//! which decodes (a stretch of damage passes for a record only if a 32-bit checksum
//! agrees by chance and the bytes then decode).

use super::format::{
    KIND_FRAME, KIND_NAMES, MAX_FRAME_RECORD, MAX_RECORD, decode_frame, decode_names,
};
use super::reader::TailProblem;
use crate::humanoid::{CustomNames, HumanoidPose};

/// One good record.
#[derive(Debug)]
pub(super) enum Record {
    Frame(f32, Box<HumanoidPose>),
    Names(CustomNames),
}

/// A stretch of a journal that holds no good record: left out of the take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Skipped {
    /// Byte offset of the stretch in the journal.
    pub at: u64,
    pub bytes: u64,
    /// What was wrong with the record that should have started at `at`.
    pub problem: TailProblem,
}

/// Checks and decodes the record at the start of `bytes`; returns it and its size
/// in bytes (length, kind, payload and checksum).
pub(super) fn record_at(bytes: &[u8]) -> Result<(Record, usize), TailProblem> {
    let cut_short = TailProblem::CutShort;
    let len_bytes: [u8; 4] = bytes
        .get(..4)
        .and_then(|b| b.try_into().ok())
        .ok_or(cut_short)?;
    let len = u32::from_le_bytes(len_bytes) as usize;
    let kind = bytes.get(4).copied();
    let too_long = match kind {
        Some(KIND_FRAME) => len + 8 > MAX_FRAME_RECORD,
        _ => len > MAX_RECORD as usize,
    };
    if len == 0 || too_long {
        return Err(TailProblem::BadRecord("impossible record length"));
    }
    let size = 4 + len + 4;
    let record = bytes.get(..size).ok_or(cut_short)?;
    let (content, crc) = record.split_at(4 + len);
    if crc32fast::hash(content).to_le_bytes() != crc {
        return Err(TailProblem::BadChecksum);
    }
    let payload = &content[5..];
    let record = match kind {
        Some(KIND_FRAME) => decode_frame(payload).map(|(t, pose)| Record::Frame(t, Box::new(pose))),
        Some(KIND_NAMES) => decode_names(payload).map(Record::Names),
        _ => Err("unknown record kind"),
    };
    record.map(|r| (r, size)).map_err(TailProblem::BadRecord)
}

/// The good records of `bytes` (a stretch of a journal starting at byte `base`),
/// one by one; what lies between them is noted in `skipped`.
pub(super) struct Scan<'a> {
    bytes: &'a [u8],
    base: u64,
    pos: usize,
    pub skipped: Vec<Skipped>,
}

impl<'a> Scan<'a> {
    pub fn new(bytes: &'a [u8], base: u64) -> Self {
        Self {
            bytes,
            base,
            pos: 0,
            skipped: Vec::new(),
        }
    }

    fn skip(&mut self, from: usize, problem: TailProblem) {
        self.skipped.push(Skipped {
            at: self.base + from as u64,
            bytes: (self.pos - from) as u64,
            problem,
        });
    }
}

impl Iterator for Scan<'_> {
    type Item = Record;

    fn next(&mut self) -> Option<Record> {
        let mut damaged: Option<(usize, TailProblem)> = None;
        while self.pos < self.bytes.len() {
            match record_at(&self.bytes[self.pos..]) {
                Ok((record, size)) => {
                    if let Some((from, problem)) = damaged {
                        self.skip(from, problem);
                    }
                    self.pos += size;
                    return Some(record);
                }
                Err(problem) => {
                    damaged.get_or_insert((self.pos, problem));
                    self.pos += 1;
                }
            }
        }
        if let Some((from, problem)) = damaged {
            self.skip(from, problem);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::journal::test_support::{bits, journal_bytes, take};

    fn frames_of(scan: Scan) -> Vec<(f32, Vec<u32>)> {
        scan.filter_map(|r| match r {
            Record::Frame(t, pose) => Some((t, bits(&pose))),
            Record::Names(_) => None,
        })
        .collect()
    }

    #[test]
    fn a_scan_of_a_whole_journal_finds_every_frame_after_the_header() {
        let frames = take(12);
        let (bytes, ends) = journal_bytes(&frames);
        let mut scan = Scan::new(&bytes, 0);
        let got = frames_of(Scan::new(&bytes, 0));
        assert_eq!(got.len(), 12);
        for ((t, b), (time, pose, _)) in got.iter().zip(&frames) {
            assert_eq!((t.to_bits(), b), (time.to_bits(), &bits(pose)));
        }
        while scan.next().is_some() {}
        assert_eq!(
            scan.skipped,
            [Skipped {
                at: 0,
                bytes: ends[0] as u64,
                problem: TailProblem::BadRecord("impossible record length")
            }],
            "only the header is not a record"
        );
    }

    #[test]
    fn a_damaged_record_costs_only_itself() {
        let frames = take(20);
        let (bytes, ends) = journal_bytes(&frames);
        for k in [3, 11, 19] {
            for at in (ends[k]..ends[k + 1]).step_by(7) {
                let mut broken = bytes.clone();
                broken[at] ^= 0x10;
                let mut scan = Scan::new(&broken[ends[0]..], ends[0] as u64);
                let got = frames_of(Scan::new(&broken[ends[0]..], ends[0] as u64));
                assert_eq!(got.len(), 19, "byte {at}");
                let lost = got
                    .iter()
                    .zip(&frames)
                    .position(|((t, _), (want, _, _))| t.to_bits() != want.to_bits())
                    .unwrap_or(19);
                assert_eq!(lost, k, "byte {at}: frame {k} is the one lost");
                while scan.next().is_some() {}
                assert_eq!(scan.skipped.len(), 1, "byte {at}");
                assert_eq!(
                    scan.skipped[0].at,
                    (ends[k + 1] - frame_len(&bytes, ends[k])) as u64
                );
            }
        }
    }

    /// The size of the frame record that ends a flush group starting at `start`
    /// (a names record may come first).
    fn frame_len(bytes: &[u8], start: usize) -> usize {
        let mut at = start;
        loop {
            let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
            if bytes[at + 4] == KIND_FRAME {
                return len + 8;
            }
            at += len + 8;
        }
    }
}
