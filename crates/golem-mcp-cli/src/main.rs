//! The `golem-mcp` command-line tool. Placeholder: arrives with the CLI issue.

fn main() {
    eprintln!("golem-mcp: not implemented yet");
    std::process::exit(2);
}
