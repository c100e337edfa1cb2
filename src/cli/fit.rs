//! `e4inspect fit` (filled in below).
