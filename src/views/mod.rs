//! What the read-only views compute, before any formatting: the in-use inode scan behind
//! `xattrs` and `fit --from-image` ([`scan`]), file contents behind `cat` ([`contents`]), the
//! copy-out behind `extract` ([`extract`], the one place that writes — to the destination, never
//! to the input), free-space fragmentation behind `freefrag` ([`freefrag`], e2freefrag) and the
//! journal walk behind `journal` ([`logdump`], debugfs logdump).

pub mod contents;
pub mod diff;
pub mod extract;
pub mod find;
pub mod freefrag;
pub mod icheck;
pub mod inode;
pub mod logdump;
pub mod ncheck;
pub mod scan;
pub mod tar;
