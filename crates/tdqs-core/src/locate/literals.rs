//! The literal texts of one source file, with their 1-based line and column: string literals
//! (adjacent and `+` concatenations joined, escapes decoded), Python docstrings, Rust doc
//! comments, YAML scalars, and the names of functions a tool decorator or attribute marks.
//!
//! This is a lexer, not a parser: it knows each language's comments and string forms so that a
//! quote inside a comment, a regular expression or a raw string cannot shift what follows, and
//! it records the few characters of code before each literal (`name:`, `registerTool(`) that
//! tell a defining occurrence from a mention.

/// The source languages read for tool definitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Python,
    /// JavaScript and TypeScript.
    Script,
    Go,
    Rust,
    Json,
    Yaml,
}

impl Lang {
    /// The language of a file by its extension; `None` for files that cannot define a tool.
    pub fn of_path(path: &str) -> Option<Lang> {
        let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
        Some(match ext.as_str() {
            "py" | "pyi" => Lang::Python,
            "js" | "mjs" | "cjs" | "jsx" | "ts" | "mts" | "cts" | "tsx" => Lang::Script,
            "go" => Lang::Go,
            "rs" => Lang::Rust,
            "json" => Lang::Json,
            "yaml" | "yml" => Lang::Yaml,
            _ => return None,
        })
    }

    /// The name used in documentation and tables.
    pub fn label(self) -> &'static str {
        match self {
            Lang::Python => "Python",
            Lang::Script => "TypeScript/JavaScript",
            Lang::Go => "Go",
            Lang::Rust => "Rust",
            Lang::Json => "JSON",
            Lang::Yaml => "YAML",
        }
    }
}

/// One literal text found in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Literal {
    /// The decoded text (concatenated pieces joined).
    pub value: String,
    /// 1-based line and column (in characters) of its first character (the opening quote).
    pub line: u32,
    pub column: u32,
    /// False when a piece has substitutions (`${x}`, `{x}` in an f-string): the text is then
    /// only the literal part and can never match a whole description.
    pub exact: bool,
    /// What kind of occurrence it is.
    pub role: Role,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// An ordinary string literal or scalar.
    Text,
    /// A string that names a tool where it is defined: the value of a `name` key, or the first
    /// argument of a call whose callee mentions `tool` (`registerTool("x"`, `mcp.NewTool("x"`).
    ToolName,
    /// The name of a function under a tool decorator (`@mcp.tool()`) or attribute (`#[tool]`).
    DecoratedFunction,
    /// An object or dict key (`"labels": …`): a property's name, never a description.
    Key,
}

struct Lexer<'a> {
    chars: &'a [char],
    i: usize,
    line: u32,
    col: u32,
    /// The last code characters (whitespace collapsed; literals as `"…"`), for [`Role`].
    context: String,
}

