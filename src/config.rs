//! `tdqs-gate.toml` at the repository root.
//!
//! One file drives both sides. It is read from the head's tree (the working tree, or the
//! `--head` revision's checkout), and every string in `[server]` may contain `{root}`, which is
//! replaced by each side's own tree when that side's server is launched. The base therefore runs
//! with the head's launch settings: only the code under `{root}` comes from the base revision.
//!
//! ```toml
//! [server]
//! command = "python -m my_server"          # split like a shell would; or command = "python" + args = [...]
//! env = { PYTHONPATH = "{root}/src" }
//! cwd = "{root}"                            # the default
//! setup = ["npm ci", ["npm", "run", "build"]]
//! startup-timeout = 60                      # seconds; also request-timeout, setup-timeout
//! isolate-home = true                       # temporary HOME and XDG folders (the default)
//! pass-env = ["UV_CACHE_DIR"]               # host variables passed through by name
//! package-cache = true                      # persistent package caches (the default)
//! setup-in-place = false                    # head setup in a scratch copy (the default)
//!
//! [probe]
//! protocol-version = "2025-11-25"
//! era = "legacy"                            # auto | legacy | modern
//! capabilities = {}
//! client-info = { name = "tdqs-gate", version = "1" }
//!
//! [lint]                                    # read by the lint stage
//!
//! [decision]
//! tool-drop = 0.5                           # per-tool guard: a tool falling this much BLOCKs
//! max-listing-growth = 10                   # opt-in: BLOCK a listing >10 % more tokens, no TDQS gain
//! ```
//!
//! A repository with several servers writes `[[server]]` tables instead, each with a unique
//! `name` and the same keys as `[server]`; the two forms in one file are refused (see
//! [`NamedServer`] and `crate::gate::monorepo`).
//!
//! Strings in `[server]` may also use `${NAME}`, `${NAME:-default}` and `${env:NAME}` for the
//! gate's own environment (see [`crate::export::launch`]).
//!
//! Unknown keys are errors that name the key, its line and the valid keys: a misspelt
//! `startup-timout` must not silently fall back to the default.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use toml::Spanned;

use tdqs_core::error::{Error, Result, Stage};
use tdqs_core::export::{parse_size_limit, Era, ExportLimits, ProbeProfile};

/// The file name looked for at the root of the head's tree.
pub(crate) const CONFIG_FILE: &str = "tdqs-gate.toml";
/// A configuration file larger than this is refused (it is a few lines).
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// Longest accepted timeout (4 hours): anything longer is almost certainly a unit mistake
/// (milliseconds written as seconds), and a CI job would be cancelled first anyway.
const MAX_TIMEOUT_SECS: f64 = 4.0 * 3600.0;

/// A parsed `tdqs-gate.toml`.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Where it was read from (for messages).
    pub path: PathBuf,
    /// The `[server]` table, if present.
    pub server: Option<ServerConfig>,
    /// The `[[server]]` tables of a repository with several servers (a monorepo), in file
    /// order; empty with a single `[server]` table or none. Never both (see [`NamedServer`]).
    pub servers: Vec<NamedServer>,
    /// The `[probe]` table over [`ProbeProfile::default`] (every key optional).
    pub probe: ProbeProfile,
    /// The `[lint]` table, uninterpreted (the lint stage defines its meaning).
    pub lint: Option<toml::Value>,
    /// The `[decision]` table.
    pub decision: DecisionConfig,
    /// The `[eval]` table, uninterpreted (the eval stage defines its meaning).
    pub eval: Option<toml::Value>,
    /// The `[sandbox]` table, read by [`crate::platform::sandbox::parse_config`].
    pub sandbox: Option<toml::Value>,
}

/// One `[[server]]` table: a name and the same keys as `[server]`.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedServer {
    /// Unique in the file, and safe as a file name and a Markdown anchor
    /// (see [`is_valid_server_name`]).
    pub name: String,
    pub server: ServerConfig,
}

/// A server name: 1 to 64 ASCII letters, digits, `-`, `_` or `.`, starting with a letter or a
/// digit — usable as a file name, an anchor and a GitHub output name as it is.
pub fn is_valid_server_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    (1..=64).contains(&bytes.len())
        && bytes[0].is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

