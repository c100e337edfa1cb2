//! Checksums used by ext4: the raw CRC32C register and the CRC-16 of uninit_bg descriptors.

/// ext4's `ext4_chksum(seed, data)`: CRC32C (Castagnoli, reflected) continuing from the raw register
/// `seed`, with no final inversion. `crc32c_raw(!0, b"123456789") == 0x1CF96D7C`.
pub fn crc32c_raw(seed: u32, data: &[u8]) -> u32 {
    !crc32c::crc32c_append(!seed, data)
}

const CRC16: crc::Crc<u16> = crc::Crc::<u16>::new(&crc::CRC_16_MODBUS);

/// CRC-16 as libext2fs' `ext2fs_crc16(crc, data)`: polynomial 0x8005 reflected, continuing from `crc`.
pub fn crc16(crc: u16, data: &[u8]) -> u16 {
    // CRC_16_MODBUS is 0x8005 reflected with xorout 0; the crc crate takes the initial value of a
    // reflected algorithm in unreflected form, hence the bit reversal to continue from `crc`.
    let mut digest = CRC16.digest_with_initial(crc.reverse_bits());
    digest.update(data);
    digest.finalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_values() {
        assert_eq!(crc32c_raw(!0, b"123456789"), 0x1CF9_6D7C);
        assert_eq!(crc16(0xFFFF, b"123456789"), 0x4B37);
        // chaining equals one pass
        let crc = crc32c_raw(crc32c_raw(!0, b"1234"), b"56789");
        assert_eq!(crc, 0x1CF9_6D7C);
        assert_eq!(crc16(crc16(0xFFFF, b"123"), b"456789"), 0x4B37);
    }
}
