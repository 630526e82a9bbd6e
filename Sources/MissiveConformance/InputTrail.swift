import Foundation
import Missive
#if canImport(Glibc)
import Glibc
#endif

/// The input a check is about to give the plugin, kept where the parent process can read it after the child
/// dies, so that a crash or a hang names the input that caused it.
///
/// The child maps a small file next to its result file (`MAP_SHARED`) and copies each description into the
/// mapping before the call it describes: a `memcpy`, no system call. The pages belong to the file, so what
/// was written last is still there when the process is killed. The parent reads the file after a crash or a
/// timeout. In a run without a trail (`--in-process`) ``note(_:)`` does nothing and builds no text.
enum InputTrail {
    /// Bytes of the mapped file: a 4-byte length, then that many bytes of UTF-8.
    static let capacity = 4096
    /// The longest description kept, in bytes.
    private static let textCapacity = capacity - 4

    /// The file a child keeps its trail in, next to its result file.
    static func path(forResultFile resultFile: String) -> String { resultFile + ".input" }

    /// The address of the mapping, or 0 before ``open(at:)``.
    private static let mapping = Locked<UInt>(0)

    /// Maps the trail file at `path`, created empty, for this process's notes.
    static func open(at path: String) {
        let descriptor = Glibc.open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        guard ftruncate(descriptor, off_t(capacity)) == 0 else { return }
        let address = mmap(nil, capacity, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0)
        guard let address, address != MAP_FAILED else { return }
        mapping.withLock { $0 = UInt(bitPattern: address) }
    }

    /// Records `description` as the input about to be given. Cheap when there is no trail: the text is not
    /// built.
    static func note(_ description: @autoclosure () -> String) {
        mapping.withLock { bits in
            guard let address = UnsafeMutableRawPointer(bitPattern: bits) else { return }
            var text = description()
            let bytes = text.withUTF8 { Array($0.prefix(textCapacity)) }
            // The length last, so a reader never takes a half-written text for a whole one.
            address.storeBytes(of: UInt32(0), as: UInt32.self)
            bytes.withUnsafeBytes { (address + 4).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            address.storeBytes(of: UInt32(bytes.count), as: UInt32.self)
        }
    }

    /// Forgets the last input, once the calls it was noted for are over.
    static func clear() {
        mapping.withLock { bits in UnsafeMutableRawPointer(bitPattern: bits)?.storeBytes(of: UInt32(0), as: UInt32.self) }
    }

    /// The last description a child noted in the trail file at `path`, or `nil`.
    static func read(at path: String) -> String? {
        guard let data = FileManager.default.contentsOfFile(atPath: path), data.count >= 4 else { return nil }
        let length = data.prefix(4).withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
        guard length > 0, Int(length) <= min(textCapacity, data.count - 4) else { return nil }
        return String(decoding: data.dropFirst(4).prefix(Int(length)), as: UTF8.self)
    }
}
