import CMissiveSandbox
import Foundation
import Logging
import MissiveCore

/// A plugin that runs in a worker process of its own: its types are registered from its metadata, and every call
/// crosses to the worker (docs/PROTECTION.md, "Isolated plugins").
///
/// One worker per plugin file, and one call at a time on it, under a lock. When a worker crashes, hangs past its
/// deadline or breaks the protocol during a decode, the messages it had not answered are tried again one at a time
/// on a new worker: the one that fails again is answered with the failure (``MissiveError/Code/pluginCrashed``),
/// the others as usual. After ``PluginIsolation/crashLimit`` such failures within the window, the plugin is taken
/// out of service (and quarantined for the next starts, when the host has a quarantine).
final class IsolatedPlugin: Sendable {
    let path: String
    let metadata: PluginMetadata
    let info: PluginInfo
    let settings: PluginIsolation
    private let identity: FileIdentity?
    private let quarantine: PluginQuarantine?
    private let logger: Logger?
    private let state: Locked<State>
    /// The messages the plugin failed on, answered without its worker (``PluginFailureMemory``).
    let failures: PluginFailureMemory
    /// Where the registry's async calls run this plugin's calls (``suspending(_:)``): a serial queue of the plugin's
    /// own, since its worker answers one call at a time anyway.
    private let calls: DispatchQueue

    /// What the worker reported once the plugin loaded.
    struct Ready: Sendable {
        /// The actions that loaded: kind, objectName and id.
        let actions: [(kind: ActionKind, objectName: String, id: String)]
        /// The loader's refusals of actions.
        let actionRejections: [MissiveError]
        /// The paths outside its view that the plugin tried to open while it loaded (a confined worker notes them), and
        /// how many more it tried than were kept.
        var attempts: [String] = []
        var attemptsNotKept = 0
    }

    /// What one message of a decode gave.
    enum Answer: Sendable {
        case decoded(IsolatedParts)
        case failed(MissiveError)
    }

    private final class State {
        var worker: WorkerProcess?
        var nextID: UInt64 = 1
        var crashes: [Date] = []
        /// Why the plugin is out of service, once it is.
        var withdrawn: MissiveError?
        var ready: Result<Ready, MissiveError>?
    }

    init(
        path: String, identity: FileIdentity?, metadata: PluginMetadata, settings: PluginIsolation, quarantine: PluginQuarantine?, logger: Logger?,
        failures: PluginFailureMemory? = nil
    ) {
        self.failures = failures ?? PluginFailureMemory()
        self.path = path
        self.identity = identity
        self.metadata = metadata
        self.info = PluginInfo(name: metadata.name, version: metadata.version, vendor: metadata.vendor, abiVersion: metadata.abiVersion, path: path)
        self.settings = settings
        self.quarantine = quarantine
        self.logger = logger
        self.state = Locked(State())
        self.calls = DispatchQueue(label: "missive.plugin-calls." + metadata.name)
    }