impl<'a> Lexer<'a> {
    fn peek(&self, k: usize) -> Option<char> {
        self.chars.get(self.i + k).copied()
    }
    fn bump(&mut self) -> Option<char> {
        let c = self.peek(0)?;
        self.i += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }
    fn push_context(&mut self, text: &str) {
        for c in text.chars() {
            if c.is_whitespace() {
                if !self.context.ends_with(' ') {
                    self.context.push(' ');
                }
            } else {
                self.context.push(c);
            }
        }
        if self.context.len() > 160 {
            let cut = self.context.len() - 80;
            let cut = (cut..self.context.len())
                .find(|&k| self.context.is_char_boundary(k))
                .unwrap_or(0);
            self.context.drain(..cut);
        }
    }
    fn skip_line(&mut self) {
        while let Some(c) = self.peek(0) {
            if c == '\n' {
                break;
            }
            self.bump();
        }
    }
    fn skip_block_comment(&mut self, nested: bool) {
        // At "/*".
        self.bump();
        self.bump();
        let mut depth = 1;
        while let Some(c) = self.peek(0) {
            if c == '*' && self.peek(1) == Some('/') {
                self.bump();
                self.bump();
                depth -= 1;
                if depth == 0 || !nested {
                    return;
                }
            } else if nested && c == '/' && self.peek(1) == Some('*') {
                self.bump();
                self.bump();
                depth += 1;
            } else {
                self.bump();
            }
        }
    }
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// Decodes a backslash escape after the backslash; pushes the result.
fn escape(lx: &mut Lexer, out: &mut String, lang: Lang) {
    let Some(c) = lx.bump() else { return };
    match c {
        'n' => out.push('\n'),
        't' => out.push('\t'),
        'r' => out.push('\r'),
        '0' if !matches!(lx.peek(0), Some('0'..='7')) => out.push('\0'),
        '\n' => {
            // A line continuation: nothing in Python, JS and Go; Rust also drops the next
            // line's leading whitespace.
            if lang == Lang::Rust {
                while matches!(lx.peek(0), Some(c) if c.is_whitespace()) {
                    lx.bump();
                }
            }
        }
        'u' => {
            let mut hex = String::new();
            if lx.peek(0) == Some('{') {
                lx.bump();
                while let Some(h) = lx.peek(0) {
                    lx.bump();
                    if h == '}' {
                        break;
                    }
                    hex.push(h);
                }
            } else {
                for _ in 0..4 {
                    if let Some(h) = lx.peek(0).filter(char::is_ascii_hexdigit) {
                        lx.bump();
                        hex.push(h);
                    }
                }
            }
            match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                Some(ch) => out.push(ch),
                None => out.push('\u{FFFD}'),
            }
        }
        'x' => {
            let mut hex = String::new();
            for _ in 0..2 {
                if let Some(h) = lx.peek(0).filter(char::is_ascii_hexdigit) {
                    lx.bump();
                    hex.push(h);
                }
            }
            match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                Some(ch) => out.push(ch),
                None => out.push('\u{FFFD}'),
            }
        }
        other => out.push(other),
    }
}

