//! The live source shared by `skelpack watch` and the app: noticing that a file was saved
//! ([`watcher`]), reading it only once it is complete ([`settle`]), and saying what a
//! reload changed ([`changes`]). No GUI here.

pub mod changes;
pub mod settle;
pub mod watcher;

pub use changes::{ClipChanges, Missing};
pub use settle::Settle;
pub use watcher::FileWatch;
