//! The source command: `--command`, `[server] command`, a URL alone or a manifest entry, and
//! locating its program.

use super::*;

/// Where the command came from.
pub(super) enum Source<'a> {
    CommandFlag(&'a str),
    /// A URL (`--url` or `[server] url`) and no command: nothing to start.
    UrlOnly,
    Config(&'a Config, &'a ServerConfig, &'a [String]),
    Manifest(ManifestEntry),
}

/// The command of the chosen source, with the manifest entry's own `cwd`, `env`, `url` and
/// `headers`.
pub(super) struct SourceCommand {
    pub(super) origin: String,
    pub(super) command: Vec<Template>,
    pub(super) cwd: Option<Template>,
    pub(super) env: Vec<(String, Template)>,
    pub(super) url: Option<Template>,
    pub(super) headers: Vec<(String, Template)>,
}

/// Where the command comes from: `--command`, then `[server] command`, then a URL alone, then a
/// host manifest's entry. `--server` conflicts with the first two.
pub(super) fn pick_source<'a>(
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

pub(super) fn source_command(
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

pub(super) fn env_path(env: &[(String, String)]) -> Option<&str> {
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
pub(super) enum ProgramFile {
    Runnable,
    NoExecBit,
    Missing,
}

pub(super) fn executable_status(path: &Path) -> ProgramFile {
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
