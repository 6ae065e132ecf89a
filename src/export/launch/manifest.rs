//! Host manifests (`.mcp.json`, `mcp.json`, `.vscode/mcp.json`): read as clients read them,
//! and the entry to start picked from them.

use super::*;

/// Host manifests, in the order they are looked for.
pub(crate) const MANIFEST_FILES: [&str; 3] = [".mcp.json", "mcp.json", ".vscode/mcp.json"];

/// Remote transports a manifest entry may declare.
pub(super) const REMOTE_TYPES: [&str; 6] = [
    "http",
    "sse",
    "streamable-http",
    "streamableHttp",
    "ws",
    "websocket",
];

/// One entry of a host manifest.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ManifestEntry {
    /// The manifest's path relative to the tree (for messages).
    pub(super) file: String,
    pub(super) name: String,
    pub(super) command: String,
    pub(super) args: Vec<String>,
    pub(super) env: Vec<(String, String)>,
    pub(super) cwd: Option<String>,
    /// An `http` / `sse` entry's endpoint (then `command` may be empty).
    pub(super) url: Option<String>,
    pub(super) headers: Vec<(String, String)>,
}

/// A parsed manifest entry: startable over stdio, or not.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum ManifestServer {
    Stdio(ManifestEntry),
    /// A remote entry, with its transport type.
    Remote(String),
}

