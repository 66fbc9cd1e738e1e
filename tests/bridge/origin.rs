//! A web page elsewhere cannot drive the bridge through the user's browser: a
//! cross-site WebSocket upgrade (a foreign `Origin`) and DNS rebinding (a foreign
//! `Host`) are refused on every route, while the bridge's own pages, pages on this
//! machine and clients that are not browsers (no `Origin`) are served, and the
//! config can list more hosts and origins.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::json;
use tungstenite::client::IntoClientRequest;

use crate::harness::{Bridge, free_tcp_port, quiet_config};
use crate::websocket::request;

/// Sends a GET for `path` with `headers` (Host first) and returns the status code
/// and the body.
fn raw_get(port: u16, path: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    let mut text = format!("GET {path} HTTP/1.1\r\n");
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str("Connection: close\r\n\r\n");
    stream.write_all(text.as_bytes()).expect("send");
    let mut answer = Vec::new();
    // A 101 answer keeps the connection open: read what came.
    let mut buf = [0u8; 4096];
    while let Ok(n) = stream.read(&mut buf) {
        if n == 0 {
            break;
        }
        answer.extend_from_slice(&buf[..n]);
        if answer.starts_with(b"HTTP/1.1 101") && answer.windows(4).any(|w| w == b"\r\n\r\n") {
            break;
        }
    }
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or("").to_owned();
    (status, body)
}

/// A WebSocket upgrade of `/` with `host` and `origin` (none when empty).
fn upgrade(port: u16, host: &str, origin: &str) -> (u16, String) {
    let mut headers = vec![
        ("Host", host),
        ("Upgrade", "websocket"),
        ("Connection", "Upgrade"),
        ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
        ("Sec-WebSocket-Version", "13"),
    ];
    if !origin.is_empty() {
        headers.push(("Origin", origin));
    }
    raw_get(port, "/", &headers)
}

#[test]
fn pages_elsewhere_on_the_web_cannot_drive_a_default_bridge() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_tcp_port();
    let mut config = quiet_config();
    config["websocket"] = json!({
        "listen": format!("127.0.0.1:{port}"),
        "allowedHosts": ["studio.local"],
        "allowedOrigins": ["https://show.example"]
    });
    let bridge = Bridge::start(dir.path(), &config, &["--quiet"]);
    let own = format!("127.0.0.1:{port}");
    let own_origin = format!("http://{own}");

    // A cross-site page and DNS rebinding: refused, saying why, on the upgrade and
    // on every data route.
    let (status, body) = upgrade(port, &own, "http://evil.example");
    assert_eq!(status, 403, "{body}");
    assert!(
        body.contains("Origin `http://evil.example` is a page on another site"),
        "{body}"
    );
    let rebound = format!("evil.example:{port}");
    let (status, body) = upgrade(port, &rebound, &format!("http://{rebound}"));
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("is not this bridge's address"), "{body}");
    for path in ["/api/recordings", "/api/rig", "/recordings/x.vrma", "/"] {
        let (status, _) = raw_get(port, path, &[("Host", &rebound)]);
        assert_eq!(status, 403, "{path} with Host {rebound}");
        let (status, _) = raw_get(
            port,
            path,
            &[("Host", &own), ("Origin", "http://evil.example")],
        );
        assert_eq!(status, 403, "{path} from a foreign page");
    }
    let (status, _) = upgrade(port, &own, "null");
    assert_eq!(status, 403, "a sandboxed or file page");

    // The bridge's own page, a page on this machine, a listed origin and host,
    // and a program that is no browser: served.
    for (host, origin) in [
        (own.as_str(), own_origin.as_str()),
        (own.as_str(), "http://localhost:5173"),
        (own.as_str(), "https://show.example"),
        ("studio.local:8787", "http://studio.local:8787"),
        (&format!("localhost:{port}"), ""),
    ] {
        let (status, body) = upgrade(port, host, origin);
        assert_eq!(status, 101, "Host {host}, Origin {origin}: {body}");
    }
    let (status, _) = raw_get(port, "/api/rig", &[("Host", &own), ("Origin", &own_origin)]);
    assert_eq!(status, 200);

    // A whole session from the bridge's own origin works as before.
    let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    let mut handshake = format!("ws://{own}/")
        .into_client_request()
        .expect("request");
    handshake
        .headers_mut()
        .insert("Origin", own_origin.parse().expect("header"));
    let (mut client, _) = tungstenite::client::client(handshake, stream).expect("upgrade");
    let reply = request(&mut client, json!({"type": "listPerformers", "id": 1}));
    assert!(reply["performers"].is_array(), "{reply}");
    drop(client);

    let (code, _, stderr) = bridge.stop();
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("request refused: Origin `http://evil.example`"),
        "{stderr}"
    );
}
