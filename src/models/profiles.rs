//! Built-in xattr profiles: typical attribute sets of common software, with the value size of
//! each attribute as stored on ext4 and where that size comes from.
//!
//! Sizes are on-disk value sizes (ACLs in ext4's compact form, not the larger VFS form that
//! getxattr returns). Where real sizes vary, the profile takes a typical case and says so; measure
//! a real tree with `e4inspect fit --from-dir` or an image with `--from-image` for exact figures.

use crate::error::{Error, Result};
use crate::models::fit::Attr;
use serde::Serialize;

/// One attribute of a profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ProfileAttr {
    /// Full attribute name.
    pub name: &'static str,
    /// Value size in bytes as stored on disk.
    pub value_size: u32,
    /// Where the size comes from.
    pub source: &'static str,
}

/// A named set of attributes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Profile {
    /// Name used with `--profile`.
    pub name: &'static str,
    /// What it models.
    pub description: &'static str,
    /// The attributes, in the order the software usually sets them.
    pub attrs: &'static [ProfileAttr],
}

const fn a(name: &'static str, value_size: u32, source: &'static str) -> ProfileAttr {
    ProfileAttr {
        name,
        value_size,
        source,
    }
}

const ACL_SRC: &str = "ext4 compact ACL (fs/ext4/acl.h): 4-byte header + 4 per base entry + 8 per \
named entry; user::, user:NAME:, group::, mask::, other:: = 4+4+8+4+4+4 = 28";

/// Every built-in profile.
pub const PROFILES: &[Profile] = &[
    Profile {
        name: "selinux",
        description: "SELinux file label (targeted policy)",
        attrs: &[a(
            "security.selinux",
            31,
            "context string + NUL: \"system_u:object_r:default_t:s0\" = 31 bytes (bin_t 27, \
             container labels with categories up to 48)",
        )],
    },
    Profile {
        name: "posix-acl",
        description: "POSIX access ACL with one named user or group entry",
        attrs: &[a("system.posix_acl_access", 28, ACL_SRC)],
    },
    Profile {
        name: "posix-acl-default",
        description: "Default (inheritable) POSIX ACL of a directory, one named entry",
        attrs: &[a("system.posix_acl_default", 28, ACL_SRC)],
    },
    Profile {
        name: "capabilities",
        description: "File capabilities (setcap), revision 2",
        attrs: &[a(
            "security.capability",
            20,
            "struct vfs_cap_data, VFS_CAP_REVISION_2 (include/uapi/linux/capability.h): \
             magic 4 + 2 x (permitted 4, inheritable 4); v1 12, v3 (namespaced) 24",
        )],
    },
    Profile {
        name: "ima",
        description: "IMA measurement: SHA-256 digest",
        attrs: &[a(
            "security.ima",
            34,
            "IMA_XATTR_DIGEST_NG (security/integrity/integrity.h): type 1 + hash algo 1 + \
             SHA-256 32; SHA-1 form 21, SHA-512 66, RSA-2048 signature 9 + 256 = 265",
        )],
    },
    Profile {
        name: "evm",
        description: "EVM HMAC",
        attrs: &[a(
            "security.evm",
            21,
            "EVM_XATTR_HMAC (security/integrity/integrity.h): type 1 + HMAC-SHA1 20; \
             signatures are 9 + signature bytes",
        )],
    },
    Profile {
        name: "samba",
        description: "Samba file server share (vfs_acl_xattr + DOS attributes, Samba >= 4.17)",
        attrs: &[
            a(
                "user.DOSATTRIB",
                24,
                "Samba librpc/idl/xattr.idl xattr_DosInfo5 (NDR, Samba >= 4.17); v4 32, v3 56",
            ),
            a(
                "security.NTACL",
                400,
                "Samba xattr_NTACL v4: ~160 bytes of header and hash + the NT security \
                 descriptor; 400 is a typical owner/group/4-ACE case (estimate: measure with \
                 --from-dir)",
            ),
        ],
    },
    Profile {
        name: "samba-v3",
        description: "Samba DOS attributes, DosInfo3 (older Samba)",
        attrs: &[a(
            "user.DOSATTRIB",
            56,
            "Samba librpc/idl/xattr.idl xattr_DosInfo3 (NDR)",
        )],
    },
    Profile {
        name: "samba-v4",
        description: "Samba DOS attributes, DosInfo4",
        attrs: &[a(
            "user.DOSATTRIB",
            32,
            "Samba librpc/idl/xattr.idl xattr_DosInfo4 (NDR)",
        )],
    },
    Profile {
        name: "samba-v5",
        description: "Samba DOS attributes, DosInfo5 (Samba >= 4.17)",
        attrs: &[a(
            "user.DOSATTRIB",
            24,
            "Samba librpc/idl/xattr.idl xattr_DosInfo5 (NDR)",
        )],
    },
    Profile {
        name: "lustre-mdt",
        description: "Lustre MDT inode of a file with a one-stripe plain layout",
        attrs: &[
            a(
                "trusted.lma",
                24,
                "struct lustre_mdt_attrs (lustre_idl.h): compat 4 + incompat 4 + FID 16",
            ),
            a(
                "trusted.lov",
                56,
                "struct lov_mds_md_v1: 32-byte header + 24 per stripe (1 stripe); v3 48 + 24 \
                 per stripe; composite (PFL) layouts are larger",
            ),
            a(
                "trusted.link",
                80,
                "struct link_ea_header 24 + per link (reclen 2 + parent FID 16 + name); 80 = \
                 one link with a 38-byte name",
            ),
            a(
                "trusted.som",
                24,
                "struct lustre_som_attrs: valid 2 + reserved 6 + size 8 + blocks 8",
            ),
        ],
    },
    Profile {
        name: "lustre-ost",
        description: "Lustre OST object",
        attrs: &[
            a(
                "trusted.lma",
                24,
                "struct lustre_mdt_attrs: compat 4 + incompat 4 + FID 16",
            ),
            a(
                "trusted.fid",
                52,
                "struct filter_fid (lustre_idl.h): parent FID 16 + layout/PFL fields; 52 with \
                 the component id and extent",
            ),
        ],
    },
    Profile {
        name: "overlayfs",
        description: "overlayfs upper-layer file copied up from an ext4 lower layer",
        attrs: &[
            a(
                "trusted.overlay.origin",
                29,
                "struct ovl_fb (fs/overlayfs/overlayfs.h): 21-byte header (version, magic, len, \
                 flags, type, uuid) + 8-byte ext4 file handle",
            ),
            a(
                "trusted.overlay.impure",
                1,
                "\"y\" marker on directories holding copied-up entries (opaque: same size)",
            ),
        ],
    },
    Profile {
        name: "macos",
        description: "macOS metadata via netatalk (AFP) or Samba vfs_fruit netatalk mode",
        attrs: &[a(
            "user.org.netatalk.Metadata",
            402,
            "netatalk libatalk/adouble: AD_DATASZ_EA = 402 (AppleDouble header + FinderInfo + \
             dates + AFP file info)",
        )],
    },
];

