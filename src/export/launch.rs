//! How a side's server is started: the [`LaunchSpec`] for one tree.
//!
//! Resolution happens once ([`LaunchPlan::resolve`]) and is applied to each side
//! ([`LaunchPlan::for_side`]), so both sides run the same command with `{root}` replaced by their
//! own tree. The command comes from the first of:
//! 1. `--command "…"`, split like a POSIX shell splits words (quotes, backslashes; no expansion);
//! 2. `command` in the `[server]` table of `tdqs-gate.toml`;
//! 3. a host manifest in the head's tree, the first found of `.mcp.json`, `mcp.json` and
//!    `.vscode/mcp.json`, read as clients read them: a `mcpServers` or `servers` object of named
//!    entries with `command`, `args`, `env` and `cwd` (comments and trailing commas allowed, as
//!    VS Code allows them). Entries of type `http` / `sse` (or with a `url` and no `command`) are
//!    reached over HTTP at their `url` (picked alone only when there is no stdio entry); other
//!    remote entries (`type` `ws`, `websocket`) are skipped, with a warning, when picking the
//!    only server, and refused when named. With several entries, `--server NAME` picks one.
//!
//! A URL (`--url`, `[server] url`, a manifest entry's `url`) makes the server speak Streamable
//! HTTP: with a command, `{port}` in the URL, the command and `env` is a free loopback port
//! picked per side; without one the URL is used as is. `headers` values are expanded like `env`
//! and registered as secrets when they hold a reference or look like credentials.
//!
//! The rest of `[server]` (`env`, `cwd`, `setup`, timeouts, `isolate-home`, `pass-env`) applies
//! whatever the source of the command, and its `env` and `cwd` win over a manifest entry's.
//!
//! Strings: `{root}` is the side's tree everywhere. In `tdqs-gate.toml` and manifests,
//! `${NAME}`, `${NAME:-default}` (Claude Code) and `${env:NAME}` (VS Code) are expanded from the
//! gate's own environment, as clients expand them, and `${workspaceFolder}` is the side's tree;
//! an unset variable without a default, or a VS Code `${input:…}` prompt, is an error. A
//! `--command` is not expanded: the shell that ran the gate already did that.
//!
//! The environment is built from nothing:
//! - from the host: `PATH`, `LANG`, `LANGUAGE`, `LC_*`, `TZ`, `TMPDIR`, `USER`, `LOGNAME`,
//!   `SHELL` (what the MCP SDKs pass by default, minus `TERM`: the server's output is a pipe, and
//!   colour codes would only garble the stderr tail shown in errors), plus the Windows system
//!   variables where they exist;
//! - a temporary HOME with `XDG_{CONFIG,DATA,CACHE,STATE}_HOME`, `USERPROFILE`, `APPDATA` and
//!   `LOCALAPPDATA` inside it, so no user configuration changes what the server lists, unless
//!   `isolate-home = false` (then the host's values pass through: package runners such as `npx`
//!   and `uvx` keep their caches there, and CI may have no network to refill them);
//! - with the temporary HOME, the package cache variables (`npm_config_cache`, `UV_CACHE_DIR`,
//!   …) pointing into the persistent cache folder (see [`crate::export::package_cache`]);
//! - the host values of the network variables ([`tdqs_core::network_env::NETWORK_ENV`]: proxies
//!   and extra CA certificates, as for the judge; proxy values are masked as secrets);
//! - the host values of the `pass-env` names (a name listed there wins over the temporary HOME
//!   and the package cache);
//! - the manifest entry's `env`, then `[server] env`.
//!
//! Nothing else passes, `GIT_*` included: a `GIT_DIR` exported by a git hook that runs the gate
//! would point git commands of a server in a temporary worktree at the user's repository.
//!
//! The gate's secrets never reach the server: `ANTHROPIC_*`, `CLAUDE_*`, `OPENAI_API_KEY` and
//! every name the caller passes (the variable holding the judge's token). Naming one in
//! `pass-env` or `[server] env`, or expanding one with `${…}`, is an error (the configuration
//! asks for something the gate will not do, and silently dropping it would make the server
//! behave differently from what the file says); a manifest entry's `env` key with such a name is
//! dropped with a warning, because manifests are written for hosts, not for the gate.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::config::{Config, ServerConfig};
use crate::export::{HttpTarget, LaunchSpec, SetupCommand};
use crate::platform::path_search::{self, EmptyEntry};
use tdqs_core::error::{Error, Result, Stage};
use tdqs_core::export::ExportLimits;
use tdqs_core::redact::NameContext;

/// Host manifests, in the order they are looked for.
pub(crate) const MANIFEST_FILES: [&str; 3] = [".mcp.json", "mcp.json", ".vscode/mcp.json"];

/// Prefixes of variables that are never given to a server.
pub const EXCLUDED_ENV_PREFIXES: [&str; 2] = ["ANTHROPIC_", "CLAUDE_"];
/// Variables that are never given to a server (besides the caller's list).
pub const EXCLUDED_ENV_NAMES: [&str; 1] = ["OPENAI_API_KEY"];

/// Set for every server unless configured otherwise: Python hashes strings with this seed.
pub(crate) const PYTHON_HASH_SEED: (&str, &str) = ("PYTHONHASHSEED", "0");

/// Host variables every server gets (when set).
const BASE_ENV: [&str; 16] = [
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
const HOME_ENV: [&str; 9] = [
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

/// Remote transports a manifest entry may declare.
const REMOTE_TYPES: [&str; 6] = [
    "http",
    "sse",
    "streamable-http",
    "streamableHttp",
    "ws",
    "websocket",
];

/// The gate's own environment, as the source of passed-through and expanded values.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostEnv(BTreeMap<String, String>);

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

/// What the user asked for, besides the side's tree.
#[derive(Debug, Clone)]
pub struct LaunchOptions<'a> {
    /// `--command "…"`.
    pub command: Option<&'a str>,
    /// `--url URL`: the server speaks Streamable HTTP there.
    pub url: Option<&'a str>,
    /// `--server NAME`.
    pub server: Option<&'a str>,
    /// The head's `tdqs-gate.toml`, if any.
    pub config: Option<&'a Config>,
    /// Where host manifests are looked for (the head's tree).
    pub manifest_root: &'a Path,
    /// Variables that carry the gate's secrets (the judge token's variable), on top of
    /// [`EXCLUDED_ENV_PREFIXES`] and [`EXCLUDED_ENV_NAMES`].
    pub exclude_env: &'a [String],
    /// Limits before the configuration's timeouts are applied.
    pub limits: ExportLimits,
}

/// A string with `{root}` still to be replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Template {
    /// As written, for the export record (never holds expanded host values).
    raw: String,
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    Root,
}

