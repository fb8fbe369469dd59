//! `--image`: a file read and base64-encoded with the media type its
//! extension names, or a URL passed on.

use std::path::Path;

use golem_agent::model::Image;

use crate::exit::Failure;

/// The largest image file read (providers accept less: 20 MB for OpenAI,
/// 5 MB for Anthropic; they say so themselves).
const MAX_IMAGE_BYTES: u64 = 20 * 1024 * 1024;

/// An `--image` value: an `http(s)://` URL as it is, anything else a file.
pub fn load(value: &str) -> Result<Image, Failure> {
    if value.starts_with("https://") || value.starts_with("http://") {
        return Ok(Image::url(value));
    }
    let path = Path::new(value);
    let extension = path
        .extension()
        .and_then(|extension| extension.to_str())
        .map(str::to_ascii_lowercase);
    let media_type = match extension.as_deref() {
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        _ => {
            return Err(Failure::usage(format!(
                "--image {value}: not a .png, .jpg, .jpeg, .gif or .webp file (or an http(s) URL)"
            )));
        }
    };
    let unreadable = |error: std::io::Error| Failure::usage(format!("--image {value}: {error}"));
    let size = std::fs::metadata(path).map_err(unreadable)?.len();
    if size > MAX_IMAGE_BYTES {
        return Err(Failure::usage(format!(
            "--image {value}: {size} bytes, more than the {MAX_IMAGE_BYTES} read"
        )));
    }
    let bytes = std::fs::read(path).map_err(unreadable)?;
    Ok(Image::base64(media_type, base64(&bytes)))
}

/// Standard base64 (RFC 4648, with padding).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (index, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if index <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_rfc_4648() {
        for (input, want) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(input.as_bytes()), want, "{input:?}");
        }
        assert_eq!(base64(&[0xff, 0xfe, 0x00]), "//4A");
    }

    #[test]
    fn urls_pass_and_files_need_an_image_extension() {
        assert_eq!(
            load("https://example.com/cat.jpg").ok(),
            Some(Image::url("https://example.com/cat.jpg"))
        );
        let failure = load("notes.txt").expect_err("not an image");
        assert!(failure.message.contains(".png"), "{failure:?}");
        let failure = load("/no/such/cat.png").expect_err("missing");
        assert!(
            failure.message.starts_with("--image /no/such/cat.png: "),
            "{failure:?}"
        );
    }
}
