//! `timeline`: draws a runtime trace as an SVG swimlane timeline, and
//! tells its story as text.
//!
//! ```text
//! RUNTIME_TRACE=trace.json cargo run -p stage3-crawler
//! cargo run -p timeline -- trace.json --svg crawl.svg
//! cargo run -p timeline -- trace.json --story
//! cargo run -p timeline -- trace.json trace.loop-0.json --svg loops.svg   # several loops
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
    /// The trace: Chrome trace-event JSON written by the runtime. Several
    /// (a program of several loops writes one a loop) are drawn as one
    /// timeline, lined up by the wall clock, and told one after another.
    #[arg(required = true)]
    trace: Vec<PathBuf>,
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
    let mut traces = Vec::new();
    for path in &args.trace {
        let json = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        traces.push(Trace::parse(&json).map_err(|e| format!("{}: {e}", path.display()))?);
    }
    if args.story {
        let several = traces.len() > 1;
        for (i, trace) in traces.iter().enumerate() {
            if several {
                let thread = trace.thread.as_deref().unwrap_or("a trace");
                if i > 0 {
                    println!();
                }
                println!("== {thread} ==");
            }
            print!("{}", story::tell(trace, args.sockets));
        }
    }
    let mut trace = if traces.len() == 1 {
        traces.remove(0)
    } else {
        Trace::merge(traces)
    };
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
