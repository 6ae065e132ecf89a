//! The published extraction rule: the four prompts are the first two ```` ```text ```` fences of
//! the README's "Appendix A" and "Appendix B" sections.
//!
//! 1. The README is split into second-level (`## `) sections; a heading inside a fenced block is
//!    part of the block, not a section.
//! 2. The section whose title starts with "Appendix A" holds the tool prompts, "Appendix B" the
//!    coherence prompts.
//! 3. In each, the first two fences whose opening line is exactly ```` ```text ```` are taken, in
//!    order: system prompt, then user template.
//! 4. A prompt is its fence's inner lines joined with `\n` (no trailing newline); its SHA-256 is
//!    taken over those UTF-8 bytes.

use std::fmt;

/// Which of the four prompts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PromptKey {
    ToolSystem,
    ToolUser,
    CoherenceSystem,
    CoherenceUser,
}

impl PromptKey {
    pub const ALL: [PromptKey; 4] = [
        PromptKey::ToolSystem,
        PromptKey::ToolUser,
        PromptKey::CoherenceSystem,
        PromptKey::CoherenceUser,
    ];

    /// The key in `prompt_sha256` of the pins (`tool_system`).
    pub fn name(self) -> &'static str {
        match self {
            PromptKey::ToolSystem => "tool_system",
            PromptKey::ToolUser => "tool_user",
            PromptKey::CoherenceSystem => "coherence_system",
            PromptKey::CoherenceUser => "coherence_user",
        }
    }

    /// Where the prompt sits in the README, for messages.
    pub fn location(self) -> &'static str {
        match self {
            PromptKey::ToolSystem => "Appendix A, first text block",
            PromptKey::ToolUser => "Appendix A, second text block",
            PromptKey::CoherenceSystem => "Appendix B, first text block",
            PromptKey::CoherenceUser => "Appendix B, second text block",
        }
    }
}

impl fmt::Display for PromptKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The four prompt texts of the specification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompts {
    /// The per-tool system prompt, passed to the judge intact.
    pub tool_system: String,
    /// The per-tool user template, rendered by [`crate::spec::render::render_tool_user`].
    pub tool_user: String,
    /// The set-level system prompt, passed to the judge intact.
    pub coherence_system: String,
    /// The set-level user template, rendered by [`crate::spec::render::render_coherence_user`].
    pub coherence_user: String,
}

impl Prompts {
    pub fn get(&self, key: PromptKey) -> &str {
        match key {
            PromptKey::ToolSystem => &self.tool_system,
            PromptKey::ToolUser => &self.tool_user,
            PromptKey::CoherenceSystem => &self.coherence_system,
            PromptKey::CoherenceUser => &self.coherence_user,
        }
    }

    /// The SHA-256 (lowercase hex) of one prompt's UTF-8 bytes.
    pub fn sha256(&self, key: PromptKey) -> String {
        sha256_hex(self.get(key))
    }
}

pub(crate) fn sha256_hex(text: &str) -> String {
    crate::digest::sha256_hex(text.as_bytes())
}

/// Why the README does not yield four prompts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExtractError {
    /// No section title starts with the appendix name.
    MissingSection { appendix: &'static str },
    /// More than one section title starts with it: which one is meant is unclear.
    AmbiguousSection {
        appendix: &'static str,
        titles: Vec<String>,
    },
    /// The section holds fewer than two ```` ```text ```` fences.
    MissingBlock {
        appendix: &'static str,
        found: usize,
        missing: PromptKey,
    },
    /// A fence opened in the section is never closed.
    UnclosedFence { appendix: &'static str, line: usize },
}

impl fmt::Display for ExtractError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExtractError::MissingSection { appendix } => {
                write!(
                    f,
                    "the specification README has no \"## {appendix}\" section"
                )
            }
            ExtractError::AmbiguousSection { appendix, titles } => write!(
                f,
                "the specification README has {} sections starting with \"{appendix}\": {}",
                titles.len(),
                titles.join("; ")
            ),
            ExtractError::MissingBlock {
                appendix,
                found,
                missing,
            } => write!(
                f,
                "{appendix} of the specification README holds {found} ```text block(s), so the \
                 {missing} prompt ({}) is missing",
                missing.location()
            ),
            ExtractError::UnclosedFence { appendix, line } => write!(
                f,
                "a fenced block opened on line {line} of the specification README ({appendix}) \
                 is never closed"
            ),
        }
    }
}

