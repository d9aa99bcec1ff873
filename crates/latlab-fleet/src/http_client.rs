//! The board's HTTP client: one `POST` over plain HTTP/1.1 (`http://`
//! only: TLS belongs to the proxy in front of `latlab serve`), written on
//! the standard library so that a board binary carries no URL, IDNA or
//! Unicode tables for it.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one read or write may wait.
const IO_TIMEOUT: Duration = Duration::from_secs(120);

/// A server's answer: its status code and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Answer {
    /// The status code (201, 401, ...).
    pub status: u16,
    /// The body, as text.
    pub body: String,
}

/// An `http://HOST[:PORT]/PATH` URL split: the authority to connect to
/// (with the default port 80) and to name in `Host`, and the path.
pub(crate) fn split_url(url: &str) -> Result<(String, String), String> {
    let rest = url.strip_prefix("http://").ok_or_else(|| {
        format!("{url}: give an http:// URL (TLS belongs to a proxy in front of latlab serve)")
    })?;
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, "/"),
    };
    if authority.is_empty() {
        return Err(format!("{url}: no host"));
    }
    Ok((authority.to_string(), path.to_string()))
}

/// Sends `body` as JSON with the bearer `token` to `url`; `Err` says why
/// no answer came (no connection, a reset, a malformed answer).
pub(crate) fn post_json(url: &str, token: &str, body: &str) -> Result<Answer, String> {
    let (authority, path) = split_url(url)?;
    let with_port = if authority.ends_with(']') || !authority.contains(':') {
        format!("{authority}:80")
    } else {
        authority.clone()
    };
    let addrs: Vec<_> = with_port
        .to_socket_addrs()
        .map_err(|e| format!("resolving {authority}: {e}"))?
        .collect();
    let mut last = format!("resolving {authority}: no address");
    let mut stream = None;
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = format!("connecting to {addr}: {e}"),
        }
    }
    let mut stream = stream.ok_or(last)?;
    let io = |e: std::io::Error| format!("talking to {authority}: {e}");
    stream.set_read_timeout(Some(IO_TIMEOUT)).map_err(io)?;
    stream.set_write_timeout(Some(IO_TIMEOUT)).map_err(io)?;
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\
         User-Agent: latlab/{}\r\n\r\n",
        body.len(),
        env!("CARGO_PKG_VERSION")
    );
    stream.write_all(head.as_bytes()).map_err(io)?;
    stream.write_all(body.as_bytes()).map_err(io)?;
    stream.flush().map_err(io)?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).map_err(io)?;
    parse_answer(&answer).ok_or_else(|| format!("{authority} sent no HTTP answer"))
}

/// The status and body of a whole HTTP/1.1 answer (the connection was
/// closed after it); a chunked body is joined.
fn parse_answer(bytes: &[u8]) -> Option<Answer> {
    let text = String::from_utf8_lossy(bytes);
    let (head, body) = text.split_once("\r\n\r\n")?;
    let mut lines = head.lines();
    let status: u16 = lines
        .next()?
        .strip_prefix("HTTP/1.")?
        .get(2..)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    let chunked = lines.any(|l| {
        let l = l.to_ascii_lowercase();
        l.starts_with("transfer-encoding:") && l.contains("chunked")
    });
    let body = if chunked {
        unchunk(body)
    } else {
        body.to_string()
    };
    Some(Answer { status, body })
}

/// A chunked body's data, joined.
fn unchunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.split(';').next().unwrap_or("").trim(), 16);
        match size {
            Ok(n) if n > 0 && rest.len() >= n => {
                out.push_str(&rest[..n]);
                body = rest[n..].trim_start_matches("\r\n");
            }
            _ => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_authority_and_path() {
        assert_eq!(
            split_url("http://lab:8086/api/v1/results").unwrap(),
            ("lab:8086".into(), "/api/v1/results".into())
        );
        assert_eq!(split_url("http://lab").unwrap(), ("lab".into(), "/".into()));
        assert!(split_url("https://lab/x").unwrap_err().contains("proxy"));
    }

    #[test]
    fn answers_are_read_plain_and_chunked() {
        let plain = b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 6\r\n\r\nno way";
        assert_eq!(
            parse_answer(plain),
            Some(Answer {
                status: 401,
                body: "no way".into()
            })
        );
        let chunked =
            b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
        assert_eq!(parse_answer(chunked).unwrap().body, "abcde");
        assert_eq!(parse_answer(b"garbage"), None);
    }

    #[test]
    fn a_post_reaches_a_server_with_its_token() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut seen = Vec::new();
            let mut buf = [0u8; 4096];
            while !String::from_utf8_lossy(&seen).contains("{\"a\":1}") {
                let n = conn.read(&mut buf).unwrap();
                seen.extend_from_slice(&buf[..n]);
            }
            conn.write_all(b"HTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\nok")
                .unwrap();
            String::from_utf8(seen).unwrap()
        });
        let url = format!("http://127.0.0.1:{port}/api/v1/results");
        let answer = post_json(&url, "tok", "{\"a\":1}").unwrap();
        assert_eq!(answer.status, 201);
        let request = server.join().unwrap();
        assert!(request.starts_with("POST /api/v1/results HTTP/1.1\r\n"));
        assert!(request.contains("Authorization: Bearer tok\r\n"));
        assert!(request.contains("Content-Length: 7\r\n"));
        assert!(post_json(&format!("http://127.0.0.1:{port}/"), "t", "{}").is_err());
    }
}
