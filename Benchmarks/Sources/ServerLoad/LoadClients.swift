import Foundation
import Hummingbird
import HummingbirdWSClient
import Logging
import NIOCore
import Synchronization

/// What one member's connection counted.
struct MemberCounts {
    /// Whether the `hello` frame came.
    var greeted = false
    /// Whether the connection ended (before the benchmark closed it, it was cut off).
    var ended = false
    var endError: String?
    /// Sequence numbers of this member's messages the server accepted (`sent` with `"stored":true`; for the
    /// floor, the echo of the member's own frame).
    var accepted: [UInt32] = []
    /// Acceptance latencies, in nanoseconds.
    var acceptLatencies: [Int64] = []
    /// When each accepted message's answer came (monotonic nanoseconds), by sequence number: its commit.
    var acceptedAt: [UInt32: Int64] = [:]
    /// `error` answers, by code.
    var errors: [String: Int] = [:]
    /// Frames of a kind the benchmark did not expect.
    var unexpected = 0
    /// Every message received (sender << 32 | sequence), the sender's own included.
    var received: [UInt64] = []
    /// When each of ``received`` came (monotonic nanoseconds).
    var receivedAt: [Int64] = []
    /// The message ids seen, to find duplicates (for Missive the server's id; for the floor, sender and sequence).
    var ids: Set<String> = []
    var duplicates = 0
    /// Delivery latencies (send to receipt), in nanoseconds.
    var latencies: [Int64] = []
    /// Deliveries received before the end of the sending window.
    var deliveredInWindow = 0
    var acceptedInWindow = 0
}

/// One member: its connection's outgoing queue and what it counted.
final class LoadMember: Sendable {
    let index: Int
    let conversation: String
    let counts = Mutex(MemberCounts())
    let outgoing: AsyncStream<String>
    let sink: AsyncStream<String>.Continuation
    /// The end of the sending window (monotonic nanoseconds), set when the load starts.
    let windowEnd = Atomic<Int64>(.max)
    /// Whether the floor (echo as acceptance, sender and sequence as id) or Missive is being measured.
    let floor: Bool
    /// The server instance it connects to: 0, or 1 for the second of two.
    let instance: Int

    init(index: Int, conversation: String, floor: Bool, instance: Int = 0) {
        self.index = index
        self.conversation = conversation
        self.floor = floor
        self.instance = instance
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        outgoing = stream
        sink = continuation
    }

    /// Connects and counts every frame until the connection ends.
    func connect(url: String, token: String?, group: any EventLoopGroup) async {
        var headers = HTTPFields()
        if let token { headers[.authorization] = "Bearer \(token)" }
        let outgoing = outgoing
        do {
            try await WebSocketClient.connect(
                url: url, configuration: .init(maxFrameSize: 1 << 20, additionalHeaders: headers), eventLoopGroup: group,
                logger: Logger(label: "missive-bench-client") { _ in SwiftLogNoOpLogHandler() }
            ) { inbound, outbound, _ in
                try await withThrowingTaskGroup(of: Void.self) { tasks in
                    tasks.addTask {
                        for await frame in outgoing { try await outbound.write(.text(frame)) }
                        try await outbound.close(.normalClosure, reason: nil)
                    }
                    for try await message in inbound.messages(maxSize: 1 << 22) {
                        guard case .text(let text) = message else { continue }
                        self.receive(text)
                    }
                    tasks.cancelAll()
                }
            }
            counts.withLock { $0.ended = true }
        } catch {
            counts.withLock {
                $0.ended = true
                $0.endError = "\(error)"
            }
        }
    }

    /// Counts one frame.
    func receive(_ text: String) {
        let now = ProcessStats.now()
        let inWindow = now <= windowEnd.load(ordering: .relaxed)
        var text = text
        let frame = text.withUTF8 { LoadFrame.parse($0) }
        counts.withLock { counts in
            switch frame {
            case .hello:
                counts.greeted = true
            case .message(let id, let sender, let sequence, let sentAt):
                let key = UInt64(sender) << 32 | UInt64(sequence)
                let id = id ?? "\(sender).\(sequence)"
                guard counts.ids.insert(id).inserted else {
                    counts.duplicates += 1
                    return
                }
                counts.received.append(key)
                counts.receivedAt.append(now)
                counts.latencies.append(now - sentAt)
                if inWindow { counts.deliveredInWindow += 1 }
                if floor && sender == index {
                    counts.accepted.append(sequence)
                    counts.acceptLatencies.append(now - sentAt)
                    if inWindow { counts.acceptedInWindow += 1 }
                }
            case .sent(let sequence, let sentAt, let stored):
                guard stored else {
                    counts.errors["not-stored", default: 0] += 1
                    return
                }
                counts.accepted.append(sequence)
                counts.acceptedAt[sequence] = now
                counts.acceptLatencies.append(now - sentAt)
                if inWindow { counts.acceptedInWindow += 1 }
            case .error(let code):
                counts.errors[code, default: 0] += 1
            case .other:
                counts.unexpected += 1
            }
        }
    }

