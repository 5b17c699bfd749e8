//! The last check of a clip's chosen channels between frames.
//!
//! While layouts are compared, each fit checks frames, quarter points and the points inside
//! the key intervals shorter than a frame that its channels have when it starts
//! ([`super::key_points`]); the nlerp-safe splits a fit makes itself (where a joint went
//! over) can make new short key intervals whose inner points it has not checked. The chosen
//! layout is fitted once more with up to [`FINAL_ROUNDS`] fits: each time its splits made
//! new points and one of them is over, it fits again with them. Its figures become the
//! clip's. (Checking every sixteenth of a frame instead cost 2.5x the export CPU on
//! RobotExpressive and bought nothing the points above did not; docs/EXPORT.md.)

use super::gltf_clip::{GltfClip, GltfOptions, fit_layout};
use super::verify::{FINAL_ROUNDS, Splits};
use crate::model::Skeleton;
use crate::settings::Resolved;

impl GltfClip {
    /// Fits the chosen channels again until the points of their own key intervals hold
    /// (see the module).
    pub fn check_between(
        &mut self,
        skeleton: &Skeleton,
        raw: &crate::model::Clip,
        reference: &crate::metric::Reference,
        settings: &Resolved,
        options: &GltfOptions,
    ) {
        let mut channels = self.channels.clone();
        // Started from the chosen layout's own measurement where it was kept.
        let mut last = self.last_fit.0.take();
        let (e, r) = fit_layout(
            &mut channels,
            skeleton,
            raw,
            reference,
            &self.compressed,
            settings,
            options,
            Splits::WhereOver,
            FINAL_ROUNDS,
            last.is_some().then_some(&mut last),
        );
        let rate = self.compressed.sample_rate;
        self.cost = match options.meshopt {
            Some(_) => super::layout::stored_bytes(&channels, rate),
            None => super::layout::bytes(&channels),
        };
        (self.channels, self.max_error, self.worst_ratio) = (channels, e, r);
        // Not kept past the clip's last fit: the clip switch's rounds clone and re-encode.
        drop(last);
    }
}
