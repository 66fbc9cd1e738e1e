//! Recovery: a journal left behind by a crash read back into the `.vrma` it
//! stood for, every frame pushed into a `VrmaWriter` exactly as the live recorder
//! did (`recover`), and `save_vrma`, which writes a `.vrma` whole or not at all.
//!
//! A damaged journal gives up only what is damaged: after a bad record, or when the
//! header itself is damaged, the rest of the file is scanned for the records whose
//! own checksums hold (`salvage`), and `Recovered` says what was left out.

use crate::formats::glb::GlbFile;
use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use super::JournalError;
use super::format::JournalHeader;
use super::names::JOURNAL_SUFFIX;
use super::reader::{JournalEnd, JournalReader, TailDefect};
use super::salvage::{Record, Scan, Skipped};
use crate::formats::vrma::{VrmaRest, VrmaWriter};
use crate::humanoid::CustomNames;

impl<R: Read> JournalReader<R> {
    /// Pushes every frame into a `VrmaWriter` in the header's rest, under the
    /// custom names journaled with them, as the live recorder did.
    pub fn recover(mut self) -> Result<Recovered, JournalError> {
        let mut writer = VrmaWriter::new(self.header.rest.clone(), &self.header.animation);
        let (mut refused, mut span) = (0, None);
        while let Some((time, pose)) = self.next_frame()? {
            match writer.push(time, &pose, &self.custom_names) {
                Ok(()) => widen(&mut span, time),
                Err(_) => refused += 1,
            }
        }
        let end = self.end.unwrap_or(JournalEnd {
            dropped_tail_bytes: 0,
            defect: None,
        });
        Ok(Recovered {
            frames: writer.frame_count(),
            writer,
            header: self.header,
            custom_names: self.custom_names,
            refused,
            span,
            dropped_tail_bytes: end.dropped_tail_bytes,
            defect: end.defect,
            skipped: Vec::new(),
            header_damage: None,
        })
    }
}

/// A take read back from its journal.
#[derive(Debug)]
pub struct Recovered {
    pub header: JournalHeader,
    /// Every recovered frame, ready to `save_vrma`.
    pub writer: VrmaWriter,
    /// The custom names in force at the last frame.
    pub custom_names: CustomNames,
    /// Frames in `writer`.
    pub frames: usize,
    /// Frames the writer refused (time not after the previous one, not finite);
    /// always 0 for a journal written by `Recording`, which journals accepted frames.
    pub refused: usize,
    /// First and last frame time, seconds; `None` when no frame was recovered.
    pub span: Option<(f32, f32)>,
    /// Bytes of torn or corrupt tail after the last good record, dropped.
    pub dropped_tail_bytes: u64,
    /// What was wrong at the end, when the file did not end on a record boundary.
    pub defect: Option<TailDefect>,
    /// Damaged stretches between good records, left out (their frames are lost;
    /// the frames after them are in `writer`).
    pub skipped: Vec<Skipped>,
    /// Why the header could not be used, when it was damaged: the take is then named
    /// after the file, its performer is unknown (empty) and its rest is standard
    /// human proportions at the frames' hips height.
    pub header_damage: Option<String>,
}

impl Recovered {
    /// Pushes one salvaged record, as `JournalReader::recover` does.
    fn push(&mut self, record: Record) {
        match record {
            Record::Names(names) => self.custom_names = names,
            Record::Frame(time, pose) => match self.writer.push(time, &pose, &self.custom_names) {
                Ok(()) => {
                    widen(&mut self.span, time);
                    self.frames += 1;
                }
                Err(_) => self.refused += 1,
            },
        }
    }

    /// Takes the salvaged records of `scan`; the damage it found becomes
    /// `skipped`, except a stretch running to the end of the file: the torn tail.
    fn salvage(&mut self, mut scan: Scan, file_len: u64) {
        scan.by_ref().for_each(|record| self.push(record));
        self.skipped.append(&mut scan.skipped);
        self.dropped_tail_bytes = 0;
        self.defect = None;
        if let Some(last) = self.skipped.last().copied()
            && last.at + last.bytes == file_len
        {
            self.skipped.pop();
            self.dropped_tail_bytes = last.bytes;
            self.defect = Some(TailDefect {
                at: last.at,
                problem: last.problem,
            });
        }
    }
}

