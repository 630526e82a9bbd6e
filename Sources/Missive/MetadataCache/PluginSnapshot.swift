#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import MissiveCore

/// The binary file a ``PluginMetadataCache`` keeps: for each plugin file, its identity, its validated metadata
/// and the scanner's verdict, behind an index sorted by a hash of the path, so that a start looks up only
/// the files it finds and decodes nothing else.
///
/// The layout (little-endian):
/// ```
/// header   "missive-snapshot" (16 bytes), format u32, entry count u32, total length u64, checksum u64 of
///          everything after the header
/// index    per entry, sorted by hash: FNV-1a 64 of the path u64, entry offset u32, entry length u32
/// entries  path, identity (7 × u64), name, version, vendor, abi major and minor (2 × u64), swift?,
///          containers, types, actions, data files (each a u32 count, then the fields), the scan verdict?
/// ```
/// A string is a u32 byte count and the bytes; an absent optional string has the count `0xFFFF_FFFF`.
/// Everything read from the file is checked against its length and its checksum: a truncated or corrupt
/// snapshot, or one of another format (the text cache of earlier versions), is never trusted and never
/// a crash; it is ignored as a whole. The checksum finds accidents, not attacks: whoever can write the cache
/// can write a valid one, which is why the loader still compares every descriptor with the metadata.
enum PluginSnapshot {
    static let magic = Array("missive-snapshot".utf8)
    static let format: UInt32 = 7
    static let headerSize = 40
    static let indexEntrySize = 16
    /// The largest snapshot read: far beyond ``PluginMetadataCache``'s capacity, so a bigger file is not one.
    static let maxSize = 256 << 20

    /// One plugin file's record, as it is written.
    struct Record: Sendable {
        var path: String
        var identity: FileIdentity
        var metadata: PluginMetadata
        var scan: PluginMetadataCache.ScanRecord?
    }

