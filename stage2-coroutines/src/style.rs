//! Which of the two fetchers to run: the hand-written state machines or the
//! `async fn`s. They do the same thing, step for step; the crawler's tests
//! check that they find the same pages and the same errors.

use std::fmt;
use std::str::FromStr;

use url::Url;

use crate::error::FetchError;
use crate::{async_fetch, machines};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
/// Which of the two fetchers to run.
pub enum Style {
    /// [`machines::Fetch`]: enums that implement `Future` by hand.
    #[default]
    StateMachine,
    /// [`async_fetch::fetch`]: the same, written with `async fn` and `.await`.
    Async,
}

impl Style {
    /// Both styles, in the order the tests try them.
    pub const ALL: [Style; 2] = [Style::StateMachine, Style::Async];
}

impl fmt::Display for Style {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Style::StateMachine => "state-machine",
            Style::Async => "async",
        })
    }
}

impl FromStr for Style {
    type Err = String;

    fn from_str(s: &str) -> Result<Style, String> {
        Style::ALL
            .into_iter()
            .find(|style| style.to_string() == s)
            .ok_or_else(|| format!("unknown style {s:?}: expected state-machine or async"))
    }
}

// ANCHOR: fetch
/// Fetches `url` with the fetcher `style` names.
pub async fn fetch(url: &Url, style: Style) -> Result<Vec<u8>, FetchError> {
    match style {
        Style::StateMachine => machines::Fetch::new(url.clone()).await,
        Style::Async => async_fetch::fetch(url).await,
    }
}
// ANCHOR_END: fetch

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for style in Style::ALL {
            assert_eq!(style.to_string().parse::<Style>(), Ok(style));
        }
        assert_eq!(
            "generator".parse::<Style>(),
            Err("unknown style \"generator\": expected state-machine or async".to_string())
        );
    }
}
