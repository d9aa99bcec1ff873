//! `latlab serve`: an HTTP service over the store (SQLite or PostgreSQL),
//! stateless beyond it, so several can run behind one proxy.
//!
//! - `POST /api/v1/results` with `Authorization: Bearer TOKEN`: a board
//!   stores a result (201 stored, 200 already stored). A missing or unknown
//!   token is 401; a body over `--max-body-mib` 413; malformed JSON 400; a
//!   document of an unknown schema, or one that is not what its schema
//!   says, 422. Nothing is stored in any of these cases. The store down: 503
//!   (the board keeps the result in its spool).
//! - `GET /`: the fleet; `GET /board/NAME?kind=K&kernel=K&load=L`: a board;
//!   `GET /compare?a=ID&b=ID`: two runs compared (the report's comparison);
//!   `GET /api/v1/results/ID`: a stored document. Reading needs no token
//!   unless `--read-token` is given.
//! - `latlab serve --add-board NAME` registers a board and prints its token
//!   once; the store keeps only its SHA-256.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use anyhow::Context;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use http_body_util::BodyExt;
use latlab_history::{Filter, History, HistoryError, Location};
use latlab_report::dashboard::{self, BoardFilters};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::cmd::history::DbArgs;

/// Arguments of `latlab serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Address and port to listen on (loopback by default: put a TLS proxy
    /// in front to serve a network).
    #[arg(long, default_value = "127.0.0.1:8086", value_name = "ADDR:PORT")]
    pub listen: SocketAddr,
    /// Register a board in the store, print its token (once: only its hash
    /// is kept) and exit.
    #[arg(long, value_name = "NAME")]
    pub add_board: Option<String>,
    /// Require this token (as `Authorization: Bearer TOKEN` or `?token=`)
    /// for reading too; by default the dashboard is open to read.
    #[arg(long, value_name = "TOKEN")]
    pub read_token: Option<String>,
    /// Largest result accepted, MiB.
    #[arg(long, default_value_t = 16, value_name = "MIB")]
    pub max_body_mib: usize,
    /// A result is a regression when its worst latency is this many
    /// percent above the baseline of its series (the same board, kind and
    /// setup, kernel, preemption model and load).
    #[arg(long, default_value_t = 50.0, value_name = "PERCENT")]
    pub regression_threshold: f64,
    /// Database connections at most (requests beyond wait for one).
    #[arg(long, default_value_t = 16, value_name = "N")]
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

/// The SHA-256 of a token, hex: what the store keeps.
pub fn token_hash(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A new token: 32 random bytes, hex.
fn new_token() -> anyhow::Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .context("reading /dev/urandom for a token")?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Runs `latlab serve`.
pub fn execute(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let location = args.db.location()?;
    let mut history = History::open_location(&location)?;
    if let Some(name) = &args.add_board {
        let token = new_token()?;
        history.add_board(name, &token_hash(&token))?;
        println!("{token}");
        eprintln!(
            "board {name:?} added to {}; its token is above, shown this once (the store keeps only its hash).\n\
             On the board: put it in a file readable only by root, then\n  \
             latlab run ... --push http://SERVER:PORT --token-file FILE",
            history.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    if args.max_body_mib == 0 || args.db_connections == 0 {
        anyhow::bail!("--max-body-mib and --db-connections must be at least 1");
    }
    let app = Arc::new(App {
        location,
        idle: Mutex::new(vec![history]),
        permits: tokio::sync::Semaphore::new(args.db_connections),
        max_body: args.max_body_mib << 20,
        read_token_hash: args.read_token.as_deref().map(token_hash),
        threshold: args.regression_threshold / 100.0,
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(args.db_connections + 4)
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("listening on {} (choose another --listen)", args.listen))?;
        let local = listener.local_addr()?;
        println!(
            "latlab serve: listening on http://{local}/ (store: {})",
            app.location.display()
        );
        axum::serve(listener, router(app))
            .with_graceful_shutdown(shutdown_signal())
            .await
            .context("serving")
    })?;
    Ok(ExitCode::SUCCESS)
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

fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/", get(fleet))
        .route("/board/{name}", get(board))
        .route("/compare", get(compare))
        .route("/api/v1/results", post(ingest))
        .route("/api/v1/results/{id}", get(result))
        .route("/api/v1/health", get(health))
        .with_state(app)
}

/// Runs `f` on a pooled store connection, on the blocking pool (the
/// store's clients are synchronous). A connection that failed is dropped,
/// so a restarted PostgreSQL is reconnected to on the next request.
async fn with_db<T, F>(app: &Arc<App>, f: F) -> Result<T, HistoryError>
where
    T: Send + 'static,
    F: FnOnce(&mut History) -> Result<T, HistoryError> + Send + 'static,
{
    let _permit = app
        .permits
        .acquire()
        .await
        .expect("the semaphore is never closed");
    let app = Arc::clone(app);
    tokio::task::spawn_blocking(move || {
        let pooled = app.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut history = match pooled {
            Some(h) => h,
            None => History::open_location(&app.location)?,
        };
        let outcome = f(&mut history);
        if outcome.is_ok() {
            app.idle
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(history);
        }
        outcome
    })
    .await
    .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
}

fn text(status: StatusCode, message: impl Into<String>) -> Response {
    let mut body = message.into();
    body.push('\n');
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body,
    )
        .into_response()
}

fn html(status: StatusCode, page: String) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8")),
            (
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(
                    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'unsafe-inline'",
                ),
            ),
        ],
        page,
    )
        .into_response()
}

