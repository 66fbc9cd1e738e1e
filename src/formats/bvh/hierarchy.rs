//! The `HIERARCHY` grammar: `ROOT`s, `JOINT`s, `OFFSET`, `CHANNELS` and
//! `End Site`, read into joint definitions in file units and axes, with an
//! explicit stack of open joints (no recursion); and the parser that walks the
//! whole file, handing the `MOTION` block to `motion`.

use std::path::Path;

use glam::Vec3;

use super::BvhError;
use super::lexer::{Lexer, Token, is, number, quote};
use super::motion::RawMotion;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Axis {
    X,
    Y,
    Z,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Channel {
    Position(Axis),
    Rotation(Axis),
}

/// Every channel with its name as BVH spells it.
const CHANNELS: [(&str, Channel); 6] = [
    ("Xposition", Channel::Position(Axis::X)),
    ("Yposition", Channel::Position(Axis::Y)),
    ("Zposition", Channel::Position(Axis::Z)),
    ("Xrotation", Channel::Rotation(Axis::X)),
    ("Yrotation", Channel::Rotation(Axis::Y)),
    ("Zrotation", Channel::Rotation(Axis::Z)),
];

impl Channel {
    fn parse(name: &str) -> Option<Channel> {
        CHANNELS
            .into_iter()
            .find(|(spelling, _)| name.eq_ignore_ascii_case(spelling))
            .map(|(_, channel)| channel)
    }

    /// The channel's name as BVH spells it (`Xposition`).
    pub(super) fn name(self) -> &'static str {
        CHANNELS
            .into_iter()
            .find(|&(_, c)| c == self)
            .map_or("", |(spelling, _)| spelling)
    }
}

/// A joint as the file declares it, in file units and axes.
#[derive(Debug, Clone)]
pub(super) struct JointDef {
    pub(super) name: String,
    /// Line of the `ROOT`/`JOINT` keyword.
    pub(super) line: usize,
    pub(super) parent: Option<usize>,
    pub(super) offset: Vec3,
    pub(super) end: Option<Vec3>,
    /// How many end sites the joint has: with several, `end` is their mean.
    end_sites: u32,
    /// What follows `End` on the end site's line (`Site`, or a name such as
    /// `LeftToeBase_End`); empty when the joint has no end site.
    pub(super) end_name: String,
    pub(super) channels: Vec<Channel>,
    /// How far the joint was moved from its `OFFSET` onto the point its children
    /// share (`root_pivot.rs`), in its own frame: zero for every joint but such a
    /// root. A frame's translation gains it turned by the frame's rotation.
    pub(super) pivot: Vec3,
}

impl JointDef {
    /// A joint named `name` at `line` under `parent`, `offset` from it, with no
    /// channels and no end site (yet).
    fn bare(name: String, line: usize, parent: Option<usize>, offset: Vec3) -> Self {
        Self {
            name,
            line,
            parent,
            offset,
            end: None,
            end_sites: 0,
            end_name: String::new(),
            channels: Vec::new(),
            pivot: Vec3::ZERO,
        }
    }

    /// The `OFFSET` the file gives, before any move onto the children
    /// (`root_pivot.rs`): what position channels replace or keep.
    pub(super) fn file_offset(&self) -> Vec3 {
        self.offset - self.pivot
    }

    /// Whether the joint has position channels.
    pub(super) fn has_position(&self) -> bool {
        self.channels
            .iter()
            .any(|c| matches!(c, Channel::Position(_)))
    }
}

/// The file's only root and its children; `None` when it has several roots or none.
pub(super) fn only_root_and_children(defs: &[JointDef]) -> Option<(usize, Vec<usize>)> {
    let mut roots = defs.iter().enumerate().filter(|(_, d)| d.parent.is_none());
    let (root, _) = roots.next()?;
    if roots.next().is_some() {
        return None;
    }
    let kids = (0..defs.len())
        .filter(|&i| defs[i].parent == Some(root))
        .collect();
    Some((root, kids))
}

pub(super) struct Parser<'a> {
    pub(super) lexer: Lexer<'a>,
    pub(super) path: &'a Path,
    pub(super) joints: Vec<JointDef>,
    /// Joints whose `{` is not closed yet, outermost first.
    pub(super) open: Vec<usize>,
    /// What the hierarchy's reading tolerated, for `Rig::notes`.
    pub(super) notes: Vec<String>,
    /// How many `JOINT Site`s were read as end sites.
    pub(super) sites_as_joints: usize,
}

impl<'a> Parser<'a> {
    pub(super) fn syntax(&self, line: usize, expected: &'static str, found: &str) -> BvhError {
        BvhError::Syntax {
            path: self.path.to_owned(),
            line,
            expected,
            found: format!("`{}`", quote(found)),
        }
    }