impl Template {
    /// Renders with `{port}` replaced too, when a port was picked.
    fn render_port(&self, root: &Path, port: Option<u16>) -> String {
        let text = self.render(root);
        match port {
            Some(port) => text.replace(PORT_PLACEHOLDER, &port.to_string()),
            None => text,
        }
    }

    fn render(&self, root: &Path) -> String {
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

/// Stands for a free loopback port the gate picks for each side's HTTP server.
pub(crate) const PORT_PLACEHOLDER: &str = "{port}";

/// How every side's server is started; see the module documentation.
#[derive(Debug, Clone)]
pub struct LaunchPlan {
    origin: String,
    /// Empty when the server is only a URL (nothing to start).
    command: Vec<Template>,
    /// The Streamable HTTP endpoint, when the server speaks HTTP.
    url: Option<Template>,
    /// Sent with every HTTP request (manifest headers, then `[server] headers`).
    headers: Vec<(String, Template)>,
    cwd: Option<Template>,
    /// Manifest env, then configured env (later entries win).
    env: Vec<(String, Template)>,
    setup: Vec<Vec<Template>>,
    isolate_home: bool,
    /// The persistent package cache root, when used (isolated home, not turned off).
    package_cache: Option<PathBuf>,
    /// `[server] setup-in-place`: the head's setup runs in the working tree itself.
    setup_in_place: bool,
    /// Host values of the base variables, the network variables and `pass-env`, in that order.
    host_env: Vec<(String, String)>,
    /// Host values of the home variables, used when the home is not isolated.
    host_home: Vec<(String, String)>,
    limits: ExportLimits,
    warnings: Vec<String>,
}

/// Rules about secrets for one resolution.
struct Secrets<'a> {
    extra: &'a [String],
}

impl Secrets<'_> {
    fn excluded(&self, name: &str) -> bool {
        EXCLUDED_ENV_PREFIXES.iter().any(|p| name.starts_with(p))
            || EXCLUDED_ENV_NAMES.contains(&name)
            || self.extra.iter().any(|n| n == name)
    }
}

