//! `timeline`: draws a runtime trace as an SVG swimlane timeline, and
//! tells its story as text.
//!
//! ```text
//! RUNTIME_TRACE=trace.json cargo run -p stage3-crawler
//! cargo run -p timeline -- trace.json --svg crawl.svg
//! cargo run -p timeline -- trace.json --story
//! ```
//!
//! The SVG is for people (the book's figures are drawn with it); the story
//! is the same run told in logical time, which the book's check compares
//! (see `story.rs`). For everything in a trace, open it in
//! <https://ui.perfetto.dev> instead.
//!
//! | module | holds |
//! |---|---|
//! | `trace` | a runtime trace read back from its Chrome trace-event JSON |
//! | `story` | the trace told as text, in logical time (what the book's check compares) |
//! | `svg` | the trace drawn as an SVG swimlane timeline |

mod story;
mod svg;
mod trace;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use trace::Trace;

#[derive(Parser, Debug)]
#[command(about = "Draws a runtime trace (RUNTIME_TRACE=trace.json) as an SVG timeline")]
struct Args {
    /// The trace: Chrome trace-event JSON written by the runtime.
    trace: PathBuf,
    /// Write the SVG here.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Print the story: each task's steps in logical time.
    #[arg(long)]
    story: bool,
    /// Give each socket's callbacks a lane of their own, and tell them in
    /// the story (for a program of bare callbacks, such as stage 1).
    #[arg(long)]
    sockets: bool,
    /// The figure's title.
    #[arg(long, default_value = "")]
    title: String,
    /// Draw only from this many milliseconds into the trace.
    #[arg(long, value_name = "MS")]
    from: Option<f64>,
    /// Draw only up to this many milliseconds into the trace.
    #[arg(long, value_name = "MS")]
    to: Option<f64>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("timeline: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<(), String> {
    let json = std::fs::read_to_string(&args.trace)
        .map_err(|e| format!("cannot read {}: {e}", args.trace.display()))?;
    let mut trace = Trace::parse(&json).map_err(|e| format!("{}: {e}", args.trace.display()))?;
    if args.story {
        print!("{}", story::tell(&trace, args.sockets));
    }
    if let Some(path) = &args.svg {
        if args.sockets {
            trace = trace.with_socket_lanes();
        }
        if args.from.is_some() || args.to.is_some() {
            let from = args.from.map_or(f64::NEG_INFINITY, |ms| ms * 1000.0);
            let to = args.to.map_or(f64::INFINITY, |ms| ms * 1000.0);
            if from >= to {
                return Err("--from must be before --to".into());
            }
            trace = trace.window(from, to);
        }
        std::fs::write(path, svg::draw(&trace, &args.title))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if !args.story && args.svg.is_none() {
        return Err("nothing to do: give --svg FILE, --story, or both".into());
    }
    Ok(())
}
