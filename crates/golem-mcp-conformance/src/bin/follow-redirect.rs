//! A stand-in browser for testing the `golem-mcp` command's OAuth flow:
//! set `BROWSER` to this program. It requests the authorization URL it is
//! given, reads the redirect's `Location` without following it, and
//! requests that (the command's loopback redirect receiver), as a browser
//! would after an authorization server approved at once (the conformance
//! suite's do). Every request has a 10 s limit.

use std::process::ExitCode;
use std::time::Duration;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let Some(url) = std::env::args().nth(1) else {
        eprintln!("usage: follow-redirect AUTHORIZATION_URL");
        return ExitCode::from(2);
    };
    match follow(&url).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("follow-redirect: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn follow(url: &str) -> Result<(), Box<dyn std::error::Error>> {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(10))
        .build()?;
    let url = reqwest::Url::parse(url)?;
    let answer = client.get(url.clone()).send().await?;
    let location = answer
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|value| value.to_str().ok())
        .ok_or_else(|| format!("no redirect: HTTP {}", answer.status().as_u16()))?;
    let redirect = url.join(location)?;
    let landed = client.get(redirect).send().await?;
    if !landed.status().is_success() {
        return Err(format!(
            "the redirect receiver answered HTTP {}",
            landed.status().as_u16()
        )
        .into());
    }
    Ok(())
}
