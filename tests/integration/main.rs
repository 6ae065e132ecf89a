mod launch;
mod revision;
mod support;
