//! BVH (Biovision Hierarchy) loader: a `HIERARCHY` of joints with offsets and
//! channels, then an optional `MOTION` block of sampled channel values.
//!
//! Written by hand because the `bvh_anim` crate is unmaintained (last release 2019),
//! depends on lexical 2 and smallvec 0.6, which carry RustSec advisories, and reports
//! motion errors without line numbers.
//!
//! What it reads: any number of `ROOT`s; joint names are the rest of the `ROOT` or
//! `JOINT` line (spaces allowed); 0 to 6 channels per joint in any order, channel
//! names and keywords in any case; any whitespace and line ending. Motion values are
//! a stream of numbers, so a frame may span lines; when the stream does not add up,
//! the error names the line where the first short or long frame starts.
//!
//! What it returns: a `Rig` in internal space (metres, +Y up). Joints keep file order
//! (parents first); the rest translation is `OFFSET`, the rest rotation the identity;
//! an `End Site` becomes its joint's `end` (the first one, if a joint has several).
//! A frame's local rotation is the product of the joint's rotation channels in the
//! listed order, in degrees in the file: `Zrotation Xrotation Yrotation` is Rz·Rx·Ry,
//! so a vector is turned about Y first. Position channels *replace* the matching
//! component of `OFFSET` for that frame, as pybvh and bvh-python do; joints without
//! position channels keep `OFFSET` every frame. Exception: a joint whose position
//! channels hold 0 in every frame while its `OFFSET` does not (MakeHuman writes such
//! files, tools that add channels to `OFFSET` read them) keeps its `OFFSET`, since
//! replacing would put it on its parent; this is said in `Rig::notes`.
//!
//! Units and up axis come from `LoadOptions` or are guessed from the rest pose: up is
//! Y or Z, whichever the figure is taller along, and the units follow from that
//! height (`Units::guess_from_height`). Every guess is written into `Rig::notes`.
//! `Basis` then converts the rest pose and every frame.
//!
//! It also notes a first frame less than half as tall as the rest pose (the motion
//! may have another up axis than the rest pose).
//!
//! No input makes it panic: the hierarchy is walked with an explicit stack (no
//! recursion), and counts read from the file are capped before anything is
//! allocated for them.

use std::path::{Path, PathBuf};

use glam::{Quat, Vec3};

use super::{Basis, Clip, LoadOptions, Motion, Rig, Units, UpAxis};
use crate::skeleton::{InvalidSkeleton, Joint, Skeleton, Transform};

/// Most frames a file may announce (2.3 hours at 120 fps).
pub const MAX_FRAMES: usize = 1_000_000;

/// Most samples (frames × joints) a motion may hold: 16 Mi, about 470 MB of
/// rotations and translations.
pub const MAX_SAMPLES: usize = 1 << 24;

/// Longest piece of file text quoted in an error message, in characters.
const MAX_QUOTE: usize = 40;

/// Why a BVH file cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum BvhError {
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// `expected` and `found` are written as shown: "`{`", "the end of the file".
    #[error("{path}:{line}: expected {expected}, found {found}")]
    Syntax {
        path: PathBuf,
        line: usize,
        expected: &'static str,
        found: String,
    },
    /// The file ends while `joint` (declared on `line`) is still open.
    #[error("{path}:{line}: joint `{joint}` is not closed (the file ends inside the hierarchy)")]
    Unclosed {
        path: PathBuf,
        line: usize,
        joint: String,
    },
    /// `index` counts from 1 along the `OFFSET` or along the motion line.
    #[error("{path}:{line}: value {index} (`{found}`) is not a number")]
    NotANumber {
        path: PathBuf,
        line: usize,
        index: usize,
        found: String,
    },
    #[error("{path}:{line}: value {index} is NaN or infinite")]
    NotFinite {
        path: PathBuf,
        line: usize,
        index: usize,
    },
    #[error(
        "{path}:{line}: unknown channel `{name}` (expected Xposition, Yposition, Zposition, Xrotation, Yrotation or Zrotation)"
    )]
    UnknownChannel {
        path: PathBuf,
        line: usize,
        name: String,
    },
    #[error("{path}:{line}: CHANNELS declares {declared} channels and names {listed}")]
    ChannelCount {
        path: PathBuf,
        line: usize,
        declared: usize,
        listed: usize,
    },
    #[error("{path}:{line}: frame time `{found}` is not a positive number of seconds")]
    FrameTime {
        path: PathBuf,
        line: usize,
        found: String,
    },
    #[error(
        "{path}:{line}: header says {declared} frames, more than the {max} accepted for {joints} joints"
    )]
    TooManyFrames {
        path: PathBuf,
        line: usize,
        declared: String,
        max: usize,
        joints: usize,
    },
    /// `line` is the `Frames:` line.
    #[error("{path}:{line}: header says {declared} frames, found {found}")]
    FrameCount {
        path: PathBuf,
        line: usize,
        declared: usize,
        found: usize,
    },
    /// `line` is where frame `frame` (counted from 1) starts.
    #[error(
        "{path}:{line}: frame {frame} has {values} values, the hierarchy has {channels} channels"
    )]
    FrameLength {
        path: PathBuf,
        line: usize,
        frame: usize,
        values: usize,
        channels: usize,
    },
    #[error("{path}: {source}")]
    Skeleton {
        path: PathBuf,
        #[source]
        source: InvalidSkeleton,
    },
}

/// Reads and parses a BVH file. Bytes that are not UTF-8 (Latin-1 or Shift-JIS joint
/// names) are replaced, not rejected.
pub fn load(path: &Path, options: &LoadOptions) -> Result<Rig, BvhError> {
    let bytes = std::fs::read(path).map_err(|source| BvhError::Read {
        path: path.to_owned(),
        source,
    })?;
    parse(&String::from_utf8_lossy(&bytes), path, options)
}

/// Parses the text of a BVH file; `path` only names the file in errors.
pub fn parse(text: &str, path: &Path, options: &LoadOptions) -> Result<Rig, BvhError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut parser = Parser {
        lexer: Lexer::new(text),
        path,
        joints: Vec::new(),
        open: Vec::new(),
    };
    let motion = parser.parse_file()?;
    build(path, parser.joints, motion, options)
}

// ---------------------------------------------------------------------------------
// Text

/// One whitespace-separated word and its line (from 1).
#[derive(Debug, Clone, Copy)]
struct Token<'a> {
    text: &'a str,
    line: usize,
}

/// Splits the text into words, keeping line numbers, and hands out the rest of a
/// line when the grammar needs it (joint names, channel lists, motion).
struct Lexer<'a> {
    lines: Vec<&'a str>,
    /// Index of the current line (from 0).
    line: usize,
    /// Byte offset in the current line of the first character not yet read.
    col: usize,
}

impl<'a> Lexer<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            lines: text.lines().collect(),
            line: 0,
            col: 0,
        }
    }

    fn next(&mut self) -> Option<Token<'a>> {
        loop {
            let current: &'a str = self.lines.get(self.line).copied()?;
            let rest = current.get(self.col..).unwrap_or("");
            let word = rest.trim_start();
            if word.is_empty() {
                self.line += 1;
                self.col = 0;
                continue;
            }
            let len = word.find(char::is_whitespace).unwrap_or(word.len());
            self.col += rest.len() - word.len() + len;
            return Some(Token {
                text: word.get(..len).unwrap_or(word),
                line: self.line + 1,
            });
        }
    }

    /// Where the lexer is, to come back to after looking ahead.
    fn mark(&self) -> (usize, usize) {
        (self.line, self.col)
    }

    fn reset(&mut self, (line, col): (usize, usize)) {
        self.line = line;
        self.col = col;
    }

    fn peek(&mut self) -> Option<Token<'a>> {
        let mark = self.mark();
        let token = self.next();
        self.reset(mark);
        token
    }

    /// The unread rest of the current line, trimmed; the lexer moves to the next line.
    fn rest_of_line(&mut self) -> &'a str {
        let current: &'a str = self.lines.get(self.line).copied().unwrap_or("");
        let rest = current.get(self.col..).unwrap_or("");
        self.line += 1;
        self.col = 0;
        rest.trim()
    }

    /// Like `rest_of_line`, but a trailing `{` (`ROOT Hips {`) is left to be read.
    fn name(&mut self) -> &'a str {
        let current: &'a str = self.lines.get(self.line).copied().unwrap_or("");
        let rest = current.get(self.col..).unwrap_or("");
        match rest.trim_end().strip_suffix('{') {
            Some(name) => {
                self.col += name.len();
                name.trim()
            }
            None => self.rest_of_line(),
        }
    }

    /// The line where the text ends (from 1; 1 for an empty text).
    fn last_line(&self) -> usize {
        self.lines.len().max(1)
    }

    /// The unread rest of the current line, then every following line, with numbers.
    fn into_remaining_lines(self) -> impl Iterator<Item = (usize, &'a str)> {
        let first = self
            .lines
            .get(self.line)
            .copied()
            .map(|l| (self.line + 1, l.get(self.col..).unwrap_or("")));
        let skip = self.line + 1;
        first.into_iter().chain(
            self.lines
                .into_iter()
                .enumerate()
                .skip(skip)
                .map(|(i, l)| (i + 1, l)),
        )
    }
}