/// Extracts the four prompts from the README text.
pub fn extract_prompts(readme: &str) -> Result<Prompts, ExtractError> {
    let sections = sections(readme);
    let [tool_system, tool_user] = appendix_prompts(
        &sections,
        "Appendix A",
        [PromptKey::ToolSystem, PromptKey::ToolUser],
    )?;
    let [coherence_system, coherence_user] = appendix_prompts(
        &sections,
        "Appendix B",
        [PromptKey::CoherenceSystem, PromptKey::CoherenceUser],
    )?;
    Ok(Prompts {
        tool_system,
        tool_user,
        coherence_system,
        coherence_user,
    })
}

/// One `## ` section: its title and its lines with their 1-based line numbers.
struct Section<'a> {
    title: &'a str,
    lines: Vec<(usize, &'a str)>,
}

/// The README's lines; a `\r` before a `\n` is not part of the line, so a copy saved with CRLF
/// line ends yields the same prompts.
fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .enumerate()
        .map(|(index, line)| (index + 1, line))
}

/// A line that opens or closes a fence: three or more backticks at the very start.
fn is_fence(line: &str) -> bool {
    line.starts_with("```")
}

fn sections(readme: &str) -> Vec<Section<'_>> {
    let mut found: Vec<Section<'_>> = Vec::new();
    let mut in_fence = false;
    for (number, line) in lines(readme) {
        if is_fence(line) {
            in_fence = !in_fence;
        } else if !in_fence {
            if let Some(title) = line.strip_prefix("## ") {
                found.push(Section {
                    title: title.trim(),
                    lines: Vec::new(),
                });
                continue;
            }
        }
        if let Some(section) = found.last_mut() {
            section.lines.push((number, line));
        }
    }
    found
}

