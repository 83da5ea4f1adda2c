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
//! With `--broker` and `--database`, the same pipeline runs as the
//! article's two services, each its own process, on real Redis and
//! PostgreSQL:
//!
//! | module | holds |
//! |---|---|
//! | `services` | the two services as subcommands (`api`, `store`) |
//! | `api` | the REST service: `POST /jobs` to a Redis stream, `GET /jobs/ID` from the table |
//! | `consumer` | the storing service: the stream read in a consumer group, each job inserted, then acknowledged |
//! | `broker` | what both services agree on about Redis: the stream, the group, the keys |
//! | `table` | what both agree on about PostgreSQL: the jobs table, made under an advisory lock |
//! | `lookup` | the api's questions to the table, asked for many requests at once |
//! | `front` | the HTTP front of every service: accept, parse, hand to a handler, stop cleanly |
//! | `postgres` | a PostgreSQL client on our runtime (`postgres::config`, `postgres::message`, `postgres::scram`, `postgres::pool`) |
//! | `signals`, `shutdown` | Ctrl-C and SIGTERM as something a task awaits; asking a service to stop |
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