/// File text as quoted in a message: at most `MAX_QUOTE` characters, no controls.
fn quote(text: &str) -> String {
    let mut quoted: String = text
        .chars()
        .take(MAX_QUOTE)
        .map(|c| if c.is_control() { '\u{fffd}' } else { c })
        .collect();
    if text.chars().nth(MAX_QUOTE).is_some() {
        quoted.push('…');
    }
    quoted
}

fn is(token: Token<'_>, keyword: &str) -> bool {
    token.text.eq_ignore_ascii_case(keyword)
}

/// `text` without `prefix`, compared ignoring ASCII case.
fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    text.get(..prefix.len())
        .filter(|head| head.eq_ignore_ascii_case(prefix))
        .and_then(|_| text.get(prefix.len()..))
}

// ---------------------------------------------------------------------------------
// Grammar

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Axis {
    X,
    Y,
    Z,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Channel {
    Position(Axis),
    Rotation(Axis),
}

impl Channel {
    fn parse(name: &str) -> Option<Channel> {
        let table = [
            ("Xposition", Channel::Position(Axis::X)),
            ("Yposition", Channel::Position(Axis::Y)),
            ("Zposition", Channel::Position(Axis::Z)),
            ("Xrotation", Channel::Rotation(Axis::X)),
            ("Yrotation", Channel::Rotation(Axis::Y)),
            ("Zrotation", Channel::Rotation(Axis::Z)),
        ];
        table
            .into_iter()
            .find(|(spelling, _)| name.eq_ignore_ascii_case(spelling))
            .map(|(_, channel)| channel)
    }
}

/// A joint as the file declares it, in file units and axes.
#[derive(Debug, Clone)]
struct JointDef {
    name: String,
    /// Line of the `ROOT`/`JOINT` keyword.
    line: usize,
    parent: Option<usize>,
    offset: Vec3,
    end: Option<Vec3>,
    channels: Vec<Channel>,
}

/// The `MOTION` block, checked but not yet turned into transforms.
#[derive(Debug)]
struct RawMotion {
    frame_time: f32,
    frames: usize,
    /// `frames × channels` values, frame-major, in file units and degrees.
    values: Vec<f32>,
    notes: Vec<String>,
}

struct Parser<'a> {
    lexer: Lexer<'a>,
    path: &'a Path,
    joints: Vec<JointDef>,
    /// Joints whose `{` is not closed yet, outermost first.
    open: Vec<usize>,
}

impl<'a> Parser<'a> {
    fn syntax(&self, line: usize, expected: &'static str, found: &str) -> BvhError {
        BvhError::Syntax {
            path: self.path.to_owned(),
            line,
            expected,
            found: format!("`{}`", quote(found)),
        }
    }

    /// The error for a file that ends where `expected` should come.
    fn end_of_file(&self, expected: &'static str) -> BvhError {
        match self.open.last().and_then(|&j| self.joints.get(j)) {
            Some(joint) => BvhError::Unclosed {
                path: self.path.to_owned(),
                line: joint.line,
                joint: quote(&joint.name),
            },
            None => BvhError::Syntax {
                path: self.path.to_owned(),
                line: self.lexer.last_line(),
                expected,
                found: "the end of the file".into(),
            },
        }
    }

    fn next_or(&mut self, expected: &'static str) -> Result<Token<'a>, BvhError> {
        match self.lexer.next() {
            Some(token) => Ok(token),
            None => Err(self.end_of_file(expected)),
        }
    }

    /// Reads one word that must be `word` (`shown` is how the message spells it).
    fn expect(&mut self, word: &str, shown: &'static str) -> Result<(), BvhError> {
        let token = self.lexer.next().ok_or_else(|| self.end_of_file(shown))?;
        if is(token, word) {
            Ok(())
        } else {
            Err(self.syntax(token.line, shown, token.text))
        }
    }

    /// The whole file; returns the motion block if there is one.
    fn parse_file(&mut self) -> Result<Option<RawMotion>, BvhError> {
        self.expect("HIERARCHY", "`HIERARCHY`")?;
        loop {
            let Some(token) = self.lexer.next() else {
                if self.joints.is_empty() {
                    return Err(self.end_of_file("`ROOT`"));
                }
                return Ok(None);
            };
            if is(token, "ROOT") {
                self.parse_root(token.line)?;
            } else if is(token, "MOTION") && !self.joints.is_empty() {
                return self.parse_motion().map(Some);
            } else {
                let expected = if self.joints.is_empty() {
                    "`ROOT`"
                } else {
                    "`ROOT` or `MOTION`"
                };
                return Err(self.syntax(token.line, expected, token.text));
            }
        }
    }

    /// One `ROOT` and everything under it, after the `ROOT` keyword.
    fn parse_root(&mut self, line: usize) -> Result<(), BvhError> {
        self.open_joint(None, line)?;
        while let Some(&current) = self.open.last() {
            let token = self.next_or("`}`")?;
            if is(token, "JOINT") {
                self.open_joint(Some(current), token.line)?;
            } else if is(token, "End") {
                self.end_site(current, token.line)?;
            } else if token.text == "}" {
                self.open.pop();
            } else {
                return Err(self.syntax(token.line, "`JOINT`, `End Site` or `}`", token.text));
            }
        }
        Ok(())
    }

    /// A joint's name, `{`, `OFFSET` and `CHANNELS`, after `ROOT`/`JOINT`; leaves
    /// the joint open for its children.
    fn open_joint(&mut self, parent: Option<usize>, line: usize) -> Result<(), BvhError> {
        let name = self.lexer.name();
        if name.is_empty() {
            return Err(BvhError::Syntax {
                path: self.path.to_owned(),
                line,
                expected: "a joint name",
                found: "the end of the line".into(),
            });
        }
        let index = self.joints.len();
        self.joints.push(JointDef {
            name: name.to_owned(),
            line,
            parent,
            offset: Vec3::ZERO,
            end: None,
            channels: Vec::new(),
        });
        self.open.push(index);
        self.expect("{", "`{`")?;

        // `OFFSET` and `CHANNELS`, once each, in either order, before any child.
        let mut offset = None;
        let mut channels = None;
        loop {
            let mark = self.lexer.mark();
            match self.lexer.next() {
                Some(t) if is(t, "OFFSET") && offset.is_none() => offset = Some(self.vec3()?),
                Some(t) if is(t, "CHANNELS") && channels.is_none() => {
                    channels = Some(self.channels(t.line)?);
                }
                _ => {
                    self.lexer.reset(mark);
                    break;
                }
            }
        }
        let Some(offset) = offset else {
            return Err(match self.lexer.peek() {
                Some(token) => self.syntax(token.line, "`OFFSET`", token.text),
                None => self.end_of_file("`OFFSET`"),
            });
        };
        if let Some(joint) = self.joints.get_mut(index) {
            joint.offset = offset;
            joint.channels = channels.unwrap_or_default();
        }
        Ok(())
    }

    /// `End Site { OFFSET x y z }`, after `End`.
    fn end_site(&mut self, joint: usize, line: usize) -> Result<(), BvhError> {
        let site = self.lexer.name();
        if !site.eq_ignore_ascii_case("Site") {
            let found = format!("End {site}");
            return Err(self.syntax(line, "`End Site`", found.trim_end()));
        }
        self.expect("{", "`{`")?;
        self.expect("OFFSET", "`OFFSET`")?;
        let end = self.vec3()?;
        self.expect("}", "`}`")?;
        if let Some(joint) = self.joints.get_mut(joint) {
            joint.end = joint.end.or(Some(end));
        }
        Ok(())
    }

    /// Three finite numbers, after `OFFSET`.
    fn vec3(&mut self) -> Result<Vec3, BvhError> {
        let mut v = [0.0; 3];
        for (i, slot) in v.iter_mut().enumerate() {
            let token = self.next_or("a number")?;
            *slot = number(self.path, token.text, token.line, i + 1)?;
        }
        Ok(Vec3::from_array(v))
    }

    /// `n name...` after `CHANNELS`, all on the `CHANNELS` line.
    fn channels(&mut self, line: usize) -> Result<Vec<Channel>, BvhError> {
        let token = self.next_or("a channel count")?;
        let Ok(declared) = token.text.parse::<usize>() else {
            return Err(self.syntax(token.line, "a channel count", token.text));
        };
        let names = self.lexer.rest_of_line();
        let listed = names.split_whitespace().count();
        if listed != declared {
            return Err(BvhError::ChannelCount {
                path: self.path.to_owned(),
                line,
                declared,
                listed,
            });
        }
        names
            .split_whitespace()
            .map(|name| {
                Channel::parse(name).ok_or_else(|| BvhError::UnknownChannel {
                    path: self.path.to_owned(),
                    line: token.line,
                    name: quote(name),
                })
            })
            .collect()
    }

    /// `Frames: n`, `Frame Time: t` and the values, after `MOTION`.
    fn parse_motion(&mut self) -> Result<RawMotion, BvhError> {
        let joint_count = self.joints.len();
        let channels: usize = self.joints.iter().map(|j| j.channels.len()).sum();

        let token = self.next_or("`Frames:`")?;
        let frames_line = token.line;
        let count = self.header_value(token, "Frames", "`Frames:`")?;
        let max = MAX_FRAMES.min(MAX_SAMPLES / joint_count.max(1));
        let too_many = || BvhError::TooManyFrames {
            path: self.path.to_owned(),
            line: count.line,
            declared: quote(count.text),
            max,
            joints: joint_count,
        };
        if count.text.is_empty() || !count.text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(self.syntax(count.line, "a frame count", count.text));
        }
        let declared = match count.text.parse::<usize>() {
            Ok(n) if n <= max => n,
            _ => return Err(too_many()),
        };

        let token = self.next_or("`Frame Time:`")?;
        if !is(token, "Frame") {
            return Err(self.syntax(token.line, "`Frame Time:`", token.text));
        }
        let token = self.next_or("`Frame Time:`")?;
        let time = self.header_value(token, "Time", "`Frame Time:`")?;
        let frame_time = time.text.parse::<f32>().ok();
        let frame_time = match frame_time {
            Some(t) if t.is_finite() && t > 0.0 => t,
            // A file without frames has no use for its frame time.
            _ if declared == 0 => 1.0,
            _ => {
                return Err(BvhError::FrameTime {
                    path: self.path.to_owned(),
                    line: time.line,
                    found: quote(time.text),
                });
            }
        };

        // Every value after the header, checked, with how many each line holds.
        let lexer = std::mem::replace(&mut self.lexer, Lexer::new(""));
        let mut values = Vec::new();
        let mut lines = Vec::new();
        for (line, text) in lexer.into_remaining_lines() {
            let before = values.len();
            for (i, word) in text.split_whitespace().enumerate() {
                values.push(number(self.path, word, line, i + 1)?);
            }
            if values.len() > before {
                lines.push((line, values.len() - before));
            }
        }

        let needed = declared.saturating_mul(channels);
        let mut notes = Vec::new();
        match frame_by_lines(&lines, channels, declared) {
            Layout::Lines { frames, .. } if frames < declared => {
                return Err(BvhError::FrameCount {
                    path: self.path.to_owned(),
                    line: frames_line,
                    declared,
                    found: frames,
                });
            }
            Layout::Lines {
                extra: Some((line, extra)),
                ..
            } => notes.push(format!(
                "ignored {extra} values after the last of the {declared} frames (from line {line})"
            )),
            Layout::Lines { extra: None, .. } => {}
            // Frames that do not follow line breaks are fine if the numbers add up.
            Layout::Broken { .. } if values.len() == needed && channels > 0 => {}
            Layout::Broken {
                frame,
                line,
                values,
            } => {
                return Err(BvhError::FrameLength {
                    path: self.path.to_owned(),
                    line,
                    frame,
                    values,
                    channels,
                });
            }
        }
        values.truncate(needed);
        Ok(RawMotion {
            frame_time,
            frames: declared,
            values,
            notes,
        })
    }

