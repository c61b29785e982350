//! Integration tests, compiled into one binary; one file per behaviour.

mod architecture;
mod bad_input;
mod baseline;
mod dc_driver;
mod em_rr;
mod fit;
mod golden;
mod grid;
mod livelock_table;
mod many_cores;
mod merged_bursts;
mod models;
mod multi_nic;
mod napi_cores;
mod p100_de;
mod plots;
mod policies;
mod properties;
mod request_response;
mod resume;
mod schema;
mod shard;
mod theory;
mod trace;
mod tx_sender;
mod xl_spikes;
