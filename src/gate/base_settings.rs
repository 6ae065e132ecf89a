//! The gate's settings belong to the base revision; each side only brings its launch plan.
//!
//! A pull request is the change under review, so nothing it writes may decide how it is judged.
//! `tdqs-gate.toml` holds two kinds of keys:
//!
//! - **launch plan** (`command`, `args`, `cwd`, `env`, `setup`, `url`, `headers`): how a
//!   revision's server starts. Each side is started by its own revision's plan, so a change to
//!   the head's `env` or `args` cannot change how the base starts (or make it list nothing).
//! - **settings** (everything else: `isolate-home`, `pass-env`, `package-cache`,
//!   `setup-in-place`, the timeouts and size limits, `[probe]`, `[decision]`, `[eval]`, the set
//!   of servers, and any table added later such as `[sandbox]`): always the base revision's
//!   (or the command line's), for both sides. The head's values are ignored, and a difference is
//!   reported first in the report (`changed_settings`).
//!
//! The head's plan also cannot widen what the base allows: a `${NAME}` it reads from the gate's
//! environment must be one the base's own plan reads or its `pass-env` names
//! (`check_head_references`); and no plan may name an absolute path inside the repository's
//! working tree or `$PWD` (`refuse_tree_paths`), which would run the working tree's code on
//! both sides.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::config::{Config, ServerConfig};
use crate::export::launch::LaunchPlan;
use tdqs_core::error::{Error, Stage};

/// The configuration one side's server is started from: the side's own launch plan (`plan`,
/// one server's configuration as [`Config::for_server`] gives it) under the base revision's
/// settings (`settings`, the same server's). `None` when neither has a file.
pub(crate) fn merged(settings: Option<&Config>, plan: Option<&Config>) -> Option<Config> {
    let path = plan.or(settings)?.path.clone();
    let defaults = ServerConfig::default();
    let settings_table = settings.and_then(|c| c.server.as_ref());
    let plan_table = plan.and_then(|c| c.server.as_ref());
    let server = match (settings_table, plan_table) {
        (None, None) => None,
        (s, p) => {
            let (s, p) = (s.unwrap_or(&defaults), p.unwrap_or(&defaults));
            Some(ServerConfig {
                // The side's launch plan.
                command: p.command.clone(),
                command_line: p.command_line,
                setup_lines: p.setup_lines.clone(),
                env: p.env.clone(),
                cwd: p.cwd.clone(),
                setup: p.setup.clone(),
                url: p.url.clone(),
                headers: p.headers.clone(),
                // The base's settings.
                startup_timeout: s.startup_timeout,
                request_timeout: s.request_timeout,
                setup_timeout: s.setup_timeout,
                max_message_bytes: s.max_message_bytes,
                max_listing_bytes: s.max_listing_bytes,
                isolate_home: s.isolate_home,
                pass_env: s.pass_env.clone(),
                package_cache: s.package_cache,
                setup_in_place: s.setup_in_place,
            })
        }
    };
    Some(Config {
        path,
        server,
        servers: Vec::new(),
        probe: settings.map(|c| c.probe.clone()).unwrap_or_default(),
        lint: settings.and_then(|c| c.lint.clone()),
        decision: settings.map(|c| c.decision).unwrap_or_default(),
        eval: settings.and_then(|c| c.eval.clone()),
        sandbox: settings.and_then(|c| c.sandbox.clone()),
    })
}

/// The head's configuration of one server of the base's set: its `[[server]]` table of that
/// name (`table`), or its `[server]` table. A server the base gates and the head's file does not
/// describe is refused: it must not be left out of the gate, nor started with another plan.
pub(crate) fn head_plan_for(
    head: Option<&Config>,
    table: Option<&str>,
) -> Result<Option<Config>, Error> {
    match (table, head) {
        (Some(name), Some(config)) => match config.for_server(name) {
            Some(one) => Ok(Some(one)),
            None => Err(removed_server_error(name)),
        },
        (Some(name), None) => Err(removed_server_error(name)),
        (None, Some(config)) if !config.servers.is_empty() => Err(Error::new(
            Stage::Config,
            format!(
                "the head's {} has [[server]] tables ({}), but the base revision gates one \
                 server: the set of servers is the base revision's setting, so the head's \
                 tables are not used for this change",
                config.path.display(),
                config.server_names().join(", ")
            ),
        )
        .with_advice(
            "merge the change to tdqs-gate.toml on its own first (it applies to the pull requests \
             after it), or have the workflow start the server with --command",
        )),
        (None, head) => Ok(head.cloned()),
    }
}

