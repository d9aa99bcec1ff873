//! `latlab serve`: an HTTP service over the store (SQLite or PostgreSQL),
//! stateless beyond it, so several can run behind one proxy.
//!
//! - `POST /api/v1/results` with `Authorization: Bearer TOKEN`: a board
//!   stores a result (201 stored, 200 already stored). A missing or unknown
//!   token is 401; a body over the size bound 413; malformed JSON 400; a
//!   document of an unknown schema, or one that is not what its schema
//!   says, 422. Nothing is stored in any of these cases. The store down: 503
//!   (the board keeps the result in its spool).
//! - `GET /`: the fleet; `GET /board/NAME?kind=K&kernel=K&load=L`: a board;
//!   `GET /compare?a=ID&b=ID`: two runs compared (the report's comparison);
//!   `GET /api/v1/results/ID`: a stored document. Reading needs no token
//!   unless a read token is set.
//! - [`add_board`] registers a board and returns its token, shown once;
//!   the store keeps only its SHA-256.

mod http;
mod pool;
mod routes;
mod token;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::routing::{get, post};
use axum::Router;
use latlab_history::{History, Location};

use crate::{FleetError, Result};

pub use token::{new_token, token_hash};

/// How `latlab serve` serves, resolved from its flags.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    /// Address and port to listen on.
    pub listen: SocketAddr,
    /// The token reading needs too (`None`: the dashboard is open to read).
    pub read_token: Option<String>,
    /// Largest result accepted, bytes.
    pub max_body: usize,
    /// A result is a regression above this fraction over its series'
    /// baseline (0.5: 50 %).
    pub regression_threshold: f64,
    /// Store connections at most (requests beyond wait for one).
    pub db_connections: usize,
}

/// What the handlers share: where the store is and a few open connections.
struct App {
    location: Location,
    idle: Mutex<Vec<History>>,
    permits: tokio::sync::Semaphore,
    max_body: usize,
    read_token_hash: Option<String>,
    threshold: f64,
}

/// Registers a board in the store; returns its new token (the store
/// keeps only its hash, so this is the one time it is known).
pub fn add_board(history: &mut History, name: &str) -> Result<String> {
    let token = new_token()?;
    history.add_board(name, &token_hash(&token))?;
    Ok(token)
}

/// Serves the store `history` was opened on until SIGTERM or SIGINT;
/// `listening` is told the address once the socket is bound.
pub fn serve(
    config: ServerConfig,
    history: History,
    listening: impl FnOnce(SocketAddr, &str),
) -> Result<()> {
    if config.max_body == 0 || config.db_connections == 0 {
        return Err(FleetError::Setting(
            "--max-body-mib and --db-connections must be at least 1".into(),
        ));
    }
    let app = Arc::new(App {
        location: history.location().clone(),
        idle: Mutex::new(vec![history]),
        permits: tokio::sync::Semaphore::new(config.db_connections),
        max_body: config.max_body,
        read_token_hash: config.read_token.as_deref().map(token_hash),
        threshold: config.regression_threshold,
    });
    let failed = |action: String| move |error: std::io::Error| FleetError::Serve { action, error };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(config.db_connections + 4)
        .build()
        .map_err(failed("starting the async runtime".into()))?;
    runtime.block_on(async move {
        let listen = config.listen;
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(failed(format!(
                "listening on {listen} (choose another --listen)"
            )))?;
        let local = listener
            .local_addr()
            .map_err(failed("reading the bound address".into()))?;
        listening(local, &app.location.display());
        axum::serve(listener, router(app))
            .with_graceful_shutdown(shutdown_signal())
            .await
            .map_err(failed("serving".into()))
    })
}

async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {},
        _ = int.recv() => {},
    }
}

/// The routes, each a handler in [`routes`].
fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/", get(routes::fleet))
        .route("/board/{name}", get(routes::board))
        .route("/compare", get(routes::compare))
        .route("/api/v1/results", post(routes::ingest))
        .route("/api/v1/results/{id}", get(routes::result))
        .route("/api/v1/health", get(routes::health))
        .with_state(app)
}
