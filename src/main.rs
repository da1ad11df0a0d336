//! The `cstream` binary: everything lives in the library (`cstream::cli`).

fn main() -> std::process::ExitCode {
    cstream::cli::main()
}
