//! The signals that end the command early: Ctrl-C (SIGINT), SIGTERM and
//! SIGHUP, each with the word the command says and the exit status it
//! gives (ADR 0005). Listening starts before the server is reached, so a
//! signal at any moment ends the command the same way. It knows nothing of
//! what the command was doing.

use crate::failure::Exit;

/// A signal that ends the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGINT: Ctrl-C at the terminal.
    Interrupt,
    /// SIGTERM: `kill`, a service manager stopping the command.
    Terminate,
    /// SIGHUP: the terminal went away.
    HangUp,
}

impl Signal {
    /// The exit status: 128 plus the signal's number, as shells report it.
    pub fn exit(self) -> Exit {
        match self {
            Signal::Interrupt => Exit::Interrupted,
            Signal::Terminate => Exit::Terminated,
            Signal::HangUp => Exit::HungUp,
        }
    }

    /// What the command says it was, before "while ...".
    pub fn word(self) -> &'static str {
        match self {
            Signal::Interrupt => "interrupted",
            Signal::Terminate => "terminated (SIGTERM)",
            Signal::HangUp => "hung up (SIGHUP)",
        }
    }
}

/// The signals listened for, from [`Signals::listen`] on.
pub struct Signals {
    #[cfg(unix)]
    unix: Option<UnixSignals>,
}

#[cfg(unix)]
struct UnixSignals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
    hang_up: tokio::signal::unix::Signal,
}

impl Signals {
    /// Starts listening (inside the runtime). Where SIGTERM and SIGHUP
    /// cannot be listened for, Ctrl-C still is.
    pub fn listen() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            // All three now: a signal before the first `recv` is kept,
            // not fatal.
            let unix = match (
                signal(SignalKind::interrupt()),
                signal(SignalKind::terminate()),
                signal(SignalKind::hangup()),
            ) {
                (Ok(interrupt), Ok(terminate), Ok(hang_up)) => Some(UnixSignals {
                    interrupt,
                    terminate,
                    hang_up,
                }),
                _ => None,
            };
            Signals { unix }
        }
        #[cfg(not(unix))]
        Signals {}
    }

    /// The next signal. Cancel safe.
    pub async fn recv(&mut self) -> Signal {
        #[cfg(unix)]
        if let Some(unix) = self.unix.as_mut() {
            return tokio::select! {
                _ = unix.interrupt.recv() => Signal::Interrupt,
                _ = unix.terminate.recv() => Signal::Terminate,
                _ = unix.hang_up.recv() => Signal::HangUp,
            };
        }
        match tokio::signal::ctrl_c().await {
            Ok(()) => Signal::Interrupt,
            // No Ctrl-C handler could be installed: no signal will come.
            Err(_) => std::future::pending().await,
        }
    }
}
