/// How a server with a push gateway (``ServerConfiguration/pushGateway``) queues, sends and retries its pushes.
///
/// Pushes are sent off the request path: a send is answered at once, and a bounded queue feeds a few concurrent
/// senders. A push the gateway did not take, after the last try or because it refused it, is written to the
/// dead-letter file (``ServerConfiguration/pushDeadLettersPath``); none is dropped without a line there.
public struct PushPolicy: Sendable, Hashable {
    /// The most tries of one push, the first included: 5 by default. A connection error, a timeout, a `5xx` or a
    /// `429` is tried again; any other `4xx` is not.
    public var attempts: Int
    /// The wait before the second try: 500 ms by default. Each later wait doubles, up to ``maximumDelay``; each
    /// is drawn at random between half of it and all of it, so that many pushes do not all come back at once.
    public var initialDelay: Duration
    /// The longest wait between two tries, a gateway's `Retry-After` included: 30 s by default.
    public var maximumDelay: Duration
    /// How long one try may take, from connecting to the end of the answer: 10 s by default.
    public var timeout: Duration
    /// The most pushes that may wait to be sent: 1,024 by default. When the queue is full, the OLDEST waiting push
    /// goes to the dead-letter file to make room for the new one.
    public var queueLength: Int
    /// How many pushes are sent at the same time: 4 by default.
    public var concurrentSenders: Int

    /// A policy; see each property.
    public init(
        attempts: Int = 5, initialDelay: Duration = .milliseconds(500), maximumDelay: Duration = .seconds(30), timeout: Duration = .seconds(10),
        queueLength: Int = 1_024, concurrentSenders: Int = 4
    ) {
        self.attempts = attempts
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.timeout = timeout
        self.queueLength = queueLength
        self.concurrentSenders = concurrentSenders
    }

    /// The wait after failed try number `attempt` (1 for the first): the backoff with jitter, or the gateway's
    /// `retryAfter` when it asked for longer, never more than ``maximumDelay``.
    func delay(after attempt: Int, retryAfter: Duration?) -> Duration {
        let doubled = initialDelay * (1 << min(max(attempt - 1, 0), 30))
        let ceiling = min(doubled, maximumDelay)
        let jittered = ceiling * Double.random(in: 0.5...1)
        guard let retryAfter else { return jittered }
        return min(max(jittered, retryAfter), maximumDelay)
    }
}
