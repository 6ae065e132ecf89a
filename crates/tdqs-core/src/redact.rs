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

    /// For text whose beginning was cut away (the tail of a long output): masks the end part of
    /// a secret (at least [`MIN_CUT_PART`] bytes) that the text starts with, which
    /// [`Redactor::redact`] cannot recognise since the whole value is not there. Characters
    /// replaced because the cut split them are skipped first. Then masks whole secrets.
    pub fn redact_cut_start(&self, text: &str) -> String {
        let start = text.len() - text.trim_start_matches('\u{fffd}').len();
        let body = &text[start..];
        let mut longest = 0;
        for secret in &self.secrets {
            for (i, _) in secret.char_indices().skip(1) {
                let part = &secret[i..];
                if part.len() >= MIN_CUT_PART && part.len() > longest && body.starts_with(part) {
                    longest = part.len();
                }
            }
        }
        if longest == 0 {
            return self.redact(text);
        }
        format!("{MASK}{}", self.redact(&body[longest..]))
    }
}

/// The shortest end part of a secret that [`Redactor::redact_cut_start`] masks.
pub const MIN_CUT_PART: usize = 4;

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

/// [`Redactor::redact_cut_start`] with every registered secret.
pub fn redact_cut_start(text: &str) -> String {
    global()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .redact_cut_start(text)
}

/// Masks every registered secret in `text`.
pub fn redact(text: &str) -> String {
    global()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .redact(text)
}

/// Text for a terminal: escape sequences removed, then every registered secret masked, then any
/// other control character shown as an escape (`\x07`, `\r`), newlines and tabs kept.
///
/// The order matters: a secret printed with a colour code inside it (`ghp_ab\x1b[31mcd…`) shows
/// whole on a terminal, so the sequence goes first and the secret is then masked whole; and a
/// server's text must not move the cursor, retitle the window or hide what follows.
pub fn for_terminal(text: &str) -> String {
    escape_controls(&redact(&strip_escape_sequences(text)))
}

/// `text` without terminal escape sequences: CSI (`ESC [ … final`), OSC and the other string
/// sequences (`ESC ] … BEL` or `ESC \\`), two-character `ESC x`, and the 8-bit CSI `\u{9b}`.
pub fn strip_escape_sequences(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                Some('[') => skip_csi(&mut chars),
                Some(']' | 'P' | 'X' | '^' | '_') => skip_string(&mut chars),
                // A two-character sequence (or a lone ESC at the end).
                _ => {}
            },
            '\u{9b}' => skip_csi(&mut chars),
            c => out.push(c),
        }
    }
    out
}

fn skip_csi(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    // Parameters and intermediates, then one final byte in @..~.
    for c in chars.by_ref() {
        if ('@'..='~').contains(&c) {
            return;
        }
    }
}

fn skip_string(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(c) = chars.next() {
        match c {
            '\u{7}' | '\u{9c}' => return,
            '\u{1b}' if chars.peek() == Some(&'\\') => {
                chars.next();
                return;
            }
            _ => {}
        }
    }
}

/// Control characters other than newline and tab, shown as escapes.
pub fn escape_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Where a name that may carry a credential comes from. The rule of [`is_credential_name`] is
/// the same for every context, with two differences named there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameContext {
    /// A variable of the gate's own environment; the values of the matching ones are masked in
    /// everything the gate writes.
    GateEnv,
    /// A variable handed to a server or setup command (`[server] env`, a manifest's `env`, a
    /// `${VAR}` reference, the "reproduce with" line).
    ServerEnv,
    /// An option (`--api-key`) or a `NAME=` word typed into `--command`.
    CommandOption,
    /// An HTTP header name, or the name of a URL query parameter.
    Header,
}

/// Exact names of credentials the gate may hold (CI tokens, judge keys, cloud keys); masked in
/// every context, exceptions included.
const KNOWN_CREDENTIALS: [&str; 12] = [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "OPENAI_API_KEY",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "NPM_TOKEN",
];