/// Where the command came from.
enum Source<'a> {
    CommandFlag(&'a str),
    /// A URL (`--url` or `[server] url`) and no command: nothing to start.
    UrlOnly,
    Config(&'a Config, &'a ServerConfig, &'a [String]),
    Manifest(ManifestEntry),
}

impl LaunchPlan {
    /// Picks the command and settles everything that does not depend on the side.
    pub fn resolve(options: &LaunchOptions<'_>, host: &HostEnv) -> Result<LaunchPlan> {
        let secrets = Secrets {
            extra: options.exclude_env,
        };
        let server_config = options
            .config
            .and_then(|c| c.server.as_ref().map(|s| (c, s)));
        let mut warnings = Vec::new();

        let source = pick_source(options, server_config, &mut warnings)?;
        let SourceCommand {
            mut origin,
            command,
            cwd: manifest_cwd,
            env: manifest_env,
            url: manifest_url,
            headers: manifest_headers,
        } = source_command(&source, host, &secrets, &mut warnings)?;

        let defaults = ServerConfig::default();
        let (config_origin, server) = match server_config {
            Some((config, server)) => (format!("{} [server]", config.path.display()), server),
            None => (String::new(), &defaults),
        };
        let table = ServerTable {
            server,
            origin: &config_origin,
            host,
            secrets: &secrets,
        };
        let env = table.env(manifest_env)?;
        let url = table.url(options.url, &source, manifest_url, &mut origin)?;
        let headers = table.headers(manifest_headers, url.is_some(), &mut warnings)?;
        let cwd = match &server.cwd {
            Some(cwd) => Some(table.expand(cwd, "cwd")?),
            None => manifest_cwd,
        };
        let setup = server
            .setup
            .iter()
            .map(|words| {
                words
                    .iter()
                    .map(|w| table.expand(w, "setup"))
                    .collect::<Result<Vec<_>>>()
            })
            .collect::<Result<Vec<_>>>()?;
        let host_env = table.host_env(&mut warnings)?;
        let host_home = HOME_ENV
            .iter()
            .filter_map(|name| host.get(name).map(|v| (name.to_string(), v.to_string())))
            .collect();
        let package_cache = table.package_cache(&mut warnings)?;

        Ok(LaunchPlan {
            origin,
            command,
            url,
            headers,
            cwd,
            env,
            setup,
            isolate_home: server.isolate_home,
            package_cache,
            setup_in_place: server.setup_in_place,
            host_env,
            host_home,
            limits: server.apply_limits(options.limits.clone()),
            warnings,
        })
    }

    /// Replaces the limits (the command line's limits win over the configuration's, which
    /// [`LaunchPlan::resolve`] applied).
    pub fn override_limits(&mut self, change: impl FnOnce(ExportLimits) -> ExportLimits) {
        self.limits = change(self.limits.clone());
    }

    /// Where the command came from (`--command`, `tdqs-gate.toml [server] command (line 3)`,
    /// `.mcp.json server "name"`).
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Program and arguments as written, `{root}` and `${…}` unexpanded: equal for both sides,
    /// free of host values, and what the export records.
    pub fn command_template(&self) -> Vec<String> {
        let mut words: Vec<String> = self.command.iter().map(|t| t.raw.clone()).collect();
        if let Some(url) = &self.url {
            words.push("--url".to_string());
            words.push(url.raw.clone());
        }
        words
    }

    /// The URL, when it is the same for every side (no `{port}`): such a plan cannot export two
    /// revisions, since one endpoint serves one revision.
    pub fn fixed_url(&self) -> Option<&str> {
        self.url
            .as_ref()
            .filter(|url| !url.raw.contains(PORT_PLACEHOLDER))
            .map(|url| url.raw.as_str())
    }

    /// True when setup commands run before the server.
    pub fn has_setup(&self) -> bool {
        !self.setup.is_empty()
    }

    /// `[server] setup-in-place`: run the working tree's setup in the tree itself, not in a
    /// scratch copy.
    pub fn setup_in_place(&self) -> bool {
        self.setup_in_place
    }

    /// The persistent package cache folder the sides use, if any.
    pub fn package_cache(&self) -> Option<&Path> {
        self.package_cache.as_deref()
    }

    /// Non-fatal observations (skipped remote entries, unset pass-env names, dropped variables).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The spec for one side whose tree is `root`. Creates the temporary home (owned by the
    /// spec). The program is located now unless setup commands run first (they may build it);
    /// then call [`ensure_program`] after them.
    pub fn for_side(&self, root: &Path) -> Result<LaunchSpec> {
        let root = root.to_path_buf();
        let cwd = match &self.cwd {
            Some(cwd) => root.join(cwd.render(&root)),
            None => root.clone(),
        };
        if !cwd.is_dir() {
            return Err(Error::new(
                Stage::Export,
                format!(
                    "the server's working directory {} does not exist (from {})",
                    cwd.display(),
                    self.origin
                ),
            )
            .with_advice(
                "fix `cwd`; relative paths are relative to the tree's root, {root} is the tree",
            ));
        }

        let uses_port = self
            .command
            .iter()
            .chain(self.url.iter())
            .chain(self.env.iter().map(|(_, t)| t))
            .any(|t| t.raw.contains(PORT_PLACEHOLDER));
        let port = if uses_port { Some(free_port()?) } else { None };
        let mut env: BTreeMap<String, String> = BTreeMap::new();
        let mut temp_home = None;
        if self.isolate_home {
            let home = make_temp_home()?;
            for (name, value) in home_variables(home.path()) {
                env.insert(name, value);
            }
            temp_home = Some(Arc::new(home));
            if let Some(cache) = &self.package_cache {
                env.extend(crate::export::package_cache::variables(cache));
            }
        } else {
            env.extend(self.host_home.iter().cloned());
        }
        // Python's string hashing is salted per process, so a server whose listing depends on
        // set or dict order over strings lists differently on every start. A fixed seed makes it
        // stable; `pass-env`, a manifest or `[server] env` may still set another value.
        env.insert(
            PYTHON_HASH_SEED.0.to_string(),
            PYTHON_HASH_SEED.1.to_string(),
        );
        env.extend(self.host_env.iter().cloned());
        for (name, value) in &self.env {
            env.insert(name.clone(), value.render_port(&root, port));
        }

        let words: Vec<String> = self
            .command
            .iter()
            .map(|t| t.render_port(&root, port))
            .collect();
        let http = self.url.as_ref().map(|url| {
            let headers: Vec<(String, String)> = self
                .headers
                .iter()
                .map(|(name, value)| (name.clone(), value.render(&root)))
                .collect();
            // Header values carry credentials: never shown in a report or an error.
            for ((name, value), (_, template)) in headers.iter().zip(&self.headers) {
                if template.raw.contains("${") || looks_secret_header(name) {
                    tdqs_core::redact::register_secret(value);
                }
            }
            let url = url.render_port(&root, port);
            // A credential in the query (`?api_key=…`) is masked like a header's.
            if let Ok(parsed) = reqwest::Url::parse(&url) {
                for (name, value) in parsed.query_pairs() {
                    if looks_secret_header(&name) {
                        tdqs_core::redact::register_secret(&value);
                    }
                }
            }
            HttpTarget { url, headers }
        });
        let setup: Vec<SetupCommand> = self
            .setup
            .iter()
            .map(|words| {
                let words: Vec<String> = words.iter().map(|t| t.render(&root)).collect();
                SetupCommand {
                    program: words[0].clone(),
                    args: words[1..].to_vec(),
                }
            })
            .collect();
        let secret_env: Vec<String> = env
            .keys()
            .filter(|name| looks_secret(name))
            .cloned()
            .collect();
        // A server that echoes its configuration to stderr must not put a token into an error.
        for name in &secret_env {
            tdqs_core::redact::register_secret(&env[name]);
        }
        let (program, args) = match words.split_first() {
            Some((program, args)) => (program.clone(), args.to_vec()),
            None => (String::new(), Vec::new()),
        };
        let mut spec = LaunchSpec {
            program,
            args,
            cwd,
            env: env.into_iter().collect(),
            setup,
            origin: self.origin.clone(),
            secret_env,
            limits: self.limits.clone(),
            temp_home,
            reproduce_env: self
                .env
                .iter()
                .map(|(name, value)| reproduce_assignment(name, &value.raw, &root))
                .collect(),
            http,
        };
        if spec.program.is_empty() {
            // Only a URL: nothing to start.
        } else if let Some(first) = spec.setup.first() {
            // Later setup commands may use what earlier ones create (a virtualenv's pip).
            locate_program(
                &first.program,
                &spec.cwd,
                env_path(&spec.env),
                &format!("{} setup", self.origin),
            )?;
        } else {
            ensure_program(&mut spec)?;
        }
        Ok(spec)
    }
}

impl Template {
    fn has_root(&self) -> bool {
        self.parts.iter().any(|p| matches!(p, Part::Root))
    }
}

/// Programs that find their project from the working directory (the side's tree by default).
const CWD_PROJECT_PROGRAMS: [&str; 12] = [
    "node", "npx", "npm", "pnpm", "yarn", "bun", "deno", "uv", "poetry", "cargo", "go", "make",
];

impl LaunchPlan {
    /// Why this plan cannot see the side's tree, or `None` when it can (or might). Blind: no
    /// `{root}` in the command, `cwd`, `env` or setup, no relative path in the command, no
    /// setup command (which runs in the tree), and no working-directory effect — `python -m
    /// NAME` only imports from the working directory when `NAME` is there (not with a `src`
    /// layout), and a console script or `uvx`/`pipx run` package runs installed code wherever
    /// it starts. With an editable install both sides then run the working tree's code.
    pub fn blind_to_tree(&self, root: &Path) -> Option<String> {
        let any_root = self.command.iter().any(Template::has_root)
            || self.cwd.as_ref().is_some_and(Template::has_root)
            || self.env.iter().any(|(_, t)| t.has_root())
            || self.setup.iter().flatten().any(Template::has_root);
        if any_root || !self.setup.is_empty() {
            return None;
        }
        let words: Vec<String> = self.command.iter().map(|t| t.render(root)).collect();
        let relative = |w: &str| {
            let p = Path::new(w);
            !p.is_absolute() && (w.contains('/') || w.contains('\\') || w.starts_with('.'))
        };
        if words.iter().any(|w| relative(w)) {
            return None;
        }
        let cwd = match &self.cwd {
            Some(c) => root.join(c.render(root)),
            None => root.to_path_buf(),
        };
        let program = words.first().map(String::as_str).unwrap_or("");
        let name = Path::new(program)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(program)
            .trim_end_matches(".exe")
            .to_ascii_lowercase();
        if CWD_PROJECT_PROGRAMS.contains(&name.as_str()) {
            return None;
        }
        // A script argument that exists in the working directory (`python server.py`).
        if words[1..]
            .iter()
            .any(|w| !w.starts_with('-') && cwd.join(w).exists())
        {
            return None;
        }
        if name.starts_with("python") || name == "py" {
            if let Some(at) = words.iter().position(|w| w == "-m") {
                let module = words.get(at + 1).map(String::as_str).unwrap_or("");
                let top = module.split('.').next().unwrap_or("");
                if !top.is_empty()
                    && (cwd.join(top).is_dir() || cwd.join(format!("{top}.py")).is_file())
                {
                    return None;
                }
                return Some(format!(
                    "`{}` imports `{module}` from the installed environment: the module is not \
                     in the server's working directory {} (a src layout, or an installed \
                     package), and nothing in the launch plan names the side's tree",
                    words.join(" "),
                    cwd.display()
                ));
            }
        }
        Some(format!(
            "`{}` runs installed code: nothing in the launch plan (command, cwd, env, setup) \
             names the side's tree, the command has no relative path, and it does not load \
             code from its working directory",
            words.join(" ")
        ))
    }
}

/// The command of the chosen source, with the manifest entry's own `cwd`, `env`, `url` and
/// `headers`.
struct SourceCommand {
    origin: String,
    command: Vec<Template>,
    cwd: Option<Template>,
    env: Vec<(String, Template)>,
    url: Option<Template>,
    headers: Vec<(String, Template)>,
}

/// A free loopback port for a side's HTTP server (another program may take it before the
/// server binds it; the wait for the port then fails with a clear message).
fn free_port() -> Result<u16> {
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
fn looks_secret_header(name: &str) -> bool {
    tdqs_core::redact::is_credential_name(name, NameContext::Header)
}

/// Where the command comes from: `--command`, then `[server] command`, then a URL alone, then a
/// host manifest's entry. `--server` conflicts with the first two.
fn pick_source<'a>(
    options: &LaunchOptions<'a>,
    server_config: Option<(&'a Config, &'a ServerConfig)>,
    warnings: &mut Vec<String>,
) -> Result<Source<'a>> {
    if let (Some(_), Some(name)) = (options.command, options.server) {
        return Err(Error::usage(format!(
            "--command and --server {name} both choose the server"
        ))
        .with_advice(
            "pass one of them: --server picks an entry of a host manifest, --command replaces it",
        ));
    }
    Ok(if let Some(line) = options.command {
        Source::CommandFlag(line)
    } else if let Some((config, server, words)) =
        server_config.and_then(|(c, s)| s.command.as_deref().map(|w| (c, s, w)))
    {
        if let Some(name) = options.server {
            return Err(Error::usage(format!(
                "--server {name} picks a host manifest entry, but {} sets [server] command, which comes first",
                config.path.display()
            ))
            .with_advice("drop --server, or remove `command` from [server] to start the manifest's entry"));
        }
        Source::Config(config, server, words)
    } else if options.url.is_some() || server_config.is_some_and(|(_, s)| s.url.is_some()) {
        Source::UrlOnly
    } else {
        let entry = pick_manifest_entry(options.manifest_root, options.server, warnings)?;
        Source::Manifest(entry)
    })
}

