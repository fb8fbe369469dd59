//! What the server does not offer: a subcommand of a feature the server
//! does not declare (its `initialize` capabilities) is answered here,
//! without asking it. A listing is empty (with a note on stderr, exit 0:
//! the server offers none); a use (`read`, `prompt`, `complete`) is a
//! usage-style failure naming the missing capability. It knows the
//! capability each subcommand needs, nothing of how the feature runs.

use golem_mcp::ServerInfo;

use crate::failure::{Exit, Failure};
use crate::feedback::Feedback;
use crate::plan::features::FeatureAction;
use crate::render::prompts::{prompts_json, prompts_text};
use crate::render::resources::{resources_json, resources_text, templates_json, templates_text};
use crate::run::output::emit;

/// Answers `action` when the server does not declare the capability it
/// needs (`Some`: the command's outcome); `None` when it does.
pub fn unless_offered(
    server: &ServerInfo,
    action: &FeatureAction,
    json: bool,
    feedback: &mut Feedback,
) -> Option<Result<Exit, Failure>> {
    let (capability, what, empty) = match action {
        FeatureAction::Resources { templates: false } => (
            "resources",
            "resources",
            Some(if json {
                resources_json(&[])
            } else {
                resources_text(&[])
            }),
        ),
        FeatureAction::Resources { templates: true } => (
            "resources",
            "resource templates",
            Some(if json {
                templates_json(&[])
            } else {
                templates_text(&[])
            }),
        ),
        FeatureAction::Prompts => (
            "prompts",
            "prompts",
            Some(if json {
                prompts_json(&[])
            } else {
                prompts_text(&[])
            }),
        ),
        FeatureAction::Read { .. } => ("resources", "resources to read", None),
        FeatureAction::Prompt { .. } => ("prompts", "prompts to get", None),
        FeatureAction::Complete { .. } => ("completions", "argument completion", None),
        FeatureAction::Ping => return None,
    };
    if server.capabilities.get(capability).is_some() {
        return None;
    }
    feedback.finish();
    let note = format!("the server offers no {what} (it declares no {capability:?} capability)");
    Some(match empty {
        Some(listing) => {
            eprintln!("golem-mcp: {note}");
            emit(&listing, json).map(|()| Exit::Success)
        }
        None => Err(Failure::usage(note)),
    })
}