/// Every setting of a configuration, by the name a reader looks for, with its value as text:
/// what [`changed_settings`] compares. A key added to `tdqs-gate.toml` that is not part of the
/// launch plan belongs here.
fn settings_view(config: Option<&Config>) -> BTreeMap<String, String> {
    let mut view = BTreeMap::new();
    let defaults = ServerConfig::default();
    let shape = match config {
        Some(c) if !c.servers.is_empty() => {
            format!("[[server]] tables {}", c.server_names().join(", "))
        }
        // A `[server]` table or none (a manifest entry, `--command`): one server either way.
        _ => "one server".to_string(),
    };
    view.insert("the set of servers".to_string(), shape);
    let mut tables: Vec<(String, &ServerConfig)> = Vec::new();
    if let Some(c) = config {
        tables.extend(c.server.iter().map(|s| ("[server]".to_string(), s)));
        tables.extend(
            c.servers
                .iter()
                .map(|s| (format!("[[server]] `{}`", s.name), &s.server)),
        );
    }
    if tables.is_empty() {
        tables.push(("[server]".to_string(), &defaults));
    }
    for (label, s) in tables {
        let mut put = |key: &str, value: String| {
            view.insert(format!("{label} {key}"), value);
        };
        put("isolate-home", s.isolate_home.to_string());
        put("pass-env", format!("{:?}", s.pass_env));
        put("package-cache", s.package_cache.to_string());
        put("setup-in-place", s.setup_in_place.to_string());
        put("startup-timeout", format!("{:?}", s.startup_timeout));
        put("request-timeout", format!("{:?}", s.request_timeout));
        put("setup-timeout", format!("{:?}", s.setup_timeout));
        put("max-message-bytes", format!("{:?}", s.max_message_bytes));
        put("max-listing-bytes", format!("{:?}", s.max_listing_bytes));
    }
    view.insert(
        "[sandbox]".to_string(),
        config
            .and_then(|c| c.sandbox.as_ref())
            .map(|t| t.to_string())
            .unwrap_or_default(),
    );
    let probe = config.map(|c| c.probe.clone()).unwrap_or_default();
    view.insert(
        "[probe]".to_string(),
        serde_json::to_string(&probe).unwrap_or_default(),
    );
    view.insert(
        "[decision] tool-drop".to_string(),
        format!("{:?}", config.and_then(|c| c.decision.tool_drop)),
    );
    view.insert(
        "[decision] max-listing-growth".to_string(),
        format!("{:?}", config.and_then(|c| c.decision.max_listing_growth)),
    );
    view.insert(
        "[eval]".to_string(),
        format!("{:?}", config.and_then(|c| c.eval.as_ref())),
    );
    view
}

/// Where a run's settings are read from, outside the checkouts of [`super::sides`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SettingsSource {
    /// A revision's committed files (the base revision, or `--settings-rev`).
    Revision(String),
    /// The working tree (the base is the working tree).
    WorkingTree,
    /// The base's `tdqs-gate.toml` as its export job copied it into the base folder (the
    /// scoring job of the reusable workflow, which holds no checkout of either side).
    File(PathBuf),
    /// None: the base is an export file and no `--settings-rev` names a revision; the defaults
    /// and the command line apply.
    Defaults,
}

impl SettingsSource {
    pub(crate) fn of(opts: &super::GateOptions) -> SettingsSource {
        use super::SideSource;
        match (&opts.base, &opts.settings_rev) {
            (SideSource::Revision(rev), _) if !rev.is_empty() => {
                SettingsSource::Revision(rev.clone())
            }
            (SideSource::WorkingTree, _) => SettingsSource::WorkingTree,
            (_, Some(rev)) => SettingsSource::Revision(rev.clone()),
            _ => match &opts.settings_file {
                Some(file) => SettingsSource::File(file.clone()),
                None => SettingsSource::Defaults,
            },
        }
    }