/// Reads the journal at `path` into a `VrmaWriter`: every frame whose record holds,
/// past damaged records and a damaged header (reported in `Recovered`, never an
/// error); errors only for a file that is not a readable journal and holds no good
/// record.
pub fn recover(path: &Path) -> Result<Recovered, JournalError> {
    let read_error = |source| JournalError::Read {
        path: path.to_owned(),
        source,
    };
    let header_error = match JournalReader::open(path) {
        Ok(reader) => {
            let mut recovered = reader.recover()?;
            if let Some(defect) = recovered.defect {
                // Whatever follows the first bad record may still hold.
                let mut file = File::open(path).map_err(read_error)?;
                let mut rest = Vec::new();
                file.seek(SeekFrom::Start(defect.at))
                    .and_then(|_| file.read_to_end(&mut rest))
                    .map_err(read_error)?;
                let file_len = defect.at + rest.len() as u64;
                recovered.salvage(Scan::new(&rest, defect.at), file_len);
            }
            return Ok(recovered);
        }
        Err(err @ (JournalError::Create { .. } | JournalError::Write { .. })) => return Err(err),
        Err(err @ (JournalError::Read { .. } | JournalError::Empty { .. })) => return Err(err),
        Err(header_error) => header_error,
    };
    let bytes = fs::read(path).map_err(read_error)?;
    let mut scan = Scan::new(&bytes, 0);
    let mut names = CustomNames::default();
    // The rest comes from the first frame: its source's hips height.
    let first = loop {
        match scan.next() {
            Some(Record::Names(found)) => names = found,
            Some(Record::Frame(time, pose)) => break (time, pose),
            None => return Err(header_error),
        }
    };
    let animation = take_name(path);
    let header = JournalHeader {
        performer: String::new(),
        rest: VrmaRest::standard(1.0).scaled_to_hips_height(first.1.rest_hips_height),
        animation: animation.clone(),
        created: UNIX_EPOCH,
    };
    let why = header_error.to_string();
    let prefix = format!("{}: ", path.display());
    let mut recovered = Recovered {
        writer: VrmaWriter::new(header.rest.clone(), &animation),
        header,
        custom_names: names,
        frames: 0,
        refused: 0,
        span: None,
        dropped_tail_bytes: 0,
        defect: None,
        skipped: Vec::new(),
        header_damage: Some(why.strip_prefix(&prefix).unwrap_or(&why).to_owned()),
    };
    recovered.push(Record::Frame(first.0, first.1));
    recovered.salvage(scan, bytes.len() as u64);
    // The first stretch left out is the header (and any damage right after it).
    if let Some(header) = recovered.skipped.first().copied().filter(|s| s.at == 0) {
        recovered.skipped.remove(0);
        if let Some(why) = &mut recovered.header_damage {
            why.push_str(&format!("; bytes 0..{} left out", header.bytes));
        }
    }
    Ok(recovered)
}

/// The take's name from its journal's file name (`walk.vrma.journal` → `walk`).
fn take_name(path: &Path) -> String {
    let file = path
        .file_name()
        .map_or_else(String::new, |f| f.to_string_lossy().into_owned());
    let stem = file.strip_suffix(JOURNAL_SUFFIX).unwrap_or(&file);
    stem.strip_suffix(".vrma").unwrap_or(stem).to_owned()
}

/// Writes `writer` to `path` through `path.partial` in the same directory, synced,
/// then renamed over `path`: a crash leaves the whole file or none of it.
pub fn save_vrma(writer: &VrmaWriter, path: &Path) -> io::Result<()> {
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    let saved = write_and_rename(writer, &partial, path);
    if saved.is_err() {
        // Gone already when the rename happened; nothing else to do on failure.
        let _ = fs::remove_file(&partial);
    }
    saved
}

fn write_and_rename(writer: &VrmaWriter, partial: &Path, path: &Path) -> io::Result<()> {
    let mut out = BufWriter::with_capacity(1 << 20, File::create(partial)?);
    writer.write_to(&mut out)?;
    out.into_inner()
        .map_err(io::IntoInnerError::into_error)?
        .sync_all()?;
    fs::rename(partial, path)?;
    sync_dir(path)
}

/// Makes a rename in `path`'s directory durable.
#[cfg(unix)]
fn sync_dir(path: &Path) -> io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn sync_dir(_path: &Path) -> io::Result<()> {
    Ok(())
}

