//! A count-only `cl100k_base` byte-pair encoder over a vocabulary laid out at build time.
//!
//! The report's cost section needs how many tokens a text encodes to, never the tokens
//! themselves, and it is needed on every run, the unchanged ones included. `tiktoken-rs` builds
//! its encoder at run time (about 70 ms of CPU per process); here the ranks are three
//! `include_bytes!` tables written by `build.rs`, so nothing is loaded: a rank is found by a
//! binary search over the ranks ordered by their bytes.
//!
//! The encoding is `cl100k_base`'s: the text is cut into pieces by its pattern (see
//! [`PATTERN`]), a piece that is a whole token counts one, and
//! any other piece is merged pairwise from single bytes, always merging the adjacent pair whose
//! joined bytes have the lowest rank (the leftmost on a tie) until no adjacent pair joins to a
//! token. The unit tests hold it to `tiktoken-rs` 0.12.1's `encode_ordinary`, count for count.

use std::sync::OnceLock;

/// cl100k_base's pre-tokenizing pattern (contractions, letter runs with one leading
/// non-letter, up to three digits, punctuation runs, line breaks, other whitespace), written for
/// the `regex` crate: its possessive repetitions are plain ones here (in this pattern no
/// backtracking into them could ever lead to another match), and its one look-ahead,
/// `\s+(?!\S)` (a whitespace run, less its last character when a non-space follows), is the
/// `\s+` branch below with that last character given back by [`count`]. `tiktoken-rs` runs the
/// original through `fancy-regex`'s backtracking engine, several times slower; the unit tests
/// hold the two to the same pieces' counts.
const PATTERN: &str = concat!(
    r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+$|\s*[\r\n]|\s+|\s"
);

static BYTES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_bytes.bin"));
static OFFSETS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_offsets.bin"));
static BY_BYTES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_by_bytes.bin"));

fn u32_at(table: &[u8], index: usize) -> u32 {
    let at = index * 4;
    u32::from_le_bytes([table[at], table[at + 1], table[at + 2], table[at + 3]])
}

/// The bytes of one rank.
fn token(rank: u32) -> &'static [u8] {
    let start = u32_at(OFFSETS, rank as usize) as usize;
    let end = u32_at(OFFSETS, rank as usize + 1) as usize;
    &BYTES[start..end]
}

/// The rank of `bytes` when they are one token.
fn rank_of(bytes: &[u8]) -> Option<u32> {
    let count = BY_BYTES.len() / 4;
    let (mut low, mut high) = (0usize, count);
    while low < high {
        let middle = low + (high - low) / 2;
        let rank = u32_at(BY_BYTES, middle);
        match token(rank).cmp(bytes) {
            std::cmp::Ordering::Less => low = middle + 1,
            std::cmp::Ordering::Greater => high = middle,
            std::cmp::Ordering::Equal => return Some(rank),
        }
    }
    None
}

/// The compiled pattern, once per process.
fn pattern() -> &'static regex::Regex {
    static PATTERN_REGEX: OnceLock<regex::Regex> = OnceLock::new();
    PATTERN_REGEX
        .get_or_init(|| regex::Regex::new(PATTERN).expect("cl100k_base's pattern compiles"))
}

/// How many tokens one piece merges into.
fn piece_tokens(piece: &[u8]) -> u64 {
    if piece.len() <= 1 || rank_of(piece).is_some() {
        return piece.len().min(1) as u64;
    }
    // `parts[i]` is where part i starts, with the piece's end last; `pair[i]` is the rank of
    // part i joined with part i + 1, when that join is a token.
    let mut parts: Vec<usize> = (0..=piece.len()).collect();
    let joined = |parts: &[usize], i: usize| -> Option<u32> {
        (i + 2 < parts.len())
            .then(|| rank_of(&piece[parts[i]..parts[i + 2]]))
            .flatten()
    };
    let mut pair: Vec<Option<u32>> = (0..parts.len() - 1).map(|i| joined(&parts, i)).collect();
    loop {
        let mut lowest: Option<(u32, usize)> = None;
        for (i, rank) in pair.iter().enumerate() {
            if let Some(rank) = *rank {
                if lowest.is_none_or(|(best, _)| rank < best) {
                    lowest = Some((rank, i));
                }
            }
        }
        let Some((_, i)) = lowest else {
            break;
        };
        parts.remove(i + 1);
        pair.remove(i + 1);
        pair[i] = joined(&parts, i);
        if i > 0 {
            pair[i - 1] = joined(&parts, i - 1);
        }
    }
    (parts.len() - 1) as u64
}