/// The `[server]` table of `tdqs-gate.toml` (or its defaults), applied over what the source
/// gave, one setting per step of [`LaunchPlan::resolve`].
struct ServerTable<'a> {
    server: &'a ServerConfig,
    /// `<path> [server]`, or empty without a file.
    origin: &'a str,
    host: &'a HostEnv,
    secrets: &'a Secrets<'a>,
}

impl ServerTable<'_> {
    /// Expands a value of the setting `what` (`cwd`, `env NAME`, …).
    fn expand(&self, value: &str, what: &str) -> Result<Template> {
        expand(
            value,
            self.host,
            self.secrets,
            &format!("{} {what}", self.origin),
        )
    }

    /// The manifest entry's `env`, then `[server] env` over it; the gate's own credentials are
    /// refused.
    fn env(&self, manifest_env: Vec<(String, Template)>) -> Result<Vec<(String, Template)>> {
        let mut env = manifest_env;
        for (name, value) in &self.server.env {
            if self.secrets.excluded(name) {
                return Err(Error::new(
                    Stage::Config,
                    format!(
                        "{} env sets {name}, a name reserved for the gate's own credentials",
                        self.origin
                    ),
                )
                .with_advice(format!(
                    "rename the variable or remove it: tdqs-gate never gives {name} to the server"
                )));
            }
            env.retain(|(existing, _)| existing != name);
            env.push((name.clone(), self.expand(value, &format!("env {name}"))?));
        }
        Ok(env)
    }

    /// `--url`, then `[server] url`, then the manifest entry's; it must be http(s). When the URL
    /// alone chose the server, `origin` names where it came from.
    fn url(
        &self,
        flag: Option<&str>,
        source: &Source<'_>,
        manifest_url: Option<Template>,
        origin: &mut String,
    ) -> Result<Option<Template>> {
        let url = match (flag, &self.server.url) {
            (Some(url), _) => {
                if matches!(source, Source::UrlOnly) {
                    *origin = "--url".to_string();
                }
                Some(root_only(url))
            }
            (None, Some(url)) => {
                if matches!(source, Source::UrlOnly) {
                    *origin = format!("{} url", self.origin);
                }
                Some(self.expand(url, "url")?)
            }
            (None, None) => manifest_url,
        };
        if let Some(url) = &url {
            if !url.raw.starts_with("http://") && !url.raw.starts_with("https://") {
                return Err(Error::usage(format!(
                    "the server URL `{}` (from {origin}) is not an http:// or https:// URL",
                    url.raw
                ))
                .with_advice("give the server's MCP endpoint, e.g. http://127.0.0.1:{port}/mcp"));
            }
        }
        Ok(url)
    }

    /// The manifest entry's headers, then `[server] headers` over them (names compared without
    /// case); a warning when there is no URL to send them to.
    fn headers(
        &self,
        manifest_headers: Vec<(String, Template)>,
        has_url: bool,
        warnings: &mut Vec<String>,
    ) -> Result<Vec<(String, Template)>> {
        let mut headers = manifest_headers;
        for (name, value) in &self.server.headers {
            headers.retain(|(existing, _)| !existing.eq_ignore_ascii_case(name));
            headers.push((
                name.clone(),
                self.expand(value, &format!("headers {name}"))?,
            ));
        }
        if !has_url && !headers.is_empty() {
            warnings.push(
                "`headers` are set but the server is started over stdio; they are not used"
                    .to_string(),
            );
        }
        Ok(headers)
    }

    /// What the server gets of the gate's environment: the base variables, `LC_*`, the network
    /// variables and `pass-env` (never the gate's own credentials).
    fn host_env(&self, warnings: &mut Vec<String>) -> Result<Vec<(String, String)>> {
        let host = self.host;
        let mut host_env: Vec<(String, String)> = BASE_ENV
            .iter()
            .filter_map(|name| host.get(name).map(|v| (name.to_string(), v.to_string())))
            .collect();
        host_env.extend(
            host.0
                .iter()
                .filter(|(name, _)| name.starts_with("LC_"))
                .map(|(k, v)| (k.clone(), v.clone())),
        );
        // Behind a proxy or a TLS-inspecting gateway setup commands cannot download anything
        // without these; proxy URLs may hold credentials, so their values are masked.
        for name in tdqs_core::network_env::NETWORK_ENV {
            if let Some(value) = host.get(name) {
                tdqs_core::network_env::register_proxy_secrets(name, value);
                host_env.push((name.to_string(), value.to_string()));
            }
        }
        for name in &self.server.pass_env {
            if self.secrets.excluded(name) {
                return Err(Error::new(
                    Stage::Config,
                    format!(
                        "{} pass-env names {name}, which carries the gate's own credentials",
                        self.origin
                    ),
                )
                .with_advice(format!(
                    "remove {name} from pass-env: tdqs-gate never gives it to the server"
                )));
            }
            match host.get(name) {
                Some(value) => host_env.push((name.clone(), value.to_string())),
                None => warnings.push(format!(
                    "pass-env {name} is not set in the gate's environment"
                )),
            }
        }
        Ok(host_env)
    }

    /// The persistent package cache folder, when the home is isolated and the cache is on. A
    /// folder the user chose must work; the default one is a convenience (a warning if not).
    fn package_cache(&self, warnings: &mut Vec<String>) -> Result<Option<PathBuf>> {
        if !(self.server.isolate_home && self.server.package_cache) {
            return Ok(None);
        }
        let host = self.host;
        let chosen = host.get(crate::export::package_cache::CACHE_ENV).is_some();
        Ok(
            match crate::export::package_cache::cache_root(|name| {
                host.get(name).map(str::to_string)
            })? {
                Some(root) => match crate::export::package_cache::prepare(&root) {
                    Ok(()) => Some(root),
                    Err(e) if chosen => return Err(e),
                    Err(e) => {
                        warnings.push(format!(
                            "package caches are not kept between runs: {}",
                            e.cause
                        ));
                        None
                    }
                },
                None => None,
            },
        )
    }
}

