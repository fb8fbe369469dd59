//! A recorded session served in a server's place: each host gets a
//! [`Replayer`] of its own over the one recording, so that every host's
//! requests are matched from the recording's start.

use std::sync::Arc;

use bytes::Bytes;

use crate::serve::host::{BoxFuture, HostSession, Serves};
use crate::transports::replay::{Recording, Replayer};

/// The service [`Service::replay`](crate::serve::Service::replay) makes.
pub(crate) struct Replayed {
    recording: Recording,
}

impl Replayed {
    pub(crate) fn new(recording: Recording) -> Self {
        Replayed { recording }
    }
}

impl Serves for Replayed {
    fn serve(self: Arc<Self>, mut session: HostSession) -> BoxFuture<()> {
        Box::pin(async move {
            let mut replayer = Replayer::new(&self.recording);
            while let Some(message) = session.next().await {
                let related = message.is_request().then(|| message.id_key()).flatten();
                let answers = replayer.on_message(&message.text);
                let last = answers.len();
                for (index, answer) in answers.into_iter().enumerate() {
                    // The request's response comes last.
                    let ends = related.is_some() && index + 1 == last;
                    if !session
                        .outbox
                        .send(related, ends, Bytes::from(answer))
                        .await
                    {
                        return;
                    }
                }
            }
        })
    }
}
