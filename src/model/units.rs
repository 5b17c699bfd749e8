//! Scene units: measure a character and infer the length unit it was made in from its
//! proportions (metre, centimetre, millimetre, inch, the CMU ASF unit, or an estimate).

use glam::{Affine3A, Vec3};
use serde::Serialize;

use super::{Clip, Skeleton, Transform, local_to_object};

/// The length unit of a scene: a named unit, or any number of scene units per metre.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LengthUnit {
    Metre,
    Centimetre,
    Millimetre,
    Inch,
    /// `n` scene units make one metre (an unusual unit, or an estimate).
    PerMetre(f32),
}

impl LengthUnit {
    /// The named units, in the order the app lists them.
    pub const NAMED: [LengthUnit; 4] =
        [Self::Metre, Self::Centimetre, Self::Millimetre, Self::Inch];

    /// How many scene units make one metre.
    pub fn per_metre(self) -> f32 {
        match self {
            Self::Metre => 1.0,
            Self::Centimetre => 100.0,
            Self::Millimetre => 1000.0,
            Self::Inch => 1.0 / 0.0254,
            Self::PerMetre(n) => n,
        }
    }

    /// A short symbol for scene-unit values ("u" for a custom unit).
    pub fn symbol(self) -> &'static str {
        match self {
            Self::Metre => "m",
            Self::Centimetre => "cm",
            Self::Millimetre => "mm",
            Self::Inch => "in",
            Self::PerMetre(_) => "u",
        }
    }

    /// The name used in settings files and reports (`metre`, ..., or `"17.7 per metre"`).
    pub fn name(self) -> String {
        match self {
            Self::Metre => "metre".into(),
            Self::Centimetre => "centimetre".into(),
            Self::Millimetre => "millimetre".into(),
            Self::Inch => "inch".into(),
            Self::PerMetre(n) => format!("{} per metre", trim_number(n)),
        }
    }

    /// Parses a unit name or symbol ("m", "cm", "mm", "in", long forms), or a plain positive
    /// number of scene units per metre.
    pub fn parse(s: &str) -> Option<Self> {
        let named = match s.trim().to_ascii_lowercase().as_str() {
            "m" | "metre" | "meter" | "metres" | "meters" => Some(Self::Metre),
            "cm" | "centimetre" | "centimeter" | "centimetres" | "centimeters" => {
                Some(Self::Centimetre)
            }
            "mm" | "millimetre" | "millimeter" | "millimetres" | "millimeters" => {
                Some(Self::Millimetre)
            }
            "in" | "inch" | "inches" => Some(Self::Inch),
            _ => None,
        };
        named.or_else(|| {
            s.trim()
                .parse::<f32>()
                .ok()
                .and_then(Self::per_metre_checked)
        })
    }

    /// `PerMetre(n)` when `n` is a usable number of scene units per metre.
    pub fn per_metre_checked(n: f32) -> Option<Self> {
        (n.is_finite() && n > 0.0).then_some(Self::PerMetre(n))
    }
}

/// Serialized as its name (`"metre"`, `"inch"`...) or, for a custom unit, as the number of
/// scene units per metre.
impl Serialize for LengthUnit {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::PerMetre(n) => s.serialize_f32(*n),
            named => s.serialize_str(&named.name()),
        }
    }
}

impl<'de> serde::Deserialize<'de> for LengthUnit {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Name(String),
            Number(f64),
        }
        let expected = "\"m\", \"cm\", \"mm\", \"inch\" or a positive number of units per metre";
        match Raw::deserialize(d)? {
            Raw::Name(s) => Self::parse(&s).ok_or_else(|| {
                serde::de::Error::custom(format!("unknown unit \"{s}\": expected {expected}"))
            }),
            Raw::Number(n) => Self::per_metre_checked(n as f32)
                .ok_or_else(|| serde::de::Error::custom(format!("unit {n}: expected {expected}"))),
        }
    }
}

/// How sure the unit inference is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    /// One unit gives a plausible size, and no other comes close.
    High,
    /// A plausible size, but another unit (or an unusual one) is close.
    Medium,
    /// No common unit gives a plausible size: the unit is an estimate; set it.
    Low,
}

