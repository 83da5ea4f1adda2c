//! `stage3-crawler`: see `stage3-crawler --help` and the README.

fn main() -> std::process::ExitCode {
    stage3_crawler::cli::main()
}
