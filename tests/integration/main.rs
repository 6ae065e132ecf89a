mod http_judges;
mod http_stub;
