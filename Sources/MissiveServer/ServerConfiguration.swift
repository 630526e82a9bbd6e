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
