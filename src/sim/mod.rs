//! The foundations: what any simulator needs and nothing about networking.
//!
//! Uses only the standard library and the crates (no other folder of `src/`).
//!
//! - [`engine`]: the clock, the heap of timed events, the slots and arrival queue for
//!   events kept outside it;
//! - [`time`]: integer simulated time (`SimTime`, picoseconds);
//! - [`rng`]: seeded random streams, one per source of randomness;
//! - [`problems`]: typed configuration problems collected with their JSON path;
//! - [`forms`]: readers of fields written in several forms (a policy's `kind`, a frame
//!   size's number or distribution) that keep the path inside the value and put serde's
//!   messages in the file's words;
//! - [`limits`]: the one set of limits on points, variants, replications, runs, flows,
//!   clock and threads, whatever way a scenario or the command asks for them.

pub mod engine;
pub mod forms;
pub mod limits;
pub mod problems;
pub mod rng;
pub mod time;
