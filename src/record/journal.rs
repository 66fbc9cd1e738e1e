//! The recorder's crash-safe side: recording file names, the append-only journal
//! written while a take runs, the `Recording` a live recorder holds per performer,
//! and recovery of a journal left behind by a crash into the `.vrma` it stood for.
//!
//! While recording, every accepted frame goes both into a `VrmaWriter` in memory and,
//! encoded, into `<take>.vrma.journal` next to where `<take>.vrma` will be written.
//! `JournalWriter` buffers records in one reusable `Vec<u8>` and writes them out on
//! `flush` (the recorder calls it at least every `DEFAULT_FLUSH_INTERVAL`, see
//! `flush_due`), so a killed process loses at most the frames since the last flush.
//! `Recording::finish` writes the `.vrma` (temporary file, synced, renamed) and only
//! then removes the journal. `recover` reads a journal back, stops at the first torn
//! or corrupt record, and pushes the frames before it into a `VrmaWriter` exactly as
//! the live recorder did.
//!
//! Recording names come from the network, so `recording_path` accepts only a plain
//! file name; a name already taken (a `.vrma` or a live journal) gets the next free
//! number (`take.vrma`, `take-2.vrma`, `take-3.vrma`, ...): a recording is never
//! overwritten, and a performer who records twice under one name keeps both takes.
//!
//! # Byte layout (version 1)
//! Little-endian throughout; every `f32` is stored as its bits, so frames come back
//! bit for bit. A string is a `u32` byte length then UTF-8.
//!
//! ```text
//! header
//!   0   magic      8 bytes  "MBJOURNL"
//!   8   version    u16      1
//!   10  body_len   u32      bytes of the body
//!   14  body
//!         created    u64 seconds + u32 nanoseconds since the Unix epoch
//!         performer  string
//!         animation  string   (the .vrma animation's name)
//!         rest       55 x 3 f32: the VrmaRest T-pose position of every bone,
//!                    model space, metres, in `HumanBone` index order
//!         lookAt     u8 0 | 1, then 3 f32 (VrmaRest::look_at_offset) when 1
//!   14+body_len crc32 u32 of bytes 0 .. 14+body_len
//! records, one after another until the end of the file
//!   len      u32   bytes of kind + payload
//!   kind     u8    1 = frame, 2 = custom expression names
//!   payload
//!   crc32    u32   of len, kind and payload
//! frame payload
//!   time               f32 seconds
//!   hips_position      3 f32, model space, metres
//!   rest_hips_height   f32 metres
//!   bone mask          u64, bit `HumanBone::index()` per present bone
//!   rotations          4 f32 (x, y, z, w) per present bone, index order
//!   preset mask        u32, bit `Preset as u32` per preset set
//!   preset weights     f32 per preset set, `Preset::all()` order
//!   custom mask        u16, bit per custom slot set
//!   custom weights     f32 per custom slot set, slot order
//!   lookAt             u8 0 | 1, then yaw, pitch (f32 radians) when 1
//! custom names payload (written before the first frame after the performer's
//! `CustomNames` changed, so slots mean the same in recovery as they did live)
//!   count              u8, at most CUSTOM_CAPACITY
//!   names              string per slot, slot order
//! ```

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use glam::{Quat, Vec3};

use crate::formats::vrma::{PushError, VrmaRest, VrmaWriter};
use crate::humanoid::bone::{ALL, BONE_COUNT};
use crate::humanoid::expression::{CUSTOM_CAPACITY, PRESET_COUNT};
use crate::humanoid::{CustomNames, HumanoidPose, LookAt, Preset};

/// The first 8 bytes of every journal.
pub const MAGIC: [u8; 8] = *b"MBJOURNL";

/// The layout version this build writes and reads.
pub const VERSION: u16 = 1;

/// What a journal's path adds to its recording's path: `take.vrma.journal`.
pub const JOURNAL_SUFFIX: &str = ".journal";

/// How often the recorder flushes its journal unless configured otherwise: the most
/// a crash can lose.
pub const DEFAULT_FLUSH_INTERVAL: Duration = Duration::from_millis(100);

/// Longest recording name accepted, bytes.
pub const MAX_NAME_BYTES: usize = 100;

/// Highest number tried after a taken recording name (`take-1000.vrma`).
const MAX_NUMBER: u32 = 1000;

/// Magic, version and body length.
const HEADER_START: usize = 14;
/// Largest header body a reader accepts (names are the only variable part).
const MAX_HEADER_BODY: u32 = 1 << 20;
/// Largest kind + payload a record may have (custom names are the largest).
const MAX_RECORD: u32 = 1 << 21;

const KIND_FRAME: u8 = 1;
const KIND_NAMES: u8 = 2;

/// Largest frame payload: every bone, preset, custom slot and the lookAt.
const MAX_FRAME_PAYLOAD: usize =
    4 + 12 + 4 + 8 + BONE_COUNT * 16 + 4 + PRESET_COUNT * 4 + 2 + CUSTOM_CAPACITY * 4 + 1 + 8;
/// Length, kind, payload and checksum of the largest frame record.
const MAX_FRAME_RECORD: usize = 4 + 1 + MAX_FRAME_PAYLOAD + 4;

/// Buffered bytes past which `append` writes them out without waiting for `flush`.
const WRITE_THRESHOLD: usize = 1 << 16;

/// Why a recording name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordingNameError {
    #[error("recording name is empty")]
    Empty,
    #[error("recording name {name} is {len} bytes long; at most {MAX_NAME_BYTES} are allowed")]
    TooLong { name: String, len: usize },
    #[error("recording name {0} contains a control character")]
    Control(String),
    #[error("recording name {0} contains a path separator")]
    Separator(String),
    #[error("recording name {0} starts with a dot")]
    LeadingDot(String),
    #[error(
        "recording name {name} contains {found:?}; use letters, digits, spaces, `-`, `_` and `.`"
    )]
    Character { name: String, found: char },
    #[error("recording name {0} starts or ends with a space, or ends with a dot")]
    Edge(String),
    #[error("recording name {0} is a reserved device name on windows")]
    Reserved(String),
}