    /// FNV-1a, 64 bits, of a path's bytes: the index's key.
    static func hash(_ path: String) -> UInt64 {
        var path = path
        return path.withUTF8 { bytes in
            var value: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in bytes { value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
            return value
        }
    }

    /// A checksum of `bytes[start...]`, eight bytes at a time: each step is a bijection of the state, so
    /// changing any one word always changes the result.
    static func checksum(_ bytes: [UInt8], from start: Int) -> UInt64 {
        bytes.withUnsafeBytes { buffer in
            var value: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(buffer.count - start)
            var position = start
            while position + 8 <= buffer.count {
                value = (value ^ buffer.loadUnaligned(fromByteOffset: position, as: UInt64.self).littleEndian) &* 0x0000_0100_0000_01B3
                value ^= value >> 29
                position += 8
            }
            while position < buffer.count {
                value = (value ^ UInt64(buffer[position])) &* 0x0000_0100_0000_01B3
                position += 1
            }
            return value
        }
    }

    // MARK: Reading

    /// A snapshot read into memory, with its header and index checked.
    struct Image: Sendable {
        /// The whole file.
        let bytes: [UInt8]
        /// The index: hash, offset and length of each entry, sorted by hash.
        let index: [(hash: UInt64, offset: Int, length: Int)]

        /// Reads and checks the snapshot in `file`; `nil` when it is missing, unreadable, of another format,
        /// truncated or malformed.
        init?(file: String) {
            guard let bytes = FileBytes.read(file, limit: PluginSnapshot.maxSize) else { return nil }
            self.init(bytes: bytes)
        }

        /// Checks a snapshot's header and index.
        init?(bytes: [UInt8]) {
            guard bytes.count >= PluginSnapshot.headerSize, bytes[0..<16].elementsEqual(PluginSnapshot.magic) else { return nil }
            var reader = Reader(bytes, from: 16, to: PluginSnapshot.headerSize)
            guard let format = reader.u32(), format == PluginSnapshot.format, let count = reader.u32(), let length = reader.u64(),
                length == UInt64(bytes.count), let checksum = reader.u64(), checksum == PluginSnapshot.checksum(bytes, from: PluginSnapshot.headerSize)
            else { return nil }
            let entries = PluginSnapshot.headerSize + Int(count) * PluginSnapshot.indexEntrySize
            guard entries <= bytes.count else { return nil }
            var index: [(hash: UInt64, offset: Int, length: Int)] = []
            index.reserveCapacity(Int(count))
            reader = Reader(bytes, from: PluginSnapshot.headerSize, to: entries)
            for _ in 0..<count {
                guard let hash = reader.u64(), let offset = reader.u32(), let size = reader.u32() else { return nil }
                guard Int(offset) >= entries, Int(size) <= bytes.count - Int(offset) else { return nil }
                if let last = index.last, last.hash > hash { return nil }
                index.append((hash, Int(offset), Int(size)))
            }
            self.bytes = bytes
            self.index = index
        }

        /// How many entries the snapshot holds.
        var count: Int { index.count }

        /// The positions in ``index`` of the entries whose path has `hash`.
        func positions(of hash: UInt64) -> Range<Int> {
            var low = 0, high = index.count
            while low < high {
                let middle = (low + high) / 2
                if index[middle].hash < hash { low = middle + 1 } else { high = middle }
            }
            var end = low
            while end < index.count && index[end].hash == hash { end += 1 }
            return low..<end
        }

        /// The bytes of entry `position`.
        func entryBytes(_ position: Int) -> ArraySlice<UInt8> {
            let entry = index[position]
            return bytes[entry.offset..<(entry.offset + entry.length)]
        }

        /// The path of entry `position`, without decoding the rest; `nil` when it is malformed.
        func path(_ position: Int) -> String? {
            let entry = index[position]
            var reader = Reader(bytes, from: entry.offset, to: entry.offset + entry.length)
            return reader.string()
        }

        /// Whether entry `position` is the file `path` (compared as bytes).
        func entry(_ position: Int, isFor path: String) -> Bool {
            let entry = index[position]
            var reader = Reader(bytes, from: entry.offset, to: entry.offset + entry.length)
            guard let stored = reader.stringBytes() else { return false }
            return stored.elementsEqual(path.utf8)
        }

        /// The identity stored in entry `position`, read without decoding anything else.
        func identity(_ position: Int) -> FileIdentity? {
            let entry = index[position]
            var reader = Reader(bytes, from: entry.offset, to: entry.offset + entry.length)
            guard reader.stringBytes() != nil else { return nil }
            return reader.identity()
        }

        /// Entry `position`, decoded; `nil` when it is malformed. `path` is its path when the caller already
        /// compared it, so that it is not decoded again.
        func record(_ position: Int, path: String? = nil) -> Record? {
            let entry = index[position]
            var reader = Reader(bytes, from: entry.offset, to: entry.offset + entry.length)
            return reader.record(path: path)
        }
    }

    /// Reads the fields of a snapshot, checking every length against the end of what it may read.
    struct Reader {
        private var fields: ByteFieldReader

        init(_ bytes: [UInt8], from start: Int, to end: Int) {
            fields = ByteFieldReader(bytes, from: start, to: end)
        }

        var isAtEnd: Bool { fields.isAtEnd }

        mutating func u8() -> UInt8? { fields.u8() }
        mutating func u32() -> UInt32? { fields.integer() }
        mutating func u64() -> UInt64? { fields.integer() }
        mutating func i64() -> Int64? { fields.integer() }

        /// The bytes of a string; `nil` for an absent optional string or a malformed field.
        mutating func stringBytes() -> ArraySlice<UInt8>? {
            let start = fields.position
            guard let count = u32(), count != .max else { return nil }
            fields.rewind(to: start)
            return fields.run()
        }

        /// A string. Bytes that are not UTF-8 (which only a snapshot written on purpose with a right checksum
        /// can hold) are repaired, not trusted: the loader compares the names with the descriptor's anyway.
        mutating func string() -> String? {
            guard let slice = stringBytes() else { return nil }
            return slice.withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) }
        }

        /// An optional string: `.some(nil)` when absent, `nil` when malformed.
        mutating func optionalString() -> String?? {
            let start = fields.position
            guard let count = u32() else { return nil }
            if count == .max { return .some(nil) }
            fields.rewind(to: start)
            return string().map { .some($0) }
        }