    /// The value of a `Name: value` header line, given its first word (which may
    /// hold the colon and the value too: `Frames:`, `Frames:12`, `Frames` `:`).
    fn header_value(
        &mut self,
        first: Token<'a>,
        name: &str,
        shown: &'static str,
    ) -> Result<Token<'a>, BvhError> {
        let Some(rest) = strip_prefix_ignore_case(first.text, name) else {
            return Err(self.syntax(first.line, shown, first.text));
        };
        let colon = match rest {
            "" => self.lexer.next().unwrap_or(Token {
                text: "",
                line: first.line,
            }),
            rest => Token {
                text: rest,
                line: first.line,
            },
        };
        let Some(after) = colon.text.strip_prefix(':') else {
            return Err(self.syntax(first.line, shown, first.text));
        };
        if after.is_empty() {
            self.next_or("a value")
        } else {
            Ok(Token {
                text: after,
                line: colon.line,
            })
        }
    }
}

/// A finite number read from the file; `index` counts from 1 along the line or
/// `OFFSET`, for the message.
fn number(path: &Path, text: &str, line: usize, index: usize) -> Result<f32, BvhError> {
    let value = text.parse::<f32>().map_err(|_| BvhError::NotANumber {
        path: path.to_owned(),
        line,
        index,
        found: quote(text),
    })?;
    if value.is_finite() {
        Ok(value)
    } else {
        Err(BvhError::NotFinite {
            path: path.to_owned(),
            line,
            index,
        })
    }
}

/// How the motion lines split into frames.
#[derive(Debug, PartialEq)]
enum Layout {
    /// Every frame is one or more whole lines: `frames` complete frames (at most the
    /// declared count), then `extra` values (from a line) nobody asked for.
    Lines {
        frames: usize,
        extra: Option<(usize, usize)>,
    },
    /// Frame `frame` (from 1), starting on `line`, holds `values` values before the
    /// line where it should end, or runs past the end of the data.
    Broken {
        frame: usize,
        line: usize,
        values: usize,
    },
}

/// Splits `lines` (line number, values on it) into frames of `channels` values that
/// end at line breaks, as almost every file writes them.
fn frame_by_lines(lines: &[(usize, usize)], channels: usize, declared: usize) -> Layout {
    let mut rest = lines.iter().copied().peekable();
    let mut frames = 0;
    while frames < declared && channels > 0 {
        let Some(&(start, _)) = rest.peek() else {
            break;
        };
        let mut sum = 0;
        while sum < channels {
            let Some(&(_, count)) = rest.peek() else {
                return Layout::Broken {
                    frame: frames + 1,
                    line: start,
                    values: sum,
                };
            };
            if sum + count > channels {
                return Layout::Broken {
                    frame: frames + 1,
                    line: start,
                    values: if sum == 0 { count } else { sum },
                };
            }
            sum += count;
            rest.next();
        }
        frames += 1;
    }
    if channels == 0 {
        frames = declared;
    }
    let first_extra = rest.peek().map(|&(line, _)| line);
    let extra = first_extra.map(|line| (line, rest.map(|(_, n)| n).sum()));
    match extra {
        // Values in a file whose joints have no channels at all belong to no frame.
        Some((line, count)) if channels == 0 && declared > 0 => Layout::Broken {
            frame: 1,
            line,
            values: count,
        },
        extra => Layout::Lines { frames, extra },
    }
}

// ---------------------------------------------------------------------------------
// Conversion

