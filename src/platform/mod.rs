//! What the engine asks of the operating system, written once: process-wide defences set up
//! before any child starts ([`harden`]), proof that a leftover folder is the gate's own
//! ([`ownership`]), files that appear whole ([`atomic`]) and are opened only when regular
//! ([`safe_file`]), finding a program on a `PATH` ([`path_search`]), HTTP clients
//! ([`http_client`]) and child processes in their own process group, stopped TERM → grace → KILL
//! with their pipes drained ([`process`]), the sandbox around the pull request's processes
//! ([`sandbox`]), file modes and links ([`file_modes`]), the signals that end a run
//! ([`signals`]), whether the run is in CI ([`ci_env`]) and paths made absolute (`absolute`).

pub mod atomic;
pub mod ci_env;
pub mod file_modes;
pub mod harden;
pub mod http_client;
pub mod ownership;
pub mod path_search;
pub mod process;
pub mod procfs;
pub mod safe_file;
pub mod sandbox;
pub mod signals;
#[cfg(test)]
pub(crate) mod test_env;

/// `path` made absolute against the current folder, links left unresolved; as given when it is
/// absolute already or the current folder cannot be read.
pub(crate) fn absolute(path: &std::path::Path) -> std::path::PathBuf {
    if path.is_absolute() {
        return path.to_path_buf();
    }
    std::env::current_dir()
        .map(|cwd| cwd.join(path))
        .unwrap_or_else(|_| path.to_path_buf())
}