/// A string piece at the cursor, if one starts here: (decoded text, exact).
fn string_piece(lx: &mut Lexer, lang: Lang) -> Option<(String, bool)> {
    let c = lx.peek(0)?;
    let prev_ident = lx.i > 0 && is_ident(lx.chars[lx.i - 1]);
    // Prefixes: Python r/b/u/f (any two), Rust r/b/br with hashes.
    let mut prefix = String::new();
    if !prev_ident && c.is_ascii_alphabetic() {
        let mut k = 0;
        while k < 3 {
            match lx.peek(k) {
                Some(p) if p.is_ascii_alphabetic() => {
                    prefix.push(p.to_ascii_lowercase());
                    k += 1;
                }
                _ => break,
            }
        }
        let next = lx.peek(k);
        let valid = match lang {
            Lang::Python => {
                matches!(next, Some('"' | '\''))
                    && ["r", "b", "u", "f", "rb", "br", "fr", "rf"].contains(&prefix.as_str())
            }
            Lang::Rust => {
                matches!(next, Some('"' | '#'))
                    && ["r", "br", "b", "c", "cr"].contains(&prefix.as_str())
                    && (next == Some('"') || prefix.contains('r'))
            }
            _ => false,
        };
        if !valid {
            return None;
        }
        for _ in 0..k {
            lx.bump();
        }
    } else if !matches!(c, '"' | '\'' | '`') {
        return None;
    }
    let raw = prefix.contains('r');
    let fmt = prefix.contains('f');
    let q = lx.peek(0)?;
    match lang {
        Lang::Rust if raw => {
            let mut hashes = 0;
            while lx.peek(0) == Some('#') {
                lx.bump();
                hashes += 1;
            }
            if lx.peek(0) != Some('"') {
                return None;
            }
            lx.bump();
            let mut out = String::new();
            while let Some(ch) = lx.peek(0) {
                if ch == '"' && (1..=hashes).all(|h| lx.peek(h) == Some('#')) {
                    lx.bump();
                    for _ in 0..hashes {
                        lx.bump();
                    }
                    break;
                }
                lx.bump();
                out.push(ch);
            }
            Some((out, true))
        }
        Lang::Rust if q == '\'' => None,
        Lang::Go if q == '\'' => None,
        Lang::Go if q == '`' => {
            lx.bump();
            let mut out = String::new();
            while let Some(ch) = lx.bump() {
                if ch == '`' {
                    break;
                }
                out.push(ch);
            }
            Some((out, true))
        }
        Lang::Script if q == '`' => {
            lx.bump();
            let mut out = String::new();
            let mut exact = true;
            while let Some(ch) = lx.bump() {
                match ch {
                    '`' => break,
                    '\\' => escape(lx, &mut out, lang),
                    '$' if lx.peek(0) == Some('{') => {
                        exact = false;
                        let mut depth = 0;
                        while let Some(s) = lx.bump() {
                            match s {
                                '{' => depth += 1,
                                '}' => {
                                    depth -= 1;
                                    if depth == 0 {
                                        break;
                                    }
                                }
                                _ => {}
                            }
                        }
                    }
                    _ => out.push(ch),
                }
            }
            Some((out, exact))
        }
        _ if q == '`' => None,
        _ => {
            let triple = lang == Lang::Python && lx.peek(1) == Some(q) && lx.peek(2) == Some(q);
            let n = if triple { 3 } else { 1 };
            for _ in 0..n {
                lx.bump();
            }
            let mut out = String::new();
            let mut exact = true;
            while let Some(ch) = lx.peek(0) {
                if ch == q && (!triple || (lx.peek(1) == Some(q) && lx.peek(2) == Some(q))) {
                    for _ in 0..n {
                        lx.bump();
                    }
                    break;
                }
                if ch == '\n' && !triple {
                    break; // an unterminated literal: stop at the line's end
                }
                lx.bump();
                if ch == '\\' && !raw {
                    escape(lx, &mut out, lang);
                } else if ch == '\\' {
                    out.push(ch);
                    if let Some(next) = lx.bump() {
                        out.push(next);
                    }
                } else if fmt && ch == '{' {
                    if lx.peek(0) == Some('{') {
                        lx.bump();
                        out.push('{');
                    } else {
                        exact = false;
                        while let Some(s) = lx.bump() {
                            if s == '}' {
                                break;
                            }
                        }
                    }
                } else if fmt && ch == '}' && lx.peek(0) == Some('}') {
                    lx.bump();
                    out.push('}');
                } else {
                    out.push(ch);
                }
            }
            Some((out, exact))
        }
    }
}

/// Skips whitespace and comments from the cursor without consuming anything else; returns
/// the index after them.
fn skip_trivia(lx: &mut Lexer, lang: Lang) {
    loop {
        match lx.peek(0) {
            Some(c) if c.is_whitespace() => {
                lx.bump();
            }
            Some('#') if lang == Lang::Python => lx.skip_line(),
            Some('/')
                if lang != Lang::Python && lx.peek(1) == Some('/') && lx.peek(2) != Some('/') =>
            {
                lx.skip_line()
            }
            Some('/') if lang != Lang::Python && lx.peek(1) == Some('*') => {
                lx.skip_block_comment(lang == Lang::Rust)
            }
            _ => return,
        }
    }
}

fn role_from_context(context: &str, lang: Lang) -> Role {
    let ctx = context.trim_end();
    let lower = ctx.to_ascii_lowercase();
    for key in ["name:", "\"name\":", "'name':", "name=", "name =", "name :"] {
        if lower.ends_with(key) {
            return Role::ToolName;
        }
    }
    // The first argument of a call whose callee mentions "tool".
    if let Some(before) = ctx.strip_suffix('(') {
        let callee: String = before
            .chars()
            .rev()
            .take_while(|c| is_ident(*c) || *c == '.')
            .collect::<String>()
            .chars()
            .rev()
            .collect();
        let last = callee.rsplit('.').next().unwrap_or("");
        if last.to_ascii_lowercase().contains("tool") && lang != Lang::Json {
            return Role::ToolName;
        }
    }
    Role::Text
}