fn appendix_prompts(
    sections: &[Section<'_>],
    appendix: &'static str,
    keys: [PromptKey; 2],
) -> Result<[String; 2], ExtractError> {
    let matching: Vec<&Section<'_>> = sections
        .iter()
        .filter(|section| section.title.starts_with(appendix))
        .collect();
    let section = match matching.as_slice() {
        [] => return Err(ExtractError::MissingSection { appendix }),
        [one] => *one,
        many => {
            return Err(ExtractError::AmbiguousSection {
                appendix,
                titles: many.iter().map(|s| s.title.to_string()).collect(),
            })
        }
    };
    let blocks = text_blocks(section, appendix)?;
    let mut blocks = blocks.into_iter();
    match (blocks.next(), blocks.next()) {
        (Some(system), Some(user)) => Ok([system, user]),
        (first, _) => {
            let found = usize::from(first.is_some());
            Err(ExtractError::MissingBlock {
                appendix,
                found,
                missing: keys[found],
            })
        }
    }
}

/// The inner text of every ```` ```text ```` fence of a section, in order. Other fences
/// (```` ``` ````, ```` ```ts ````, ...) are skipped whole.
fn text_blocks(section: &Section<'_>, appendix: &'static str) -> Result<Vec<String>, ExtractError> {
    let mut blocks = Vec::new();
    // (opening line number, collected lines when it is a text fence)
    let mut open: Option<(usize, Option<Vec<&str>>)> = None;
    for &(number, line) in &section.lines {
        match open.as_mut() {
            None => {
                if is_fence(line) {
                    let text = line.trim_end() == "```text";
                    open = Some((number, text.then(Vec::new)));
                }
            }
            Some((_, buffer)) => {
                if line.trim_end() == "```" {
                    if let Some(buffer) = buffer.take() {
                        blocks.push(buffer.join("\n"));
                    }
                    open = None;
                } else if let Some(buffer) = buffer.as_mut() {
                    buffer.push(line);
                }
            }
        }
    }
    if let Some((line, _)) = open {
        return Err(ExtractError::UnclosedFence { appendix, line });
    }
    Ok(blocks)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn readme(a: &str, b: &str) -> String {
        format!("# Title\n\nIntro.\n\n## Appendix A: first\n\n{a}\n## Appendix B: second\n\n{b}\n## References\n\n- x\n")
    }

    #[test]
    fn takes_the_first_two_text_fences_of_each_appendix() {
        let text = readme(
            "```text\nsys A\nline 2\n```\n\nprose\n\n```text\nuser A {name}\n```\n\n```text\nthird, ignored\n```",
            "```text\nsys B\n```\n```text\nuser B\n\n```",
        );
        let prompts = extract_prompts(&text).unwrap();
        assert_eq!(prompts.tool_system, "sys A\nline 2");
        assert_eq!(prompts.tool_user, "user A {name}");
        assert_eq!(prompts.coherence_system, "sys B");
        // A blank last line inside the fence is part of the prompt.
        assert_eq!(prompts.coherence_user, "user B\n");
    }

    #[test]
    fn headings_inside_fences_do_not_open_sections() {
        // The system prompt contains "## " headings of its own; they must stay in the block and
        // must not end Appendix A.
        let text = readme(
            "```text\nRole.\n\n## Dimensions\n### 1. One\n## Appendix B: fake\n```\n```text\nuser\n```",
            "```text\nsys B\n## Rules\n```\n```text\nuser B\n```",
        );
        let prompts = extract_prompts(&text).unwrap();
        assert_eq!(
            prompts.tool_system,
            "Role.\n\n## Dimensions\n### 1. One\n## Appendix B: fake"
        );
        assert_eq!(prompts.coherence_system, "sys B\n## Rules");
    }

    #[test]
    fn other_fences_are_skipped_whole() {
        let text = readme(
            "```ts\nconst x = 1;\n```\n```\nplain\n```\n```text \nsys\n```\n```json\n{}\n```\n```text\nuser\n```",
            "```text\ns\n```\n```text\nu\n```",
        );
        let prompts = extract_prompts(&text).unwrap();
        // Trailing spaces after the info string still open a text fence.
        assert_eq!(prompts.tool_system, "sys");
        assert_eq!(prompts.tool_user, "user");
    }

    #[test]
    fn a_fence_opening_with_more_than_text_is_not_a_text_fence() {
        let text = readme(
            "```text title=x\nnot this\n```\n```text\nsys\n```\n```text\nuser\n```",
            "```text\ns\n```\n```text\nu\n```",
        );
        let prompts = extract_prompts(&text).unwrap();
        assert_eq!(prompts.tool_system, "sys");
    }

    #[test]
    fn crlf_line_ends_give_the_same_prompts() {
        let lf = readme(
            "```text\nsys\nmore\n```\n```text\nuser\n```",
            "```text\ns\n```\n```text\nu\n```",
        );
        let crlf = lf.replace('\n', "\r\n");
        assert_eq!(
            extract_prompts(&lf).unwrap(),
            extract_prompts(&crlf).unwrap()
        );
    }

    #[test]
    fn missing_appendix_is_named() {
        let text = "## Appendix A: x\n```text\na\n```\n```text\nb\n```\n";
        assert_eq!(
            extract_prompts(text),
            Err(ExtractError::MissingSection {
                appendix: "Appendix B"
            })
        );
    }

    #[test]
    fn missing_second_block_names_the_user_prompt() {
        let text = readme("```text\nsys\n```", "```text\ns\n```\n```text\nu\n```");
        let err = extract_prompts(&text).unwrap_err();
        assert_eq!(
            err,
            ExtractError::MissingBlock {
                appendix: "Appendix A",
                found: 1,
                missing: PromptKey::ToolUser
            }
        );
        assert!(err.to_string().contains("tool_user"), "{err}");
        let none = readme("no blocks", "```text\ns\n```\n```text\nu\n```");
        assert!(matches!(
            extract_prompts(&none),
            Err(ExtractError::MissingBlock {
                missing: PromptKey::ToolSystem,
                found: 0,
                ..
            })
        ));
    }

    #[test]
    fn duplicate_appendix_is_refused() {
        let text = format!(
            "{}\n## Appendix A (again)\n```text\nx\n```\n",
            readme(
                "```text\na\n```\n```text\nb\n```",
                "```text\nc\n```\n```text\nd\n```"
            )
        );
        assert!(matches!(
            extract_prompts(&text),
            Err(ExtractError::AmbiguousSection {
                appendix: "Appendix A",
                ..
            })
        ));
    }

    #[test]
    fn unclosed_fence_is_refused() {
        // The README ends inside the coherence user block: the download is truncated.
        let text = "## Appendix A: x\n```text\nsys\n```\n```text\nuser\n```\n## Appendix B: y\n```text\ns\n```\n```text\nu";
        assert_eq!(
            extract_prompts(text),
            Err(ExtractError::UnclosedFence {
                appendix: "Appendix B",
                line: 12
            })
        );
    }

    #[test]
    fn hash_covers_the_joined_lines_without_trailing_newline() {
        let text = readme(
            "```text\nab\n```\n```text\nc\n```",
            "```text\nd\n```\n```text\ne\n```",
        );
        let prompts = extract_prompts(&text).unwrap();
        // sha256("ab")
        assert_eq!(
            prompts.sha256(PromptKey::ToolSystem),
            "fb8e20fc2e4c3f248c60c39bd652f3c1347298bb977b8b4d5903b85055620603"
        );
    }
}