/// A profile by name.
pub fn get(name: &str) -> Option<&'static Profile> {
    PROFILES.iter().find(|p| p.name == name)
}

/// Attributes of a comma-separated list of profiles, in the order given; an attribute named by
/// several profiles is taken once (first wins).
pub fn resolve(list: &str) -> Result<Vec<Attr>> {
    let mut out: Vec<Attr> = Vec::new();
    for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let profile = get(name).ok_or_else(|| {
            let known: Vec<&str> = PROFILES.iter().map(|p| p.name).collect();
            Error::Invalid(format!(
                "unknown profile {name:?}; known: {}",
                known.join(", ")
            ))
        })?;
        for pa in profile.attrs {
            if out.iter().all(|x| x.name != pa.name) {
                out.push(Attr::new(pa.name, pa.value_size));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::fit::{place, FitParams, Location};
    use crate::reader::xattr::split_name;

    #[test]
    fn every_profile_is_storable() {
        for profile in PROFILES {
            assert!(!profile.attrs.is_empty(), "{}", profile.name);
            for at in profile.attrs {
                assert!(split_name(at.name).is_some(), "{}", at.name);
                assert!(!at.source.is_empty());
            }
        }
        let mut names: Vec<_> = PROFILES.iter().map(|p| p.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), PROFILES.len());
    }

    #[test]
    fn resolve_and_place() {
        let attrs = resolve("selinux,capabilities").unwrap();
        assert_eq!(attrs.len(), 2);
        let placed = place(&FitParams::new(256), &attrs).unwrap();
        assert_eq!(placed.needed_bytes, 104);
        assert_eq!(placed.placements[1].location, Location::Block);
        assert_eq!(resolve("samba,samba-v3").unwrap().len(), 2);
        assert!(resolve("nope").is_err());
        // Lustre MDT: lma 44 + lov 76 + link 100 + som 44 = 264 fits 512 (344), not 256.
        let mdt = resolve("lustre-mdt").unwrap();
        assert!(place(&FitParams::new(512), &mdt).unwrap().all_in_inode);
        assert!(!place(&FitParams::new(256), &mdt).unwrap().all_in_inode);
    }
}
