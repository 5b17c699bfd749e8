//! `--shard I/N`: a deterministic share of a batch's clips, chosen by hashing each clip's file
//! path and name (not its position), so a share keeps its clips when files are added.

use sha2::{Digest, Sha256};

/// Share `index` of `count` (0 ≤ index < count).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl std::str::FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let err = || format!("'{s}': a shard is I/N with 0 <= I < N (e.g. 0/4)");
        let (i, n) = s.split_once('/').ok_or_else(err)?;
        let index: u64 = i.trim().parse().map_err(|_| err())?;
        let count: u64 = n.trim().parse().map_err(|_| err())?;
        if count == 0 || index >= count {
            return Err(err());
        }
        Ok(Self { index, count })
    }
}

impl Shard {
    /// Whether clip `clip` of file `file` (the path as the batch listed it) is in this share.
    pub fn takes(&self, file: &str, clip: &str) -> bool {
        let mut h = Sha256::new();
        h.update(file.replace('\\', "/").as_bytes());
        h.update([0]);
        h.update(clip.as_bytes());
        let d = h.finalize();
        let v = u64::from_le_bytes(d[..8].try_into().expect("8 bytes"));
        v % self.count == self.index
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_clip_is_in_exactly_one_share() {
        let shards: Vec<Shard> = (0..4).map(|i| format!("{i}/4").parse().unwrap()).collect();
        let mut counts = [0usize; 4];
        for f in 0..50 {
            for c in 0..8 {
                let (file, clip) = (format!("lib/f{f}.glb"), format!("clip{c}"));
                let owners: Vec<usize> =
                    (0..4).filter(|&s| shards[s].takes(&file, &clip)).collect();
                assert_eq!(owners.len(), 1, "{file} {clip}");
                counts[owners[0]] += 1;
            }
        }
        // 400 clips: each share holds a fair part of them.
        assert!(
            counts.iter().all(|&n| (60..=140).contains(&n)),
            "{counts:?}"
        );
        assert!("4/4".parse::<Shard>().is_err());
        assert!("1/0".parse::<Shard>().is_err());
        assert!("x".parse::<Shard>().is_err());
    }
}
