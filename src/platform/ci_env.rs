//! Whether the gate runs in CI, read from the environment in one place with one rule.
//!
//! **The rule for a flag variable** ([`flag_is_on`]): a variable is on when it is set to
//! anything other than an empty value, `false` or `0` (compared after trimming, ignoring case).
//! Every reading that follows is a safety one (the sandbox becomes required, an unsigned answer
//! cache is refused), so a value nobody expected (`yes`, `TRUE `, `on`) counts as on: reading it
//! as off would silently drop a defence, reading it as on at worst asks for a key or a working
//! sandbox, and says so.
//!
//! **Two questions, asked of different variables:**
//! - [`in_ci`]: any CI service (`CI`, which GitHub Actions, GitLab, CircleCI and most others
//!   set, or `GITHUB_ACTIONS`). In CI the sandbox is required, and a judge that cannot run is
//!   held until the definitions are known to differ (a pull request from a fork gets no
//!   secrets); both concern the unattended run itself, whatever the service.
//! - [`in_github_actions`]: GitHub Actions only (`GITHUB_ACTIONS`). The answer cache's folder
//!   comes back there from the runner's cache store, which a pull request's own jobs can write,
//!   so an unsigned model judge's cache is never read. That is a fact about GitHub's cache
//!   store, not about CI in general, so `CI` alone does not turn it on.
//!
//! Both take the environment as a function so tests ask them without touching the process's
//! own variables; [`process_env`] is the real one.

/// `CI`: set by GitHub Actions and most other CI services.
pub const CI: &str = "CI";
/// `GITHUB_ACTIONS`: set by GitHub's runner.
pub const GITHUB_ACTIONS: &str = "GITHUB_ACTIONS";

/// Whether a flag variable's value means on: set, and not empty, `false` or `0` (trimmed,
/// case-insensitive). See the module documentation for why anything else counts as on.
pub fn flag_is_on(value: Option<&str>) -> bool {
    value.is_some_and(|v| {
        let v = v.trim();
        !(v.is_empty() || v.eq_ignore_ascii_case("false") || v == "0")
    })
}

/// True in any CI: `CI` or `GITHUB_ACTIONS` is on by [`flag_is_on`].
pub fn in_ci(get: &dyn Fn(&str) -> Option<String>) -> bool {
    [CI, GITHUB_ACTIONS]
        .iter()
        .any(|name| flag_is_on(get(name).as_deref()))
}

/// True in GitHub Actions: `GITHUB_ACTIONS` is on by [`flag_is_on`] (`CI` alone is not enough).
pub fn in_github_actions(get: &dyn Fn(&str) -> Option<String>) -> bool {
    flag_is_on(get(GITHUB_ACTIONS).as_deref())
}

/// The gate process's own environment, for [`in_ci`] and [`in_github_actions`]. A value that is
/// not valid UTF-8 is still set, and reads as on.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::platform::test_env::of_pairs as env;

    #[test]
    fn a_flag_is_on_unless_unset_empty_false_or_zero() {
        for on in [
            "true", "TRUE", "True", " true ", "1", "yes", "on", "anything",
        ] {
            assert!(flag_is_on(Some(on)), "{on:?} should be on");
        }
        for off in ["", "  ", "false", "FALSE", " False\n", "0", " 0 "] {
            assert!(!flag_is_on(Some(off)), "{off:?} should be off");
        }
        assert!(!flag_is_on(None));
    }

    #[test]
    fn ci_is_either_variable_by_the_same_rule() {
        assert!(in_ci(&env(&[("CI", "true")])));
        assert!(in_ci(&env(&[("CI", "1")])));
        assert!(in_ci(&env(&[("GITHUB_ACTIONS", "true")])));
        assert!(in_ci(&env(&[("CI", "false"), ("GITHUB_ACTIONS", "TRUE")])));
        assert!(!in_ci(&env(&[("CI", "false")])));
        assert!(!in_ci(&env(&[("CI", "0"), ("GITHUB_ACTIONS", "")])));
        assert!(!in_ci(&env(&[])));
    }

    #[test]
    fn github_actions_is_its_own_variable_by_the_same_rule() {
        assert!(in_github_actions(&env(&[("GITHUB_ACTIONS", "true")])));
        assert!(in_github_actions(&env(&[("GITHUB_ACTIONS", "1")])));
        assert!(in_github_actions(&env(&[("GITHUB_ACTIONS", "True")])));
        // `CI` is set by every service; the cache store this guards is GitHub's.
        assert!(!in_github_actions(&env(&[("CI", "true")])));
        assert!(!in_github_actions(&env(&[("GITHUB_ACTIONS", "false")])));
        assert!(!in_github_actions(&env(&[("GITHUB_ACTIONS", "0")])));
        assert!(!in_github_actions(&env(&[])));
    }
}