/// The rig in internal space: guesses the up axis and units if not given, converts
/// the rest pose and every frame, checks the skeleton.
fn build(
    path: &Path,
    defs: Vec<JointDef>,
    motion: Option<RawMotion>,
    options: &LoadOptions,
) -> Result<Rig, BvhError> {
    let mut notes = Vec::new();
    let extent = rest_extent(&defs);
    let up = match options.up {
        Some(up) => up,
        None if extent.z > extent.y => {
            notes.push(format!(
                "up axis: +Z (guessed: the rest pose is {:.2} units tall along Z, {:.2} along Y)",
                extent.z, extent.y
            ));
            UpAxis::Z
        }
        None => UpAxis::Y,
    };
    let height = match up {
        UpAxis::Y => extent.y,
        UpAxis::Z => extent.z,
    };
    let units = match options.units {
        Some(units) => units,
        None => {
            let (units, note) = Units::guess_from_height(height);
            notes.extend(note);
            notes.push(format!("units: {}", describe_guess(units, height)));
            units
        }
    };
    let basis = Basis::new(units, up);

    let mut joints: Vec<Joint> = defs
        .iter()
        .map(|def| Joint {
            name: def.name.clone(),
            parent: def.parent,
            rest: Transform::from_translation(def.offset),
            end: def.end,
        })
        .collect();
    basis.apply_to_joints(&mut joints);
    let skeleton = Skeleton::new(joints).map_err(|source| BvhError::Skeleton {
        path: path.to_owned(),
        source,
    })?;

    let motion = match motion {
        Some(raw) if raw.frames > 0 => {
            notes.extend(raw.notes.iter().cloned());
            let keep_offset = zero_position_joints(&defs, &raw, height);
            let motion = to_motion(&defs, &raw, &basis, &keep_offset);
            notes.extend(zero_positions_note(&defs, &keep_offset));
            notes.extend(short_first_frame_note(&skeleton, &motion, up));
            Some(motion)
        }
        Some(raw) => {
            notes.extend(raw.notes);
            None
        }
        None => None,
    };
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(Rig {
        skeleton,
        bone_map: None,
        map_source: None,
        clips: motion
            .map(|motion| Clip { name, motion })
            .into_iter()
            .collect(),
        notes,
    })
}

/// Per joint: whether its position channels hold 0 in every frame while its
/// `OFFSET` does not. Such joints keep `OFFSET` (see the module header).
fn zero_position_joints(defs: &[JointDef], raw: &RawMotion, height: f32) -> Vec<bool> {
    let channels: usize = defs.iter().map(|d| d.channels.len()).sum();
    let small = 1e-4 * height.abs().min(f32::MAX);
    let mut keep = Vec::with_capacity(defs.len());
    let mut start = 0;
    for def in defs {
        let positions = || {
            def.channels
                .iter()
                .enumerate()
                .filter_map(|(i, c)| match c {
                    Channel::Position(axis) => Some((i, *axis)),
                    Channel::Rotation(_) => None,
                })
        };
        let offset_moved = positions().any(|(_, axis)| {
            let component = match axis {
                Axis::X => def.offset.x,
                Axis::Y => def.offset.y,
                Axis::Z => def.offset.z,
            };
            component.abs() > small
        });
        let always_zero = offset_moved
            && (0..raw.frames).all(|frame| {
                let first = frame.saturating_mul(channels).saturating_add(start);
                positions().all(|(i, _)| {
                    let value = raw.values.get(first.saturating_add(i)).copied();
                    value.unwrap_or(0.0).abs() <= small
                })
            });
        keep.push(always_zero);
        start += def.channels.len();
    }
    keep
}

/// Says which joints keep their `OFFSET` because their position channels are all 0.
fn zero_positions_note(defs: &[JointDef], keep_offset: &[bool]) -> Option<String> {
    let suspects: Vec<&str> = defs
        .iter()
        .zip(keep_offset)
        .filter(|(_, keep)| **keep)
        .map(|(d, _)| d.name.as_str())
        .collect();
    let first = suspects.first()?;
    let joints = match suspects.len() {
        1 => format!("joint `{}` has", quote(first)),
        n => format!("{n} joints (`{}`, ...) have", quote(first)),
    };
    Some(format!(
        "{joints} position channels that are 0 in every frame while OFFSET is not; \
         read as added to OFFSET, so they keep their OFFSET"
    ))
}

/// Says so when the first frame stands less than half as tall as the rest pose:
/// the motion may lie down, or be recorded with another up axis than the rest pose.
fn short_first_frame_note(skeleton: &Skeleton, motion: &Motion, up: UpAxis) -> Option<String> {
    let rest = vertical_extent(
        skeleton,
        &skeleton.rest_rotations(),
        &skeleton.rest_translations(),
    );
    let frame = motion.frames().next()?;
    let first = vertical_extent(skeleton, frame.rotations, frame.translations);
    let other = match up {
        UpAxis::Y => "Z",
        UpAxis::Z => "Y",
    };
    (first < 0.5 * rest).then(|| {
        format!(
            "the first frame is {first:.2} m tall, the rest pose {rest:.2} m: the motion may lie down \
             or have +{other} up (set the up axis to override)"
        )
    })
}

/// Height (extent along +Y, metres) of every joint and end site in a pose.
fn vertical_extent(skeleton: &Skeleton, rotations: &[Quat], translations: &[Vec3]) -> f32 {
    if rotations.len() != skeleton.len() || translations.len() != skeleton.len() {
        return 0.0;
    }
    let world = skeleton.world_transforms(rotations, translations);
    let mut min = f32::INFINITY;
    let mut max = f32::NEG_INFINITY;
    for (joint, w) in skeleton.joints().iter().zip(&world) {
        let ends = joint.end.map(|e| w.transform_point3(e).y);
        for y in std::iter::once(w.translation.y).chain(ends) {
            min = min.min(y);
            max = max.max(y);
        }
    }
    (max - min).max(0.0)
}

/// Size of the rest pose's bounding box (joints and end sites), in file units.
fn rest_extent(defs: &[JointDef]) -> Vec3 {
    let mut world: Vec<Vec3> = Vec::with_capacity(defs.len());
    let mut min = Vec3::INFINITY;
    let mut max = Vec3::NEG_INFINITY;
    for def in defs {
        let parent = def.parent.and_then(|p| world.get(p).copied());
        let position = parent.unwrap_or(Vec3::ZERO) + def.offset;
        for point in std::iter::once(position).chain(def.end.map(|e| position + e)) {
            min = min.min(point);
            max = max.max(point);
        }
        world.push(position);
    }
    if defs.is_empty() {
        Vec3::ZERO
    } else {
        max - min
    }
}

/// "centimetres (guessed from a 172 cm figure)".
fn describe_guess(units: Units, height: f32) -> String {
    match units {
        Units::Metres => format!("metres (guessed from a {height:.2} m figure)"),
        Units::Centimetres => format!("centimetres (guessed from a {height:.0} cm figure)"),
        Units::Millimetres => format!("millimetres (guessed from a {height:.0} mm figure)"),
        Units::Inches => format!("inches (guessed from a {height:.1} in figure)"),
        Units::Scale(s) => format!("{s:.4} m per unit (guessed from a {height:.2}-unit figure)"),
    }
}