fn store_down(e: &HistoryError) -> Response {
    text(
        StatusCode::SERVICE_UNAVAILABLE,
        format!("the store is unavailable, retry later: {e}"),
    )
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
        .map(str::trim)
}

/// None when reading is allowed; the 401 otherwise.
fn check_read(
    app: &App,
    headers: &HeaderMap,
    query: &std::collections::HashMap<String, String>,
) -> Option<Response> {
    let wanted = app.read_token_hash.as_ref()?;
    let given = bearer(headers).or(query.get("token").map(String::as_str));
    match given {
        Some(token) if &token_hash(token) == wanted => None,
        _ => Some(text(
            StatusCode::UNAUTHORIZED,
            "reading needs the read token: Authorization: Bearer TOKEN, or ?token=TOKEN",
        )),
    }
}

/// Reads the body up to `max` bytes; a longer one is read on (and
/// dropped) up to a bound, so that the client gets the answer instead of
/// a reset, and `Err(bytes seen)` is returned.
async fn read_body(body: Body, max: usize) -> Result<Bytes, usize> {
    const DRAIN_LIMIT: usize = 512 << 20;
    let mut body = body;
    let mut kept: Vec<u8> = Vec::new();
    let mut seen = 0usize;
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            return Err(seen);
        };
        if let Ok(data) = frame.into_data() {
            seen += data.len();
            if seen <= max {
                kept.extend_from_slice(&data);
            } else if seen > DRAIN_LIMIT {
                return Err(seen);
            }
        }
    }
    if seen > max {
        Err(seen)
    } else {
        Ok(Bytes::from(kept))
    }
}

async fn ingest(State(app): State<Arc<App>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
    let board = match bearer(&parts.headers) {
        None => None,
        Some(token) => {
            let hash = token_hash(token);
            match with_db(&app, move |h| h.board_for_token(&hash)).await {
                Ok(board) => board,
                Err(e) => {
                    let _ = read_body(body, 0).await;
                    return store_down(&e);
                }
            }
        }
    };
    let Some(board) = board else {
        let _ = read_body(body, 0).await;
        let why = if bearer(&parts.headers).is_some() {
            "unknown token: use the one `latlab serve --add-board NAME` printed"
        } else {
            "missing token: send Authorization: Bearer TOKEN (from `latlab serve --add-board NAME`)"
        };
        return text(StatusCode::UNAUTHORIZED, why);
    };
    let too_big = |n: usize| {
        text(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the result is {} MiB or more, this server takes at most {} MiB (--max-body-mib); nothing stored",
                n >> 20,
                app.max_body >> 20
            ),
        )
    };
    let bytes = match read_body(body, app.max_body).await {
        Ok(bytes) => bytes,
        Err(seen) => return too_big(seen.max(declared.unwrap_or(0))),
    };
    let value: Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => {
            return text(
                StatusCode::BAD_REQUEST,
                format!("malformed JSON: {e}; nothing stored"),
            )
        }
    };
    let known: Vec<&str> = latlab_document::KINDS.iter().map(|k| k.0).collect();
    let schema = value.get("schema").and_then(Value::as_str).unwrap_or("");
    if !value.is_object() || !known.contains(&schema) {
        return text(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!(
                "unknown schema {schema:?}: this server stores {}; nothing stored",
                known.join(", ")
            ),
        );
    }
    if let Err(e) = latlab_document::Document::from_value(value.clone()) {
        return text(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("not a valid {schema} document: {e}; nothing stored"),
        );
    }
    match with_db(&app, move |h| h.store(&value, Some(&board))).await {
        Ok(stored) => {
            let status = if stored.new {
                StatusCode::CREATED
            } else {
                StatusCode::OK
            };
            (
                status,
                axum::Json(json!({"id": stored.id, "uid": stored.uid, "new": stored.new})),
            )
                .into_response()
        }
        Err(e) => store_down(&e),
    }
}

