
mod lint;
