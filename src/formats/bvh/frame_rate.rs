//! A frame time written rounded: some exporters (Perception Neuron's among them)
//! write `Frame Time: 0.017` for a 60 Hz take, 58.8 frames a second as written, a
//! rate no capture runs at, and the take plays 2% slow, drifting 1.2 s a minute from
//! its sound or video. A frame time written with two significant digits whose
//! reciprocal is no whole number of frames a second is read as the one common capture
//! rate that rounds to it (`0.017` → 60, `0.033` → 30, `0.042` → 24), with a note. A
//! frame time that is a whole rate as written (`0.008`, 125 Hz; `0.04`, 25 Hz), one
//! written with one digit (`0.03` is 28.6-40 frames a second rounded, too coarse to
//! tell) and any written more exactly stay as they are: the writer may mean them.

/// Capture and video rates a rounded frame time is read as, frames a second.
const RATES: [f32; 14] = [
    15.0, 20.0, 24.0, 25.0, 30.0, 48.0, 50.0, 60.0, 72.0, 90.0, 100.0, 120.0, 144.0, 240.0,
];

/// How close a rate must be to a whole number of frames a second to be one.
const WHOLE: f32 = 1e-4;

/// The frame time `text` (parsed as `time`) stands for when it is written rounded
/// (see the module header), with the note saying so; `None` to keep it as written.
pub(super) fn rounded_frame_time(text: &str, time: f32) -> Option<(f32, String)> {
    let digits = text.trim_start_matches(['+', '-']);
    if !digits.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let decimals = digits.split_once('.').map_or(0, |(_, d)| d.len());
    let significant = digits
        .bytes()
        .filter(u8::is_ascii_digit)
        .skip_while(|&b| b == b'0')
        .count();
    let written = 1.0 / time;
    if significant != 2 || (written - written.round()).abs() <= WHOLE * written {
        return None;
    }
    let half = 0.5 * 10f32.powi(-i32::try_from(decimals).ok()?);
    let mut near = RATES
        .iter()
        .copied()
        .filter(|&rate| (1.0 / rate - time).abs() <= half);
    let (Some(rate), None) = (near.next(), near.next()) else {
        return None;
    };
    let note = format!(
        "frame time `{text}` s is {written:.1} frames a second, a rate no capture runs at: \
         read as {rate} frames a second, which rounds to it ({:.6} s a frame)",
        1.0 / rate
    );
    Some((1.0 / rate, note))
}

#[cfg(test)]
mod tests {
    use super::rounded_frame_time;

    fn read(text: &str) -> Option<f32> {
        let time: f32 = text.parse().expect("a number");
        rounded_frame_time(text, time).map(|(t, _)| (1.0 / t).round())
    }

    #[test]
    fn a_frame_time_written_rounded_is_the_common_rate_that_rounds_to_it() {
        assert_eq!(read("0.017"), Some(60.0));
        assert_eq!(read("0.033"), Some(30.0));
        assert_eq!(read(".033"), Some(30.0));
        assert_eq!(read("0.042"), Some(24.0));
        assert_eq!(read("0.0083"), Some(120.0));
        assert_eq!(read("0.067"), Some(15.0));
        assert_eq!(read("0.0069"), Some(144.0));
        assert_eq!(read("0.0042"), Some(240.0));
        let (_, note) = rounded_frame_time("0.017", 0.017).expect("rounded");
        assert_eq!(
            note,
            "frame time `0.017` s is 58.8 frames a second, a rate no capture runs at: read as \
             60 frames a second, which rounds to it (0.016667 s a frame)"
        );
    }

    #[test]
    fn a_whole_rate_or_an_exact_frame_time_stays_as_written() {
        // Whole rates as written: 125, 25, 40 and 10 frames a second.
        for text in ["0.008", "0.04", "0.025", "0.1"] {
            assert_eq!(read(text), None, "{text}");
        }
        // Written exactly enough to mean what they say.
        for text in ["0.0333333", "0.016667", "0.008342", "0.034483", "1e-2"] {
            assert_eq!(read(text), None, "{text}");
        }
        // One digit is too coarse to say what it was rounded from.
        assert_eq!(read("0.03"), None);
        // No common rate rounds to it (1/0.37 = 2.7 frames a second).
        assert_eq!(read("0.37"), None);
    }
}
