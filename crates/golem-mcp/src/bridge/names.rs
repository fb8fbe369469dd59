//! The names a model is offered for server tools: names every model
//! provider accepts (letters, digits, `_` and `-`, at most 64 characters),
//! derived from the server's names alone, so that they are the same on
//! every run of the same configuration. A call still sends the server's
//! own name.

/// The longest tool name the providers accept (OpenAI, Anthropic).
pub const MAX_TOOL_NAME: usize = 64;

/// How many hexadecimal digits of the hash a changed name ends with.
const HASH_DIGITS: usize = 8;

/// The name a model is offered for server tool `name`, behind `prefix`
/// (`prefix_name`) when one is given.
///
/// A name made of ASCII letters, digits, `_` and `-` within
/// [`MAX_TOOL_NAME`] characters is kept as it is. Any other has each
/// character no provider accepts replaced by `_`, is cut to leave room,
/// and ends with `_` and eight hexadecimal digits of a hash of the
/// original: two names that read the same once changed stay apart, and the
/// name is the same on every run and every machine.
///
/// ```
/// use golem_mcp::model_tool_name;
/// assert_eq!(model_tool_name(Some("fs"), "read_file"), "fs_read_file");
/// let changed = model_tool_name(None, "get.weather");
/// assert!(changed.starts_with("get_weather_") && changed.len() == 20, "{changed}");
/// assert_ne!(changed, model_tool_name(None, "get/weather"));
/// assert!(model_tool_name(Some("server"), &"x".repeat(90)).len() <= 64);
/// ```
pub fn model_tool_name(prefix: Option<&str>, name: &str) -> String {
    let joined = match prefix {
        Some(prefix) => format!("{prefix}_{name}"),
        None => name.to_owned(),
    };
    if is_provider_safe(&joined) {
        return joined;
    }
    let mut safe: String = joined
        .chars()
        .map(|c| if allowed(c) { c } else { '_' })
        .collect();
    // Only ASCII is left: a byte is a character.
    safe.truncate(MAX_TOOL_NAME - 1 - HASH_DIGITS);
    let hash = fnv1a(joined.as_bytes()) as u32;
    format!("{safe}_{hash:08x}")
}

/// Whether every provider accepts `name` as a tool name.
pub(crate) fn is_provider_safe(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_TOOL_NAME && name.chars().all(allowed)
}

fn allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// The 64-bit FNV-1a hash: small, fixed by its definition (so stable across
/// Rust versions and machines, which `std`'s hasher is not), and enough to
/// tell apart the few names that read the same once changed.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_providers_refuse_become_safe_distinct_and_stable() {
        assert_eq!(model_tool_name(None, "echo"), "echo");
        assert_eq!(model_tool_name(Some("git"), "git-status"), "git_git-status");
        for name in ["get.weather", "wetter für köln", "a/b", "", " "] {
            let safe = model_tool_name(Some("s"), name);
            assert!(is_provider_safe(&safe), "{name:?} -> {safe:?}");
        }
        let long = "very_long_tool_name_".repeat(5);
        let safe = model_tool_name(Some("server"), &long);
        assert_eq!(safe.len(), MAX_TOOL_NAME, "{safe}");
        assert!(safe.starts_with("server_very_long_tool_name_"), "{safe}");
        // The same on every run; apart from a name that reads the same.
        assert_eq!(model_tool_name(None, "get.weather"), "get_weather_50528a7d");
        assert_ne!(
            model_tool_name(None, "get.weather"),
            model_tool_name(None, "get weather")
        );
    }
}