        mutating func identity() -> FileIdentity? {
            guard let device = u64(), let inode = u64(), let size = i64(), let seconds = i64(), let nanoseconds = i64(),
                let changeSeconds = i64(), let changeNanoseconds = i64()
            else { return nil }
            return FileIdentity(device: device, inode: inode, size: size, seconds: seconds, nanoseconds: nanoseconds,
                                changeSeconds: changeSeconds, changeNanoseconds: changeNanoseconds)
        }

        /// A whole entry, which must end exactly where its length says; `known` is its path, when known.
        mutating func record(path known: String? = nil) -> Record? {
            let path: String
            if let known {
                guard stringBytes() != nil else { return nil }
                path = known
            } else {
                guard let decoded = string() else { return nil }
                path = decoded
            }
            guard let identity = identity(), let name = string(), let version = string(), let vendor = string(),
                let abiMajor = i64(), let abiMinor = i64(), let swift = optionalString(), let containerCount = u32()
            else { return nil }
            var containers: [MessageContainer] = []
            for _ in 0..<containerCount {
                guard let objectName = string(), let key = string(), let kind = string().flatMap(MessageContainer.KeyKind.init(rawValue:)) else { return nil }
                containers.append(MessageContainer(objectName: objectName, key: key, keyKind: kind))
            }
            guard let typeCount = u32() else { return nil }
            var types: [PluginMetadata.TypeEntry] = []
            types.reserveCapacity(Int(min(typeCount, 4096)))
            for _ in 0..<typeCount {
                guard let objectName = string(), let businessID = optionalString(), let container = optionalString(), let persistence = u32(),
                    let media = u8(), media <= 1
                else { return nil }
                types.append(PluginMetadata.TypeEntry(objectName: objectName, businessID: businessID, container: container,
                                                      persistenceValue: persistence, isMedia: media == 1))
            }
            guard let actionCount = u32() else { return nil }
            var actions: [PluginMetadata.ActionEntry] = []
            for _ in 0..<actionCount {
                guard let kind = string().flatMap(ActionKind.init(rawValue:)), let objectName = string(), let id = string(), let title = string(),
                    let icon = string(), let priority = u32(), let yields = string().flatMap(ActionYield.init(rawValue:)), let signature = string(),
                    let symbol = optionalString()
                else { return nil }
                actions.append(PluginMetadata.ActionEntry(kind: kind, objectName: objectName, id: id, title: title, icon: icon,
                                                          priority: Int32(bitPattern: priority), yields: yields, signature: signature, symbol: symbol))
            }
            guard let dataFileCount = u32(), Int(dataFileCount) <= DataFileGrammar.maxCount else { return nil }
            var dataFiles: [String] = []
            for _ in 0..<dataFileCount {
                guard let path = string() else { return nil }
                dataFiles.append(path)
            }
            // The paths were checked when the metadata was read; a snapshot that breaks the rules was written on
            // purpose, and is not trusted.
            guard DataFileGrammar.problem(in: dataFiles) == nil else { return nil }
            guard let hasScan = u8(), hasScan <= 1 else { return nil }
            var scan: PluginMetadataCache.ScanRecord?
            if hasScan == 1 {
                guard let passed = u8(), passed <= 1, let hash = string(), let hostVersion = string(), let reason = string(),
                    let hasHung = u8(), hasHung <= 1, let hung = u64()
                else { return nil }
                scan = PluginMetadataCache.ScanRecord(passed: passed == 1, contentHash: hash, hostVersion: hostVersion, reason: reason,
                                                      hungAfter: hasHung == 1 ? Double(bitPattern: hung) : nil)
            }
            guard isAtEnd, let major = Int(exactly: abiMajor), let minor = Int(exactly: abiMinor) else { return nil }
            var metadata = PluginMetadata(name: name, version: version, vendor: vendor, abiMajor: major, abiMinor: minor, swiftVersion: swift,
                                          containers: containers, types: types, actions: actions)
            metadata.dataFiles = dataFiles
            return Record(path: path, identity: identity, metadata: metadata, scan: scan)
        }
    }

    // MARK: Writing

    /// Appends the fields of a snapshot.
    struct Writer {
        private var fields = ByteFieldWriter()
        var bytes: [UInt8] {
            get { fields.bytes }
            _modify { yield &fields.bytes }
        }

        mutating func u8(_ value: UInt8) { fields.u8(value) }
        mutating func u32(_ value: UInt32) { fields.integer(value) }
        mutating func u64(_ value: UInt64) { fields.integer(value) }
        mutating func i64(_ value: Int64) { fields.integer(value) }
        mutating func string(_ value: String) { fields.string(value) }
        mutating func optionalString(_ value: String?) {
            guard let value else { return u32(.max) }
            string(value)
        }

        mutating func record(_ record: Record) {
            let id = record.identity, metadata = record.metadata
            string(record.path)
            u64(id.device)
            u64(id.inode)
            for value in [id.size, id.seconds, id.nanoseconds, id.changeSeconds, id.changeNanoseconds] { i64(value) }
            string(metadata.name)
            string(metadata.version)
            string(metadata.vendor)
            i64(Int64(metadata.abiMajor))
            i64(Int64(metadata.abiMinor))
            optionalString(metadata.swiftVersion)
            u32(UInt32(metadata.containers.count))
            for container in metadata.containers {
                string(container.objectName)
                string(container.key)
                string(container.keyKind.rawValue)
            }
            u32(UInt32(metadata.types.count))
            for type in metadata.types {
                string(type.objectName)
                optionalString(type.businessID)
                optionalString(type.container)
                u32(type.persistenceValue)
                u8(type.isMedia ? 1 : 0)
            }
            u32(UInt32(metadata.actions.count))
            for action in metadata.actions {
                string(action.kind.rawValue)
                string(action.objectName)
                string(action.id)
                string(action.title)
                string(action.icon)
                u32(UInt32(bitPattern: action.priority))
                string(action.yields.rawValue)
                string(action.signature)
                optionalString(action.symbol)
            }
            u32(UInt32(metadata.dataFiles.count))
            for path in metadata.dataFiles { string(path) }
            guard let scan = record.scan else { return u8(0) }
            u8(1)
            u8(scan.passed ? 1 : 0)
            string(scan.contentHash)
            string(scan.hostVersion)
            string(scan.reason)
            u8(scan.hungAfter == nil ? 0 : 1)
            u64((scan.hungAfter ?? 0).bitPattern)
        }
    }

    /// A whole snapshot of `entries`: each either a record to encode or the bytes of an entry of the
    /// snapshot read at startup, copied as they are. Paths must be distinct.
    static func encode(_ entries: [(hash: UInt64, body: EntryBody)]) -> [UInt8] {
        var bodies: [[UInt8]] = []
        bodies.reserveCapacity(entries.count)
        let sorted = entries.sorted { $0.hash < $1.hash }
        for entry in sorted {
            switch entry.body {
            case .record(let record):
                var writer = Writer()
                writer.record(record)
                bodies.append(writer.bytes)
            case .copied(let bytes):
                bodies.append(Array(bytes))
            }
        }
        var writer = Writer()
        writer.bytes.append(contentsOf: magic)
        writer.u32(format)
        writer.u32(UInt32(sorted.count))
        let total = headerSize + sorted.count * indexEntrySize + bodies.reduce(0) { $0 + $1.count }
        writer.u64(UInt64(total))
        writer.u64(0)  // the checksum, written last
        var offset = headerSize + sorted.count * indexEntrySize
        for (entry, body) in zip(sorted, bodies) {
            writer.u64(entry.hash)
            writer.u32(UInt32(offset))
            writer.u32(UInt32(body.count))
            offset += body.count
        }
        writer.bytes.reserveCapacity(total)
        for body in bodies { writer.bytes.append(contentsOf: body) }
        let checksum = Self.checksum(writer.bytes, from: headerSize).littleEndian
        withUnsafeBytes(of: checksum) { writer.bytes.replaceSubrange((headerSize - 8)..<headerSize, with: $0) }
        return writer.bytes
    }

    /// What an entry of a new snapshot is made from.
    enum EntryBody {
        /// A record to encode.
        case record(Record)
        /// The bytes of an entry of the snapshot read at startup, unchanged.
        case copied(ArraySlice<UInt8>)
    }
}
