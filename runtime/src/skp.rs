//! An open `.skp`: the validated file (borrowed or owned bytes), its skeleton and its clips
//! laid out for sampling.

use crate::additive;
use crate::clip::{Clip, ClipLayout, JointPose};
use crate::error::Error;
use crate::meta::{self, ClipMeta};
use crate::payload;
use crate::read::{self, ClipRecord, FileLayout, JointRecord, name_of};

/// An open container. `B` is the file's bytes: `&[u8]` to borrow them, `Vec<u8>` (or any
/// `AsRef<[u8]>`) to own them. Names are read from those bytes; each clip's keys are
/// validated at open and kept as compact bit records ([`Clip`]).
#[derive(Clone, Debug)]
pub struct Skp<B: AsRef<[u8]>> {
    bytes: B,
    layout: FileLayout,
    rest: Vec<JointPose>,
    clips: Vec<Clip>,
    metas: Vec<ClipMeta>,
}

impl<B: AsRef<[u8]>> Skp<B> {
    /// Validates the bytes and lays out every clip for speed ([`ClipLayout::Prepared`]); a
    /// clear [`Error`] on any corrupt input.
    pub fn open(bytes: B) -> Result<Self, Error> {
        Self::open_with(bytes, ClipLayout::Prepared)
    }

    /// Like [`Skp::open`], with every clip in `layout` ([`ClipLayout::Compact`]: about the
    /// file's size in memory, slower to sample).
    pub fn open_with(bytes: B, clip_layout: ClipLayout) -> Result<Self, Error> {
        let b = bytes.as_ref();
        let layout = read::parse(b)?;
        let rest: Vec<JointPose> = layout.joints.iter().map(rest_pose).collect();
        let mut clips = Vec::with_capacity(layout.clips.len());
        let mut metas = Vec::with_capacity(layout.clips.len());
        for c in &layout.clips {
            let name = name_of(b, &c.name);
            let meta = meta::parse(b, c.meta.clone(), name, rest.len())?;
            let p = payload::parse(&b[c.payload.clone()], name, rest.len())?;
            meta::check_event_times(&meta, p.frame_count, p.sample_rate, name)?;
            // An additive clip's rest tracks decode to the identity of its mode.
            let clip_rest = additive::rest_for(&rest, meta.additive.as_ref().map(|a| a.mode));
            let clip = Clip::with_layout(&p, &clip_rest, clip_layout);
            clips.push(clip.with_playback(&p, &clip_rest, &meta));
            metas.push(meta);
        }
        Ok(Self {
            bytes,
            layout,
            rest,
            clips,
            metas,
        })
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        self.bytes.as_ref()
    }

    /// Number of joints (every pose holds this many).
    pub fn joint_count(&self) -> usize {
        self.layout.joints.len()
    }

    /// Joint `j`'s name.
    pub fn joint_name(&self, j: usize) -> &str {
        name_of(self.bytes(), &self.layout.joints[j].name)
    }

    /// Joint `j`'s parent; joints come parents first, so the parent's index is smaller.
    pub fn joint_parent(&self, j: usize) -> Option<usize> {
        self.layout.joints[j].parent
    }

    /// Joint `j`'s rest (bind-time local) transform.
    pub fn joint_rest(&self, j: usize) -> JointPose {
        self.rest[j]
    }

    /// Whether joint `j` deforms a mesh (is a skin joint).
    pub fn joint_deforms(&self, j: usize) -> bool {
        self.layout.joints[j].deforming
    }

    /// Index of the joint named `name`.
    pub fn find_joint(&self, name: &str) -> Option<usize> {
        (0..self.joint_count()).find(|&j| self.joint_name(j) == name)
    }

    /// Number of clips.
    pub fn clip_count(&self) -> usize {
        self.clips.len()
    }

    /// Clip `c`'s name.
    pub fn clip_name(&self, c: usize) -> &str {
        name_of(self.bytes(), &self.layout.clips[c].name)
    }

