//! The text of a BVH file as words with their line numbers: the lexer hands out
//! one word at a time, or the rest of a line where the grammar needs it (joint
//! names, channel lists, motion); plus quoting file text in messages and reading
//! a finite number.

use std::path::Path;

use super::BvhError;

/// Longest piece of file text quoted in an error message, in characters.
const MAX_QUOTE: usize = 40;

/// One whitespace-separated word and its line (from 1).
#[derive(Debug, Clone, Copy)]
pub(super) struct Token<'a> {
    pub(super) text: &'a str,
    pub(super) line: usize,
}

/// The lines of `text`, ended by `\n`, `\r\n` or a lone `\r` (classic Mac OS line
/// ends, as Poser and Second Life tools of that platform write them); no last empty
/// line after a final line end, as `str::lines`.
fn lines(text: &str) -> Vec<&str> {
    let text = text.strip_suffix('\n').unwrap_or(text);
    let text = text.strip_suffix('\r').unwrap_or(text);
    if text.is_empty() {
        return Vec::new();
    }
    text.split('\n')
        .flat_map(|line| line.strip_suffix('\r').unwrap_or(line).split('\r'))
        .collect()
}

/// Splits the text into words, keeping line numbers, and hands out the rest of a
/// line when the grammar needs it (joint names, channel lists, motion).
pub(super) struct Lexer<'a> {
    lines: Vec<&'a str>,
    /// Index of the current line (from 0).
    line: usize,
    /// Byte offset in the current line of the first character not yet read.
    col: usize,
}

impl<'a> Lexer<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Self {
            lines: lines(text),
            line: 0,
            col: 0,
        }
    }

    pub(super) fn next(&mut self) -> Option<Token<'a>> {
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
    pub(super) fn mark(&self) -> (usize, usize) {
        (self.line, self.col)
    }

    pub(super) fn reset(&mut self, (line, col): (usize, usize)) {
        self.line = line;
        self.col = col;
    }

    pub(super) fn peek(&mut self) -> Option<Token<'a>> {
        let mark = self.mark();
        let token = self.next();
        self.reset(mark);
        token
    }

    /// The unread rest of the current line, trimmed; the lexer moves to the next line.
    pub(super) fn rest_of_line(&mut self) -> &'a str {
        let current: &'a str = self.lines.get(self.line).copied().unwrap_or("");
        let rest = current.get(self.col..).unwrap_or("");
        self.line += 1;
        self.col = 0;
        rest.trim()
    }

    /// Like `rest_of_line`, but a trailing `{` (`ROOT Hips {`) is left to be read.
    pub(super) fn name(&mut self) -> &'a str {
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
    pub(super) fn last_line(&self) -> usize {
        self.lines.len().max(1)
    }

    /// The unread rest of the current line, then every following line, with numbers.
    pub(super) fn into_remaining_lines(self) -> impl Iterator<Item = (usize, &'a str)> {
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
pub(super) fn quote(text: &str) -> String {
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

pub(super) fn is(token: Token<'_>, keyword: &str) -> bool {
    token.text.eq_ignore_ascii_case(keyword)
}

/// `text` without `prefix`, compared ignoring ASCII case.
pub(super) fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    text.get(..prefix.len())
        .filter(|head| head.eq_ignore_ascii_case(prefix))
        .and_then(|_| text.get(prefix.len()..))
}

/// A finite number read from the file; `index` counts from 1 along the line or
/// `OFFSET`, for the message.
pub(super) fn number(path: &Path, text: &str, line: usize, index: usize) -> Result<f32, BvhError> {
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
