//! Results by what they were computed for: (document, clip, settings resolved for the clip).
//! Undo, redo and flipping between two settings (A/B) show an earlier result at once
//! instead of compressing again. Least recently used results go first, within a byte budget.

use std::collections::VecDeque;
use std::sync::Arc;

use super::compressor::Compressed;
use crate::settings::Resolved;

/// What a result was computed from. Two keys are equal exactly when compressing again
/// would give the same result (the codec is deterministic).
#[derive(Clone, Debug, PartialEq)]
pub struct CacheKey {
    pub document: u64,
    pub clip: usize,
    pub settings: Resolved,
}

/// A bounded least-recently-used map from [`CacheKey`] to results.
pub struct ResultCache {
    /// Most recently used first.
    entries: VecDeque<(CacheKey, Arc<Compressed>)>,
    budget_bytes: usize,
}

impl Default for ResultCache {
    fn default() -> Self {
        Self::with_budget(DEFAULT_BUDGET_BYTES)
    }
}

/// Enough for dozens of results of long clips; results of short clips are a few kB.
pub const DEFAULT_BUDGET_BYTES: usize = 256 << 20;

impl ResultCache {
    pub fn with_budget(budget_bytes: usize) -> Self {
        Self {
            entries: VecDeque::new(),
            budget_bytes,
        }
    }

    /// The result for `key`, if one is kept (it becomes the most recently used).
    pub fn get(&mut self, key: &CacheKey) -> Option<Arc<Compressed>> {
        let i = self.entries.iter().position(|(k, _)| k == key)?;
        let entry = self.entries.remove(i)?;
        let value = entry.1.clone();
        self.entries.push_front(entry);
        Some(value)
    }

    /// Keeps `value` for `key`, dropping the least recently used results over the budget
    /// (the newest is always kept).
    pub fn insert(&mut self, key: CacheKey, value: Arc<Compressed>) {
        self.entries.retain(|(k, _)| *k != key);
        self.entries.push_front((key, value));
        while self.entries.len() > 1 && self.bytes() > self.budget_bytes {
            self.entries.pop_back();
        }
    }

    /// Forgets every result of `document` (closed or replaced).
    pub fn forget_document(&mut self, document: u64) {
        self.entries.retain(|(k, _)| k.document != document);
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Approximate memory held: error matrices, the compressed clip and the key.
    pub fn bytes(&self) -> usize {
        self.entries.iter().map(|(k, v)| entry_bytes(k, v)).sum()
    }
}

fn entry_bytes(key: &CacheKey, value: &Compressed) -> usize {
    let e = &value.errors;
    let errors = 4 * (e.at_samples.len() + e.at_midpoints.as_ref().map_or(0, Vec::len));
    let limits = 13 * key.settings.limits.len();
    // The decoded clip keeps its keys in memory: count them at a generous 64 B each.
    errors + limits + 64 * value.sizes.keys_kept + value.sizes.compressed_bytes + 1024
}
