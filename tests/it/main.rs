//! Integration tests, compiled into one binary; one file per behaviour.

mod bad_input;
mod livelock_table;
mod policies;
mod request_response;
mod plots;
mod theory;
mod xl_spikes;