/// A character's measured size and the unit inferred from it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Units {
    /// The largest side of the joints' bounding box over all frames, in scene units.
    pub extent: f32,
    /// The character's height: the median over the measured poses of each pose's own Y
    /// extent (a jump or a walk across the scene does not make the character taller).
    pub height: f32,
    /// The character's own size: the median over the poses of the largest side of each
    /// pose's bounding box (a quadruped's length, a standing person's height).
    pub size: f32,
    /// The unit inferred (or the file's declared unit when its proportions agree).
    pub unit: LengthUnit,
    pub confidence: Confidence,
    /// Whether the joint names read as a humanoid (hips, spine, head, arms, legs).
    pub humanoid: bool,
    /// Why this unit: the size it gives, and what else was close.
    pub reason: String,
}

/// The CMU motion-capture ASF length unit: `length 0.45` in the ASF header, 1/0.45 inch.
const ASF_PER_METRE: f32 = 0.45 / 0.0254;

/// Sizes (metres) read as plausible, and the typical one, per kind of character. A
/// humanoid's size is measured joint to joint (ankle to head joint), so adults are ~1.5 m.
const HUMANOID: (f32, f32, f32) = (0.8, 1.5, 2.6);
const CREATURE: (f32, f32, f32) = (0.05, 1.0, 30.0);

impl Units {
    /// Measures the joints' bounding box over the rest pose and every frame of `clips`, and
    /// infers the unit. `declared` is what the format says (glTF: metres); it is kept when
    /// the proportions allow it.
    pub fn measure(skeleton: &Skeleton, clips: &[Clip], declared: Option<LengthUnit>) -> Self {
        let (extent, height, size) = measure_sizes(skeleton, clips);
        let humanoid = is_humanoid(skeleton);
        let (unit, confidence, reason) = infer(size, humanoid, declared);
        Self {
            extent,
            height,
            size,
            unit,
            confidence,
            humanoid,
            reason,
        }
    }

    /// These units after every length of the scene was converted from `from` to metres
    /// (a scene written in metres from a source in another unit): sizes divided by
    /// `from.per_metre()`, the unit metres, the confidence the source's.
    pub fn converted_to_metres(&self, from: LengthUnit) -> Self {
        let k = 1.0 / from.per_metre();
        Self {
            extent: self.extent * k,
            height: self.height * k,
            size: self.size * k,
            unit: LengthUnit::Metre,
            confidence: self.confidence,
            humanoid: self.humanoid,
            reason: if from == LengthUnit::Metre {
                self.reason.clone()
            } else {
                format!("converted to metres from {}: {}", from.name(), self.reason)
            },
        }
    }

    /// Converts metres into scene units.
    pub fn from_metres(&self, metres: f32) -> f32 {
        metres * self.unit.per_metre()
    }

    /// A warning when `unit` (say, an override) makes this character implausibly sized.
    pub fn implausible_with(&self, unit: LengthUnit) -> Option<String> {
        let (lo, _, hi) = if self.humanoid { HUMANOID } else { CREATURE };
        let metres = self.size / unit.per_metre();
        (self.size > 0.0 && !(lo..=hi).contains(&metres)).then(|| {
            format!(
                "in {} the character is {} tall, implausible for a {} ({}-{} m)",
                unit.name(),
                format_metres(metres),
                if self.humanoid {
                    "humanoid"
                } else {
                    "character"
                },
                lo,
                hi
            )
        })
    }
}