impl Config {
    /// This configuration with only `name`'s `[[server]]` table, as the `[server]` table: what
    /// one server of a monorepo is started from. `None` when there is no such table.
    pub fn for_server(&self, name: &str) -> Option<Config> {
        let named = self.servers.iter().find(|s| s.name == name)?;
        Some(Config {
            server: Some(named.server.clone()),
            servers: Vec::new(),
            ..self.clone()
        })
    }

    /// The names of the `[[server]]` tables, in file order.
    pub fn server_names(&self) -> Vec<String> {
        self.servers.iter().map(|s| s.name.clone()).collect()
    }
}

/// The `[decision]` table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DecisionConfig {
    /// `tool-drop`: the per-tool guard, in tenths of TDQS.
    pub tool_drop: Option<tdqs_core::arith::Tenths>,
    /// `max-listing-growth`: the opt-in growth rule, in percent of the base listing's tokens.
    pub max_listing_growth: Option<u32>,
}

/// Reads a per-tool guard amount: a multiple of 0.1 from 0.1 to 4.0.
pub(crate) fn parse_tool_drop(value: f64) -> std::result::Result<tdqs_core::arith::Tenths, String> {
    match tdqs_core::arith::Tenths::from_f64(value) {
        Some(t) if (1..=40).contains(&t.0) => Ok(t),
        _ => Err(format!(
            "{value} is not a TDQS drop: give a multiple of 0.1 from 0.1 to 4.0 (default 0.5)"
        )),
    }
}

/// The `[server]` table. Strings still contain `{root}`; [`crate::export::launch`] substitutes it.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    /// Program and arguments (`command` split like a shell, or `command` followed by `args`).
    /// `None` when the table only sets how servers run, leaving the command to `--command` or a
    /// host manifest.
    pub command: Option<Vec<String>>,
    /// Line of `command` in the file, for messages.
    pub command_line: Option<usize>,
    /// Line of each `setup` command in the file (parallel to `setup`), for messages.
    pub setup_lines: Vec<usize>,
    /// Variables set for the server (and setup commands), over the built environment.
    pub env: BTreeMap<String, String>,
    /// Working directory; relative paths are relative to the side's tree.
    pub cwd: Option<String>,
    /// Commands run in order in the side's tree before the server starts.
    pub setup: Vec<Vec<String>>,
    pub startup_timeout: Option<Duration>,
    pub request_timeout: Option<Duration>,
    pub setup_timeout: Option<Duration>,
    /// `max-message-bytes`: the longest accepted server message.
    pub max_message_bytes: Option<usize>,
    /// `max-listing-bytes`: the most stdout bytes of one listing.
    pub max_listing_bytes: Option<usize>,
    /// Give the server a temporary HOME and XDG folders (default true).
    pub isolate_home: bool,
    /// Host variables passed through by name.
    pub pass_env: Vec<String>,
    /// `package-cache`: with an isolated home, point package managers at the persistent cache
    /// folder outside the trees (default true; see [`crate::export::package_cache`]).
    pub package_cache: bool,
    /// `setup-in-place`: run the head side's setup commands and server in the working tree
    /// itself instead of a scratch copy of it (default false).
    pub setup_in_place: bool,
    /// `url`: the server speaks Streamable HTTP at this URL (`{port}` is a free port the gate
    /// picks for `command`).
    pub url: Option<String>,
    /// `headers`: sent with every HTTP request; values may use `${VAR}`.
    pub headers: BTreeMap<String, String>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            command: None,
            command_line: None,
            setup_lines: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
            setup: Vec::new(),
            startup_timeout: None,
            request_timeout: None,
            setup_timeout: None,
            max_message_bytes: None,
            max_listing_bytes: None,
            isolate_home: true,
            pass_env: Vec::new(),
            package_cache: true,
            setup_in_place: false,
            url: None,
            headers: BTreeMap::new(),
        }
    }
}

impl ServerConfig {
    /// `limits` with the timeouts this table sets.
    pub fn apply_limits(&self, mut limits: ExportLimits) -> ExportLimits {
        if let Some(t) = self.startup_timeout {
            limits.startup_timeout = t;
        }
        if let Some(t) = self.request_timeout {
            limits.request_timeout = t;
        }
        if let Some(t) = self.setup_timeout {
            limits.setup_timeout = t;
        }
        if let Some(n) = self.max_message_bytes {
            limits.max_message_bytes = n;
        }
        if let Some(n) = self.max_listing_bytes {
            limits.max_listing_bytes = n;
        }
        limits
    }
}