    /// The send frame of this member's message `sequence`, stamped `sentAt`, in `conversation`: a text message
    /// whose content starts with `@@SENDER.SEQUENCE.SENTAT@@`, its `ref` the sequence and the same time.
    func frame(sequence: UInt32, sentAt: Int64) -> String {
        let stamp = "\(index).\(sequence).\(sentAt)"
        return #"{"type":"send","conversation":"\#(conversation)","envelope":{"objectName":"MS:Text","content":{"content":"@@\#(stamp)@@ the quick brown fox jumps over the lazy dog"}},"ref":"\#(stamp)"}"#
    }
}

/// A frame the clients receive, read by scanning its bytes (no JSON decoding on the clients, so that they take as
/// little of the 2 cores as they can).
enum LoadFrame: Equatable {
    case hello
    /// A message event (Missive, with the server's id) or the echo of a send frame (the floor).
    case message(id: String?, sender: Int, sequence: UInt32, sentAt: Int64)
    /// A `sent` answer to the sender, with the ref (sender.sequence.time) it carried.
    case sent(sequence: UInt32, sentAt: Int64, stored: Bool)
    case error(code: String)
    case other

    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> LoadFrame {
        if starts(bytes, #"{"type":"hello""#) { return .hello }
        if starts(bytes, #"{"type":"message""#) {
            guard let stamp = stamp(bytes, after: "@@") else { return .other }
            let id = string(bytes, after: #""message":{"id":""#)
            return .message(id: id, sender: stamp.0, sequence: stamp.1, sentAt: stamp.2)
        }
        if starts(bytes, #"{"type":"send","#) {
            guard let stamp = stamp(bytes, after: "@@") else { return .other }
            return .message(id: nil, sender: stamp.0, sequence: stamp.1, sentAt: stamp.2)
        }
        if starts(bytes, #"{"type":"sent""#) {
            guard let stamp = stamp(bytes, after: #""ref":""#) else { return .other }
            return .sent(sequence: stamp.1, sentAt: stamp.2, stored: find(bytes, #""stored":true"#, from: 0) != nil)
        }
        if starts(bytes, #"{"type":"error""#) { return .error(code: string(bytes, after: #""code":""#) ?? "?") }
        return .other
    }

    private static func starts(_ bytes: UnsafeBufferPointer<UInt8>, _ prefix: StaticString) -> Bool {
        prefix.withUTF8Buffer { prefix in bytes.count >= prefix.count && memcmp(bytes.baseAddress!, prefix.baseAddress!, prefix.count) == 0 }
    }

    private static func find(_ bytes: UnsafeBufferPointer<UInt8>, _ needle: StaticString, from start: Int) -> Int? {
        needle.withUTF8Buffer { needle in
            guard bytes.count >= needle.count else { return nil }
            var index = start
            while index + needle.count <= bytes.count {
                if bytes[index] == needle[0] && memcmp(bytes.baseAddress! + index, needle.baseAddress!, needle.count) == 0 { return index + needle.count }
                index += 1
            }
            return nil
        }
    }

    /// The JSON string (without escapes) that starts after `marker`.
    private static func string(_ bytes: UnsafeBufferPointer<UInt8>, after marker: StaticString) -> String? {
        guard var index = find(bytes, marker, from: 0) else { return nil }
        let start = index
        while index < bytes.count && bytes[index] != UInt8(ascii: "\"") { index += 1 }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    }

    /// `SENDER.SEQUENCE.TIME` after `marker`.
    private static func stamp(_ bytes: UnsafeBufferPointer<UInt8>, after marker: StaticString) -> (Int, UInt32, Int64)? {
        guard var index = find(bytes, marker, from: 0) else { return nil }
        var numbers: [Int64] = []
        var value: Int64 = 0, digits = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte >= 0x30 && byte <= 0x39 {
                value = value * 10 + Int64(byte - 0x30)
                digits += 1
            } else {
                guard digits > 0 else { return nil }
                numbers.append(value)
                value = 0
                digits = 0
                if byte != UInt8(ascii: ".") || numbers.count == 3 { break }
            }
            index += 1
        }
        guard numbers.count == 3 else { return nil }
        return (Int(numbers[0]), UInt32(numbers[1]), numbers[2])
    }
}
