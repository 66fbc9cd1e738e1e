//! Frame numbers as a note writes them: 1-based, neighbours run together into
//! ranges (`1-3, 9`). Loaders that hold or fill some frames of a clip name them so.

/// `frames` (0-based, ascending) as 1-based ranges joined by commas: `1-3, 9`.
pub(crate) fn frame_ranges(frames: impl IntoIterator<Item = usize>) -> String {
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for f in frames {
        match ranges.last_mut() {
            Some(last) if last.1 + 1 == f => last.1 = f,
            _ => ranges.push((f, f)),
        }
    }
    let ranges: Vec<String> = ranges
        .iter()
        .map(|&(a, b)| match a == b {
            true => format!("{}", a + 1),
            false => format!("{}-{}", a + 1, b + 1),
        })
        .collect();
    ranges.join(", ")
}

#[cfg(test)]
mod tests {
    use super::frame_ranges;

    #[test]
    fn neighbouring_frames_run_together_one_based() {
        assert_eq!(frame_ranges([0, 1, 2, 8]), "1-3, 9");
        assert_eq!(frame_ranges([4]), "5");
        assert_eq!(frame_ranges([]), "");
    }
}
