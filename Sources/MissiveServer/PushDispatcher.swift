import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import MissiveCore
import ServiceLifecycle
import Synchronization

/// One push: what the gateway receives, as JSON.
struct Push: Sendable, Encodable {
    /// The member to notify.
    var member: String
    var conversation: String
    var sender: String
    var messageID: String
    var objectName: String
    /// The text to show.
    var text: String
    /// The member's unread count in the conversation when the push is sent; `null` when the store could not say.
    var unreadCount: Int?
    /// The message's `sentAt` (milliseconds since 1970, the server's time).
    var sentAt: Int64
}

/// A push the gateway never took, as a line of the dead-letter file.
private struct DeadLetter: Encodable {
    var push: Push
    var gateway: String
    var attempts: Int
    var lastError: String
    /// When it was given up, in milliseconds since 1970.
    var failedAt: Int64
}

/// Sends pushes to the gateway off the request path: a bounded queue, a few concurrent senders, retries with
/// backoff, and a dead-letter file for what the gateway never took.
///
/// It runs as a service of the server's group, shut down after the HTTP server (so that the requests in flight
/// can still queue pushes). When the group shuts down, a push being sent finishes its current try without trying
/// again, and the pushes still waiting go to the dead-letter file: none is lost without a line there.
///
/// The HTTP client is Foundation's `URLSession` (libcurl on Linux): it adds no dependency and no build time, speaks
/// `https`, and bounds each try by ``PushPolicy/timeout`` (request and resource timeouts alike).
final class PushDispatcher: Service, Sendable {
    private struct State {
        var queue: [Push] = []
        var waiting: [CheckedContinuation<Push?, Never>] = []
        var closed = false
        /// Pushes a sender has taken and not finished with (every try included).
        var inFlight = 0
        /// Those waiting in ``settled()``.
        var settling: [CheckedContinuation<Void, Never>] = []

        /// Whether nothing is queued or being sent.
        var isSettled: Bool { queue.isEmpty && inFlight == 0 }
    }

    /// Why a try failed, and whether another may succeed.
    private enum Failure: Error {
        case retryable(String, retryAfter: Duration?)
        case permanent(String)
    }

    let gateway: URL
    let credential: PushCredential?
    let policy: PushPolicy
    private let deadLetterPath: String
    private let unreadCount: @Sendable (_ member: String, _ conversation: String) async -> Int?
    private let logger: Logger
    private let state = Mutex(State())
    /// Appends to the dead-letter file, one line at a time.
    private let deadLetters = Mutex<Int32>(-1)
    private let session: URLSession

    init(
        gateway: URL, credential: PushCredential?, policy: PushPolicy, deadLetterPath: String, logger: Logger,
        unreadCount: @escaping @Sendable (_ member: String, _ conversation: String) async -> Int?
    ) {
        self.gateway = gateway
        self.credential = credential
        self.policy = policy
        self.deadLetterPath = deadLetterPath
        self.logger = logger
        self.unreadCount = unreadCount
        let configuration = URLSessionConfiguration.ephemeral
        let seconds = Double(policy.timeout.components.seconds) + Double(policy.timeout.components.attoseconds) / 1e18
        configuration.timeoutIntervalForRequest = seconds
        configuration.timeoutIntervalForResource = seconds
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        // A redirect is not followed: it would carry the credential to another address. The gateway's `3xx` is its
        // answer, a refusal the dead-letter file records.
        session = URLSession(configuration: configuration, delegate: NoRedirects(), delegateQueue: nil)
        if case .bearer? = credential, gateway.scheme?.lowercased() == "http", !Self.isLoopback(gateway) {
            logger.warning("push: the bearer token goes to \(gateway.host ?? "the gateway") over http, in the clear: give the gateway an https URL")
        }
    }

    /// Whether `url` names this machine (`localhost`, `127.x`, `::1`), where `http` crosses no network.
    private static func isLoopback(_ url: URL) -> Bool {
        guard let host = url.host?.lowercased() else { return false }
        return host == "localhost" || host.hasPrefix("127.") || host == "::1" || host == "[::1]"
    }

    deinit {
        session.invalidateAndCancel()
        deadLetters.withLock { descriptor in
            if descriptor >= 0 { close(descriptor) }
        }
    }

    // MARK: Queue

