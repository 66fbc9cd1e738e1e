//! Raised patches of the source's floor, followed live (`RaisedPatches`): where the
//! take stands on something (a box, a step, a stage), the floor under a foot there
//! is that level, not the floor the feet stood on over the last seconds. The floor
//! is cut into square patches of `LEVEL_CELL` hips heights (about a foot's length);
//! a sole standing (slow, `contact::is_slow`, for `STANDING` seconds on end)
//! `RAISED` hips heights or more above the floor counts for its patch, and a patch is
//! raised once such soles have stood on it for `LEVEL_SECONDS` in all, at the lowest
//! of them. Soles standing on one patch `RAISED` or more apart stand on different
//! surfaces (rock tops, a step and the box beside it within a foot's length): each
//! is a level of the patch, and the floor under a sole is the level nearest it. A
//! box's top or a step is flat: a patch not raised itself takes the level of a raised
//! patch beside it (the one nearest the sole's height), so a foot stepping on across
//! a box stands on it from its first step onto a new patch.
//! A foot lifted in place (jogging or marching on the spot) is slow for a
//! moment at the top of each lift, over the same patch every time: standing is what
//! tells a box from that. `eval` reads the same
//! patches over a whole clip, so the live contacts and the evaluation's differ only
//! in what the live patches have seen so far.
//!
//! The patches are kept in a fixed table of `PATCHES`, the least recently stood on
//! giving way to a new one (no heap: it runs on the solver thread). Only raised
//! soles are kept, so the table holds the tops of boxes and steps, not the floor.
//! Hand-written: a dozen lines over a fixed array, where a map crate would allocate.

use glam::Vec2;

/// The side of a patch of floor that has one level, hips heights: about a foot's
/// length.
pub const LEVEL_CELL: f32 = 0.25;

/// A patch stands this far above the floor or more, hips heights (9 cm of a 0.9 m
/// hips height, about half a stair's rise), before it is a raised level: closer, it
/// is the floor, and a level take's contacts are the floor's alone.
pub const RAISED: f32 = 0.1;

/// Soles stand on a patch this long in all before its level is read, seconds: a
/// third of a walking stance (0.6 s at two steps a second) after the `STANDING`
/// that says the sole stands, so that the first stance on a step is planted for its
/// second half; a foot passing slowly never stands, and a level take shows no
/// patch so raised (`RAISED`) for so long.
pub const LEVEL_SECONDS: f32 = 0.2;

/// A sole slow this long on end stands, seconds: a stance lasts a few tenths of a
/// second; a lifted foot turns at the top of its lift within a few hundredths.
pub const STANDING: f32 = 0.1;

/// How many raised patches are kept (a 1.5 m by 1 m box top on a 1 m hips height
/// is 24).
const PATCHES: usize = 128;

/// The patch a place (X, Z, metres) is on, for patches `cell` metres across.
#[must_use]
pub fn patch_of(at: Vec2, cell: f32) -> (i32, i32) {
    let i = (at / cell.max(1e-6)).floor();
    (i.x as i32, i.y as i32)
}

/// The level under a sole at `at` (X, Z) at the height `sole`, for patches `cell`
/// across whose raised levels are `levels` (patch, level; a patch may have several):
/// its own patch's level nearest `sole`, else the level of a patch beside it nearest
/// `sole`; `None` on the floor. One pass over the levels.
pub fn level_under(
    at: Vec2,
    sole: f32,
    cell: f32,
    levels: impl IntoIterator<Item = ((i32, i32), f32)>,
) -> Option<f32> {
    let (x, z) = patch_of(at, cell);
    let (mut own, mut beside) = (None::<f32>, None::<f32>);
    for ((px, pz), level) in levels {
        let best = if (px, pz) == (x, z) {
            &mut own
        } else if (px - x).abs() <= 1 && (pz - z).abs() <= 1 {
            &mut beside
        } else {
            continue;
        };
        if best.is_none_or(|b| (level - sole).abs() < (b - sole).abs()) {
            *best = Some(level);
        }
    }
    own.or(beside)
}

/// Whether a sole standing at `sole` stands on the surface of a patch's `level`
/// (source model metres): closer to it than `RAISED` hips heights.
#[must_use]
pub fn same_surface(level: f32, sole: f32, hips_height: f32) -> bool {
    (sole - level).abs() < RAISED * hips_height
}

/// One level of a raised patch.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Patch {
    key: (i32, i32),
    /// The lowest raised slow sole on this surface of it, source model metres.
    level: f32,
    /// How long raised slow soles have stood on it, seconds.
    seconds: f32,
    /// The frame it was last stood on.
    used: u64,
}

/// The raised patches of one performer's source (module header).
#[derive(Debug, Clone, PartialEq)]
pub struct RaisedPatches {
    /// The first `len` are in use.
    patches: [Patch; PATCHES],
    len: usize,
    /// Frames taken so far.
    frame: u64,
}

impl Default for RaisedPatches {
    fn default() -> Self {
        Self {
            patches: [Patch::default(); PATCHES],
            len: 0,
            frame: 0,
        }
    }
}

impl RaisedPatches {
    /// Forgets every patch (after a jump in the stream).
    pub fn reset(&mut self) {
        *self = Self::default();
    }

