//! Writes the `cl100k_base` vocabulary in a form the token counter reads without parsing.
//!
//! The ranks come from `tiktoken-rs` (its embedded copy of OpenAI's `cl100k_base.tiktoken`),
//! decoded here once per build instead of at every run: loading that crate's encoder (base64
//! text, two hash maps, a sorted copy) cost the gate about 70 ms of CPU on each run, which on
//! a two-core runner competes with the two servers an unchanged pull request starts. Three
//! files go to `OUT_DIR` (all integers little-endian `u32`):
//! - `cl100k_bytes.bin`: every token's bytes, in rank order, back to back;
//! - `cl100k_offsets.bin`: where each rank's bytes start, plus the end (ranks + 1 entries);
//! - `cl100k_by_bytes.bin`: the ranks ordered by their bytes, for a binary search.
#![allow(clippy::print_stdout)]

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let bpe = tiktoken_rs::cl100k_base().expect("tiktoken-rs's cl100k_base loads");
    // The ordinary ranks are 0..100,256 without a gap; the special tokens above them are never
    // produced by ordinary encoding and are left out.
    let tokens: Vec<Vec<u8>> = (0..100_256u32)
        .map(|rank| {
            bpe.decode_bytes(&[rank])
                .unwrap_or_else(|_| panic!("cl100k_base has no rank {rank}"))
        })
        .collect();
    let mut bytes = Vec::new();
    let mut offsets = Vec::with_capacity((tokens.len() + 1) * 4);
    for token in &tokens {
        offsets.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        bytes.extend_from_slice(token);
    }
    offsets.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    let mut order: Vec<u32> = (0..tokens.len() as u32).collect();
    order.sort_by(|a, b| tokens[*a as usize].cmp(&tokens[*b as usize]));
    let by_bytes: Vec<u8> = order.iter().flat_map(|r| r.to_le_bytes()).collect();
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("cl100k_bytes.bin"), bytes).expect("write cl100k_bytes.bin");
    std::fs::write(out.join("cl100k_offsets.bin"), offsets).expect("write cl100k_offsets.bin");
    std::fs::write(out.join("cl100k_by_bytes.bin"), by_bytes).expect("write cl100k_by_bytes.bin");
}