fn source_command(
    source: &Source<'_>,
    host: &HostEnv,
    secrets: &Secrets<'_>,
    warnings: &mut Vec<String>,
) -> Result<SourceCommand> {
    Ok(match source {
        Source::CommandFlag(line) => {
            let words = crate::config::split_command_line(line).ok_or_else(|| {
                Error::usage("--command has an unbalanced quote")
                    .with_advice("close the quote in --command")
            })?;
            if words.first().is_none_or(|w| w.trim().is_empty()) {
                return Err(Error::usage("--command is empty").with_advice(
                    "pass the server's command line, e.g. --command \"python server.py\"",
                ));
            }
            if words.len() == 1
                && (words[0].starts_with("http://") || words[0].starts_with("https://"))
            {
                return Err(Error::usage(format!(
                    "--command {} is a URL, not a command",
                    words[0]
                ))
                .with_advice(
                    "pass a URL with --url; to start the server from the tree too, give its \
                     command with --command and put {port} in both",
                ));
            }
            let command = words.iter().map(|w| root_only(w)).collect();
            SourceCommand {
                origin: "--command".to_string(),
                command,
                cwd: None,
                env: Vec::new(),
                url: None,
                headers: Vec::new(),
            }
        }
        Source::Config(config, server, words) => {
            let origin = match server.command_line {
                Some(line) => {
                    format!("{} [server] command (line {line})", config.path.display())
                }
                None => format!("{} [server] command", config.path.display()),
            };
            let command = words
                .iter()
                .map(|w| expand(w, host, secrets, &origin))
                .collect::<Result<Vec<_>>>()?;
            SourceCommand {
                origin,
                command,
                cwd: None,
                env: Vec::new(),
                url: None,
                headers: Vec::new(),
            }
        }
        Source::UrlOnly => SourceCommand {
            origin: String::new(),
            command: Vec::new(),
            cwd: None,
            env: Vec::new(),
            url: None,
            headers: Vec::new(),
        },
        Source::Manifest(entry) => {
            let origin = format!("{} server \"{}\"", entry.file, entry.name);
            let mut command = Vec::new();
            if !entry.command.is_empty() {
                command.push(expand(&entry.command, host, secrets, &origin)?);
                for arg in &entry.args {
                    command.push(expand(arg, host, secrets, &origin)?);
                }
            }
            let url = entry
                .url
                .as_deref()
                .map(|u| expand(u, host, secrets, &format!("{origin} url")))
                .transpose()?;
            let headers = entry
                .headers
                .iter()
                .map(|(name, value)| {
                    Ok((
                        name.clone(),
                        expand(value, host, secrets, &format!("{origin} headers {name}"))?,
                    ))
                })
                .collect::<Result<Vec<_>>>()?;
            let cwd = entry
                .cwd
                .as_deref()
                .map(|c| expand(c, host, secrets, &origin))
                .transpose()?;
            let mut env = Vec::new();
            for (name, value) in &entry.env {
                if secrets.excluded(name) {
                    warnings.push(format!(
                        "{origin}: env {name} is not given to the server: it is reserved for the gate's own credentials"
                    ));
                    continue;
                }
                env.push((
                    name.clone(),
                    expand(value, host, secrets, &format!("{origin} env {name}"))?,
                ));
            }
            SourceCommand {
                origin,
                command,
                cwd,
                env,
                url,
                headers,
            }
        }
    })
}

