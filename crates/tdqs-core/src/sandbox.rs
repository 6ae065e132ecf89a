//! What confined a side's server and setup commands while they were exported: recorded in the
//! export's source, so a report (and an export file carried from the step that ran the pull
//! request's code to the step that scores it) says whether that code ran in a sandbox.

use serde::{Deserialize, Serialize};

/// The mechanism that confined the processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxKind {
    /// bubblewrap (`bwrap`): own PID namespace and `/proc`, no capabilities, private HOME and
    /// `/tmp`, the side's tree the only writable folder of the user's.
    Bubblewrap,
    /// Nothing: the processes ran as the gate's user, with what that user can reach.
    None,
}

/// The sandbox a side was exported in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxRecord {
    pub kind: SandboxKind,
    /// The tool's version (`bubblewrap 0.8.0`), when one was used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Whether the server (not its setup commands, which always have it) could use the network.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_network: Option<bool>,
    /// Most processes at once inside the sandbox.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_processes: Option<u32>,
    /// Why there was none (`turned off by --sandbox off`, `bwrap is not installed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl SandboxRecord {
    /// One short phrase for a page: `bubblewrap (server network on, at most 256 processes)` or
    /// `none (turned off by --sandbox off)`.
    pub fn describe(&self) -> String {
        match self.kind {
            SandboxKind::Bubblewrap => {
                let mut details = Vec::new();
                if let Some(network) = self.server_network {
                    details.push(format!(
                        "server network {}",
                        if network { "on" } else { "off" }
                    ));
                }
                if let Some(n) = self.max_processes {
                    details.push(format!("at most {n} processes"));
                }
                // The version stays in the JSON: a page reads the same on every machine.
                if details.is_empty() {
                    "bubblewrap".to_string()
                } else {
                    format!("bubblewrap ({})", details.join(", "))
                }
            }
            SandboxKind::None => match &self.reason {
                Some(reason) => format!("none ({reason})"),
                None => "none".to_string(),
            },
        }
    }
}

/// One line naming each side's sandbox, for a report page: `bubblewrap 0.8.0 (…)` when both
/// agree, `base: …; head: …` otherwise, and `not recorded` for export files made without it.
pub fn describe_sides(base: Option<&SandboxRecord>, head: Option<&SandboxRecord>) -> String {
    let text = |r: Option<&SandboxRecord>| {
        r.map_or_else(|| "not recorded".to_string(), SandboxRecord::describe)
    };
    let (b, h) = (text(base), text(head));
    if b == h {
        b
    } else {
        format!("base: {b}; head: {h}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_describe_themselves_in_one_phrase() {
        let boxed = SandboxRecord {
            kind: SandboxKind::Bubblewrap,
            version: Some("bubblewrap 0.8.0".into()),
            server_network: Some(false),
            max_processes: Some(256),
            reason: None,
        };
        assert_eq!(
            boxed.describe(),
            "bubblewrap (server network off, at most 256 processes)"
        );
        let none = SandboxRecord {
            kind: SandboxKind::None,
            version: None,
            server_network: None,
            max_processes: None,
            reason: Some("turned off by --sandbox off".into()),
        };
        assert_eq!(none.describe(), "none (turned off by --sandbox off)");
        assert_eq!(describe_sides(Some(&boxed), Some(&boxed)), boxed.describe());
        assert_eq!(
            describe_sides(None, Some(&none)),
            "base: not recorded; head: none (turned off by --sandbox off)"
        );
        let json = serde_json::to_value(&none).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"kind": "none", "reason": "turned off by --sandbox off"})
        );
    }
}
