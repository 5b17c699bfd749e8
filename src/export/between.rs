//! The last check of a clip's chosen channels between frames, denser than the layout search.
//!
//! Layouts are compared at the quarter points between frames (and the points inside key
//! intervals shorter than a frame, [`super::key_points`]); the chosen one is then fitted
//! once more at [`DENSE`] points inside every frame interval, where a player evaluates
//! just as well (KayKit's PickUp: 0.1004 mm at `animeval --oversample 64` between quarter
//! points that saw 0.0988 mm). The fit may only add nlerp-safe keys and return rotations to
//! float where a joint goes over there; its figures become the clip's.

use super::channels::Channel;
use super::gltf_compressed::{GltfClip, GltfOptions, fit_layout};
use super::verify::Splits;
use crate::model::Skeleton;
use crate::settings::Resolved;

/// Points checked inside every frame interval by [`GltfClip::check_between`]: every
/// sixteenth of a frame.
pub const DENSE: usize = 15;

impl GltfClip {
    /// Fits the chosen channels again at [`DENSE`] points between frames (see the module).
    pub fn check_between(
        &mut self,
        skeleton: &Skeleton,
        raw: &crate::model::Clip,
        settings: &Resolved,
        options: &GltfOptions,
    ) {
        let mut channels: Vec<Channel> = self.channels.clone();
        let (e, r) = fit_layout(
            &mut channels,
            skeleton,
            raw,
            &self.compressed,
            settings,
            options,
            Splits::WhereOver,
            DENSE,
        );
        let rate = self.compressed.sample_rate;
        self.cost = match options.meshopt {
            Some(_) => super::layout::stored_bytes(&channels, rate),
            None => super::layout::bytes(&channels),
        };
        (self.channels, self.max_error, self.worst_ratio) = (channels, e, r);
    }
}
