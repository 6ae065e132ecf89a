//! The canonical JSON form the public TDQS implementations hash: byte for byte what Python's
//! `json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)` writes for the
//! value `json.loads` reads from the same text.
//!
//! This is close to RFC 8785 (JCS) but not the same: Python keeps `1.0` as `1.0`, writes `1e+16`
//! where JCS writes `10000000000000000`, and escapes control characters in lowercase hex. The
//! registry's `inputHash` is computed over this form, so the gate's hashes are only comparable
//! with it when every byte agrees.
//!
//! The rules:
//! - object keys sorted by code point (Rust's byte order on UTF-8 is code-point order);
//! - no whitespace between tokens;
//! - strings escape `"` `\` `\n` `\r` `\t` `\b` `\f` with a backslash, every other character
//!   below U+0020 as `\u00xx` in lowercase hex, and write everything else (DEL, U+2028/U+2029,
//!   astral characters) as raw UTF-8;
//! - integers as integers, floats as Python's `repr(float)`: the shortest digits that read back
//!   to the same double, in scientific form (`1e+16`, `1.5e-05`) when the decimal exponent is
//!   below -4 or at least 16, otherwise positional with at least one fractional digit (`1.0`,
//!   `-0.0`, `0.0001`).
//!
//! Limits of the input model, not of this writer. The value comes from serde_json, whose numbers
//! are `u64`, `i64` or `f64`:
//! - an integer beyond the 64-bit range (below `-2^63` or above `2^64-1`) is read as a float, so
//!   this writes e.g. `1.8446744073709552e+19` where Python writes `18446744073709551616`;
//! - the integer text `-0` is read as the float `-0.0` and written `-0.0`, where Python writes
//!   `0` (JavaScript never emits `-0`, Python emits `-0.0` for the float, so this is the likelier
//!   reading of the value);
//! - a number too large for a double (`1e400`) fails to parse in serde_json, where Python reads
//!   infinity and writes `Infinity`;
//! - a string holding a lone UTF-16 surrogate (`"\ud800"`) fails to parse in serde_json; Python
//!   reads it but cannot encode the result as UTF-8 either, so no TDQS hash exists for it.
//!
//! Tool definitions of real servers stay far inside these limits.

use serde_json::{Map, Number, Value};

/// The canonical bytes of `value` (UTF-8).
pub(crate) fn to_canonical_bytes(value: &Value) -> Vec<u8> {
    to_canonical_string(value).into_bytes()
}

/// The canonical text of `value`.
pub fn to_canonical_string(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

/// `json.dumps(value, indent=2, ensure_ascii=False)`: the pretty form the TDQS prompts show
/// schemas in. Keys stay in the order received; scalars are written as in the canonical form.
pub(crate) fn to_python_pretty_string(value: &Value) -> String {
    let mut out = String::new();
    write_pretty(&mut out, value, 0);
    out
}

fn write_pretty(out: &mut String, value: &Value, depth: usize) {
    let newline_indent = |out: &mut String, depth: usize| {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("  ");
        }
    };
    match value {
        Value::Array(items) if !items.is_empty() => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                newline_indent(out, depth + 1);
                write_pretty(out, item, depth + 1);
            }
            newline_indent(out, depth);
            out.push(']');
        }
        Value::Object(map) if !map.is_empty() => {
            out.push('{');
            for (index, (key, item)) in map.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                newline_indent(out, depth + 1);
                write_string(out, key);
                out.push_str(": ");
                write_pretty(out, item, depth + 1);
            }
            newline_indent(out, depth);
            out.push('}');
        }
        // Scalars, `[]` and `{}` are the same in both forms.
        other => write_value(out, other),
    }
}

/// A JSON number as Python writes it.
pub(crate) fn python_number_text(number: &Number) -> String {
    let mut out = String::new();
    write_number(&mut out, number);
    out
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(number) => write_number(out, number),
        Value::String(text) => write_string(out, text),
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => write_object(out, map),
    }
}

fn write_object(out: &mut String, map: &Map<String, Value>) {
    // The map keeps the server's key order (`preserve_order`); the canonical form does not.
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    out.push('{');
    for (index, (key, item)) in entries.into_iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        write_string(out, key);
        out.push(':');
        write_value(out, item);
    }
    out.push('}');
}

fn write_number(out: &mut String, number: &Number) {
    if let Some(unsigned) = number.as_u64() {
        out.push_str(&unsigned.to_string());
    } else if let Some(signed) = number.as_i64() {
        out.push_str(&signed.to_string());
    } else if let Some(float) = number.as_f64() {
        out.push_str(&python_json_float(float));
    } else {
        // Only reachable with serde_json's `arbitrary_precision`, which keeps the number's text;
        // that text is already the integer or float as written.
        out.push_str(&number.to_string());
    }
}

