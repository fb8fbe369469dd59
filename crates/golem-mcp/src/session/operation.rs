//! How an operation is named in errors (`tools/call echo`), and the error
//! of a failed send: shared by the handshake, the request path and the
//! restarts.

use std::fmt;

use crate::error::Error;
use crate::session::connection::Connection;
use crate::wire::transport_error::TransportError;

/// Names an operation in error messages, e.g. `tools/call echo`, without
/// allocating unless an error is built.
#[derive(Clone, Copy)]
pub(in crate::session) struct Operation<'a>(
    pub(in crate::session) &'static str,
    pub(in crate::session) Option<&'a str>,
);

impl fmt::Display for Operation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            Some(target) => write!(f, "{} {target}", self.0),
            None => f.write_str(self.0),
        }
    }
}

/// The error for a failed send: the connection's end when it has ended
/// (a close makes sends give way), else the send's own error.
pub(in crate::session) fn failure(
    connection: &Connection,
    operation: Operation<'_>,
    source: TransportError,
) -> Error {
    match connection.check_open(&operation) {
        Err(ended) => ended,
        Ok(()) => Error::transport(&operation.to_string(), source),
    }
}
