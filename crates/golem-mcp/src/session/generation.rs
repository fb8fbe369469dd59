//! One generation of a client's connection: the first, or one to the
//! server started again after it was lost. It owns the connection, the
//! inbound task that reads it, the modern listen task, and where its
//! handshake stands; everything here ends with it.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex as StdMutex, OnceLock, PoisonError};

use tokio::sync::Mutex;
use tokio::task::JoinHandle;

use crate::session::connection::Connection;
use crate::session::handshake::state::Lifecycle;
use crate::session::inbound::{self, Sinks};
use crate::session::protocol::ServerInfo;
use crate::session::serving::Offer;
use crate::wire::transport::Transport;
use crate::wire::transport_error::TransportError;

/// One connection to the server: the first, or one to the server started
/// again after it was lost. Everything here ends with it.
pub(crate) struct Generation {
    /// Counts this client's generations from 0.
    pub(in crate::session) number: u64,
    pub(in crate::session) connection: Arc<Connection>,
    /// The transport, as what a restart makes the next one like.
    pub(in crate::session) transport: Arc<dyn Reopen>,
    /// The task that keeps a modern connection's listen open, started when
    /// the era is decided; aborted on close and on drop.
    pub(in crate::session) listener: StdMutex<Option<AbortOnDrop>>,
    /// Set once the handshake is complete (`notifications/initialized`
    /// sent): the hot path's only check. The connection's own flag
    /// ([`Connection::is_negotiated`]) is set one step earlier, when the
    /// server's answer is accepted.
    pub(in crate::session) initialized: AtomicBool,
    pub(in crate::session) lifecycle: Mutex<Lifecycle>,
    /// The handshake message [`lifecycle`](Self::lifecycle) waits on, kept
    /// apart: the lifecycle is locked for as long as the handshake runs,
    /// and this is read when a bound around it ran out.
    waiting_on: StdMutex<Option<&'static str>>,
    /// Whether `close` has closed the transport (a `close` dropped half-way
    /// leaves it `false`, and the next one closes it again).
    pub(in crate::session) transport_closed: Mutex<bool>,
    /// The inbound driver, until the handshake spawns it on its runtime (a
    /// future does nothing until it is polled).
    pub(in crate::session) driver: StdMutex<Option<Pin<Box<dyn Future<Output = ()> + Send>>>>,
    /// The inbound task, aborted on close and on drop.
    pub(in crate::session) inbound: StdMutex<Option<AbortOnDrop>>,
    /// What this generation's handshake learnt of the server.
    pub(in crate::session) server: OnceLock<ServerInfo>,
    /// Held while a session the server dropped is renewed on this
    /// connection, so that the requests that met the expiry together
    /// renew it once.
    pub(in crate::session) renewal: Mutex<()>,
    /// How many times the session was renewed.
    renewals: AtomicU64,
}

impl Generation {
    /// Generation `number` over `transport`, its inbound driver not yet
    /// running.
    pub(in crate::session) fn over<T: Transport>(
        number: u64,
        transport: Arc<T>,
        offer: Arc<dyn Offer>,
        sinks: Sinks,
    ) -> Self {
        let (connection, driver) = inbound::open(transport.clone(), offer, sinks);
        Generation {
            number,
            connection,
            transport,
            listener: StdMutex::new(None),
            initialized: AtomicBool::new(false),
            lifecycle: Mutex::new(Lifecycle::New),
            waiting_on: StdMutex::new(None),
            transport_closed: Mutex::new(false),
            driver: StdMutex::new(Some(Box::pin(driver.run()))),
            inbound: StdMutex::new(None),
            server: OnceLock::new(),
            renewal: Mutex::new(()),
            renewals: AtomicU64::new(0),
        }
    }

    /// The generation's connection.
    pub(crate) fn connection(&self) -> &Arc<Connection> {
        &self.connection
    }

    /// What the generation's handshake learnt of the server.
    pub(crate) fn server_info(&self) -> Option<&ServerInfo> {
        self.server.get()
    }

    /// The handshake message still unanswered (see
    /// [`Client::handshake_waiting_on`](crate::Client::handshake_waiting_on)).
    pub(in crate::session) fn waiting_on(&self) -> Option<&'static str> {
        *lock(&self.waiting_on)
    }

    /// Notes which handshake message the lifecycle waits on now.
    pub(in crate::session) fn set_waiting_on(&self, method: Option<&'static str>) {
        *lock(&self.waiting_on) = method;
    }

    /// How many times the session was renewed on this connection.
    pub(in crate::session) fn renewals(&self) -> u64 {
        self.renewals.load(Ordering::Acquire)
    }

    /// Counts a renewal done.
    pub(in crate::session) fn renewed(&self) {
        self.renewals.fetch_add(1, Ordering::AcqRel);
    }

    /// Whether the generation's handshake completed and it was not closed.
    pub(in crate::session) fn is_ready(&self) -> bool {
        self.initialized.load(Ordering::Acquire)
    }

    /// Closes the transport once, whatever the caller is told.
    pub(crate) async fn close_transport(&self) -> Result<(), TransportError> {
        let mut closed = self.transport_closed.lock().await;
        if *closed {
            return Ok(());
        }
        let result = self.connection.close_transport().await;
        *closed = true;
        result
    }

    /// Stops the generation's listen task (a lost generation's, so that it says
    /// nothing more of the subscriptions the next session opens).
    pub(crate) fn stop_listening(&self) {
        drop(lock(&self.listener).take());
    }

    /// Ends the generation at once: nothing more is read or sent (what a
    /// close does first, and a restart that failed half-way).
    pub(crate) fn end(&self) {
        self.connection.close();
        drop(lock(&self.listener).take());
        self.initialized.store(false, Ordering::Release);
    }
}

/// The session in use: borrowed from a client whose session cannot change,
/// shared from one whose session a restart may replace.
pub(crate) enum Current<'c> {
    Fixed(&'c Generation),
    Shared(Arc<Generation>),
}

impl std::ops::Deref for Current<'_> {
    type Target = Generation;

    fn deref(&self) -> &Generation {
        match self {
            Current::Fixed(session) => session,
            Current::Shared(session) => session,
        }
    }
}

/// Aborts a task when dropped, so nothing outlives the client.
pub(in crate::session) struct AbortOnDrop(pub(in crate::session) JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Starts a generation's inbound task, once.
pub(in crate::session) fn start_inbound(session: &Generation) {
    let driver = lock(&session.driver).take();
    if let Some(driver) = driver {
        *lock(&session.inbound) = Some(AbortOnDrop(tokio::spawn(driver)));
    }
}

/// Makes the generation after a lost one over a transport made like the
/// lost one's ([`Transport::reopen`]): how a restart (`restart/`) starts
/// the server again without knowing the transport's type.
pub(in crate::session) trait Reopen: Send + Sync {
    /// Generation `number` over a transport made like this one; `None` when
    /// this transport cannot start its server again.
    fn next_generation(
        &self,
        number: u64,
        offer: Arc<dyn Offer>,
        sinks: Sinks,
    ) -> Option<Result<Generation, TransportError>>;
}

impl<T: Transport> Reopen for T {
    fn next_generation(
        &self,
        number: u64,
        offer: Arc<dyn Offer>,
        sinks: Sinks,
    ) -> Option<Result<Generation, TransportError>> {
        let next = match self.reopen()? {
            Ok(next) => Arc::new(next),
            Err(error) => return Some(Err(error)),
        };
        Some(Ok(Generation::over(number, next, offer, sinks)))
    }
}

/// Locks a mutex that no code path can leave inconsistent.
pub(crate) fn lock<T>(mutex: &StdMutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
