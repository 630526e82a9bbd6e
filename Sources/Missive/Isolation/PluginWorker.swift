import CMissiveSandbox
import MissiveCore
#if canImport(Glibc)
import Glibc
#endif

extension PluginIsolation {
    /// The worker's side: loads the plugin file `arguments[0]` and answers the host on descriptor 3 until the host
    /// closes its end. Returns the exit status: 0 when the host closed the socket, 2 for a usage error, 1 when the
    /// limits or the filter could not be set.
    ///
    /// Options after the file: `--memory BYTES` (the address-space limit; 0 for none), `--spin MICROSECONDS` (how long
    /// to look for the next request before sleeping), `--no-filter` (no seccomp filter) and `--audit` (report the
    /// missing paths the plugin tried to open while loading, for a worker in its own view). Call it from a host's own executable when it passes that executable as the worker command; the
    /// `missive-plugin-worker` executable does only this.
    public static func runWorker(arguments: [String]) -> Int32 {
        guard let file = arguments.first else {
            _ = FileBytes.writeAll("usage: \(workerExecutableName) PLUGIN-FILE [--memory BYTES] [--spin MICROSECONDS] [--no-filter] [--audit]\n".utf8, to: STDERR_FILENO)
            return 2
        }
        var memory: UInt64 = 0
        var filter = true
        var audit = false
        var spin = 0
        var options = arguments.dropFirst().makeIterator()
        while let option = options.next() {
            switch option {
            case "--memory":
                guard let value = options.next().flatMap({ UInt64($0) }) else { return usage("--memory takes a number of bytes") }
                memory = value
            case "--spin":
                guard let value = options.next().flatMap({ Int($0) }), value >= 0 else { return usage("--spin takes a number of microseconds") }
                spin = value
            case "--no-filter":
                filter = false
            case "--audit":
                audit = true
            default:
                return usage("unknown option \(option)")
            }
        }
        let channel = MISSIVE_SANDBOX_CHANNEL
        var output = WireWriter(capacity: 64 << 10)
        func send(_ writer: inout WireWriter) -> Bool {
            defer { writer.removeAll() }
            return FileBytes.writeAll(writer.bytes, to: channel) == nil
        }
        func refuse(_ error: MissiveError) -> Int32 {
            WorkerWire.ReadyFrame(result: .failure(error)).write(into: &output)
            _ = send(&output)
            return 0
        }
        // A crash ends the worker at once with its signal, which the host reports; the Swift runtime's backtracer would
        // start a program.
        missive_sandbox_default_fatal_signals()
        // A worker never outlives its host, even one whose plugin hangs.
        _ = missive_sandbox_watch_parent()
        let limited = missive_sandbox_limit(memory, 256)
        if limited != 0 { return refuse(MissiveError(.loadFailed, "the worker cannot set its limits: \(String(cString: strerror(limited)))", file: file)) }
        let reporting = missive_sandbox_report_to(channel)
        if reporting != 0 { return refuse(MissiveError(.loadFailed, "the worker cannot handle SIGSYS: \(String(cString: strerror(reporting)))", file: file)) }
        // The first process of a PID namespace does not get the signals it sends itself (abort's SIGABRT) unless it
        // handles them: they are relayed to the host as the crash they are.
        let relaying = missive_sandbox_relay_own_signals()
        if relaying != 0 { return refuse(MissiveError(.loadFailed, "the worker cannot relay its own signals: \(String(cString: strerror(relaying)))", file: file)) }
        // In its own view, what the plugin looks for that is not there is worth telling its host (the view holds what it
        // was handed; a plugin that opens /proc/<pid>/mem or a home folder while loading is looking for someone else's).
        if audit && filter, case let status = missive_sandbox_audit_opens(), status != 0 {
            return refuse(MissiveError(.loadFailed, "the worker cannot watch what its plugin opens: \(String(cString: strerror(status)))", file: file))
        }
        if filter, case let status = missive_sandbox_restrict_loading(), status != 0 {
            return refuse(MissiveError(.loadFailed, "the worker cannot install its seccomp filter: \(String(cString: strerror(-status)))", file: file))
        }
        let plugin: LoadedPlugin
        do {
            plugin = try PluginLoader.load(file)
        } catch {
            return refuse(error)
        }
        // Every kind of call once, on the examples, before the filter closes: what a plugin or its runtime sets up on
        // first use (and the crash guard's first look at the process per kind) happens now.
        for type in plugin.types {
            for example in type.examples {
                guard case .success(let content) = example.withUnsafeBufferPointer({ type.decode($0, received: example) }) else { continue }
                WorkerWire.DecodeAnswer(position: 0, result: .success(IsolatedParts(content, flags: [.view, .encoding]))).write(id: 0, into: &output)
                output.removeAll()
            }
        }
        if audit && filter {
            var buffer = [CChar](repeating: 0, count: 64 * 256)
            var dropped: Int32 = 0
            let used = missive_sandbox_audited_paths(&buffer, buffer.count, &dropped)
            let paths = buffer[0..<used].split(separator: 0).map { String(decoding: $0.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
            if !paths.isEmpty {
                WorkerWire.AttemptsFrame(paths: paths, notKept: Int(dropped)).write(into: &output)
                guard send(&output) else { return 0 }
            }
        }
        if filter, case let status = missive_sandbox_lock_down(), status != 0 {
            return refuse(MissiveError(.loadFailed, "the worker cannot install its seccomp filter: \(String(cString: strerror(-status)))", file: file))
        }
        let loaded = WorkerWire.ReadyFrame.Loaded(
            actions: plugin.loadedActions.map { ($0.info.kind, $0.info.objectName, $0.info.id) }, rejections: plugin.actionRejections)
        WorkerWire.ReadyFrame(result: .success(loaded)).write(into: &output)
        guard send(&output) else { return 0 }
        var types: [String: PluginType] = [:]
        for type in plugin.types { types[type.objectName] = type }
        var input = FrameInput(descriptor: channel, spinMicroseconds: spin)
        while let frame = input.next() {
            var reader = frame.reader
            switch WorkerWire.Kind(rawValue: frame.kind) {
            case .decode?:
                guard WorkerAnswers.decode(&reader, id: frame.id, types: types, into: &output, flush: send) else { return 3 }
            case let kind? where kind == .action || kind == .compose:
                WorkerAnswers.act(&reader, id: frame.id, kind: kind, plugin: plugin, types: types).write(id: frame.id, into: &output)
            default:
                return 3
            }
            guard send(&output) else { return 0 }
        }
        return 0
    }

    private static func usage(_ problem: String) -> Int32 {
        _ = FileBytes.writeAll("\(workerExecutableName): \(problem)\n".utf8, to: STDERR_FILENO)
        return 2
    }
}

/// Reads whole frames from the host's socket (blocking).
private struct FrameInput {
    let descriptor: Int32
    let spinMicroseconds: Int
    private var buffer: [UInt8] = []
    private var start = 0
    /// Where each read lands, made once.
    private var chunk = [UInt8](repeating: 0, count: 64 << 10)

    init(descriptor: Int32, spinMicroseconds: Int) {
        self.descriptor = descriptor
        self.spinMicroseconds = spinMicroseconds
    }

    /// The next frame, or `nil` when the host closed the socket (or sent a frame too large to be one).
    mutating func next() -> (kind: UInt8, id: UInt64, reader: WireReader)? {
        while true {
            let available = buffer.count - start
            if available >= 4 {
                var length = 0
                for index in (0..<4).reversed() { length = length << 8 | Int(buffer[start + index]) }
                guard length >= 9, length <= WorkerWire.maximumFrame else { return nil }
                if available >= 4 + length {
                    let body = start + 4
                    start += 4 + length
                    var header = WireReader(buffer, from: body, to: body + 9)
                    guard let kind = try? header.byte(), let id = try? header.integer(UInt64.self) else { return nil }
                    return (kind, id, WireReader(buffer, from: body + 9, to: body + length))
                }
            }
            if start > 0 {
                buffer.removeFirst(start)
                start = 0
            }
            let count = chunk.withUnsafeMutableBytes { SocketSpin.receive(descriptor, $0, spinMicroseconds: spinMicroseconds) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }
}

/// The worker's answers.
private enum WorkerAnswers {
    /// Answers a decode frame: one answer frame per message, flushed at least every millisecond and every 64 KiB, so
    /// that the host sees progress, then `done`. `false` when the request does not parse.
    static func decode(
        _ reader: inout WireReader, id: UInt64, types: [String: PluginType], into output: inout WireWriter, flush: (inout WireWriter) -> Bool
    ) -> Bool {
        guard let request = try? WorkerWire.DecodeRequest.read(&reader) else { return false }
        var lastFlush = ContinuousClock.now
        for (position, item) in request.items.enumerated() {
            let bytes = Array(item.content)
            let decoded: Result<PluginContent, MissiveError> =
                if let type = types[item.objectName] {
                    bytes.withUnsafeBufferPointer { type.decode($0, received: bytes) }
                } else {
                    .failure(MissiveError(.metadataMismatch, "the plugin has no type \(item.objectName)", objectName: item.objectName))
                }
            let answer = WorkerWire.DecodeAnswer(position: UInt32(position), result: decoded.map { IsolatedParts($0, flags: request.flags) })
            answer.write(id: id, into: &output)
            if output.bytes.count >= 64 << 10 || ContinuousClock.now - lastFlush >= .milliseconds(1) {
                guard flush(&output) else { return true }
                lastFlush = ContinuousClock.now
            }
        }
        WorkerWire.writeDone(id: id, into: &output)
        return true
    }

    /// Answers an action or compose frame.
    static func act(_ reader: inout WireReader, id: UInt64, kind: WorkerWire.Kind, plugin: LoadedPlugin, types: [String: PluginType]) -> WorkerWire.ActionAnswer {
        func fail(_ error: MissiveError) -> WorkerWire.ActionAnswer { WorkerWire.ActionAnswer(result: .failure(error)) }
        guard let request = try? WorkerWire.ActionRequest.read(&reader, kind: kind) else { return fail(MissiveError(.pluginFailure, "a malformed action request")) }
        let actionID = request.actionID
        var objectName = "", content: [UInt8] = []
        var isCompose = true
        if case .message(let name, let bytes) = request.target { (objectName, content, isCompose) = (name, Array(bytes), false) }
        guard let action = plugin.loadedActions.first(where: {
            $0.info.id == actionID && (isCompose ? $0.info.kind == .composer : ($0.info.kind == .message && $0.info.objectName == objectName))
        }) else {
            return fail(MissiveError(.noSuchAction, "the plugin has no such action", objectName: isCompose ? nil : objectName, action: actionID))
        }
        let values: [ActionValue]
        do {
            values = try ActionArgumentChecker.values(try ActionArgument.list(fromJSONArray: request.arguments), for: action.info)
        } catch let error as MissiveError {
            return fail(error)
        } catch {
            return fail(MissiveError(.invalidArgument, "the arguments are not a JSON array", action: actionID))
        }
        if isCompose { return WorkerWire.ActionAnswer(result: .success(action.compose(values))) }
        guard let type = types[objectName] else { return fail(MissiveError(.noSuchAction, "the plugin has no type \(objectName)", action: actionID)) }
        switch content.withUnsafeBufferPointer({ type.decode($0, received: content) }) {
        case .failure(let error):
            return fail(error)
        case .success(let decoded):
            guard let output = decoded.run(action, values) else {
                return fail(MissiveError(.noSuchAction, "the action takes messages of another type", objectName: objectName, action: actionID))
            }
            return WorkerWire.ActionAnswer(result: .success(output))
        }
    }
}
