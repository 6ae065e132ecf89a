mod loopback;
mod spec;
