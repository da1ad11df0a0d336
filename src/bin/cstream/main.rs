//! The `cstream` binary: the command line (clap's definition, the options
//! resolved into a `cstream::Config`, the man page and completions) and
//! what only a process does (Ctrl-C, the progress bar, the clobber check,
//! the OTLP poster), over the library's public API.

mod cli;
mod clobber;
mod interrupt;
mod otlp;
mod progress;

fn main() -> std::process::ExitCode {
    tune_malloc();
    cli::main()
}

/// glibc's malloc maps every block of 128 KiB or more on its own and gives
/// freed memory back to the kernel early; a run converting many files with
/// large records (tool outputs, their escaped copies) then faults in fresh
/// pages for each, in every thread: with `--jobs 2` on the generated
/// archive, 100,000 page faults and a third of the run's time in the kernel.
/// Blocks under 4 MiB are served from the heap instead and up to 64 MiB of
/// free heap is kept for reuse. Larger blocks stay mapped on their own: a
/// huge line's buffer then grows by remapping, where on the heap it would
/// be copied and briefly held twice (a 5.4 MiB record peaked 2.6 MiB
/// higher with a 32 MiB threshold; 1 MiB was slower than the default).
/// (The library leaves the allocator alone: an embedding program's choice.)
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn tune_malloc() {
    // glibc's <malloc.h>.
    const M_TRIM_THRESHOLD: i32 = -1;
    const M_MMAP_THRESHOLD: i32 = -3;
    unsafe extern "C" {
        fn mallopt(param: i32, value: i32) -> i32;
    }
    // SAFETY: mallopt only sets malloc's parameters; it is called before
    // any other thread exists.
    unsafe {
        mallopt(M_MMAP_THRESHOLD, 4 << 20);
        mallopt(M_TRIM_THRESHOLD, 64 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn tune_malloc() {}
