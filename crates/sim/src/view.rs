//! The one narrow interface the UI consumes: plain data snapshots of the world.
//! (Filled in as the UI grows.)
