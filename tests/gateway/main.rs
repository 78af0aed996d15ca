//! The gateway's HTTP surface and its binary: tokens and roles, hardening limits, LAN and TLS
//! serving, adversarial inputs, the `copyq-mcp` commands, third-party MCP clients, and the native
//! socket protocol. Each suite that needs CopyQ starts its own.

#[path = "../support/mod.rs"]
mod support;

mod adversarial;
mod auth;
mod binary;
mod chatgpt;
mod chatgpt_structured;
mod clients;
mod default_config;
mod doctor;
mod hardening;
mod icons;
mod idle;
mod lan;
mod observability;
mod resources;
mod sharp_edges;
mod socket_protocol;
mod structured;
mod tls;
mod trust;