/// Text that makes a name a credential's wherever it appears in it (`MY_TOKEN`, `DBPASSWORD`,
/// `X-Auth-Key`, `--access-key`). Checked after `-` became `_`.
const CREDENTIAL_PARTS: [&str; 12] = [
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "APIKEY",
    "API_KEY",
    "ACCESS_KEY",
    "PRIVATE_KEY",
    "CREDENTIAL",
    "COOKIE",
    "AUTH",
];

/// Words (between `_` or `-`) that make a name a credential's: too short or too common to match
/// inside other words (`KEY_ID`, `GH_PAT`, `SIGNING_PRIVATE_PEM`, `SESSION`).
const CREDENTIAL_WORDS: [&str; 4] = ["KEY", "PAT", "PRIVATE", "SESSION"];

/// Name endings whose values are locations or identifiers, not secrets (`SSH_AUTH_SOCK`,
/// `GPG_KEY_FILE`, `TOKEN_URL`, `CLIENT_ID`): in the gate's own environment only, masking them
/// would garble paths in every message.
const LOCATION_SUFFIXES: [&str; 6] = ["_SOCK", "_FILE", "_PATH", "_DIR", "_URL", "_ID"];

/// Whether `name` (a variable, option, header or query parameter name) carries a credential.
///
/// The rule, the same in every [`NameContext`], case-insensitive, with `-` read as `_`: a name
/// is a credential's when it is one of the known credential names; or contains `TOKEN`,
/// `SECRET`, `PASSWORD`, `PASSWD`, `PASSPHRASE`, `APIKEY`, `API_KEY`, `ACCESS_KEY`,
/// `PRIVATE_KEY`, `CREDENTIAL`, `COOKIE` or `AUTH`; or ends in `KEY`; or has one of the words
/// `KEY`, `PAT`, `PRIVATE`, `SESSION`. Two differences by context:
/// - [`NameContext::Header`]: `KEY` anywhere counts (header names follow no word convention).
/// - [`NameContext::GateEnv`]: a name ending in `_SOCK`, `_FILE`, `_PATH`, `_DIR`, `_URL` or
///   `_ID` is a location or identifier and does not count, unless it is a known credential name
///   (`AWS_ACCESS_KEY_ID`). The gate masks the *values* of its own credential variables in all
///   it writes, and a path masked there would garble every message; elsewhere the value of such
///   a name only reaches the child, so there it is masked.
///
/// This is the union of the rules each caller used before, so every caller masks at least what
/// it masked before (see docs/security.md).
pub fn is_credential_name(name: &str, context: NameContext) -> bool {
    let upper = name.to_ascii_uppercase();
    if KNOWN_CREDENTIALS.contains(&upper.as_str()) {
        return true;
    }
    // Checked on the name as written: `X_TOKEN-FILE` does not end in `_FILE`.
    if context == NameContext::GateEnv && LOCATION_SUFFIXES.iter().any(|s| upper.ends_with(s)) {
        return false;
    }
    let words = upper.replace('-', "_");
    CREDENTIAL_PARTS.iter().any(|part| words.contains(part))
        || words.ends_with("KEY")
        || words
            .split('_')
            .any(|word| CREDENTIAL_WORDS.contains(&word))
        || (context == NameContext::Header && words.contains("KEY"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_masks_the_end_of_a_cut_secret() {
        let mut r = Redactor::new();
        r.add("svc-r2-partial-0123456789abcdef");
        r.add("-----BEGIN KEY-----\nAAAABBBBCCCC\nDDDDEEEEFFFF\n-----END KEY-----");
        // A long line cut two characters into the secret.
        assert_eq!(
            r.redact_cut_start("c-r2-partial-0123456789abcdefaaaa"),
            "[REDACTED]aaaa"
        );
        // A character split by the cut, then the rest of the secret.
        assert_eq!(r.redact_cut_start("\u{fffd}cdefxyz"), "[REDACTED]xyz");
        // A secret of several lines whose first lines were cut away.
        assert_eq!(
            r.redact_cut_start("DDDDEEEEFFFF\n-----END KEY-----\nnext"),
            "[REDACTED]\nnext"
        );
        // Ordinary text, too short a part, and whole secrets further on.
        assert_eq!(r.redact_cut_start("hello"), "hello");
        assert_eq!(r.redact_cut_start("def and more"), "def and more");
        assert_eq!(
            r.redact_cut_start("x svc-r2-partial-0123456789abcdef"),
            "x [REDACTED]"
        );
    }

    use NameContext::{CommandOption, GateEnv, Header, ServerEnv};

    /// Name, then masked? in GateEnv, ServerEnv, CommandOption, Header.
    const TABLE: &[(&str, [bool; 4])] = &[
        // Known credentials: masked everywhere, location suffix or not.
        ("GITHUB_TOKEN", [true, true, true, true]),
        ("AWS_SECRET_ACCESS_KEY", [true, true, true, true]),
        ("AWS_ACCESS_KEY_ID", [true, true, true, true]),
        ("ANTHROPIC_API_KEY", [true, true, true, true]),
        // Parts anywhere, ending in KEY, credential words.
        ("DB_PASSWORD", [true, true, true, true]),
        ("MYSQL_ROOT_PASSWD", [true, true, true, true]),
        ("STRIPE_SECRET", [true, true, true, true]),
        ("HF_APITOKEN", [true, true, true, true]),
        ("npm_config__authToken", [true, true, true, true]),
        ("SIGNING_PRIVATE_PEM", [true, true, true, true]),
        ("GH_PAT", [true, true, true, true]),
        ("SESSION", [true, true, true, true]),
        ("MONKEY", [true, true, true, true]),
        ("AUTH", [true, true, true, true]),
        ("access-token", [true, true, true, true]),
        ("--api-key", [true, true, true, true]),
        ("--key-file", [true, true, true, true]),
        // Headers and query parameters.
        ("Authorization", [true, true, true, true]),
        ("Proxy-Authorization", [true, true, true, true]),
        ("Cookie", [true, true, true, true]),
        ("X-Api-Key", [true, true, true, true]),
        ("api_key", [true, true, true, true]),
        ("X-Keyid", [false, false, false, true]),
        ("KEYBOARD_LAYOUT", [false, false, false, true]),
        // Location and identifier suffixes: only the gate's own environment leaves them alone.
        ("SSH_AUTH_SOCK", [false, true, true, true]),
        ("SESSION_ID", [false, true, true, true]),
        ("CLIENT_ID", [false, false, false, false]),
        ("PASSWORD_FILE", [false, true, true, true]),
        ("API_URL", [false, false, false, false]),
        ("TOKEN_URL", [false, true, true, true]),
        ("GPG_KEY_FILE", [false, true, true, true]),
        (
            "GOOGLE_APPLICATION_CREDENTIALS_FILE",
            [false, true, true, true],
        ),
        ("X_TOKEN-FILE", [true, true, true, true]),
        // Ordinary names.
        ("PATH", [false, false, false, false]),
        ("HOME", [false, false, false, false]),
        ("PATHEXT", [false, false, false, false]),
        ("GITHUB_SHA", [false, false, false, false]),
        ("RUNNER_TEMP", [false, false, false, false]),
        ("XDG_CACHE_HOME", [false, false, false, false]),
        ("--port", [false, false, false, false]),
        ("Content-Type", [false, false, false, false]),
        ("", [false, false, false, false]),
    ];

    #[test]
    fn one_credential_rule_table() {
        for (name, expected) in TABLE {
            for (context, masked) in [GateEnv, ServerEnv, CommandOption, Header]
                .into_iter()
                .zip(expected)
            {
                assert_eq!(
                    is_credential_name(name, context),
                    *masked,
                    "{name} in {context:?}"
                );
            }
        }
    }

    // The four rules the merged one replaced, as they were, to prove it masks at least as much
    // in each caller's context.
    fn old_gate_env(name: &str) -> bool {
        const WORDS: [&str; 13] = [
            "TOKEN",
            "SECRET",
            "SECRETS",
            "PASSWORD",
            "PASSWD",
            "PASSPHRASE",
            "KEY",
            "APIKEY",
            "CREDENTIAL",
            "CREDENTIALS",
            "PAT",
            "PRIVATE",
            "COOKIE",
        ];
        const SUFFIXES: [&str; 6] = ["_SOCK", "_FILE", "_PATH", "_DIR", "_URL", "_ID"];
        let upper = name.to_ascii_uppercase();
        if KNOWN_CREDENTIALS.contains(&upper.as_str()) {
            return true;
        }
        if SUFFIXES.iter().any(|s| upper.ends_with(s)) {
            return false;
        }
        upper.contains("PASSWORD")
            || upper.contains("SECRET")
            || upper.contains("TOKEN")
            || upper.ends_with("KEY")
            || upper.split('_').any(|word| WORDS.contains(&word))
    }

    fn old_command_option(name: &str) -> bool {
        let name = name.trim_start_matches('-').to_ascii_lowercase();
        const PARTS: [&str; 12] = [
            "token",
            "secret",
            "password",
            "passwd",
            "apikey",
            "api_key",
            "api-key",
            "credential",
            "auth",
            "private_key",
            "private-key",
            "cookie",
        ];
        !name.is_empty()
            && (PARTS.iter().any(|p| name.contains(p))
                || name.ends_with("key")
                || name.contains("access_key")
                || name.contains("access-key"))
    }

    fn old_server_env(name: &str) -> bool {
        const WORDS: [&str; 14] = [
            "TOKEN",
            "SECRET",
            "PASSWORD",
            "PASSWD",
            "PASSPHRASE",
            "KEY",
            "APIKEY",
            "CREDENTIAL",
            "CREDENTIALS",
            "AUTH",
            "COOKIE",
            "SESSION",
            "PAT",
            "PRIVATE",
        ];
        name.to_ascii_uppercase()
            .split('_')
            .any(|word| WORDS.contains(&word))
    }

    fn old_header(name: &str) -> bool {
        let name = name.to_ascii_lowercase();
        name == "authorization"
            || name == "cookie"
            || name == "proxy-authorization"
            || ["key", "token", "secret", "auth", "password"]
                .iter()
                .any(|part| name.contains(part))
    }

    #[test]
    fn every_caller_masks_at_least_what_it_masked_before() {
        // Every name of the table, in several spellings, plus names built from every part.
        let mut names: Vec<String> = TABLE.iter().map(|(n, _)| n.to_string()).collect();
        let pieces = [
            "TOKEN",
            "SECRET",
            "SECRETS",
            "PASSWORD",
            "PASSWD",
            "PASSPHRASE",
            "KEY",
            "APIKEY",
            "API",
            "ACCESS",
            "PRIVATE",
            "CREDENTIAL",
            "CREDENTIALS",
            "COOKIE",
            "AUTH",
            "SESSION",
            "PAT",
            "MONKEY",
            "KEYS",
            "ID",
            "URL",
            "FILE",
            "SOCK",
            "PATH",
            "DIR",
            "X",
            "MY",
            "AUTHORIZATION",
            "SSH",
            "CLIENT",
            "GITHUB",
        ];
        for a in pieces {
            for b in pieces {
                for sep in ["_", "-", ""] {
                    names.push(format!("{a}{sep}{b}"));
                    for c in ["ID", "FILE", "URL", "KEY", "X"] {
                        names.push(format!("{a}{sep}{b}_{c}"));
                    }
                }
            }
        }
        let spellings: Vec<String> = names
            .iter()
            .flat_map(|n| [n.clone(), n.to_ascii_lowercase(), format!("--{n}")])
            .collect();
        for name in &spellings {
            let name = name.as_str();
            let cases: [(bool, NameContext); 4] = [
                (old_gate_env(name), GateEnv),
                (old_server_env(name), ServerEnv),
                (old_command_option(name), CommandOption),
                (old_header(name), Header),
            ];
            for (old, context) in cases {
                assert!(
                    !old || is_credential_name(name, context),
                    "{name} was masked in {context:?} before and is not now"
                );
            }
        }
    }

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

    #[test]
    fn a_secret_split_by_a_colour_code_is_masked_and_controls_are_escaped() {
        register_secret("ghp_terminalSecret0123456789");
        let shown = for_terminal("token ghp_terminal\u{1b}[31mSecret0123456789\u{1b}[0m!\u{7}\r\u{1b}]0;title\u{7}end\u{9b}2Jx\n");
        assert_eq!(shown, "token [REDACTED]!\\x07\\rendx\n");
        assert_eq!(escape_controls("a\tb\u{0}"), "a\tb\\x00");
    }
}
