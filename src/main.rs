//! The `copyq-mcp` binary: parse the command line and hand over to the library.

fn main() -> std::process::ExitCode {
    copyq_mcp::cli::main()
}
