//! The multiplayer snake of the asyncio article, on our runtime.
//!
//! The modules, from the server down:
//!
//! | module | holds |
//! |---|---|
//! | `server` | the game loop task, a task per connection, the broadcast, Ctrl-C |
//! | `game` | the field, the snakes, the food, and one tick of the rules: no I/O, no clock |
//! | `view` | what a player sees, sent as the changes since its last frame |
//! | `websocket` | WebSockets (RFC 6455), server side, without I/O: handshake, frames, close codes |
//! | `heartbeat` | a ping now and then, and a pong expected within a deadline |
//! | `stats` | what the game loop measures about itself (`GET /stats`) |
//! | `client` | a WebSocket client on our runtime, for the load test's bots |

#![warn(missing_docs)]

pub mod client;
pub mod game;
pub mod heartbeat;
pub mod server;
pub mod stats;
pub mod view;
pub mod websocket;