    /// Where the settings came from, for messages.
    pub(crate) fn label(&self) -> String {
        match self {
            SettingsSource::Revision(rev) => format!("the base revision ({rev})"),
            SettingsSource::WorkingTree => "the working tree (the base)".to_string(),
            SettingsSource::File(path) => format!(
                "the base's tdqs-gate.toml as its export job wrote it ({})",
                path.display()
            ),
            SettingsSource::Defaults => {
                "the defaults (the base is an export file; --settings-rev names the revision \
                 to read them from)"
                    .to_string()
            }
        }
    }

    /// A file of the settings' revision (`relative` to the repository root), read from git's
    /// object database for a revision; `None` when absent, or for [`SettingsSource::Defaults`].
    pub(crate) fn file(
        &self,
        repo: Option<&Path>,
        relative: &Path,
        max_bytes: usize,
    ) -> Result<Option<Vec<u8>>, Error> {
        match self {
            SettingsSource::Revision(rev) => crate::revision::Repo::open_without_pruning(repo)?
                .committed_file(rev, relative, max_bytes),
            SettingsSource::WorkingTree => {
                let repo = crate::revision::Repo::open_without_pruning(repo)?;
                let Some(root) = repo.workdir() else {
                    return Ok(None);
                };
                use crate::platform::safe_file::{read_regular, Links, ReadError};
                match read_regular(&root.join(relative), Links::Refuse, max_bytes as u64) {
                    Ok(bytes) => Ok(Some(bytes)),
                    Err(ReadError::NotFound) => Ok(None),
                    Err(e) => Err(Error::new(
                        Stage::Config,
                        format!("cannot read {}: {e}", root.join(relative).display()),
                    )
                    .with_advice("make it a regular file, or remove it")),
                }
            }
            SettingsSource::File(path) => {
                // Only the configuration travels with the base folder; a case file does not.
                if relative != Path::new(crate::config::CONFIG_FILE) {
                    return Ok(None);
                }
                use crate::platform::safe_file::{read_regular, Links};
                read_regular(path, Links::Refuse, max_bytes as u64)
                    .map(Some)
                    .map_err(|e| {
                        Error::new(
                            Stage::Config,
                            format!("cannot read the base's settings {}: {e}", path.display()),
                        )
                        .with_advice(
                            "the base export job writes it as a small regular file; re-run \
                             the workflow",
                        )
                    })
            }
            SettingsSource::Defaults => Ok(None),
        }
    }

    /// The settings' `tdqs-gate.toml`, parsed.
    pub(crate) fn config(&self, repo: Option<&Path>) -> Result<Option<Config>, Error> {
        let name = Path::new(crate::config::CONFIG_FILE);
        let Some(bytes) = self.file(repo, name, 1 << 20)? else {
            return Ok(None);
        };
        let shown = match self {
            SettingsSource::Revision(rev) => PathBuf::from(format!("{rev}:{}", name.display())),
            SettingsSource::File(path) => path.clone(),
            _ => name.to_path_buf(),
        };
        let text = String::from_utf8(bytes).map_err(|_| {
            Error::new(
                Stage::Config,
                format!("{} is not UTF-8 text", shown.display()),
            )
            .with_advice("make the file UTF-8 text")
        })?;
        Config::parse(&text, &shown).map(Some)
    }
}

/// The `[decision]` table of a run whose sides are export files: the settings revision's
/// (`--settings-rev`), else the defaults (the flags still win).
pub(crate) fn decision_of(
    opts: &super::GateOptions,
) -> Result<crate::config::DecisionConfig, Error> {
    Ok(SettingsSource::of(opts)
        .config(opts.repo.as_deref())?
        .map(|c| c.decision)
        .unwrap_or_default())
}

