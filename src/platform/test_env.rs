//! An environment made of fixed pairs, for unit tests of code that reads variables through a
//! function (so a test never touches the process's own environment).

/// The value of `name` among `pairs`, as `std::env::var` would give it; unset when absent.
pub(crate) fn of_pairs<'a>(
    pairs: &'a [(&'a str, &'a str)],
) -> impl Fn(&str) -> Option<String> + 'a {
    move |name| {
        pairs
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
    }
}