/// Why a journal cannot be written or read. Messages name the file and, for a bad
/// journal, the byte offset.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("cannot create journal {path}")]
    Create {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot write journal {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{path}: byte 0: the file is empty, so no journal header was written")]
    Empty { path: PathBuf },
    #[error("{path}: byte 0: not a mocap-bridge journal (bad magic)")]
    BadMagic { path: PathBuf },
    #[error(
        "{path}: byte 8: journal version {found} is not supported (this build reads {VERSION})"
    )]
    Version { path: PathBuf, found: u16 },
    #[error("{path}: byte {at}: the journal header is cut short")]
    ShortHeader { path: PathBuf, at: u64 },
    #[error("{path}: byte {at}: the journal header is corrupt (checksum mismatch)")]
    HeaderChecksum { path: PathBuf, at: u64 },
    #[error("{path}: byte {at}: bad journal header: {what}")]
    BadHeader {
        path: PathBuf,
        at: u64,
        what: &'static str,
    },
}

/// Why a frame pushed onto a `Recording` was not (fully) recorded.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The frame is not in the take (time not after the previous frame, not finite).
    #[error("frame not recorded: {0}")]
    Refused(#[from] PushError),
    /// The frame is in the take, but the journal stopped: from now on the take lives
    /// only in memory. Returned once, by the push or flush that failed.
    #[error("cannot write journal {path}; the take goes on in memory only")]
    Journal {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// Why a recording cannot start or finish.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error(transparent)]
    Name(#[from] RecordingNameError),
    #[error("cannot create the recordings directory {dir}")]
    Dir {
        dir: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error("{base}: that name and every numbered one up to -{MAX_NUMBER} are taken")]
    NoFreeName { base: PathBuf },
    #[error("cannot write {path}; the take is kept in {journal} for `mocap-bridge recover`")]
    Write {
        path: PathBuf,
        journal: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// The path of recording `name` in `dir`: `dir/name.vrma` (`.vrma` added unless the
/// name ends with it). `name` is untrusted: only a plain file name of letters, digits,
/// spaces, `-`, `_` and `.` is accepted, at most `MAX_NAME_BYTES` long, not starting
/// with a dot or a space and not ending with a space or a dot, and not a Windows
/// device name; the result is always directly inside `dir`.
pub fn recording_path(dir: &Path, name: &str) -> Result<PathBuf, RecordingNameError> {
    if name.is_empty() {
        return Err(RecordingNameError::Empty);
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(RecordingNameError::TooLong {
            name: shown(name),
            len: name.len(),
        });
    }
    if name.chars().any(char::is_control) {
        return Err(RecordingNameError::Control(shown(name)));
    }
    if name.contains(['/', '\\']) {
        return Err(RecordingNameError::Separator(shown(name)));
    }
    if name.starts_with('.') {
        return Err(RecordingNameError::LeadingDot(shown(name)));
    }
    if let Some(found) = name
        .chars()
        .find(|c| !(c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | ' ')))
    {
        return Err(RecordingNameError::Character {
            name: shown(name),
            found,
        });
    }
    if name.starts_with(' ') || name.ends_with([' ', '.']) {
        return Err(RecordingNameError::Edge(shown(name)));
    }
    if is_windows_device(name) {
        return Err(RecordingNameError::Reserved(shown(name)));
    }
    let mut file = name.to_owned();
    if !has_vrma_extension(name) {
        file.push_str(".vrma");
    }
    Ok(dir.join(file))
}

/// A name quoted and escaped for one line of a message, cut after 40 characters.
fn shown(name: &str) -> String {
    let cut: String = name.chars().take(40).collect();
    let mut text = format!("{cut:?}");
    if cut.len() < name.len() {
        text.push('…');
    }
    text
}

/// Whether Windows would take `name` for a device (`con.vrma` is `CON`).
fn is_windows_device(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or(name).trim_end();
    let upper = stem.to_ascii_uppercase();
    match upper.as_str() {
        "CON" | "PRN" | "AUX" | "NUL" => true,
        _ => {
            let bytes = upper.as_bytes();
            bytes.len() == 4
                && (upper.starts_with("COM") || upper.starts_with("LPT"))
                && matches!(bytes[3], b'1'..=b'9')
        }
    }
}

/// Whether `name` ends with `.vrma` (any case) after at least one character.
pub fn has_vrma_extension(name: &str) -> bool {
    name.len() > 5
        && name
            .get(name.len() - 5..)
            .is_some_and(|end| end.eq_ignore_ascii_case(".vrma"))
}

/// The journal of the recording at `path`: `take.vrma` -> `take.vrma.journal`.
#[must_use]
pub fn journal_path(path: &Path) -> PathBuf {
    let mut journal = path.as_os_str().to_owned();
    journal.push(JOURNAL_SUFFIX);
    PathBuf::from(journal)
}

/// The recording a journal stands for: its path without `.journal`, with `.vrma`
/// added when that does not end in `.vrma` (`take.vrma.journal` -> `take.vrma`,
/// `take.journal` -> `take.vrma`, `take.bin` -> `take.bin.vrma`).
#[must_use]
pub fn vrma_path_for_journal(journal: &Path) -> PathBuf {
    let text = journal.as_os_str().to_string_lossy();
    let stripped = text.strip_suffix(JOURNAL_SUFFIX).unwrap_or(&text);
    let mut path = stripped.to_owned();
    if !has_vrma_extension(&path) {
        path.push_str(".vrma");
    }
    PathBuf::from(path)
}

/// What a journal says about its take before any frame.
#[derive(Debug, Clone, PartialEq)]
pub struct JournalHeader {
    /// Who is being recorded (from the live bridge's performer config).
    pub performer: String,
    /// The `.vrma` animation's name.
    pub animation: String,
    /// The T-pose the `.vrma` will be written in; rebuilt exactly on recovery.
    pub rest: VrmaRest,
    /// When the take started. Times before the Unix epoch are stored as the epoch.
    pub created: SystemTime,
}

/// Writes one take's journal: the header at once, then a record per frame.
///
/// `append` runs on the recorder task every frame: it encodes into one reusable
/// buffer and, once warmed up, never allocates (a custom names record may, when the
/// performer's `CustomNames` changes). If a write fails, the file may end in a torn
/// record; the writer then refuses further records, since none after the tear could
/// be recovered. Dropping the writer writes out what is buffered.
#[derive(Debug)]
pub struct JournalWriter {
    file: File,
    path: PathBuf,
    /// Encoded records not yet written to the file.
    buffer: Vec<u8>,
    /// The custom names as last journaled, slot order.
    names: Vec<String>,
    /// Records appended since the last flush (written out or still buffered).
    dirty: bool,
    /// Whether `flush` also calls `sync_data`.
    sync: bool,
    last_flush: Instant,
    failed: bool,
}

impl JournalWriter {
    /// Creates the journal at `path` (never over an existing file) and writes its
    /// header through to the file.
    pub fn create(path: &Path, header: &JournalHeader) -> Result<Self, JournalError> {
        let create_error = |source| JournalError::Create {
            path: path.to_owned(),
            source,
        };
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(create_error)?;
        let mut writer = Self {
            file,
            path: path.to_owned(),
            buffer: Vec::with_capacity(WRITE_THRESHOLD + MAX_FRAME_RECORD),
            names: Vec::with_capacity(CUSTOM_CAPACITY),
            dirty: false,
            sync: false,
            last_flush: Instant::now(),
            failed: false,
        };
        let written = match encode_header(&mut writer.buffer, header) {
            Ok(()) => writer.flush().map_err(|source| JournalError::Write {
                path: path.to_owned(),
                source,
            }),
            Err(source) => Err(create_error(source)),
        };
        if written.is_err() {
            // A journal without its header could never be recovered.
            let _ = fs::remove_file(path);
        }
        written.map(|()| writer)
    }

    /// The journal's path.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether `flush` also asks the OS to put the data on disk (`sync_data`): off by
    /// default, since a killed process loses nothing the OS has; on survives a power
    /// cut too, at the cost of a disk round trip per flush.
    pub fn set_sync(&mut self, sync: bool) {
        self.sync = sync;
    }

    /// Appends one frame at `time` seconds, preceded by a custom names record when
    /// `custom` differs from the names journaled so far. Written out by `flush`, or
    /// here once the buffer passes 64 KiB.
    pub fn append(
        &mut self,
        time: f32,
        pose: &HumanoidPose,
        custom: &CustomNames,
    ) -> io::Result<()> {
        if self.failed {
            return Err(stopped());
        }
        if self.names_changed(custom) {
            self.append_names(custom)?;
        }
        let start = begin_record(&mut self.buffer, KIND_FRAME);
        encode_frame(&mut self.buffer, time, pose);
        end_record(&mut self.buffer, start);
        self.dirty = true;
        if self.buffer.len() >= WRITE_THRESHOLD {
            self.write_buffered()?;
        }
        Ok(())
    }

    /// Writes every buffered record to the file (and syncs it when `set_sync` asked).
    pub fn flush(&mut self) -> io::Result<()> {
        self.write_buffered()?;
        if self.sync
            && let Err(err) = self.file.sync_data()
        {
            self.failed = true;
            return Err(err);
        }
        self.dirty = false;
        self.last_flush = Instant::now();
        Ok(())
    }

    /// Whether frames appended since the last flush have waited `interval` or more
    /// at `now`.
    #[must_use]
    pub fn flush_due(&self, now: Instant, interval: Duration) -> bool {
        self.dirty && now.saturating_duration_since(self.last_flush) >= interval
    }

    fn write_buffered(&mut self) -> io::Result<()> {
        if self.failed {
            return Err(stopped());
        }
        let written = self.file.write_all(&self.buffer);
        self.buffer.clear();
        if written.is_err() {
            self.failed = true;
        }
        written
    }

    fn names_changed(&self, custom: &CustomNames) -> bool {
        (0..CUSTOM_CAPACITY)
            .any(|slot| custom.name(slot) != self.names.get(slot).map(String::as_str))
    }

    fn append_names(&mut self, custom: &CustomNames) -> io::Result<()> {
        self.names.clear();
        self.names.extend(
            (0..CUSTOM_CAPACITY)
                .map_while(|slot| custom.name(slot))
                .map(str::to_owned),
        );
        let start = begin_record(&mut self.buffer, KIND_NAMES);
        // At most CUSTOM_CAPACITY (16) names.
        self.buffer.push(self.names.len() as u8);
        for name in &self.names {
            put_str(&mut self.buffer, name);
        }
        if self.buffer.len() - start > MAX_RECORD as usize {
            // Later frames would use slots whose names the journal lacks: stop here.
            self.buffer.truncate(start);
            self.failed = true;
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "custom expression names too long for a journal record",
            ));
        }
        end_record(&mut self.buffer, start);
        Ok(())
    }
}

impl Drop for JournalWriter {
    /// Writes out what is buffered (no sync), as `BufWriter` does: a writer dropped
    /// without a crash loses nothing. Errors are ignored; the journal then ends at
    /// the last good record.
    fn drop(&mut self) {
        if !self.failed && !self.buffer.is_empty() {
            let _ = self.write_buffered();
        }
    }
}

fn stopped() -> io::Error {
    io::Error::other("an earlier write to this journal failed; the journal ends there")
}

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
    header: JournalHeader,
    /// Byte offset of the next record.
    offset: u64,
    /// The record being read: kind, payload, checksum.
    record: Vec<u8>,
    custom_names: CustomNames,
    end: Option<JournalEnd>,
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
        })
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
}

