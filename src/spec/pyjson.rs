//! JSON text exactly as Python's `json.dumps` writes it, for the two forms the specification's
//! reference implementations use: the pretty form that goes into prompts
//! (`indent=2, ensure_ascii=False`, keys in the order received) and the sorted compact form the
//! pins digest is computed over (`sort_keys=True, separators=(",", ":"), ensure_ascii=False`).
//!
//! serde_json's own writer differs from Python on floats (`1e16` against `1e+16`, `1e-5`
//! against `1e-05`), so numbers are written here. Known divergence that cannot be fixed after
//! parsing: integers beyond the 64-bit range reach serde_json as floats, while Python keeps them
//! exact; `-0` parses as a float in serde_json and as the integer 0 in Python.

use serde_json::{Number, Value};

/// `json.dumps(value, indent=2, ensure_ascii=False)`.
pub fn pretty(value: &Value) -> String {
    let mut out = String::new();
    write_pretty(value, 0, &mut out);
    out
}

/// `json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`.
pub fn compact_sorted(value: &Value) -> String {
    let mut out = String::new();
    write_compact_sorted(value, &mut out);
    out
}

fn write_pretty(value: &Value, depth: usize, out: &mut String) {
    match value {
        Value::Array(items) if !items.is_empty() => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                newline_indent(depth + 1, out);
                write_pretty(item, depth + 1, out);
            }
            newline_indent(depth, out);
            out.push(']');
        }
        Value::Object(map) if !map.is_empty() => {
            out.push('{');
            for (index, (key, item)) in map.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                newline_indent(depth + 1, out);
                write_string(key, out);
                out.push_str(": ");
                write_pretty(item, depth + 1, out);
            }
            newline_indent(depth, out);
            out.push('}');
        }
        other => write_scalar_or_empty(other, out),
    }
}

fn newline_indent(depth: usize, out: &mut String) {
    out.push('\n');
    for _ in 0..depth {
        out.push_str("  ");
    }
}

fn write_compact_sorted(value: &Value, out: &mut String) {
    match value {
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_compact_sorted(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            // Rust orders strings by UTF-8 bytes, which is the code-point order Python sorts by.
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (index, (key, item)) in entries.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                write_compact_sorted(item, out);
            }
            out.push('}');
        }
        other => write_scalar_or_empty(other, out),
    }
}

fn write_scalar_or_empty(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(number) => out.push_str(&number_text(number)),
        Value::String(text) => write_string(text, out),
        Value::Array(_) => out.push_str("[]"),
        Value::Object(_) => out.push_str("{}"),
    }
}

/// A number as Python prints it: integers exactly, floats by `float.__repr__`.
pub fn number_text(number: &Number) -> String {
    if let Some(unsigned) = number.as_u64() {
        unsigned.to_string()
    } else if let Some(signed) = number.as_i64() {
        signed.to_string()
    } else {
        // serde_json holds no NaN or infinity, so every remaining number is a finite float.
        float_repr(number.as_f64().unwrap_or(0.0))
    }
}

/// Python's `repr(float)`: the shortest digits that round-trip, in fixed notation when the
/// decimal exponent is in -4..16 and in scientific notation (`1e+16`, `1.5e-05`) otherwise.
pub fn float_repr(value: f64) -> String {
    if value.is_nan() {
        return "NaN".to_string();
    }
    if value.is_infinite() {
        return if value > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    // Rust's `{:e}` gives the same shortest round-trip digits Python uses, as `d.ddde<exp>`.
    let scientific = format!("{value:e}");
    let (mantissa, exponent) = scientific
        .split_once('e')
        .expect("`{:e}` output always holds an exponent");
    let exponent: i32 = exponent.parse().expect("`{:e}` exponent is an integer");
    let (negative, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    if (-4..16).contains(&exponent) {
        let point = exponent + 1; // digits before the decimal point
        if point <= 0 {
            out.push_str("0.");
            for _ in 0..(-point) {
                out.push('0');
            }
            out.push_str(&digits);
        } else {
            let point = point as usize;
            if digits.len() <= point {
                out.push_str(&digits);
                for _ in digits.len()..point {
                    out.push('0');
                }
                out.push_str(".0");
            } else {
                out.push_str(&digits[..point]);
                out.push('.');
                out.push_str(&digits[point..]);
            }
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exponent < 0 { '-' } else { '+' });
        let magnitude = exponent.unsigned_abs();
        if magnitude < 10 {
            out.push('0');
        }
        out.push_str(&magnitude.to_string());
    }
    out
}

/// A JSON string as Python writes it with `ensure_ascii=False`: only `"`, `\` and the C0
/// control characters are escaped, with the short forms where JSON has them.
fn write_string(text: &str, out: &mut String) {
    out.push('"');
    for character in text.chars() {
        match character {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            control if (control as u32) < 0x20 => {
                out.push_str(&format!("\\u{:04x}", control as u32));
            }
            other => out.push(other),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_follow_python_repr() {
        let cases = [
            (3.0, "3.0"),
            (3.5, "3.5"),
            (0.1, "0.1"),
            (-0.0, "-0.0"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (1.5e-5, "1.5e-05"),
            (0.0001, "0.0001"),
            (123456789.125, "123456789.125"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
            (-2.5e-7, "-2.5e-07"),
        ];
        for (value, expected) in cases {
            assert_eq!(float_repr(value), expected, "repr of {value:e}");
        }
    }

    #[test]
    fn pretty_keeps_key_order_and_writes_empty_containers_inline() {
        let value: Value =
            serde_json::from_str(r#"{"z":1,"a":{"k":[]},"m":{},"l":[1,{"x":null}]}"#).unwrap();
        assert_eq!(
            pretty(&value),
            "{\n  \"z\": 1,\n  \"a\": {\n    \"k\": []\n  },\n  \"m\": {},\n  \"l\": [\n    1,\n    {\n      \"x\": null\n    }\n  ]\n}"
        );
    }

    #[test]
    fn compact_sorted_sorts_keys_by_code_point_and_keeps_unicode_raw() {
        let value = json!({"é": "ü\u{1}", "B": [1.0, true], "a": "\"q\"\\"});
        assert_eq!(
            compact_sorted(&value),
            "{\"B\":[1.0,true],\"a\":\"\\\"q\\\"\\\\\",\"é\":\"ü\\u0001\"}"
        );
    }
}
