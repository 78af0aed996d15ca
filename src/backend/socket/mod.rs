//! CopyQ's local socket protocol (see shared/COPYQ.md): a native client, so a call costs ~0.1 ms
//! instead of a `copyq` process. Under construction.
