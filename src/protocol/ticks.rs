//! Frames a stream of OSC updates by the sender's tick, whether its messages come
//! bundled or bare (one message per datagram, as VRChat documents its trackers).
//!
//! OSC has no frame marker that every sender sends, and a tick's messages may come
//! in one bundle, in several, or one per datagram. What every tick shares is that a
//! sender sets each of its addresses once per tick. So each message names what it
//! sets as a key (below 64: a tracker's position, a bone), and a frame ends:
//!
//! - **on a repeat**: before a message that sets a key the open frame already holds
//!   (the sender's next tick has begun);
//! - **when complete**: after a message that leaves the open frame holding every
//!   key of the frame before it (the tick is whole; no need to wait for the next);
//! - **on a newcomer**: after a message that opens a frame with a key the frame
//!   before did not hold (a tracker that came back, sent after the tick was already
//!   whole): it is handed on alone and belongs to every frame from then on, rather
//!   than starting the frames one message early for good;
//! - **at the end of a bundle**, until a frame has ended by the rules above: OSC
//!   bundles are applied as one, so a stream of whole-tick bundles is framed from
//!   its first datagram.
//!
//! A stream of bare messages thus hands on its first tick when its second begins,
//! and every later tick as its last message arrives. A sender that varies what it
//! sends per tick is still framed about once per tick (by the repeat). No timers:
//! the framing is the same however the datagrams are spread in time.

/// Where a stream's frame stands: the keys set since the last frame ended and
/// those of the frame before.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ticks {
    /// Keys set in the open frame, bit `key`.
    open: u64,
    /// Keys of the last frame that ended; `None` until one has.
    last: Option<u64>,
}

impl Ticks {
    /// Call before applying a message that sets `key` (below 64): whether the open
    /// frame ends first (it already holds `key`). Then call `set`.
    #[must_use]
    pub fn repeats(&mut self, key: u32) -> bool {
        debug_assert!(key < 64, "tick keys are below 64");
        if self.open & (1 << key) != 0 {
            self.end();
            true
        } else {
            false
        }
    }

    /// Call after applying a message that set `key`: whether the open frame ends
    /// with it (it now holds every key of the frame before, or it is a newcomer).
    #[must_use]
    pub fn set(&mut self, key: u32) -> bool {
        debug_assert!(key < 64, "tick keys are below 64");
        let bit = 1 << key;
        let opens = self.open == 0;
        self.open |= bit;
        match self.last {
            Some(last) if opens && last & bit == 0 => {
                self.open = 0;
                self.last = Some(last | bit);
                true
            }
            Some(last) if self.open & last == last => {
                self.end();
                true
            }
            _ => false,
        }
    }

    /// Call at the end of a datagram: whether the open frame ends with it (the
    /// datagram was a bundle, no frame has ended yet, and this one holds a key).
    #[must_use]
    pub fn datagram_end(&mut self, bundle: bool) -> bool {
        if bundle && self.last.is_none() && self.open != 0 {
            self.end();
            true
        } else {
            false
        }
    }

    fn end(&mut self) {
        self.last = Some(std::mem::take(&mut self.open));
    }
}

/// Whether a datagram is an OSC bundle (not a bare message).
#[must_use]
pub fn is_bundle(datagram: &[u8]) -> bool {
    datagram.starts_with(b"#bundle\0")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds ticks of keys as datagrams (`bundled`: one datagram per tick, else
    /// one per key) and says after which key of which tick each frame ended.
    fn frames(ticks: &[&[u32]], bundled: bool) -> Vec<(usize, usize)> {
        let mut t = Ticks::default();
        let mut ends = Vec::new();
        // The last key applied, as (tick, index in it).
        let mut last = None;
        for (tick, keys) in ticks.iter().enumerate() {
            for (i, &key) in keys.iter().enumerate() {
                if t.repeats(key) {
                    ends.push(last.expect("a frame ends after a key"));
                }
                if t.set(key) {
                    ends.push((tick, i));
                }
                last = Some((tick, i));
                let datagram_ends = !bundled || i + 1 == keys.len();
                if datagram_ends && t.datagram_end(bundled) {
                    ends.push((tick, i));
                }
            }
        }
        ends
    }

    #[test]
    fn bare_messages_give_one_frame_per_tick() {
        let tick: &[u32] = &[0, 1, 2, 3, 4, 5];
        // The first tick ends when the second begins, every later one at its last
        // message; the fifth is whole but the stream stops there.
        let got = frames(&[tick; 5], false);
        assert_eq!(got, vec![(0, 5), (1, 5), (2, 5), (3, 5), (4, 5)]);
    }

    #[test]
    fn whole_tick_bundles_are_frames_from_the_first() {
        let tick: &[u32] = &[0, 1, 2, 3];
        assert_eq!(
            frames(&[tick; 3], true),
            vec![(0, 3), (1, 3), (2, 3)],
            "one frame per bundle"
        );
    }

    #[test]
    fn a_tracker_that_drops_out_and_comes_back_leaves_whole_ticks() {
        // Tracker 3 drops out in the third tick and is back in the fifth.
        let full: &[u32] = &[0, 1, 2, 3];
        let short: &[u32] = &[0, 1, 2];
        let got = frames(&[full, full, short, short, full, full, full], false);
        // The first short tick ends on the repeat (one tick late), the next one
        // when whole; the returning tracker comes after its tick was whole, so it
        // is a frame of its own, and from then on ticks are whole again.
        assert_eq!(
            got,
            vec![
                (0, 3),
                (1, 3),
                (2, 2),
                (3, 2),
                (4, 2),
                (4, 3),
                (5, 3),
                (6, 3)
            ]
        );
    }

    #[test]
    fn the_order_within_a_tick_does_not_matter() {
        let got = frames(&[&[0, 1, 2], &[2, 0, 1], &[1, 2, 0], &[0, 2, 1]], false);
        assert_eq!(got, vec![(0, 2), (1, 2), (2, 2), (3, 2)]);
    }

    #[test]
    fn bundles_of_one_tracker_each_settle_into_ticks() {
        // Each bundle holds one tracker's two halves (keys 2n, 2n+1).
        let mut t = Ticks::default();
        let mut frames = 0;
        for _tick in 0..10 {
            for tracker in 0..4u32 {
                for key in [2 * tracker, 2 * tracker + 1] {
                    frames += usize::from(t.repeats(key));
                    frames += usize::from(t.set(key));
                }
                frames += usize::from(t.datagram_end(true));
            }
        }
        // The first tick: the first bundle, then each of the other six keys as a
        // newcomer; then one per tick.
        assert_eq!(frames, 1 + 6 + 9);
    }

    #[test]
    fn bundles_are_told_from_bare_messages() {
        assert!(is_bundle(b"#bundle\0\0\0\0\0\0\0\0\x01"));
        assert!(!is_bundle(b"/tracking/trackers/1/position\0\0\0"));
        assert!(!is_bundle(b""));
    }
}
