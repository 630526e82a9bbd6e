import Foundation
import MissiveStore

/// How a ``ChatServer`` is set up: where it listens, where it keeps its data, and its limits.
public struct ServerConfiguration: Sendable {
    /// The address to listen on: `127.0.0.1` by default, so that nothing outside the machine reaches a server
    /// started without thought.
    public var host: String
    /// The TCP port; 0 lets the system choose one (``ChatServer/run(stopsOnSignals:onListening:)`` says which).
    public var port: Int
    /// The folder of the server's own files: the accounts, and the store when ``store`` is `nil`.
    public var dataDirectory: String
    /// The message store; `nil` keeps a SQLite store in ``dataDirectory`` (`store.sqlite`).
    public var store: StoreLocation?
    /// The limits on what a member may send.
    public var limits: ServerLimits
    /// Whether content that its type's plugin refuses is kept as unknown (as a host without the plugin would keep
    /// it) instead of refused with the plugin's reason (`422`, the default).
    public var keepsRefusedContent = false
    /// The addresses of the reverse proxies in front of the server (HAProxy, nginx) whose `X-Forwarded-For` is
    /// believed: for a request from one of them, the client address that the limits per address and the security
    /// log use is the last one that header names. Empty by default: the connection's peer is the client.
    public var trustedProxies: Set<String> = []
    /// The push gateway: when set, each new message a member sends is pushed, for every other member of the
    /// conversation with no live connection to this server, as a JSON `POST` to this URL (`http` or `https`).
    /// `nil` (the default) pushes nothing. docs/SERVER.md, "Push", describes the request.
    public var pushGateway: URL?
    /// What each push carries to show the gateway it comes from this server (``PushCredential``): a bearer token or
    /// an HMAC signature of the body and the time. `nil` sends none, and the server warns when it starts with a
    /// gateway but no credential. Used only with a ``pushGateway``.
    public var pushCredential: PushCredential?
    /// How pushes are queued, sent and retried; used only with a ``pushGateway``.
    public var pushPolicy = PushPolicy()

    /// A configuration; see each property.
    public init(host: String = "127.0.0.1", port: Int = 8080, dataDirectory: String, store: StoreLocation? = nil, limits: ServerLimits = ServerLimits()) {
        self.host = host
        self.port = port
        self.dataDirectory = dataDirectory
        self.store = store
        self.limits = limits
    }

    /// Where the store is: ``store``, or `store.sqlite` in ``dataDirectory``.
    public var storeLocation: StoreLocation {
        store ?? .sqlite(path: dataDirectory + "/store.sqlite")
    }

    /// The accounts file: `accounts.sqlite` in ``dataDirectory``.
    public var accountsPath: String {
        dataDirectory + "/accounts.sqlite"
    }

    /// The folder of the files members upload: `media` in ``dataDirectory``, each file under its SHA-256
    /// (`media/ab/cd/abcd...`), and uploads in progress in `media/tmp`.
    public var mediaDirectory: String {
        dataDirectory + "/media"
    }

    /// The index of uploads (which conversation each file was uploaded to, its type, size, uploader and name):
    /// `media.sqlite` in ``dataDirectory``.
    public var mediaIndexPath: String {
        dataDirectory + "/media.sqlite"
    }

    /// The pushes the gateway never took (after the last try, or refused): `push-dead-letters.jsonl` in
    /// ``dataDirectory``, one JSON object a line, readable by the server's user only.
    public var pushDeadLettersPath: String {
        dataDirectory + "/push-dead-letters.jsonl"
    }

    /// The per-user data folder of the server, `$XDG_DATA_HOME/missive/server` (by default
    /// `~/.local/share/missive/server`), as the plugin folders are found; `nil` when the environment names neither
    /// an absolute `XDG_DATA_HOME` nor a `HOME`.
    public static func standardDataDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return data + "/missive/server" }
        if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.local/share/missive/server" }
        return nil
    }
}