pub(super) fn pick_manifest_entry(
    root: &Path,
    wanted: Option<&str>,
    warnings: &mut Vec<String>,
) -> Result<ManifestEntry> {
    let Some((file, servers)) = read_manifest(root)? else {
        let cause = match wanted {
            Some(name) => format!("--server {name} was given, but there is no host manifest in {}", root.display()),
            None => format!("no way to start the server: no --command, no [server] command in tdqs-gate.toml and no host manifest in {}", root.display()),
        };
        return Err(Error::usage(cause).with_advice(format!(
            "pass --command \"…\", add [server] command = \"…\" to tdqs-gate.toml, or commit one of {}",
            MANIFEST_FILES.join(", ")
        )));
    };
    let names: Vec<&str> = servers.iter().map(|(name, _)| name.as_str()).collect();
    if let Some(wanted) = wanted {
        return match servers.iter().find(|(name, _)| name == wanted) {
            Some((_, ManifestServer::Stdio(entry))) => Ok(entry.clone()),
            Some((_, ManifestServer::Remote(kind))) => Err(Error::usage(format!(
                "server \"{wanted}\" in {file} is a remote ({kind}) server; tdqs-gate reaches servers over stdio or HTTP"
            ))
            .with_advice("pick a stdio or http entry with --server, or give the command that starts it locally with --command")),
            None => Err(Error::usage(format!(
                "there is no server \"{wanted}\" in {file}; it lists: {}",
                names.join(", ")
            ))
            .with_advice("pass one of the listed names with --server")),
        };
    }
    let mut stdio = Vec::new();
    let mut http = Vec::new();
    let mut skipped = Vec::new();
    for (name, server) in &servers {
        match server {
            ManifestServer::Stdio(entry) if entry.url.is_some() => http.push(entry),
            ManifestServer::Stdio(entry) => stdio.push(entry),
            ManifestServer::Remote(kind) => skipped.push(format!(
                "{file}: skipped server \"{name}\": it is a remote ({kind}) server, and tdqs-gate reaches servers over stdio or HTTP"
            )),
        }
    }
    // An HTTP entry is picked on its own only when there is no stdio entry (a URL in a
    // manifest usually names a deployed server, not the one in the tree).
    if stdio.is_empty() {
        if let [entry] = http.as_slice() {
            warnings.extend(skipped);
            return Ok((*entry).clone());
        }
        stdio = http;
    } else {
        for entry in &http {
            skipped.push(format!(
                "{file}: skipped server \"{}\": it is a remote (http) server; pass --server {} to export it over HTTP",
                entry.name, entry.name
            ));
        }
    }
    warnings.extend(skipped);
    match stdio.as_slice() {
        [entry] => Ok((*entry).clone()),
        [] if servers.is_empty() => Err(Error::usage(format!("{file} lists no servers"))
            .with_advice("add an entry, or pass --command \"…\"")),
        [] => Err(Error::usage(format!(
            "{file} lists only remote servers ({}); tdqs-gate starts servers over stdio",
            names.join(", ")
        ))
        .with_advice(
            "give the command that starts the server locally with --command or [server] command",
        )),
        several => Err(Error::usage(format!(
            "{file} lists {} servers that can be started: {}",
            several.len(),
            several
                .iter()
                .map(|e| e.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .with_advice("pick one with --server NAME")),
    }
}

/// The first manifest found under `root`, with its entries in file order.
/// A manifest's path relative to the tree, and its named entries in file order.
pub(super) type Manifest = (String, Vec<(String, ManifestServer)>);

pub(super) fn read_manifest(root: &Path) -> Result<Option<Manifest>> {
    for file in MANIFEST_FILES {
        let path = root.join(file);
        if !path.is_file() {
            continue;
        }
        // Regular files only, opened without blocking: a FIFO swapped in must not hang the gate.
        let bytes = crate::platform::safe_file::read_regular(
            &path,
            crate::platform::safe_file::Links::Follow,
            16 << 20,
        )
        .map_err(|e| {
            Error::new(
                Stage::Config,
                format!("cannot read {}: {e}", path.display()),
            )
            .with_advice("make the manifest a regular file of UTF-8 JSON")
        })?;
        let text = String::from_utf8(bytes).map_err(|_| {
            Error::new(
                Stage::Config,
                format!("{} is not UTF-8 text", path.display()),
            )
            .with_advice("make the manifest readable UTF-8 JSON")
        })?;
        return parse_manifest(file, &text).map(|servers| Some((file.to_string(), servers)));
    }
    Ok(None)
}

pub(super) fn parse_manifest(file: &str, text: &str) -> Result<Vec<(String, ManifestServer)>> {
    let invalid = |what: String| {
        Error::new(Stage::Config, format!("{file}: {what}")).with_advice(format!(
            "fix {file}, or start the server with --command or tdqs-gate.toml [server]"
        ))
    };
    let plain = strip_jsonc(text);
    let value: Value = serde_json::from_str(&plain).map_err(|e| {
        invalid(format!(
            "not valid JSON at line {}, column {}: {e}",
            e.line(),
            e.column()
        ))
    })?;
    // A repeated key would be read as its last value here and maybe as its first by a host.
    if let Some(duplicate) = crate::export::json_keys::first_duplicate_key(&plain) {
        return Err(invalid(duplicate));
    }
    let Value::Object(top) = value else {
        return Err(invalid("the top level is not an object".to_string()));
    };
    let table = match (top.get("mcpServers"), top.get("servers")) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                "both `mcpServers` and `servers` are present; clients read one or the other"
                    .to_string(),
            ))
        }
        (Some(t), None) | (None, Some(t)) => t,
        (None, None) => {
            return Err(invalid(
                "neither `mcpServers` nor `servers` is present".to_string(),
            ))
        }
    };
    let Value::Object(table) = table else {
        return Err(invalid(
            "the servers are not an object of named entries".to_string(),
        ));
    };
    table
        .iter()
        .map(|(name, entry)| {
            parse_manifest_entry(file, name, entry).map(|server| (name.clone(), server))
        })
        .collect()
}