impl Config {
    /// Reads `tdqs-gate.toml` at `root`; `Ok(None)` when there is none.
    pub fn load(root: &Path) -> Result<Option<Config>> {
        let path = root.join(CONFIG_FILE);
        // A link is followed only to a file inside the repository: a pull request must not make
        // the gate read (and quote in an error) a file from elsewhere on the machine.
        let links = if crate::platform::safe_file::is_symlink(&path) {
            let inside = match (path.canonicalize(), root.canonicalize()) {
                (Ok(target), Ok(root)) => target.starts_with(&root),
                _ => false,
            };
            if !inside {
                return Err(Error::new(
                    Stage::Config,
                    format!(
                        "{} is a symbolic link to a file outside the repository (or to nothing); \
                         it is not read",
                        path.display()
                    ),
                )
                .with_advice("replace the link by the configuration file itself"));
            }
            crate::platform::safe_file::Links::Follow
        } else {
            crate::platform::safe_file::Links::Refuse
        };
        match Config::read(&path, links) {
            Err(None) => Ok(None),
            Err(Some(e)) => Err(e),
            Ok(c) => Ok(Some(c)),
        }
    }

    /// Reads a configuration file at an explicit path (links followed).
    pub fn load_file(path: &Path) -> Result<Config> {
        Config::read(path, crate::platform::safe_file::Links::Follow).map_err(|e| {
            e.unwrap_or_else(|| {
                Error::new(Stage::Config, format!("{} does not exist", path.display()))
                    .with_advice("pass the path of an existing configuration file")
            })
        })
    }

    /// `Err(None)`: there is no such file.
    fn read(
        path: &Path,
        links: crate::platform::safe_file::Links,
    ) -> std::result::Result<Config, Option<Error>> {
        use crate::platform::safe_file::{read_regular, ReadError};
        let bytes = match read_regular(path, links, MAX_CONFIG_BYTES) {
            Ok(bytes) => bytes,
            Err(ReadError::NotFound) => return Err(None),
            Err(e) => {
                return Err(Some(
                    Error::new(
                        Stage::Config,
                        format!("cannot read {}: {e}", path.display()),
                    )
                    .with_advice("make it a regular file of UTF-8 text, or remove it"),
                ))
            }
        };
        let text = String::from_utf8(bytes).map_err(|_| {
            Some(
                Error::new(
                    Stage::Config,
                    format!("{} is not UTF-8 text", path.display()),
                )
                .with_advice("make the file readable UTF-8 text, or remove it"),
            )
        })?;
        Config::parse(&text, path).map_err(Some)
    }

    /// Parses the text of a configuration file; `path` is used in messages only.
    pub fn parse(text: &str, path: &Path) -> Result<Config> {
        mixed_server_tables(text, path)?;
        let raw: RawConfig = toml::from_str(text).map_err(|e| {
            let advice = if e.message().contains("unknown field") {
                "use one of the keys listed in the message (keys are spelt with dashes)"
            } else {
                "fix the value at that place in the file"
            };
            located(text, path, e.span(), e.message()).with_advice(advice)
        })?;
        let (server, servers) = match raw.server {
            Some(RawServerEntry::One(server)) => {
                if let Some(name) = &server.name {
                    return Err(located(
                        text,
                        path,
                        Some(name.span()),
                        "`name` names one of several [[server]] tables, but this is a single \
                         [server] table",
                    )
                    .with_advice(
                        "remove `name`, or write every server as a [[server]] table with its own \
                         name",
                    ));
                }
                (Some(convert_server(*server, text, path)?), Vec::new())
            }
            Some(RawServerEntry::Many(tables)) => (None, convert_servers(tables, text, path)?),
            None => (None, Vec::new()),
        };
        let probe = match raw.probe {
            Some(probe) => convert_probe(probe, text, path)?,
            None => ProbeProfile::default(),
        };
        let decision = match raw.decision {
            Some(d) => DecisionConfig {
                tool_drop: match d.tool_drop {
                    None => None,
                    Some(v) => Some(
                        parse_tool_drop(*v.get_ref())
                            .map_err(|m| {
                                located(text, path, Some(v.span()), &format!("tool-drop: {m}"))
                            })
                            .map_err(|e| {
                                e.with_advice("fix the value at that place in the file")
                            })?,
                    ),
                },
                max_listing_growth: match d.max_listing_growth {
                    None => None,
                    Some(v) => Some(
                        tdqs_core::cost::parse_growth_percent(*v.get_ref())
                            .map_err(|m| {
                                located(
                                    text,
                                    path,
                                    Some(v.span()),
                                    &format!("max-listing-growth: {m}"),
                                )
                            })
                            .map_err(|e| {
                                e.with_advice("fix the value at that place in the file")
                            })?,
                    ),
                },
            },
            None => DecisionConfig::default(),
        };
        Ok(Config {
            path: path.to_path_buf(),
            server,
            servers,
            probe,
            lint: raw.lint,
            decision,
            eval: raw.eval,
            sandbox: raw.sandbox,
        })
    }
}

