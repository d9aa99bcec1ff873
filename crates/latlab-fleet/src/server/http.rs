//! The HTTP pieces the handlers share: answers, the token in a request,
//! the body read up to a bound.

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use latlab_history::HistoryError;

use super::token::token_hash;
use super::App;

pub(super) fn text(status: StatusCode, message: impl Into<String>) -> Response {
    let mut body = message.into();
    body.push('\n');
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body,
    )
        .into_response()
}

pub(super) fn html(status: StatusCode, page: String) -> Response {
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

pub(super) fn store_down(e: &HistoryError) -> Response {
    text(
        StatusCode::SERVICE_UNAVAILABLE,
        format!("the store is unavailable, retry later: {e}"),
    )
}

pub(super) fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
        .map(str::trim)
}

/// None when reading is allowed; the 401 otherwise.
pub(super) fn check_read(
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
pub(super) async fn read_body(body: Body, max: usize) -> Result<Bytes, usize> {
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
