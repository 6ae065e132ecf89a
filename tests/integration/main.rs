mod claude_code;
mod http_judges;
mod http_stub;
mod loopback;
mod spec;
mod launch;
mod revision;
mod support;
