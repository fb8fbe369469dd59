//! Following `nextCursor` through every page of a list: `tools/list`,
//! `resources/list`, `resources/templates/list`, `prompts/list`.
//!
//! One loop for all of them, with the same guards: a cursor the server
//! repeats is [`Error::CursorLoop`] (a server stuck on one page would
//! otherwise be asked for ever), and at most [`MAX_PAGES`] pages are
//! followed (a server whose cursors never repeat and never end). An empty
//! cursor counts as the end, as a missing one does.

use std::collections::HashSet;
use std::future::Future;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::Error;

/// The most pages of one list followed before giving up.
pub(crate) const MAX_PAGES: usize = 10_000;

/// One page of a list method's answer: its items and the cursor of the
/// next page, if any.
pub(crate) trait Page: DeserializeOwned {
    /// What the list holds.
    type Item;

    /// The items, and the next cursor.
    fn into_parts(self) -> (Vec<Self::Item>, Option<String>);

    /// The parameters asking for the page at `cursor` (the first page when
    /// `None`).
    fn params(cursor: Option<&str>) -> impl Serialize + '_ {
        CursorParams { cursor }
    }
}

/// The parameters of a list request: only the cursor, after the first page.
#[derive(Serialize)]
pub(crate) struct CursorParams<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cursor: Option<&'a str>,
}

/// The paging loop itself, over any way of fetching a page (`fetch` is
/// given the cursor of the page it is to fetch).
pub(crate) async fn follow<T, F, Fut>(
    method: &'static str,
    max_pages: usize,
    mut fetch: F,
) -> Result<Vec<T>, Error>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<String>), Error>>,
{
    let mut items = Vec::new();
    let mut seen = HashSet::new();
    let mut cursor: Option<String> = None;
    for _ in 0..max_pages {
        let (page, next) = fetch(cursor.take()).await?;
        items.extend(page);
        match next {
            None => return Ok(items),
            Some(next) if next.is_empty() => return Ok(items),
            Some(next) => {
                if !seen.insert(next.clone()) {
                    return Err(Error::CursorLoop {
                        operation: method.to_owned(),
                        cursor: next,
                    });
                }
                cursor = Some(next);
            }
        }
    }
    Err(Error::invalid_response(
        method,
        format!("more than {max_pages} pages; stopped paging"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Serves `pages` (items, next cursor) in order, recording the cursors
    /// asked for.
    async fn run(
        pages: Vec<(Vec<u32>, Option<&'static str>)>,
        max_pages: usize,
    ) -> (Result<Vec<u32>, Error>, Vec<Option<String>>) {
        let mut asked = Vec::new();
        let mut pages = pages.into_iter();
        let result =
            follow("things/list", max_pages, |cursor| {
                asked.push(cursor);
                let page = pages
                    .next()
                    .map(|(items, next)| (items, next.map(str::to_owned)));
                async move {
                    page.ok_or_else(|| Error::invalid_response("things/list", "no more pages"))
                }
            })
            .await;
        (result, asked)
    }

    #[tokio::test]
    async fn follows_every_cursor_to_the_end() {
        let (result, asked) = run(
            vec![
                (vec![1], Some("b")),
                (vec![2, 3], Some("c")),
                (vec![4], None),
            ],
            10,
        )
        .await;
        assert_eq!(result.expect("listed"), [1, 2, 3, 4]);
        assert_eq!(asked, [None, Some("b".into()), Some("c".into())]);
    }

    #[tokio::test]
    async fn an_empty_cursor_is_the_end() {
        let (result, asked) = run(vec![(vec![1], Some(""))], 10).await;
        assert_eq!(result.expect("listed"), [1]);
        assert_eq!(asked.len(), 1);
    }

    #[tokio::test]
    async fn a_repeated_cursor_is_a_loop_naming_the_list() {
        let (result, asked) = run(
            vec![
                (vec![1], Some("a")),
                (vec![2], Some("b")),
                (vec![3], Some("a")),
            ],
            10,
        )
        .await;
        let error = result.expect_err("a loop");
        assert!(
            matches!(&error, Error::CursorLoop { operation, cursor } if operation == "things/list" && cursor == "a"),
            "{error:?}"
        );
        assert!(
            error.to_string().starts_with("mcp: things/list: "),
            "{error}"
        );
        assert_eq!(asked.len(), 3);
    }

    #[tokio::test]
    async fn paging_stops_after_the_page_limit() {
        let pages = ["1", "2", "3", "4"]
            .into_iter()
            .map(|next| (vec![0], Some(next)))
            .collect();
        let (result, asked) = run(pages, 3).await;
        let error = result.expect_err("too many pages");
        assert!(error.to_string().contains("more than 3 pages"), "{error}");
        assert_eq!(asked.len(), 3);
    }
}
