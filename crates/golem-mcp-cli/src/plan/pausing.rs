//! The pause of the command's console while the user authorizes in the
//! browser: `ConsoleSlot`, where the console will be (the plan, and with it
//! the OAuth provider, is made before the console exists), and
//! `PausingUserAgent`, the user agent that pauses it while it waits for the
//! redirect, so that the time does not count against `--timeout`. It knows
//! nothing of how the provider is configured.

use std::sync::{Arc, OnceLock};

use golem_mcp::auth::{AuthFuture, OwnedAuthFuture, PendingRedirect, UserAgent};

use crate::feedback::Console;

/// Where the command's console will be: the plan (and with it the OAuth
/// provider) is made before the console exists. Clones share the slot.
#[derive(Debug, Clone, Default)]
pub struct ConsoleSlot(Arc<OnceLock<Console>>);

impl ConsoleSlot {
    /// Puts the command's console in the slot (the first one stays).
    pub fn fill(&self, console: Console) {
        let _ = self.0.set(console);
    }
}

/// A user agent that pauses the console while it waits for the user to
/// come back from the browser: the spinner is hidden, other lines wait, and
/// `--timeout` does not run (a login may take longer than any call).
pub struct PausingUserAgent<U> {
    inner: U,
    console: ConsoleSlot,
}

impl<U> PausingUserAgent<U> {
    /// `inner`, pausing the console that `console` will hold.
    pub fn new(inner: U, console: ConsoleSlot) -> Self {
        PausingUserAgent { inner, console }
    }
}

impl<U: UserAgent> UserAgent for PausingUserAgent<U> {
    fn prepare(&self) -> AuthFuture<'_, Box<dyn PendingRedirect>> {
        Box::pin(async move {
            let pending = self.inner.prepare().await?;
            let pausing: Box<dyn PendingRedirect> = Box::new(PausingRedirect {
                inner: pending,
                console: self.console.clone(),
            });
            Ok(pausing)
        })
    }
}

struct PausingRedirect {
    inner: Box<dyn PendingRedirect>,
    console: ConsoleSlot,
}

impl PendingRedirect for PausingRedirect {
    fn redirect_uri(&self) -> &str {
        self.inner.redirect_uri()
    }

    fn wait(
        self: Box<Self>,
        authorization_url: url::Url,
        state: String,
    ) -> OwnedAuthFuture<url::Url> {
        let paused = self.console.0.get().map(Console::pause);
        let waiting = self.inner.wait(authorization_url, state);
        Box::pin(async move {
            // Held until the redirect came or the wait was given up.
            let _paused = paused;
            waiting.await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A user agent that notes whether the console was paused while it
    /// waited for the redirect.
    struct Noting {
        console: Console,
        paused_while_waiting: Arc<std::sync::Mutex<Option<bool>>>,
    }

    impl UserAgent for Noting {
        fn prepare(&self) -> AuthFuture<'_, Box<dyn PendingRedirect>> {
            Box::pin(async move {
                let pending: Box<dyn PendingRedirect> = Box::new(Noting {
                    console: self.console.clone(),
                    paused_while_waiting: self.paused_while_waiting.clone(),
                });
                Ok(pending)
            })
        }
    }

    impl PendingRedirect for Noting {
        fn redirect_uri(&self) -> &str {
            "http://127.0.0.1:9/callback"
        }

        fn wait(self: Box<Self>, url: url::Url, _state: String) -> OwnedAuthFuture<url::Url> {
            Box::pin(async move {
                *self.paused_while_waiting.lock().expect("lock") = Some(self.console.is_paused());
                Ok(url)
            })
        }
    }

    #[test]
    fn the_console_is_paused_while_the_user_is_in_the_browser() {
        let console = crate::feedback::Feedback::new(false).console();
        let slot = ConsoleSlot::default();
        let paused_while_waiting = Arc::new(std::sync::Mutex::new(None));
        let agent = PausingUserAgent {
            inner: Noting {
                console: console.clone(),
                paused_while_waiting: paused_while_waiting.clone(),
            },
            console: slot.clone(),
        };
        let authorize = |agent: &PausingUserAgent<Noting>| {
            let url = url::Url::parse("https://auth.example.com/authorize").expect("URL");
            tokio::runtime::Builder::new_current_thread()
                .build()
                .expect("runtime")
                .block_on(async {
                    let pending = agent.prepare().await.expect("prepared");
                    pending.wait(url, "state".into()).await.expect("redirected")
                })
        };
        // Before the command has a console there is nothing to pause.
        authorize(&agent);
        assert_eq!(*paused_while_waiting.lock().expect("lock"), Some(false));
        slot.fill(console.clone());
        authorize(&agent);
        assert_eq!(*paused_while_waiting.lock().expect("lock"), Some(true));
        assert!(!console.is_paused(), "the pause ends with the wait");
    }
}