/// Reads the journal at `path` into a `VrmaWriter`: every frame up to the first torn
/// or corrupt record (reported in `Recovered`, never an error); errors only for a
/// file that is not a readable journal.
pub fn recover(path: &Path) -> Result<Recovered, JournalError> {
    JournalReader::open(path)?.recover()
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

/// One performer's take while it records: the `.vrma` in memory and its journal on
/// disk.
#[derive(Debug)]
pub struct Recording {
    /// Where `finish` writes the `.vrma`.
    path: PathBuf,
    journal: JournalWriter,
    writer: VrmaWriter,
    refused: usize,
    span: Option<(f32, f32)>,
    /// Set once a journal write failed (and was reported).
    journal_stopped: bool,
}

/// A take written to disk.
#[derive(Debug, Clone, PartialEq)]
pub struct FinishedRecording {
    /// The `.vrma` written.
    pub path: PathBuf,
    pub frames: usize,
    /// Frames pushed but refused (time not after the previous one, not finite).
    pub refused: usize,
    /// First and last frame time, seconds; `None` for a take without frames.
    pub span: Option<(f32, f32)>,
    /// The journal, when it could not be removed after the `.vrma` was written.
    pub leftover_journal: Option<PathBuf>,
}

impl Recording {
    /// Starts recording `name` (untrusted, see `recording_path`) by `performer` into
    /// `dir` (created when missing), in the T-pose `rest`. A name whose `.vrma` or
    /// journal exists gets the next free number: `take-2.vrma`, ...; `path` tells
    /// which. The journal is created at once, next to the `.vrma`.
    pub fn start(
        dir: &Path,
        name: &str,
        performer: &str,
        rest: VrmaRest,
    ) -> Result<Self, RecordError> {
        let base = recording_path(dir, name)?;
        fs::create_dir_all(dir).map_err(|source| RecordError::Dir {
            dir: dir.to_owned(),
            source,
        })?;
        let animation = if has_vrma_extension(name) {
            &name[..name.len() - ".vrma".len()]
        } else {
            name
        };
        let header = JournalHeader {
            performer: performer.to_owned(),
            animation: animation.to_owned(),
            rest,
            created: SystemTime::now(),
        };
        for n in 1..=MAX_NUMBER {
            let path = numbered(&base, n);
            if exists(&path) {
                continue;
            }
            match JournalWriter::create(&journal_path(&path), &header) {
                Ok(journal) => {
                    return Ok(Self {
                        path,
                        journal,
                        writer: VrmaWriter::new(header.rest, &header.animation),
                        refused: 0,
                        span: None,
                        journal_stopped: false,
                    });
                }
                Err(JournalError::Create { source, .. })
                    if source.kind() == io::ErrorKind::AlreadyExists => {}
                Err(err) => return Err(err.into()),
            }
        }
        Err(RecordError::NoFreeName { base })
    }

    /// Where `finish` will write the `.vrma`.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The journal protecting the take.
    #[must_use]
    pub fn journal_path(&self) -> &Path {
        self.journal.path()
    }

    /// Frames recorded so far.
    #[must_use]
    pub fn frame_count(&self) -> usize {
        self.writer.frame_count()
    }

    /// Frames refused so far.
    #[must_use]
    pub fn refused(&self) -> usize {
        self.refused
    }

    /// See `JournalWriter::set_sync`.
    pub fn set_sync(&mut self, sync: bool) {
        self.journal.set_sync(sync);
    }

    /// Records one frame at `time` seconds: into the take, then into the journal. A
    /// refused frame is counted and goes into neither.
    pub fn push(
        &mut self,
        time: f32,
        pose: &HumanoidPose,
        custom: &CustomNames,
    ) -> Result<(), FrameError> {
        if let Err(err) = self.writer.push(time, pose, custom) {
            self.refused += 1;
            return Err(err.into());
        }
        widen(&mut self.span, time);
        if self.journal_stopped {
            return Ok(());
        }
        let appended = self.journal.append(time, pose, custom);
        self.journal_result(appended)
    }

    /// Writes the journaled frames to disk; see `JournalWriter::flush`. Does nothing
    /// once the journal has stopped.
    pub fn flush(&mut self) -> Result<(), FrameError> {
        if self.journal_stopped {
            return Ok(());
        }
        let flushed = self.journal.flush();
        self.journal_result(flushed)
    }

    /// See `JournalWriter::flush_due`.
    #[must_use]
    pub fn flush_due(&self, now: Instant, interval: Duration) -> bool {
        !self.journal_stopped && self.journal.flush_due(now, interval)
    }

    /// Writes the `.vrma` (through a temporary file, synced and renamed), then
    /// removes the journal. If something else took `path` meanwhile, the next free
    /// number is used. On error the journal stays, for `mocap-bridge recover`.
    pub fn finish(mut self) -> Result<FinishedRecording, RecordError> {
        // Every frame into the journal first, so a failed write below loses none.
        // A journal that fails now only matters if the write fails too.
        let _ = self.flush();
        let journal = self.journal.path().to_owned();
        let own = &self.path;
        let Some(path) = (1..=MAX_NUMBER)
            .map(|n| numbered(own, n))
            .find(|p| !exists(p) && (p == own || !exists(&journal_path(p))))
        else {
            return Err(RecordError::NoFreeName { base: own.clone() });
        };
        save_vrma(&self.writer, &path).map_err(|source| RecordError::Write {
            path: path.clone(),
            journal: journal.clone(),
            source,
        })?;
        drop(self.journal);
        let leftover_journal = fs::remove_file(&journal).err().map(|_| journal);
        Ok(FinishedRecording {
            path,
            frames: self.writer.frame_count(),
            refused: self.refused,
            span: self.span,
            leftover_journal,
        })
    }

    fn journal_result(&mut self, result: io::Result<()>) -> Result<(), FrameError> {
        result.map_err(|source| {
            self.journal_stopped = true;
            FrameError::Journal {
                path: self.journal.path().to_owned(),
                source,
            }
        })
    }
}

/// `take.vrma` for 1, `take-2.vrma` for 2, ...
fn numbered(base: &Path, n: u32) -> PathBuf {
    if n <= 1 {
        return base.to_owned();
    }
    let stem = base.file_stem().unwrap_or_default().to_string_lossy();
    let name = match base.extension() {
        Some(ext) => format!("{stem}-{n}.{}", ext.to_string_lossy()),
        None => format!("{stem}-{n}"),
    };
    base.with_file_name(name)
}

/// Whether anything (even a dangling link) is at `path`.
fn exists(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok()
}

fn widen(span: &mut Option<(f32, f32)>, time: f32) {
    *span = Some(span.map_or((time, time), |(first, _)| (first, time)));
}

// ---- encoding ----

fn put_u16(buffer: &mut Vec<u8>, v: u16) {
    buffer.extend_from_slice(&v.to_le_bytes());
}

fn put_u32(buffer: &mut Vec<u8>, v: u32) {
    buffer.extend_from_slice(&v.to_le_bytes());
}

fn put_u64(buffer: &mut Vec<u8>, v: u64) {
    buffer.extend_from_slice(&v.to_le_bytes());
}

fn put_f32s(buffer: &mut Vec<u8>, values: &[f32]) {
    for v in values {
        buffer.extend_from_slice(&v.to_le_bytes());
    }
}

/// A `u32` length, then the bytes. Callers bound the length (`MAX_RECORD`,
/// `MAX_HEADER_BODY`) before the record is written.
fn put_str(buffer: &mut Vec<u8>, s: &str) {
    put_u32(buffer, u32::try_from(s.len()).unwrap_or(u32::MAX));
    buffer.extend_from_slice(s.as_bytes());
}

/// Starts a record of `kind`; returns where it starts, for `end_record`.
fn begin_record(buffer: &mut Vec<u8>, kind: u8) -> usize {
    let start = buffer.len();
    buffer.extend_from_slice(&[0; 4]);
    buffer.push(kind);
    start
}

/// Fills in the length of the record starting at `start` and appends its checksum.
fn end_record(buffer: &mut Vec<u8>, start: usize) {
    // Bounded by MAX_RECORD.
    let len = (buffer.len() - start - 4) as u32;
    buffer[start..start + 4].copy_from_slice(&len.to_le_bytes());
    let crc = crc32fast::hash(&buffer[start..]);
    put_u32(buffer, crc);
}

fn encode_header(buffer: &mut Vec<u8>, header: &JournalHeader) -> io::Result<()> {
    let start = buffer.len();
    buffer.extend_from_slice(&MAGIC);
    put_u16(buffer, VERSION);
    put_u32(buffer, 0);
    let body = buffer.len();
    let created = header
        .created
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    put_u64(buffer, created.as_secs());
    put_u32(buffer, created.subsec_nanos());
    put_str(buffer, &header.performer);
    put_str(buffer, &header.animation);
    for bone in ALL {
        put_f32s(buffer, &header.rest.position(bone).to_array());
    }
    match header.rest.look_at_offset {
        None => buffer.push(0),
        Some(offset) => {
            buffer.push(1);
            put_f32s(buffer, &offset.to_array());
        }
    }
    let body_len = u32::try_from(buffer.len() - body)
        .ok()
        .filter(|len| *len <= MAX_HEADER_BODY)
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "performer and animation names too long for a journal header",
            )
        })?;
    buffer[body - 4..body].copy_from_slice(&body_len.to_le_bytes());
    let crc = crc32fast::hash(&buffer[start..]);
    put_u32(buffer, crc);
    Ok(())
}

