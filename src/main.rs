//! The `cstream` binary: everything lives in the library (its command-line
//! module, behind the default `cli` feature).

fn main() -> std::process::ExitCode {
    cstream::__internal::main()
}
