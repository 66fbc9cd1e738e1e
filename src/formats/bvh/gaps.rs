//! Gaps in a capture: motion values written as `nan` where the system lost a marker
//! or a tracked point for a few frames (numpy and most C runtimes print a missing
//! value so; MSVC as `-nan(ind)` or `1.#QNAN`). The take is kept: each missing value
//! is filled from its own channel, linearly between the nearest values before and
//! after it in time, or held from the only side that has one at the take's start or
//! end. A rotation channel is filled the short way round (a gap between 179° and
//! −179° passes through 180°, not 0°). Pure: file values in, file values out.

/// Whether a motion word is a written-out missing value rather than a number.
pub(super) fn is_gap(word: &str) -> bool {
    let word = word.to_ascii_lowercase();
    let unsigned = word.trim_start_matches(['-', '+']);
    unsigned == "nan"
        || unsigned.starts_with("nan(")
        || ["1.#qnan", "1.#snan", "1.#ind"].contains(&unsigned)
}

/// What filling the gaps of a take did.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Filled {
    /// Missing values filled.
    pub(super) values: usize,
    /// Frames with at least one missing value.
    pub(super) frames: usize,
    /// The longest run of frames one channel misses.
    pub(super) longest: usize,
}

/// Fills every NaN of `values` (`frames × rotation.len()`, frame-major) from its
/// channel; `rotation[c]` says channel `c` is an angle in degrees. `Ok(None)` when
/// nothing is missing; `Err(c)` when channel `c` has no value in any frame, so that
/// nothing can fill it.
pub(super) fn fill(
    values: &mut [f32],
    rotation: &[bool],
    frames: usize,
) -> Result<Option<Filled>, usize> {
    let width = rotation.len();
    if width == 0
        || frames == 0
        || values.len() < frames * width
        || !values.iter().any(|v| v.is_nan())
    {
        return Ok(None);
    }
    let missing_frames = (0..frames)
        .filter(|f| {
            values[f * width..(f + 1) * width]
                .iter()
                .any(|v| v.is_nan())
        })
        .count();
    let mut filled = Filled {
        values: 0,
        frames: missing_frames,
        longest: 0,
    };
    for (c, &angle) in rotation.iter().enumerate() {
        let at = |f: usize| f * width + c;
        let known: Vec<usize> = (0..frames).filter(|&f| !values[at(f)].is_nan()).collect();
        let (Some(&first), Some(&last)) = (known.first(), known.last()) else {
            return Err(c);
        };
        for f in 0..first {
            values[at(f)] = values[at(first)];
        }
        for f in last + 1..frames {
            values[at(f)] = values[at(last)];
        }
        filled.longest = filled.longest.max(first).max(frames - 1 - last);
        filled.values += first + (frames - 1 - last);
        for pair in known.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            if b - a < 2 {
                continue;
            }
            let (from, to) = (values[at(a)], values[at(b)]);
            let step = if angle {
                (to - from + 180.0).rem_euclid(360.0) - 180.0
            } else {
                to - from
            };
            for f in a + 1..b {
                values[at(f)] = from + step * (f - a) as f32 / (b - a) as f32;
            }
            filled.longest = filled.longest.max(b - a - 1);
            filled.values += b - a - 1;
        }
    }
    Ok(Some(filled))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_for_a_missing_value_are_gaps_and_numbers_are_not() {
        for word in [
            "nan",
            "NaN",
            "-nan",
            "+NAN",
            "-nan(ind)",
            "nan(snan)",
            "1.#QNAN",
            "-1.#IND",
        ] {
            assert!(is_gap(word), "{word}");
        }
        for word in ["0", "-1.5", "inf", "-infinity", "1e39", "banana", "n"] {
            assert!(!is_gap(word), "{word}");
        }
    }

    #[test]
    fn a_gap_inside_a_channel_is_filled_along_the_line_between_its_ends() {
        // Two channels, a position and an angle, over five frames.
        let nan = f32::NAN;
        let mut values = [
            0.0, 170.0, //
            nan, nan, //
            nan, nan, //
            nan, nan, //
            4.0, -150.0,
        ];
        let filled = fill(&mut values, &[false, true], 5);
        assert_eq!(
            filled,
            Ok(Some(Filled {
                values: 6,
                frames: 3,
                longest: 3
            }))
        );
        // The position goes straight; the angle the short way, through 180°.
        let expect = [0.0, 170.0, 1.0, 180.0, 2.0, 190.0, 3.0, 200.0, 4.0, -150.0];
        for (v, e) in values.iter().zip(expect) {
            assert!((v - e).abs() < 1e-4, "{values:?}");
        }
    }

    #[test]
    fn a_gap_at_either_end_holds_the_nearest_value() {
        let nan = f32::NAN;
        let mut values = [nan, 5.0, 7.0, nan, nan];
        let filled = fill(&mut values, &[false], 5);
        assert_eq!(
            filled,
            Ok(Some(Filled {
                values: 3,
                frames: 3,
                longest: 2
            }))
        );
        assert_eq!(values, [5.0, 5.0, 7.0, 7.0, 7.0]);
    }

    #[test]
    fn a_channel_missing_in_every_frame_cannot_be_filled_and_whole_takes_are_left_alone() {
        let nan = f32::NAN;
        assert_eq!(fill(&mut [1.0, nan, 2.0, nan], &[false, true], 2), Err(1));
        let mut whole = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(fill(&mut whole, &[false, true], 2), Ok(None));
        assert_eq!(whole, [1.0, 2.0, 3.0, 4.0]);
    }
}