fn encode_frame(buffer: &mut Vec<u8>, time: f32, pose: &HumanoidPose) {
    put_f32s(buffer, &[time]);
    put_f32s(buffer, &pose.hips_position.to_array());
    put_f32s(buffer, &[pose.rest_hips_height]);
    put_u64(buffer, pose.present_mask());
    for bone in ALL {
        if let Some(q) = pose.rotation(bone) {
            put_f32s(buffer, &q.to_array());
        }
    }
    let e = &pose.expressions;
    let preset_mask = e
        .presets()
        .fold(0u32, |mask, (preset, _)| mask | (1 << preset as u32));
    put_u32(buffer, preset_mask);
    for (_, weight) in e.presets() {
        put_f32s(buffer, &[weight]);
    }
    let custom_mask = (0..CUSTOM_CAPACITY)
        .filter(|slot| e.custom(*slot).is_some())
        .fold(0u16, |mask, slot| mask | (1 << slot));
    put_u16(buffer, custom_mask);
    for slot in 0..CUSTOM_CAPACITY {
        if let Some(weight) = e.custom(slot) {
            put_f32s(buffer, &[weight]);
        }
    }
    match pose.look_at {
        None => buffer.push(0),
        Some(look) => {
            buffer.push(1);
            put_f32s(buffer, &[look.yaw, look.pitch]);
        }
    }
}