/// An error pointing at a place in the file: `path:line:column: message`, with the line shown.
fn located(text: &str, path: &Path, span: Option<std::ops::Range<usize>>, message: &str) -> Error {
    let message = message.trim();
    match span {
        Some(span) => {
            let (line, column) = line_and_column(text, span.start);
            let source_line = text.lines().nth(line - 1).unwrap_or("");
            let width = span
                .end
                .saturating_sub(span.start)
                .clamp(1, source_line.len().max(1));
            let marker = format!("{}{}", " ".repeat(column - 1), "^".repeat(width.min(60)));
            Error::new(
                Stage::Config,
                format!("{}:{line}:{column}: {message}", path.display()),
            )
            .with_detail(format!("line {line}"), format!("{source_line}\n{marker}"))
        }
        None => Error::new(Stage::Config, format!("{}: {message}", path.display())),
    }
}

/// 1-based line and column (in characters) of a byte offset.
fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawConfig {
    server: Option<RawServerEntry>,
    probe: Option<RawProbe>,
    lint: Option<toml::Value>,
    decision: Option<RawDecision>,
    eval: Option<toml::Value>,
    sandbox: Option<toml::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawDecision {
    tool_drop: Option<Spanned<f64>>,
    max_listing_growth: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawServer {
    name: Option<Spanned<String>>,
    command: Option<Spanned<CommandValue>>,
    args: Option<Spanned<Vec<String>>>,
    env: Option<BTreeMap<Spanned<String>, String>>,
    cwd: Option<String>,
    setup: Option<Vec<Spanned<CommandValue>>>,
    startup_timeout: Option<Seconds>,
    request_timeout: Option<Seconds>,
    setup_timeout: Option<Seconds>,
    max_message_bytes: Option<Spanned<i64>>,
    max_listing_bytes: Option<Spanned<i64>>,
    isolate_home: Option<bool>,
    pass_env: Option<Vec<Spanned<String>>>,
    package_cache: Option<bool>,
    setup_in_place: Option<bool>,
    url: Option<Spanned<String>>,
    headers: Option<BTreeMap<String, String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawProbe {
    protocol_version: Option<Spanned<String>>,
    era: Option<Era>,
    capabilities: Option<Spanned<toml::Table>>,
    client_info: Option<Spanned<toml::Table>>,
}

/// `server`: one `[server]` table, or the `[[server]]` tables of a monorepo.
enum RawServerEntry {
    One(Box<RawServer>),
    Many(Vec<RawServer>),
}

impl<'de> Deserialize<'de> for RawServerEntry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct EntryVisitor;
        impl<'de> Visitor<'de> for EntryVisitor {
            type Value = RawServerEntry;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a [server] table or [[server]] tables")
            }
            fn visit_map<A: de::MapAccess<'de>>(
                self,
                map: A,
            ) -> std::result::Result<RawServerEntry, A::Error> {
                RawServer::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|one| RawServerEntry::One(Box::new(one)))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(
                self,
                seq: A,
            ) -> std::result::Result<RawServerEntry, A::Error> {
                Vec::<RawServer>::deserialize(de::value::SeqAccessDeserializer::new(seq))
                    .map(RawServerEntry::Many)
            }
        }
        deserializer.deserialize_any(EntryVisitor)
    }
}

