//! Built-in xattr profiles (filled in below).