/// Every literal of a code file (Python, JS/TS, Go, Rust, JSON).
fn code_literals(text: &str, lang: Lang) -> Vec<Literal> {
    let chars: Vec<char> = text.chars().collect();
    let mut lx = Lexer {
        chars: &chars,
        i: 0,
        line: 1,
        col: 1,
        context: String::new(),
    };
    let mut out = Vec::new();
    let mut doc: Option<Literal> = None;
    while let Some(c) = lx.peek(0) {
        // Rust doc comments are descriptions (rmcp reads them when no description is given).
        if lang == Lang::Rust
            && c == '/'
            && lx.peek(1) == Some('/')
            && lx.peek(2) == Some('/')
            && lx.peek(3) != Some('/')
        {
            let (line, column) = (lx.line, lx.col);
            for _ in 0..3 {
                lx.bump();
            }
            if lx.peek(0) == Some(' ') {
                lx.bump();
            }
            let mut text_line = String::new();
            while let Some(ch) = lx.peek(0) {
                if ch == '\n' {
                    break;
                }
                lx.bump();
                text_line.push(ch);
            }
            match &mut doc {
                Some(d) if d.line + d.value.matches('\n').count() as u32 + 1 == line => {
                    d.value.push('\n');
                    d.value.push_str(&text_line);
                }
                _ => {
                    if let Some(d) = doc.take() {
                        out.push(d);
                    }
                    doc = Some(Literal {
                        value: text_line,
                        line,
                        column,
                        exact: true,
                        role: Role::Text,
                    });
                }
            }
            continue;
        }
        if c.is_whitespace() {
            lx.push_context(" ");
            lx.bump();
            continue;
        }
        match (lang, c, lx.peek(1)) {
            (Lang::Python, '#', _) => {
                lx.skip_line();
                continue;
            }
            (l, '/', Some('/')) if l != Lang::Python => {
                lx.skip_line();
                continue;
            }
            (l, '/', Some('*')) if l != Lang::Python => {
                lx.skip_block_comment(lang == Lang::Rust);
                continue;
            }
            (Lang::Script, '/', _) => {
                // A regular expression where an operand is expected; else division.
                let last = lx.context.trim_end().chars().last();
                let ctx = lx.context.trim_end();
                let operand_expected = match last {
                    None => true,
                    Some(l) => {
                        "(,=:[!&|?{};+-*%<>~^".contains(l)
                            || ctx.ends_with("return")
                            || ctx.ends_with("typeof")
                    }
                };
                lx.bump();
                if operand_expected {
                    let mut in_class = false;
                    while let Some(r) = lx.peek(0) {
                        if r == '\n' {
                            break;
                        }
                        lx.bump();
                        match r {
                            '\\' => {
                                lx.bump();
                            }
                            '[' => in_class = true,
                            ']' => in_class = false,
                            '/' if !in_class => break,
                            _ => {}
                        }
                    }
                    lx.push_context("/re/");
                } else {
                    lx.push_context("/");
                }
                continue;
            }
            (Lang::Rust | Lang::Go, '\'', _) => {
                // A char or rune literal ('a', '\n', '"') or a Rust lifetime ('a).
                if lx.peek(1) == Some('\\') {
                    lx.bump();
                    lx.bump();
                    lx.bump();
                    while let Some(ch) = lx.bump() {
                        if ch == '\'' {
                            break;
                        }
                    }
                } else if lx.peek(2) == Some('\'') {
                    lx.bump();
                    lx.bump();
                    lx.bump();
                } else {
                    lx.bump();
                }
                lx.push_context("'");
                continue;
            }
            _ => {}
        }
        let (line, column) = (lx.line, lx.col);
        let start = lx.i;
        if let Some((mut value, mut exact)) = string_piece(&mut lx, lang) {
            let role = role_from_context(&lx.context, lang);
            // Join adjacent pieces (Python) and `+` concatenations (Python, JS, Go).
            loop {
                let save = (lx.i, lx.line, lx.col);
                skip_trivia(&mut lx, lang);
                let mut joined = false;
                if lx.peek(0) == Some('+') && lang != Lang::Rust && lang != Lang::Json {
                    lx.bump();
                    skip_trivia(&mut lx, lang);
                    joined = true;
                }
                if joined || lang == Lang::Python {
                    if let Some((more, more_exact)) = string_piece(&mut lx, lang) {
                        value.push_str(&more);
                        exact &= more_exact;
                        continue;
                    }
                }
                (lx.i, lx.line, lx.col) = save;
                break;
            }
            let save = (lx.i, lx.line, lx.col);
            skip_trivia(&mut lx, lang);
            let is_key = lx.peek(0) == Some(':') && lx.peek(1) != Some(':') && lang != Lang::Rust;
            (lx.i, lx.line, lx.col) = save;
            let role = if is_key && role == Role::Text {
                Role::Key
            } else {
                role
            };
            let shown: String = value.chars().take(40).collect();
            lx.push_context(&format!("\"{}\"", shown.replace(char::is_whitespace, " ")));
            out.push(Literal {
                value,
                line,
                column,
                exact,
                role,
            });
            continue;
        }
        debug_assert_eq!(start, lx.i);
        // Any other code character: an identifier at once, so a prefix test sees it whole.
        if is_ident(c) {
            let mut ident = String::new();
            while let Some(ch) = lx.peek(0).filter(|ch| is_ident(*ch)) {
                lx.bump();
                ident.push(ch);
            }
            lx.push_context(&ident);
        } else {
            lx.bump();
            lx.push_context(&c.to_string());
        }
    }
    if let Some(d) = doc.take() {
        out.push(d);
    }
    out.sort_by_key(|l| (l.line, l.column));
    out
}