/// The selection check's case file as committed at the settings' revision (`path` is where it
/// lies in the working tree `root`): the suite is a setting too, so a pull request's edits to it
/// do not change what is measured.
pub(crate) fn committed_suite(
    settings: &SettingsSource,
    repo: Option<&Path>,
    root: &Path,
    path: &Path,
) -> Result<tdqs_core::eval::case::Suite, Error> {
    let relative = path.strip_prefix(root).unwrap_or(path);
    let shown = format!("{}:{}", label_rev(settings), relative.display());
    let bytes = settings.file(repo, relative, 4 << 20)?.ok_or_else(|| {
        Error::new(
            Stage::Eval,
            format!(
                "there is no case file {shown} (a regular file committed at the base revision)"
            ),
        )
        .with_advice(
            "commit the case file on the base branch first (the selection check uses the \
                 base revision's cases), or give one with --eval-cases",
        )
    })?;
    let text = String::from_utf8(bytes)
        .map_err(|_| Error::new(Stage::Eval, format!("the case file {shown} is not UTF-8")))?;
    crate::eval::suite::parse(&text).map_err(|problems| {
        Error::new(
            Stage::Eval,
            format!(
                "the case file {shown} is not valid: {}",
                problems.join("; ")
            ),
        )
        .with_advice("see docs/eval.md (\"The case file\")")
    })
}

fn label_rev(settings: &SettingsSource) -> String {
    match settings {
        SettingsSource::Revision(rev) => rev.clone(),
        _ => String::new(),
    }
}

/// The settings the head's file sets otherwise than the base's, by name (`[decision]
/// tool-drop`, `[server] isolate-home`, `the set of servers`, …); empty when none.
pub(crate) fn changed_settings(base: Option<&Config>, head: Option<&Config>) -> Vec<String> {
    let (base, head, default) = (
        settings_view(base),
        settings_view(head),
        settings_view(None),
    );
    let keys: BTreeSet<&String> = base.keys().chain(head.keys()).collect();
    keys.into_iter()
        .filter(|k| match (base.get(*k), head.get(*k)) {
            (Some(b), Some(h)) => b != h,
            // A table only one side has counts where it differs from the defaults.
            (one, other) => {
                let generic = k
                    .rsplit(' ')
                    .next()
                    .map(|key| format!("[server] {key}"))
                    .unwrap_or_default();
                default.get(&generic) != one.or(other)
            }
        })
        .cloned()
        .collect()
}

/// The report's first warning when the head changes settings: which, and that they were not
/// used. `base_label` names where the settings came from.
pub(crate) fn changed_settings_warning(changed: &[String], base_label: &str) -> Option<String> {
    if changed.is_empty() {
        return None;
    }
    Some(format!(
        "the pull request changes the gate's configuration (tdqs-gate.toml): {}. These settings \
         were ignored: the gate's settings come from {base_label} and the command line, so a \
         change to them takes effect once it is merged",
        changed.join(", ")
    ))
}

/// The `${NAME}` references of a text, as the launch plan expands them (`${NAME}`,
/// `${NAME:-default}` with the default's own references, `${env:NAME}`; not
/// `${workspaceFolder}`).
pub(crate) fn referenced_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        let body_start = at + 2;
        let mut depth = 1usize;
        let mut end = None;
        for (i, c) in rest[body_start..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(body_start + i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(end) = end else { break };
        let body = &rest[body_start..end];
        if body != "workspaceFolder" {
            if let Some(name) = body.strip_prefix("env:") {
                names.push(name.to_string());
            } else if let Some((name, default)) = body.split_once(":-") {
                names.push(name.to_string());
                names.extend(referenced_names(default));
            } else {
                names.push(body.to_string());
            }
        }
        rest = &rest[end + 1..];
    }
    names
}

