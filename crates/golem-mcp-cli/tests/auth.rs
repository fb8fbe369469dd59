//! `golem-mcp login` and `logout` and the token cache file. The OAuth flow
//! of `list`/`call` and `login` runs against the official conformance
//! suite's authorization servers in `scripts/conformance.sh`.

mod support;

use predicates::prelude::PredicateBooleanExt;
use serde_json::{Value, json};
use support::{TempDir, golem_mcp};

/// A fresh `XDG_CONFIG_HOME` with a token cache holding tokens for two
/// servers.
fn cache_with_two_servers() -> TempDir {
    let home = TempDir::new();
    let dir = home.0.join("golem-mcp");
    std::fs::create_dir_all(&dir).expect("created");
    let file = dir.join("tokens.json");
    let record = json!({"access_token": "kept-token", "client_id": "c"});
    std::fs::write(
        &file,
        json!({"http://127.0.0.1:9/mcp": record, "http://127.0.0.1:9/other": record}).to_string(),
    )
    .expect("written");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    home
}

#[test]
fn logout_forgets_the_tokens_of_that_server_only() {
    let home = cache_with_two_servers();
    golem_mcp()
        .env("XDG_CONFIG_HOME", &home.0)
        .args(["logout", "--url", "http://127.0.0.1:9/mcp"])
        .assert()
        .success()
        .stderr(predicates::str::contains(
            "forgot the tokens for http://127.0.0.1:9/mcp",
        ));
    let file = home.0.join("golem-mcp/tokens.json");
    let cache: Value = serde_json::from_slice(&std::fs::read(&file).expect("read")).expect("JSON");
    assert!(cache.get("http://127.0.0.1:9/mcp").is_none(), "{cache}");
    assert!(cache.get("http://127.0.0.1:9/other").is_some(), "{cache}");
    use std::os::unix::fs::MetadataExt;
    assert_eq!(
        std::fs::metadata(&file).expect("exists").mode() & 0o777,
        0o600
    );
}

#[test]
fn a_token_cache_others_can_read_is_refused() {
    let home = cache_with_two_servers();
    let file = home.0.join("golem-mcp/tokens.json");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    golem_mcp()
        .env("XDG_CONFIG_HOME", &home.0)
        .args(["logout", "--url", "http://127.0.0.1:9/mcp"])
        .assert()
        .code(4)
        .stderr(predicates::str::contains("chmod 600"))
        .stderr(predicates::str::contains("kept-token").not());
}

#[test]
fn login_needs_an_http_server() {
    golem_mcp().args(["login", "--", "true"]).assert().code(2);
}