    /// Queues `push`; when the queue is full, the oldest waiting push goes to the dead-letter file. After
    /// shutdown, `push` goes there itself.
    func enqueue(_ push: Push) {
        enum Outcome { case queued, handed(CheckedContinuation<Push?, Never>), dropped(Push), closed }
        let outcome = state.withLock { state -> Outcome in
            if state.closed { return .closed }
            if !state.waiting.isEmpty {
                state.inFlight += 1
                return .handed(state.waiting.removeFirst())
            }
            state.queue.append(push)
            if state.queue.count > max(1, policy.queueLength) { return .dropped(state.queue.removeFirst()) }
            return .queued
        }
        switch outcome {
        case .queued: break
        case .handed(let sender): sender.resume(returning: push)
        case .dropped(let oldest):
            logger.error("push queue full (\(policy.queueLength) waiting): the oldest push, for \(oldest.member), goes to the dead-letter file")
            deadLetter(oldest, attempts: 0, reason: "the push queue was full (\(policy.queueLength) waiting)")
        case .closed:
            logger.error("the server is stopping: the push for \(push.member) goes to the dead-letter file")
            deadLetter(push, attempts: 0, reason: "the server was stopping")
        }
    }

    /// The next push to send; `nil` once the dispatcher is closed.
    private func next() async -> Push? {
        await withCheckedContinuation { continuation in
            let push = state.withLock { state -> Push?? in
                if !state.queue.isEmpty {
                    state.inFlight += 1
                    return .some(state.queue.removeFirst())
                }
                if state.closed { return .some(nil) }
                state.waiting.append(continuation)
                return nil
            }
            if let push { continuation.resume(returning: push) }
        }
    }

    /// Stops taking pushes: the waiting ones go to the dead-letter file, and the senders stop after the push each
    /// is sending.
    private func shutDown() {
        let (waiting, senders) = state.withLock { state in
            state.closed = true
            defer {
                state.queue = []
                state.waiting = []
            }
            return (state.queue, state.waiting)
        }
        for sender in senders { sender.resume(returning: nil) }
        for waiter in state.withLock({ state in defer { state.settling = [] }; return state.settling }) { waiter.resume() }
        if !waiting.isEmpty { logger.error("the server is stopping: \(waiting.count) waiting push(es) go to the dead-letter file") }
        for push in waiting { deadLetter(push, attempts: 0, reason: "the server stopped before the push was sent") }
    }

    private var isClosed: Bool { state.withLock { $0.closed } }