/// The number of tokens `text` encodes to under cl100k_base, without special tokens.
pub(crate) fn count(text: &str) -> u64 {
    let mut total = 0;
    let mut at = 0;
    while let Some(found) = pattern().find_at(text, at) {
        let piece = found.as_str();
        let mut end = found.end();
        // Only the `\s+` branch yields a run of two or more whitespace characters that neither
        // reaches the end nor ends in a line break; the original's look-ahead leaves its last
        // character to start the next piece (which then takes it as its leading space).
        if end < text.len()
            && !piece.ends_with(['\r', '\n'])
            && piece.chars().all(char::is_whitespace)
        {
            let mut chars = piece.chars();
            if let (Some(last), Some(_)) = (chars.next_back(), chars.next()) {
                // Two characters or more: the last goes to the next piece.
                end -= last.len_utf8();
            }
        }
        total += piece_tokens(&text.as_bytes()[found.start()..end]);
        at = end;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference() -> &'static tiktoken_rs::CoreBPE {
        static BPE: OnceLock<tiktoken_rs::CoreBPE> = OnceLock::new();
        BPE.get_or_init(|| tiktoken_rs::cl100k_base().expect("reference loads"))
    }

    fn assert_same_count(text: &str) {
        let expected = reference().encode_ordinary(text).len() as u64;
        assert_eq!(count(text), expected, "token count of {text:?}");
    }

    #[test]
    fn every_rank_is_found_by_its_own_bytes() {
        for rank in 0..(OFFSETS.len() / 4 - 1) as u32 {
            assert_eq!(rank_of(token(rank)), Some(rank), "rank {rank}");
        }
    }

    #[test]
    fn counts_what_tiktoken_counts_on_hard_texts() {
        let texts = [
            "",
            " ",
            "a",
            "Hello, world!",
            "I'm sure they'll've DONE it, y'all",
            "1234567890 12 3.14159 -42 0x1F",
            "  leading and trailing spaces   ",
            "line one\nline two\r\n\r\nline four\n\n\n",
            "tabs\tand\u{a0}no-break\u{2003}spaces",
            "naïve café — “quotes” and ‘apostrophes’ …",
            "日本語のテキストと中文文本，还有한국어",
            "emoji 🎉🚀 and a family 👨‍👩‍👧 and flags 🇩🇪",
            "Ελληνικά, русский текст, עברית, العربية",
            "snake_case camelCase PascalCase kebab-case SCREAMING_CASE",
            "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}}}",
            "https://example.com/a/b?c=d&e=f#g user@example.org /usr/local/bin",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "supercalifragilisticexpialidocious antidisestablishmentarianism",
            "!!!???...;;;:::---___===+++***&&&%%%$$$###@@@",
            "\u{0}\u{1}\u{7f} control \u{200b}zero\u{200d}width",
            "Ǆ ǅ ǆ ﬁ ﬂ ℌ ℍ Ⅻ ½ ² ٣ ໓",
        ];
        for text in texts {
            assert_same_count(text);
        }
    }

    #[test]
    fn counts_what_tiktoken_counts_on_the_repository_listings() {
        // Every string in every JSON fixture: real servers' descriptions and schemas, the
        // careless and careful examples, generated listings.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = vec![root.join("tests/fixtures"), root.join("examples")];
        let mut strings = 0;
        while let Some(path) = files.pop() {
            if path.is_dir() {
                for entry in std::fs::read_dir(&path).expect("fixture folder reads") {
                    files.push(entry.expect("entry").path());
                }
                continue;
            }
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            assert_same_count(&text);
            if let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) {
                let mut values = vec![&value];
                while let Some(value) = values.pop() {
                    match value {
                        serde_json::Value::String(s) => {
                            assert_same_count(s);
                            strings += 1;
                        }
                        serde_json::Value::Array(a) => values.extend(a),
                        serde_json::Value::Object(o) => values.extend(o.values()),
                        _ => {}
                    }
                }
            }
        }
        assert!(strings > 1_000, "only {strings} strings were compared");
    }

    #[test]
    fn counts_what_tiktoken_counts_on_random_mixtures() {
        // Seeded: the same 6,000 texts each run, drawn from the classes the pattern tells apart.
        let alphabet: Vec<char> =
            "aZé ß\n\r\t 0123456789'’.,;:!?-_/(){}[]\"#@ 日本語ñ🎉\u{a0}\u{2003}\u{3000}\u{2028}\u{b}\u{c}\u{85}ÅΩж   "
                .chars()
                .collect();
        let mut rng = fastrand::Rng::with_seed(0x7d95);
        for _ in 0..6_000 {
            let len = rng.usize(0..60);
            let text: String = (0..len)
                .map(|_| alphabet[rng.usize(..alphabet.len())])
                .collect();
            assert_same_count(&text);
        }
    }

    #[test]
    fn a_long_run_without_a_token_boundary_counts_what_tiktoken_counts() {
        // Pieces of 100 bytes or more take tiktoken's other merging routine.
        let long = "xq".repeat(300);
        assert_same_count(&long);
        let digits_and_letters: String = (0..500)
            .map(|i| if i % 7 == 0 { 'Z' } else { 'k' })
            .collect();
        assert_same_count(&digits_and_letters);
    }
}