    /// The result of `body`, a call that crosses to this plugin's worker and may wait for it up to its deadline, run
    /// on the plugin's own queue while the calling task is suspended: no thread of Swift's concurrency pool waits for
    /// a worker. Calls of one plugin run one after the other, as the worker would take them; calls of different
    /// plugins run at once.
    func suspending<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            calls.async { continuation.resume(returning: body()) }
        }
    }

    // MARK: Starting

    /// Starts the worker without waiting for it: ``ready()`` waits. Discovery starts every isolated plugin's worker
    /// first, so that they load at once.
    func begin() {
        state.withLock { state in
            guard state.worker == nil, state.ready == nil else { return }
            do throws(MissiveError) {
                state.worker = try spawn()
            } catch {
                state.ready = .failure(error)
            }
        }
    }

    /// The worker's report once the plugin loaded in it, starting it if ``begin()`` did not: the actions, or why the
    /// plugin did not load (a crash while loading included).
    func ready() -> Result<Ready, MissiveError> {
        state.withLock { state in
            if let ready = state.ready { return ready }
            let result = Result { () throws(MissiveError) in try awaitReady(&state) }
            state.ready = result
            return result
        }
    }

    private func spawn() throws(MissiveError) -> WorkerProcess {
        guard let command = settings.workerCommand else {
            throw MissiveError(
                .loadFailed,
                "the plugin is to run isolated, but there is no plugin worker executable (\(PluginIsolation.workerExecutableName) beside the host, "
                    + "or MISSIVE_PLUGIN_WORKER); it is not loaded into the host instead",
                file: path)
        }
        return try WorkerProcess.start(
            command: command, file: path, arguments: settings.workerArguments, spinMicroseconds: settings.spinMicroseconds, confinement: settings.confinement,
            dataFiles: WorkerView.declaredFiles(metadata.dataFilePaths(pluginPath: path), pluginPath: path))
    }

    /// Waits for the ready frame of the worker in `state` (starting one if there is none).
    private func awaitReady(_ state: inout State) throws(MissiveError) -> Ready {
        let worker: WorkerProcess
        if let running = state.worker {
            worker = running
        } else {
            worker = try spawn()
            state.worker = worker
        }
        // Loading runs the library's initialisers, its entry and every example: more than one call's budget.
        var deadline = WorkerDeadline(cpuSeconds: settings.loadCPUSeconds, wallSeconds: settings.loadCPUSeconds * 3, countingAllProcessorTime: true)
        enum Report {
            case ready(Ready)
            case refused(MissiveError)
            case failed(String)
        }
        let report: Report
        var attempts: [String] = [], attemptsNotKept = 0
        do throws(WorkerProcess.Failure) {
            var frame = try worker.receive(deadline: &deadline)
            if frame.kind == WorkerWire.Kind.attempts.rawValue {
                var reader = frame.reader
                do throws(WorkerWire.Malformed) {
                    let report = try WorkerWire.AttemptsFrame.read(&reader)
                    (attempts, attemptsNotKept) = (report.paths, report.notKept)
                } catch {
                    throw worker.garbage(error.reason)
                }
                frame = try worker.receive(deadline: &deadline)
            }
            var reader = frame.reader
            if frame.kind == WorkerWire.Kind.forbidden.rawValue {
                report = .failed(Self.forbiddenCall(&reader) + " while loading")
            } else if frame.kind != WorkerWire.Kind.ready.rawValue {
                report = .failed(worker.garbage("it sent a frame of kind \(frame.kind) before it was ready").reason)
            } else {
                do throws(WorkerWire.Malformed) {
                    switch try WorkerWire.ReadyFrame.read(&reader, file: path).result {
                    case .success(let loaded): report = .ready(Ready(actions: loaded.actions, actionRejections: loaded.rejections))
                    case .failure(let error): report = .refused(error)
                    }
                } catch {
                    report = .failed(worker.garbage(error.reason).reason)
                }
            }
        } catch {
            report = .failed(error.reason + error.output)
        }
        switch report {
        case .ready(var ready):
            ready.attempts = attempts
            ready.attemptsNotKept = attemptsNotKept
            if !attempts.isEmpty {
                logger?.warning(
                    "an isolated plugin tried to open files that are not in its view while it loaded",
                    metadata: ["missive.file": "\(path)", "missive.paths": "\(attempts.joined(separator: ", "))\(attemptsNotKept > 0 ? " and \(attemptsNotKept) more" : "")"])
            }
            return ready
        case .refused(let error):
            // The loader's refusal, as in process: not a crash.
            state.worker = nil
            worker.stop()
            throw error
        case .failed(let reason):
            state.worker = nil
            worker.stop()
            throw MissiveError(.loadFailed, "the plugin did not load in its worker: \(reason)", file: path)
        }
    }

    /// `the seccomp filter stopped it calling openat (system call 257)`.
    static func forbiddenCall(_ reader: inout WireReader) -> String {
        guard let number = try? reader.integer(Int32.self) else { return PluginIsolation.forbiddenCallPhrase }
        return "\(PluginIsolation.forbiddenCallPhrase) calling \(SystemCalls.name(number)) (system call \(number))"
    }

    /// A running worker whose plugin is ready, starting a new one when there is none (the last one failed).
    ///
    /// A decode does not look for a worker that died between calls (a thread of the plugin's own that crashed later),
    /// which would cost a system call on every call: the decode fails, its messages are tried again one at a time on
    /// a new worker, and none is blamed, since each then decodes. An action looks (``replaceIfEnded(_:)``): it is not
    /// replayed, so a death before it must not count as its failure.
    private func worker(_ state: inout State) throws(MissiveError) -> WorkerProcess {
        if let withdrawn = state.withdrawn { throw withdrawn }
        if let worker = state.worker { return worker }
        _ = try awaitReady(&state)
        guard let worker = state.worker else { throw MissiveError(.loadFailed, "the plugin's worker did not start", file: path) }
        return worker
    }

    // MARK: Decoding

    /// Decodes messages of the plugin's types: one answer per item, in order. Never fails as a whole.
    ///
    /// A message the plugin failed on before (``PluginFailureMemory``) is answered with that failure at once, without
    /// the worker and without waiting for a call in flight; a part (the view, the encoding) it failed on is left out of
    /// the request and answered with its failure. The memory is looked at again once the plugin's lock is held, since
    /// a call that waited for it may find a failure that the call before it just met.
    func decode(_ items: [(objectName: String, content: [UInt8])], flags: WorkerWire.DecodeFlags = []) -> [Answer] {
        guard !items.isEmpty else { return [] }
        var recall = Recall(items: items, flags: flags)
        var generation = failures.generation
        var pending = recall.look(at: Array(items.indices), in: failures, file: path)
        if !pending.isEmpty {
            state.withLock { state in
                if failures.generation != generation {
                    generation = failures.generation
                    pending = recall.look(at: pending, in: failures, file: path)
                }
                // The messages whose parts are all still to ask go in one batch; those with a part left out in another.
                let groups = Dictionary(grouping: pending) { flags.subtracting(recall.failedParts[$0]?.flags ?? []).rawValue }
                for (raw, indices) in groups.sorted(by: { $0.key > $1.key }) {
                    let answers = decodeInWorker(&state, indices.map { items[$0] }, flags: WorkerWire.DecodeFlags(rawValue: raw))
                    for (position, index) in indices.enumerated() { recall.answers[index] = answers[position] }
                }
            }
        }
        return recall.finished(file: path)
    }

    /// The failure remembered for `operation` on `content` of `objectName`, as the error to answer with; `nil` when
    /// none is.
    func rememberedFailure(objectName: String, content: [UInt8], operation: PluginFailure.Operation) -> MissiveError? {
        guard !failures.isEmpty else { return nil }
        let hash = PluginFailure.sha256(content)
        return failures.failure(file: path, objectName: objectName, contentSHA256: hash, operation: operation)?.error(file: path)
    }

    /// The answers a decode takes from the memory of failures, and the parts it leaves out of its request.
    private struct Recall {
        let items: [(objectName: String, content: [UInt8])]
        let flags: WorkerWire.DecodeFlags
        var answers: [Answer?]
        /// For each message, the parts remembered to fail, and the failure to answer them with.
        var failedParts: [(flags: WorkerWire.DecodeFlags, error: MissiveError)?]
        /// The content hashes, computed once.
        private var hashes: [String?]

        init(items: [(objectName: String, content: [UInt8])], flags: WorkerWire.DecodeFlags) {
            self.items = items
            self.flags = flags
            answers = Array(repeating: nil, count: items.count)
            failedParts = Array(repeating: nil, count: items.count)
            hashes = Array(repeating: nil, count: items.count)
        }

        /// Answers the messages at `indices` whose decode is remembered to fail, notes their parts that are, and
        /// returns the indices still to send.
        mutating func look(at indices: [Int], in memory: PluginFailureMemory, file: String) -> [Int] {
            guard !memory.isEmpty else { return indices }
            var rest: [Int] = []
            for index in indices {
                let objectName = items[index].objectName
                let hash = hashes[index] ?? PluginFailure.sha256(items[index].content)
                hashes[index] = hash
                if let failure = memory.failure(file: file, objectName: objectName, contentSHA256: hash, operation: .decode) {
                    answers[index] = .failed(failure.error(file: file))
                    continue
                }
                for (part, operation) in [(WorkerWire.DecodeFlags.view, PluginFailure.Operation.view), (.encoding, .encoding)]
                where flags.contains(part) && failedParts[index]?.flags.contains(part) != true {
                    guard let failure = memory.failure(file: file, objectName: objectName, contentSHA256: hash, operation: operation) else { continue }
                    failedParts[index] = ((failedParts[index]?.flags ?? []).union(part), failure.error(file: file))
                }
                rest.append(index)
            }
            return rest
        }

        /// Every answer, with the parts remembered to fail failed.
        func finished(file: String) -> [Answer] {
            answers.indices.map { index in
                switch answers[index] {
                case .decoded(let parts)?:
                    guard let failed = failedParts[index] else { return .decoded(parts) }
                    return .decoded(parts.failing(failed.flags, with: failed.error))
                case .failed(let error)?:
                    return .failed(error)
                case nil:
                    return .failed(MissiveError(.pluginCrashed, "the message was not answered", file: file))
                }
            }
        }
    }

    /// Sends messages to the worker, under the plugin's lock: see ``decode(_:flags:)``.
    private func decodeInWorker(_ state: inout State, _ items: [(objectName: String, content: [UInt8])], flags: WorkerWire.DecodeFlags) -> [Answer] {
        var answers = [Answer?](repeating: nil, count: items.count)
        let all = Array(items.indices)
        switch run(&state, all, items, flags, into: &answers) {
        case .finished:
            return answers.map { $0! }
        case .notStarted(let error):
            return items.map { _ in .failed(error) }
        case .failed(let failure):
            logger?.warning(
                "an isolated plugin's worker failed during a batch; trying the messages it had not answered one at a time",
                metadata: ["missive.file": "\(path)", "missive.reason": "\(failure.reason)\(failure.output)"])
        }
        // The messages in flight, one at a time, each on a worker of its own if need be. A message whose decode failed
        // earlier in this loop (the same content twice in a batch) is answered from the memory: it costs one crash.
        for index in all where answers[index] == nil {
            if flags.isEmpty, let remembered = rememberedFailure(objectName: items[index].objectName, content: items[index].content, operation: .decode) {
                answers[index] = .failed(remembered)
                continue
            }
            switch run(&state, [index], items, flags, into: &answers) {
            case .finished: continue
            case .notStarted(let error):
                answers[index] = .failed(withdraw(&state, notStarting: error))
            case .failed(let failure):
                let crash = MissiveError(.pluginCrashed, failure.reason, file: path, objectName: items[index].objectName)
                recordCrash(&state, failure, objectName: items[index].objectName, operation: flags.isEmpty ? "decode" : "view")
                // Remembered as what was asked: the decode, or the parts that came with it.
                var operations: [PluginFailure.Operation] = flags.isEmpty ? [.decode] : []
                if flags.contains(.view) { operations.append(.view) }
                if flags.contains(.encoding) { operations.append(.encoding) }
                failures.record(
                    file: path, objectName: items[index].objectName, content: items[index].content, operations: operations, reason: failure.reason)
                // A view or an encoding that crashes costs that part, not the message: as in process, the message
                // decodes and the part fails.
                if !flags.isEmpty, state.withdrawn == nil, case .finished = run(&state, [index], items, [], into: &answers),
                    case .decoded(let parts)? = answers[index]
                {
                    answers[index] = .decoded(parts.failing(flags, with: crash))
                } else {
                    answers[index] = .failed(crash)
                }
            }
        }
        return answers.map { $0 ?? .failed(MissiveError(.pluginCrashed, "the message was not answered", file: path)) }
    }

    private enum BatchOutcome {
        case finished
        case notStarted(MissiveError)
        case failed(WorkerProcess.Failure)
    }

    /// Sends the items at `indices` as one batch and reads the answers into `answers`.
    private func run(
        _ state: inout State, _ indices: [Int], _ items: [(objectName: String, content: [UInt8])], _ flags: WorkerWire.DecodeFlags,
        into answers: inout [Answer?]
    ) -> BatchOutcome {
        let worker: WorkerProcess
        do throws(MissiveError) {
            worker = try self.worker(&state)
        } catch {
            return .notStarted(error)
        }
        let id = state.nextID
        state.nextID += 1
        var writer = WireWriter(capacity: indices.reduce(32) { $0 + items[$1].content.count + items[$1].objectName.utf8.count + 8 })
        WorkerWire.DecodeRequest.write(id: id, flags: flags, items: items, indices: indices, into: &writer)
        do throws(WorkerProcess.Failure) {
            var deadline = callDeadline()
            try worker.send(writer.bytes, deadline: &deadline)
            var answered = 0
            while true {
                var deadline = callDeadline()
                let next = items[indices[min(answered, indices.count - 1)]]
                let limit = WorkerWire.answerLimit(input: next.content.count + next.objectName.utf8.count)
                let frame = try worker.receive(deadline: &deadline, limit: limit)
                var reader = frame.reader
                if frame.kind == WorkerWire.Kind.forbidden.rawValue {
                    worker.stop()
                    throw WorkerProcess.Failure(reason: Self.forbiddenCall(&reader), signal: SIGSYS)
                }
                guard frame.id == id else { throw worker.garbage("it answered request \(frame.id) during request \(id)") }
                if frame.kind == WorkerWire.Kind.done.rawValue {
                    guard answered == indices.count else { throw worker.garbage("it ended a batch of \(indices.count) after \(answered) answers") }
                    return .finished
                }
                guard frame.kind == WorkerWire.Kind.answer.rawValue else { throw worker.garbage("it sent a frame of kind \(frame.kind) during a decode") }
                do throws(WorkerWire.Malformed) {
                    guard answered < indices.count else { throw WorkerWire.Malformed(reason: "it sent more answers than the \(indices.count) messages asked") }
                    let index = indices[answered]
                    let answer = try WorkerWire.DecodeAnswer.read(&reader, file: path, objectName: items[index].objectName)
                    guard answer.position == answered else {
                        throw WorkerWire.Malformed(reason: "answer \(answer.position) came where \(answered) of \(indices.count) was due")
                    }
                    switch answer.result {
                    case .success(let parts): answers[index] = .decoded(parts)
                    case .failure(let error): answers[index] = .failed(error)
                    }
                    guard reader.isAtEnd else { throw WorkerWire.Malformed(reason: "an answer has bytes after its end") }
                    answered += 1
                } catch {
                    throw worker.garbage(error.reason)
                }
            }
        } catch {
            worker.stop()
            state.worker = nil
            return .failed(error)
        }
    }

    private func callDeadline() -> WorkerDeadline {
        WorkerDeadline(cpuSeconds: settings.callCPUSeconds, wallSeconds: settings.callWallSeconds)
    }

    // MARK: Actions

    /// Runs the message action `actionID` on content of the type `objectName` (arguments checked by the host, as a
    /// JSON array), or the composer action `actionID` when `content` is `nil`.
    ///
    /// A message action that crashed, hung or was stopped on the same content before (``PluginFailureMemory``) fails
    /// at once with that failure, without the worker.
    func perform(_ actionID: String, objectName: String, content: [UInt8]?, arguments: String) -> Result<ActionFunctionOutput, MissiveError> {
        if let content, let remembered = rememberedFailure(objectName: objectName, content: content, operation: .action(actionID)) {
            var error = remembered
            error.action = actionID
            return .failure(error)
        }
        return state.withLock { state in
            replaceIfEnded(&state)
            let worker: WorkerProcess
            do throws(MissiveError) {
                worker = try self.worker(&state)
            } catch {
                return .failure(withdraw(&state, notStarting: error))
            }
            let id = state.nextID
            state.nextID += 1
            var writer = WireWriter(capacity: (content?.count ?? 0) + arguments.utf8.count + 64)
            let target: WorkerWire.ActionRequest.Target = content.map { .message(objectName: objectName, content: $0[...]) } ?? .composer
            WorkerWire.ActionRequest(target: target, actionID: actionID, arguments: arguments).write(id: id, into: &writer)
            do throws(WorkerProcess.Failure) {
                var deadline = callDeadline()
                try worker.send(writer.bytes, deadline: &deadline)
                let frame = try worker.receive(deadline: &deadline, limit: WorkerWire.answerLimit(input: writer.bytes.count))
                var reader = frame.reader
                if frame.kind == WorkerWire.Kind.forbidden.rawValue {
                    worker.stop()
                    throw WorkerProcess.Failure(reason: Self.forbiddenCall(&reader), signal: SIGSYS)
                }
                guard frame.id == id, frame.kind == WorkerWire.Kind.actionAnswer.rawValue else {
                    throw worker.garbage("it sent a frame of kind \(frame.kind) for request \(frame.id) during action request \(id)")
                }
                do throws(WorkerWire.Malformed) {
                    return try WorkerWire.ActionAnswer.read(&reader, file: path).result
                } catch {
                    throw worker.garbage(error.reason)
                }
            } catch {
                worker.stop()
                state.worker = nil
                recordCrash(&state, error, objectName: content == nil ? nil : objectName, operation: "action")
                if let content {
                    failures.record(file: path, objectName: objectName, content: content, operations: [.action(actionID)], reason: error.reason)
                }
                return .failure(MissiveError(.pluginCrashed, "the action crashed the plugin: \(error.reason)", file: path, objectName: objectName, action: actionID))
            }
        }
    }

    /// Takes the plugin out of service when a new worker no longer loads it (it crashes or hangs while loading now):
    /// until the host starts again, rather than a load's wait for each later call. The error to answer with.
    private func withdraw(_ state: inout State, notStarting error: MissiveError) -> MissiveError {
        if let withdrawn = state.withdrawn { return withdrawn }
        let withdrawn = MissiveError(.quarantined, "its worker no longer loads it after a failure: \(error.message)", file: path)
        state.withdrawn = withdrawn
        logger?.error("an isolated plugin no longer loads; it is out of service", metadata: ["missive.file": "\(path)", "missive.reason": "\(error.message)"])
        return withdrawn
    }

    /// Drops the worker when it ended between calls, so that the next call starts a new one instead of failing
    /// on a dead one. Not counted as a failure: no message or action was in flight.
    private func replaceIfEnded(_ state: inout State) {
        guard let worker = state.worker, let failure = worker.endedBetweenCalls() else { return }
        worker.stop()
        state.worker = nil
        logger?.warning(
            "an isolated plugin's worker ended between calls; a new one takes the next call",
            metadata: ["missive.file": "\(path)", "missive.reason": "\(failure.reason)\(failure.output)"])
    }

    // MARK: Crashes

    /// Counts a failure that a message (or an action) caused, taking the plugin out of service past the limit.
    private func recordCrash(_ state: inout State, _ failure: WorkerProcess.Failure, objectName: String?, operation: String) {
        let now = Date()
        state.crashes.append(now)
        state.crashes.removeAll { now.timeIntervalSince($0) > settings.crashWindowSeconds }
        logger?.error(
            "an isolated plugin failed on one message; that message is kept as unknown and the plugin goes on with a new worker",
            metadata: ["missive.file": "\(path)", "missive.objectName": "\(objectName ?? "-")", "missive.reason": "\(failure.reason)\(failure.output)"])
        guard state.crashes.count >= settings.crashLimit, state.withdrawn == nil else { return }
        var reason = "its worker failed \(state.crashes.count) times in \(Int(settings.crashWindowSeconds)) s (the last: \(failure.reason))"
        if let quarantine {
            quarantine.append(
                path: path, identity: identity, objectName: objectName, operation: PluginQuarantine.isolatedPrefix + operation, signal: failure.signal ?? 0,
                date: now)
            reason += ", so it is quarantined until the file changes or the quarantine is cleared (missive quarantine clear)"
        } else {
            reason += ", so it is out of service until the host starts again"
        }
        state.withdrawn = MissiveError(.quarantined, reason, file: path)
        state.worker?.stop()
        state.worker = nil
        logger?.error("an isolated plugin was taken out of service", metadata: ["missive.file": "\(path)", "missive.reason": "\(reason)"])
    }

    /// Why the plugin is out of service, if it is.
    var withdrawal: MissiveError? { state.withLock { $0.withdrawn } }

    /// The resident memory of its worker and its proportional share, when one runs: for the benchmarks.
    var workerMemory: (resident: Int, proportional: Int)? { state.withLock { $0.worker?.memory } }
}

/// System-call names, for reports.
enum SystemCalls {
    static func name(_ number: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        guard missive_sandbox_syscall_name(number, &buffer, buffer.count) == 0 else { return "system call \(number)" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
