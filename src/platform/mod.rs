//! What the engine asks of the operating system, written once: files that appear whole
//! ([`atomic`]), finding a program on a `PATH` ([`path_search`]) and HTTP clients
//! ([`http_client`]).

pub mod atomic;
pub mod http_client;
pub mod path_search;
pub mod safe_file;
