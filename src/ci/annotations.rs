//! Line annotations for the pull request's diff: one `::warning file=…,line=…::` workflow
//! command per fallen tool whose definition (its `location` in the report) is on a line the
//! pull request changed. A fallen tool on an unchanged line (its score fell through a sibling,
//! or the judge changed its mind) gets none: GitHub shows annotations outside the diff only in
//! the run's log, where they would be noise.

use std::collections::BTreeMap;
use std::path::Path;

use tdqs_core::error::{Error, Stage};
use tdqs_core::report::model::Causes;

use super::step_outputs::{escape_data, escape_property};

/// The lines of the head that a diff added or changed: per path (relative to the repository's
/// root, `/` separators), inclusive ranges of 1-based line numbers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangedLines {
    ranges: BTreeMap<String, Vec<(u32, u32)>>,
}

impl ChangedLines {
    /// Records `count` lines from `start` of `path` as changed (nothing when `count` is 0: a
    /// hunk that only removes lines changes none of the head's).
    pub fn add(&mut self, path: &str, start: u32, count: u32) {
        if count > 0 {
            self.ranges
                .entry(path.to_string())
                .or_default()
                .push((start, start + count - 1));
        }
    }

    pub fn contains(&self, path: &str, line: u32) -> bool {
        self.ranges
            .get(path)
            .is_some_and(|r| r.iter().any(|(a, b)| (*a..=*b).contains(&line)))
    }

    /// The lines of the working tree (with the index) of the repository at `repo` that differ
    /// from `base_commit`: what a pull request's checkout changed against its base.
    pub fn since(repo: &Path, base_commit: &str) -> Result<ChangedLines, Error> {
        let fail = |what: &str, e: git2::Error| {
            Error::new(
                Stage::Revision,
                format!("cannot compute the changed lines ({what}): {}", e.message()),
            )
            .with_advice("fetch the base commit (actions/checkout with fetch-depth: 0)")
        };
        let git =
            git2::Repository::discover(repo).map_err(|e| fail("opening the repository", e))?;
        let base = git
            .revparse_single(base_commit)
            .and_then(|o| o.peel_to_tree())
            .map_err(|e| fail("reading the base commit", e))?;
        let mut options = git2::DiffOptions::new();
        options.context_lines(0);
        let diff = git
            .diff_tree_to_workdir_with_index(Some(&base), Some(&mut options))
            .map_err(|e| fail("diffing", e))?;
        let mut changed = ChangedLines::default();
        diff.foreach(
            &mut |_, _| true,
            None,
            Some(&mut |delta, hunk| {
                if let Some(path) = delta.new_file().path().and_then(Path::to_str) {
                    changed.add(&path.replace('\\', "/"), hunk.new_start(), hunk.new_lines());
                }
                true
            }),
            None,
        )
        .map_err(|e| fail("reading the diff", e))?;
        Ok(changed)
    }
}

/// One warning per fallen tool located on a changed line, in the report's order (the costliest
/// fall first). Locations are relative to the head's tree, which is the repository's root.
pub fn fallen_tool_annotations(causes: &Causes, changed: &ChangedLines) -> Vec<String> {
    causes
        .tools
        .iter()
        .filter_map(|t| {
            let at = t.location.as_ref()?;
            let path = &at.path;
            if !changed.contains(path, at.line) {
                return None;
            }
            let dimensions: Vec<String> = t
                .dimensions
                .iter()
                .map(|d| format!("{} {} → {}", d.dimension.label(), d.base, d.head))
                .collect();
            let mut message = format!("TDQS of {} fell {} → {}", t.tool, t.base, t.head);
            if !dimensions.is_empty() {
                message.push_str(&format!(" ({})", dimensions.join(", ")));
            }
            if let Some(fix) = t.dimensions.iter().find(|d| !d.fix.is_empty()) {
                message.push_str(&format!(". Fix: {}", fix.fix));
            }
            Some(format!(
                "::warning file={},line={},col={},title={}::{}",
                escape_property(path),
                at.line,
                at.column,
                escape_property(&format!("tdqs-gate: {} fell", t.tool)),
                escape_data(&message)
            ))
        })
        .collect()
}