/// Functions under a tool decorator (Python) or attribute (Rust): the tool takes their name.
fn decorated_functions(text: &str, lang: Lang) -> Vec<Literal> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let rest = match lang {
            Lang::Python => trimmed
                .strip_prefix("async ")
                .map(str::trim_start)
                .unwrap_or(trimmed)
                .strip_prefix("def "),
            Lang::Rust => {
                let mut t = trimmed;
                for word in [
                    "pub(crate) ",
                    "pub(super) ",
                    "pub ",
                    "async ",
                    "const ",
                    "unsafe ",
                ] {
                    t = t.strip_prefix(word).unwrap_or(t);
                }
                t.strip_prefix("fn ")
            }
            _ => None,
        };
        let Some(rest) = rest else { continue };
        let rest = rest.trim_start();
        let name: String = rest.chars().take_while(|c| is_ident(*c)).collect();
        if name.is_empty() {
            continue;
        }
        // Look up over the decorators or attributes (and, in Rust, doc comments) above it.
        let mut decorated = false;
        for above in lines[..n].iter().rev().take(40) {
            let a = above.trim();
            let is_marker = match lang {
                Lang::Python => a.starts_with('@'),
                _ => a.starts_with("#[") || a.starts_with("///"),
            };
            let continues = !a.is_empty()
                && !a.ends_with(':')
                && !a.ends_with(';')
                && !a.ends_with('}')
                && !a.ends_with('{')
                && !a.starts_with("def ")
                && !a.starts_with("fn ");
            if is_marker {
                let lower = a.to_ascii_lowercase();
                if (lang == Lang::Python && lower.starts_with('@') && lower.contains("tool"))
                    || (lang == Lang::Rust
                        && (lower.starts_with("#[tool") || lower.contains("::tool")))
                {
                    decorated = true;
                    break;
                }
            } else if !continues {
                break;
            }
        }
        if decorated {
            let column = line[..line.len() - trimmed.len()].chars().count() as u32 + 1;
            out.push(Literal {
                value: name,
                line: n as u32 + 1,
                column,
                exact: true,
                role: Role::DecoratedFunction,
            });
        }
    }
    out
}

