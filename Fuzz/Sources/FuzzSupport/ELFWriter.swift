/// Writes the smallest ELF file that Missive's metadata reader takes for a plugin of this machine: a 64-bit
/// little-endian shared object with no code, whose only sections are the section name table and one
/// section holding the bytes given.
///
/// The metadata target wraps inputs in it to reach the record parser through the real reading path; the
/// seed corpus holds such files too, for the fuzzer to mutate their headers.
public enum ELFWriter {
    #if arch(x86_64)
    static let machine: UInt16 = 62  // EM_X86_64
    #elseif arch(arm64)
    static let machine: UInt16 = 183  // EM_AARCH64
    #else
    static let machine: UInt16 = 0
    #endif

    /// A shared object whose section `name` holds `contents`.
    public static func sharedObject(section name: String, contents: some Collection<UInt8>) -> [UInt8] {
        let names: [UInt8] = [0] + Array(".shstrtab".utf8) + [0] + Array(name.utf8) + [0]
        let namesOffset = 64
        let contentsOffset = namesOffset + names.count
        var tableOffset = contentsOffset + contents.count
        tableOffset += (8 - tableOffset % 8) % 8

        var file = [UInt8](repeating: 0, count: tableOffset)
        file.replaceSubrange(0..<4, with: [0x7F, 0x45, 0x4C, 0x46])
        file[4] = 2  // ELFCLASS64
        file[5] = 1  // ELFDATA2LSB
        file[6] = 1  // EV_CURRENT
        file.put16(3, at: 16)  // ET_DYN
        file.put16(machine, at: 18)
        file.put32(1, at: 20)  // e_version
        file.put64(UInt64(tableOffset), at: 40)  // e_shoff
        file.put16(64, at: 52)  // e_ehsize
        file.put16(64, at: 58)  // e_shentsize
        file.put16(3, at: 60)  // e_shnum
        file.put16(1, at: 62)  // e_shstrndx
        file.replaceSubrange(namesOffset..<contentsOffset, with: names)
        file.replaceSubrange(contentsOffset..<(contentsOffset + contents.count), with: contents)

        file += [UInt8](repeating: 0, count: 64)  // SHN_UNDEF
        file += sectionHeader(name: 1, type: 3, offset: namesOffset, size: names.count)  // SHT_STRTAB
        file += sectionHeader(name: UInt32(1 + ".shstrtab".utf8.count + 1), type: 1, offset: contentsOffset, size: contents.count)  // SHT_PROGBITS
        return file
    }

    private static func sectionHeader(name: UInt32, type: UInt32, offset: Int, size: Int) -> [UInt8] {
        var header = [UInt8](repeating: 0, count: 64)
        header.put32(name, at: 0)
        header.put32(type, at: 4)
        header.put64(UInt64(offset), at: 24)
        header.put64(UInt64(size), at: 32)
        header.put64(1, at: 48)  // sh_addralign
        return header
    }
}

extension [UInt8] {
    fileprivate mutating func put16(_ value: UInt16, at offset: Int) {
        self[offset] = UInt8(value & 0xFF)
        self[offset + 1] = UInt8(value >> 8)
    }

    fileprivate mutating func put32(_ value: UInt32, at offset: Int) {
        put16(UInt16(value & 0xFFFF), at: offset)
        put16(UInt16(value >> 16), at: offset + 2)
    }

    fileprivate mutating func put64(_ value: UInt64, at offset: Int) {
        put32(UInt32(value & 0xFFFF_FFFF), at: offset)
        put32(UInt32(value >> 32), at: offset + 4)
    }
}
