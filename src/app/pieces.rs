//! The open document's clips with its takes' pieces cut (`settings::takes`): the app keeps
//! the file's own clips and cuts the pieces again whenever `[takes.*]` changes (a piece
//! created, trimmed, or an undo of either), so each piece is a clip with its own settings,
//! events and result while the source take stays as it is.

use crate::import::Asset;
use crate::settings::Settings;
use crate::settings::takes::TakeSettings;

/// `base` with the pieces of `settings.takes` appended, or `base` alone and why the takes
/// could not be cut (a source the file lacks, a range outside it, a name in use).
pub fn cut(base: &Asset, settings: &Settings) -> (Asset, Option<String>) {
    if settings.takes.is_empty() {
        return (base.clone(), None);
    }
    let mut asset = base.clone();
    let mut s = settings.clone();
    match crate::settings::takes::split(&mut asset, &mut s) {
        Ok(()) => (asset, None),
        Err(e) => (base.clone(), Some(e)),
    }
}

/// `settings` as a piece's clip resolves them: a take's `looping` applies to its piece
/// unless `[clips.NAME] looping` says otherwise (as `takes::split` does for the CLI).
pub fn effective(settings: &Settings) -> std::borrow::Cow<'_, Settings> {
    let missing = |(n, t): (&String, &TakeSettings)| {
        t.looping.is_some() && settings.clips.get(n).is_none_or(|c| c.looping.is_none())
    };
    if !settings.takes.iter().any(missing) {
        return std::borrow::Cow::Borrowed(settings);
    }
    let mut s = settings.clone();
    for (n, t) in &settings.takes {
        if let Some(l) = t.looping {
            s.clips
                .entry(n.clone())
                .or_default()
                .looping
                .get_or_insert(l);
        }
    }
    std::borrow::Cow::Owned(s)
}

/// A name for a new piece that no clip or take of the document uses yet (`stem`, then
/// `stem 2`, `stem 3`, ...).
pub fn free_name(asset: &Asset, settings: &Settings, stem: &str) -> String {
    let used = |n: &str| asset.clips.iter().any(|c| c.name == n) || settings.takes.contains_key(n);
    if !used(stem) {
        return stem.to_owned();
    }
    (2..)
        .map(|i| format!("{stem} {i}"))
        .find(|n| !used(n))
        .expect("a free name")
}