/// Scalars of a YAML file: `key: value` with plain, quoted and block (`|`, `>`) values, and
/// plain values continued on more-indented lines. A value under `name` is a [`Role::ToolName`].
fn yaml_literals(text: &str) -> Vec<Literal> {
    let lines: Vec<&str> = text.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut out = Vec::new();
    let mut n = 0;
    while n < lines.len() {
        let line = lines[n];
        let body = line.trim_start();
        let item = body.strip_prefix("- ").unwrap_or(body);
        let key_indent = indent(line) + (body.len() - item.len());
        let Some((key, value)) = item
            .split_once(": ")
            .or_else(|| item.strip_suffix(':').map(|k| (k, "")))
        else {
            n += 1;
            continue;
        };
        if key.is_empty() || key.starts_with('#') || key.contains(' ') && !key.starts_with('"') {
            n += 1;
            continue;
        }
        let key = key.trim_matches(|c| c == '"' || c == '\'');
        let value_trim = value.trim();
        let value_col = line.len() - value.trim_start().len();
        let column = line[..value_col].chars().count() as u32 + 1;
        let role = if key == "name" {
            Role::ToolName
        } else {
            Role::Text
        };
        let more_indented = |l: &str| l.trim().is_empty() || indent(l) > key_indent;
        if value_trim.starts_with('|') || value_trim.starts_with('>') {
            let mut m = n + 1;
            let mut parts = Vec::new();
            while m < lines.len() && more_indented(lines[m]) {
                parts.push(lines[m].trim());
                m += 1;
            }
            if let Some(first) = (n + 1..m).find(|&k| !lines[k].trim().is_empty()) {
                let l = lines[first];
                out.push(Literal {
                    value: parts.join("\n"),
                    line: first as u32 + 1,
                    column: l[..indent(l)].chars().count() as u32 + 1,
                    exact: true,
                    role,
                });
            }
            n = m;
            continue;
        }
        if value_trim.is_empty() {
            n += 1;
            continue;
        }
        if let Some(q) = value_trim
            .chars()
            .next()
            .filter(|c| *c == '"' || *c == '\'')
        {
            // A quoted scalar, possibly over several lines.
            let mut joined = value_trim[1..].to_string();
            let mut m = n;
            let closing = |s: &str| -> Option<usize> {
                let mut chars = s.char_indices().peekable();
                while let Some((k, c)) = chars.next() {
                    if q == '"' && c == '\\' {
                        chars.next();
                    } else if c == q {
                        if q == '\'' && chars.peek().map(|p| p.1) == Some('\'') {
                            chars.next();
                            continue;
                        }
                        return Some(k);
                    }
                }
                None
            };
            while closing(&joined).is_none() && m + 1 < lines.len() {
                m += 1;
                joined.push(' ');
                joined.push_str(lines[m].trim());
            }
            let end = closing(&joined).unwrap_or(joined.len());
            let inner = &joined[..end];
            let decoded = if q == '"' {
                let chars: Vec<char> = inner.chars().collect();
                let mut lx = Lexer {
                    chars: &chars,
                    i: 0,
                    line: 1,
                    col: 1,
                    context: String::new(),
                };
                let mut s = String::new();
                while let Some(c) = lx.bump() {
                    if c == '\\' {
                        escape(&mut lx, &mut s, Lang::Json);
                    } else {
                        s.push(c);
                    }
                }
                s
            } else {
                inner.replace("''", "'")
            };
            out.push(Literal {
                value: decoded,
                line: n as u32 + 1,
                column,
                exact: true,
                role,
            });
            n = m + 1;
            continue;
        }
        // A plain scalar and its more-indented continuation lines.
        let strip_comment = |s: &str| s.split(" #").next().unwrap_or(s).trim().to_string();
        let mut value_text = strip_comment(value_trim);
        let mut m = n + 1;
        while m < lines.len()
            && !lines[m].trim().is_empty()
            && indent(lines[m]) > key_indent
            && !lines[m].trim_start().starts_with("- ")
            && !lines[m].contains(": ")
            && !lines[m].trim_end().ends_with(':')
        {
            value_text.push(' ');
            value_text.push_str(&strip_comment(lines[m]));
            m += 1;
        }
        out.push(Literal {
            value: value_text,
            line: n as u32 + 1,
            column,
            exact: true,
            role,
        });
        n = m;
    }
    out
}

