//! The `login` and `logout` subcommands, run before connecting, with the
//! OAuth provider the plan gave the HTTP target. It knows nothing of the
//! session (none is opened) or of how the provider was built
//! (`plan/oauth.rs`); the flow itself is the library's.

use crate::failure::{Exit, Failure};
use crate::plan::{Action, Plan};

/// Runs `login` or `logout`; `None` for the other subcommands.
pub async fn login_or_logout(plan: &Plan) -> Option<Exit> {
    let (Action::Login | Action::Logout) = plan.action else {
        return None;
    };
    let (Some(http), Some(provider)) = (plan.target.http(), &plan.oauth) else {
        return Some(
            Failure::usage(
                "login and logout apply to HTTP servers (--url) without an Authorization header",
            )
            .report(plan.json),
        );
    };
    let url = http.url.trim();
    let outcome = match plan.action {
        Action::Logout => provider.logout(url).map(|()| "forgot the tokens for"),
        _ => provider.login(url).await.map(|()| "authorized for"),
    };
    Some(match outcome {
        Ok(done) => {
            eprintln!("golem-mcp: {done} {url}");
            Exit::Success
        }
        Err(error) => Failure::new(Exit::Transport, error.to_string()).report(plan.json),
    })
}
