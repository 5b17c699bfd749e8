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
    /// The character's height: the median over the measured poses of each pose's own Y
    /// extent (a jump or a walk across the scene does not make the character taller).
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
        let mut heights = Vec::new();
        let mut grow = |obj: &[Affine3A]| {
            let (mut y0, mut y1) = (f32::INFINITY, f32::NEG_INFINITY);
            for m in obj {
                let p = Vec3::from(m.translation);
                if p.is_finite() {
                    lo = lo.min(p);
                    hi = hi.max(p);
                    y0 = y0.min(p.y);
                    y1 = y1.max(p.y);
                }
            }
            if y0 <= y1 {
                heights.push(y1 - y0);
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
        heights.sort_by(f32::total_cmp);
        let height = heights.get(heights.len() / 2).copied().unwrap_or(0.0);
        let size = if lo.x <= hi.x { hi - lo } else { Vec3::ZERO };
        let extent = size.max_element();
        let unit = if extent > Self::METRE_MAX_EXTENT {
            LengthUnit::Centimetre
        } else {
            LengthUnit::Metre
        };
        Self {
            extent,
            height,
            unit,
        }
    }

    /// Converts metres into scene units.
    pub fn from_metres(&self, metres: f32) -> f32 {
        metres * self.unit.per_metre()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Joint;

    #[test]
    fn a_jump_does_not_make_the_character_taller() {
        // A 1.8 m pole whose root leaps 3 m up in the middle of the clip.
        let skeleton = Skeleton::new(vec![
            Joint::new("root", None, Transform::IDENTITY),
            Joint::new(
                "head",
                Some(0),
                Transform {
                    translation: Vec3::new(0.0, 1.8, 0.0),
                    ..Transform::IDENTITY
                },
            ),
        ])
        .unwrap();
        let mut clip = Clip::rest("jump", &skeleton, 30.0, 31);
        for f in 10..20 {
            clip.tracks[0].translations[f].y = 3.0;
        }
        let u = Units::measure(&skeleton, &[clip]);
        assert!((u.height - 1.8).abs() < 1e-5, "{}", u.height);
        assert!((u.extent - 4.8).abs() < 1e-5, "{}", u.extent);
        assert_eq!(u.unit, LengthUnit::Metre);
    }
}