/// Replaces `spec.program` by its absolute path, or fails naming the command and its origin.
pub fn ensure_program(spec: &mut LaunchSpec) -> Result<()> {
    let path = locate_program(&spec.program, &spec.cwd, env_path(&spec.env), &spec.origin)?;
    spec.program = path.to_string_lossy().into_owned();
    Ok(())
}

fn env_path(env: &[(String, String)]) -> Option<&str> {
    env.iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_str())
}

/// Finds `program` as the server's process would: a name with a `/` relative to `cwd`, a bare
/// name on `path` (the server's PATH, not the gate's).
pub(crate) fn locate_program(
    program: &str,
    cwd: &Path,
    path: Option<&str>,
    origin: &str,
) -> Result<PathBuf> {
    let not_found =
        |cause: String, advice: String| Error::new(Stage::Export, cause).with_advice(advice);
    if program.contains('/') || Path::new(program).is_absolute() {
        // `components` drops the `.` of `./server.sh`, for readable messages.
        let candidate: PathBuf = cwd.join(program).components().collect();
        return match executable_status(&candidate) {
            ProgramFile::Runnable => Ok(candidate),
            ProgramFile::NoExecBit => Err(not_found(
                format!("`{program}` (from {origin}) is not executable"),
                format!("make it executable (`chmod +x {program}`) and commit the mode, or run it through its interpreter"),
            )),
            ProgramFile::Missing => Err(not_found(
                format!("`{program}` (from {origin}) does not exist in {}", cwd.display()),
                "check the path: a relative program is relative to the server's working directory, and {root} is the tree".to_string(),
            )),
        };
    }
    let path_value = path.unwrap_or("");
    // An empty PATH entry means the working directory, as for execvp; relative entries too.
    if let Some(found) = path_search::find_on_path(
        program.as_ref(),
        path_value.as_ref(),
        EmptyEntry::Means(cwd),
        Some(cwd),
        &[""],
    ) {
        return Ok(found);
    }
    let mut advice =
        format!("install `{program}` on the machine running the gate, or give its full path");
    if program.contains(char::is_whitespace) {
        advice = format!(
            "`{program}` contains spaces: a manifest's `command` is one program; put the arguments in `args`"
        );
    }
    Err(not_found(
        format!("cannot find the program `{program}` (from {origin}) on the server's PATH"),
        advice,
    )
    .with_detail("server PATH", path_value.replace(':', "\n")))
}

#[derive(Debug, PartialEq, Eq)]
enum ProgramFile {
    Runnable,
    NoExecBit,
    Missing,
}

fn executable_status(path: &Path) -> ProgramFile {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => {
            if !crate::platform::file_modes::has_exec_bit(&meta) {
                return ProgramFile::NoExecBit;
            }
            ProgramFile::Runnable
        }
        _ => ProgramFile::Missing,
    }
}