/// Writes `text` as a JSON string the way Python's encoder does with `ensure_ascii=False`.
fn write_string(out: &mut String, text: &str) {
    out.push('"');
    let mut clean_from = 0;
    for (index, ch) in text.char_indices() {
        let escape: Option<&str> = match ch {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '\n' => Some("\\n"),
            '\r' => Some("\\r"),
            '\t' => Some("\\t"),
            '\u{08}' => Some("\\b"),
            '\u{0c}' => Some("\\f"),
            _ => None,
        };
        if escape.is_none() && ch >= '\u{20}' {
            continue;
        }
        out.push_str(&text[clean_from..index]);
        match escape {
            Some(sequence) => out.push_str(sequence),
            None => out.push_str(&format!("\\u{:04x}", ch as u32)),
        }
        clean_from = index + ch.len_utf8();
    }
    out.push_str(&text[clean_from..]);
    out.push('"');
}

/// A float as Python's JSON encoder writes it: `repr(float)` for finite values, `Infinity`,
/// `-Infinity` and `NaN` otherwise (serde_json values never hold the last three).
pub(crate) fn python_json_float(value: f64) -> String {
    if value.is_nan() {
        "NaN".to_string()
    } else if value.is_infinite() {
        if value > 0.0 {
            "Infinity".to_string()
        } else {
            "-Infinity".to_string()
        }
    } else {
        python_float_repr(value)
    }
}

/// Python's `repr(float)` of a finite double.
pub(crate) fn python_float_repr(value: f64) -> String {
    debug_assert!(value.is_finite());
    let (digits, exponent) = shortest_digits(value.abs());
    let sign = if value.is_sign_negative() { "-" } else { "" };

    // Python switches to scientific notation when the exponent is below -4 or at least 16
    // (`float_repr_style == 'short'`).
    if !(-4..16).contains(&exponent) {
        let (first, rest) = digits.split_at(1);
        let fraction = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let exponent_sign = if exponent < 0 { '-' } else { '+' };
        return format!(
            "{sign}{first}{fraction}e{exponent_sign}{:02}",
            exponent.abs()
        );
    }
    if exponent < 0 {
        let zeros = "0".repeat((-exponent - 1) as usize);
        return format!("{sign}0.{zeros}{digits}");
    }
    let integer_len = exponent as usize + 1;
    if digits.len() <= integer_len {
        let zeros = "0".repeat(integer_len - digits.len());
        format!("{sign}{digits}{zeros}.0")
    } else {
        let (integer, fraction) = digits.split_at(integer_len);
        format!("{sign}{integer}.{fraction}")
    }
}

/// The shortest significant digits that read back as `value` (non-negative, finite) and the
/// decimal exponent of the first one, choosing as Python does.
///
/// Both Rust's `{:e}` and Python's `repr` give the shortest digits, and among equally short
/// ones the nearest to the exact binary value. They differ only when two candidates are exactly
/// equally near (the double's exact value ends in a 5 right after the last shortest digit, as
/// 1059438285926254.25 does): Rust takes the upper one, Python the one with an even last digit.
/// That case is detected and redone here.
fn shortest_digits(value: f64) -> (String, i32) {
    let (digits, exponent) = split_scientific(&format!("{value:e}"));
    let length = digits.len();
    // One more digit than the shortest, correctly rounded from the exact value.
    let (longer, longer_exponent) = split_scientific(&format!("{value:.length$e}"));
    if longer_exponent != exponent || !longer.ends_with('5') {
        return (digits, exponent);
    }
    // A tie needs the exact expansion to stop at that 5. A double's exact decimal expansion has
    // at most 767 significant digits, so 800 shows all of it.
    let (exact, _) = split_scientific(&format!("{value:.800e}"));
    if exact[length + 1..].bytes().any(|digit| digit != b'0') {
        return (digits, exponent);
    }
    let lower = longer[..length].to_string();
    let Some(upper) = increment_digits(&lower) else {
        return (digits, exponent);
    };
    let even = if lower.ends_with(['0', '2', '4', '6', '8']) {
        lower
    } else {
        upper
    };
    let reads_back = format!("{}e{exponent}", with_point(&even))
        .parse::<f64>()
        .is_ok_and(|parsed| parsed == value);
    if even != digits && reads_back {
        // Trailing zeros are not significant digits in `repr`.
        let trimmed = even.trim_end_matches('0');
        let trimmed = if trimmed.is_empty() { "0" } else { trimmed };
        return (trimmed.to_string(), exponent);
    }
    (digits, exponent)
}

/// Digits (without the point) and exponent of Rust's `{:e}` output for a non-negative float.
fn split_scientific(text: &str) -> (String, i32) {
    let (mantissa, exponent) = text
        .split_once('e')
        .expect("`{:e}` of a finite float always has an exponent");
    let digits = mantissa.chars().filter(|c| *c != '.').collect();
    let exponent = exponent.parse().expect("`{:e}` writes a decimal exponent");
    (digits, exponent)
}