    /// Starts a frame.
    pub fn next_frame(&mut self) {
        self.frame += 1;
    }

    /// Takes a standing sole (`STANDING`) at `at` (X, Z) at the height `sole` (both
    /// source model metres) over `floor` for `dt` seconds: kept when `RAISED` or more
    /// above it.
    pub fn take(&mut self, at: Vec2, sole: f32, floor: f32, dt: f32, hips_height: f32) {
        if !(sole.is_finite() && at.is_finite()) || sole - floor < RAISED * hips_height {
            return;
        }
        let key = patch_of(at, LEVEL_CELL * hips_height);
        let in_use = &mut self.patches[..self.len];
        let found = in_use
            .iter()
            .position(|p| p.key == key && same_surface(p.level, sole, hips_height));
        let k = match found {
            Some(k) => k,
            None if self.len < PATCHES => {
                self.len += 1;
                self.len - 1
            }
            // The least recently stood on gives way.
            None => (0..PATCHES)
                .min_by_key(|&k| self.patches[k].used)
                .unwrap_or(0),
        };
        let p = &mut self.patches[k];
        if found.is_none() {
            *p = Patch {
                key,
                level: sole,
                ..Patch::default()
            };
        }
        p.level = p.level.min(sole);
        p.seconds += dt.max(0.0);
        p.used = self.frame;
    }

    /// The floor under a sole at `at` (X, Z) at the height `sole`: the level of a
    /// raised patch (stood on for `LEVEL_SECONDS`, still `RAISED` above `floor`)
    /// under it or beside it (`level_under`), else `floor`.
    #[must_use]
    pub fn floor_under(&self, at: Vec2, sole: f32, floor: f32, hips_height: f32) -> f32 {
        let levels = self.patches[..self.len]
            .iter()
            .filter(|p| p.seconds >= LEVEL_SECONDS && p.level - floor >= RAISED * hips_height)
            .map(|p| (p.key, p.level));
        level_under(at, sole, LEVEL_CELL * hips_height, levels).unwrap_or(floor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_is_raised_once_stood_on_long_enough_and_only_there() {
        let mut patches = RaisedPatches::default();
        let (dt, h) = (1.0 / 60.0, 1.0);
        let on_box = Vec2::new(0.1, 1.1);
        // Just under `LEVEL_SECONDS` on a box 40 cm up: not yet a level.
        for _ in 0..(LEVEL_SECONDS / dt) as usize - 1 {
            patches.next_frame();
            patches.take(on_box, 0.4, 0.0, dt, h);
        }
        assert_eq!(patches.floor_under(on_box, 0.4, 0.0, h), 0.0);
        for _ in 0..3 {
            patches.next_frame();
            patches.take(on_box, 0.41, 0.0, dt, h);
        }
        assert_eq!(patches.floor_under(on_box, 0.4, 0.0, h), 0.4);
        // On across the box, its level; two patches on, the floor; a floor risen to
        // the box leaves no level.
        assert_eq!(
            patches.floor_under(on_box + Vec2::X * 0.2, 0.4, 0.0, h),
            0.4
        );
        assert_eq!(
            patches.floor_under(on_box + Vec2::X * 0.6, 0.4, 0.0, h),
            0.0
        );
        assert_eq!(patches.floor_under(on_box, 0.4, 0.35, h), 0.35);
        // A sole a little over the floor is no level.
        for _ in 0..60 {
            patches.next_frame();
            patches.take(Vec2::ZERO, 0.05, 0.0, dt, h);
        }
        assert_eq!(patches.floor_under(Vec2::ZERO, 0.05, 0.0, h), 0.0);
    }

    #[test]
    fn a_patch_with_two_surfaces_keeps_both_levels() {
        // Within one patch, a box top 30 cm up and a block on it 30 cm higher (rock
        // tops, a step beside a box): a sole on either stands on its own surface,
        // whichever was stood on first.
        let mut patches = RaisedPatches::default();
        let (dt, h) = (1.0 / 60.0, 1.0);
        let at = Vec2::new(0.1, 0.1);
        for level in [0.6, 0.3] {
            for _ in 0..=(LEVEL_SECONDS / dt) as usize {
                patches.next_frame();
                patches.take(at, level, 0.0, dt, h);
            }
        }
        assert_eq!(patches.floor_under(at, 0.61, 0.0, h), 0.6);
        assert_eq!(patches.floor_under(at, 0.31, 0.0, h), 0.3);
    }

    #[test]
    fn a_full_table_gives_way_to_the_newest_patch() {
        let mut patches = RaisedPatches::default();
        let (dt, h) = (0.1, 1.0);
        for i in 0..=PATCHES {
            let at = Vec2::new(i as f32 * 2.0 * LEVEL_CELL + 0.01, 0.01);
            for _ in 0..4 {
                patches.next_frame();
                patches.take(at, 0.5, 0.0, dt, h);
            }
        }
        let newest = Vec2::new(PATCHES as f32 * 2.0 * LEVEL_CELL + 0.01, 0.01);
        assert_eq!(patches.floor_under(newest, 0.5, 0.0, h), 0.5);
        assert_eq!(patches.floor_under(Vec2::new(0.01, 0.01), 0.5, 0.0, h), 0.0);
    }
}
