//! The flag forms of two subcommands, kept for the documented usage: `tdqs-gate [FLAGS] --check
//! REPORT [FLAGS]` is `tdqs-gate check REPORT [FLAGS]`, and `--calibrate CAPTURE` is
//! `calibrate CAPTURE`.
//!
//! Clap takes `--check` as a subcommand only in the first place (`long_flag`), but the flag form
//! has always been accepted anywhere among the gate's flags (the GitHub Action appends a user's
//! `--check REPORT` to flags of its own). So before parsing, the flag and its value move to the
//! front; clap then parses the one definition of each command and refuses a flag that does not
//! apply to it, whichever order it came in.

use std::ffi::{OsStr, OsString};

use clap::CommandFactory;

use super::args::Cli;

/// The subcommands that also have a flag form.
const FLAG_FORMS: [(&str, &str); 2] = [("--check", "check"), ("--calibrate", "calibrate")];

/// `args` (the program name first) with a `--check`/`--calibrate` given among the gate's flags
/// moved to the front as its subcommand; any other command line unchanged.
pub(super) fn subcommand_first(args: Vec<OsString>) -> Vec<OsString> {
    let Some((program, rest)) = args.split_first() else {
        return args;
    };
    let takes_value = flags_taking_a_value();
    let mut index = 0;
    while index < rest.len() {
        let Some(word) = rest[index].to_str() else {
            // Not UTF-8: neither a flag form nor a flag name; clap says what is wrong with it.
            return args;
        };
        if word == "--" || !word.starts_with('-') || word == "-" {
            // The end of the flags, a subcommand, or a stray value: nothing to move.
            return args;
        }
        let (name, inline_value) = match word.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (word, None),
        };
        if let Some((_, subcommand)) = FLAG_FORMS.iter().find(|(flag, _)| *flag == name) {
            if index == 0 && inline_value.is_none() {
                // Clap takes the flag form itself in the first place.
                return args;
            }
            let mut moved: Vec<OsString> = vec![program.clone(), OsString::from(subcommand)];
            let mut after = index + 1;
            match inline_value {
                Some(value) => moved.push(OsString::from(value)),
                None => {
                    // The value, unless it is missing (clap then names the missing REPORT).
                    if let Some(value) = rest.get(after).filter(|v| !starts_with_dash(v)) {
                        moved.push(value.clone());
                        after += 1;
                    }
                }
            }
            moved.extend(rest[..index].iter().cloned());
            moved.extend(rest[after..].iter().cloned());
            return moved;
        }
        index += 1;
        if name.starts_with("--")
            && inline_value.is_none()
            && takes_value.iter().any(|flag| flag == name)
        {
            index += 1;
        }
    }
    args
}

fn starts_with_dash(word: &OsStr) -> bool {
    word.to_str().is_some_and(|w| w.starts_with('-'))
}

/// `--name` of every flag that takes a value, of the gate and of the commands with a flag form
/// (the flags that may stand before `--check`/`--calibrate`).
fn flags_taking_a_value() -> Vec<String> {
    let command = Cli::command();
    let mut names = Vec::new();
    let mut collect = |command: &clap::Command| {
        for arg in command.get_arguments() {
            if arg.get_action().takes_values() {
                if let Some(long) = arg.get_long() {
                    names.push(format!("--{long}"));
                }
            }
        }
    };
    collect(&command);
    for sub in command.get_subcommands() {
        if FLAG_FORMS.iter().any(|(_, name)| sub.get_name() == *name) {
            collect(sub);
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moved(args: &[&str]) -> Vec<String> {
        let args = std::iter::once("tdqs-gate")
            .chain(args.iter().copied())
            .map(OsString::from)
            .collect();
        subcommand_first(args)
            .into_iter()
            .skip(1)
            .map(|w| w.into_string().unwrap())
            .collect()
    }

    #[test]
    fn the_flag_form_among_other_flags_moves_to_the_front() {
        assert_eq!(
            moved(&[
                "--base=main",
                "--judge",
                "static",
                "--check",
                "r.json",
                "-v"
            ]),
            ["check", "r.json", "--base=main", "--judge", "static", "-v"]
        );
        assert_eq!(
            moved(&["--runs", "5", "--calibrate=c.json", "--judge", "static"]),
            ["calibrate", "c.json", "--runs", "5", "--judge", "static"]
        );
        assert_eq!(moved(&["--check=r.json"]), ["check", "r.json"]);
    }

    #[test]
    fn other_command_lines_are_left_alone() {
        for args in [
            &["--check", "r.json", "--judge", "static"][..],
            &["--base", "main"],
            // A flag's value that reads like the flag form is a value.
            &["--command", "--check"],
            &["lint", "--check", "x"],
            &["--", "--check", "x"],
        ] {
            assert_eq!(moved(args), args, "{args:?}");
        }
    }

    #[test]
    fn a_missing_value_is_left_for_clap_to_name() {
        assert_eq!(moved(&["-v", "--check"]), ["check", "-v"]);
        assert_eq!(
            moved(&["-q", "--check", "--judge", "static"]),
            ["check", "-q", "--judge", "static"]
        );
    }
}
