//! Rendering: pure functions that turn what the server answered into the
//! text the command prints, for people and (with `--json`) for programs:
//! one file per subcommand family, and the lines stderr shows for a log
//! message or a task's status. It knows nothing of clap, of plans, of the
//! client or of stdout: every function takes values and returns a `String`.

pub mod content;
pub mod ordered;
pub mod prompts;
pub mod resources;
pub mod schema;
pub mod server;
pub mod status;
pub mod text;
pub mod tools;