    /// The error for a file that ends where `expected` should come.
    pub(super) fn end_of_file(&self, expected: &'static str) -> BvhError {
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

    pub(super) fn next_or(&mut self, expected: &'static str) -> Result<Token<'a>, BvhError> {
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
    pub(super) fn parse_file(&mut self) -> Result<Option<RawMotion>, BvhError> {
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
            } else if is(token, "JOINT") && self.joints.is_empty() {
                // Writers that spell every joint alike (bvh-python's `t-pose.bvh`)
                // open the first with `JOINT`; Blender's importer reads it as the root.
                self.notes.push(format!(
                    "line {}: the first joint is declared with `JOINT`; read as the `ROOT`",
                    token.line
                ));
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
                self.joint_site_to_end_site(current);
                self.branch_site_to_joint(current);
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
        self.joints
            .push(JointDef::bare(name.to_owned(), line, parent, Vec3::ZERO));
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

    /// `End Site { OFFSET x y z }`, after `End` on line `line`. Some exporters write
    /// the site's name instead of `Site` (`End LeftToeBase_End`): whatever follows
    /// `End` on its line names the site, and the block that follows decides what it
    /// is. A site named in a `#name:` comment (`End Site #name: LeftHand`) is a joint
    /// the writer kept as a leaf: writers after Holden's `BVH.py` (deep-motion-editing,
    /// MoDi) and Truebones' write every leaf joint so, MoDi's hands, feet and head
    /// among them. It becomes that joint, with no channels (its rotation is the
    /// identity in every frame) and no end site.
    fn end_site(&mut self, joint: usize, line: usize) -> Result<(), BvhError> {
        let site_name = self.lexer.name().to_owned();
        let leaf = leaf_joint_name(&site_name).map(str::to_owned);
        self.expect("{", "`{`")?;
        self.expect("OFFSET", "`OFFSET`")?;
        let end = self.vec3()?;
        self.expect("}", "`}`")?;
        if let Some(name) = leaf {
            self.joints
                .push(JointDef::bare(name, line, Some(joint), end));
        } else if let Some(def) = self.joints.get_mut(joint) {
            // Several end sites on one joint (a video estimate's heel and toe on the
            // ankle, finger tips fanned on the wrist): the joint ends at their mean,
            // where the bone goes whichever way the first of them points.
            let n = def.end_sites as f32;
            def.end = Some(def.end.map_or(end, |e| (e * n + end) / (n + 1.0)));
            def.end_sites += 1;
            if def.end_sites == 1 {
                def.end_name = site_name;
            } else if def.end_sites == 2 {
                self.notes.push(format!(
                    "line {line}: `{}` has several end sites: it ends at their mean",
                    quote(&def.name)
                ));
            }
        }
        Ok(())
    }

    /// Turns the end site of a just-closed joint that branches (two or more child
    /// joints) into a leaf joint with no channels (its rotation is the identity in
    /// every frame).
    /// Writers that turn tracked points into a BVH end every chain at its last
    /// point: a Kinect-style skeleton's spine ends at the head, written as an `End
    /// Site` of the joint where the arms branch (`ShoulderCenter`), so the figure
    /// has no head joint. Beside child joints, an end site is such a point of the
    /// figure, not the tip of a leaf bone; as a joint it can carry the head.
    fn branch_site_to_joint(&mut self, joint: usize) {
        let Some(def) = self.joints.get(joint) else {
            return;
        };
        let Some(end) = def.end else {
            return;
        };
        if self
            .joints
            .iter()
            .filter(|j| j.parent == Some(joint))
            .count()
            < 2
        {
            return;
        }
        let name = match def.end_name.as_str() {
            "" => format!("{}_Site", def.name),
            site if site.eq_ignore_ascii_case("Site") => format!("{}_Site", def.name),
            site => site.to_owned(),
        };
        self.notes.push(format!(
            "line {}: the end site of `{}`, where the figure branches, is read as a joint \
             `{}` with no channels",
            def.line,
            quote(&def.name),
            quote(&name)
        ));
        let line = def.line;
        if let Some(def) = self.joints.get_mut(joint) {
            def.end = None;
            def.end_sites = 0;
            def.end_name.clear();
        }
        self.joints
            .push(JointDef::bare(name, line, Some(joint), end));
    }

    /// Turns a just-closed `JOINT Site` with no channels and no children into its
    /// parent's end site: writers that declare every node with `JOINT`
    /// (bvh-python's `t-pose.bvh`) write `End Site` so, which would name many joints
    /// `Site`.
    fn joint_site_to_end_site(&mut self, joint: usize) {
        let Some(def) = self.joints.get(joint) else {
            return;
        };
        let is_site = def.name.eq_ignore_ascii_case("Site")
            && def.channels.is_empty()
            && def.end.is_none()
            && joint + 1 == self.joints.len();
        let Some(parent) = def.parent.filter(|_| is_site) else {
            return;
        };
        let (line, offset) = (def.line, def.offset);
        self.joints.pop();
        if let Some(parent) = self.joints.get_mut(parent) {
            parent.end = parent.end.or(Some(offset));
        }
        if self.sites_as_joints == 0 {
            self.notes.push(format!(
                "line {line}: `JOINT Site` with no channels is read as an `End Site`"
            ));
        }
        self.sites_as_joints += 1;
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
}

/// The joint an end site's `#name:` comment names (`Site #name: LeftHand`, what
/// follows `End`), if it names one.
fn leaf_joint_name(site: &str) -> Option<&str> {
    let at = site.to_ascii_lowercase().find("#name:")?;
    let name = site.get(at + "#name:".len()..)?.trim();
    (!name.is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use crate::skeleton::Transform;
    use glam::{Quat, Vec3};

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
        let msg = error(&good_with(11, ""));
        assert!(
            msg.starts_with("bad.bvh:12: expected `{`, found `OFFSET`"),
            "{msg}"
        );
    }

    #[test]
    fn an_end_site_may_be_named() {
        // `End LeftToeBase_End`, as some exporters write an end site.
        for named in ["    End Spine_End", "    End\tSpine End", "    End"] {
            let rig = rig(&good_with(10, named));
            assert_eq!(
                rig.skeleton.joints()[1].end,
                Some(Vec3::new(0.0, 10.0, 0.0)),
                "{named}"
            );
        }
    }

    #[test]
    fn an_end_site_named_in_a_comment_is_a_leaf_joint() {
        // MoDi and other writers after Holden's `BVH.py` keep leaf joints as
        // `End Site #name: LeftHand`: the hand is a joint with no channels at the
        // site, and the forearm has no end site of its own.
        for named in ["    End Site #name: Tip", "    End Site #NAME:Tip  "] {
            let rig = rig(&good_with(10, named));
            let joints = rig.skeleton.joints();
            let tip = joints.iter().position(|j| j.name == "Tip");
            assert_eq!(tip, Some(2), "{named}");
            assert_eq!(joints[2].parent, Some(1));
            assert_eq!(joints[2].rest.translation, Vec3::new(0.0, 10.0, 0.0));
            assert_eq!(joints[1].end, None);
            assert!(joints[2].end.is_none());
            // Its rotation is the identity in every frame; the frames still read.
            let frame = motion(&rig).frame(1);
            assert_eq!(frame.rotations.len(), 3);
            assert!(frame.rotations[2].abs_diff_eq(Quat::IDENTITY, 1e-6));
        }
        // A comment with no name leaves an end site.
        let rig = rig(&good_with(10, "    End Site #name:"));
        assert_eq!(rig.skeleton.len(), 2);
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
    fn end_sites_set_the_joint_end_and_several_end_it_at_their_mean() {
        let good = rig(GOOD);
        assert_eq!(good.skeleton.joints()[0].end, None);
        assert_eq!(
            good.skeleton.joints()[1].end,
            Some(Vec3::new(0.0, 10.0, 0.0))
        );

        let text = good_with(13, "    }\n    End Site\n    {\n      OFFSET 5 5 5\n    }");
        let two_ends = rig(&text);
        // A second end site: the joint ends halfway between the two.
        assert_eq!(
            two_ends.skeleton.joints()[1].end,
            Some(Vec3::new(2.5, 7.5, 2.5))
        );
    }

    #[test]
    fn joint_for_root_and_joint_site_for_end_site_read_as_root_and_end_site() {
        let good = rig(GOOD);
        let text = good_with(2, "JOINT Hips");
        let read = rig(&text);
        let names = |r: &crate::formats::Rig| -> Vec<(String, Option<usize>)> {
            r.skeleton
                .joints()
                .iter()
                .map(|j| (j.name.clone(), j.parent))
                .collect()
        };
        assert_eq!(names(&read), names(&good));
        assert_eq!(motion(&read).frame_count(), 2);
        assert!(
            read.notes[0].starts_with("line 2: the first joint is declared with `JOINT`"),
            "{:?}",
            read.notes
        );
        // bvh-python's writer also spells each `End Site` as `JOINT Site`.
        let sites = text.replace(
            "End Site\n{\n  OFFSET 0 10 0\n}",
            "JOINT Site\n{\n  OFFSET 0 10 0\n  CHANNELS 0\n}",
        );
        assert_ne!(sites, text);
        let read = rig(&sites);
        assert_eq!(names(&read), names(&good));
        let ends: Vec<_> = read.skeleton.joints().iter().map(|j| j.end).collect();
        let good_ends: Vec<_> = good.skeleton.joints().iter().map(|j| j.end).collect();
        assert_eq!(ends, good_ends);
        assert!(
            read.notes[1].starts_with("line 10: `JOINT Site` with no channels is read as an"),
            "{:?}",
            read.notes
        );
        // Only the first: a second top-level joint must still be a `ROOT`.
        let second = GOOD.replace("MOTION", "JOINT B\n{\nOFFSET 0 0 0\n}\nMOTION");
        let msg = error(&second);
        assert!(
            msg.contains("expected `ROOT` or `MOTION`, found `JOINT`"),
            "{msg}"
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

    /// A Kinect-style figure as pose-to-BVH writers end it: the spine stops at
    /// `ShoulderCenter`, where the arms branch, and the head is only that joint's
    /// end site (`site` is its line).
    fn head_as_branch_site(site: &str) -> String {
        // Joint names run to the end of their line.
        let chain = |names: [&str; 3], offsets: [&str; 3], end: &str| {
            let mut text = String::new();
            for (name, offset) in names.iter().zip(offsets) {
                text += &format!(
                    "JOINT {name}\n{{ OFFSET {offset} CHANNELS 3 Zrotation Xrotation Yrotation\n"
                );
            }
            text + &format!("End Site\n{{ OFFSET {end} }} }} }} }}\n")
        };
        let arm = |side: &str, x: f32| {
            let names = ["Shoulder", "Elbow", "Hand"].map(|n| format!("{side}{n}"));
            let offsets = [format!("{x} 0 0"), format!("{x} 0 0"), format!("{x} 0 0")];
            chain(
                names.each_ref().map(String::as_str),
                offsets.each_ref().map(String::as_str),
                &format!("{} 0 0", x / 4.0),
            )
        };
        let leg = |side: &str, x: f32| {
            let names = ["Hip", "Knee", "Ankle"].map(|n| format!("{side}{n}"));
            let offsets = [
                format!("{x} -0.05 0"),
                "0 -0.42 0".into(),
                "0 -0.42 0".into(),
            ];
            chain(
                names.each_ref().map(String::as_str),
                offsets.each_ref().map(String::as_str),
                "0 -0.06 0.12",
            )
        };
        format!(
            "HIERARCHY
ROOT HipCenter
{{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Spine
  {{ OFFSET 0 0.1 0 CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT ShoulderCenter
    {{ OFFSET 0 0.4 0 CHANNELS 3 Zrotation Xrotation Yrotation
{}{}{site}
    }}
  }}
{}{}}}
MOTION
Frames: 1
Frame Time: 0.0333333
0 1 0 {}
",
            arm("Left", 0.22),
            arm("Right", -0.22),
            leg("Left", 0.14),
            leg("Right", -0.14),
            // 3 + 3 + 3 + 18 + 18 rotation channels at zero.
            ["0"; 45].join(" ")
        )
    }

    #[test]
    fn an_end_site_beside_child_joints_is_a_leaf_joint() {
        use crate::humanoid::HumanBone;
        use crate::skeleton::{Recognition, recognize};
        // Beside the arms it branches into, `ShoulderCenter`'s end site is the head:
        // a joint with no channels, which the recognizer takes for the head. Read as
        // an end site it left the figure headless ("no head"), and refused.
        for (site, name) in [
            ("End Site\n{ OFFSET 0 0.25 0 }", "ShoulderCenter_Site"),
            ("End Head\n{ OFFSET 0 0.25 0 }", "Head"),
        ] {
            let rig = rig(&head_as_branch_site(site));
            let joints = rig.skeleton.joints();
            let centre = joints.iter().position(|j| j.name == "ShoulderCenter");
            let head = joints.iter().position(|j| j.name == name);
            assert!(centre.is_some() && head.is_some(), "{site}");
            assert_eq!(joints[head.unwrap()].parent, centre, "{site}");
            assert_eq!(joints[head.unwrap()].end, None, "{site}");
            assert_eq!(joints[centre.unwrap()].end, None, "{site}");
            assert!(
                rig.notes
                    .iter()
                    .any(|n| n.contains("where the figure branches"))
            );
            let map = match recognize(&rig.skeleton) {
                Recognition::Humanoid(r) => r.map,
                Recognition::NotHumanoid(n) => panic!("{site}: {}", n.reason),
            };
            assert_eq!(
                map.bones.get(&HumanBone::Head).map(String::as_str),
                Some(name)
            );
            assert_eq!(
                map.bones.get(&HumanBone::Spine).map(String::as_str),
                Some("Spine")
            );
        }
        // A leaf's end site stays the tip of its bone.
        let rig = rig(&head_as_branch_site(""));
        let hand = rig.skeleton.joints().iter().find(|j| j.name == "LeftHand");
        assert_eq!(hand.and_then(|j| j.end), Some(Vec3::new(0.055, 0.0, 0.0)));
    }
}
