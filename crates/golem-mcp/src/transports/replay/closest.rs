//! What an unmatched request is told: the recorded request nearest to it,
//! by edit distance over bounded texts.

/// How many characters of each text are compared: the work per pair is
/// the product of the two lengths.
const COMPARED_CHARS: usize = 2000;

/// How many distinct candidates are compared at most: a recording of a
/// million calls of one tool must not make an error slow.
const MAX_CANDIDATES: usize = 1000;

/// How many characters of params an error message shows.
const SHOWN_CHARS: usize = 200;

/// The index of the candidate nearest to `wanted` (the first of equals),
/// `None` when there is none.
pub(crate) fn nearest<'a>(
    wanted: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<usize> {
    let wanted: Vec<char> = wanted.chars().take(COMPARED_CHARS).collect();
    let mut seen: Vec<&str> = Vec::new();
    let mut best: Option<(usize, usize)> = None;
    for (index, candidate) in candidates.into_iter().enumerate() {
        if seen.len() >= MAX_CANDIDATES {
            break;
        }
        if seen.contains(&candidate) {
            continue;
        }
        seen.push(candidate);
        let candidate: Vec<char> = candidate.chars().take(COMPARED_CHARS).collect();
        let ceiling = best.map_or(usize::MAX, |(_, distance)| distance.saturating_sub(1));
        if let Some(distance) = distance_within(&wanted, &candidate, ceiling) {
            best = Some((index, distance));
            if distance == 0 {
                break;
            }
        }
    }
    best.map(|(index, _)| index)
}

/// The edit distance (insertions, deletions, substitutions) between `a`
/// and `b`, or `None` once it is known to exceed `ceiling`.
fn distance_within(a: &[char], b: &[char], ceiling: usize) -> Option<usize> {
    // The length difference alone is a lower bound.
    if a.len().abs_diff(b.len()) > ceiling {
        return None;
    }
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, &from) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, &to) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(from != to);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        // Every path to the end crosses this row.
        if current.iter().min().is_some_and(|&least| least > ceiling) {
            return None;
        }
        std::mem::swap(&mut previous, &mut current);
    }
    Some(previous[b.len()]).filter(|&distance| distance <= ceiling)
}

/// `text` cut after [`SHOWN_CHARS`] characters, marked with `…` when cut.
pub(crate) fn shown(text: &str) -> String {
    match text.char_indices().nth(SHOWN_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn distance(a: &str, b: &str) -> Option<usize> {
        let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
        distance_within(&a, &b, usize::MAX)
    }

    #[test]
    fn edit_distance_counts_single_character_edits() {
        assert_eq!(distance("", ""), Some(0));
        assert_eq!(distance("kitten", "sitting"), Some(3));
        assert_eq!(distance("tools/list", "tools/call"), Some(4));
        assert_eq!(distance("é", "e"), Some(1));
        let (a, b): (Vec<char>, Vec<char>) =
            ("abcdef".chars().collect(), "uvwxyz".chars().collect());
        assert_eq!(distance_within(&a, &b, 3), None);
    }

    #[test]
    fn the_nearest_is_the_first_of_the_least_distant() {
        let candidates = [
            "{\"name\":\"echo\"}",
            "{\"name\":\"add\"}",
            "{\"name\":\"echo\"}",
        ];
        assert_eq!(nearest("{\"name\":\"ecko\"}", candidates), Some(0));
        assert_eq!(nearest("{\"name\":\"ad\"}", candidates), Some(1));
        assert_eq!(nearest("x", []), None);
    }

    #[test]
    fn long_texts_are_shown_cut() {
        assert_eq!(shown("short"), "short");
        let long = "é".repeat(250);
        assert_eq!(shown(&long), format!("{}…", "é".repeat(200)));
    }
}
