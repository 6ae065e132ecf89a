//! HTTP targets: the `{port}` a side's server listens on, credential headers, and the host
//! manifest entries reached over HTTP.

use super::*;

/// Stands for a free loopback port the gate picks for each side's HTTP server.
pub(crate) const PORT_PLACEHOLDER: &str = "{port}";

/// A free loopback port for a side's HTTP server (another program may take it before the
/// server binds it; the wait for the port then fails with a clear message).
pub(super) fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).map_err(|io| {
        Error::io(
            Stage::Export,
            "cannot find a free loopback port for the HTTP server",
            io,
        )
    })?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|io| Error::io(Stage::Export, "cannot read a loopback port", io))
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
