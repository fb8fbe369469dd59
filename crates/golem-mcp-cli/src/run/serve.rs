//! Running `bridge`, `record` and `replay`: the service made (a proxy to
//! the server, recorded or not, or a recorded session) and served to the
//! host until the host goes (stdio) or a signal comes (both).

use golem_mcp::serve::{HttpServeConfig, Proxy, Service, serve_http, serve_stdio};
use golem_mcp::{
    Client, HttpTransport, ProtocolChoice, SseTransport, StdioTransport, replay::Recording,
};

use crate::failure::{Exit, Failure};
use crate::plan::serve::{Answerer, Face, ServePlan};
use crate::plan::target::Target;
use crate::run::signals::Signals;
use crate::trace::traced;

/// How long the servers' sessions are given to end after a signal.
const STOP_TIME: std::time::Duration = std::time::Duration::from_secs(2);

/// Serves as `plan` says; the exit status says why it stopped.
pub async fn execute(plan: ServePlan) -> Exit {
    let mut signals = Signals::listen();
    let service = match service(plan.answerer, plan.verbose) {
        Ok(service) => service,
        Err(failure) => return failure.report(false),
    };
    let stopping = service.clone();
    let served = async {
        match plan.face {
            Face::Stdio => serve_stdio(service).await,
            Face::Http { address, path } => {
                let listener = tokio::net::TcpListener::bind(address)
                    .await
                    .map_err(|source| golem_mcp::serve::ServeError::Listen {
                        address: address.to_string(),
                        source,
                    })?;
                let bound = listener.local_addr().unwrap_or(address);
                eprintln!(
                    "golem-mcp: serving http://{bound}{path} (streamable HTTP; HTTP+SSE at http://{bound}/sse)"
                );
                let mut config = HttpServeConfig::default()
                    .with_path(path)
                    .with_idle_timeout(plan.idle_timeout);
                if let Some(token) = plan.bearer_token {
                    config = config.with_bearer_token(token);
                }
                serve_http(listener, config, service).await
            }
        }
    };
    tokio::select! {
        outcome = served => match outcome {
            Ok(()) => Exit::Success,
            Err(error) => Failure::new(Exit::Transport, error.to_string()).report(false),
        },
        signal = signals.recv() => {
            // The servers' sessions end as when their hosts go: an HTTP
            // session's DELETE, a stdio server stopped.
            stopping.stop(STOP_TIME).await;
            signal.exit()
        }
    }
}

/// The service the host is served by.
fn service(answerer: Answerer, verbose: bool) -> Result<Service, Failure> {
    match answerer {
        Answerer::Recording(file) => {
            let recording = Recording::read(&file)
                .map_err(|error| Failure::usage(format!("{}: {error}", file.display())))?;
            Ok(Service::replay(recording))
        }
        Answerer::Server {
            target,
            protocol,
            tools,
            record,
            described,
        } => {
            let mut proxy = Proxy::new(move |setup| {
                Ok(match &*target {
                    Target::Stdio(stdio) => {
                        let transport = StdioTransport::spawn(stdio.clone())?;
                        match verbose {
                            true => Client::for_bridge(traced(transport), setup),
                            false => Client::for_bridge(transport, setup),
                        }
                    }
                    Target::Http(http) => {
                        let transport = HttpTransport::new(http.clone())?;
                        match verbose {
                            true => Client::for_bridge(traced(transport), setup),
                            false => Client::for_bridge(transport, setup),
                        }
                    }
                    Target::Sse(http) => {
                        let transport = SseTransport::new(http.clone())?;
                        match verbose {
                            true => Client::for_bridge(traced(transport), setup),
                            false => Client::for_bridge(transport, setup),
                        }
                    }
                })
            })
            .with_tools(tools);
            if let Some(version) = protocol {
                proxy = proxy.with_protocol(ProtocolChoice::Pinned(version));
            }
            let service = Service::from(proxy);
            Ok(match record {
                Some(out) => service.recorded(out, described),
                None => service,
            })
        }
    }
}
