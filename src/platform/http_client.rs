//! The one way the engine builds an HTTP client: rustls with the ring provider, the tool's user
//! agent, and a proxy only where one can help.

use std::time::Duration;

/// Installs rustls' ring provider for the whole process. reqwest is built without a provider of
/// its own, so this must run before the first client is built; installing twice is harmless.
pub(crate) fn install_crypto_provider() {
    // An `Err` only means a provider is already installed, which is all we need.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A client builder with the crypto provider installed, the user agent set and an overall
/// `timeout` per request. Callers add what is theirs (redirect policy, connect timeout).
pub fn builder(timeout: Duration) -> reqwest::ClientBuilder {
    install_crypto_provider();
    reqwest::Client::builder()
        .user_agent(concat!("tdqs-gate/", env!("CARGO_PKG_VERSION")))
        .timeout(timeout)
}