/// Names a server gets from the gate's environment whatever its plan says (so reading them with
/// `${…}` widens nothing).
fn always_given(name: &str, isolate_home: bool) -> bool {
    const HOME: [&str; 9] = [
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
    crate::export::launch::BASE_ENV.contains(&name)
        || name.starts_with("LC_")
        || tdqs_core::network_env::NETWORK_ENV.contains(&name)
        || (!isolate_home && HOME.contains(&name))
}

/// What the base lets reach a server: the names its own plan reads with `${…}` and its
/// `pass-env` names.
#[derive(Debug, Clone, Default)]
pub(crate) struct Allowed {
    names: BTreeSet<String>,
    isolate_home: bool,
}

impl Allowed {
    /// From the base's plan (when the base has one: not for an export file) and the settings.
    pub(crate) fn of(base_plan: Option<&LaunchPlan>, settings: Option<&Config>) -> Allowed {
        let mut names = BTreeSet::new();
        if let Some(plan) = base_plan {
            for (_, raw, _) in plan.launch_texts() {
                names.extend(referenced_names(&raw));
            }
        }
        let table = settings.and_then(|c| c.server.as_ref());
        if let Some(table) = table {
            names.extend(table.pass_env.iter().cloned());
        }
        Allowed {
            names,
            isolate_home: table.is_none_or(|t| t.isolate_home),
        }
    }

    /// Also the names the settings' own `[server]` strings read with `${…}` (when there is no
    /// base plan to read them from: `export --settings-rev`).
    pub(crate) fn with_config_references(mut self, settings: Option<&Config>) -> Allowed {
        if let Some(table) = settings.and_then(|c| c.server.as_ref()) {
            let texts = table
                .command
                .iter()
                .flatten()
                .chain(table.env.values())
                .chain(table.cwd.iter())
                .chain(table.setup.iter().flatten())
                .chain(table.url.iter())
                .chain(table.headers.values());
            for text in texts {
                self.names.extend(referenced_names(text));
            }
        }
        self
    }

    fn allows(&self, name: &str) -> bool {
        self.names.contains(name) || always_given(name, self.isolate_home)
    }
}

/// Refuses a head plan that reads from the gate's environment a variable the base does not give
/// a server: the head's `env`, `args` or `headers` must not hand it the runner's credentials
/// (`${GITHUB_TOKEN}`, `${ACTIONS_ID_TOKEN_REQUEST_TOKEN}`) or the user's agent
/// (`${SSH_AUTH_SOCK}`).
pub(crate) fn check_head_references(
    head_plan: &LaunchPlan,
    allowed: &Allowed,
    base_label: &str,
) -> Result<(), Error> {
    for (what, raw, _) in head_plan.launch_texts() {
        for name in referenced_names(&raw) {
            if !allowed.allows(&name) {
                return Err(Error::new(
                    Stage::Config,
                    format!(
                        "the head's launch plan ({}, {what}) reads ${{{name}}} from the gate's \
                         environment, but {base_label} gives no server {name}: which variables \
                         reach a server is the base revision's setting (its `pass-env` and the \
                         `${{…}}` its own plan reads), so a pull request cannot add one",
                        head_plan.origin()
                    ),
                )
                .with_advice(format!(
                    "remove the reference from the pull request, or merge a change that lets \
                     servers have {name} on its own first (reviewed, it then applies to later \
                     pull requests)"
                )));
            }
        }
    }
    Ok(())
}

/// The folders an absolute path of a launch plan must not point into: the repository's working
/// tree, as given and as resolved (the gate's `$PWD` is normally inside it).
pub(crate) fn tree_roots(workdir: Option<&Path>) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    if let Some(dir) = workdir {
        let trimmed = PathBuf::from(dir.to_string_lossy().trim_end_matches('/'));
        roots.push(trimmed.clone());
        if let Ok(real) = trimmed.canonicalize() {
            if !roots.contains(&real) {
                roots.push(real);
            }
        }
    }
    roots.retain(|r| r.as_os_str().len() > 1);
    roots
}

/// Whether `text` names `root` or a path below it (not merely a path sharing its prefix).
fn names_path_in(text: &str, root: &Path) -> bool {
    let root = root.to_string_lossy();
    let mut from = 0;
    while let Some(at) = text[from..].find(root.as_ref()) {
        let end = from + at + root.len();
        match text[end..].chars().next() {
            None => return true,
            Some(c) if !(c.is_alphanumeric() || matches!(c, '-' | '_' | '.')) => return true,
            _ => {}
        }
        from = end;
    }
    false
}

/// `$PWD` in its spellings: the gate's own working folder, the same for both sides.
fn names_pwd(raw: &str) -> bool {
    raw.contains("${PWD}")
        || raw.contains("${PWD:-")
        || raw.contains("${env:PWD}")
        || raw.split("$PWD").skip(1).any(|after| {
            after
                .chars()
                .next()
                .is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
        })
}