/// `[server]` and `[[server]]` in one file: TOML itself refuses it with a message about a
/// duplicate key, which says nothing of the fix; this check comes first and does.
fn mixed_server_tables(text: &str, path: &Path) -> Result<()> {
    let header = |line: &str| {
        let line = line.split('#').next().unwrap_or("").trim();
        let compact: String = line.chars().filter(|c| !c.is_whitespace()).collect();
        compact
    };
    let single = text.lines().position(|l| header(l) == "[server]");
    let many = text.lines().position(|l| header(l) == "[[server]]");
    if let (Some(single), Some(many)) = (single, many) {
        return Err(Error::new(
            Stage::Config,
            format!(
                "{}: [server] (line {}) and [[server]] (line {}) are both used: a repository has \
                 either one server ([server]) or several named ones ([[server]] tables), not both",
                path.display(),
                single + 1,
                many + 1
            ),
        )
        .with_advice(
            "with several servers, write each one, the first included, as a [[server]] table \
             with its own `name`; with one server, keep a single [server] table",
        ));
    }
    Ok(())
}

fn convert_servers(tables: Vec<RawServer>, text: &str, path: &Path) -> Result<Vec<NamedServer>> {
    if tables.is_empty() {
        return Err(Error::new(
            Stage::Config,
            format!("{}: `server` is an empty list", path.display()),
        )
        .with_advice("write a [server] table, or one [[server]] table per server"));
    }
    let mut servers: Vec<NamedServer> = Vec::with_capacity(tables.len());
    for (i, mut raw) in tables.into_iter().enumerate() {
        let Some(name) = raw.name.take() else {
            return Err(Error::new(
                Stage::Config,
                format!(
                    "{}: [[server]] table {} has no `name`",
                    path.display(),
                    i + 1
                ),
            )
            .with_advice(
                "give every [[server]] table a unique name = \"…\" (letters, digits, `-`, `_`, \
                 `.`); it names the server in the report and in --server NAME",
            ));
        };
        if !is_valid_server_name(name.get_ref()) {
            return Err(located(
                text,
                path,
                Some(name.span()),
                &format!(
                    "the server name {:?} is not 1 to 64 letters, digits, `-`, `_` or `.` \
                     starting with a letter or a digit",
                    name.get_ref()
                ),
            )
            .with_advice(
                "rename it, e.g. name = \"api\": the name is used as a file name and an anchor",
            ));
        }
        if servers.iter().any(|s| &s.name == name.get_ref()) {
            return Err(located(
                text,
                path,
                Some(name.span()),
                &format!("two [[server]] tables are named `{}`", name.get_ref()),
            )
            .with_advice("give every [[server]] table its own name"));
        }
        let server = convert_server(raw, text, path)?;
        servers.push(NamedServer {
            name: name.into_inner(),
            server,
        });
    }
    Ok(servers)
}

/// A command written as one string (split like a shell) or as a list of words.
#[derive(Debug, Clone, PartialEq)]
enum CommandValue {
    Line(String),
    Words(Vec<String>),
}

impl<'de> Deserialize<'de> for CommandValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct CommandVisitor;
        impl<'de> Visitor<'de> for CommandVisitor {
            type Value = CommandValue;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a command line string or a list of strings")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<CommandValue, E> {
                Ok(CommandValue::Line(v.to_string()))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<CommandValue, A::Error> {
                let mut words = Vec::new();
                while let Some(word) = seq.next_element::<String>()? {
                    words.push(word);
                }
                Ok(CommandValue::Words(words))
            }
        }
        deserializer.deserialize_any(CommandVisitor)
    }
}

/// A timeout in seconds (integer or decimal), more than zero and at most 4 hours.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Seconds(Duration);

impl<'de> Deserialize<'de> for Seconds {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct SecondsVisitor;
        impl SecondsVisitor {
            fn check<E: de::Error>(secs: f64) -> std::result::Result<Seconds, E> {
                if !secs.is_finite() || secs <= 0.0 {
                    return Err(E::custom("a timeout must be a number of seconds above 0"));
                }
                if secs > MAX_TIMEOUT_SECS {
                    return Err(E::custom(format!(
                        "a timeout of {secs} seconds is more than 4 hours; timeouts are in seconds, not milliseconds"
                    )));
                }
                Ok(Seconds(Duration::from_secs_f64(secs)))
            }
        }
        impl<'de> Visitor<'de> for SecondsVisitor {
            type Value = Seconds;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number of seconds")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<Seconds, E> {
                Self::check(v as f64)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Seconds, E> {
                Self::check(v as f64)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<Seconds, E> {
                Self::check(v)
            }
        }
        deserializer.deserialize_any(SecondsVisitor)
    }
}