// ---- decoding ----

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

/// A cursor over a record's payload; every read fails past its end.
struct Payload<'a>(&'a [u8]);

impl<'a> Payload<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], &'static str> {
        if self.0.len() < n {
            return Err("the payload ends early");
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], &'static str> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    fn u8(&mut self) -> Result<u8, &'static str> {
        Ok(self.array::<1>()?[0])
    }

    fn u16(&mut self) -> Result<u16, &'static str> {
        self.array().map(u16::from_le_bytes)
    }

    fn u32(&mut self) -> Result<u32, &'static str> {
        self.array().map(u32::from_le_bytes)
    }

    fn u64(&mut self) -> Result<u64, &'static str> {
        self.array().map(u64::from_le_bytes)
    }

    fn f32(&mut self) -> Result<f32, &'static str> {
        self.array().map(f32::from_le_bytes)
    }

    fn vec3(&mut self) -> Result<Vec3, &'static str> {
        Ok(Vec3::new(self.f32()?, self.f32()?, self.f32()?))
    }

    fn str(&mut self) -> Result<&'a str, &'static str> {
        let len = self.u32()? as usize;
        std::str::from_utf8(self.take(len)?).map_err(|_| "a name is not UTF-8")
    }

    fn flag(&mut self) -> Result<bool, &'static str> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err("a flag is neither 0 nor 1"),
        }
    }

    fn finish(&self) -> Result<(), &'static str> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err("the payload has bytes left over")
        }
    }
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

fn decode_header_body(body: &[u8]) -> Result<JournalHeader, &'static str> {
    let mut p = Payload(body);
    let secs = p.u64()?;
    let nanos = p.u32()?;
    if nanos >= 1_000_000_000 {
        return Err("creation time has too many nanoseconds");
    }
    let created = UNIX_EPOCH
        .checked_add(Duration::new(secs, nanos))
        .ok_or("creation time out of range")?;
    let performer = p.str()?.to_owned();
    let animation = p.str()?.to_owned();
    let mut positions = [None; BONE_COUNT];
    for bone in ALL {
        positions[bone.index()] = Some(p.vec3()?);
    }
    let look_at_offset = if p.flag()? { Some(p.vec3()?) } else { None };
    p.finish()?;
    Ok(JournalHeader {
        performer,
        animation,
        // Every position known: the rest is exactly these positions.
        rest: VrmaRest::from_positions(&positions, look_at_offset),
        created,
    })
}

