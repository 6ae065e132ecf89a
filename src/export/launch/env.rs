//! The server's environment: what passes from the host, the temporary home, the gate's
//! secrets that never pass, and the `NAME=value` lines of a reproduction.

use super::*;

/// Prefixes of variables that are never given to a server.
pub const EXCLUDED_ENV_PREFIXES: [&str; 2] = ["ANTHROPIC_", "CLAUDE_"];
/// Variables that are never given to a server (besides the caller's list).
pub const EXCLUDED_ENV_NAMES: [&str; 1] = ["OPENAI_API_KEY"];

/// Set for every server unless configured otherwise: Python hashes strings with this seed.
pub(crate) const PYTHON_HASH_SEED: (&str, &str) = ("PYTHONHASHSEED", "0");

/// Host variables every server gets (when set).
pub(crate) const BASE_ENV: [&str; 16] = [
    "PATH",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "USER",
    "LOGNAME",
    "SHELL",
    // Windows cannot start most programs without these.
    "SYSTEMROOT",
    "SystemRoot",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
    "TEMP",
    "TMP",
    "PROGRAMDATA",
];

/// Variables pointing into the user's home; isolated or passed through together.
pub(super) const HOME_ENV: [&str; 9] = [
    "HOME",
    "USERPROFILE",
    "APPDATA",
    "LOCALAPPDATA",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
];

/// The gate's own environment, as the source of passed-through and expanded values.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostEnv(pub(super) BTreeMap<String, String>);

impl HostEnv {
    /// The environment of this process (variables that are not UTF-8 are left out).
    pub fn current() -> HostEnv {
        HostEnv(
            std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
                .collect(),
        )
    }

    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> HostEnv {
        HostEnv(
            pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }
}

/// Rules about secrets for one resolution.
pub(super) struct Secrets<'a> {
    pub(super) extra: &'a [String],
}

impl Secrets<'_> {
    pub(super) fn excluded(&self, name: &str) -> bool {
        EXCLUDED_ENV_PREFIXES.iter().any(|p| name.starts_with(p))
            || EXCLUDED_ENV_NAMES.contains(&name)
            || self.extra.iter().any(|n| n == name)
    }
}

pub(super) fn make_temp_home() -> Result<tempfile::TempDir> {
    let home = tempfile::Builder::new()
        .prefix("tdqs-gate-home-")
        .tempdir()
        .map_err(|e| {
            Error::io(
                Stage::Export,
                "cannot create the server's temporary home",
                e,
            )
            .with_advice("set TMPDIR to a writable folder, or set isolate-home = false in [server]")
        })?;
    // Lets a later run prove the folder is the gate's should this run be killed.
    crate::platform::ownership::claim_for_process(home.path());
    for (_, dir) in home_variables(home.path()) {
        std::fs::create_dir_all(&dir).map_err(|e| {
            Error::io(Stage::Export, format!("cannot create {dir}"), e).with_advice(
                "set TMPDIR to a writable folder, or set isolate-home = false in [server]",
            )
        })?;
    }
    Ok(home)
}

pub(super) fn home_variables(home: &Path) -> Vec<(String, String)> {
    let at = |sub: &str| {
        let path = if sub.is_empty() {
            home.to_path_buf()
        } else {
            home.join(sub)
        };
        path.to_string_lossy().into_owned()
    };
    vec![
        ("HOME".to_string(), at("")),
        ("USERPROFILE".to_string(), at("")),
        ("APPDATA".to_string(), at("AppData/Roaming")),
        ("LOCALAPPDATA".to_string(), at("AppData/Local")),
        ("XDG_CONFIG_HOME".to_string(), at(".config")),
        ("XDG_DATA_HOME".to_string(), at(".local/share")),
        ("XDG_CACHE_HOME".to_string(), at(".cache")),
        ("XDG_STATE_HOME".to_string(), at(".local/state")),
    ]
}

/// A server environment variable that carries a credential (the one rule of
/// [`tdqs_core::redact::is_credential_name`]).
pub(super) fn looks_secret(name: &str) -> bool {
    tdqs_core::redact::is_credential_name(name, NameContext::ServerEnv)
}

impl LaunchSpec {
    /// Names (never values) of the server's environment variables, sorted.
    pub fn env_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.env.iter().map(|(k, _)| k.clone()).collect();
        names.sort();
        names
    }

    /// A shell command that starts the server the same way, for an error's "reproduce with".
    /// Secret values are left as `"$NAME"` for the user to supply.
    pub fn reproduce_command(&self) -> String {
        let quote = |s: &str| {
            shlex::try_quote(s)
                .map(|q| q.into_owned())
                .unwrap_or_else(|_| format!("{s:?}"))
        };
        let mut out = format!("cd {} && env -i", quote(&self.cwd.to_string_lossy()));
        for (name, value) in &self.env {
            if self.secret_env.contains(name) {
                out.push_str(&format!(" {name}=\"${name}\""));
            } else {
                out.push_str(&format!(" {name}={}", quote(value)));
            }
        }
        for word in std::iter::once(&self.program).chain(&self.args) {
            out.push(' ');
            out.push_str(&quote(word));
        }
        out
    }
}

/// `NAME=value` for a shell, from a configured value as written: `{root}` and
/// `${workspaceFolder}` become the tree, `${env:NAME}` becomes `${NAME}`, other `${…}` references
/// stay for the shell to expand. A literal value of a variable whose name looks like a
/// credential is never shown: the line asks for it from the shell's environment instead.
pub(crate) fn reproduce_assignment(name: &str, raw: &str, root: &Path) -> String {
    if looks_secret(name) && !raw.contains("${") {
        return format!("{name}=\"${{{name}}}\"");
    }
    let root = root.to_string_lossy();
    let root = root.trim_end_matches('/');
    let text = raw
        .replace("{root}", root)
        .replace("${workspaceFolder}", root)
        .replace("${env:", "${");
    if text.contains("${") {
        // Double quotes, so that the shell expands the references and nothing else.
        let mut quoted = String::from("\"");
        let mut rest = text.as_str();
        while let Some(c) = rest.chars().next() {
            if rest.starts_with("${") {
                quoted.push('$');
            } else if matches!(c, '"' | '\\' | '`' | '$') {
                quoted.push('\\');
                quoted.push(c);
            } else {
                quoted.push(c);
            }
            rest = &rest[c.len_utf8()..];
        }
        quoted.push('"');
        format!("{name}={quoted}")
    } else {
        let quoted = shlex::try_quote(&text).map_or_else(|_| text.clone(), |q| q.into_owned());
        format!("{name}={quoted}")
    }
}
