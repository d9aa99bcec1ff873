//! The handlers: a board's result in, the dashboard's pages and the
//! stored results out.

use std::sync::Arc;

use axum::extract::{Path, Query, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use latlab_history::{Filter, HistoryError};
use latlab_report::dashboard;
use serde_json::{json, Value};

use super::http::{bearer, check_read, html, read_body, store_down, text};
use super::pool::with_db;
use super::token::token_hash;
use super::App;
use crate::dashboard::{board_filters, board_view, fleet_view};

pub(super) async fn ingest(State(app): State<Arc<App>>, request: Request) -> Response {
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

pub(super) async fn fleet(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Query(q): Params,
) -> Response {
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
            dashboard::fleet_page(&fleet_view(&boards, app.threshold)),
        ),
        Err(e) => store_down(&e),
    }
}

pub(super) async fn board(
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
    let filters = board_filters(&all, chosen("kind"), chosen("kernel"), chosen("load"));
    html(
        StatusCode::OK,
        dashboard::board_page(&board_view(&name, all, filters, app.threshold)),
    )
}

pub(super) async fn compare(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Query(q): Params,
) -> Response {
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

pub(super) async fn result(
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

pub(super) async fn health(State(app): State<Arc<App>>) -> Response {
    match with_db(&app, |h| h.count()).await {
        Ok(n) => text(StatusCode::OK, format!("ok: {n} results")),
        Err(e) => store_down(&e),
    }
}
