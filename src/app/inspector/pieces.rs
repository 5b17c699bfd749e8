//! After a settings edit that cut the takes' pieces again (created, trimmed, undone): the
//! document gets a new id, so no result or clip job of the old clip set is shown for the
//! new one, and the playhead stays inside the open clip.

use super::App;

impl App {
    /// Called after every settings change; does nothing unless the clip set was cut again.
    pub(super) fn pieces_cut(&mut self) {
        let Some(doc) = &mut self.session.doc else {
            return;
        };
        if doc.asset_rev == self.session.cut_seen {
            return;
        }
        self.session.cut_seen = doc.asset_rev;
        self.work.results.forget_document(doc.id);
        doc.id = self.session.next_id;
        self.session.next_id += 1;
        self.work.clips.reset();
        if let Some(e) = &doc.cut_takes.1 {
            self.chrome.status = format!("Takes not cut: {e}");
        }
        let last = doc.frame_count().saturating_sub(1) as f32;
        self.view.playback.frame = self.view.playback.frame.min(last);
        self.view.viewport.request_frame();
    }
}
