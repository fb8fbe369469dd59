//! [`RequestContext`]: what a handler of a server request is given, the way
//! back to the client the request came through.

use std::fmt;

use crate::session::handle::{Client, WeakClient};

/// What a handler knows about the request it answers.
#[derive(Clone)]
pub struct RequestContext {
    client: WeakClient,
}

impl fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestContext").finish_non_exhaustive()
    }
}

impl RequestContext {
    /// The client the request came through, to call the server back (list
    /// its tools while answering, say); `None` once every other clone of the
    /// client is gone. Do not keep it beyond the handler: it keeps the
    /// connection open.
    pub fn client(&self) -> Option<Client> {
        self.client.upgrade()
    }
}

impl RequestContext {
    /// The context of requests that came through the client `client`
    /// points to.
    pub(crate) fn new(client: WeakClient) -> Self {
        RequestContext { client }
    }
}
