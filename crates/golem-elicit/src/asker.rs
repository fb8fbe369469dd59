//! Who asks: the words that open every prompt and note about a server's
//! request, `The server "evilsrv" (evil-mcp 1.0) asks: ...`. The name the user gave
//! the server comes first (its config entry, URL or command: the one a
//! server cannot choose), then the name the server gave itself
//! (`serverInfo`), so that a server named "github" in its own words but
//! "evilsrv" in the user's configuration cannot pass for the other one. It
//! knows nothing of what is asked.

use golem_mcp::RequestContext;

/// The most characters of each name shown; the rest is cut with `…`.
const NAME_SHOWN: usize = 64;

/// `"evilsrv" (evil-mcp 1.0)`, as in `The server "evilsrv" (evil-mcp 1.0)
/// asks: ...`: the server `name` (as the user named it) that sent the
/// request of `context`, with its own name and version once it has said
/// them (`serverInfo`). Both escaped and cut, ready to print.
pub fn server_label(name: &str, context: &RequestContext) -> String {
    let own = context.client().and_then(|client| {
        client
            .server()
            .map(|server| (server.name.clone(), server.version.clone()))
    });
    label(name, own.as_ref().map(|(n, v)| (n.as_str(), v.as_str())))
}

/// [`server_label`], from the server's own name and version (`None` before
/// it said them).
fn label(name: &str, own: Option<(&str, &str)>) -> String {
    let mut label = format!("\"{}\"", shown(name));
    if let Some((own_name, version)) = own {
        let own = match version.trim() {
            "" => shown(own_name),
            version => format!("{} {}", shown(own_name), shown(version)),
        };
        label.push_str(&format!(" ({own})"));
    }
    label
}

/// `text` on one line, terminal controls escaped, cut at [`NAME_SHOWN`]
/// characters.
fn shown(text: &str) -> String {
    let line = golem_terminal::one_line(text);
    match line.char_indices().nth(NAME_SHOWN) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line.into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_users_name_comes_first_then_the_servers_own_escaped_and_cut() {
        assert_eq!(
            label("evilsrv", Some(("evil-mcp", "1.0"))),
            r#""evilsrv" (evil-mcp 1.0)"#
        );
        assert_eq!(label("py", None), r#""py""#);
        assert_eq!(label("py", Some(("py", ""))), r#""py" (py)"#);
        let long = "g".repeat(100);
        let shown = label("x", Some(("GitHub\x1b[2J\nserver", &long)));
        assert!(
            shown.starts_with(r#""x" (GitHub\u{1b}[2J\nserver gggg"#),
            "{shown}"
        );
        assert!(shown.ends_with("g…)"), "{shown}");
        assert!(!shown.contains('\x1b') && !shown.contains('\n'), "{shown}");
    }
}
