//! The launch plan: resolved once from the options, the `[server]` table and the source
//! command, then applied to each side's tree.

use super::*;

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

/// How every side's server is started; see the module documentation.
#[derive(Debug, Clone)]
pub struct LaunchPlan {
    pub(super) origin: String,
    /// Empty when the server is only a URL (nothing to start).
    pub(super) command: Vec<Template>,
    /// The Streamable HTTP endpoint, when the server speaks HTTP.
    pub(super) url: Option<Template>,
    /// Sent with every HTTP request (manifest headers, then `[server] headers`).
    pub(super) headers: Vec<(String, Template)>,
    pub(super) cwd: Option<Template>,
    /// Manifest env, then configured env (later entries win).
    pub(super) env: Vec<(String, Template)>,
    pub(super) setup: Vec<Vec<Template>>,
    /// Where each setup command is configured (parallel to `setup`), for messages.
    pub(super) setup_origins: Vec<String>,
    pub(super) isolate_home: bool,
    /// The persistent package cache root, when used (isolated home, not turned off).
    pub(super) package_cache: Option<PathBuf>,
    /// `[server] setup-in-place`: the head's setup runs in the working tree itself.
    pub(super) setup_in_place: bool,
    /// Host values of the base variables, the network variables and `pass-env`, in that order.
    pub(super) host_env: Vec<(String, String)>,
    /// Host values of the home variables, used when the home is not isolated.
    pub(super) host_home: Vec<(String, String)>,
    pub(super) limits: ExportLimits,
    pub(super) warnings: Vec<String>,
    /// The host manifest entry the command came from, by name.
    pub(super) manifest_entry: Option<String>,
    /// Whether and how the processes of every side are sandboxed (see [`LaunchPlan::confine`]).
    pub(super) sandbox: Option<Arc<crate::platform::sandbox::Decision>>,
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
        let manifest_entry = match &source {
            Source::Manifest(entry) => Some(entry.name.clone()),
            _ => None,
        };
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
        let setup_origins = (0..setup.len())
            .map(|i| match server.setup_lines.get(i) {
                Some(line) => format!("{config_origin} setup (line {line})"),
                None => format!("{config_origin} setup"),
            })
            .collect();
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
            setup_origins,
            isolate_home: server.isolate_home,
            package_cache,
            setup_in_place: server.setup_in_place,
            host_env,
            host_home,
            limits: server.apply_limits(options.limits.clone()),
            warnings,
            manifest_entry,
            sandbox: None,
        })
    }

    /// The name of the host manifest entry the command came from, if it came from one.
    pub fn manifest_entry(&self) -> Option<&str> {
        self.manifest_entry.as_deref()
    }

    /// Every text of the plan (command words, URL, headers, cwd, env values, setup words) as
    /// `(what, as written, as expanded with {root} kept)`: what the checks of
    /// `crate::gate::base_settings` read.
    pub(crate) fn launch_texts(&self) -> Vec<(String, String, String)> {
        let shown = |t: &Template| -> String {
            t.parts
                .iter()
                .map(|p| match p {
                    Part::Text(text) => text.as_str(),
                    Part::Root => "{root}",
                })
                .collect()
        };
        let mut texts: Vec<(String, &Template)> = Vec::new();
        texts.extend(self.command.iter().map(|t| ("command".to_string(), t)));
        texts.extend(self.url.iter().map(|t| ("url".to_string(), t)));
        texts.extend(
            self.headers
                .iter()
                .map(|(n, t)| (format!("headers {n}"), t)),
        );
        texts.extend(self.cwd.iter().map(|t| ("cwd".to_string(), t)));
        texts.extend(self.env.iter().map(|(n, t)| (format!("env {n}"), t)));
        texts.extend(
            self.setup
                .iter()
                .flatten()
                .map(|t| ("setup".to_string(), t)),
        );
        texts
            .into_iter()
            .map(|(what, t)| (what, t.raw.clone(), shown(t)))
            .collect()
    }

    /// Sets the run's sandbox decision, which [`crate::gate`] applies to each side's spec.
    pub fn confine(&mut self, decision: crate::platform::sandbox::Decision) {
        self.sandbox = Some(Arc::new(decision));
    }

    /// True when the plan starts a process (not only a URL to reach).
    pub fn starts_process(&self) -> bool {
        !self.command.is_empty()
    }

    /// The run's sandbox decision (`None`: not decided, as in library callers that start
    /// servers themselves; they run unconfined).
    pub fn sandbox(&self) -> Option<&crate::platform::sandbox::Decision> {
        self.sandbox.as_deref()
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
            .zip(&self.setup_origins)
            .map(|(words, origin)| {
                let words: Vec<String> = words.iter().map(|t| t.render(&root)).collect();
                SetupCommand {
                    program: words[0].clone(),
                    args: words[1..].to_vec(),
                    origin: Some(origin.clone()),
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
            sandbox: None,
        };
        if spec.program.is_empty() {
            // Only a URL: nothing to start.
        } else if let Some(first) = spec.setup.first() {
            // Later setup commands may use what earlier ones create (a virtualenv's pip).
            locate_program(
                &first.program,
                &spec.cwd,
                env_path(&spec.env),
                first
                    .origin
                    .as_deref()
                    .unwrap_or(&format!("{} setup", self.origin)),
            )?;
        } else {
            ensure_program(&mut spec)?;
        }
        Ok(spec)
    }
}

/// Programs that find their project from the working directory (the side's tree by default).
pub(super) const CWD_PROJECT_PROGRAMS: [&str; 12] = [
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

/// The `[server]` table of `tdqs-gate.toml` (or its defaults), applied over what the source
/// gave, one setting per step of [`LaunchPlan::resolve`].
pub(super) struct ServerTable<'a> {
    pub(super) server: &'a ServerConfig,
    /// `<path> [server]`, or empty without a file.
    pub(super) origin: &'a str,
    pub(super) host: &'a HostEnv,
    pub(super) secrets: &'a Secrets<'a>,
}

impl ServerTable<'_> {
    /// Expands a value of the setting `what` (`cwd`, `env NAME`, …).
    pub(super) fn expand(&self, value: &str, what: &str) -> Result<Template> {
        expand(
            value,
            self.host,
            self.secrets,
            &format!("{} {what}", self.origin),
        )
    }

    /// The manifest entry's `env`, then `[server] env` over it; the gate's own credentials are
    /// refused.
    pub(super) fn env(
        &self,
        manifest_env: Vec<(String, Template)>,
    ) -> Result<Vec<(String, Template)>> {
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
    pub(super) fn url(
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
    pub(super) fn headers(
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
    pub(super) fn host_env(&self, warnings: &mut Vec<String>) -> Result<Vec<(String, String)>> {
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
    pub(super) fn package_cache(&self, warnings: &mut Vec<String>) -> Result<Option<PathBuf>> {
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
