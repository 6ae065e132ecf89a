//! File modes and links, where Unix and other systems differ: callers state what they need
//! (an executable hook, a private folder) and this module does what the system allows.

use std::fs;
use std::path::Path;

/// Gives the owner full access to every folder under `path` (a worktree may hold read-only
/// folders), so that it can be removed.
pub fn make_tree_writable(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let Ok(meta) = fs::symlink_metadata(path) else {
            return;
        };
        if !meta.is_dir() {
            return;
        }
        let mut permissions = meta.permissions();
        permissions.set_mode(permissions.mode() | 0o700);
        let _ = fs::set_permissions(path, permissions);
        if let Ok(entries) = fs::read_dir(path) {
            for entry in entries.flatten() {
                make_tree_writable(&entry.path());
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = path;
    }
}

/// Sets the executable bits of a file the gate wrote (the pre-push hook: `rwxr-xr-x`).
pub fn make_executable(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(0o755))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(())
    }
}

/// Makes a report file readable by everyone (`rw-r--r--`), as a file written in place would be;
/// a temporary file starts owner-only. Best effort: the report stands either way.
pub fn make_world_readable(file: &fs::File) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = file.set_permissions(fs::Permissions::from_mode(0o644));
    }
    #[cfg(not(unix))]
    {
        let _ = file;
    }
}

/// A builder of folders (and their parents) only the owner may enter (`rwx------`).
pub fn private_dir_builder() -> fs::DirBuilder {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder
}

/// Whether a regular file may be executed by someone; true where the system has no such bit.
pub fn has_exec_bit(meta: &fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        true
    }
}

/// A symbolic link at `link` pointing to the file `target`.
#[cfg(unix)]
pub fn symlink_file(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

/// A symbolic link at `link` pointing to the file `target`.
#[cfg(windows)]
pub fn symlink_file(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::windows::fs::symlink_file(target, link)
}

/// What a folder entry that is not a regular file is (a FIFO, a socket, a device, a link, a
/// folder), for a refusal that names it.
pub fn kind_name(kind: &fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "FIFO (named pipe)";
        }
        if kind.is_socket() {
            return "socket";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "device";
        }
    }
    if kind.is_symlink() {
        "symbolic link"
    } else if kind.is_dir() {
        "folder"
    } else {
        "special file"
    }
}
