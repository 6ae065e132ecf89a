//! Reading files whose path an untrusted tree can shape (`tdqs-gate.toml`, the specification
//! cache): only regular files are read, a FIFO or device never blocks the gate, and a symbolic
//! link is refused where following it could read outside the repository.

use std::io::Read as _;
use std::path::Path;

/// Whether a symbolic link as the last path component is followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Links {
    Follow,
    Refuse,
}

/// Why a file was not read.
#[derive(Debug)]
pub(crate) enum ReadError {
    NotFound,
    /// A symbolic link where [`Links::Refuse`] was asked.
    Symlink,
    /// A FIFO, socket, device or folder.
    NotRegular(&'static str),
    Io(std::io::Error),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::NotFound => f.write_str("it does not exist"),
            ReadError::Symlink => f.write_str("it is a symbolic link, which is not followed"),
            ReadError::NotRegular(kind) => write!(f, "it is a {kind}, not a regular file"),
            ReadError::Io(e) => write!(f, "{e}"),
        }
    }
}

fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    let t = meta.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "FIFO (named pipe)";
        }
        if t.is_socket() {
            return "socket";
        }
        if t.is_char_device() || t.is_block_device() {
            return "device";
        }
    }
    if t.is_dir() {
        "folder"
    } else {
        "special file"
    }
}

/// Reads the regular file at `path`, at most `limit` bytes (more is an error), opened as
/// [`open_regular`] opens it.
pub(crate) fn read_regular(path: &Path, links: Links, limit: u64) -> Result<Vec<u8>, ReadError> {
    let file = open_regular(path, links)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::Io(std::io::Error::other(format!(
            "it is larger than {limit} bytes"
        ))));
    }
    Ok(bytes)
}

/// Opens the regular file at `path` for reading, for a caller that streams it. Opening never
/// blocks: the file is opened non-blocking and its type checked on the open descriptor, so a
/// FIFO swapped in between a check and the open is still refused.
pub(crate) fn open_regular(path: &Path, links: Links) -> Result<std::fs::File, ReadError> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let mut flags = libc::O_NONBLOCK | libc::O_NOCTTY;
        if links == Links::Refuse {
            flags |= libc::O_NOFOLLOW;
        }
        options.custom_flags(flags);
    }
    #[cfg(not(unix))]
    if links == Links::Refuse {
        if let Ok(meta) = std::fs::symlink_metadata(path) {
            if meta.file_type().is_symlink() {
                return Err(ReadError::Symlink);
            }
        }
    }
    let file = match options.open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(ReadError::NotFound),
        Err(e) => {
            // O_NOFOLLOW on a link fails with ELOOP; say so plainly.
            if links == Links::Refuse
                && std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
            {
                return Err(ReadError::Symlink);
            }
            return Err(ReadError::Io(e));
        }
    };
    let meta = file.metadata().map_err(ReadError::Io)?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular(kind_of(&meta)));
    }
    Ok(file)
}

/// The first symbolic link among the components of `path` below `root` (`path` itself
/// included), if any. Components that do not exist end the walk: nothing below them can be a
/// link yet. A `path` outside `root` is returned as is (refused like a link). Used for paths an
/// untrusted tree names (`[eval] cases` and `cache`): a link there could point a read or a
/// write anywhere.
pub(crate) fn first_link_below(root: &Path, path: &Path) -> Option<std::path::PathBuf> {
    let Ok(rest) = path.strip_prefix(root) else {
        return Some(path.to_path_buf());
    };
    let mut at = root.to_path_buf();
    for component in rest.components() {
        match component {
            std::path::Component::Normal(name) => at.push(name),
            std::path::Component::CurDir => continue,
            _ => return Some(path.to_path_buf()),
        }
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => return Some(at),
            Ok(_) => {}
            Err(_) => return None,
        }
    }
    None
}

/// Whether `path` itself (not what it points to) is a symbolic link.
pub fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_is_refused_at_once_and_a_link_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(matches!(
            read_regular(&fifo, Links::Follow, 100),
            Err(ReadError::NotRegular(_))
        ));
        let file = dir.path().join("file");
        std::fs::write(&file, "text").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(matches!(
            read_regular(&link, Links::Refuse, 100),
            Err(ReadError::Symlink)
        ));
        assert_eq!(read_regular(&link, Links::Follow, 100).unwrap(), b"text");
        assert!(read_regular(&file, Links::Follow, 2).is_err());
        assert!(matches!(
            read_regular(&dir.path().join("none"), Links::Follow, 2),
            Err(ReadError::NotFound)
        ));
    }
}