    /// Clip `c`, ready to sample.
    pub fn clip(&self, c: usize) -> &Clip {
        &self.clips[c]
    }

    /// Clip `c`'s events, sorted by time.
    pub fn event_count(&self, c: usize) -> usize {
        self.metas[c].events.len()
    }

    /// Event `i` of clip `c`: its time in seconds from frame 0, its name and its payload.
    pub fn event(&self, c: usize, i: usize) -> (f32, &str, Option<&str>) {
        let e = &self.metas[c].events[i];
        let b = self.bytes.as_ref();
        (
            e.time,
            name_of(b, &e.name),
            e.payload.as_ref().map(|p| name_of(b, p)),
        )
    }

    /// Clip `c`'s scalar tracks (morph-target weights): how many.
    pub fn scalar_track_count(&self, c: usize) -> usize {
        self.metas[c].scalar_tracks.len()
    }

    /// Scalar track `i` of clip `c`: its name (the node whose mesh it drives) and its
    /// number of targets (floats per sample).
    pub fn scalar_track(&self, c: usize, i: usize) -> (&str, usize) {
        let t = &self.metas[c].scalar_tracks[i];
        (name_of(self.bytes(), &t.name), t.targets)
    }

    /// Index of clip `c`'s scalar track named `name`.
    pub fn find_scalar_track(&self, c: usize, name: &str) -> Option<usize> {
        (0..self.scalar_track_count(c)).find(|&i| self.scalar_track(c, i).0 == name)
    }

    /// The values of scalar track `i` of clip `c` at frame `frame` (seconds × sample rate;
    /// fractional frames interpolate) into `out`'s first `min(out.len(), targets)` entries:
    /// linear between the track's keys; frames outside the clip clamp, or wrap for a looping
    /// clip, as [`Clip::sample`] does. Allocates nothing.
    pub fn sample_scalar_track(&self, c: usize, i: usize, frame: f32, out: &mut [f32]) {
        let clip = &self.clips[c];
        let f = clip.clamp(frame);
        self.metas[c].scalar_tracks[i].sample(self.bytes(), f / clip.sample_rate(), out);
    }

    /// Clip `c`'s metadata: looping, root motion, additive mode and base.
    pub fn clip_meta(&self, c: usize) -> &ClipMeta {
        &self.metas[c]
    }

    /// The name of the clip clip `c` is additive on (none for a rest-pose base or a clip
    /// that is not additive).
    pub fn additive_base_clip(&self, c: usize) -> Option<&str> {
        let a = self.metas[c].additive.as_ref()?;
        (!a.base_clip.is_empty()).then(|| name_of(self.bytes(), &a.base_clip))
    }

    /// Index of the clip named `name`.
    pub fn find_clip(&self, name: &str) -> Option<usize> {
        (0..self.clip_count()).find(|&c| self.clip_name(c) == name)
    }

    /// Clip directory entries (names and payload byte ranges).
    pub fn clip_records(&self) -> &[ClipRecord] {
        &self.layout.clips
    }

    /// Joint records as stored.
    pub fn joint_records(&self) -> &[JointRecord] {
        &self.layout.joints
    }

    /// Bytes held in memory beyond the file's own: skeleton and every clip's layout.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.layout.joints.len() * std::mem::size_of::<JointRecord>()
            + self.layout.clips.len() * std::mem::size_of::<ClipRecord>()
            + self.rest.len() * std::mem::size_of::<JointPose>()
            + self.clips.iter().map(Clip::memory_bytes).sum::<usize>()
            + self.metas.len() * std::mem::size_of::<ClipMeta>()
    }
}

fn rest_pose(j: &JointRecord) -> JointPose {
    JointPose {
        translation: j.translation.to_array(),
        rotation: j.rotation.to_array(),
        scale: j.scale.to_array(),
    }
}
