//! Writing to stdout and to files: reports (listings, `info`) with the
//! terminal controls of the server's strings escaped, data (a tool's
//! result, a resource's text, a prompt's messages) exact unless stdout is
//! a terminal, JSON as it is, and bytes (`read --raw`, `--output`).
//! A closed pipe (`golem-mcp list | head -1`) is not an error. It knows
//! nothing of what the text says.

use std::borrow::Cow;
use std::io::{IsTerminal, Write};
use std::path::Path;

use crate::failure::{Exit, Failure};

/// Writes a report to stdout (a listing, `info`, `ping`, completions):
/// JSON (`json`) exactly as it is, other text with every terminal control
/// the server's strings may carry escaped (newlines and tabs kept: the
/// text is laid out in lines), wherever stdout goes: the layout is
/// golem-mcp's, and a newline in a name must not break it.
pub fn emit(text: &str, json: bool) -> Result<(), Failure> {
    let text = match json {
        true => Cow::Borrowed(text),
        false => golem_terminal::text(text),
    };
    write_text(&text)
}

/// Writes data to stdout: a tool's result, a resource's text, a prompt's
/// messages. Exact in a pipe or a file (`golem-mcp call … > out.txt` holds
/// the tool's text, control characters and `\r\n` included), escaped on a
/// terminal, which is the user's and not the server's to drive; as `cat`,
/// `ls` and `jq -r` do.
pub fn emit_data(text: &str) -> Result<(), Failure> {
    write_text(&data_shown(text, std::io::stdout().is_terminal()))
}

/// Data as [`emit_data`] writes it: escaped for a terminal, exact otherwise.
fn data_shown(text: &str, terminal: bool) -> Cow<'_, str> {
    match terminal {
        true => golem_terminal::text(text),
        false => Cow::Borrowed(text),
    }
}

fn write_text(text: &str) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(error) => Err(Failure::new(
            Exit::Transport,
            format!("cannot write the output to stdout: {error}"),
        )),
    }
}

/// A listing that came back empty says so on stderr (`golem-mcp: the
/// server lists no prompts`), so that no output is not taken for a
/// failure; stdout gets the empty listing (nothing, or `--json`'s empty
/// array), as for a server that offers none of them.
pub fn note_if_empty<T>(listed: &[T], what: &str) {
    if listed.is_empty() {
        eprintln!("golem-mcp: the server lists no {what}");
    }
}

/// Writes `bytes` to stdout (`read --raw`); a closed pipe is not an error.
pub fn write_stdout(bytes: &[u8]) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(error) => Err(Failure::new(
            Exit::Transport,
            format!("cannot write the contents to stdout: {error}"),
        )),
    }
}

/// Writes `bytes` to the file at `path` (`read --output FILE`, `call
/// --output DIR`), replacing one that is there, as `curl -o` does: running
/// the same command again refreshes the file.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    std::fs::write(path, bytes).map_err(|error| {
        Failure::usage(format!(
            "--output {}: cannot write it: {error}",
            path.display()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_is_exact_unless_shown_on_a_terminal() {
        let data = "\x00\x01\x07\x1b[0m\x7f\r\n";
        assert_eq!(data_shown(data, false), data);
        assert_eq!(
            data_shown(data, true),
            "\\u{0}\\u{1}\\u{7}\\u{1b}[0m\\u{7f}\\r\n"
        );
    }
}