fn decode_frame(payload: &[u8]) -> Result<(f32, HumanoidPose), &'static str> {
    let mut p = Payload(payload);
    let time = p.f32()?;
    let mut pose = HumanoidPose::default();
    pose.hips_position = p.vec3()?;
    pose.rest_hips_height = p.f32()?;
    let bones = p.u64()?;
    if bones >> BONE_COUNT != 0 {
        return Err("the bone mask names bones that do not exist");
    }
    for bone in ALL {
        if bones & (1 << bone.index()) != 0 {
            let q = Quat::from_xyzw(p.f32()?, p.f32()?, p.f32()?, p.f32()?);
            if !q.is_finite() {
                return Err("a rotation is not finite");
            }
            pose.set_rotation(bone, q);
        }
    }
    let presets = p.u32()?;
    if presets >> PRESET_COUNT != 0 {
        return Err("the preset mask names presets that do not exist");
    }
    for preset in Preset::all() {
        if presets & (1 << preset as u32) != 0 {
            pose.expressions.set_preset(preset, p.f32()?);
        }
    }
    let customs = p.u16()?;
    for slot in 0..CUSTOM_CAPACITY {
        if customs & (1 << slot) != 0 {
            pose.expressions.set_custom(slot, p.f32()?);
        }
    }
    if p.flag()? {
        pose.look_at = Some(LookAt {
            yaw: p.f32()?,
            pitch: p.f32()?,
        });
    }
    p.finish()?;
    Ok((time, pose))
}

