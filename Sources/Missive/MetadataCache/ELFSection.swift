#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads one named section out of an ELF shared object, without loading it.
///
/// Every offset and size read from the file is checked against the file's size, so a truncated or hostile
/// file gives an error, never a crash.
enum ELFSection {
    /// The largest metadata section Missive accepts.
    static let maxSectionSize = 1 << 20

    #if arch(x86_64)
    static let hostMachine: UInt16 = 62  // EM_X86_64
    static let hostMachineName = "x86-64"
    #elseif arch(arm64)
    static let hostMachine: UInt16 = 183  // EM_AARCH64
    static let hostMachineName = "AArch64"
    #else
    static let hostMachine: UInt16 = 0
    static let hostMachineName = "this machine"
    #endif

    /// Files up to this size are read whole, with one `pread`: the section table sits at the end of the
    /// file and the section usually in the middle, so reading piece by piece would take four reads.
    static let readWholeLimit: UInt64 = 256 << 10

    /// The contents of section `name` in the file at `path`, or `nil` when the file is a valid ELF shared
    /// object for this machine that has no such section.
    ///
    /// `knownSize` is the file's size when the caller already took its identity, so that the file is not
    /// looked at again: a small file then costs one `open` and one `pread`. A file that shrank since gives an
    /// error (a short read), never bytes from beyond its end.
    static func read(_ name: String, from path: String, knownSize: Int64? = nil) throws(MissiveError) -> [UInt8]? {
        // POSIX calls rather than FileHandle: hosts read every plugin's metadata at startup.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw MissiveError(.ioFailure, "cannot open file: \(String(cString: strerror(errno)))", file: path)
        }
        defer { close(descriptor) }
        let fileSize: UInt64
        if let knownSize, knownSize >= 0 {
            fileSize = UInt64(knownSize)
        } else {
            var info = stat()
            guard fstat(descriptor, &info) == 0 else {
                throw MissiveError(.ioFailure, "cannot read file: \(String(cString: strerror(errno)))", file: path)
            }
            fileSize = UInt64(info.st_size)
        }

        func readFully(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(MissiveError) {
            var done = 0
            while done < buffer.count {
                let got = pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
                guard got > 0 else {
                    throw MissiveError(.ioFailure, "cannot read file: \(got < 0 ? String(cString: strerror(errno)) : "unexpected end")", file: path)
                }
                done += got
            }
        }
        // A small file is read whole, once; `bytes` then slices it.
        var whole: [UInt8]?
        if fileSize >= 64 && fileSize <= readWholeLimit {
            var all = [UInt8](repeating: 0, count: Int(fileSize))
            try all.withUnsafeMutableBytes { buffer in Result { () throws(MissiveError) in try readFully(into: buffer, at: 0) } }.get()
            whole = all
        }

        func bytes(at offset: UInt64, count: Int) throws(MissiveError) -> [UInt8] {
            guard count >= 0, offset <= fileSize, UInt64(count) <= fileSize - offset else {
                throw MissiveError(.notAPlugin, "not a valid ELF file: truncated at offset \(offset)", file: path)
            }
            if let whole { return Array(whole[Int(offset)..<(Int(offset) + count)]) }
            var result = [UInt8](repeating: 0, count: count)
            try result.withUnsafeMutableBytes { buffer in Result { () throws(MissiveError) in try readFully(into: buffer, at: offset) } }.get()
            return result
        }

        guard fileSize >= 64 else { throw MissiveError(.notAPlugin, "not an ELF shared object (file too small)", file: path) }
        let header = try bytes(at: 0, count: 64)
        guard header[0..<4].elementsEqual([0x7F, 0x45, 0x4C, 0x46]) else {
            throw MissiveError(.notAPlugin, "not an ELF shared object (bad magic number)", file: path)
        }
        guard header[4] == 2, header[5] == 1 else {
            throw MissiveError(.wrongMachine, "ELF file is not 64-bit little-endian", file: path)
        }
        let type = header.u16(16)
        guard type == 3 else { throw MissiveError(.notAPlugin, "ELF file is not a shared object (e_type \(type))", file: path) }
        let machine = header.u16(18)
        guard machine == hostMachine else {
            throw MissiveError(.wrongMachine, "ELF file is for machine \(machine), not \(hostMachineName)", file: path)
        }

        let sectionTable = header.u64(40)
        let entrySize = Int(header.u16(58))
        let count = Int(header.u16(60))
        let namesIndex = Int(header.u16(62))
        guard entrySize >= 64, count > 0, namesIndex < count else {
            throw MissiveError(.notAPlugin, "ELF file has no usable section table", file: path)
        }
        let table = try bytes(at: sectionTable, count: entrySize * count)
        func section(_ index: Int) -> (name: UInt32, offset: UInt64, size: UInt64) {
            let base = index * entrySize
            return (table.u32(base), table.u64(base + 24), table.u64(base + 32))
        }
        let names = section(namesIndex)
        guard names.size <= UInt64(maxSectionSize) else { throw MissiveError(.notAPlugin, "ELF section name table too large", file: path) }
        let nameTable = try bytes(at: names.offset, count: Int(names.size))
        let wanted = Array(name.utf8)
        for index in 0..<count {
            let entry = section(index)
            let start = Int(entry.name)
            guard start + wanted.count < nameTable.count,
                nameTable[start..<(start + wanted.count)].elementsEqual(wanted), nameTable[start + wanted.count] == 0
            else { continue }
            guard entry.size <= UInt64(maxSectionSize) else {
                throw MissiveError(.invalidMetadata, "section \(name) is larger than \(maxSectionSize) bytes", file: path)
            }
            return try bytes(at: entry.offset, count: Int(entry.size))
        }
        return nil
    }
}

extension [UInt8] {
    fileprivate func u16(_ offset: Int) -> UInt16 { UInt16(self[offset]) | UInt16(self[offset + 1]) << 8 }
    fileprivate func u32(_ offset: Int) -> UInt32 { UInt32(u16(offset)) | UInt32(u16(offset + 2)) << 16 }
    fileprivate func u64(_ offset: Int) -> UInt64 { UInt64(u32(offset)) | UInt64(u32(offset + 4)) << 32 }
}
