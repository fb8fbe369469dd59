//! `call --output DIR`: the binary items of a tool's result (images, audio,
//! embedded resource blobs) decoded from base64 and written to files in
//! `DIR`, one each, named by the tool and the item's index in the content
//! list with the media type's extension (`get-tiny-image-1.png`). The
//! bytes are decoded as `read` decodes a blob, and written as `read
//! --output` writes its file (`run/output.rs`). It knows nothing of how
//! the result is printed beyond saying where each item went.

use std::path::{Path, PathBuf};

use golem_mcp::{Content, ResourceContents};

use crate::failure::{Exit, Failure};
use crate::render::content::Saved;
use crate::run::output::write_file;

/// The longest tool name a file name keeps, in bytes: file systems allow
/// 255, and the index and extension follow it.
const MAX_NAME: usize = 100;

/// Writes every binary item of `content` to `dir` (made if missing; a file
/// already there is replaced, as `curl -o` does) and returns where each
/// went. Every item is decoded before any is written: data that is not
/// base64 fails the command (exit 4) and writes nothing.
pub fn save_binaries(tool: &str, content: &[Content], dir: &Path) -> Result<Vec<Saved>, Failure> {
    let decoded = content
        .iter()
        .enumerate()
        .filter_map(|(index, item)| binary(item).map(|found| (index, found)))
        .map(|(index, (data, mime_type))| {
            decode(tool, index, data).map(|bytes| (index, mime_type, bytes))
        })
        .collect::<Result<Vec<_>, Failure>>()?;
    std::fs::create_dir_all(dir).map_err(|error| {
        Failure::usage(format!(
            "--output {}: cannot make the directory: {error}",
            dir.display()
        ))
    })?;
    decoded
        .into_iter()
        .map(|(index, mime_type, bytes)| {
            let path = dir.join(file_name(tool, index, mime_type));
            write_file(&path, &bytes)?;
            Ok(Saved {
                index,
                path,
                bytes: bytes.len(),
            })
        })
        .collect()
}

/// An item's base64 data and media type, if it is binary: an image, audio,
/// or an embedded resource with a blob.
fn binary(item: &Content) -> Option<(&str, Option<&str>)> {
    match item {
        Content::Image { data, mime_type } | Content::Audio { data, mime_type } => {
            Some((data, Some(mime_type)))
        }
        Content::Resource {
            blob: Some(blob),
            mime_type,
            text: None,
            ..
        } => Some((blob, mime_type.as_deref())),
        _ => None,
    }
}

/// The bytes of item `index`'s base64 data, decoded as `read` decodes a
/// resource's blob (padding optional, as servers differ).
fn decode(tool: &str, index: usize, data: &str) -> Result<Vec<u8>, Failure> {
    let blob = ResourceContents::Blob {
        uri: String::new(),
        mime_type: None,
        blob: data.to_owned(),
    };
    blob.decode().map_err(|_| {
        Failure::new(
            Exit::Transport,
            format!(
                "tools/call {tool}: content item {index} is not valid base64; \
                 nothing was written to --output"
            ),
        )
    })
}

/// `TOOL-INDEX.EXT`: the tool's name made safe for a file name, the item's
/// index in the content list (as `--json` numbers it, from 0) and the
/// media type's extension.
pub fn file_name(tool: &str, index: usize, mime_type: Option<&str>) -> PathBuf {
    PathBuf::from(format!(
        "{}-{index}.{}",
        safe_name(tool),
        extension(mime_type)
    ))
}

/// A tool's name as part of a file name: letters, digits, `-`, `_` and `.`
/// kept, anything else (a `/`, a space, a control character) as `_`; no
/// leading dot (a hidden file, `..`), cut to [`MAX_NAME`] bytes.
fn safe_name(tool: &str) -> String {
    let mut name: String = tool
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '_' | '.' => c,
            _ => '_',
        })
        .take(MAX_NAME)
        .collect();
    if name.starts_with('.') {
        name.replace_range(..1, "_");
    }
    match name.is_empty() {
        true => "tool".to_owned(),
        false => name,
    }
}

/// The usual extension of a media type (its parameters and case ignored),
/// `bin` for one not known.
fn extension(mime_type: Option<&str>) -> &'static str {
    let essence = mime_type
        .and_then(|mime| mime.split(';').next())
        .map(|mime| mime.trim().to_ascii_lowercase())
        .unwrap_or_default();
    match essence.as_str() {
        "image/png" => "png",
        "image/jpeg" | "image/jpg" | "image/pjpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "image/bmp" | "image/x-bmp" => "bmp",
        "image/tiff" => "tiff",
        "image/avif" => "avif",
        "image/heic" => "heic",
        "image/x-icon" | "image/vnd.microsoft.icon" => "ico",
        "audio/wav" | "audio/wave" | "audio/x-wav" | "audio/vnd.wave" => "wav",
        "audio/mpeg" | "audio/mp3" => "mp3",
        "audio/ogg" => "ogg",
        "audio/opus" => "opus",
        "audio/flac" | "audio/x-flac" => "flac",
        "audio/aac" => "aac",
        "audio/mp4" | "audio/x-m4a" => "m4a",
        "audio/webm" => "weba",
        "application/pdf" => "pdf",
        "application/json" => "json",
        "application/gzip" | "application/x-gzip" => "gz",
        "application/zip" => "zip",
        "application/xml" | "text/xml" => "xml",
        "text/plain" => "txt",
        "text/html" => "html",
        "text/csv" => "csv",
        "text/markdown" => "md",
        _ => "bin",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_named_by_the_tool_the_index_and_the_media_type() {
        let name = |tool, index, mime| file_name(tool, index, mime).display().to_string();
        assert_eq!(
            name("get-tiny-image", 1, Some("image/png")),
            "get-tiny-image-1.png"
        );
        assert_eq!(
            name("speak", 0, Some("audio/WAV; rate=8000")),
            "speak-0.wav"
        );
        assert_eq!(name("zip", 2, Some("application/gzip")), "zip-2.gz");
        assert_eq!(name("blob", 3, None), "blob-3.bin");
        assert_eq!(name("odd", 0, Some("application/x-unknown")), "odd-0.bin");
    }

    #[test]
    fn a_tool_name_cannot_leave_the_directory_or_hide_the_file() {
        assert_eq!(safe_name("../../etc/passwd"), "_._.._etc_passwd");
        assert_eq!(safe_name(".hidden"), "_hidden");
        assert_eq!(safe_name("a b\nc/d"), "a_b_c_d");
        assert_eq!(safe_name(""), "tool");
        assert_eq!(safe_name(&"x".repeat(300)).len(), MAX_NAME);
        assert_eq!(safe_name("ünï"), "_n_");
    }

    #[test]
    fn nothing_is_written_when_an_item_is_not_base64() {
        let dir = std::env::temp_dir().join(format!("golem-mcp-save-{}", std::process::id()));
        let content = [
            Content::Image {
                data: "AAEC".into(),
                mime_type: "image/png".into(),
            },
            Content::Audio {
                data: "not base64!".into(),
                mime_type: "audio/wav".into(),
            },
        ];
        let failure = save_binaries("t", &content, &dir).expect_err("invalid base64");
        assert_eq!(failure.exit, Exit::Transport);
        assert!(
            failure.message.contains("content item 1"),
            "{}",
            failure.message
        );
        assert!(!dir.exists(), "nothing written");
    }
}