/// `digits` plus one in the last place, or `None` when that carries into a new digit.
fn increment_digits(digits: &str) -> Option<String> {
    let mut bytes = digits.as_bytes().to_vec();
    for digit in bytes.iter_mut().rev() {
        if *digit == b'9' {
            *digit = b'0';
        } else {
            *digit += 1;
            return String::from_utf8(bytes).ok();
        }
    }
    None
}

fn with_point(digits: &str) -> String {
    let (first, rest) = digits.split_at(1);
    format!("{first}.{rest}0")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn canonical_of(text: &str) -> String {
        to_canonical_string(&serde_json::from_str(text).expect("test input is JSON"))
    }

    // Every expected string below was printed by CPython 3.11's
    // json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"), ensure_ascii=False).

    #[test]
    fn keys_are_sorted_by_code_point_at_every_level() {
        assert_eq!(
            canonical_of(
                r#"{"b":1,"a":{"z":[{"y":1,"x":2}],"B":null},"é":0,"Z":0,"😀":0,"\uff5e":0}"#
            ),
            r#"{"Z":0,"a":{"B":null,"z":[{"x":2,"y":1}]},"b":1,"é":0,"～":0,"😀":0}"#
        );
    }

    #[test]
    fn strings_escape_like_python() {
        let value =
            json!({"s": "q\"b\\n\nr\rt\tb\u{8}f\u{c}\u{0}\u{1f}\u{7f}\u{2028}\u{2029}/é😀"});
        assert_eq!(
            to_canonical_string(&value),
            "{\"s\":\"q\\\"b\\\\n\\nr\\rt\\tb\\bf\\f\\u0000\\u001f\u{7f}\u{2028}\u{2029}/é😀\"}"
        );
        assert_eq!(canonical_of(r#""\u001B\u000b""#), r#""\u001b\u000b""#);
    }

    #[test]
    fn integers_stay_integers_and_floats_follow_repr() {
        let cases = [
            ("1", "1"),
            ("-1", "-1"),
            ("1.0", "1.0"),
            ("1e16", "1e+16"),
            ("1E16", "1e+16"),
            ("1e15", "1000000000000000.0"),
            ("9999999999999998.0", "9999999999999998.0"),
            ("1e-5", "1e-05"),
            ("1.5e-5", "1.5e-05"),
            ("0.0001", "0.0001"),
            ("0.1", "0.1"),
            ("123456789.123", "123456789.123"),
            ("-0.0", "-0.0"),
            ("0.0", "0.0"),
            ("5e-324", "5e-324"),
            ("1.7976931348623157e308", "1.7976931348623157e+308"),
            ("9007199254740993", "9007199254740993"),
            ("-9223372036854775808", "-9223372036854775808"),
            ("18446744073709551615", "18446744073709551615"),
            ("100e-2", "1.0"),
            ("2.5e-8", "2.5e-08"),
            ("1.2345678901234567e+25", "1.2345678901234566e+25"),
            ("0.30000000000000004", "0.30000000000000004"),
            // Exact ties between two shortest candidates go to the even digit.
            ("1059438285926254.25", "1059438285926254.2"),
            ("-108868734838530.125", "-108868734838530.12"),
            ("26363981746409.3125", "26363981746409.312"),
            ("1059438285926254.75", "1059438285926254.8"),
        ];
        for (input, expected) in cases {
            assert_eq!(canonical_of(input), expected, "input {input}");
        }
    }

    #[test]
    fn integers_beyond_64_bits_become_floats_a_documented_limit() {
        // Python writes 18446744073709551616; serde_json has already turned it into a double.
        assert_eq!(
            canonical_of("18446744073709551616"),
            "1.8446744073709552e+19"
        );
        assert_eq!(canonical_of("-0"), "-0.0");
    }

    #[test]
    fn non_finite_floats_follow_pythons_encoder() {
        assert_eq!(python_json_float(f64::INFINITY), "Infinity");
        assert_eq!(python_json_float(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(python_json_float(f64::NAN), "NaN");
    }

    #[test]
    fn separators_are_compact_and_arrays_keep_their_order() {
        assert_eq!(
            canonical_of("[ 3 , 1 , { } , [ ] , \"\" , true , false , null ]"),
            r#"[3,1,{},[],"",true,false,null]"#
        );
    }

    #[test]
    fn pretty_keeps_key_order_and_writes_empty_containers_inline() {
        let value: Value =
            serde_json::from_str(r#"{"z":1,"a":{"k":[]},"m":{},"l":[1.0,{"x":null}]}"#).unwrap();
        assert_eq!(
            to_python_pretty_string(&value),
            "{\n  \"z\": 1,\n  \"a\": {\n    \"k\": []\n  },\n  \"m\": {},\n  \"l\": [\n    1.0,\n    {\n      \"x\": null\n    }\n  ]\n}"
        );
    }
}
