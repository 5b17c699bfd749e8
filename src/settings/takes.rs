//! Takes split into clips: a long take (a mocap session, an FBX stack holding several
//! moves) cut into named pieces by frame ranges, from the sidecar
//! (`[takes.Attack] source = "Take 001", start = 12, end = 88`) or the command line
//! (`--take Attack=Take 001:12-88`). Each piece becomes a clip of its own — its own
//! `[clips.NAME]` settings, events and report — and the source take stays as it is.
//!
//! `start` and `end` are frames of the source clip at its sample rate, both included:
//! the piece's frame 0 is the source's frame `start`, its last frame the source's `end`
//! (so a piece `0-10` has 11 frames, and pieces `0-10`, `10-20` share frame 10, as a
//! DCC's in / out points do).

use serde::{Deserialize, Serialize};

use super::Settings;
use crate::import::Asset;
use crate::model::Clip;

/// One piece of a take, as the sidecar writes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TakeSettings {
    /// The clip (take) the piece is cut from.
    pub source: String,
    /// First frame of the source in the piece.
    pub start: u32,
    /// Last frame of the source in the piece (included).
    pub end: u32,
    /// The piece loops (as `[clips.NAME] looping`, which wins when both are set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub looping: Option<bool>,
}

/// Parses `NAME=SOURCE:START-END` (the `--take` flag) into a name and a piece.
pub fn parse_flag(text: &str) -> Result<(String, TakeSettings), String> {
    let bad =
        || format!("--take '{text}': expected NAME=SOURCE:START-END, e.g. Attack=Take 001:12-88");
    let (name, rest) = text.split_once('=').ok_or_else(bad)?;
    let (source, range) = rest.rsplit_once(':').ok_or_else(bad)?;
    let (a, b) = range.split_once('-').ok_or_else(bad)?;
    let (start, end) = (
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    );
    if name.is_empty() || source.is_empty() {
        return Err(bad());
    }
    Ok((
        name.to_owned(),
        TakeSettings {
            source: source.to_owned(),
            start,
            end,
            looping: None,
        },
    ))
}

/// The piece `t` of `source` named `name` (frames `start..=end`, events inside shifted).
fn cut(source: &Clip, name: &str, t: &TakeSettings) -> Clip {
    let (a, b) = (t.start as usize, t.end as usize);
    let mut piece = source.clone();
    piece.name = name.to_owned();
    piece.frame_count = b - a + 1;
    piece.start_time = (source.start_time as f64 + a as f64 / source.sample_rate as f64) as f32;
    for tr in &mut piece.tracks {
        tr.translations = tr.translations[a..=b].to_vec();
        tr.rotations = tr.rotations[a..=b].to_vec();
        tr.scales = tr.scales[a..=b].to_vec();
    }
    let (t0, t1) = (a as f32 / source.sample_rate, b as f32 / source.sample_rate);
    piece.events = source
        .events
        .iter()
        .filter(|e| e.time >= t0 - 1e-6 && e.time <= t1 + 1e-6)
        .map(|e| {
            let mut e = e.clone();
            e.time = (e.time - t0).clamp(0.0, t1 - t0);
            e
        })
        .collect();
    piece.scalar_tracks = source.scalar_tracks.iter().map(|s| s.cut(t0, t1)).collect();
    piece
}

/// Adds every take's pieces to `asset` as clips (after the source clips, in name order)
/// and writes each piece's `looping` into `settings` where its `[clips.NAME]` does not
/// set it. A one-line error names the take: a source the file does not have, a range
/// outside it or empty, a name already used by a clip.
pub fn split(asset: &mut Asset, settings: &mut Settings) -> Result<(), String> {
    for (name, t) in &settings.takes {
        let where_ = format!("takes.\"{name}\"");
        if asset.clips.iter().any(|c| &c.name == name) {
            return Err(format!("{where_}: a clip named '{name}' already exists"));
        }
        let Some(source) = asset.clips.iter().find(|c| c.name == t.source) else {
            return Err(format!(
                "{where_}: source '{}' is not a clip of the file",
                t.source
            ));
        };
        let last = source.frame_count.saturating_sub(1);
        if t.start >= t.end || t.end as usize > last {
            return Err(format!(
                "{where_}: frames {}-{} are not a range inside '{}' (frames 0-{last})",
                t.start, t.end, t.source
            ));
        }
        let piece = cut(source, name, t);
        asset.clips.push(piece);
    }
    let looping: Vec<(String, bool)> = settings
        .takes
        .iter()
        .filter_map(|(n, t)| t.looping.map(|l| (n.clone(), l)))
        .collect();
    for (n, l) in looping {
        let c = settings.clips.entry(n).or_default();
        c.looping.get_or_insert(l);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_is_parsed_and_bad_ones_named() {
        let (n, t) = parse_flag("Attack=Take 001:12-88").unwrap();
        assert_eq!(n, "Attack");
        assert_eq!((t.source.as_str(), t.start, t.end), ("Take 001", 12, 88));
        // A source name holding a colon: the range is after the last one.
        assert_eq!(parse_flag("a=x:y:1-2").unwrap().1.source, "x:y");
        for bad in ["Attack", "Attack=Take:1", "=T:1-2", "A=T:x-2", "A=:1-2"] {
            assert!(parse_flag(bad).unwrap_err().contains(bad), "{bad}");
        }
    }
}
