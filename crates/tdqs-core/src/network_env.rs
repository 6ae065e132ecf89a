//! Host variables that only say how to reach the network: proxies and extra CA certificates.
//!
//! Every child the gate starts — the judge CLI, a server, a setup command — gets these from the
//! gate's environment when they are set: behind a corporate proxy or a TLS-inspecting gateway
//! nothing reaches a registry or an API without them. A proxy URL may carry credentials
//! (`http://user:password@proxy:3128`), so the values of the proxy variables are treated as
//! secrets: [`register_proxy_secrets`] masks them in every message, log line and report.

/// The variables, upper- and lower-case forms of the proxy ones included.
pub const NETWORK_ENV: &[&str] = &[
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
    "NODE_EXTRA_CA_CERTS",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
];

/// Whether `name` is one of the proxy URL variables (whose values may hold credentials).
pub(crate) fn is_proxy_variable(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with("_proxy") && lower != "no_proxy"
}

/// Registers the value of a proxy variable, and separately its `user:password` part, as
/// secrets, so that neither shows anywhere the gate writes text.
pub fn register_proxy_secrets(name: &str, value: &str) {
    if is_proxy_variable(name) {
        crate::redact::register_secret(value);
        if let Some(info) = userinfo(value) {
            crate::redact::register_secret(info);
        }
    }
}

/// The `user:password` part of a URL, if any.
pub fn userinfo(url: &str) -> Option<&str> {
    let start = url.find("://")? + 3;
    let authority_end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| start + i);
    let at = url[start..authority_end].rfind('@')?;
    Some(&url[start..start + at])
}

/// The URL without its `user:password@` part, for messages.
pub fn strip_userinfo(url: &str) -> String {
    match userinfo(url) {
        Some(info) => url.replacen(&format!("{info}@"), "", 1),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_variables_are_told_apart_from_the_rest() {
        assert!(is_proxy_variable("HTTPS_PROXY"));
        assert!(is_proxy_variable("all_proxy"));
        assert!(!is_proxy_variable("NO_PROXY"));
        assert!(!is_proxy_variable("no_proxy"));
        assert!(!is_proxy_variable("SSL_CERT_FILE"));
        for name in [
            "HTTP_PROXY",
            "http_proxy",
            "HTTPS_PROXY",
            "https_proxy",
            "NO_PROXY",
            "no_proxy",
        ] {
            assert!(NETWORK_ENV.contains(&name), "{name}");
        }
    }

    #[test]
    fn credentials_in_a_proxy_url_are_masked() {
        let url = "http://alice:s3cr3t-pass@proxy.corp:3128/";
        assert_eq!(userinfo(url), Some("alice:s3cr3t-pass"));
        assert_eq!(strip_userinfo(url), "http://proxy.corp:3128/");
        assert_eq!(userinfo("http://proxy.corp:3128/a@b"), None);
        register_proxy_secrets("https_proxy", url);
        let shown = crate::redact::redact(
            "proxy said alice:s3cr3t-pass and http://alice:s3cr3t-pass@proxy.corp:3128/",
        );
        assert!(!shown.contains("s3cr3t-pass"), "{shown}");
    }
}