pub(super) fn widen(span: &mut Option<(f32, f32)>, time: f32) {
    *span = Some(span.map_or((time, time), |(first, _)| (first, time)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::glb::GlbFile;
    use crate::record::journal::Recording;
    use crate::record::journal::test_support::{header, take};

    #[test]
    fn recovery_pushes_frames_as_the_live_recorder_did() {
        let dir = tempfile::tempdir().unwrap();
        let rest = header().rest;
        let mut recording = Recording::start(dir.path(), "take 7", "Ai", rest.clone()).unwrap();
        let mut live = VrmaWriter::new(rest, "take 7");
        let mut frames = take(30);
        frames[9].0 = frames[8].0; // time not moving forward: refused
        frames[15].0 = f32::NAN; // refused
        for (i, (t, pose, names)) in frames.iter().enumerate() {
            let pushed = recording.push(*t, pose, names);
            assert_eq!(pushed.is_err(), matches!(i, 9 | 15), "frame {i}");
            assert_eq!(live.push(*t, pose, names).is_err(), matches!(i, 9 | 15));
            if i % 4 == 0 {
                recording.flush().unwrap();
            }
        }
        recording.flush().unwrap();
        assert_eq!(recording.refused(), 2);
        let journal = recording.journal_path().to_owned();
        std::mem::forget(recording); // killed: no finish, no drop

        let recovered = recover(&journal).unwrap();
        assert_eq!(recovered.frames, 28);
        assert_eq!(recovered.refused, 0);
        assert_eq!(recovered.span, Some((0.0, 29.0 / 60.0)));
        assert_eq!((recovered.dropped_tail_bytes, recovered.defect), (0, None));
        assert_eq!(recovered.header.performer, "Ai");
        assert_eq!(recovered.header.animation, "take 7");
        assert_eq!(recovered.writer.to_bytes(), live.to_bytes());
    }

    #[test]
    fn a_crash_loses_only_the_frames_after_the_last_flush() {
        let dir = tempfile::tempdir().unwrap();
        let mut recording =
            Recording::start(dir.path(), "take", "Ai", VrmaRest::standard(0.9)).unwrap();
        for (i, (t, pose, names)) in take(13).iter().enumerate() {
            recording.push(*t, pose, names).unwrap();
            if i == 9 {
                recording.flush().unwrap();
            }
        }
        let journal = recording.journal_path().to_owned();
        std::mem::forget(recording); // killed: no drop
        assert_eq!(recover(&journal).unwrap().frames, 10);
    }

    /// The journal of a crashed take of `count` frames: its folder, path, bytes and
    /// where its first record starts (the header's length).
    fn crashed(count: usize) -> (tempfile::TempDir, PathBuf, Vec<u8>, usize) {
        let dir = tempfile::tempdir().unwrap();
        let mut recording =
            Recording::start(dir.path(), "walk", "Ai", VrmaRest::standard(0.9)).unwrap();
        for (t, pose, names) in take(count) {
            recording.push(t, &pose, &names).unwrap();
        }
        recording.flush().unwrap();
        let journal = recording.journal_path().to_owned();
        std::mem::forget(recording); // killed: no drop
        let bytes = fs::read(&journal).unwrap();
        let body = u32::from_le_bytes(bytes[10..14].try_into().unwrap()) as usize;
        (dir, journal, bytes, 14 + body + 4)
    }

    #[test]
    fn a_flipped_bit_anywhere_in_the_header_costs_no_frame() {
        let (_dir, journal, bytes, header_len) = crashed(30);
        let whole = recover(&journal).unwrap();
        assert!(whole.header_damage.is_none());
        let frames = take(30);
        for bit in (0..8 * 14).chain((8 * 14..8 * header_len).step_by(7)) {
            let mut broken = bytes.clone();
            broken[bit / 8] ^= 1 << (bit % 8);
            fs::write(&journal, &broken).unwrap();
            let r = recover(&journal).unwrap();
            assert_eq!(r.frames, 30, "bit {bit}");
            let why = r.header_damage.as_deref().unwrap_or_default();
            assert!(why.starts_with("byte "), "bit {bit}: {why}");
            assert!(
                why.ends_with(&format!("bytes 0..{header_len} left out")),
                "{why}"
            );
            assert_eq!(r.header.animation, "walk");
            assert!(r.skipped.is_empty() && r.defect.is_none(), "bit {bit}");
            assert_eq!(r.span, whole.span);
            let hips = r.header.rest.position(crate::humanoid::HumanBone::Hips).y;
            assert!((hips - frames[0].1.rest_hips_height).abs() < 1e-5, "{hips}");
        }
    }

    #[test]
    fn a_damaged_record_in_the_middle_costs_only_its_frame() {
        let (_dir, journal, mut bytes, header_len) = crashed(30);
        // Somewhere inside the records, well past the first names record.
        let at = header_len + (bytes.len() - header_len) / 2;
        bytes[at] ^= 0x04;
        fs::write(&journal, &bytes).unwrap();
        let r = recover(&journal).unwrap();
        assert_eq!(r.frames, 29);
        assert!(r.header_damage.is_none());
        assert_eq!(r.skipped.len(), 1, "{:?}", r.skipped);
        assert_eq!((r.dropped_tail_bytes, r.defect), (0, None));
        assert_eq!(r.span, Some((0.0, take(30)[29].0)));
    }

    #[test]
    fn a_file_with_no_good_record_keeps_its_header_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.journal");
        fs::write(
            &path,
            b"MBJOURNL\x01\x00garbage that holds no record at all",
        )
        .unwrap();
        let err = recover(&path).unwrap_err().to_string();
        assert!(err.contains("header"), "{err}");
    }
}