/// Local rotation and translation of every joint in every frame, in internal space.
fn to_motion(defs: &[JointDef], raw: &RawMotion, basis: &Basis, keep_offset: &[bool]) -> Motion {
    let channels: usize = defs.iter().map(|d| d.channels.len()).sum();
    let samples = raw.frames.saturating_mul(defs.len());
    let mut rotations = Vec::with_capacity(samples);
    let mut translations = Vec::with_capacity(samples);
    for frame in 0..raw.frames {
        let start = frame.saturating_mul(channels);
        let frame_values = raw
            .values
            .get(start..start.saturating_add(channels))
            .unwrap_or(&[]);
        let mut values = frame_values.iter().copied();
        for (def, keep) in defs.iter().zip(keep_offset) {
            let mut rotation = Quat::IDENTITY;
            let mut translation = def.offset;
            for channel in &def.channels {
                let value = values.next().unwrap_or(0.0);
                match *channel {
                    Channel::Position(_) if *keep => {}
                    Channel::Position(Axis::X) => translation.x = value,
                    Channel::Position(Axis::Y) => translation.y = value,
                    Channel::Position(Axis::Z) => translation.z = value,
                    Channel::Rotation(Axis::X) => {
                        rotation *= Quat::from_rotation_x(value.to_radians());
                    }
                    Channel::Rotation(Axis::Y) => {
                        rotation *= Quat::from_rotation_y(value.to_radians());
                    }
                    Channel::Rotation(Axis::Z) => {
                        rotation *= Quat::from_rotation_z(value.to_radians());
                    }
                }
            }
            rotations.push(basis.rotation(rotation.normalize()));
            translations.push(basis.position(translation));
        }
    }
    Motion::uniform(raw.frame_time, defs.len(), rotations, translations)
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::EulerRot;

    /// Reads files as they are: metres, +Y up, no guessing.
    const AS_IS: LoadOptions = LoadOptions {
        units: Some(Units::Metres),
        up: Some(UpAxis::Y),
    };

    fn rig(text: &str) -> Rig {
        match parse(text, Path::new("test.bvh"), &AS_IS) {
            Ok(rig) => rig,
            Err(err) => panic!("{err}"),
        }
    }

    fn guessed(text: &str) -> Rig {
        match parse(text, Path::new("test.bvh"), &LoadOptions::default()) {
            Ok(rig) => rig,
            Err(err) => panic!("{err}"),
        }
    }

    fn error(text: &str) -> String {
        match parse(text, Path::new("bad.bvh"), &AS_IS) {
            Ok(_) => panic!("parsed:\n{text}"),
            Err(err) => err.to_string(),
        }
    }

    fn motion(rig: &Rig) -> &Motion {
        &rig.clips.first().expect("the file has motion").motion
    }

    fn same_rotation(a: Quat, b: Quat) -> bool {
        a.abs_diff_eq(b, 1e-5) || a.abs_diff_eq(-b, 1e-5)
    }

    /// One joint with the given channels (offset 1 2 3) and one frame of values.
    fn one_joint(channels: &str, frame: &str) -> String {
        let n = channels.split_whitespace().count();
        format!(
            "HIERARCHY\nROOT Hips\n{{\n  OFFSET 1 2 3\n  CHANNELS {n} {channels}\n  End Site\n  {{\n    OFFSET 0 1 0\n  }}\n}}\nMOTION\nFrames: 1\nFrame Time: 0.0333333\n{frame}\n"
        )
    }

    /// A valid file; the bad-input tests replace one of its (numbered) lines.
    const GOOD: &str = "\
HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Spine
  {
    OFFSET 0 10 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 10 0
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.0333333
0 90 0 0 0 0 0 0 0
1 90 0 0 0 0 0 0 0
";

    /// `GOOD` with line `line` (from 1) replaced by `text`.
    fn good_with(line: usize, text: &str) -> String {
        GOOD.lines()
            .enumerate()
            .map(|(i, l)| if i + 1 == line { text } else { l })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The first `lines` lines of `GOOD`.
    fn good_until(lines: usize) -> String {
        GOOD.lines().take(lines).collect::<Vec<_>>().join("\n")
    }

    // --- Bad input: each error names the file and the line --------------------------

    #[test]
    fn parse_rejects_a_garbled_keyword() {
        let msg = error(&good_with(6, "  JIONT Spine"));
        assert!(msg.starts_with("bad.bvh:6: expected `JOINT`"), "{msg}");
        assert!(msg.contains("found `JIONT`"), "{msg}");
        let msg = error(&good_with(1, "HIERACHY"));
        assert!(msg.starts_with("bad.bvh:1: expected `HIERARCHY`"), "{msg}");
        let msg = error(&good_with(16, "MOTOIN"));
        assert!(
            msg.starts_with("bad.bvh:16: expected `ROOT` or `MOTION`"),
            "{msg}"
        );
        let msg = error(&good_with(10, "    End Sight"));
        assert!(msg.starts_with("bad.bvh:10: expected `End Site`"), "{msg}");
    }

    #[test]
    fn parse_rejects_a_missing_brace() {
        let msg = error(&good_with(7, ""));
        assert!(
            msg.starts_with("bad.bvh:8: expected `{`, found `OFFSET`"),
            "{msg}"
        );
    }

    #[test]
    fn parse_rejects_a_file_ending_inside_the_hierarchy() {
        for lines in [7, 9, 12, 14] {
            let msg = error(&good_until(lines));
            let innermost = if lines < 14 {
                "6: joint `Spine`"
            } else {
                "2: joint `Hips`"
            };
            assert!(
                msg.starts_with(&format!("bad.bvh:{innermost} is not closed")),
                "{msg}"
            );
        }
        let msg = error("HIERARCHY\n");
        assert_eq!(msg, "bad.bvh:1: expected `ROOT`, found the end of the file");
        let msg = error(&good_until(16));
        assert_eq!(
            msg,
            "bad.bvh:16: expected `Frames:`, found the end of the file"
        );
    }

    #[test]
    fn parse_rejects_a_non_numeric_offset() {
        let msg = error(&good_with(8, "    OFFSET 0 ten 0"));
        assert_eq!(msg, "bad.bvh:8: value 2 (`ten`) is not a number");
        let msg = error(&good_with(8, "    OFFSET 0 10"));
        assert_eq!(msg, "bad.bvh:9: value 3 (`CHANNELS`) is not a number");
    }

    #[test]
    fn parse_rejects_a_nan_or_infinite_offset() {
        for bad in ["NaN", "inf", "-infinity", "1e39"] {
            let msg = error(&good_with(12, &format!("      OFFSET 0 {bad} 0")));
            assert_eq!(msg, "bad.bvh:12: value 2 is NaN or infinite");
        }
    }

    #[test]
    fn parse_rejects_a_missing_offset() {
        let msg = error(&good_with(8, ""));
        assert_eq!(msg, "bad.bvh:10: expected `OFFSET`, found `End`");
    }

    #[test]
    fn parse_rejects_too_few_or_too_many_values_in_a_frame() {
        let msg = error(&good_with(19, "0 90 0 0 0 0 0 0"));
        assert_eq!(
            msg,
            "bad.bvh:19: frame 1 has 8 values, the hierarchy has 9 channels"
        );
        let msg = error(&good_with(20, "1 90 0 0 0 0 0 0 0 0"));
        assert_eq!(
            msg,
            "bad.bvh:20: frame 2 has 10 values, the hierarchy has 9 channels"
        );
        let msg = error(&good_with(20, "1 90 0 0"));
        assert_eq!(
            msg,
            "bad.bvh:20: frame 2 has 4 values, the hierarchy has 9 channels"
        );
    }

    #[test]
    fn parse_rejects_a_header_frame_count_larger_than_the_data() {
        let msg = error(&good_with(17, "Frames: 5"));
        assert_eq!(msg, "bad.bvh:17: header says 5 frames, found 2");
    }

    #[test]
    fn parse_rejects_a_huge_frame_count_without_allocating() {
        for huge in ["1000000000000", "99999999999999999999999999999"] {
            let msg = error(&good_with(17, &format!("Frames: {huge}")));
            assert!(msg.starts_with(&format!("bad.bvh:17: header says {huge} frames, more than")));
        }
        // Joints without channels cost no text per frame, but memory all the same.
        let mut text = String::from("HIERARCHY\n");
        for i in 0..20 {
            text += &format!("ROOT J{i}\n{{\nOFFSET 0 0 0\n}}\n");
        }
        text += "MOTION\nFrames: 1000000\nFrame Time: 0.01\n";
        let msg = error(&text);
        assert!(
            msg.starts_with("bad.bvh:83: header says 1000000 frames, more than"),
            "{msg}"
        );
    }

    #[test]
    fn parse_rejects_a_bad_frame_count() {
        let msg = error(&good_with(17, "Frames: -2"));
        assert_eq!(msg, "bad.bvh:17: expected a frame count, found `-2`");
        let msg = error(&good_with(17, "Frame: 2"));
        assert_eq!(msg, "bad.bvh:17: expected `Frames:`, found `Frame:`");
    }

    #[test]
    fn parse_rejects_a_bad_frame_time() {
        for bad in ["0", "-0.1", "abc", "inf", "NaN"] {
            let msg = error(&good_with(18, &format!("Frame Time: {bad}")));
            let expected =
                format!("bad.bvh:18: frame time `{bad}` is not a positive number of seconds");
            assert_eq!(msg, expected);
        }
        let msg = error(&good_with(18, "Frame Tim: 0.1"));
        assert_eq!(msg, "bad.bvh:18: expected `Frame Time:`, found `Tim:`");
    }

    #[test]
    fn parse_rejects_an_unknown_channel_name() {
        let msg = error(&good_with(9, "CHANNELS 3 Zrotation Xrotation Wrotation"));
        assert!(
            msg.starts_with("bad.bvh:9: unknown channel `Wrotation`"),
            "{msg}"
        );
    }

    #[test]
    fn parse_rejects_a_channels_count_not_matching_the_names() {
        let msg = error(&good_with(9, "CHANNELS 3 Zrotation Xrotation"));
        assert_eq!(msg, "bad.bvh:9: CHANNELS declares 3 channels and names 2");
        let msg = error(&good_with(9, "CHANNELS 2 Zrotation Xrotation Yrotation"));
        assert_eq!(msg, "bad.bvh:9: CHANNELS declares 2 channels and names 3");
        let msg = error(&good_with(
            9,
            "CHANNELS three Zrotation Xrotation Yrotation",
        ));
        assert_eq!(msg, "bad.bvh:9: expected a channel count, found `three`");
    }

    #[test]
    fn parse_rejects_an_empty_file() {
        let msg = error("");
        assert_eq!(
            msg,
            "bad.bvh:1: expected `HIERARCHY`, found the end of the file"
        );
        let msg = error("\n  \r\n\t\n");
        assert_eq!(
            msg,
            "bad.bvh:3: expected `HIERARCHY`, found the end of the file"
        );
    }

    #[test]
    fn parse_rejects_bad_motion_values() {
        let msg = error(&good_with(20, "1 90 x 0 0 0 0 0 0"));
        assert_eq!(msg, "bad.bvh:20: value 3 (`x`) is not a number");
        let msg = error(&good_with(19, "0 90 0 0 0 0 0 NaN 0"));
        assert_eq!(msg, "bad.bvh:19: value 8 is NaN or infinite");
    }

    #[test]
    fn parse_rejects_duplicate_joint_names() {
        let msg = error(&good_with(6, "  JOINT Hips"));
        assert_eq!(msg, "bad.bvh: joint name `Hips` is used twice");
    }

    #[test]
    fn load_names_a_missing_file() {
        let err = load(Path::new("no/such/file.bvh"), &AS_IS).unwrap_err();
        assert_eq!(err.to_string(), "cannot read no/such/file.bvh");
        assert!(std::error::Error::source(&err).is_some());
    }

    #[test]
    fn parse_never_panics_on_a_cut_or_mangled_file() {
        let cuts = GOOD.char_indices().map(|(i, _)| &GOOD[..i]);
        for text in cuts {
            let _ = parse(text, Path::new("cut.bvh"), &LoadOptions::default());
        }
        for line in 1..=20 {
            for junk in [
                "",
                "}",
                "{",
                "ROOT",
                "JOINT",
                "End Site",
                "1e38 1e38 1e38",
                "Frames: 0",
            ] {
                let _ = parse(
                    &good_with(line, junk),
                    Path::new("x.bvh"),
                    &LoadOptions::default(),
                );
            }
        }
    }

    #[test]
    fn a_deep_hierarchy_is_an_error_not_a_stack_overflow() {
        let depth = 10_000;
        let mut text = String::from("HIERARCHY\n");
        for i in 0..depth {
            let keyword = if i == 0 { "ROOT" } else { "JOINT" };
            text += &format!("{keyword} J{i}\n{{\nOFFSET 0 1 0\n");
        }
        text += &"}\n".repeat(depth);
        let msg = error(&text);
        assert_eq!(
            msg,
            "bad.bvh: the skeleton has 10000 joints, more than the 4096 supported"
        );
    }

    // --- Channels --------------------------------------------------------------------

    #[test]
    fn rotation_channels_multiply_in_the_listed_order() {
        let (a, b, c) = (10.0f32, 20.0f32, 30.0f32);
        let cases = [
            ("Zrotation Xrotation Yrotation", EulerRot::ZXY),
            ("Zrotation Yrotation Xrotation", EulerRot::ZYX),
            ("Xrotation Yrotation Zrotation", EulerRot::XYZ),
            ("Yrotation Xrotation Zrotation", EulerRot::YXZ),
            ("Xrotation Zrotation Yrotation", EulerRot::XZY),
            ("Yrotation Zrotation Xrotation", EulerRot::YZX),
            ("zROTATION xrotation YROTATION", EulerRot::ZXY),
        ];
        for (channels, order) in cases {
            let rig = rig(&one_joint(channels, &format!("{a} {b} {c}")));
            let got = motion(&rig).frame(0).rotations[0];
            let want = Quat::from_euler(order, a.to_radians(), b.to_radians(), c.to_radians());
            assert!(same_rotation(got, want), "{channels}: {got} != {want}");
        }
    }

    #[test]
    fn zxy_turns_a_vector_about_y_first() {
        let rig = rig(&one_joint("Zrotation Xrotation Yrotation", "90 90 90"));
        let q = motion(&rig).frame(0).rotations[0];
        let angle = 90f32.to_radians();
        let rz = Quat::from_rotation_z(angle);
        let rx = Quat::from_rotation_x(angle);
        let ry = Quat::from_rotation_y(angle);
        let v = Vec3::new(1.0, 2.0, 3.0);
        assert!((q * v).abs_diff_eq(rz * (rx * (ry * v)), 1e-5));
    }

    #[test]
    fn fewer_than_three_rotation_channels_are_fine() {
        let cases = [
            ("Yrotation", "90", Quat::from_rotation_y(90f32.to_radians())),
            (
                "Xrotation Zrotation",
                "30 60",
                Quat::from_rotation_x(30f32.to_radians())
                    * Quat::from_rotation_z(60f32.to_radians()),
            ),
            ("", "", Quat::IDENTITY),
        ];
        for (channels, values, want) in cases {
            let rig = rig(&one_joint(channels, values));
            let got = motion(&rig).frame(0).rotations[0];
            assert!(same_rotation(got, want), "{channels}: {got} != {want}");
        }
    }

    #[test]
    fn position_channels_replace_the_offset_components() {
        let cases = [
            (
                "Xposition Yposition Zposition",
                "7 8 9",
                Vec3::new(7.0, 8.0, 9.0),
            ),
            ("Yposition", "8", Vec3::new(1.0, 8.0, 3.0)),
            ("Zposition Xposition", "9 7", Vec3::new(7.0, 2.0, 9.0)),
            (
                "Xrotation Yrotation Zrotation",
                "0 0 0",
                Vec3::new(1.0, 2.0, 3.0),
            ),
        ];
        for (channels, values, want) in cases {
            let rig = rig(&one_joint(channels, values));
            let got = motion(&rig).frame(0).translations[0];
            assert!(got.abs_diff_eq(want, 1e-6), "{channels}: {got} != {want}");
        }
    }

    #[test]
    fn six_channel_roots_read_position_then_rotation_in_any_order() {
        let (a, b, c) = (10f32.to_radians(), 20f32.to_radians(), 30f32.to_radians());
        let cases = [
            (
                "Xposition Yposition Zposition Zrotation Yrotation Xrotation",
                "4 5 6 10 20 30",
                Quat::from_euler(EulerRot::ZYX, a, b, c),
            ),
            (
                "Xposition Yposition Zposition Zrotation Xrotation Yrotation",
                "4 5 6 10 20 30",
                Quat::from_euler(EulerRot::ZXY, a, b, c),
            ),
            (
                "Zrotation Xposition Xrotation Yposition Yrotation Zposition",
                "10 4 20 5 30 6",
                Quat::from_euler(EulerRot::ZXY, a, b, c),
            ),
        ];
        for (channels, values, want) in cases {
            let rig = rig(&one_joint(channels, values));
            let frame = motion(&rig).frame(0);
            assert!(frame.translations[0].abs_diff_eq(Vec3::new(4.0, 5.0, 6.0), 1e-6));
            assert!(same_rotation(frame.rotations[0], want), "{channels}");
        }
    }

    #[test]
    fn each_joint_takes_its_own_channels_from_the_frame() {
        let good = rig(GOOD);
        let m = motion(&good);
        assert_eq!(m.frame_count(), 2);
        assert!((m.times()[1] - 0.0333333).abs() < 1e-7);
        let frame = m.frame(1);
        // Hips: 6 channels (1 90 0 | 0 0 0); Spine: 3 channels, keeps its offset.
        assert!(frame.translations[0].abs_diff_eq(Vec3::new(1.0, 90.0, 0.0), 1e-6));
        assert!(same_rotation(frame.rotations[0], Quat::IDENTITY));
        assert!(frame.translations[1].abs_diff_eq(Vec3::new(0.0, 10.0, 0.0), 1e-6));

        let turned = rig(&good_with(20, "1 90 0 0 0 0 90 0 0"));
        let frame = motion(&turned).frame(1);
        assert!(same_rotation(
            frame.rotations[1],
            Quat::from_rotation_z(90f32.to_radians())
        ));
    }

    // --- Hierarchy -------------------------------------------------------------------

    #[test]
    fn rest_pose_is_the_offsets_with_no_rotation() {
        let rig = rig(GOOD);
        let joints = rig.skeleton.joints();
        assert_eq!(joints.len(), 2);
        assert_eq!(joints[0].name, "Hips");
        assert_eq!(joints[1].parent, Some(0));
        assert_eq!(
            joints[1].rest,
            Transform::from_translation(Vec3::new(0.0, 10.0, 0.0))
        );
        assert!(rig.notes.is_empty(), "{:?}", rig.notes);
    }

    #[test]
    fn end_sites_set_the_joint_end_and_the_first_one_wins() {
        let good = rig(GOOD);
        assert_eq!(good.skeleton.joints()[0].end, None);
        assert_eq!(
            good.skeleton.joints()[1].end,
            Some(Vec3::new(0.0, 10.0, 0.0))
        );

        let text = good_with(13, "    }\n    End Site\n    {\n      OFFSET 5 5 5\n    }");
        let two_ends = rig(&text);
        assert_eq!(
            two_ends.skeleton.joints()[1].end,
            Some(Vec3::new(0.0, 10.0, 0.0))
        );
    }

    #[test]
    fn several_roots_each_become_a_root_joint() {
        let text = "HIERARCHY\nROOT A\n{\nOFFSET 0 0 0\nCHANNELS 1 Xposition\n}\n\
                    ROOT B\n{\nOFFSET 1 0 0\nCHANNELS 1 Yrotation\nJOINT C\n{\nOFFSET 0 1 0\n}\n}\n\
                    MOTION\nFrames: 1\nFrame Time: 0.5\n3 90\n";
        let rig = rig(text);
        let parents: Vec<_> = rig.skeleton.joints().iter().map(|j| j.parent).collect();
        assert_eq!(parents, [None, None, Some(1)]);
        let frame = motion(&rig).frame(0);
        assert_eq!(frame.translations[0], Vec3::new(3.0, 0.0, 0.0));
        assert!(same_rotation(
            frame.rotations[1],
            Quat::from_rotation_y(90f32.to_radians())
        ));
    }

    #[test]
    fn names_with_spaces_tabs_crlf_and_odd_layout_are_read() {
        let text = "\u{feff}hierarchy\r\nROOT   Left Hip Joint {\r\n\tOFFSET\t1 2 3\r\n\tchannels 1 xrotation\r\n\
                    \tJOINT\tknee (L)\r\n\t{ OFFSET 0 -4 0 }\r\n\tEnd site\r\n\t{\r\n\t\tOFFSET 0 0 1\r\n\t}\r\n}\r\n\
                    motion\r\nFrames:3\r\nFrame   Time:\t0.25\r\n10\r\n20\r\n\r\n30\r\n";
        let rig = rig(text);
        let names: Vec<_> = rig
            .skeleton
            .joints()
            .iter()
            .map(|j| j.name.as_str())
            .collect();
        assert_eq!(names, ["Left Hip Joint", "knee (L)"]);
        assert_eq!(rig.skeleton.joints()[0].end, Some(Vec3::Z));
        let m = motion(&rig);
        assert_eq!(m.frame_count(), 3);
        assert_eq!(m.times()[1], 0.25);
        let want = Quat::from_rotation_x(30f32.to_radians());
        assert!(same_rotation(m.frame(2).rotations[0], want));
    }

    #[test]
    fn frames_may_span_lines_or_share_them() {
        let split = good_with(19, "0 90 0\n0 0 0\n\n0 0 0");
        let shared = good_with(19, "0 90 0 0 0 0 0 0 0 1 90").replace("\n1 90 0 0", "\n0 0");
        for text in [split, shared] {
            let rig = rig(&text);
            let m = motion(&rig);
            assert_eq!(m.frame_count(), 2);
            assert!(m.frame(1).translations[0].abs_diff_eq(Vec3::new(1.0, 90.0, 0.0), 1e-6));
        }
    }

    #[test]
    fn values_after_the_last_frame_are_ignored_with_a_note() {
        let rig = rig(&format!("{GOOD}2 90 0 0 0 0 0 0 0\n"));
        assert_eq!(motion(&rig).frame_count(), 2);
        assert_eq!(
            rig.notes,
            ["ignored 9 values after the last of the 2 frames (from line 21)"]
        );
    }

    #[test]
    fn no_motion_or_zero_frames_gives_no_motion() {
        assert!(rig(&good_until(15)).clips.is_empty());
        assert!(
            rig(&good_until(18).replace("Frames: 2", "Frames: 0"))
                .clips
                .is_empty()
        );
        // No frames, no use for a frame time.
        let text = good_until(18)
            .replace("Frames: 2", "Frames: 0")
            .replace("0.0333333", "0");
        assert!(rig(&text).clips.is_empty());
        let one = rig(&good_until(19).replace("Frames: 2", "Frames: 1"));
        assert_eq!(motion(&one).frame_count(), 1);
    }

    #[test]
    fn zero_position_channels_with_a_nonzero_offset_are_noted() {
        let with_positions = |spine: &str| {
            good_with(
                9,
                "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation",
            )
            .replace("0 90 0 0 0 0 0 0 0", &format!("0 90 0 0 0 0 {spine}"))
            .replace("1 90 0 0 0 0 0 0 0", &format!("1 90 0 0 0 0 {spine}"))
        };
        let zero = rig(&with_positions("0 0 0 0 0 0"));
        assert_eq!(zero.notes.len(), 1, "{:?}", zero.notes);
        assert!(zero.notes[0].starts_with("joint `Spine` has position channels that are 0"));
        let spine = motion(&zero).frame(0).translations[1];
        let rest = zero.skeleton.joints()[1].rest.translation;
        assert_eq!(spine, rest, "all-zero positions keep OFFSET");

        let offset = rig(&with_positions("0 10 0 0 0 0"));
        assert!(offset.notes.is_empty(), "{:?}", offset.notes);
    }

    #[test]
    fn a_first_frame_lying_down_is_noted() {
        let lying = good_with(19, "0 0 0 0 90 0 0 0 0");
        let rig = rig(&lying);
        assert_eq!(
            rig.notes,
            [
                "the first frame is 0.00 m tall, the rest pose 20.00 m: the motion may lie down \
              or have +Z up (set the up axis to override)"
            ]
        );
    }

    // --- Units and axes --------------------------------------------------------------

    /// A figure standing `height` units tall along Y (or Z), with one frame that moves
    /// the root to `(10, 20, 30)` and turns it 90° about the file's up axis.
    fn figure(height: f32, up: UpAxis) -> String {
        let (up_offset, turn) = match up {
            UpAxis::Y => (format!("0 {height} 0"), "Yrotation"),
            UpAxis::Z => (format!("0 0 {height}"), "Zrotation"),
        };
        format!(
            "HIERARCHY\nROOT Hips\n{{\nOFFSET 0 0 0\nCHANNELS 4 Xposition Yposition Zposition {turn}\n\
             JOINT Head\n{{\nOFFSET {up_offset}\nEnd Site\n{{\nOFFSET 0 0 0\n}}\n}}\n}}\n\
             MOTION\nFrames: 1\nFrame Time: 0.01\n10 20 30 90\n"
        )
    }

    #[test]
    fn a_z_up_file_becomes_y_up() {
        let rig = guessed(&figure(175.0, UpAxis::Z));
        let head = rig.skeleton.joints()[1].rest.translation;
        assert!(head.abs_diff_eq(Vec3::new(0.0, 1.75, 0.0), 1e-5), "{head}");
        assert!(
            rig.notes[0].starts_with("up axis: +Z (guessed"),
            "{:?}",
            rig.notes
        );
        let frame = motion(&rig).frame(0);
        // File (x, y, z) is internal (x, z, -y).
        assert!(frame.translations[0].abs_diff_eq(Vec3::new(0.1, 0.3, -0.2), 1e-5));
        let turn = Quat::from_rotation_y(90f32.to_radians());
        assert!(same_rotation(frame.rotations[0], turn));
    }

    #[test]
    fn centimetres_are_guessed_and_become_metres() {
        let rig = guessed(&figure(175.0, UpAxis::Y));
        let head = rig.skeleton.joints()[1].rest.translation;
        assert!(head.abs_diff_eq(Vec3::new(0.0, 1.75, 0.0), 1e-5), "{head}");
        assert_eq!(
            rig.notes,
            ["units: centimetres (guessed from a 175 cm figure)"]
        );
        let root = motion(&rig).frame(0).translations[0];
        assert!(root.abs_diff_eq(Vec3::new(0.1, 0.2, 0.3), 1e-5));
    }

    #[test]
    fn unrecognised_units_are_scaled_to_a_person_and_said_so() {
        let rig = guessed(&figure(20.0, UpAxis::Y));
        let head = rig.skeleton.joints()[1].rest.translation;
        assert!(head.abs_diff_eq(Vec3::new(0.0, 1.7, 0.0), 1e-5), "{head}");
        assert_eq!(rig.notes.len(), 2, "{:?}", rig.notes);
        assert!(rig.notes[0].starts_with("units not recognised"));
        assert_eq!(
            rig.notes[1],
            "units: 0.0850 m per unit (guessed from a 20.00-unit figure)"
        );
    }

    #[test]
    fn options_override_the_guesses() {
        let options = LoadOptions {
            units: Some(Units::Millimetres),
            up: Some(UpAxis::Y),
        };
        let rig = parse(&figure(175.0, UpAxis::Z), Path::new("a.bvh"), &options).unwrap();
        let head = rig.skeleton.joints()[1].rest.translation;
        assert!(head.abs_diff_eq(Vec3::new(0.0, 0.0, 0.175), 1e-6), "{head}");
        assert!(rig.notes.is_empty(), "{:?}", rig.notes);
    }

    // --- Real files ------------------------------------------------------------------

    fn assets() -> Option<PathBuf> {
        crate::assets::assets_dir().map(|dir| dir.join("bvh"))
    }

    fn load_asset(dir: &Path, name: &str) -> Rig {
        match load(&dir.join(name), &LoadOptions::default()) {
            Ok(rig) => rig,
            Err(err) => panic!("{err}"),
        }
    }

    /// Model-space positions of every joint and end site in frame `frame`.
    fn frame_points(rig: &Rig, frame: usize) -> Vec<(String, Vec3)> {
        let f = motion(rig).frame(frame);
        let world = rig.skeleton.world_transforms(f.rotations, f.translations);
        let mut points = Vec::new();
        for (joint, w) in rig.skeleton.joints().iter().zip(&world) {
            points.push((joint.name.clone(), Vec3::from(w.translation)));
            if let Some(end) = joint.end {
                points.push((format!("{} end", joint.name), w.transform_point3(end)));
            }
        }
        points
    }

    fn rest_points(rig: &Rig) -> Vec<(String, Vec3)> {
        let world = rig.skeleton.rest_world();
        let mut points = Vec::new();
        for (joint, w) in rig.skeleton.joints().iter().zip(&world) {
            points.push((joint.name.clone(), Vec3::from(w.translation)));
            if let Some(end) = joint.end {
                points.push((format!("{} end", joint.name), w.transform_point3(end)));
            }
        }
        points
    }

    fn height(points: &[(String, Vec3)]) -> f32 {
        let ys = points.iter().map(|(_, p)| p.y);
        ys.clone().fold(f32::MIN, f32::max) - ys.fold(f32::MAX, f32::min)
    }

    fn point(points: &[(String, Vec3)], name: &str) -> Vec3 {
        points
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, p)| *p)
            .expect(name)
    }

    #[test]
    fn every_sample_file_loads() {
        let Some(dir) = assets() else { return };
        let mut count = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("bvh"))
            {
                let rig =
                    load(&path, &LoadOptions::default()).unwrap_or_else(|err| panic!("{err}"));
                let m = motion(&rig);
                assert!(m.frame_count() >= 1, "{}", path.display());
                assert!(
                    m.frames()
                        .all(|f| f.translations.iter().all(|t| t.is_finite()))
                );
                count += 1;
            }
        }
        assert!(count >= 4, "only {count} files in {}", dir.display());
    }

    #[test]
    fn cmu_walk_is_a_person_walking_in_y_up() {
        let Some(dir) = assets() else { return };
        let rig = load_asset(&dir, "cmu_12_01_walk.bvh");
        assert_eq!(rig.skeleton.len(), 31);
        let m = motion(&rig);
        assert_eq!(m.frame_count(), 524);
        assert!((m.times()[1] - 1.0 / 120.0).abs() < 1e-6);
        // CMU's unit (about 1/0.45 inch) is not a known one: scaled to a 1.7 m figure.
        assert!(
            rig.notes
                .iter()
                .any(|n| n.starts_with("units not recognised"))
        );
        assert!(
            !rig.notes.iter().any(|n| n.contains("+Z")),
            "{:?}",
            rig.notes
        );
        let first = frame_points(&rig, 0);
        let standing = height(&first);
        assert!((1.4..2.0).contains(&standing), "{standing} m");
        assert!(point(&first, "Head").y > point(&first, "Hips").y + 0.3);
        assert!(point(&first, "Hips").y > point(&first, "LeftFoot").y + 0.5);
        // It walks: the hips travel more than a metre over the ground.
        let start = m.frame(0).translations[0];
        let end = m.frame(523).translations[0];
        let travel = (end - start) * Vec3::new(1.0, 0.0, 1.0);
        assert!(travel.length() > 1.0, "{travel}");
    }

    #[test]
    fn mocapbank_file_is_centimetres_and_y_up() {
        let Some(dir) = assets() else { return };
        let rig = load_asset(&dir, "test_mocapbank.bvh");
        assert_eq!(rig.skeleton.len(), 19);
        assert_eq!(motion(&rig).frame_count(), 455);
        assert_eq!(
            rig.notes,
            ["units: centimetres (guessed from a 167 cm figure)"]
        );
        let rest = rest_points(&rig);
        let lowest = rest.iter().map(|(_, p)| p.y).fold(f32::MAX, f32::min);
        let hips = point(&rest, "Hips").y - lowest;
        assert!(
            (0.9..1.0).contains(&hips),
            "hips {hips} m above the lowest point"
        );
        assert!(point(&rest, "Head").y > point(&rest, "Hips").y + 0.5);
    }

    #[test]
    fn bvh_test1_is_z_up_and_comes_out_y_up() {
        let Some(dir) = assets() else { return };
        let rig = load_asset(&dir, "bvh_test1.bvh");
        assert_eq!(rig.skeleton.len(), 24);
        assert_eq!(motion(&rig).frame_count(), 75);
        assert!(rig.notes[0].starts_with("up axis: +Z"), "{:?}", rig.notes);
        let rest = rest_points(&rig);
        assert!(point(&rest, "Head").y > point(&rest, "Hips").y + 0.5);
        let first = frame_points(&rig, 0);
        assert!(point(&first, "Head").y > point(&first, "Hips").y + 0.3);
    }

    #[test]
    fn bvh_test3_has_a_y_up_rest_pose_and_z_up_motion() {
        let Some(dir) = assets() else { return };
        let rig = load_asset(&dir, "bvh_test3.bvh");
        assert_eq!(rig.skeleton.len(), 60);
        assert_eq!(motion(&rig).frame_count(), 100);
        let last = rig.notes.last().map(String::as_str).unwrap_or("");
        assert!(
            last.starts_with("the first frame is 0.26 m tall"),
            "{:?}",
            rig.notes
        );

        // Read as Z-up inches, the motion stands (and the rest pose lies down).
        let options = LoadOptions {
            units: Some(Units::Inches),
            up: Some(UpAxis::Z),
        };
        let rig = load(&dir.join("bvh_test3.bvh"), &options).unwrap();
        let first = frame_points(&rig, 0);
        let standing = height(&first);
        assert!((1.2..2.0).contains(&standing), "{standing} m");
        assert!(point(&first, "Head").y > point(&first, "Hips").y + 0.3);
    }

    #[test]
    fn walk1_all_zero_root_positions_keep_the_offset() {
        let Some(dir) = assets() else { return };
        let rig = load_asset(&dir, "walk1.bvh");
        assert_eq!(rig.skeleton.len(), 75);
        assert_eq!(motion(&rig).frame_count(), 14);
        assert!(rig.notes[0].starts_with("up axis: +Z"), "{:?}", rig.notes);
        assert!(
            rig.notes
                .iter()
                .any(|n| n.starts_with("joint `Root` has position channels"))
        );
        let root_rest = rig.skeleton.joints()[0].rest.translation;
        assert_eq!(motion(&rig).frame(0).translations[0], root_rest);
    }

    #[test]
    fn tpose_has_173_joints_and_one_frame() {
        let Some(dir) = assets() else { return };
        let rig = load_asset(&dir, "tpose.bvh");
        assert_eq!(rig.skeleton.len(), 173);
        assert_eq!(motion(&rig).frame_count(), 1);
        assert!(rig.notes[0].starts_with("up axis: +Z"), "{:?}", rig.notes);
        let rest = rest_points(&rig);
        assert!(point(&rest, "head").y > point(&rest, "root").y + 0.3);
        assert!((1.69..1.71).contains(&height(&rest)));
        // 143 of its 144 six-channel joints hold 0 in their position channels.
        assert!(
            rig.notes
                .iter()
                .any(|n| n.starts_with("143 joints (`upperleg01.R`, ...)"))
        );
    }
}
