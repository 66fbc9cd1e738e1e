//! The `MOTION` block: the `Frames:` and `Frame Time:` header and the stream of
//! values, checked against the hierarchy's channel count. Frames usually end at
//! line breaks; when the stream does not add up, the error names the line where
//! the first short or long frame starts (a file cut in the middle of a value, its
//! last word `-` or `1e`, so too). A count of 0 over whole frames, one to a
//! line, is a count the writer never filled in: those frames are read.

use super::frame_rate::rounded_frame_time;
use super::gaps;
use super::hierarchy::{Channel, Parser};
use super::lexer::{Lexer, Token, is, number, quote, strip_prefix_ignore_case};
use super::{BvhError, MAX_FRAMES, MAX_SAMPLES};

/// The `MOTION` block, checked but not yet turned into transforms.
#[derive(Debug)]
pub(super) struct RawMotion {
    pub(super) frame_time: f32,
    pub(super) frames: usize,
    /// `frames × channels` values, frame-major, in file units and degrees.
    pub(super) values: Vec<f32>,
    pub(super) notes: Vec<String>,
}

impl<'a> Parser<'a> {
    /// `Frames: n`, `Frame Time: t` and the values, after `MOTION`.
    pub(super) fn parse_motion(&mut self) -> Result<RawMotion, BvhError> {
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
        let mut declared = match count.text.parse::<usize>() {
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
        let timed = frame_time.is_some_and(|t| t.is_finite() && t > 0.0);
        // A pose written as one frame: writers of skeletons and static poses put
        // `Frame Time: 0` there, where no time passes.
        let still = declared == 1 && frame_time == Some(0.0);
        let frame_time = match frame_time {
            Some(t) if t.is_finite() && t > 0.0 => t,
            // A file without frames has no use for its frame time, nor one of one frame
            // whose frame time is zero.
            _ if declared == 0 || still => 1.0,
            _ => {
                return Err(BvhError::FrameTime {
                    path: self.path.to_owned(),
                    line: time.line,
                    found: quote(time.text),
                });
            }
        };

        // Every value after the header, checked, with how many each line holds. Text
        // once the declared frames are all read (a note pasted after the motion)
        // ends the motion.
        let lexer = std::mem::replace(&mut self.lexer, Lexer::new(""));
        let needed = declared.saturating_mul(channels);
        let mut values = Vec::new();
        let mut lines = Vec::new();
        let mut text_after = None;
        // A number cut short as the last word of a line (`-`, `1e`) is a file cut in the
        // middle of a value when no other word follows in the file: it is no value, and
        // the frame it ends is reported short below. Else it is the error it is.
        let mut cut = None;
        // Where the first missing value (`nan`) is, for the note or the error.
        let mut first_gap = None;
        for (line, text) in lexer.into_remaining_lines() {
            if text.trim().is_empty() {
                continue;
            }
            if let Some(err) = cut.take() {
                return Err(err);
            }
            let before = values.len();
            let mut words = text.split_whitespace().enumerate().peekable();
            while let Some((i, word)) = words.next() {
                if gaps::is_gap(word) && !(channels > 0 && values.len() >= needed) {
                    first_gap.get_or_insert(line);
                    values.push(f32::NAN);
                    continue;
                }
                match number(self.path, word, line, i + 1) {
                    Ok(value) => values.push(value),
                    Err(_) if channels > 0 && values.len() >= needed => {
                        text_after = Some(line);
                        break;
                    }
                    Err(err) if words.peek().is_none() && is_cut_number(word) => cut = Some(err),
                    Err(err) => return Err(err),
                }
            }
            if values.len() > before {
                lines.push((line, values.len() - before));
            }
            if text_after.is_some() {
                break;
            }
        }

        let mut notes = Vec::new();
        if still {
            notes.push(format!(
                "frame time `{}` (line {}) on the one frame: a pose, read as a still clip",
                time.text, time.line
            ));
        }
        // A frame time written rounded (`frame_rate.rs`).
        let frame_time = match rounded_frame_time(time.text, frame_time).filter(|_| timed) {
            Some((exact, note)) => {
                notes.push(note);
                exact
            }
            None => frame_time,
        };
        // A header of 0 frames over whole frames, one to a line, with a frame time: a
        // writer that never filled in the count. The frames are read.
        let rows = lines.len();
        if declared == 0
            && timed
            && channels > 0
            && (1..=max).contains(&rows)
            && lines.iter().all(|&(_, n)| n == channels)
        {
            notes.push(format!(
                "the header says 0 frames and {rows} whole frames follow it (from line {}): \
                 they are read",
                lines[0].0
            ));
            declared = rows;
        }
        let needed = declared.saturating_mul(channels);
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
        notes.extend(text_after.map(|line| {
            format!("ignored the text after the last of the {declared} frames (from line {line})")
        }));
        values.truncate(needed);
        if let Some(line) = first_gap {
            notes.extend(self.fill_gaps(&mut values, declared, line)?);
        }
        Ok(RawMotion {
            frame_time,
            frames: declared,
            values,
            notes,
        })
    }

    /// Fills the take's missing values (`gaps.rs`), the first on `line`; the note
    /// that says how many, or the error naming a channel missing in every frame.
    fn fill_gaps(
        &self,
        values: &mut [f32],
        frames: usize,
        line: usize,
    ) -> Result<Option<String>, BvhError> {
        let kinds: Vec<(usize, &Channel)> = self
            .joints
            .iter()
            .enumerate()
            .flat_map(|(j, joint)| joint.channels.iter().map(move |c| (j, c)))
            .collect();
        let rotation: Vec<bool> = kinds
            .iter()
            .map(|(_, c)| matches!(c, Channel::Rotation(_)))
            .collect();
        match gaps::fill(values, &rotation, frames) {
            Ok(filled) => Ok(filled.map(|f| {
                let counted = |n: usize, what: &str| match n {
                    1 => format!("1 {what}"),
                    n => format!("{n} {what}s"),
                };
                format!(
                    "{} in {} of the {frames} frames {} `nan` (gaps in the capture, the first on \
                     line {line}, the longest {}): each is filled from its channel's values \
                     before and after it",
                    counted(f.values, "value"),
                    f.frames,
                    if f.values == 1 { "is" } else { "are" },
                    counted(f.longest, "frame"),
                )
            })),
            Err(c) => {
                let (joint, channel) = kinds[c];
                Err(BvhError::NoValue {
                    path: self.path.to_owned(),
                    line,
                    joint: self.joints[joint].name.clone(),
                    channel: channel.name(),
                })
            }
        }
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

/// Whether `word` can be the start of a number cut short: signs, digits, a point
/// and exponent marks only (`-`, `1e`, `.`).
fn is_cut_number(word: &str) -> bool {
    word.bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'))
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

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use glam::{Quat, Vec3};

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
    fn a_pose_of_one_frame_with_a_zero_frame_time_is_read() {
        for zero in ["0", "0.0", "0.000000"] {
            let text = one_joint("Xposition Yposition Zposition", "4 5 6")
                .replace("Frame Time: 0.0333333", &format!("Frame Time: {zero}"));
            let pose = rig(&text);
            assert_eq!(motion(&pose).frame_count(), 1);
            let note = format!("frame time `{zero}` (line 13) on the one frame");
            assert!(
                pose.notes.iter().any(|n| n.starts_with(&note)),
                "{:?}",
                pose.notes
            );
        }
        // Anything else on one frame, and a zero frame time on more, stays an error.
        for (frames, time, values) in [("1", "-0.1", "4 5 6"), ("2", "0", "4 5 6\n4 5 6")] {
            let text = one_joint("Xposition Yposition Zposition", values)
                .replace("Frames: 1", &format!("Frames: {frames}"))
                .replace("Frame Time: 0.0333333", &format!("Frame Time: {time}"));
            let expected =
                format!("bad.bvh:13: frame time `{time}` is not a positive number of seconds");
            assert_eq!(error(&text), expected);
        }
    }

    #[test]
    fn parse_rejects_bad_motion_values() {
        let msg = error(&good_with(20, "1 90 x 0 0 0 0 0 0"));
        assert_eq!(msg, "bad.bvh:20: value 3 (`x`) is not a number");
        let msg = error(&good_with(19, "0 90 0 0 0 0 0 inf 0"));
        assert_eq!(msg, "bad.bvh:19: value 8 is NaN or infinite");
    }

    #[test]
    fn a_rounded_frame_time_is_read_as_the_rate_it_was_rounded_from() {
        let frame_time = |written: &str| {
            let text = GOOD.replace("Frame Time: 0.0333333", &format!("Frame Time: {written}"));
            let read = rig(&text);
            (motion(&read).times()[1], read.notes)
        };
        let (step, notes) = frame_time("0.017");
        assert!((step - 1.0 / 60.0).abs() < 1e-7, "{step}");
        assert_eq!(notes.len(), 1);
        assert!(notes[0].starts_with("frame time `0.017` s is 58.8 frames a second"));
        let (step, notes) = frame_time("0.008");
        assert!((step - 0.008).abs() < 1e-7, "{step}");
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn a_nan_motion_value_is_a_gap_filled_from_its_channel_with_a_note() {
        // A marker lost for a frame: the root's height and a turn written `nan`.
        let text = GOOD.replace("Frames: 2", "Frames: 3").replace(
            "1 90 0 0 0 0 0 0 0",
            "1 nan 0 0 0 0 0 -nan(ind) 0\n2 80 0 0 0 0 0 20 0",
        );
        let read = rig(&text);
        let m = motion(&read);
        assert_eq!(m.frame_count(), 3);
        assert!(m.frame(1).translations[0].abs_diff_eq(Vec3::new(1.0, 85.0, 0.0), 1e-5));
        let turned = Quat::from_rotation_x(10f32.to_radians());
        assert!(m.frame(1).rotations[1].angle_between(turned) < 1e-5);
        assert_eq!(
            read.notes,
            [
                "2 values in 1 of the 3 frames are `nan` (gaps in the capture, the first on line 20, \
              the longest 1 frame): each is filled from its channel's values before and after it"
            ]
        );
        // A channel with no value in any frame has nothing to fill it from.
        let msg = error(
            &good_with(19, "0 90 0 0 0 0 0 0 nan")
                .replace("1 90 0 0 0 0 0 0 0", "1 90 0 0 0 0 0 0 NaN"),
        );
        assert_eq!(
            msg,
            "bad.bvh:19: channel Yrotation of joint `Spine` is `nan` in every frame"
        );
    }

    #[test]
    fn a_file_cut_in_the_middle_of_a_value_reports_the_short_frame() {
        // The cut leaves `-` or `1e` as the file's last word: no value, the frame
        // it ends is short. The same word before the end is no number.
        for cut in ["-", "1e", "-."] {
            let msg = error(&(good_until(19) + "\n1 90 0 0 " + cut));
            assert_eq!(
                msg, "bad.bvh:20: frame 2 has 4 values, the hierarchy has 9 channels",
                "{cut}"
            );
        }
        let msg = error(&(good_until(19) + "\n1 90 0 0 - 0 0 0 0"));
        assert_eq!(msg, "bad.bvh:20: value 5 (`-`) is not a number");
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
    fn text_after_the_last_frame_is_ignored_with_a_note() {
        // A readme pasted after the motion (as a Second Life pose kit's files have).
        let rig = rig(&format!(
            "{GOOD}eterm##$:BKUW300PS345672:\n--- readme.txt ---\n"
        ));
        assert_eq!(motion(&rig).frame_count(), 2);
        assert_eq!(
            rig.notes,
            ["ignored the text after the last of the 2 frames (from line 21)"]
        );
        // Text before the last frame is complete is still an error.
        let msg = error(&format!("{}\nabc 0 0 0\n", good_until(19)));
        assert_eq!(msg, "bad.bvh:20: value 1 (`abc`) is not a number");
    }

    #[test]
    fn whole_frames_under_a_header_of_zero_frames_are_read_with_a_note() {
        // A pose writer's `Frames: 0` over its frames (Imersive3D's `motion.bvh`).
        let read = rig(&GOOD.replace("Frames: 2", "Frames: 0"));
        let m = motion(&read);
        assert_eq!(m.frame_count(), 2);
        assert!(m.frame(1).translations[0].abs_diff_eq(Vec3::new(1.0, 90.0, 0.0), 1e-6));
        assert_eq!(
            read.notes,
            ["the header says 0 frames and 2 whole frames follow it (from line 19): they are read"]
        );
        // Rows that are no whole frames stay unread.
        let short = rig(&good_with(20, "1 90 0").replace("Frames: 2", "Frames: 0"));
        assert!(short.clips.is_empty());
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
}