/// (extent, height, size) in scene units over the rest pose and up to ~64 frames per clip.
fn measure_sizes(skeleton: &Skeleton, clips: &[Clip]) -> (f32, f32, f32) {
    let n = skeleton.len();
    let mut obj = vec![Affine3A::IDENTITY; n];
    let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
    let mut heights = Vec::new();
    let mut sizes = Vec::new();
    let mut grow = |obj: &[Affine3A]| {
        let (mut plo, mut phi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
        for m in obj {
            let p = Vec3::from(m.translation);
            if p.is_finite() {
                plo = plo.min(p);
                phi = phi.max(p);
            }
        }
        if plo.x <= phi.x {
            lo = lo.min(plo);
            hi = hi.max(phi);
            heights.push(phi.y - plo.y);
            sizes.push((phi - plo).max_element());
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
    let median = |mut v: Vec<f32>| {
        v.sort_by(f32::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    let extent = if lo.x <= hi.x {
        (hi - lo).max_element()
    } else {
        0.0
    };
    (extent, median(heights), median(sizes))
}

/// Joint names that read as a humanoid (or humanoid-like) rig: at least three of the body
/// parts below, the way Mixamo, CMU, DAZ, Blender and game rigs name them.
fn is_humanoid(skeleton: &Skeleton) -> bool {
    const PARTS: [&[&str]; 6] = [
        &["hip", "pelvis"],
        &["spine", "chest", "torso", "abdomen"],
        &["head", "neck"],
        &[
            "arm", "shoulder", "shldr", "elbow", "hand", "wrist", "clavicle", "collar",
        ],
        &["leg", "thigh", "knee", "shin", "calf"],
        &["foot", "ankle", "toe"],
    ];
    let names: Vec<String> = skeleton
        .joints
        .iter()
        .map(|j| j.name.to_ascii_lowercase())
        .collect();
    PARTS
        .iter()
        .filter(|words| names.iter().any(|n| words.iter().any(|w| n.contains(w))))
        .count()
        >= 4
}

/// Chooses the unit that makes a character of `size` scene units most plausibly sized.
fn infer(
    size: f32,
    humanoid: bool,
    declared: Option<LengthUnit>,
) -> (LengthUnit, Confidence, String) {
    let fallback = declared.unwrap_or(LengthUnit::Metre);
    if !(size.is_finite() && size > 0.0) {
        return (
            fallback,
            Confidence::Low,
            "the character has no size to measure".into(),
        );
    }
    let (lo, typical, hi) = if humanoid { HUMANOID } else { CREATURE };
    // A declared unit stands unless it makes the character absurd (a 108 m fox).
    if let Some(d) = declared {
        let metres = size / d.per_metre();
        if (CREATURE.0..=CREATURE.2).contains(&metres) {
            let usual = (lo..=hi).contains(&metres);
            let what = if humanoid { "humanoid" } else { "character" };
            return (
                d,
                if usual {
                    Confidence::High
                } else {
                    Confidence::Medium
                },
                if usual {
                    format!(
                        "{} in {}, as the file declares",
                        format_metres(metres),
                        d.name()
                    )
                } else {
                    format!(
                        "{} in {}, as the file declares (unusual for a {what})",
                        format_metres(metres),
                        d.name()
                    )
                },
            );
        }
    }
    let mut candidates: Vec<LengthUnit> = LengthUnit::NAMED.to_vec();
    if humanoid {
        candidates.push(LengthUnit::PerMetre(ASF_PER_METRE));
    }
    // Log distance from the typical size.
    let score = |u: LengthUnit| (size / u.per_metre() / typical).ln().abs();
    let plausible = |u: LengthUnit| (lo..=hi).contains(&(size / u.per_metre()));
    let mut ranked: Vec<LengthUnit> = candidates.into_iter().filter(|&u| plausible(u)).collect();
    ranked.sort_by(|a, b| score(*a).total_cmp(&score(*b)));
    let describe = |u: LengthUnit| {
        let label = if u == LengthUnit::PerMetre(ASF_PER_METRE) {
            "the CMU ASF unit (5.64 cm)".to_string()
        } else {
            u.name()
        };
        format!("{} in {label}", format_metres(size / u.per_metre()))
    };
    let Some(&best) = ranked.first() else {
        let what = if humanoid { "person" } else { "character" };
        let unit = LengthUnit::PerMetre(size / typical);
        return (
            unit,
            Confidence::Low,
            format!(
                "{} units is implausible as metres, centimetres, millimetres or inches; \
                 assumed a {typical} m {what} ({}); set the unit",
                trim_number(size),
                unit.name()
            ),
        );
    };
    let unusual = matches!(best, LengthUnit::PerMetre(_));
    let runner_up = ranked.get(1).copied();
    let close = runner_up.is_some_and(|r| score(r) - score(best) < 3.0f32.ln());
    let confidence = if unusual || close {
        Confidence::Medium
    } else {
        Confidence::High
    };
    let mut reason = describe(best);
    if let Some(r) = runner_up.filter(|_| close) {
        reason.push_str(&format!(" (or {})", describe(r)));
    }
    (best, confidence, reason)
}

/// A length given in millimetres, readably: cm from 100 mm, µm below 0.01 mm.
pub fn format_mm(mm: f32) -> String {
    let a = mm.abs();
    if a >= 100.0 {
        format!("{:.1} cm", mm / 10.0)
    } else if a >= 1.0 {
        format!("{mm:.2} mm")
    } else if a >= 0.01 || a == 0.0 {
        format!("{mm:.4} mm")
    } else {
        format!("{:.3} µm", mm * 1000.0)
    }
}

fn format_metres(m: f32) -> String {
    if m >= 0.1 {
        format!("{m:.2} m")
    } else {
        format!("{:.1} cm", m * 100.0)
    }
}

/// A number with at most 4 significant decimals and no trailing zeros.
fn trim_number(x: f32) -> String {
    let s = format!("{x:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Joint;

    fn pole(height: f32, names: &[&str]) -> Skeleton {
        let mut joints = vec![Joint::new(names[0], None, Transform::IDENTITY)];
        let step = height / (names.len() - 1) as f32;
        for (i, n) in names.iter().enumerate().skip(1) {
            joints.push(Joint::new(
                *n,
                Some(i - 1),
                Transform {
                    translation: Vec3::new(0.0, step, 0.0),
                    ..Transform::IDENTITY
                },
            ));
        }
        Skeleton::new(joints).unwrap()
    }

    const BODY: [&str; 6] = ["Hips", "Spine", "LeftUpLeg", "LeftFoot", "LeftArm", "Head"];

    #[test]
    fn a_jump_does_not_make_the_character_taller() {
        // A 1.8 m pole whose root leaps 3 m up in the middle of the clip.
        let skeleton = pole(1.8, &["root", "head"]);
        let mut clip = Clip::rest("jump", &skeleton, 30.0, 31);
        for f in 10..20 {
            clip.tracks[0].translations[f].y = 3.0;
        }
        let u = Units::measure(&skeleton, &[clip], None);
        assert!((u.height - 1.8).abs() < 1e-5, "{}", u.height);
        assert!((u.size - 1.8).abs() < 1e-5, "{}", u.size);
        assert!((u.extent - 4.8).abs() < 1e-5, "{}", u.extent);
        assert_eq!(u.unit, LengthUnit::Metre);
    }

    #[test]
    fn people_are_measured_in_their_unit() {
        for (size, unit) in [
            (1.6, LengthUnit::Metre),
            (160.0, LengthUnit::Centimetre),
            (1600.0, LengthUnit::Millimetre),
            (63.0, LengthUnit::Inch),
        ] {
            let u = Units::measure(&pole(size, &BODY), &[], None);
            assert!(u.humanoid);
            assert_eq!(u.unit, unit, "{size}: {}", u.reason);
            assert_eq!(u.confidence, Confidence::High, "{size}: {}", u.reason);
        }
    }

    #[test]
    fn a_25_unit_person_is_in_asf_units_not_centimetres() {
        let u = Units::measure(&pole(25.0, &BODY), &[], None);
        assert_eq!(u.unit, LengthUnit::PerMetre(ASF_PER_METRE), "{}", u.reason);
        assert_eq!(u.confidence, Confidence::Medium);
        assert!(u.implausible_with(LengthUnit::Centimetre).is_some());
        assert!(u.implausible_with(u.unit).is_none());
    }

    #[test]
    fn an_implausible_person_gets_an_estimate_and_low_confidence() {
        // 6 units: 6 m, 6 cm, 15 cm in inches, 34 cm in ASF units: none is a person.
        let u = Units::measure(&pole(6.0, &BODY), &[], None);
        assert_eq!(u.confidence, Confidence::Low, "{}", u.reason);
        assert!((u.unit.per_metre() - 6.0 / HUMANOID.1).abs() < 1e-4);
    }

    #[test]
    fn a_declared_metre_is_kept_when_plausible() {
        // A 0.3 m creature: metres (declared) rather than the closer-to-typical inch.
        let u = Units::measure(&pole(0.3, &["a", "b"]), &[], Some(LengthUnit::Metre));
        assert_eq!(u.unit, LengthUnit::Metre, "{}", u.reason);
        // A 3 m robot: a tall humanoid, but metres as declared.
        let u = Units::measure(&pole(3.0, &BODY), &[], Some(LengthUnit::Metre));
        assert_eq!(u.unit, LengthUnit::Metre, "{}", u.reason);
        assert_eq!(u.confidence, Confidence::Medium);
        // A 130-unit fox in a glTF is still centimetres.
        let u = Units::measure(&pole(130.0, &["a", "b"]), &[], Some(LengthUnit::Metre));
        assert_eq!(u.unit, LengthUnit::Centimetre, "{}", u.reason);
    }

    #[test]
    fn units_round_trip_through_text() {
        for u in LengthUnit::NAMED {
            assert_eq!(LengthUnit::parse(&u.name()), Some(u));
            assert_eq!(LengthUnit::parse(u.symbol()), Some(u));
        }
        assert_eq!(LengthUnit::parse("17.5"), Some(LengthUnit::PerMetre(17.5)));
        assert_eq!(LengthUnit::parse("-1"), None);
        assert_eq!(LengthUnit::parse("furlong"), None);
    }
}