pub(super) fn parse_manifest_entry(
    file: &str,
    name: &str,
    entry: &Value,
) -> Result<ManifestServer> {
    let invalid = |what: String| {
        Error::new(Stage::Config, format!("{file}: server \"{name}\": {what}"))
            .with_advice(format!("fix the entry in {file}, or start the server with --command or tdqs-gate.toml [server]"))
    };
    let Value::Object(entry) = entry else {
        return Err(invalid("the entry is not an object".to_string()));
    };
    let kind = match entry.get("type") {
        None | Some(Value::Null) => None,
        Some(Value::String(kind)) => Some(kind.as_str()),
        Some(_) => return Err(invalid("`type` is not a string".to_string())),
    };
    match kind {
        Some(kind) if HTTP_TYPES.contains(&kind) => {
            return http_manifest_entry(file, name, entry).map_err(invalid);
        }
        Some(kind) if REMOTE_TYPES.contains(&kind) => {
            return Ok(ManifestServer::Remote(kind.to_string()))
        }
        None if entry.get("command").is_none() && entry.contains_key("url") => {
            return http_manifest_entry(file, name, entry).map_err(invalid);
        }
        None | Some("stdio") => {}
        Some(other) => {
            return Err(invalid(format!(
                "unknown `type` \"{other}\"; stdio entries have no type or \"stdio\""
            )))
        }
    }
    let command = match entry.get("command") {
        Some(Value::String(command)) if !command.trim().is_empty() => command.clone(),
        Some(Value::String(_)) => return Err(invalid("`command` is empty".to_string())),
        Some(_) => return Err(invalid("`command` is not a string".to_string())),
        None => return Err(invalid("there is no `command`".to_string())),
    };
    let args = match entry.get("args") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                scalar_string(item)
                    .ok_or_else(|| invalid(format!("argument {item} is not a string")))
            })
            .collect::<Result<Vec<_>>>()?,
        Some(_) => return Err(invalid("`args` is not a list".to_string())),
    };
    let env = match entry.get("env") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(vars)) => vars
            .iter()
            .filter(|(_, value)| !value.is_null())
            .map(|(key, value)| {
                if !crate::config::is_valid_env_name(key) {
                    return Err(invalid(format!(
                        "`{key}` is not a valid environment variable name"
                    )));
                }
                // Hosts require strings: a number or `true` here is refused, not converted.
                match value {
                    Value::String(value) => Ok((key.clone(), value.clone())),
                    other => Err(invalid(format!(
                        "env `{key}` is {}, not a string; write it in quotes, e.g. \"{key}\": \"{}\"",
                        tdqs_core::digest::json_kind(other),
                        scalar_string(other).unwrap_or_default()
                    ))),
                }
            })
            .collect::<Result<Vec<_>>>()?,
        Some(_) => return Err(invalid("`env` is not an object".to_string())),
    };
    let cwd = match entry.get("cwd") {
        None | Some(Value::Null) => None,
        Some(Value::String(cwd)) => Some(cwd.clone()),
        Some(_) => return Err(invalid("`cwd` is not a string".to_string())),
    };
    Ok(ManifestServer::Stdio(ManifestEntry {
        file: file.to_string(),
        name: name.to_string(),
        command,
        args,
        env,
        cwd,
        url: None,
        headers: Vec::new(),
    }))
}

/// Strings as they are; numbers and booleans as written (clients accept them in `env`).
pub(super) fn scalar_string(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// JSON with comments and trailing commas (VS Code's `mcp.json` dialect) as plain JSON. Removed
/// characters become spaces, so line and column numbers in parse errors stay true.
pub(super) fn strip_jsonc(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out: Vec<char> = Vec::with_capacity(chars.len());
    let mut i = 0;
    let mut in_string = false;
    while i < chars.len() {
        let c = chars[i];
        if in_string {
            out.push(c);
            if c == '\\' && i + 1 < chars.len() {
                out.push(chars[i + 1]);
                i += 2;
                continue;
            }
            if c == '"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        match (c, chars.get(i + 1)) {
            ('"', _) => {
                in_string = true;
                out.push(c);
                i += 1;
            }
            ('/', Some('/')) => {
                while i < chars.len() && chars[i] != '\n' {
                    out.push(' ');
                    i += 1;
                }
            }
            ('/', Some('*')) => {
                out.extend([' ', ' ']);
                i += 2;
                while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                    out.push(if chars[i] == '\n' { '\n' } else { ' ' });
                    i += 1;
                }
                if i < chars.len() {
                    out.extend([' ', ' ']);
                    i += 2;
                }
            }
            (']' | '}', _) => {
                // A comma followed only by blanks before this bracket is a trailing comma.
                if let Some(pos) = out.iter().rposition(|c| !c.is_whitespace()) {
                    if out[pos] == ',' {
                        out[pos] = ' ';
                    }
                }
                out.push(c);
                i += 1;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out.into_iter().collect()
}
