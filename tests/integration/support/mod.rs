//! Helpers shared by the integration test modules.
// Each test module uses a different subset of the helpers.
#![allow(dead_code)]

pub mod gitrepo;
