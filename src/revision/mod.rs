//! Revisions: resolving `--base` / `--head` with git2 and checking them out into detached
//! temporary worktrees that leave nothing behind.
