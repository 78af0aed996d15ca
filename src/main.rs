//! The `copyq-mcp` binary: parse the command line and hand over to the library.

/// jemalloc on Linux with glibc: one arena, and a background thread that gives freed pages back
/// to the system over the 250 ms after they were freed (`.cargo/config.toml`). glibc keeps what a
/// search of a whole history freed in each thread's arena for as long as the process runs (8-12 MiB
/// over what one call left, after 31 searches of 10,000 items), and its only ways to give it back
/// are an `unsafe` call or settings that cost every search a millisecond and a half
/// (bench/results.md, issue 22 item 6).
/// The owner may still tune it at start with `_RJEM_MALLOC_CONF` (jemalloc's own `MALLOC_CONF`).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> std::process::ExitCode {
    copyq_mcp::cli::main()
}
