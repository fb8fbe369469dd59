//! The subcommands beyond tools as clap parses them: `resources`, `read`,
//! `prompts`, `prompt`, `complete` and `ping`, flattened into the command
//! line's subcommands. Their checks are planning's (`plan/features.rs`).

use std::path::PathBuf;

use clap::Subcommand;

/// The subcommands of this module, flattened into the command line's.
#[derive(Debug, Subcommand)]
pub enum FeatureCommand {
    /// List the server's resources, one `URI  NAME` per line (with
    /// --templates, its resource templates).
    Resources {
        /// List the resource templates instead (`URI_TEMPLATE  NAME`).
        #[arg(long)]
        templates: bool,
        /// A stdio server to start: `-- COMMAND [ARGS...]`.
        #[arg(last = true, value_name = "COMMAND")]
        server_command: Vec<String>,
    },
    /// Read a resource: its text on stdout; binary contents only with
    /// --output FILE or --raw (never on a terminal), a placeholder line
    /// otherwise.
    Read {
        /// The resource's URI (expand a template's variables first).
        uri: String,
        /// Write the contents' bytes (blobs decoded) to FILE.
        #[arg(short, long, value_name = "FILE", conflicts_with_all = ["raw", "json"])]
        output: Option<PathBuf>,
        /// Write the contents' bytes (blobs decoded) to stdout, which must
        /// not be a terminal.
        #[arg(long, conflicts_with = "json")]
        raw: bool,
        /// A stdio server to start: `-- COMMAND [ARGS...]`.
        #[arg(last = true, value_name = "COMMAND")]
        server_command: Vec<String>,
    },
    /// List the server's prompts, one per line with their arguments.
    Prompts {
        /// A stdio server to start: `-- COMMAND [ARGS...]`.
        #[arg(last = true, value_name = "COMMAND")]
        server_command: Vec<String>,
    },
    /// Get a prompt and print its messages (missing required or unknown
    /// arguments are a usage error, found before the prompt is asked for).
    Prompt {
        /// The prompt's name.
        name: String,
        /// The arguments, a JSON object of strings ("-" reads it from stdin).
        #[arg(value_name = "ARGS_JSON", default_value = "{}")]
        args_json: String,
        /// A stdio server to start: `-- COMMAND [ARGS...]`.
        #[arg(last = true, value_name = "COMMAND")]
        server_command: Vec<String>,
    },
    /// Ask the server to complete an argument of a prompt or a variable of a
    /// resource template; prints one value per line.
    Complete {
        /// Complete an argument of this prompt.
        #[arg(
            long,
            value_name = "NAME",
            conflicts_with = "template",
            required_unless_present = "template"
        )]
        prompt: Option<String>,
        /// Complete a variable of this resource template.
        #[arg(long, value_name = "URI_TEMPLATE")]
        template: Option<String>,
        /// The argument (or variable) to complete.
        argument: String,
        /// What has been typed of it so far.
        #[arg(allow_hyphen_values = true)]
        value: String,
        /// The arguments already chosen, a JSON object of strings.
        #[arg(long, value_name = "JSON")]
        context: Option<String>,
        /// A stdio server to start: `-- COMMAND [ARGS...]`.
        #[arg(last = true, value_name = "COMMAND")]
        server_command: Vec<String>,
    },
    /// Check the server answers (`ping`) and print the round-trip time.
    Ping {
        /// A stdio server to start: `-- COMMAND [ARGS...]`.
        #[arg(last = true, value_name = "COMMAND")]
        server_command: Vec<String>,
    },
}