/// Every literal text of one file in the given language, in file order.
pub fn literals(text: &str, lang: Lang) -> Vec<Literal> {
    let mut all = match lang {
        Lang::Yaml => yaml_literals(text),
        _ => code_literals(text, lang),
    };
    if matches!(lang, Lang::Python | Lang::Rust) {
        all.extend(decorated_functions(text, lang));
        all.sort_by_key(|l| (l.line, l.column));
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(text: &str, lang: Lang) -> Vec<(String, u32, u32, Role)> {
        literals(text, lang)
            .into_iter()
            .map(|l| (l.value, l.line, l.column, l.role))
            .collect()
    }

    #[test]
    fn python_adjacent_pieces_escapes_and_docstrings_are_joined_and_decoded() {
        let src = "# don't\nx = (\"a \\\"b\\\" \"\n     'c' + r\"\\d\")\ndef f():\n    '''Doc\n    more.'''\n";
        let got = values(src, Lang::Python);
        assert_eq!(got[0], ("a \"b\" c\\d".to_string(), 2, 6, Role::Text));
        assert_eq!(got[1], ("Doc\n    more.".to_string(), 5, 5, Role::Text));
    }

    #[test]
    fn f_strings_and_template_substitutions_are_not_exact() {
        let py = literals("d = f\"Count {kind}.\"", Lang::Python);
        assert!(!py[0].exact);
        assert_eq!(py[0].value, "Count .");
        let js = literals(
            "const d = `Delete ${n} days.`; const e = `plain`;",
            Lang::Script,
        );
        assert!(!js[0].exact);
        assert!(js[1].exact);
    }

    #[test]
    fn a_regular_expression_or_a_comment_with_quotes_opens_no_string() {
        let src = "const r = /[\"']/g; // it's\n/* \"x */ const n = a / b; f(\"one\");";
        let got = values(src, Lang::Script);
        assert_eq!(got, [("one".to_string(), 2, 29, Role::Text)]);
    }

    #[test]
    fn rust_raw_strings_lifetimes_chars_and_doc_comments_are_read() {
        let src = "/// Doc one\n/// two.\n#[tool(description = r#\"say \"hi\"\"#)]\nfn f<'a>(x: &'a str) { let _ = '\"'; }\n";
        let got = values(src, Lang::Rust);
        assert_eq!(got[0], ("Doc one\ntwo.".to_string(), 1, 1, Role::Text));
        assert_eq!(got[1], ("say \"hi\"".to_string(), 3, 22, Role::Text));
        assert_eq!(got[2], ("f".to_string(), 4, 1, Role::DecoratedFunction));
        assert_eq!(got.len(), 3);
    }

    #[test]
    fn tool_names_are_told_from_mentions_by_their_context() {
        let got = values(
            "server.registerTool(\"a\", {}); x = { name: \"b\" }; log(\"c\"); mcp.NewTool(\"d\")",
            Lang::Script,
        );
        let roles: Vec<(&str, Role)> = got.iter().map(|g| (g.0.as_str(), g.3)).collect();
        assert_eq!(
            roles,
            [
                ("a", Role::ToolName),
                ("b", Role::ToolName),
                ("c", Role::Text),
                ("d", Role::ToolName)
            ]
        );
    }

    #[test]
    fn an_object_key_is_a_key_not_a_text() {
        let got = values("{\"labels\": {\"description\": \"labels\"}}", Lang::Json);
        let roles: Vec<Role> = got.iter().map(|g| g.3).collect();
        assert_eq!(roles, [Role::Key, Role::Key, Role::Text]);
    }

    #[test]
    fn go_concatenations_and_raw_strings_are_joined() {
        let got = values("mcp.WithDescription(\"a \" +\n\t`b`)", Lang::Go);
        assert_eq!(got, [("a b".to_string(), 1, 21, Role::Text)]);
    }
}
