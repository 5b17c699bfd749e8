//! Scalar tracks: a mesh's morph-target weights (or, from FBX, a node's custom property
//! curve: one value, no geometry) over a clip, as the source keys them
//! ([`ScalarTrack`]) and as a `.skp` stores them after compression ([`StoredScalarTrack`],
//! docs/FORMAT.md record 5).

/// A source curve of `targets` weights per key, linear between its keys.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScalarTrack {
    /// The node whose mesh the weights drive (a property curve: `NODE.PROPERTY`).
    pub name: String,
    pub targets: usize,
    /// Key times, seconds from the clip's frame 0, increasing.
    pub times: Vec<f32>,
    /// `times.len() × targets` weights, key by key.
    pub values: Vec<f32>,
    /// Per target, the largest distance (scene units) one unit of its weight moves a vertex;
    /// 0 for a target without geometry (held to the settings' `[curves."NAME"] tolerance`,
    /// else `weight_tolerance`).
    pub reach: Vec<f32>,
}

impl ScalarTrack {
    /// The keys of `self` between `from` and `to` seconds (values at the ends interpolated),
    /// with times from `from`: a take cut from a longer clip.
    pub fn cut(&self, from: f32, to: f32) -> Self {
        let n = self.targets;
        let at = |t: f32| -> Vec<f32> {
            let j = self.times.partition_point(|&x| x <= t);
            if j == 0 || j == self.times.len() {
                let k = j.saturating_sub(1);
                return self.values[k * n..(k + 1) * n].to_vec();
            }
            let (a, b) = (j - 1, j);
            let u = (t - self.times[a]) / (self.times[b] - self.times[a]);
            (0..n)
                .map(|i| {
                    let (va, vb) = (self.values[a * n + i], self.values[b * n + i]);
                    va + (vb - va) * u
                })
                .collect()
        };
        let mut times = vec![0.0];
        let mut values = at(from);
        for (k, &t) in self.times.iter().enumerate() {
            if t > from && t < to {
                times.push(t - from);
                values.extend_from_slice(&self.values[k * n..(k + 1) * n]);
            }
        }
        if to > from {
            times.push(to - from);
            values.extend(at(to));
        }
        Self {
            times,
            values,
            ..self.clone()
        }
    }
}

/// How a stored scalar track's values are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ScalarStorage {
    /// The source's floats.
    Float,
    /// Normalized unsigned 16-bit (`round(w × 65535)`), for weights in `[0, 1]`.
    Unorm16,
}

/// A compressed scalar track: the keys kept, their values as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredScalarTrack {
    pub name: String,
    pub targets: usize,
    /// Kept key times, seconds from frame 0, increasing.
    pub times: Vec<f32>,
    /// `times.len() × targets` values: floats, or for [`ScalarStorage::Unorm16`] the stored
    /// integers (0 to 65535) as floats.
    pub values: Vec<f32>,
    pub storage: ScalarStorage,
    /// The largest vertex displacement (scene units) the stored keys cause against the
    /// source, at every source key and midpoint.
    pub max_error: f32,
}

impl StoredScalarTrack {
    /// The values as the runtime decodes them (unorm16 divided back to weights).
    pub fn decoded(&self) -> Vec<f32> {
        match self.storage {
            ScalarStorage::Float => self.values.clone(),
            ScalarStorage::Unorm16 => self.values.iter().map(|v| v / 65535.0).collect(),
        }
    }
}
