//! Scene units: measure a character, infer metre or centimetre.

use glam::{Affine3A, Vec3};
use serde::Serialize;

use super::{Clip, Skeleton, Transform, local_to_object};

/// The length unit a scene appears to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LengthUnit {
    Metre,
    Centimetre,
}

impl LengthUnit {
    /// How many scene units make one metre.
    pub fn per_metre(self) -> f32 {
        match self {
            Self::Metre => 1.0,
            Self::Centimetre => 100.0,
        }
    }

    pub fn symbol(self) -> &'static str {
        match self {
            Self::Metre => "m",
            Self::Centimetre => "cm",
        }
    }

    /// Parses "m" / "cm" (and long forms).
    pub fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "m" | "metre" | "meter" | "metres" | "meters" => Some(Self::Metre),
            "cm" | "centimetre" | "centimeter" | "centimetres" | "centimeters" => {
                Some(Self::Centimetre)
            }
            _ => None,
        }
    }
}

/// A character's measured size and the unit inferred from it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Units {
    /// The largest side of the joints' bounding box over all frames, in scene units.
    pub extent: f32,
    /// The height (Y side of that box), in scene units.
    pub height: f32,
    pub unit: LengthUnit,
}

impl Units {
    /// Largest character size still read as metres: real characters are 0.1 to 20 m tall
    /// (a 20 cm character in centimetres is rarer than a 20 m monster in metres).
    pub const METRE_MAX_EXTENT: f32 = 20.0;

    /// Measures the joints' bounding box over the rest pose and every frame of `clips`.
    pub fn measure(skeleton: &Skeleton, clips: &[Clip]) -> Self {
        let n = skeleton.len();
        let mut obj = vec![Affine3A::IDENTITY; n];
        let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
        let mut grow = |obj: &[Affine3A]| {
            for m in obj {
                let p = Vec3::from(m.translation);
                if p.is_finite() {
                    lo = lo.min(p);
                    hi = hi.max(p);
                }
            }
        };
        local_to_object(skeleton, &skeleton.rest_pose(), &mut obj);
        grow(&obj);
        let mut local = vec![Transform::IDENTITY; n];
        for clip in clips {
            // At most ~64 frames per clip: enough for a bounding box.
            let step = (clip.frame_count / 64).max(1);
            for f in (0..clip.frame_count).step_by(step) {
                clip.sample_local(f as f32, &mut local);
                local_to_object(skeleton, &local, &mut obj);
                grow(&obj);
            }
        }
        let size = if lo.x <= hi.x { hi - lo } else { Vec3::ZERO };
        let extent = size.max_element();
        let unit = if extent > Self::METRE_MAX_EXTENT {
            LengthUnit::Centimetre
        } else {
            LengthUnit::Metre
        };
        Self {
            extent,
            height: size.y,
            unit,
        }
    }

    /// Converts metres into scene units.
    pub fn from_metres(&self, metres: f32) -> f32 {
        metres * self.unit.per_metre()
    }
}
