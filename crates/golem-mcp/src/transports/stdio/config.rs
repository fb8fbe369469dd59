//! How to start a stdio server, and the checks made before starting it.

use std::fmt;
use std::path::PathBuf;

use super::process::ShutdownTimeouts;
use super::stderr::StderrMode;
use crate::error::Error;

/// The default maximum size of one message, 32 MiB.
///
/// Large enough for real servers that return base64 images or files inline
/// (a 20 MiB screenshot is about 27 MiB in base64), small enough that a
/// server streaming garbage without newlines is stopped long before it hurts.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 32 * 1024 * 1024;

/// How to start a stdio server.
///
/// ```
/// use golem_mcp::StdioConfig;
///
/// let config = StdioConfig {
///     args: vec!["-y".into(), "@modelcontextprotocol/server-everything".into()],
///     env: vec![("LOG_LEVEL".into(), "debug".into())],
///     ..StdioConfig::new("npx")
/// };
/// assert_eq!(config.command, "npx");
/// ```
///
/// Its `Debug` shows the command, how many arguments there are and the
/// names of the environment entries, never the arguments or the values
/// (a `${VAR}` from a configuration file often expands to a secret).
#[derive(Clone, PartialEq, Eq)]
pub struct StdioConfig {
    /// The program to run, looked up in `PATH` when it has no slash.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its working directory; `None` inherits this process's.
    pub dir: Option<PathBuf>,
    /// Environment entries added after this process's environment, which the
    /// server inherits whole; for a name given twice, the later entry wins.
    /// Passing secrets to a server is the application's decision.
    pub env: Vec<(String, String)>,
    /// Variables of this process's environment the server does not
    /// inherit (an API key meant for someone else, say); an entry of
    /// [`env`](Self::env) with the same name still reaches it.
    pub env_remove: Vec<String>,
    /// What to do with the server's stderr; by default its last 64 KiB are
    /// kept for error messages.
    pub stderr: StderrMode,
    /// The longest message accepted from the server, in bytes
    /// ([`DEFAULT_MAX_MESSAGE_BYTES`] by default).
    pub max_message_bytes: usize,
    /// How long closing waits at each step before escalating.
    pub shutdown: ShutdownTimeouts,
}

impl fmt::Debug for StdioConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let env_names: Vec<&str> = self.env.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("StdioConfig")
            .field("command", &self.command)
            .field("args", &format_args!("<{} not shown>", self.args.len()))
            .field("dir", &self.dir)
            .field("env", &env_names)
            .field("env_remove", &self.env_remove)
            .field("stderr", &self.stderr)
            .field("max_message_bytes", &self.max_message_bytes)
            .field("shutdown", &self.shutdown)
            .finish()
    }
}

impl StdioConfig {
    /// A configuration that runs `command` with no arguments and every other
    /// field at its default.
    pub fn new(command: impl Into<String>) -> Self {
        StdioConfig {
            command: command.into(),
            ..StdioConfig::default()
        }
    }

    pub(crate) fn validate(&self) -> Result<(), Error> {
        let invalid = |field: String, problem: &str| Error::InvalidConfig {
            operation: "spawn",
            field,
            problem: problem.to_owned(),
        };
        check_command(&self.command).map_err(|problem| invalid("command".into(), problem))?;
        if let Some(index) = self.args.iter().position(|arg| arg.contains('\0')) {
            return Err(invalid(format!("args[{index}]"), "it contains a NUL byte"));
        }
        for (index, (name, value)) in self.env.iter().enumerate() {
            check_env_entry(name, value)
                .map_err(|problem| invalid(format!("env[{index}] ({name:?})"), problem))?;
        }
        if let Some(dir) = &self.dir
            && !dir.is_dir()
        {
            return Err(invalid(
                "dir".into(),
                &format!("{} does not exist or is not a directory", dir.display()),
            ));
        }
        if self.max_message_bytes == 0 {
            return Err(invalid("max_message_bytes".into(), "it must be at least 1"));
        }
        Ok(())
    }
}

impl Default for StdioConfig {
    fn default() -> Self {
        StdioConfig {
            command: String::new(),
            args: Vec::new(),
            dir: None,
            env: Vec::new(),
            env_remove: Vec::new(),
            stderr: StderrMode::default(),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            shutdown: ShutdownTimeouts::default(),
        }
    }
}

/// Checks the program to run; the problem, worded for a person, if it
/// cannot be one. Shared with `config.rs`, which names the entry around it.
pub(crate) fn check_command(command: &str) -> Result<(), &'static str> {
    if command.trim().is_empty() {
        return Err("it is empty; name the server program to run");
    }
    if command.contains('\0') {
        return Err("it contains a NUL byte");
    }
    Ok(())
}

/// Checks one environment entry (the value is never quoted: it may be a
/// secret). Shared with `config.rs`.
pub(crate) fn check_env_entry(name: &str, value: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        return Err("the variable name is empty");
    }
    if name.contains('=') {
        return Err("the variable name contains '='; give the name and the value separately");
    }
    if name.contains('\0') || value.contains('\0') {
        return Err("it contains a NUL byte");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_no_argument_or_environment_value() {
        let config = StdioConfig {
            args: vec!["--token".into(), "arg-secret-1".into()],
            env: vec![("API_KEY".into(), "env-secret-2".into())],
            ..StdioConfig::new("server")
        };
        let shown = format!("{config:?}");
        assert!(
            !shown.contains("arg-secret-1") && !shown.contains("env-secret-2"),
            "{shown}"
        );
        assert!(
            shown.contains("\"server\"") && shown.contains("API_KEY"),
            "{shown}"
        );
        assert!(shown.contains("<2 not shown>"), "{shown}");
    }
}
