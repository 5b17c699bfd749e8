//! Segment tables: how both layouts find the segment holding a frame ([`crate::keys`],
//! [`crate::prepared`]). A track's table has one entry per block of `2^shift` frames: the
//! segment holding the block's first frame and, in *dense* tables (blocks of
//! [`DENSE_FRAMES`] frames), 2 bits per further frame saying how many segments past it that
//! frame lies, so one read gives any frame's segment. A table never has more entries than
//! [`entry_budget`] allows for the track's key count, so the memory it takes is bounded by
//! the keys the file holds, not by the frame count it declares: a *sparse* table (fewer
//! keys than one per [`FRAMES_PER_KEY_DENSE`] frames, on a long clip) has larger blocks and
//! steps forward from the block's segment over the keys inside the block (on average under
//! one, since such a table has more entries than keys).

/// Frames per entry of a dense table: every further frame's offset fits 2 bits, as keys sit
/// on distinct frames.
pub const DENSE_FRAMES: u32 = 4;
/// `log2(DENSE_FRAMES)`.
pub const DENSE_SHIFT: u32 = 2;
/// Bits holding a dense entry's offsets.
pub const OFFSET_BITS: u32 = 2 * (DENSE_FRAMES - 1);
/// Entries a table may have per key of its track.
pub const ENTRIES_PER_KEY: u64 = 16;
/// Entries any table may have (a short clip keeps dense tables whatever its key counts).
pub const MIN_ENTRY_BUDGET: u64 = 256;
/// Tracks with at least one key per this many frames always get dense tables.
pub const FRAMES_PER_KEY_DENSE: u64 = DENSE_FRAMES as u64 * ENTRIES_PER_KEY;

/// Entries a table of a track with `keys` keys may hold.
pub fn entry_budget(keys: usize) -> u64 {
    (keys as u64 * ENTRIES_PER_KEY).max(MIN_ENTRY_BUDGET)
}

/// `log2` of the frames per entry of the table of a track with `keys` keys in a clip of
/// `frame_count` frames: the smallest (from [`DENSE_SHIFT`]) within [`entry_budget`].
pub fn table_shift(frame_count: u32, keys: usize) -> u32 {
    let budget = entry_budget(keys);
    let mut shift = DENSE_SHIFT;
    while u64::from(frame_count).div_ceil(1 << shift) > budget {
        shift += 1;
    }
    shift
}

/// The entries of a table with blocks of `2^shift` frames over `frame_count` frames, for a
/// track keyed on `frames` (strictly increasing, from 0 to the clip's last frame): per
/// block, the segment holding its first frame (the last key at or before it, at most the
/// second-to-last key) and, for a dense table, the offsets (2 bits per further frame `k`
/// of the block at bits `2 (k - 1)`; zero for a sparse table).
pub fn entries(frames: &[u32], frame_count: u32, shift: u32) -> impl Iterator<Item = (u32, u32)> {
    let n = frames.len();
    let mut s = 0;
    let mut segment = move |f: u32| {
        while s + 2 < n && frames[s + 1] <= f {
            s += 1;
        }
        s as u32
    };
    let blocks = u64::from(frame_count).div_ceil(1 << shift) as u32;
    (0..blocks).map(move |block| {
        let f = block << shift;
        let start = segment(f);
        let mut offsets = 0;
        if shift == DENSE_SHIFT {
            for k in 1..DENSE_FRAMES {
                offsets |= (segment(f + k) - start) << (2 * (k - 1));
            }
        }
        (start, offsets)
    })
}

/// Offset of frame `fi` past its dense block's first segment, from the block's offsets.
#[inline(always)]
pub fn dense_offset(offsets: u32, fi: u32) -> u32 {
    // Frame k of the block lies `(offsets >> 2 (k - 1)) & 3` segments past its first.
    ((offsets << 2) >> (2 * (fi % DENSE_FRAMES))) & 3
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The segment of frame `f` by search.
    fn segment_of(frames: &[u32], f: u32) -> u32 {
        let last = frames.len() as u32 - 2;
        (frames.iter().rposition(|&k| k <= f).unwrap() as u32).min(last)
    }

    /// Looks `f` up the way the layouts do: the block's segment, then its offset (dense)
    /// or a forward step over the keys (sparse).
    fn look_up(table: &[(u32, u32)], frames: &[u32], shift: u32, f: u32) -> u32 {
        let (start, offsets) = table[(f >> shift) as usize];
        if shift == DENSE_SHIFT {
            return start + dense_offset(offsets, f);
        }
        let mut s = start as usize;
        while s + 2 < frames.len() && frames[s + 1] <= f {
            s += 1;
        }
        s as u32
    }

    #[test]
    fn every_frame_finds_its_segment_in_dense_and_sparse_tables() {
        let cases: Vec<(Vec<u32>, u32)> = vec![
            ((0..40).map(|i| i + 2 * u32::from(i > 20)).collect(), 42),
            ((0..40).map(|i| i * 3).collect(), 118),
            (vec![0, 1, 2, 3, 4, 5, 6000, 9_999], 10_000),
            (vec![0, 4_999, 5_000, 5_001, 5_002, 9_999], 10_000),
            (vec![0, 1], 2),
        ];
        for (frames, frame_count) in cases {
            for shift in [DENSE_SHIFT, 3, 7, table_shift(frame_count, frames.len())] {
                let table: Vec<_> = entries(&frames, frame_count, shift).collect();
                for f in 0..frame_count {
                    let got = look_up(&table, &frames, shift, f);
                    assert_eq!(
                        got,
                        segment_of(&frames, f),
                        "{frames:?} shift {shift} f {f}"
                    );
                }
            }
        }
    }

    #[test]
    fn tables_stay_within_their_budget_and_short_clips_stay_dense() {
        // A 2-key track declaring the largest frame count the format allows.
        let shift = table_shift(crate::payload::MAX_FRAMES, 2);
        let len = entries(
            &[0, crate::payload::MAX_FRAMES - 1],
            crate::payload::MAX_FRAMES,
            shift,
        )
        .count() as u64;
        assert!(len <= entry_budget(2), "{len} entries");
        assert_eq!(table_shift(1024, 2), DENSE_SHIFT);
        assert_eq!(table_shift(64_000, 1_000), DENSE_SHIFT);
        assert!(table_shift(64_000, 999) > DENSE_SHIFT);
    }
}
