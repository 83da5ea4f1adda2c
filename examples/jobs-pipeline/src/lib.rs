//! A jobs pipeline at teaching scale: the shape of a microservices
//! article (a Go REST service, Kafka and MongoDB), on our runtime.
//!
//! In the article, one service takes `POST /jobs` and writes each job to a
//! Kafka topic; a second service consumes the topic and saves each job in
//! MongoDB. Here both are tasks in one process:
//!
//! | the article | here |
//! |---|---|
//! | REST service, `POST /jobs` | [`server`]: one task per connection, [`http`] parsing |
//! | the job's JSON | [`job`]: a schema that is checked, not just decoded |
//! | Kafka topic | the runtime's [`Queue`](runtime::Queue) |
//! | consumer service | the consumer task in [`server`] |
//! | MongoDB | [`store`]: a JSON Lines file |
//!
//! Stopping is part of the design: [`Shutdown`] stops the accepting, lets
//! open requests finish, and waits on the queue's `join` until every
//! accepted job is stored.

pub mod api;
pub mod broker;
pub mod consumer;
pub mod front;
pub mod http;
pub mod job;
pub mod lookup;
pub mod postgres;
pub mod server;
pub mod shutdown;
pub mod store;
pub mod table;

pub use job::Job;
pub use server::{Config, Server, Summary, run};
pub use shutdown::Shutdown;
pub use store::Store;
