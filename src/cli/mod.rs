pub mod fit;
