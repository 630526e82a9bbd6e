import CMissiveSandbox
import MissiveCore

/// The frames a host and its plugin worker exchange on their socket (docs/PROTECTION.md, "The worker's
/// protocol").
///
/// Every frame is a 4-byte length, then that many bytes: a kind byte, an 8-byte request id and the body. Numbers are
/// little-endian; a string or a byte run is a 4-byte length and its bytes; an optional value is a byte (0 absent, 1
/// present) and the value. The worker answers a decode with one ``Kind/answer`` frame per message, in order, then
/// ``Kind/done``; a host that reads anything else (another request's id, a kind it did not ask for, a body that
/// does not parse, a frame over ``maximumFrame``) treats the worker as crashed.
enum WorkerWire {
    /// What a frame is.
    enum Kind: UInt8 {
        /// Host: decode messages (flags, then the count, then each message's objectName and content).
        case decode = 1
        /// Host: run a message action on a message (objectName, content, action id, arguments as a JSON array).
        case action = 2
        /// Host: run a composer action (action id, arguments as a JSON array).
        case compose = 3
        /// Worker: the plugin loaded (its actions and the loader's refusals of actions), or why it did not.
        case ready = 10
        /// Worker: one message of a decode.
        case answer = 11
        /// Worker: what an action or composer action gave.
        case actionAnswer = 12
        /// Worker: the last answer of a decode has been sent.
        case done = 13
        /// Worker, before `ready` and only with `--audit`: the paths outside its view the plugin tried to open while it
        /// loaded (a count, the paths, and how many more were not kept).
        case attempts = 14
        /// Worker: the seccomp filter stopped a system call (written by the SIGSYS handler, in C).
        case forbidden = 0x7f
        /// Worker: it sent itself a fatal signal, relayed because it is the first process of its PID namespace (written
        /// by the handler in C); ``WorkerProcess`` turns it into a crash with that signal.
        case signalled = 0x7e
    }

    /// The kind byte of ``Kind/signalled``.
    static let signalledKind = Kind.signalled.rawValue

    /// The most one frame may hold: 256 MiB.
    static let maximumFrame = 256 << 20

    /// The most the answer to one message or one action may hold: 4 MiB, plus 16 times the bytes the host sent for
    /// it (its content and arguments). What a plugin gives (a digest, words, a view, an encoding, an edit) grows with
    /// what it was given; a worker that announces more is treated as crashed before the host holds the bytes, so an
    /// isolated plugin cannot make its host hold more than a bounded multiple of its input.
    static func answerLimit(input: Int) -> Int {
        min(maximumFrame, (4 << 20) + 16 * input)
    }

    /// What a decode asks for besides the texts.
    struct DecodeFlags: OptionSet {
        let rawValue: UInt8
        /// The view document.
        static let view = DecodeFlags(rawValue: 1)
        /// The type's own encoding of the content.
        static let encoding = DecodeFlags(rawValue: 2)
    }

    /// A frame whose body does not parse.
    struct Malformed: Error {
        let reason: String
    }
}

/// Writes frames into one buffer.
struct WireWriter {
    private var fields = ByteFieldWriter()
    private var frameStart = 0

    init(capacity: Int = 256) {
        fields.bytes.reserveCapacity(capacity)
    }

    /// What was written.
    var bytes: [UInt8] { fields.bytes }

    /// Starts a frame; ``endFrame()`` fills in its length.
    mutating func beginFrame(_ kind: WorkerWire.Kind, id: UInt64) {
        frameStart = fields.bytes.count
        fields.integer(UInt32(0))
        fields.u8(kind.rawValue)
        fields.integer(id)
    }

    mutating func endFrame() {
        let length = UInt32(fields.bytes.count - frameStart - 4)
        withUnsafeBytes(of: length.littleEndian) { raw in
            for index in 0..<4 { fields.bytes[frameStart + index] = raw[index] }
        }
    }

    /// Forgets what was written (keeping the buffer's capacity).
    mutating func removeAll() {
        fields.bytes.removeAll(keepingCapacity: true)
    }

    mutating func byte(_ value: UInt8) { fields.u8(value) }
    mutating func integer<T: FixedWidthInteger>(_ value: T) { fields.integer(value) }
    mutating func run(_ value: some Collection<UInt8>) { fields.run(value) }
    mutating func string(_ value: String) { fields.string(value) }

    mutating func optionalString(_ value: String?) {
        guard let value else { return byte(0) }
        byte(1)
        string(value)
    }

    mutating func error(_ error: MissiveError) {
        string(error.code.description)
        string(error.message)
        optionalString(error.objectName)
        optionalString(error.action)
        optionalString(error.parameter)
    }
}

/// Reads the body of one frame.
struct WireReader {
    private var fields: ByteFieldReader

    init(_ bytes: [UInt8], from start: Int, to end: Int) {
        fields = ByteFieldReader(bytes, from: start, to: end)
    }

    var isAtEnd: Bool { fields.isAtEnd }

    /// The value, or the error of a frame that ends in the middle of one.
    private func present<T>(_ value: T?) throws(WorkerWire.Malformed) -> T {
        guard let value else { throw WorkerWire.Malformed(reason: "a frame ends in the middle of a value") }
        return value
    }

    mutating func byte() throws(WorkerWire.Malformed) -> UInt8 { try present(fields.u8()) }

    mutating func integer<T: FixedWidthInteger>(_ type: T.Type = T.self) throws(WorkerWire.Malformed) -> T { try present(fields.integer(type)) }

    mutating func run() throws(WorkerWire.Malformed) -> ArraySlice<UInt8> { try present(fields.run()) }

    mutating func string() throws(WorkerWire.Malformed) -> String {
        String(decoding: try run(), as: UTF8.self)
    }

    mutating func optionalString() throws(WorkerWire.Malformed) -> String? {
        switch try byte() {
        case 0: return nil
        case 1: return try string()
        default: throw WorkerWire.Malformed(reason: "an optional value has a flag other than 0 and 1")
        }
    }

    /// An error the worker sent, about the plugin at `file`.
    mutating func error(file: String) throws(WorkerWire.Malformed) -> MissiveError {
        let codeName = try string()
        let message = try string()
        let objectName = try optionalString(), action = try optionalString(), parameter = try optionalString()
        let code = MissiveError.Code(wireName: codeName) ?? .pluginFailure
        return MissiveError(code, message, file: file, objectName: objectName, action: action, parameter: parameter)
    }
}
