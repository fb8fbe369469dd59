//! A call of a tool the agent does not have (ADR 0020): the offered names
//! the model most likely meant (it dropped a prefix, added one, changed the
//! separator or the case) and the correction that goes back to the model as
//! that call's tool message, naming the tools there are. It knows nothing
//! of the run loop, of budgets or of where tools come from: names in, text
//! out.

/// The most tool names one correction lists: enough for any agent a person
/// configures, bounded for one that offers hundreds.
pub(super) const NAMES_LISTED: usize = 40;

/// The most likely names one correction suggests.
const SUGGESTED: usize = 5;

/// The offered names the model may have meant by `called`, best first: the
/// same name but for case and separators (`Echo`, `fs.read_file` for
/// `fs_read_file`), then names that end with it after a separator (a dropped
/// prefix: `everything_echo` for `echo`), then names it ends with (an added
/// one: `echo` for `functions.echo`). At most [`SUGGESTED`].
pub(super) fn likely_names<'a>(called: &str, offered: &[&'a str]) -> Vec<&'a str> {
    let called = normalized(called);
    if called.is_empty() {
        return Vec::new();
    }
    let same = |name: &str| normalized(name) == called;
    let prefixed = |name: &str| ends_after_separator(&normalized(name), &called);
    let stripped = |name: &str| {
        let name = normalized(name);
        !name.is_empty() && ends_after_separator(&called, &name)
    };
    let mut likely: Vec<&str> = Vec::new();
    for rule in [&same as &dyn Fn(&str) -> bool, &prefixed, &stripped] {
        for &name in offered {
            if likely.len() < SUGGESTED && !likely.contains(&name) && rule(name) {
                likely.push(name);
            }
        }
    }
    likely
}

/// The tool message for a call of `called`, which no offered tool is: what
/// it may have meant (`likely`), and the tools there are, those first, at
/// most [`NAMES_LISTED`] of them.
pub(super) fn correction(called: &str, likely: &[&str], offered: &[&str]) -> String {
    let mut text = format!("There is no tool named {called:?}.");
    match likely {
        [] => {}
        [one] => text.push_str(&format!(" Did you mean {one:?}?")),
        many => text.push_str(&format!(" Did you mean one of {}?", quoted(many))),
    }
    if offered.is_empty() {
        text.push_str(" No tools are available: answer without calling one.");
        return text;
    }
    let mut listed: Vec<&str> = likely.to_vec();
    listed.extend(offered.iter().filter(|name| !likely.contains(name)));
    let more = listed.len().saturating_sub(NAMES_LISTED);
    listed.truncate(NAMES_LISTED);
    text.push_str(&format!(" The tools are: {}", quoted(&listed)));
    if more > 0 {
        text.push_str(&format!(" (and {more} more)"));
    }
    text.push_str(". Call one of them by its exact name, or answer without a tool.");
    text
}

/// [`correction`] for an agent offering the `listed` tools, `search` among
/// them: it also says that the search finds the others.
pub(super) fn correction_when_searching(
    called: &str,
    likely: &[&str],
    listed: &[&str],
    search: &str,
) -> String {
    let mut text = correction(called, likely, listed);
    text.push_str(&format!(" Other tools can be found with {search:?}."));
    text
}

/// `"a", "b", "c"`.
fn quoted(names: &[&str]) -> String {
    names
        .iter()
        .map(|name| format!("{name:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether `name` is `prefix` + separator + `tail`, in normalized form.
fn ends_after_separator(name: &str, tail: &str) -> bool {
    name.len() > tail.len()
        && name.ends_with(tail)
        && name[..name.len() - tail.len()].ends_with('_')
}

/// A name in lower case, with every run of separators (`_ - . : /` and
/// spaces) as one `_` and none at either end: the forms a model confuses
/// compare equal.
fn normalized(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut separator = false;
    for c in name.chars() {
        if matches!(c, '_' | '-' | '.' | ':' | '/' | ' ') {
            separator = true;
            continue;
        }
        if separator && !out.is_empty() {
            out.push('_');
        }
        separator = false;
        out.extend(c.to_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const OFFERED: &[&str] = &[
        "everything_echo",
        "everything_add",
        "fs_read_file",
        "echo_all",
    ];

    #[test]
    fn a_dropped_or_added_prefix_or_another_separator_is_recognised() {
        assert_eq!(likely_names("echo", OFFERED), ["everything_echo"]);
        assert_eq!(likely_names("fs.read_file", OFFERED), ["fs_read_file"]);
        assert_eq!(likely_names("FS__Read-File", OFFERED), ["fs_read_file"]);
        assert_eq!(
            likely_names("functions.everything_add", OFFERED),
            ["everything_add"]
        );
        assert_eq!(likely_names("read_file", OFFERED), ["fs_read_file"]);
        assert!(likely_names("weather", OFFERED).is_empty());
        assert!(likely_names("__", OFFERED).is_empty());
        // `echo_all` begins with the name, which is no prefix dropped.
        assert!(!likely_names("echo", OFFERED).contains(&"echo_all"));
    }

    #[test]
    fn the_correction_names_the_likely_tool_first_then_the_others() {
        assert_eq!(
            correction("echo", &["everything_echo"], OFFERED),
            "There is no tool named \"echo\". Did you mean \"everything_echo\"? The tools are: \
             \"everything_echo\", \"everything_add\", \"fs_read_file\", \"echo_all\". Call one \
             of them by its exact name, or answer without a tool."
        );
        assert_eq!(
            correction("x", &[], &[]),
            "There is no tool named \"x\". No tools are available: answer without calling one."
        );
    }

    #[test]
    fn very_many_tools_are_listed_up_to_a_bound() {
        let names: Vec<String> = (0..100).map(|n| format!("tool_{n}")).collect();
        let offered: Vec<&str> = names.iter().map(String::as_str).collect();
        let text = correction("nope", &[], &offered);
        assert!(text.contains("\"tool_39\" (and 60 more)."), "{text}");
        assert!(!text.contains("\"tool_40\""), "{text}");
    }
}