fn make_temp_home() -> Result<tempfile::TempDir> {
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

fn home_variables(home: &Path) -> Vec<(String, String)> {
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
fn looks_secret(name: &str) -> bool {
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

/// A `--command` word: only `{root}` is special.
fn root_only(text: &str) -> Template {
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

fn push_text(parts: &mut Vec<Part>, text: &str) {
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
fn expand(text: &str, host: &HostEnv, secrets: &Secrets<'_>, origin: &str) -> Result<Template> {
    let mut parts = Vec::new();
    expand_into(text, host, secrets, origin, &mut parts)?;
    Ok(Template {
        raw: text.to_string(),
        parts,
    })
}

fn expand_into(
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
fn closing_brace(text: &str) -> Option<usize> {
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

fn expand_reference(
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

/// One entry of a host manifest.
#[derive(Debug, Clone, PartialEq)]
struct ManifestEntry {
    /// The manifest's path relative to the tree (for messages).
    file: String,
    name: String,
    command: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
    cwd: Option<String>,
    /// An `http` / `sse` entry's endpoint (then `command` may be empty).
    url: Option<String>,
    headers: Vec<(String, String)>,
}

/// A parsed manifest entry: startable over stdio, or not.
#[derive(Debug, Clone, PartialEq)]
enum ManifestServer {
    Stdio(ManifestEntry),
    /// A remote entry, with its transport type.
    Remote(String),
}

fn pick_manifest_entry(
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
type Manifest = (String, Vec<(String, ManifestServer)>);

fn read_manifest(root: &Path) -> Result<Option<Manifest>> {
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

fn parse_manifest(file: &str, text: &str) -> Result<Vec<(String, ManifestServer)>> {
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
    if let Some(duplicate) = super::json_keys::first_duplicate_key(&plain) {
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

fn parse_manifest_entry(file: &str, name: &str, entry: &Value) -> Result<ManifestServer> {
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

/// Manifest types served over HTTP (Streamable HTTP; `sse` entries are tried the same way).
const HTTP_TYPES: [&str; 4] = ["http", "sse", "streamable-http", "streamableHttp"];

/// An `http` / `sse` entry: `url` and `headers` (strings).
fn http_manifest_entry(
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

/// Strings as they are; numbers and booleans as written (clients accept them in `env`).
fn scalar_string(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// JSON with comments and trailing commas (VS Code's `mcp.json` dialect) as plain JSON. Removed
/// characters become spaces, so line and column numbers in parse errors stay true.
fn strip_jsonc(text: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn host() -> HostEnv {
        HostEnv::from_pairs([
            ("PATH", "/usr/bin:/bin"),
            ("HOME", "/home/me"),
            ("LANG", "C.UTF-8"),
            ("LC_TIME", "C"),
            ("TERM", "xterm"),
            ("API_TOKEN", "host-token-value"),
            ("ANTHROPIC_API_KEY", "sk-ant-secret-value"),
            ("PORT", "8080"),
        ])
    }

    fn expand_ok(text: &str) -> Template {
        expand(text, &host(), &Secrets { extra: &[] }, "test").expect("expands")
    }

    #[test]
    fn references_expand_from_the_host_and_root_stays_a_placeholder() {
        let t = expand_ok("{root}/bin:${PATH}");
        assert_eq!(t.render(Path::new("/tree")), "/tree/bin:/usr/bin:/bin");
        assert_eq!(t.raw, "{root}/bin:${PATH}");
        assert_eq!(expand_ok("${env:PORT}").render(Path::new("/t")), "8080");
        assert_eq!(
            expand_ok("${MISSING:-{root}/d}").render(Path::new("/t")),
            "/t/d"
        );
        assert_eq!(expand_ok("${MISSING:-}").render(Path::new("/t")), "");
        assert_eq!(
            expand_ok("${workspaceFolder}/x").render(Path::new("/t")),
            "/t/x"
        );
        assert_eq!(
            expand_ok("cost: $5 {rooted} ${unclosed").render(Path::new("/t")),
            "cost: $5 {rooted} ${unclosed"
        );
        // A host value containing the placeholder is not substituted again.
        let host = HostEnv::from_pairs([("V", "{root}")]);
        let t = expand("${V}", &host, &Secrets { extra: &[] }, "test").expect("expands");
        assert_eq!(t.render(Path::new("/t")), "{root}");
    }

    #[test]
    fn unset_variables_editor_inputs_and_secrets_are_refused() {
        let secrets = Secrets {
            extra: &["TDQS_JUDGE_TOKEN".to_string()],
        };
        let err = expand("${NOPE}", &host(), &secrets, "o").expect_err("unset");
        assert!(
            err.cause.contains("NOPE")
                && err
                    .advice
                    .as_deref()
                    .unwrap_or("")
                    .contains("${NOPE:-value}")
        );
        let err = expand("${input:apiKey}", &host(), &secrets, "o").expect_err("input");
        assert!(err.cause.contains("input:apiKey"), "{}", err.cause);
        let err = expand("${ANTHROPIC_API_KEY}", &host(), &secrets, "o").expect_err("secret");
        assert!(err.cause.contains("ANTHROPIC_API_KEY"), "{}", err.cause);
        assert!(!err.render().contains("sk-ant-secret-value"));
        let err =
            expand("${TDQS_JUDGE_TOKEN:-x}", &host(), &secrets, "o").expect_err("caller's secret");
        assert!(err.cause.contains("TDQS_JUDGE_TOKEN"), "{}", err.cause);
    }

    #[test]
    fn root_only_templates_do_not_expand_variables() {
        let t = root_only("{root}/s ${PATH} {root}");
        assert_eq!(t.render(Path::new("/x")), "/x/s ${PATH} /x");
    }

    #[test]
    fn jsonc_comments_and_trailing_commas_are_removed_but_strings_are_kept() {
        let text = "{\n  // a comment\n  \"servers\": { /* block\n comment */ \"a\": {\"command\": \"x // not a comment\", \"args\": [\"/*\", \"\\\"\",],},},\n}";
        let value: Value = serde_json::from_str(&strip_jsonc(text)).expect("valid after stripping");
        assert_eq!(value["servers"]["a"]["command"], "x // not a comment");
        assert_eq!(
            value["servers"]["a"]["args"],
            serde_json::json!(["/*", "\""])
        );
        assert_eq!(strip_jsonc(text).lines().count(), text.lines().count());
    }

    #[test]
    fn issue_12_item_14_numeric_env_values_and_repeated_keys_are_refused() {
        let err = parse_manifest(
            ".mcp.json",
            r#"{"mcpServers": {"s": {"command": "node", "env": {"PORT": 8080}}}}"#,
        )
        .unwrap_err();
        assert!(
            err.cause.contains("env `PORT` is a number, not a string"),
            "{}",
            err.cause
        );
        let err = parse_manifest(
            ".mcp.json",
            "{\"mcpServers\": {\"s\": {\"command\": \"node\",\n \"command\": \"evil\"}}}",
        )
        .unwrap_err();
        assert!(
            err.cause.contains("the key \"command\" appears twice") && err.cause.contains("line 2"),
            "{}",
            err.cause
        );
    }

    #[test]
    fn manifest_entries_are_read_as_clients_read_them() {
        let servers = parse_manifest(
            ".mcp.json",
            r#"{"mcpServers": {
                "local": {"command": "node", "args": ["dist/index.js", 3], "env": {"A": "1", "C": null}, "cwd": "pkg"},
                "typed": {"type": "stdio", "command": "uvx"},
                "remote": {"type": "http", "url": "https://example.invalid/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
                "bare-url": {"url": "https://example.invalid/sse"},
                "socket": {"type": "ws", "url": "wss://example.invalid/ws"}
            }}"#,
        )
        .expect("valid");
        assert_eq!(servers.len(), 5);
        let ManifestServer::Stdio(local) = &servers[0].1 else {
            panic!("stdio expected")
        };
        assert_eq!(local.args, vec!["dist/index.js", "3"]);
        assert_eq!(local.env, vec![("A".to_string(), "1".to_string())]);
        assert_eq!(local.cwd.as_deref(), Some("pkg"));
        assert!(matches!(&servers[1].1, ManifestServer::Stdio(e) if e.command == "uvx"));
        // issue 15: http entries are exported over HTTP, with their url and headers.
        let ManifestServer::Stdio(remote) = &servers[2].1 else {
            panic!("http entry expected")
        };
        assert!(remote.command.is_empty());
        assert_eq!(remote.url.as_deref(), Some("https://example.invalid/mcp"));
        assert_eq!(
            remote.headers,
            vec![("Authorization".to_string(), "Bearer ${TOKEN}".to_string())]
        );
        assert!(
            matches!(&servers[3].1, ManifestServer::Stdio(e) if e.url.as_deref() == Some("https://example.invalid/sse"))
        );
        assert_eq!(servers[4].1, ManifestServer::Remote("ws".to_string()));
    }

    #[test]
    fn broken_manifests_are_errors_that_name_the_problem() {
        let cases = [
            ("[]", "top level"),
            ("{}", "neither"),
            (r#"{"mcpServers": {}, "servers": {}}"#, "both"),
            (r#"{"servers": []}"#, "not an object"),
            (r#"{"servers": {"a": {"args": []}}}"#, "no `command`"),
            (r#"{"servers": {"a": {"command": 1}}}"#, "not a string"),
            (
                r#"{"servers": {"a": {"command": "x", "args": "y"}}}"#,
                "not a list",
            ),
            (
                r#"{"servers": {"a": {"command": "x", "env": {"A-B": "1"}}}}"#,
                "A-B",
            ),
            (
                r#"{"servers": {"a": {"command": "x", "type": "carrier-pigeon"}}}"#,
                "carrier-pigeon",
            ),
            ("{\n\"servers\": {,}", "line 2"),
        ];
        for (text, expected) in cases {
            let err = parse_manifest("mcp.json", text).expect_err(text);
            assert!(err.cause.contains(expected), "{text}: {}", err.cause);
            assert!(err.cause.starts_with("mcp.json"), "{}", err.cause);
        }
    }

    #[test]
    fn secret_looking_names_are_recognised() {
        for name in [
            "GITHUB_TOKEN",
            "API_KEY",
            "db_password",
            "MY_SECRET",
            "GITHUB_PERSONAL_ACCESS_TOKEN",
            "AUTH",
            // Ends in KEY: the gate's own environment and --command always masked such names;
            // with one rule (issue 11 item 5) the server environment does too.
            "MONKEY",
        ] {
            assert!(looks_secret(name), "{name}");
        }
        for name in ["PATH", "HOME", "KEYBOARD_LAYOUT", "XDG_CACHE_HOME"] {
            assert!(!looks_secret(name), "{name}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn programs_are_found_on_the_servers_path_or_relative_to_its_cwd() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).expect("mkdir");
        let tool = bin.join("tool");
        std::fs::write(&tool, "#!/bin/sh\n").expect("write");
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let plain = bin.join("plain");
        std::fs::write(&plain, "").expect("write");
        std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let path = bin.to_string_lossy().into_owned();

        assert_eq!(
            locate_program("tool", dir.path(), Some(&path), "o").expect("on PATH"),
            tool
        );
        assert_eq!(
            locate_program("bin/tool", dir.path(), None, "o").expect("relative"),
            tool
        );
        assert_eq!(
            locate_program("./bin/tool", dir.path(), None, "o")
                .expect("dot")
                .canonicalize()
                .ok(),
            tool.canonicalize().ok()
        );
        let err = locate_program("plain", dir.path(), Some(&path), "o")
            .expect_err("not executable on PATH");
        assert!(
            err.cause.contains("`plain`") && err.cause.contains("(from o)"),
            "{}",
            err.cause
        );
        let err = locate_program("bin/plain", dir.path(), None, "o").expect_err("not executable");
        assert!(err.cause.contains("not executable"), "{}", err.cause);
        let err = locate_program("bin/none", dir.path(), None, "o").expect_err("missing");
        assert!(err.cause.contains("does not exist"), "{}", err.cause);
        let err =
            locate_program("python server.py", dir.path(), Some(&path), "o").expect_err("spaces");
        assert!(
            err.advice.as_deref().unwrap_or("").contains("args"),
            "{:?}",
            err.advice
        );
    }

    #[test]
    fn reproduce_command_quotes_words_and_hides_secret_values() {
        let spec = LaunchSpec {
            program: "/usr/bin/node".to_string(),
            args: vec!["my server.js".to_string()],
            cwd: PathBuf::from("/tree"),
            env: vec![
                ("API_TOKEN".to_string(), "abcdefghijkl".to_string()),
                ("PATH".to_string(), "/usr/bin".to_string()),
            ],
            setup: Vec::new(),
            origin: "--command".to_string(),
            secret_env: vec!["API_TOKEN".to_string()],
            limits: ExportLimits::default(),
            temp_home: None,
            reproduce_env: Vec::new(),
            http: None,
        };
        assert_eq!(
            spec.reproduce_command(),
            "cd /tree && env -i API_TOKEN=\"$API_TOKEN\" PATH=/usr/bin /usr/bin/node 'my server.js'"
        );
        assert_eq!(spec.env_names(), vec!["API_TOKEN", "PATH"]);
    }

    #[test]
    fn reproduce_assignments_keep_references_and_hide_literal_secrets() {
        let root = Path::new("/tmp/tree");
        assert_eq!(
            reproduce_assignment("PYTHONPATH", "{root}/src", root),
            "PYTHONPATH=/tmp/tree/src"
        );
        assert_eq!(
            reproduce_assignment("DATA", "${env:HOME}/a \"b\" `c`", root),
            "DATA=\"${HOME}/a \\\"b\\\" \\`c\\`\""
        );
        assert_eq!(
            reproduce_assignment("API_TOKEN", "literal-secret", root),
            "API_TOKEN=\"${API_TOKEN}\""
        );
        assert_eq!(
            reproduce_assignment("MODE", "two words", root),
            "MODE='two words'"
        );
    }
}
