pub mod advise;
pub mod fit;
