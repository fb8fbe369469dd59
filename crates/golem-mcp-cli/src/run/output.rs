//! Writing to stdout and to files: the rendered text (its terminal
//! controls escaped), JSON as it is, or `read`'s bytes.
//! A closed pipe (`golem-mcp list | head -1`) is not an error. It knows
//! nothing of what the text says.

use std::io::Write;
use std::path::Path;

use crate::failure::{Exit, Failure};

/// Writes `text` to stdout: JSON (`json`) exactly as it is, other text
/// with every terminal control the server's strings may carry escaped
/// (newlines and tabs kept: the text is laid out in lines). A closed pipe
/// (`golem-mcp list | head -1`) is not an error.
pub fn emit(text: &str, json: bool) -> Result<(), Failure> {
    let text = match json {
        true => std::borrow::Cow::Borrowed(text),
        false => golem_terminal::text(text),
    };
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

pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    std::fs::write(path, bytes).map_err(|error| {
        Failure::usage(format!(
            "--output {}: cannot write it: {error}",
            path.display()
        ))
    })
}
