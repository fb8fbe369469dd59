//! Text that others wrote, made safe to print on a terminal.
//!
//! An MCP server, an authorization server or a model can put anything in
//! the strings a command prints: ANSI escape sequences that recolour or
//! clear the screen, OSC 52 (a write to the clipboard), OSC 8 (a link that
//! shows one URL and opens another), a title change, a carriage return that
//! overwrites what the command wrote, bidirectional-text controls that
//! reorder what the user reads, or a newline followed by a line that looks
//! like the command's own. A terminal is not theirs to drive: every
//! function here shows such characters escaped (`\u{1b}`, `\r`), so the
//! user sees that they were sent and nothing acts on them.
//!
//! - [`text`]: a block of text (a tool's result, a description): newlines
//!   and tabs kept, everything else that controls the terminal escaped.
//! - [`one_line`]: a name, a title, a field: newlines escaped too.
//! - [`message`]: a command's own status line on stderr, with text of
//!   others inside: continuation lines indented, so that no line of it can
//!   pass for a line of the command's.
//!
//! Each returns its input untouched (borrowed) when there is nothing to
//! escape. JSON output needs none of this: it is printed exact.

use std::borrow::Cow;
use std::fmt::Write as _;

/// `text` with every character that controls a terminal escaped, except
/// newlines and tabs: for blocks of text laid out in lines.
///
/// ```
/// assert_eq!(golem_terminal::text("a\nb\tc"), "a\nb\tc");
/// assert_eq!(golem_terminal::text("\x1b[2Jgone\r"), "\\u{1b}[2Jgone\\r");
/// ```
pub fn text(text: &str) -> Cow<'_, str> {
    escape(text, |c| c == '\n' || c == '\t')
}

/// `text` with every character that controls a terminal escaped, newlines
/// included: for a name, a title or a field printed within a line.
///
/// ```
/// assert_eq!(golem_terminal::one_line("fine"), "fine");
/// assert_eq!(golem_terminal::one_line("a\nb"), "a\\nb");
/// ```
pub fn one_line(text: &str) -> Cow<'_, str> {
    escape(text, |c| c == '\t')
}

/// A status line of the command's own that carries text of others: its
/// terminal controls escaped, and every line after the first indented by
/// two spaces, so that a newline in a server's error message cannot start
/// a line that looks like the command's (`golem-mcp: …`).
///
/// ```
/// let shown = golem_terminal::message("failed: bad\ngolem-mcp: all fine");
/// assert_eq!(shown, "failed: bad\n  golem-mcp: all fine");
/// ```
pub fn message(text: &str) -> Cow<'_, str> {
    let escaped = self::text(text);
    if !escaped.trim_end_matches('\n').contains('\n') {
        return escaped;
    }
    let mut out = String::with_capacity(escaped.len() + 16);
    for (index, line) in escaped.trim_end_matches('\n').split('\n').enumerate() {
        if index > 0 {
            out.push('\n');
            if !line.is_empty() {
                out.push_str("  ");
            }
        }
        out.push_str(line);
    }
    Cow::Owned(out)
}

/// Whether `c` changes what a terminal shows other than by printing
/// itself: the C0 and C1 controls and DEL (ESC among them, which starts
/// every escape sequence), and the bidirectional-text controls.
fn controls_the_terminal(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn escape(text: &str, kept: impl Fn(char) -> bool) -> Cow<'_, str> {
    let needs = |c: char| controls_the_terminal(c) && !kept(c);
    let Some(first) = text.find(needs) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 16);
    out.push_str(&text[..first]);
    for c in text[first..].chars() {
        if needs(c) {
            match c {
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                _ => {
                    let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
                }
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every way a string can drive a terminal that a review found servers
    /// can send: CSI, OSC 52 and OSC 8 (BEL- and ST-terminated), a title
    /// change, 8-bit CSI, a carriage return, backspaces, DEL, bidi
    /// overrides, and a forged line.
    const HOSTILE: &str = "\x1b[31mred\x1b[0m \x1b]52;c;aGk=\x07 \x1b]8;;https://evil\x1b\\link\x1b]8;;\x1b\\ \x1b]0;title\x07 \u{9b}2J \rover\x08\x08 \x7f \u{202e}txt.exe\u{202c} \u{2066}x\u{2069}\ngolem-mcp: forged";

    fn no_controls(shown: &str, newlines: bool) {
        for c in shown.chars() {
            assert!(
                !controls_the_terminal(c) || (newlines && c == '\n'),
                "{c:?} left in {shown:?}"
            );
        }
    }

    #[test]
    fn nothing_that_drives_a_terminal_is_left() {
        no_controls(&text(HOSTILE), true);
        no_controls(&one_line(HOSTILE), false);
        no_controls(&message(HOSTILE), true);
        assert!(text(HOSTILE).contains("\\u{1b}]52;c;aGk=\\u{7}"));
        assert!(text(HOSTILE).contains("\\rover"));
        assert!(text(HOSTILE).contains("\\u{202e}txt.exe"));
    }

    #[test]
    fn a_forged_line_is_indented_under_the_message() {
        let shown = message(HOSTILE);
        assert!(
            shown.lines().skip(1).all(|line| line.starts_with("  ")),
            "{shown}"
        );
        assert!(shown.contains("\n  golem-mcp: forged"), "{shown}");
        assert_eq!(message("one line\n"), "one line\n");
        assert_eq!(message("a\n\nb"), "a\n\n  b");
    }

    #[test]
    fn plain_text_is_borrowed_as_it_is() {
        for plain in ["", "plain", "héllo wörld ✓", "a\tb\nc"] {
            assert!(matches!(text(plain), Cow::Borrowed(_)), "{plain:?}");
        }
        assert!(matches!(one_line("a\tb"), Cow::Borrowed(_)));
        assert_eq!(one_line("a\nb\r"), "a\\nb\\r");
    }
}
