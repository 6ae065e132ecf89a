//! Strings with `{root}` still to be replaced, and the expansion of `${…}` references in them.

use super::*;

/// A string with `{root}` still to be replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Template {
    /// As written, for the export record (never holds expanded host values).
    pub(super) raw: String,
    pub(super) parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Part {
    Text(String),
    Root,
}

impl Template {
    /// Renders with `{port}` replaced too, when a port was picked.
    pub(super) fn render_port(&self, root: &Path, port: Option<u16>) -> String {
        let text = self.render(root);
        match port {
            Some(port) => text.replace(PORT_PLACEHOLDER, &port.to_string()),
            None => text,
        }
    }

    pub(super) fn render(&self, root: &Path) -> String {
        let root = root.to_string_lossy();
        self.parts
            .iter()
            .map(|part| match part {
                Part::Text(text) => text.as_str(),
                Part::Root => root.as_ref(),
            })
            .collect()
    }
}

impl Template {
    pub(super) fn has_root(&self) -> bool {
        self.parts.iter().any(|p| matches!(p, Part::Root))
    }
}

/// A `--command` word: only `{root}` is special.
pub(super) fn root_only(text: &str) -> Template {
    let mut parts = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("{root}") {
        push_text(&mut parts, &rest[..at]);
        parts.push(Part::Root);
        rest = &rest[at + "{root}".len()..];
    }
    push_text(&mut parts, rest);
    Template {
        raw: text.to_string(),
        parts,
    }
}

pub(super) fn push_text(parts: &mut Vec<Part>, text: &str) {
    if text.is_empty() {
        return;
    }
    if let Some(Part::Text(last)) = parts.last_mut() {
        last.push_str(text);
    } else {
        parts.push(Part::Text(text.to_string()));
    }
}

/// A configuration or manifest string: `{root}`, `${workspaceFolder}`, `${NAME}`,
/// `${NAME:-default}` and `${env:NAME}`.
pub(super) fn expand(
    text: &str,
    host: &HostEnv,
    secrets: &Secrets<'_>,
    origin: &str,
) -> Result<Template> {
    let mut parts = Vec::new();
    expand_into(text, host, secrets, origin, &mut parts)?;
    Ok(Template {
        raw: text.to_string(),
        parts,
    })
}

pub(super) fn expand_into(
    text: &str,
    host: &HostEnv,
    secrets: &Secrets<'_>,
    origin: &str,
    parts: &mut Vec<Part>,
) -> Result<()> {
    let mut rest = text;
    loop {
        let next_root = rest.find("{root}");
        let next_var = rest.find("${");
        match (next_root, next_var) {
            (Some(r), v) if v.is_none_or(|v| r < v) => {
                push_text(parts, &rest[..r]);
                parts.push(Part::Root);
                rest = &rest[r + "{root}".len()..];
            }
            (_, Some(v)) => {
                push_text(parts, &rest[..v]);
                let body_start = v + 2;
                let Some(body_len) = closing_brace(&rest[body_start..]) else {
                    // No closing brace: not a reference, keep the text as written.
                    push_text(parts, &rest[v..]);
                    return Ok(());
                };
                let body = &rest[body_start..body_start + body_len];
                expand_reference(body, host, secrets, origin, parts)?;
                rest = &rest[body_start + body_len + 1..];
            }
            _ => {
                push_text(parts, rest);
                return Ok(());
            }
        }
    }
}

/// Length of the text before the `}` that closes a `${`, allowing nested `{…}`.
pub(super) fn closing_brace(text: &str) -> Option<usize> {
    let mut depth = 1usize;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

pub(super) fn expand_reference(
    body: &str,
    host: &HostEnv,
    secrets: &Secrets<'_>,
    origin: &str,
    parts: &mut Vec<Part>,
) -> Result<()> {
    if body == "workspaceFolder" {
        parts.push(Part::Root);
        return Ok(());
    }
    let (name, default) = if let Some(name) = body.strip_prefix("env:") {
        (name, None)
    } else if let Some((name, default)) = body.split_once(":-") {
        (name, Some(default))
    } else {
        (body, None)
    };
    if !crate::config::is_valid_env_name(name) {
        return Err(Error::new(
            Stage::Config,
            format!("{origin}: `${{{body}}}` cannot be expanded outside an editor"),
        )
        .with_advice("write the value, or use ${NAME} / ${env:NAME} for a variable of the gate's environment (tdqs-gate.toml [server] can override a manifest entry's env and cwd)"));
    }
    if secrets.excluded(name) {
        return Err(Error::new(
            Stage::Config,
            format!("{origin}: `${{{body}}}` would hand {name}, the gate's own credential, to the server"),
        )
        .with_advice(format!("remove the reference: tdqs-gate never gives {name} to the server")));
    }
    match (host.get(name), default) {
        (Some(value), _) => {
            if looks_secret(name) {
                // It may end up in an argument, which error messages show.
                tdqs_core::redact::register_secret(value);
            }
            push_text(parts, value);
            Ok(())
        }
        (None, Some(default)) => expand_into(default, host, secrets, origin, parts),
        (None, None) => Err(Error::new(
            Stage::Config,
            format!("{origin}: `${{{body}}}` refers to {name}, which is not set in the gate's environment"),
        )
        .with_advice(format!("set {name} for the gate, or give a default with ${{{name}:-value}}"))),
    }
}
