//! skelpack: error-bounded skeletal animation compression.
//!
//! Data flows one way: [`import`] reads files into the [`model`]; [`metric`] measures visual
//! error; [`codec`] compresses and decodes; `container` and `export` write results;
//! [`settings`] holds what the user tunes. The GUI in `app` sits on top and is the only
//! module that touches egui / wgpu.

#[cfg(feature = "gui")]
pub mod app;
pub mod cache;
pub mod character;
pub mod cli;
pub mod codec;
pub mod container;
pub mod export;
pub mod fsutil;
pub mod import;
pub mod live;
pub mod metric;
pub mod model;
pub mod quote;
pub mod settings;
