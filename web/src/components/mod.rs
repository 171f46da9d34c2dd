//! The views. Each takes plain data (`Rc` parts of a frame) and callbacks; none touches the
//! simulation except through `Controls` (effects) or read-only queries while rendering.

pub mod app;
pub mod canvas;
pub mod cluster;
pub mod flow;
pub mod gallery;
pub mod header;
pub mod inspector;
pub mod lifecycle;
pub mod panel;
pub mod pods;
pub mod timeline;