type Params = Query<std::collections::HashMap<String, String>>;

async fn fleet(State(app): State<Arc<App>>, headers: HeaderMap, Query(q): Params) -> Response {
    if let Some(denied) = check_read(&app, &headers, &q) {
        return denied;
    }
    let boards = with_db(&app, |h| {
        let mut boards = Vec::new();
        for name in h.boards()? {
            let runs = h.query(&Filter {
                board: Some(name.clone()),
                limit: Some(500),
                ..Filter::default()
            })?;
            boards.push((name, runs));
        }
        Ok(boards)
    })
    .await;
    match boards {
        Ok(boards) => html(
            StatusCode::OK,
            dashboard::fleet_page(&boards, app.threshold),
        ),
        Err(e) => store_down(&e),
    }
}

async fn board(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
    headers: HeaderMap,
    Query(q): Params,
) -> Response {
    if let Some(denied) = check_read(&app, &headers, &q) {
        return denied;
    }
    let wanted = name.clone();
    let runs = with_db(&app, move |h| {
        if !h.boards()?.contains(&wanted) {
            return Ok(None);
        }
        let all = h.query(&Filter {
            board: Some(wanted),
            ..Filter::default()
        })?;
        Ok(Some(all))
    })
    .await;
    let all = match runs {
        Ok(Some(all)) => all,
        Ok(None) => {
            return html(
                StatusCode::NOT_FOUND,
                dashboard::message_page("unknown board", &format!("No board is named {name:?}.")),
            )
        }
        Err(e) => return store_down(&e),
    };
    let chosen = |key: &str| q.get(key).map(String::as_str);
    let filters = BoardFilters::new(&all, chosen("kind"), chosen("kernel"), chosen("load"));
    let shown: Vec<_> = all.into_iter().filter(|r| filters.keeps(r)).collect();
    html(
        StatusCode::OK,
        dashboard::board_page(&name, &shown, &filters, app.threshold),
    )
}

async fn compare(State(app): State<Arc<App>>, headers: HeaderMap, Query(q): Params) -> Response {
    if let Some(denied) = check_read(&app, &headers, &q) {
        return denied;
    }
    let ids: Option<Vec<i64>> = ["a", "b"].iter().map(|k| q.get(*k)?.parse().ok()).collect();
    let Some(ids) = ids else {
        return text(
            StatusCode::BAD_REQUEST,
            "give two result ids: /compare?a=ID&b=ID",
        );
    };
    let fetched = with_db(&app, move |h| {
        let entries = h.query(&Filter::default())?;
        let mut out = Vec::new();
        for id in ids {
            let board = entries
                .iter()
                .find(|e| e.id == id)
                .and_then(|e| e.board.clone());
            match h.get(id) {
                Ok(doc) => out.push(Ok((id, board, doc))),
                Err(HistoryError::NotFound { .. }) => out.push(Err(id)),
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    })
    .await;
    let fetched = match fetched {
        Ok(f) => f,
        Err(e) => return store_down(&e),
    };
    let mut entries = Vec::new();
    for item in fetched {
        match item {
            Ok((id, board, doc)) => match latlab_document::Document::from_value(doc) {
                Ok(document) => entries.push(latlab_report::html::Entry {
                    label: format!("id {id} ({})", board.unwrap_or_else(|| "local".into())),
                    document,
                }),
                Err(e) => {
                    return text(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        format!("result {id}: {e}"),
                    )
                }
            },
            Err(id) => {
                return html(
                    StatusCode::NOT_FOUND,
                    dashboard::message_page("unknown result", &format!("No result has id {id}.")),
                )
            }
        }
    }
    html(
        StatusCode::OK,
        latlab_report::html::render(&entries, "latlab: two runs compared"),
    )
}

async fn result(
    State(app): State<Arc<App>>,
    Path(id): Path<i64>,
    headers: HeaderMap,
    Query(q): Params,
) -> Response {
    if let Some(denied) = check_read(&app, &headers, &q) {
        return denied;
    }
    match with_db(&app, move |h| h.get(id)).await {
        Ok(doc) => axum::Json(doc).into_response(),
        Err(HistoryError::NotFound { .. }) => {
            text(StatusCode::NOT_FOUND, format!("no result with id {id}"))
        }
        Err(e) => store_down(&e),
    }
}

async fn health(State(app): State<Arc<App>>) -> Response {
    match with_db(&app, |h| h.count()).await {
        Ok(n) => text(StatusCode::OK, format!("ok: {n} results")),
        Err(e) => store_down(&e),
    }
}
