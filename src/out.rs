//! Standard output for the owner's listings: a reader that stops early (`token list | head`)
//! ends the command quietly, where `println!` would panic on the broken pipe.

use std::io::Write;

/// Write one line to stdout. When the reader has gone (`EPIPE`), exit at once with success, as
/// `head` expects of the command it cut short; any other write error is reported once.
pub(crate) fn line(args: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.write_all(b"\n")) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: cannot write to stdout: {e}");
        std::process::exit(1);
    }
}

/// `println!` for listings, through [`line`].
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::out::line(format_args!($($arg)*))
    };
}
pub(crate) use outln;
