//! Helpers that end-to-end tests share, one file each: a page in a headless browser
//! ([`browser`]), Markdown as GitHub renders it ([`gfm`]) and the checks on a plot's SVG
//! ([`svg_check`]). A test binary declares `mod common;` and uses the ones it needs, so the rest
//! are unused in it.
#![allow(dead_code)]

pub mod browser;
pub mod gfm;
pub mod svg_check;