/// The warnings for a report, reading the head's tree at `repo` (a checkout of the head: the
/// Action's workspace) as data, never running it. Nothing when the report has no fallen tool,
/// no base commit, or the checkout is not the head commit the report scored (its lines would
/// belong to other text). Files under `outputs` (the report and export folders, which quote
/// every description and would make each text ambiguous) are not read.
pub fn for_report(
    report: &tdqs_core::report::model::Report,
    repo: &Path,
    outputs: &[std::path::PathBuf],
) -> Vec<String> {
    let (Some(causes), Some(head), Some(base_commit)) = (
        report.causes.as_ref(),
        report.head.as_ref(),
        report.base_commit.as_deref(),
    ) else {
        return Vec::new();
    };
    if causes.tools.is_empty() {
        return Vec::new();
    }
    let Ok(git) = git2::Repository::discover(repo) else {
        return Vec::new();
    };
    let checked_out = git
        .head()
        .ok()
        .and_then(|h| h.peel_to_commit().ok())
        .map(|c| c.id().to_string());
    if let Some(head_commit) = report.head_commit.as_deref() {
        if checked_out.as_deref() != Some(head_commit) {
            return Vec::new();
        }
    }
    let Some(root) = git.workdir() else {
        return Vec::new();
    };
    let mut causes = causes.clone();
    if causes.tools.iter().all(|t| t.location.is_none()) {
        let Ok(tree) = crate::locate::read_tree(root, crate::locate::WalkLimits::default()) else {
            return Vec::new();
        };
        let skipped: Vec<std::path::PathBuf> = outputs
            .iter()
            .filter_map(|p| std::fs::canonicalize(p).ok())
            .collect();
        let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        let files: Vec<_> = tree
            .files
            .into_iter()
            .filter(|f| !skipped.iter().any(|s| root.join(&f.path).starts_with(s)))
            .collect();
        causes.locate_in(&tdqs_core::locate::locate_in(&files, head));
    }
    match ChangedLines::since(root, base_commit) {
        Ok(changed) => fallen_tool_annotations(&causes, &changed),
        Err(_) => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tdqs_core::arith::Tenths;
    use tdqs_core::locate::Confidence;
    use tdqs_core::report::model::{FallenTool, MinimumSide, MinimumTerm, SourceLine};

    fn causes(tools: Vec<FallenTool>) -> Causes {
        let none = MinimumSide {
            tool: None,
            tdqs: None,
        };
        Causes {
            tools,
            added: Vec::new(),
            removed: Vec::new(),
            minimum_term: MinimumTerm {
                base: none.clone(),
                head: none,
                fell: false,
            },
            coherence: Vec::new(),
        }
    }

    fn fallen(tool: &str, path: &str, line: u32) -> FallenTool {
        FallenTool {
            tool: tool.to_string(),
            base: Tenths(40),
            head: Tenths(18),
            effect: -0.55,
            effect_exact: "-11/20".to_string(),
            dimensions: Vec::new(),
            change: None,
            location: Some(SourceLine {
                path: path.to_string(),
                line,
                column: 5,
                confidence: Confidence::High,
                url: None,
            }),
        }
    }

    #[test]
    fn warns_only_on_changed_lines_with_escaped_properties() {
        let mut changed = ChangedLines::default();
        changed.add("src/server,v2.py", 10, 3);
        changed.add("other.py", 4, 0);
        let c = causes(vec![
            fallen("close_issue", "src/server,v2.py", 12),
            fallen("open_issue", "src/server,v2.py", 13),
            fallen("delete_issue", "other.py", 4),
        ]);
        assert_eq!(
            fallen_tool_annotations(&c, &changed),
            vec![
                "::warning file=src/server%2Cv2.py,line=12,col=5,title=tdqs-gate%3A close_issue fell::TDQS of close_issue fell 4.0 → 1.8"
                    .to_string()
            ]
        );
    }
}
