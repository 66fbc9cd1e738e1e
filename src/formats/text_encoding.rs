//! Text files whose bytes are not UTF-8: BVH written by tools that save joint names
//! in the system's code page (Latin-1 `Épaule`, Shift-JIS `左腕` from MMD converters).
//!
//! UTF-8 (with or without a byte order mark) and UTF-16 with a mark are read as
//! they say. Anything else is guessed from its bytes by `chardetng`, the detector
//! Firefox uses for unlabeled pages, and decoded by `encoding_rs`; the guess is
//! returned as a note for `Rig::notes`, so `inspect` says how the names were read.

use std::borrow::Cow;

/// The text of `bytes`, and a note when it was not UTF-8 and its encoding was
/// guessed. Bytes the guessed encoding cannot map read as U+FFFD.
#[must_use]
pub fn decode(bytes: &[u8]) -> (Cow<'_, str>, Option<String>) {
    if let Some((encoding, bom)) = encoding_rs::Encoding::for_bom(bytes) {
        let (text, _) = encoding.decode_without_bom_handling(&bytes[bom..]);
        let note = (encoding != encoding_rs::UTF_8)
            .then(|| format!("text encoding: {} (byte order mark)", encoding.name()));
        return (text, note);
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        return (Cow::Borrowed(text), None);
    }
    let mut detector = chardetng::EncodingDetector::new();
    detector.feed(bytes, true);
    let encoding = detector.guess(None, false);
    let (text, _, unmappable) = encoding.decode(bytes);
    let unmapped = if unmappable {
        ", some bytes unmapped (U+FFFD)"
    } else {
        ""
    };
    let note = format!(
        "text encoding: not UTF-8; read as {}, guessed from its bytes{unmapped}",
        encoding.name()
    );
    (text, Some(note))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_reads_as_it_is_without_a_note() {
        let (text, note) = decode("ROOT Hüfte\n".as_bytes());
        assert_eq!(text, "ROOT Hüfte\n");
        assert!(note.is_none());
        let (text, note) = decode(b"\xef\xbb\xbfROOT Hips\n");
        assert_eq!(text, "ROOT Hips\n");
        assert!(note.is_none());
    }

    #[test]
    fn latin1_names_read_as_their_letters() {
        let bytes = b"HIERARCHY\nROOT Hanche\n{\n  JOINT \xc9paule_Gauche\n  JOINT Bra\xe7o\n  \
                      JOINT Ellenbogen_R\xfcck\n}\n";
        let (text, note) = decode(bytes);
        assert!(text.contains("Épaule_Gauche"), "{text}");
        assert!(text.contains("Braço"), "{text}");
        assert!(text.contains("Ellenbogen_Rück"), "{text}");
        let note = note.expect("a note");
        assert!(note.contains("windows-1252"), "{note}");
    }

    #[test]
    fn shift_jis_names_read_as_their_letters() {
        let names = [
            "センター",
            "上半身",
            "首",
            "頭",
            "左肩",
            "左腕",
            "左ひじ",
            "左手首",
            "右足",
        ];
        let text: String = names
            .iter()
            .map(|n| format!("  JOINT {n}\n  {{\n"))
            .collect();
        let text = format!("HIERARCHY\nROOT 全ての親\n{{\n{text}}}\n");
        let (bytes, _, _) = encoding_rs::SHIFT_JIS.encode(&text);
        let (read, note) = decode(&bytes);
        assert_eq!(read, text);
        let note = note.expect("a note");
        assert!(note.contains("Shift_JIS"), "{note}");
    }

    #[test]
    fn utf16_with_a_byte_order_mark_reads_and_says_so() {
        let mut bytes = vec![0xff, 0xfe];
        for unit in "ROOT Hüfte".encode_utf16() {
            bytes.extend_from_slice(&unit.to_le_bytes());
        }
        let (text, note) = decode(&bytes);
        assert_eq!(text, "ROOT Hüfte");
        assert!(note.expect("a note").contains("UTF-16LE"));
    }
}
