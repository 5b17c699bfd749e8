//! Undo / redo of settings edits: snapshots of the whole settings value, each with a label.

/// A linear undo history over values of `T`.
#[derive(Clone, Debug)]
pub struct History<T> {
    undo: Vec<(String, T)>,
    redo: Vec<(String, T)>,
    limit: usize,
}

impl<T> Default for History<T> {
    fn default() -> Self {
        Self {
            undo: Vec::new(),
            redo: Vec::new(),
            limit: 200,
        }
    }
}

impl<T: Clone + PartialEq> History<T> {
    /// Records `before` (the value prior to an edit named `label`); clears redo.
    pub fn record(&mut self, label: impl Into<String>, before: T) {
        self.undo.push((label.into(), before));
        if self.undo.len() > self.limit {
            self.undo.remove(0);
        }
        self.redo.clear();
    }

    /// Undoes into `current`; returns the edit's label.
    pub fn undo(&mut self, current: &mut T) -> Option<String> {
        let (label, before) = self.undo.pop()?;
        let now = std::mem::replace(current, before);
        self.redo.push((label.clone(), now));
        Some(label)
    }

    /// Redoes into `current`; returns the edit's label.
    pub fn redo(&mut self, current: &mut T) -> Option<String> {
        let (label, after) = self.redo.pop()?;
        let now = std::mem::replace(current, after);
        self.undo.push((label.clone(), now));
        Some(label)
    }

    pub fn undo_label(&self) -> Option<&str> {
        self.undo.last().map(|(l, _)| l.as_str())
    }

    pub fn redo_label(&self) -> Option<&str> {
        self.redo.last().map(|(l, _)| l.as_str())
    }

    pub fn clear(&mut self) {
        self.undo.clear();
        self.redo.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undo_redo_round_trip() {
        let mut h = History::default();
        let mut v = 1;
        h.record("a", v);
        v = 2;
        h.record("b", v);
        v = 3;
        assert_eq!(h.undo(&mut v).as_deref(), Some("b"));
        assert_eq!(v, 2);
        assert_eq!(h.undo(&mut v).as_deref(), Some("a"));
        assert_eq!(v, 1);
        assert_eq!(h.undo(&mut v), None);
        assert_eq!(h.redo(&mut v).as_deref(), Some("a"));
        assert_eq!(v, 2);
        h.record("c", v);
        assert_eq!(h.redo(&mut v), None);
    }
}
