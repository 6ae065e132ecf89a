//! Keeps secrets out of everything the gate writes.
//!
//! Any value registered here (the judge token, API keys, values of environment variables the user
//! marks as secret) is replaced by `[REDACTED]` in error messages, log lines and reports. Values
//! shorter than [`MIN_SECRET_LEN`] are not registered: replacing them would garble ordinary text
//! and they are not credentials.

use std::sync::{Mutex, OnceLock};

/// Secrets of fewer characters than this are not redacted.
pub const MIN_SECRET_LEN: usize = 8;
pub const MASK: &str = "[REDACTED]";

#[derive(Debug, Default, Clone)]
pub struct Redactor {
    secrets: Vec<String>,
}

impl Redactor {
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a secret; short or empty values are ignored.
    pub fn add(&mut self, secret: &str) {
        let secret = secret.trim();
        if secret.chars().count() >= MIN_SECRET_LEN && !self.secrets.iter().any(|s| s == secret) {
            self.secrets.push(secret.to_string());
            // Longest first, so a secret that contains another is masked whole.
            self.secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        }
    }

    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for secret in &self.secrets {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), MASK);
            }
        }
        out
    }

    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }
}

fn global() -> &'static Mutex<Redactor> {
    static GLOBAL: OnceLock<Mutex<Redactor>> = OnceLock::new();
    GLOBAL.get_or_init(|| Mutex::new(Redactor::new()))
}

/// Registers a secret for the whole process (every later [`redact`] call masks it).
pub fn register_secret(secret: &str) {
    global()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .add(secret);
}

/// Masks every registered secret in `text`.
pub fn redact(text: &str) -> String {
    global()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .redact(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_registered_secrets_and_ignores_short_ones() {
        let mut r = Redactor::new();
        r.add("sk-ant-oat01-abcdefgh");
        r.add("short");
        assert_eq!(
            r.redact("token sk-ant-oat01-abcdefgh and short"),
            "token [REDACTED] and short"
        );
    }

    #[test]
    fn longer_secret_containing_a_shorter_one_is_masked_whole() {
        let mut r = Redactor::new();
        r.add("abcdefgh");
        r.add("abcdefgh-ijklmnop");
        assert_eq!(r.redact("x abcdefgh-ijklmnop y"), "x [REDACTED] y");
    }
}