/// What the server accepts from one member.
public struct ServerLimits: Sendable, Hashable {
    /// The largest request body, in bytes (an upload has its own limit, ``maxUploadBytes``).
    public var maxRequestBytes: Int
    /// The largest content of a message, in bytes: 128 KiB by default, as RongCloud's server takes.
    public var maxContentBytes: Int
    /// The largest file a member may upload for a media message, in bytes: 25 MiB by default. A larger upload is
    /// answered `413` and nothing of it is kept.
    public var maxUploadBytes: Int
    /// Requests a member may make in a burst, and the rate (per second) at which that allowance refills. A
    /// member over it gets `429 Too Many Requests` with a `Retry-After`, and other members are not slowed.
    public var burst: Int
    /// See ``burst``.
    public var requestsPerSecond: Double
    /// The most events that may wait for one event-stream connection: 1,024 by default. A connection whose reader
    /// falls further behind is closed (it resumes from its last position when it connects again); the server never
    /// buffers for a reader without bound.
    public var eventQueueLength = 1_024
    /// How often an event-stream connection checks that its member still has a token that is not revoked (30 s by
    /// default): a member whose tokens are revoked is disconnected within that time.
    public var tokenCheckInterval: Duration = .seconds(30)

    /// Requests whose credential fails (none, malformed, unknown, revoked) that one client address may make in a
    /// burst: 30 by default, refilled at ``failedAuthPerSecond`` (1 a second). An address over it is answered `429`
    /// with a `Retry-After` for every request that needs a member, before its credential is looked at, until the
    /// allowance refills. Several members behind one address share it: raise it for a network that many members
    /// share, or name its proxy in ``ServerConfiguration/trustedProxies``.
    public var failedAuthBurst = 30
    /// See ``failedAuthBurst``.
    public var failedAuthPerSecond = 1.0
    /// The most connections one client address may have open to one server: 256 by default. Another is answered `503
    /// too-many-connections` and closed. Behind a proxy every client has the proxy's address: raise it there.
    public var maxConnectionsPerAddress = 256
    /// How long a new connection has to send its first request's head: 10 s by default, then `408 request-timeout`.
    public var requestHeadTimeout: Duration = .seconds(10)
    /// How long a request body of the API (not an upload) may take to arrive: 30 s by default, then `408
    /// request-timeout`.
    public var requestBodyTimeout: Duration = .seconds(30)
    /// How long an upload may take to arrive: 10 minutes by default (25 MiB at 350 kbit/s), then `408
    /// request-timeout` and nothing of it is kept.
    public var uploadTimeout: Duration = .seconds(600)
    /// What one member may keep uploaded: 1 GiB by default, in at most ``maxUploadedFilesPerMember`` uploads. An
    /// upload past either is answered `413 quota-exceeded`; the member deletes its uploads with `DELETE`.
    public var maxUploadedBytesPerMember = 1 << 30
    /// See ``maxUploadedBytesPerMember``: 1,000 uploads by default.
    public var maxUploadedFilesPerMember = 1_000
    /// How long an upload that no stored message names is kept: 24 hours by default. Then it is removed, and its
    /// download answers `410 media-deleted`.
    public var unreferencedMediaGrace: Duration = .seconds(86_400)
    /// The most event streams one member may have open on one server: 16 by default. Another is answered with an
    /// `error` frame (`too-many-connections`) and closed with 1008.
    public var maxEventStreamsPerMember = 16
    /// The most bytes of events that may wait, queued and not yet written, for one event-stream connection: 8 MiB by
    /// default. A connection over it is closed (it resumes from its last position when it connects again). Below the
    /// queue, the connection's socket buffer holds at most NIO's high-water mark (64 KiB) and one frame.
    public var maxUnsentBytes = 8 << 20
    /// How long one write to an event-stream connection may wait for the client to read: 30 s by default. A client
    /// that reads nothing for that long while events wait is closed.
    public var stalledWriteTimeout: Duration = .seconds(30)

    /// Limits; see each property. The defaults: 256 KiB a request, 128 KiB of content, 25 MiB an upload, bursts
    /// of 60 requests refilled at 20 a second.
    public init(
        maxRequestBytes: Int = 256 << 10, maxContentBytes: Int = 128 << 10, maxUploadBytes: Int = 25 << 20, burst: Int = 60, requestsPerSecond: Double = 20
    ) {
        self.maxRequestBytes = maxRequestBytes
        self.maxContentBytes = maxContentBytes
        self.maxUploadBytes = maxUploadBytes
        self.burst = burst
        self.requestsPerSecond = requestsPerSecond
    }
}
