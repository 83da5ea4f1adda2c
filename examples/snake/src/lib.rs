//! The multiplayer snake of the asyncio article, on our runtime.

#![warn(missing_docs)]

pub mod client;
pub mod game;
pub mod heartbeat;
pub mod server;
pub mod stats;
pub mod view;
pub mod websocket;