/// Splits a command line the way a POSIX shell splits words (quotes and backslashes; no
/// expansion). `None` for unbalanced quotes.
pub(crate) fn split_command_line(line: &str) -> Option<Vec<String>> {
    shlex::split(line)
}

fn command_words(
    value: &Spanned<CommandValue>,
    text: &str,
    path: &Path,
    what: &str,
) -> Result<Vec<String>> {
    let words = match value.get_ref() {
        CommandValue::Line(line) => split_command_line(line).ok_or_else(|| {
            located(
                text,
                path,
                Some(value.span()),
                &format!("{what} has an unbalanced quote"),
            )
            .with_advice("close the quote, or write the command as a list of words")
        })?,
        CommandValue::Words(words) => words.clone(),
    };
    if words
        .first()
        .is_none_or(|program| program.trim().is_empty())
    {
        return Err(
            located(text, path, Some(value.span()), &format!("{what} is empty"))
                .with_advice("name the program to run, e.g. \"python -m my_server\""),
        );
    }
    Ok(words)
}

fn convert_server(raw: RawServer, text: &str, path: &Path) -> Result<ServerConfig> {
    let command_line = raw
        .command
        .as_ref()
        .map(|c| line_and_column(text, c.span().start).0);
    let command = match (raw.command, raw.args) {
        (None, None) => None,
        (None, Some(args)) => {
            return Err(located(
                text,
                path,
                Some(args.span()),
                "`args` is set but `command` is not",
            )
            .with_advice("add `command` (the program) next to `args`"));
        }
        (Some(command), None) => Some(command_words(&command, text, path, "`command`")?),
        (Some(command), Some(args)) => match command.get_ref() {
            // With `args`, `command` is the program exactly as written (a path may contain
            // spaces), as in host manifests.
            CommandValue::Line(program) if !program.trim().is_empty() => {
                let mut words = vec![program.clone()];
                words.extend(args.into_inner());
                Some(words)
            }
            CommandValue::Line(_) => {
                return Err(
                    located(text, path, Some(command.span()), "`command` is empty")
                        .with_advice("name the program to run"),
                );
            }
            CommandValue::Words(_) => {
                return Err(located(
                    text,
                    path,
                    Some(args.span()),
                    "`command` is a list and `args` is set: the arguments would be given twice",
                )
                .with_advice("either write `command` as a list of all words, or `command` = program and `args` = list"));
            }
        },
    };
    let mut env = BTreeMap::new();
    for (name, value) in raw.env.unwrap_or_default() {
        if !is_valid_env_name(name.get_ref()) {
            return Err(located(
                text,
                path,
                Some(name.span()),
                &format!(
                    "`{}` is not a valid environment variable name",
                    name.get_ref()
                ),
            )
            .with_advice("use letters, digits and underscores, not starting with a digit"));
        }
        env.insert(name.into_inner(), value);
    }
    let mut pass_env = Vec::new();
    for name in raw.pass_env.unwrap_or_default() {
        if !is_valid_env_name(name.get_ref()) {
            return Err(located(
                text,
                path,
                Some(name.span()),
                &format!(
                    "`{}` in pass-env is not a valid environment variable name",
                    name.get_ref()
                ),
            )
            .with_advice("list variable names only, e.g. pass-env = [\"UV_CACHE_DIR\"]"));
        }
        if !pass_env.contains(name.get_ref()) {
            pass_env.push(name.into_inner());
        }
    }
    let raw_setup = raw.setup.unwrap_or_default();
    let setup = raw_setup
        .iter()
        .enumerate()
        .map(|(i, command)| command_words(command, text, path, &format!("setup command {}", i + 1)))
        .collect::<Result<Vec<_>>>()?;
    let setup_lines = raw_setup
        .iter()
        .map(|command| line_and_column(text, command.span().start).0)
        .collect();
    Ok(ServerConfig {
        command,
        command_line,
        setup_lines,
        env,
        cwd: raw.cwd,
        setup,
        startup_timeout: raw.startup_timeout.map(|s| s.0),
        request_timeout: raw.request_timeout.map(|s| s.0),
        setup_timeout: raw.setup_timeout.map(|s| s.0),
        max_message_bytes: size_limit(
            raw.max_message_bytes.as_ref(),
            "max-message-bytes",
            text,
            path,
        )?,
        max_listing_bytes: size_limit(
            raw.max_listing_bytes.as_ref(),
            "max-listing-bytes",
            text,
            path,
        )?,
        isolate_home: raw.isolate_home.unwrap_or(true),
        pass_env,
        package_cache: raw.package_cache.unwrap_or(true),
        setup_in_place: raw.setup_in_place.unwrap_or(false),
        url: match raw.url {
            Some(url)
                if !url.get_ref().starts_with("http://")
                    && !url.get_ref().starts_with("https://") =>
            {
                return Err(located(
                    text,
                    path,
                    Some(url.span()),
                    "`url` is not an http:// or https:// URL",
                )
                .with_advice(
                    "write the server's MCP endpoint, e.g. url = \"http://127.0.0.1:{port}/mcp\"",
                ));
            }
            Some(url) => Some(url.into_inner()),
            None => None,
        },
        headers: raw.headers.unwrap_or_default(),
    })
}

