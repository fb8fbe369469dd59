//! The values clap parses itself: `--timeout` seconds and `--log-level`
//! names. A refusal here is clap's usage error (exit 2). It knows nothing
//! of the rest of the command line.

use std::time::Duration;

use golem_mcp::LogLevel;

pub fn parse_log_level(text: &str) -> Result<LogLevel, String> {
    serde_json::from_value(serde_json::Value::String(text.trim().to_ascii_lowercase())).map_err(
        |_| {
            format!(
                "{text:?} is not a log level: debug, info, notice, warning, error, critical, \
                 alert or emergency"
            )
        },
    )
}

/// `--protocol`: a revision this client speaks.
pub fn parse_protocol(text: &str) -> Result<String, String> {
    let text = text.trim();
    golem_mcp::MODERN_PROTOCOL_VERSIONS
        .iter()
        .chain(golem_mcp::SUPPORTED_PROTOCOL_VERSIONS)
        .find(|known| **known == text)
        .map(|known| (*known).to_owned())
        .ok_or_else(|| {
            let known: Vec<&str> = golem_mcp::MODERN_PROTOCOL_VERSIONS
                .iter()
                .chain(golem_mcp::SUPPORTED_PROTOCOL_VERSIONS)
                .copied()
                .collect();
            format!(
                "{text:?} is not a protocol revision this client speaks: {}",
                known.join(", ")
            )
        })
}

pub fn parse_timeout(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds, e.g. --timeout 30"))?;
    if seconds.is_nan() || seconds <= 0.0 {
        return Err(format!("{text:?}: the timeout must be more than 0 seconds"));
    }
    Duration::try_from_secs_f64(seconds).map_err(|_| format!("{text:?} seconds is too long"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_levels_are_the_protocols_names() {
        assert_eq!(parse_log_level("Warning"), Ok(LogLevel::Warning));
        assert_eq!(parse_log_level("debug"), Ok(LogLevel::Debug));
        assert!(parse_log_level("verbose").is_err());
    }

    #[test]
    fn timeouts_are_positive_seconds() {
        assert_eq!(parse_timeout("1.5"), Ok(Duration::from_millis(1500)));
        for bad in ["0", "-1", "soon", "NaN", "inf"] {
            assert!(parse_timeout(bad).is_err(), "{bad}");
        }
    }
}