    /// A sender is done with a push: when nothing else is queued or being sent, those in ``settled()`` go on.
    private func finished() {
        let settling = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.inFlight -= 1
            guard state.isSettled else { return [] }
            defer { state.settling = [] }
            return state.settling
        }
        for waiter in settling { waiter.resume() }
    }

    /// Returns once no push is queued or being sent (each try and wait between tries included): after a request
    /// that queued pushes has been answered, the gateway gets nothing more from it. What a test waits for instead of
    /// sleeping to see that nothing else comes.
    func settled() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.isSettled || state.closed { return true }
                state.settling.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    // MARK: Service

    /// Sends pushes until the service group shuts down or the task is cancelled.
    func run() async {
        await withGracefulShutdownHandler {
            await withTaskCancellationHandler {
                await withDiscardingTaskGroup { group in
                    for _ in 0..<max(1, policy.concurrentSenders) {
                        group.addTask {
                            while let push = await self.next() {
                                await self.deliver(push)
                                self.finished()
                            }
                        }
                    }
                }
            } onCancel: {
                self.shutDown()
            }
        } onGracefulShutdown: {
            self.shutDown()
        }
    }

    // MARK: Sending

    /// Sends `push`, trying again as the policy says; a push the gateway never took goes to the dead-letter file.
    private func deliver(_ push: Push) async {
        var push = push
        push.unreadCount = await unreadCount(push.member, push.conversation)
        let body: [UInt8]
        do {
            body = try JSONWriterEncoder.encode(push)
        } catch {
            deadLetter(push, attempts: 0, reason: "the push could not be written as JSON: \(error)")
            return
        }
        let attempts = max(1, policy.attempts)
        for attempt in 1...attempts {
            let reason: String
            switch await post(body) {
            case nil:
                return
            case .permanent(let why)?:
                logger.error("push gateway refused the push for \(push.member) (message \(push.messageID)): \(why); not retried")
                deadLetter(push, attempts: attempt, reason: why)
                return
            case .retryable(let why, let retryAfter)?:
                reason = why
                if attempt < attempts && !isClosed && !Task.isCancelled {
                    let delay = policy.delay(after: attempt, retryAfter: retryAfter)
                    logger.notice("push for \(push.member) (message \(push.messageID)) failed on try \(attempt) of \(attempts): \(why); next try in \(delay)")
                    if await pause(delay) { continue }
                }
            }
            logger.error("push for \(push.member) (message \(push.messageID)) failed after \(attempt) tries: \(reason); it goes to the dead-letter file")
            deadLetter(push, attempts: attempt, reason: reason)
            return
        }
    }

    /// Waits `delay`; `false` when the dispatcher closed or the task was cancelled meanwhile.
    private func pause(_ delay: Duration) async -> Bool {
        let end = ContinuousClock.now + delay
        while ContinuousClock.now < end {
            if isClosed || Task.isCancelled { return false }
            do {
                try await Task.sleep(for: min(.milliseconds(50), end - ContinuousClock.now))
            } catch {
                return false
            }
        }
        return !isClosed
    }

    /// One try: `nil` when the gateway took the push (any `2xx`), else why not.
    private func post(_ body: [UInt8]) async -> Failure? {
        var request = URLRequest(url: gateway)
        request.httpMethod = "POST"
        request.httpBody = Data(body)
        request.setValue("application/json; charset=utf-8", forHTTPHeaderField: "Content-Type")
        request.setValue("missive", forHTTPHeaderField: "User-Agent")
        // Signed at each try, so that a retry carries a fresh timestamp.
        for header in credential?.headers(for: body, at: Int64(Date().timeIntervalSince1970)) ?? [] {
            request.setValue(header.value, forHTTPHeaderField: header.name)
        }
        request.timeoutInterval = session.configuration.timeoutIntervalForRequest
        let response: URLResponse
        do {
            // In a task of its own: cancelling a request in flight (the server stopping) can deadlock
            // FoundationNetworking on Linux; the request ends anyway, by its answer or its timeout.
            let session = self.session
            (_, response) = try await Task.detached { try await session.data(for: request) }.value
        } catch let error as URLError {
            return .retryable("\(Self.describe(error.code)) (URLError \(error.code.rawValue))", retryAfter: nil)
        } catch {
            return .retryable("\(error)", retryAfter: nil)
        }
        guard let http = response as? HTTPURLResponse else { return .retryable("the gateway's answer is not HTTP", retryAfter: nil) }
        let status = http.statusCode
        switch status {
        case 200..<300:
            return nil
        case 429, 408, 500..<600:
            let retryAfter = (http.value(forHTTPHeaderField: "Retry-After")).flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            return .retryable("the gateway answered \(status)", retryAfter: retryAfter.map { .seconds(max(0, $0)) })
        default:
            return .permanent("the gateway answered \(status)")
        }
    }

    /// A connection error in words.
    private static func describe(_ code: URLError.Code) -> String {
        switch code {
        case .timedOut: "the gateway did not answer in time"
        case .cannotConnectToHost: "cannot connect to the gateway"
        case .cannotFindHost, .dnsLookupFailed: "cannot find the gateway's host"
        case .networkConnectionLost: "the connection to the gateway was lost"
        case .notConnectedToInternet: "no network"
        case .cancelled: "the try was cancelled"
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
            .serverCertificateHasUnknownRoot:
            "the gateway's TLS connection failed"
        default: "the request to the gateway failed"
        }
    }

    // MARK: Dead letters

    /// Appends one line for `push` to the dead-letter file (made `0600` if new).
    private func deadLetter(_ push: Push, attempts: Int, reason: String) {
        let letter = DeadLetter(
            push: push, gateway: gateway.absoluteString, attempts: attempts, lastError: reason, failedAt: Int64(Date().timeIntervalSince1970 * 1000))
        guard var line = try? JSONWriterEncoder.encode(letter) else { return }
        line.append(UInt8(ascii: "\n"))
        let written = deadLetters.withLock { descriptor -> Bool in
            if descriptor < 0 {
                descriptor = open(deadLetterPath, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
                guard descriptor >= 0 else { return false }
            }
            return line.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let count = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                    if count < 0 && errno == EINTR { continue }
                    guard count > 0 else { return false }
                    offset += count
                }
                return true
            }
        }
        if !written {
            logger.critical("cannot write the push dead-letter file \(deadLetterPath): \(String(cString: strerror(errno))); the push for \(push.member) is lost")
        }
    }
}

/// The push session's delegate: it refuses every redirect, so that a push and its credential go only to the
/// gateway's own URL. It holds no state.
private final class NoRedirects: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