fn size_limit(
    value: Option<&Spanned<i64>>,
    key: &str,
    text: &str,
    path: &Path,
) -> Result<Option<usize>> {
    let Some(value) = value else {
        return Ok(None);
    };
    let n = *value.get_ref();
    usize::try_from(n)
        .ok()
        .and_then(|n| parse_size_limit(&n.to_string()).ok())
        .map(Some)
        .ok_or_else(|| {
            located(
                text,
                path,
                Some(value.span()),
                &format!(
                    "`{key}` is {n}, but it must be a number of bytes from 1024 (1 KiB) to \
                     1073741824 (1 GiB)"
                ),
            )
            .with_advice("write the limit in bytes, e.g. 67108864 for 64 MiB")
        })
}

/// A portable environment variable name: letters, digits and `_`, not starting with a digit.
pub(crate) fn is_valid_env_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn convert_probe(raw: RawProbe, text: &str, path: &Path) -> Result<ProbeProfile> {
    let mut probe = ProbeProfile::default();
    if let Some(version) = raw.protocol_version {
        if !is_protocol_version(version.get_ref()) {
            return Err(located(
                text,
                path,
                Some(version.span()),
                &format!("`{}` is not an MCP protocol version", version.get_ref()),
            )
            .with_advice("protocol versions are dates such as \"2025-11-25\""));
        }
        probe.protocol_version = version.into_inner();
    }
    if let Some(era) = raw.era {
        probe.era = era;
    }
    if let Some(capabilities) = raw.capabilities {
        probe.capabilities = table_to_json(&capabilities, text, path, "capabilities")?;
    }
    if let Some(client_info) = raw.client_info {
        let info = table_to_json(&client_info, text, path, "client-info")?;
        for key in ["name", "version"] {
            if !info.get(key).is_some_and(serde_json::Value::is_string) {
                return Err(located(
                    text,
                    path,
                    Some(client_info.span()),
                    &format!("client-info needs a string `{key}`"),
                )
                .with_advice("write client-info = { name = \"…\", version = \"…\" }"));
            }
        }
        probe.client_info = info;
    }
    Ok(probe)
}

fn is_protocol_version(version: &str) -> bool {
    let bytes = version.as_bytes();
    bytes.len() == 10
        && bytes.iter().enumerate().all(|(i, b)| match i {
            4 | 7 => *b == b'-',
            _ => b.is_ascii_digit(),
        })
}

/// A TOML table as the JSON the client sends. Dates have no JSON form and are refused.
fn table_to_json(
    table: &Spanned<toml::Table>,
    text: &str,
    path: &Path,
    what: &str,
) -> Result<serde_json::Value> {
    fn has_datetime(value: &toml::Value) -> bool {
        match value {
            toml::Value::Datetime(_) => true,
            toml::Value::Array(items) => items.iter().any(has_datetime),
            toml::Value::Table(table) => table.values().any(has_datetime),
            _ => false,
        }
    }
    if table.get_ref().values().any(has_datetime) {
        return Err(located(
            text,
            path,
            Some(table.span()),
            &format!("{what} contains a date, which JSON cannot carry"),
        )
        .with_advice("write dates as strings"));
    }
    serde_json::to_value(table.get_ref()).map_err(|e| {
        located(
            text,
            path,
            Some(table.span()),
            &format!("{what} cannot be converted to JSON: {e}"),
        )
    })
}

#[cfg(test)]
mod tests;
