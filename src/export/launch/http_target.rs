//! HTTP targets: the `{port}` a side's server listens on, credential headers, and the host
//! manifest entries reached over HTTP.

use super::*;

/// Stands for a free loopback port the gate picks for each side's HTTP server.
pub(crate) const PORT_PLACEHOLDER: &str = "{port}";

/// How many of the ports this process handed out [`free_port`] remembers, and so never hands
/// out again while they are remembered.
const REMEMBERED_PORTS: usize = 64;

/// The ports handed out last, oldest first.
static HANDED_OUT: std::sync::Mutex<std::collections::VecDeque<u16>> =
    std::sync::Mutex::new(std::collections::VecDeque::new());

/// A free loopback port for a side's HTTP server (another program may take it before the
/// server binds it; the wait for the port then fails with a clear message). The OS may offer a
/// port again as soon as it is released, so a port handed out lately is refused: the two sides
/// of one run never share a port.
pub(super) fn free_port() -> Result<u16> {
    let mut handed_out = HANDED_OUT.lock().unwrap_or_else(|e| e.into_inner());
    // A refused port's listener stays open until a port is chosen, so the OS offers another.
    let mut refused = Vec::new();
    while refused.len() <= REMEMBERED_PORTS {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).map_err(|io| {
            Error::io(
                Stage::Export,
                "cannot find a free loopback port for the HTTP server",
                io,
            )
        })?;
        let port = listener
            .local_addr()
            .map(|a| a.port())
            .map_err(|io| Error::io(Stage::Export, "cannot read a loopback port", io))?;
        if handed_out.contains(&port) {
            refused.push(listener);
            continue;
        }
        if handed_out.len() == REMEMBERED_PORTS {
            handed_out.pop_front();
        }
        handed_out.push_back(port);
        return Ok(port);
    }
    Err(Error::new(
        Stage::Export,
        "cannot find a free loopback port for the HTTP server: every port offered was one \
         handed out lately",
    ))
}

/// A header or URL query parameter that carries a credential (the one rule of
/// [`tdqs_core::redact::is_credential_name`]).
pub(super) fn looks_secret_header(name: &str) -> bool {
    tdqs_core::redact::is_credential_name(name, NameContext::Header)
}

/// Manifest types served over HTTP (Streamable HTTP; `sse` entries are tried the same way).
pub(super) const HTTP_TYPES: [&str; 4] = ["http", "sse", "streamable-http", "streamableHttp"];

/// An `http` / `sse` entry: `url` and `headers` (strings).
pub(super) fn http_manifest_entry(
    file: &str,
    name: &str,
    entry: &serde_json::Map<String, Value>,
) -> std::result::Result<ManifestServer, String> {
    let url = match entry.get("url") {
        Some(Value::String(url)) if url.starts_with("http://") || url.starts_with("https://") => {
            url.clone()
        }
        Some(Value::String(url)) => {
            return Err(format!("`url` \"{url}\" is not an http:// or https:// URL"))
        }
        Some(_) => return Err("`url` is not a string".to_string()),
        None => return Err("an http entry needs a `url`".to_string()),
    };
    let headers = match entry.get("headers") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(items)) => items
            .iter()
            .map(|(key, value)| match value {
                Value::String(value) => Ok((key.clone(), value.clone())),
                _ => Err(format!("header `{key}` is not a string")),
            })
            .collect::<std::result::Result<Vec<_>, _>>()?,
        Some(_) => return Err("`headers` is not an object".to_string()),
    };
    Ok(ManifestServer::Stdio(ManifestEntry {
        file: file.to_string(),
        name: name.to_string(),
        command: String::new(),
        args: Vec::new(),
        env: Vec::new(),
        cwd: None,
        url: Some(url),
        headers,
    }))
}
