//! Outgoing HTTP clients: remote pruner backends, the runner's readiness probe, `doctor`'s health
//! checks.
//!
//! Owns what every client needs before it is built: rustls' crypto provider (ring), installed once
//! per process. It must never hold a client or make a request itself.

use std::sync::Once;

/// Installs ring as rustls' process-wide crypto provider, once; later calls do nothing. A
/// `reqwest` client builds its TLS configuration when it is built, even one that only ever asks
/// `http://` URLs, and panics without a provider: call this (or use [`builder`]) first.
pub fn install_tls_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // An error means a provider is installed already (by a program embedding the library):
        // theirs is kept.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// `reqwest::Client::builder()` once the TLS provider is installed.
pub fn builder() -> reqwest::ClientBuilder {
    install_tls_provider();
    reqwest::Client::builder()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_client_builds_and_the_provider_is_installed() {
        assert!(super::builder().build().is_ok());
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
    }
}