/// Refuses a plan that names an absolute path inside the repository's working tree, or `$PWD`:
/// both sides would then run the working tree's code, so a regression would compare with
/// itself and PASS. `{root}` is the one way to name a side's own tree.
pub(crate) fn refuse_tree_paths(plan: &LaunchPlan, roots: &[PathBuf]) -> Result<(), Error> {
    for (what, raw, shown) in plan.launch_texts() {
        let hit = if names_pwd(&raw) {
            Some("$PWD (the gate's own working folder, the same for both sides)".to_string())
        } else {
            roots
                .iter()
                .find(|root| names_path_in(&shown, root))
                .map(|root| {
                    format!(
                        "{}, an absolute path inside the repository's working tree",
                        root.display()
                    )
                })
        };
        if let Some(hit) = hit {
            return Err(Error::new(
                Stage::Config,
                format!(
                    "the launch plan ({}, {what}: `{raw}`) names {hit}: both sides would run the \
                     working tree's code, so the gate would compare the change with itself",
                    plan.origin()
                ),
            )
            .with_advice(
                "write {root} instead, which stands for each side's own tree: e.g. command = \
                 \"python3 {root}/server.py\", env = { PYTHONPATH = \"{root}/src\" }, \
                 cwd = \"{root}/pkg\"",
            ));
        }
    }
    Ok(())
}

/// Why a server the change removed is INVALID, and how an intended removal gets through.
fn removed_server_error(name: &str) -> Error {
    Error::new(
        Stage::Config,
        format!(
            "server `{name}` is in the base revision's tdqs-gate.toml but not in the head's: a \
             server the change removes is not left out of the gate silently (the set of servers \
             is the base revision's setting)"
        ),
    )
    .with_advice(
        "if the removal is intended, gate the remaining servers by name for this change (--server \
         NAME for each, given by the workflow, not by the pull request)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Config {
        Config::parse(text, Path::new("tdqs-gate.toml")).expect("valid")
    }

    #[test]
    fn settings_come_from_the_base_and_the_plan_from_the_side() {
        let base = parse(
            "[server]\ncommand = \"python3 {root}/server.py\"\nenv = { A = \"base\" }\n\
             isolate-home = true\n[decision]\ntool-drop = 0.5\n",
        );
        let head = parse(
            "[server]\ncommand = \"python3 {root}/other.py\"\nenv = { A = \"head\" }\n\
             isolate-home = false\npass-env = [\"GITHUB_TOKEN\"]\nsetup-in-place = true\n\
             [decision]\ntool-drop = 4.0\n[probe]\nclient-info = { name = \"x\", version = \"1\" }\n",
        );
        let merged = merged(Some(&base), Some(&head)).expect("config");
        let server = merged.server.expect("server");
        assert_eq!(
            server.command.as_ref().expect("command")[1],
            "{root}/other.py"
        );
        assert_eq!(server.env["A"], "head");
        assert!(server.isolate_home);
        assert!(server.pass_env.is_empty());
        assert!(!server.setup_in_place);
        assert_eq!(merged.decision, base.decision);
        assert_eq!(merged.probe, base.probe);

        let changed = changed_settings(Some(&base), Some(&head));
        for key in [
            "[decision] tool-drop",
            "[server] isolate-home",
            "[server] pass-env",
            "[server] setup-in-place",
            "[probe]",
        ] {
            assert!(changed.contains(&key.to_string()), "{key}: {changed:?}");
        }
        assert!(changed_settings(Some(&base), Some(&base)).is_empty());
        // A table only one side has counts only where it differs from the defaults.
        let plain = parse("[server]\ncommand = \"x\"\n");
        assert!(changed_settings(None, Some(&plain)).is_empty());
        let tables = parse("[[server]]\nname = \"a\"\ncommand = \"x\"\n");
        assert_eq!(
            changed_settings(Some(&tables), None),
            vec!["the set of servers".to_string()]
        );
    }

    #[test]
    fn references_are_found_in_every_spelling() {
        assert_eq!(
            referenced_names("a ${A} ${env:B} ${C:-${D}} ${workspaceFolder} ${"),
            vec!["A", "B", "C", "D"]
        );
    }

    #[test]
    fn paths_in_the_working_tree_and_pwd_are_recognised() {
        let root = Path::new("/work/repo");
        assert!(names_path_in("/work/repo/server.py", root));
        assert!(names_path_in("--dir=/work/repo", root));
        assert!(!names_path_in("/work/repo-other/server.py", root));
        assert!(!names_path_in("{root}/server.py", root));
        assert!(names_pwd("${PWD}/server.py"));
        assert!(names_pwd("$PWD/server.py"));
        assert!(!names_pwd("$PWDX"));
        assert!(!names_pwd("{root}/x"));
    }
}
