//! Reading processes from Linux's `/proc`, once: which pids exist and what `stat` says of each.
//! Elsewhere there is no `/proc`, and every function finds nothing.

use std::path::PathBuf;

/// Every process id in `/proc`, with its folder there.
pub fn processes() -> Vec<(u32, PathBuf)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<u32>().ok()?;
            Some((pid, entry.path()))
        })
        .collect()
}

/// The kernel's flag for a process that is being torn down (`include/linux/sched.h`).
const PF_EXITING: u64 = 0x4;

/// The fields of `/proc/<pid>/stat` the gate reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    /// `R`, `S`, `Z` (zombie), `X` (dead), …
    pub state: String,
    pub ppid: u32,
    pub pgrp: i32,
    /// The kernel is already ending it (`PF_EXITING` in its flags): killed, not yet a zombie.
    pub exiting: bool,
}

impl Stat {
    /// Dead, merely not reaped yet.
    pub fn is_zombie(&self) -> bool {
        self.state == "Z" || self.state == "X"
    }
}

/// `/proc/<pid>/stat`, or `None` when the process is gone or the file does not parse.
pub fn stat(pid: u32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

/// `pid (comm) state ppid pgrp …`; `comm` may contain spaces and parentheses, so the fields
/// start after the last `)`.
fn parse_stat(text: &str) -> Option<Stat> {
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.to_string();
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    // session, tty_nr, tpgid, then flags.
    let flags: u64 = fields.nth(3).and_then(|f| f.parse().ok()).unwrap_or(0);
    Some(Stat {
        state,
        ppid,
        pgrp,
        exiting: flags & PF_EXITING != 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_name_with_parentheses_and_spaces_parses() {
        let stat = parse_stat("42 (my (odd) server) S 7 42 42 0 -1 4194560").unwrap();
        assert_eq!(
            stat,
            Stat {
                state: "S".into(),
                ppid: 7,
                pgrp: 42,
                exiting: false,
            }
        );
        assert!(!stat.is_zombie());
        assert!(parse_stat("garbage").is_none());
        // 4194564 = 0x400004: PF_EXITING set.
        let dying = parse_stat("43 (node) R 7 43 43 0 -1 4194564").unwrap();
        assert!(dying.exiting);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_is_listed_with_its_parent() {
        let me = std::process::id();
        assert!(processes().iter().any(|(pid, _)| *pid == me));
        let stat = stat(me).expect("own stat");
        assert_eq!(stat.ppid, std::os::unix::process::parent_id());
    }
}