fn decode_names(payload: &[u8]) -> Result<CustomNames, &'static str> {
    let mut p = Payload(payload);
    let count = usize::from(p.u8()?);
    if count > CUSTOM_CAPACITY {
        return Err("more custom names than slots");
    }
    let mut names = CustomNames::default();
    for slot in 0..count {
        if names.slot_or_insert(p.str()?) != Some(slot) {
            return Err("a custom name repeats");
        }
    }
    p.finish()?;
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::humanoid::HumanBone;

    /// xorshift64*: deterministic random poses without a dependency.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        /// In [0, 1).
        fn unit(&mut self) -> f32 {
            (self.next() >> 40) as f32 / (1u64 << 24) as f32
        }

        fn chance(&mut self, p: f32) -> bool {
            self.unit() < p
        }

        fn signed(&mut self) -> f32 {
            // Now and then an exact -0.0, whose sign must survive too.
            if self.chance(0.05) {
                -0.0
            } else {
                self.unit() * 2.0 - 1.0
            }
        }
    }

    /// A pose with every kind of field set, some bones, expressions and the lookAt
    /// absent; custom weights also in slots no name covers.
    fn random_pose(rng: &mut Rng) -> HumanoidPose {
        let mut pose = HumanoidPose::default();
        for bone in ALL {
            if rng.chance(0.7) {
                let axis = Vec3::new(rng.signed(), rng.signed(), rng.signed() + 2.0);
                let q = Quat::from_axis_angle(axis.normalize(), rng.signed() * 3.0);
                pose.set_rotation(bone, q);
            }
        }
        pose.hips_position = Vec3::new(rng.signed(), rng.unit() + 0.5, rng.signed());
        pose.rest_hips_height = 0.8 + rng.unit() * 0.2;
        for preset in Preset::all() {
            if rng.chance(0.4) {
                pose.expressions.set_preset(preset, rng.unit());
            }
        }
        for slot in 0..CUSTOM_CAPACITY {
            if rng.chance(0.3) {
                pose.expressions.set_custom(slot, rng.unit());
            }
        }
        if rng.chance(0.6) {
            pose.look_at = Some(LookAt {
                yaw: rng.signed(),
                pitch: rng.signed() * 0.5,
            });
        }
        pose
    }

    /// Every bit of a pose that its public accessors show.
    fn bits(pose: &HumanoidPose) -> Vec<u32> {
        let mut out = vec![
            pose.present_mask() as u32,
            (pose.present_mask() >> 32) as u32,
        ];
        for bone in ALL {
            out.extend(pose.rotation_or_identity(bone).to_array().map(f32::to_bits));
        }
        out.extend(pose.hips_position.to_array().map(f32::to_bits));
        out.push(pose.rest_hips_height.to_bits());
        for preset in Preset::all() {
            out.push(
                pose.expressions
                    .preset(preset)
                    .map_or(u32::MAX, f32::to_bits),
            );
        }
        for slot in 0..CUSTOM_CAPACITY {
            out.push(pose.expressions.custom(slot).map_or(u32::MAX, f32::to_bits));
        }
        match pose.look_at {
            None => out.push(u32::MAX),
            Some(l) => out.extend([l.yaw.to_bits(), l.pitch.to_bits()]),
        }
        out
    }

    fn header() -> JournalHeader {
        let mut rest = VrmaRest::standard(0.93);
        rest.look_at_offset = Some(Vec3::new(0.0, 0.06, 0.09));
        JournalHeader {
            performer: "Ａｉ (stage left)".into(),
            animation: "take 7".into(),
            rest,
            created: UNIX_EPOCH + Duration::new(1_767_000_000, 123_456_789),
        }
    }

    /// A take of `count` random frames, 1/60 s apart, whose custom names grow at
    /// frames 5 and 12 and are replaced by another table at frame 20.
    fn take(count: usize) -> Vec<(f32, HumanoidPose, CustomNames)> {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut names = CustomNames::default();
        (0..count)
            .map(|i| {
                match i {
                    5 => {
                        names.slot_or_insert("smirk");
                    }
                    12 => {
                        names.slot_or_insert("tongue out");
                        names.slot_or_insert("ウインク");
                    }
                    20 => {
                        names = CustomNames::default();
                        names.slot_or_insert("wink");
                    }
                    _ => {}
                }
                (i as f32 / 60.0, random_pose(&mut rng), names.clone())
            })
            .collect()
    }

    /// Writes `frames` to a fresh journal, flushing after each; returns the file's
    /// bytes and where each record group (header, then each frame with the names
    /// record before it) ends.
    fn journal_bytes(frames: &[(f32, HumanoidPose, CustomNames)]) -> (Vec<u8>, Vec<usize>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("take.vrma.journal");
        let mut writer = JournalWriter::create(&path, &header()).unwrap();
        let mut ends = vec![fs::metadata(&path).unwrap().len() as usize];
        for (time, pose, names) in frames {
            writer.append(*time, pose, names).unwrap();
            writer.flush().unwrap();
            ends.push(fs::metadata(&path).unwrap().len() as usize);
        }
        (fs::read(&path).unwrap(), ends)
    }

    fn reader(bytes: &[u8]) -> Result<JournalReader<&[u8]>, JournalError> {
        JournalReader::new(bytes, Path::new("take.journal"))
    }

    fn read_all(bytes: &[u8]) -> (Vec<(f32, HumanoidPose)>, JournalEnd) {
        let mut r = reader(bytes).unwrap();
        let mut frames = Vec::new();
        while let Some(frame) = r.next_frame().unwrap() {
            frames.push(frame);
        }
        (frames, r.end().unwrap())
    }

    #[test]
    fn recording_path_rejects_every_unsafe_name() {
        let dir = Path::new("recordings");
        let long = "x".repeat(MAX_NAME_BYTES + 1);
        let cases = [
            ("../x", "contains a path separator"),
            ("/etc/x", "contains a path separator"),
            ("a/b", "contains a path separator"),
            ("a\\b", "contains a path separator"),
            ("..", "starts with a dot"),
            (".", "starts with a dot"),
            (".hidden", "starts with a dot"),
            ("", "recording name is empty"),
            ("a\0b", "contains a control character"),
            ("line\nbreak", "contains a control character"),
            (long.as_str(), "is 101 bytes long"),
            ("C:x", "contains ':'"),
            ("c:", "contains ':'"),
            ("take*", "contains '*'"),
            ("what?", "contains '?'"),
            ("a<b>", "contains '<'"),
            (" take", "starts or ends with a space"),
            ("take ", "starts or ends with a space"),
            ("take.", "ends with a dot"),
            ("CON", "reserved device name"),
            ("com1.vrma", "reserved device name"),
            ("Lpt9 .txt", "reserved device name"),
            ("nul.take", "reserved device name"),
        ];
        for (name, expected) in cases {
            let err = match recording_path(dir, name) {
                Ok(path) => panic!("{name:?} accepted as {}", path.display()),
                Err(err) => err.to_string(),
            };
            assert!(
                err.contains(expected),
                "{name:?}: `{err}` lacks `{expected}`"
            );
            assert!(
                !err.contains('\n') && !err.contains('\0'),
                "{name:?}: {err}"
            );
        }
    }

    #[test]
    fn recording_path_keeps_plain_names_inside_the_directory() {
        let dir = Path::new("/srv/recordings");
        let longest = "y".repeat(MAX_NAME_BYTES);
        let cases = [
            ("take 1", "take 1.vrma"),
            ("take.vrma", "take.vrma"),
            ("Take.VRMA", "Take.VRMA"),
            ("a..b", "a..b.vrma"),
            ("ライブ_01-b", "ライブ_01-b.vrma"),
            ("console", "console.vrma"),
            ("com10", "com10.vrma"),
            ("vrma", "vrma.vrma"),
            (longest.as_str(), &format!("{longest}.vrma")),
        ];
        for (name, file) in cases {
            let path = recording_path(dir, name).unwrap();
            assert_eq!(path, dir.join(file), "{name:?}");
            assert_eq!(path.parent(), Some(dir), "{name:?}");
        }
    }

    #[test]
    fn journal_and_recording_paths_pair_up() {
        let take = Path::new("rec/take.vrma");
        assert_eq!(journal_path(take), Path::new("rec/take.vrma.journal"));
        assert_eq!(vrma_path_for_journal(&journal_path(take)), take);
        assert_eq!(
            vrma_path_for_journal(Path::new("take.journal")),
            Path::new("take.vrma")
        );
        assert_eq!(
            vrma_path_for_journal(Path::new("take.bin")),
            Path::new("take.bin.vrma")
        );
        assert_eq!(numbered(take, 1), take);
        assert_eq!(numbered(take, 12), Path::new("rec/take-12.vrma"));
    }

    #[test]
    fn frames_and_header_come_back_bit_for_bit() {
        let frames = take(40);
        let (bytes, _) = journal_bytes(&frames);
        let mut r = reader(&bytes).unwrap();
        assert_eq!(r.header(), &header());
        for (i, (time, pose, names)) in frames.iter().enumerate() {
            let (t, got) = r.next_frame().unwrap().unwrap();
            assert_eq!(t.to_bits(), time.to_bits(), "frame {i}");
            assert_eq!(bits(&got), bits(pose), "frame {i}");
            assert_eq!(&got, pose, "frame {i}");
            assert_eq!(r.custom_names(), names, "frame {i}");
        }
        assert_eq!(r.next_frame().unwrap(), None);
        assert_eq!(
            r.end(),
            Some(JournalEnd {
                dropped_tail_bytes: 0,
                defect: None
            })
        );
    }

    #[test]
    fn names_records_appear_only_when_the_names_change() {
        let frames = take(25);
        let (_, ends) = journal_bytes(&frames);
        let sizes: Vec<usize> = ends.windows(2).map(|w| w[1] - w[0]).collect();
        let frame_only = |i: usize| {
            let mut buffer = Vec::new();
            let start = begin_record(&mut buffer, KIND_FRAME);
            encode_frame(&mut buffer, frames[i].0, &frames[i].1);
            end_record(&mut buffer, start);
            buffer.len()
        };
        for (i, size) in sizes.iter().enumerate() {
            let with_names = matches!(i, 5 | 12 | 20);
            assert_eq!(*size > frame_only(i), with_names, "frame {i}");
        }
    }

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
    fn records_with_good_checksums_but_bad_payloads_stop_reading() {
        let (good, ends) = journal_bytes(&take(3));
        let header_end = ends[0];
        let record = |kind: u8, payload: &[u8]| {
            let mut buffer = Vec::new();
            let start = begin_record(&mut buffer, kind);
            buffer.extend_from_slice(payload);
            end_record(&mut buffer, start);
            buffer
        };
        let mut frame = Vec::new();
        encode_frame(&mut frame, 1.0, &HumanoidPose::default());
        let mut no_bones = frame.clone();
        no_bones[20..28].copy_from_slice(&(1u64 << 60).to_le_bytes());
        let mut names = vec![2u8];
        put_str(&mut names, "wink");
        put_str(&mut names, "wink");
        let cases = [
            (record(9, &[]), "unknown record kind"),
            (
                record(KIND_FRAME, &frame[..frame.len() - 1]),
                "the payload ends early",
            ),
            (
                record(KIND_FRAME, &[&frame[..], &[0]].concat()),
                "bytes left over",
            ),
            (record(KIND_FRAME, &no_bones), "bones that do not exist"),
            (record(KIND_NAMES, &names), "a custom name repeats"),
            (record(KIND_NAMES, &[17]), "more custom names than slots"),
        ];
        for (bad, expected) in cases {
            let bytes = [&good[..header_end], &bad, &good[header_end..]].concat();
            let (got, end) = read_all(&bytes);
            assert!(got.is_empty(), "{expected}");
            let defect = end.defect.unwrap();
            assert_eq!(defect.at, header_end as u64);
            assert!(
                defect.to_string().contains(expected),
                "{defect} lacks {expected}"
            );
            assert_eq!(end.dropped_tail_bytes, (bytes.len() - header_end) as u64);
        }
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

    #[test]
    fn appended_frames_reach_the_file_on_flush() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.journal");
        let mut writer = JournalWriter::create(&path, &header()).unwrap();
        let header_len = fs::metadata(&path).unwrap().len();
        let frames = take(3);
        for (t, pose, names) in &frames {
            writer.append(*t, pose, names).unwrap();
        }
        assert_eq!(fs::metadata(&path).unwrap().len(), header_len);
        writer.set_sync(true);
        writer.flush().unwrap();
        let (got, _) = read_all(&fs::read(&path).unwrap());
        assert_eq!(got.len(), 3);
        assert!(matches!(
            JournalWriter::create(&path, &header()),
            Err(JournalError::Create { source, .. }) if source.kind() == io::ErrorKind::AlreadyExists
        ));
    }

    #[test]
    fn a_flush_is_due_only_when_frames_have_waited_the_interval() {
        let dir = tempfile::tempdir().unwrap();
        let mut writer = JournalWriter::create(&dir.path().join("t.journal"), &header()).unwrap();
        let before = Instant::now();
        writer.flush().unwrap();
        let later = before + Duration::from_secs(3600);
        let interval = DEFAULT_FLUSH_INTERVAL;
        assert!(!writer.flush_due(later, interval), "nothing to flush");
        writer
            .append(0.0, &HumanoidPose::default(), &CustomNames::default())
            .unwrap();
        assert!(
            !writer.flush_due(before, interval),
            "flushed after `before`"
        );
        assert!(writer.flush_due(later, interval));
        writer.flush().unwrap();
        assert!(!writer.flush_due(later, interval));
    }

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

    #[test]
    fn a_recording_dropped_without_finish_keeps_every_frame_in_its_journal() {
        let dir = tempfile::tempdir().unwrap();
        let mut recording =
            Recording::start(dir.path(), "take", "Ai", VrmaRest::standard(0.9)).unwrap();
        for (t, pose, names) in take(13) {
            recording.push(t, &pose, &names).unwrap();
        }
        let journal = recording.journal_path().to_owned();
        drop(recording);
        assert_eq!(recover(&journal).unwrap().frames, 13);
    }

    #[test]
    fn recordings_are_numbered_never_overwritten_and_finish_removes_the_journal() {
        let dir = tempfile::tempdir().unwrap();
        let rest = VrmaRest::standard(0.9);
        fs::write(dir.path().join("take.vrma"), b"an earlier take").unwrap();
        let mut first = Recording::start(dir.path(), "take", "Ai", rest.clone()).unwrap();
        let second = Recording::start(dir.path(), "take.vrma", "Bo", rest.clone()).unwrap();
        assert_eq!(first.path(), dir.path().join("take-2.vrma"));
        assert_eq!(first.journal_path(), dir.path().join("take-2.vrma.journal"));
        assert_eq!(second.path(), dir.path().join("take-3.vrma"));

        for (t, pose, names) in take(5) {
            first.push(t, &pose, &names).unwrap();
        }
        let done = first.finish().unwrap();
        assert_eq!(done.path, dir.path().join("take-2.vrma"));
        assert_eq!((done.frames, done.refused), (5, 0));
        assert_eq!(done.span, Some((0.0, 4.0 / 60.0)));
        assert_eq!(done.leftover_journal, None);
        let read = crate::formats::vrma::load(&done.path, None).unwrap();
        assert_eq!(read.key_times().len(), 5);
        assert_eq!(read.name.as_deref(), Some("take"));

        let mut files: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        assert_eq!(files, ["take-2.vrma", "take-3.vrma.journal", "take.vrma"]);
        assert_eq!(
            fs::read(dir.path().join("take.vrma")).unwrap(),
            b"an earlier take"
        );
        assert!(matches!(
            Recording::start(dir.path(), "../take", "Ai", rest),
            Err(RecordError::Name(RecordingNameError::Separator(_)))
        ));
        drop(second);
    }

    #[test]
    fn finish_takes_the_next_free_name_when_its_own_was_taken_meanwhile() {
        let dir = tempfile::tempdir().unwrap();
        let recording = Recording::start(
            &dir.path().join("new"),
            "take",
            "Ai",
            VrmaRest::standard(0.9),
        )
        .unwrap();
        fs::write(dir.path().join("new/take.vrma"), b"someone else").unwrap();
        let done = recording.finish().unwrap();
        assert_eq!(done.path, dir.path().join("new/take-2.vrma"));
        assert_eq!(done.frames, 0);
        assert!(!dir.path().join("new/take.vrma.journal").exists());
        assert_eq!(
            fs::read(dir.path().join("new/take.vrma")).unwrap(),
            b"someone else"
        );
    }

    #[test]
    fn rest_rebuilt_from_positions_is_the_same_rest() {
        // The header stores positions; recovery must get the identical VrmaRest back.
        let rest = header().rest;
        let positions = ALL.map(|b| Some(rest.position(b)));
        let rebuilt = VrmaRest::from_positions(&positions, rest.look_at_offset);
        assert_eq!(rebuilt, rest);
        assert_eq!(rebuilt.position(HumanBone::Hips).y, 0.93);
    }
}
