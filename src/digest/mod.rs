//! Canonical definitions and their hashes: the bytes Python's
//! `json.dumps(d, sort_keys=True, separators=(",", ":"), ensure_ascii=False)` gives.
