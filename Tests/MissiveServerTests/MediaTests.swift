import Foundation
import Logging
import Missive
@testable import MissiveServer
import MissiveServerTestSupport
import MissiveStore
import MissiveStoreTestSupport
import MissiveTestSupport
import Testing

/// Media: members upload the bytes a media message refers to, and only the members of a conversation the file was
/// uploaded to download it, with headers that keep a browser from running it.
@Suite struct MediaTests {
    /// A real 1×1 PNG (an RGB pixel, zlib-compressed IDAT, each chunk's CRC right).
    static let png = bytes(
        "89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c4944415478da63304e3b030002350166b46f979e0000000049454e44ae426082")
    /// A real 8×8 grey baseline JPEG: SOI, DQT, SOF0, the standard DC table and a one-code AC table, one block
    /// (DC difference 0, end of block), EOI. Chromium decodes both images (8×8 and 1×1).
    static let jpeg = bytes(
        "ffd8ffdb00430001010101010101010101010101010101010101010101010101010101010101010101010101010101010101"
            + "010101010101010101010101010101010101010101ffc0000b080008000801011100ffc4001f000001050101010101010000"
            + "0000000000000102030405060708090a0bffc40014100100000000000000000000000000000000ffda0008010100003f001fffd9")

    /// A server with alice and bob in `team`, carol in `other`, and zoe in nothing.
    struct Cast {
        let running: RunningServer
        let alice: String
        let bob: String
        let carol: String
        let zoe: String

        static func start(
            _ backend: StoreBackend, limits: ServerLimits = ServerLimits(burst: 200, requestsPerSecond: 100), transport: RunningServer.Transport = .router
        ) async throws -> Cast {
            let running = try await RunningServer.start(backend, limits: limits, transport: transport)
            let cast = Cast(
                running: running, alice: try running.member("alice"), bob: try running.member("bob"), carol: try running.member("carol"),
                zoe: try running.member("zoe"))
            let team = try await running.request("POST", "/api/v1/conversations", token: cast.alice, body: #"{"id":"team","members":["bob"]}"#)
            let other = try await running.request("POST", "/api/v1/conversations", token: cast.carol, body: #"{"id":"other"}"#)
            #expect(team.status == 201 && other.status == 201, "\(team.text) \(other.text)")
            return cast
        }

        func upload(_ bytes: [UInt8], as type: String?, to conversation: String = "team", by token: String, query: String = "", chunked: Bool = false) async throws
            -> HTTPAnswer
        {
            try await running.request("POST", "/api/v1/conversations/\(conversation)/media\(query)", token: token, bytes: bytes, contentType: type, chunked: chunked)
        }

        func download(_ path: String, by token: String?, headers: [String: String] = [:]) async throws -> HTTPAnswer {
            try await running.request("GET", path, token: token, bytes: nil, headers: headers)
        }

        /// The files kept under their hashes (not the uploads in progress), by path below the media folder.
        func storedFiles() throws -> [String] {
            let media = running.server.configuration.mediaDirectory
            let all = FileManager.default.enumerator(atPath: media)?.allObjects as? [String] ?? []
            return all.filter { path in
                var isFolder: ObjCBool = false
                return FileManager.default.fileExists(atPath: media + "/" + path, isDirectory: &isFolder) && !isFolder.boolValue
            }.sorted()
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func anUploadedImageComesBackByteForByteWithHeadersThatKeepItInert(backend: StoreBackend) async throws {
        let cast = try await Cast.start(backend)
        let hash = try Self.sha256(Self.png)
        let uploaded = try await cast.upload(Self.png, as: "image/png", by: cast.alice, query: "?name=d%C3%A9j%C3%A0%20vu.png")
        #expect(uploaded.status == 201, "\(uploaded.status) \(uploaded.text)")
        // The members of a media reference, in its own names, and the hash.
        let url = "/api/v1/conversations/team/media/\(hash)"
        #expect(
            uploaded.text == #"{"remoteURL":"\#(url)","mimeType":"image/png","sizeBytes":\#(Self.png.count),"name":"déjà vu.png","sha256":"\#(hash)"}"#,
            "\(uploaded.text)")
        // Kept under its hash, readable by the server's user alone, as is the index.
        let media = cast.running.server.configuration.mediaDirectory
        let file = "\(media)/\(hash.prefix(2))/\(hash.dropFirst(2).prefix(2))/\(hash)"
        #expect(FileManager.default.contents(atPath: file).map(Array.init) == Self.png)
        #expect(try Self.mode(file) == 0o600 && Self.mode(cast.running.server.configuration.mediaIndexPath) == 0o600)
        #expect(try Self.mode(media) == 0o700)

        // bob, a member, downloads it byte for byte.
        let image = try await cast.download(url, by: cast.bob)
        #expect(image.status == 200 && image.body == Self.png, "\(image.status) \(image.text)")
        #expect(image.headers["content-type"] == "image/png")
        #expect(image.headers["content-length"] == String(Self.png.count))
        #expect(image.headers["etag"] == "\"\(hash)\"")
        #expect(image.headers["cache-control"] == "private, max-age=31536000, immutable")
        #expect(image.headers["x-content-type-options"] == "nosniff")
        #expect(image.headers["content-security-policy"] == "sandbox")
        #expect(image.headers["content-disposition"] == #"inline; filename="d_j_ vu.png"; filename*=UTF-8''d%C3%A9j%C3%A0%20vu.png"#, "\(image.headers)")

        // Asked again with its tag: 304, no body.
        let again = try await cast.download(url, by: cast.bob, headers: ["If-None-Match": "\"\(hash)\""])
        #expect(again.status == 304 && again.body.isEmpty && again.headers["etag"] == "\"\(hash)\"", "\(again.status)")
        let changed = try await cast.download(url, by: cast.bob, headers: ["If-None-Match": "\"0000\""])
        #expect(changed.status == 200 && changed.body == Self.png)
        // A range of it.
        let part = try await cast.download(url, by: cast.bob, headers: ["Range": "bytes=1-3"])
        #expect(part.status == 206 && part.body == Array(Self.png[1...3]), "\(part.status)")
        #expect(part.headers["content-range"] == "bytes 1-3/\(Self.png.count)")
        let past = try await cast.download(url, by: cast.bob, headers: ["Range": "bytes=999-"])
        #expect(past.status == 416 && past.errorCode == "range-not-satisfiable", "\(past.status) \(past.text)")

        // A JPEG, with no name.
        let jpeg = try await cast.upload(Self.jpeg, as: "image/jpeg", by: cast.bob)
        #expect(try jpeg.status == 201 && jpeg.json["mimeType"] as? String == "image/jpeg", "\(jpeg.text)")
        let jpegBack = try await cast.download(try #require(try jpeg.json["remoteURL"] as? String), by: cast.alice)
        #expect(jpegBack.status == 200 && jpegBack.body == Self.jpeg && jpegBack.headers["content-disposition"] == "inline")

        // What a browser must not show as a page is an attachment, and sandboxed whatever it holds.
        let svg = Array(#"<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>"#.utf8)
        for (bytes, type) in [(svg, "image/svg+xml"), (Array("<p onclick=x>hi</p>".utf8), "text/html"), (Array("plain words\n".utf8), "text/plain; charset=utf-8")] {
            let kept = try await cast.upload(bytes, as: type, by: cast.alice)
            #expect(kept.status == 201, "\(type): \(kept.text)")
            let back = try await cast.download(try #require(try kept.json["remoteURL"] as? String), by: cast.bob)
            #expect(back.status == 200 && back.body == bytes, "\(type)")
            #expect(back.headers["content-disposition"] == "attachment" && back.headers["content-security-policy"] == "sandbox", "\(type): \(back.headers)")
            #expect(back.headers["content-type"] == type.split(separator: ";")[0].description, "\(type)")
        }
        await cast.running.stop()
    }

    @Test(arguments: StoreBackend.allCases)
    func onlyMembersOfAConversationAFileWasUploadedToMayDownloadIt(backend: StoreBackend) async throws {
        let cast = try await Cast.start(backend)
        let hash = try Self.sha256(Self.png)
        let url = "/api/v1/conversations/team/media/\(hash)"

        // zoe, in no conversation, cannot upload to team: nothing is kept.
        let outsider = try await cast.upload(Self.png, as: "image/png", by: cast.zoe)
        #expect(outsider.status == 404 && outsider.errorCode == "not-found", "\(outsider.status) \(outsider.text)")
        let nothing = try cast.storedFiles()
        #expect(nothing == [], "\(nothing)")
        let uploaded = try await cast.upload(Self.png, as: "image/png", by: cast.alice)
        #expect(uploaded.status == 201, "\(uploaded.text)")

        // No token, and a bad one: 401 on both endpoints.
        for token in [nil, "msv_" + String(repeating: "A", count: 43)] as [String?] {
            let up = try await cast.running.request("POST", "/api/v1/conversations/team/media", token: token, bytes: Self.png, contentType: "image/png")
            let down = try await cast.download(url, by: token)
            for answer in [up, down] {
                #expect(answer.status == 401 && answer.errorCode == "unauthorized" && answer.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
            }
        }
        // zoe, and carol (a member of another conversation) knowing the hash, are answered as for a file that
        // does not exist, through team and through carol's own conversation.
        let missing = try await cast.download("/api/v1/conversations/team/media/" + String(repeating: "0", count: 64), by: cast.alice)
        #expect(missing.status == 404 && missing.errorCode == "not-found")
        for (token, path) in [
            (cast.zoe, url), (cast.carol, url), (cast.carol, "/api/v1/conversations/other/media/\(hash)"),
            (cast.alice, "/api/v1/conversations/other/media/\(hash)"), (cast.alice, "/api/v1/conversations/team/media/NOT-A-HASH"),
        ] {
            let answer = try await cast.download(path, by: token)
            #expect(answer.status == 404 && answer.errorCode == "not-found" && answer.body != Self.png, "\(path): \(answer.status) \(answer.text)")
            #expect(answer.headers["etag"] == nil && answer.headers["cache-control"] == "no-store")
        }
        // Once carol uploads the same bytes to her conversation, she reads them there, and still not through team.
        let hers = try await cast.upload(Self.png, as: "image/png", to: "other", by: cast.carol)
        #expect(try hers.status == 201 && hers.json["remoteURL"] as? String == "/api/v1/conversations/other/media/\(hash)", "\(hers.text)")
        #expect(try await cast.download("/api/v1/conversations/other/media/\(hash)", by: cast.carol).body == Self.png)
        #expect(try await cast.download(url, by: cast.carol).status == 404)
        await cast.running.stop()
    }

    @Test(arguments: StoreBackend.allCases)
    func identicalUploadsShareOneFile(backend: StoreBackend) async throws {
        let cast = try await Cast.start(backend)
        let first = try await cast.upload(Self.png, as: "image/png", by: cast.alice, query: "?name=a.png")
        let second = try await cast.upload(Self.png, as: "image/png", by: cast.bob, query: "?name=b.png")
        let elsewhere = try await cast.upload(Self.png, as: "image/png", to: "other", by: cast.carol)
        #expect([first.status, second.status, elsewhere.status] == [Int](repeating: 201, count: 3), "\(first.text) \(second.text) \(elsewhere.text)")
        let hashes = try [first, second, elsewhere].map { try $0.json["sha256"] as? String }
        let expected = try Self.sha256(Self.png)
        #expect(Set(hashes).count == 1 && hashes[0] == expected)
        let hash = try #require(hashes[0])
        let files = try cast.storedFiles()
        #expect(files == ["\(hash.prefix(2))/\(hash.dropFirst(2).prefix(2))/\(hash)"], "\(files)")
        // Each answer names what its upload asked for; the file is served with the first upload's name.
        #expect(try second.json["name"] as? String == "b.png")
        let back = try await cast.download("/api/v1/conversations/team/media/\(hash)", by: cast.bob)
        #expect(back.body == Self.png && back.headers["content-disposition"]?.contains("a.png") == true, "\(back.headers)")
        await cast.running.stop()
    }

    @Test func anUploadOverTheLimitIs413AndLeavesNothingBehind() async throws {
        var limits = ServerLimits(burst: 200, requestsPerSecond: 100)
        limits.maxUploadBytes = 1000
        // Live: a body sent in chunks, without a Content-Length, as a client streaming a file sends it.
        let cast = try await Cast.start(.sqlite, limits: limits, transport: .live)
        let tmp = cast.running.server.configuration.mediaDirectory + "/tmp"
        var kept: [String] = []
        for chunked in [false, true] {
            let text = Array(repeating: UInt8(ascii: "a"), count: 1001)
            let over = try await cast.upload(text, as: "text/plain", by: cast.alice, chunked: chunked)
            #expect(over.status == 413 && over.errorCode == "too-large", "chunked \(chunked): \(over.status) \(over.text)")
            #expect(try cast.storedFiles() == kept && FileManager.default.contentsOfDirectory(atPath: tmp) == [], "chunked \(chunked)")
            // At the limit, it is kept; the server went on serving.
            let at = try await cast.upload(Array(text.dropLast()), as: "text/plain", by: cast.alice, chunked: chunked)
            #expect(try at.status == 201 && at.json["sizeBytes"] as? Int == 1000, "chunked \(chunked): \(at.text)")
            kept = try cast.storedFiles()
        }
        #expect(try cast.storedFiles().count == 1 && FileManager.default.contentsOfDirectory(atPath: tmp) == [])
        await cast.running.stop()
    }

    /// A client that goes away in the middle of an upload leaves no file behind, and the server goes on.
    @Test func anUploadCutShortLeavesNothingBehind() async throws {
        let cast = try await Cast.start(.sqlite, transport: .live)
        let tmp = cast.running.server.configuration.mediaDirectory + "/tmp"
        let descriptor = try loopbackSocket(port: cast.running.port)
        let head = "POST /api/v1/conversations/team/media HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(cast.alice)\r\n"
            + "Content-Type: image/png\r\nContent-Length: 100000\r\n\r\n"
        let bytes = Array(head.utf8) + Self.png
        #expect(bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) } == bytes.count)
        // The server has begun the file before the client goes.
        var begun = false
        for _ in 0..<100 where !begun {
            begun = (try? FileManager.default.contentsOfDirectory(atPath: tmp))?.isEmpty == false
            if !begun { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(begun, "no temporary file while the upload was under way")
        close(descriptor)
        var left: [String] = ["?"]
        for _ in 0..<100 where !left.isEmpty {
            try await Task.sleep(for: .milliseconds(20))
            left = try FileManager.default.contentsOfDirectory(atPath: tmp)
        }
        let files = try cast.storedFiles()
        #expect(left.isEmpty && files.isEmpty, "\(left) \(files)")
        let next = try await cast.upload(Self.png, as: "image/png", by: cast.alice)
        #expect(next.status == 201, "\(next.text)")
        await cast.running.stop()
    }

    @Test func mislabelledBytesAreRefusedWith415NamingBothTypes() async throws {
        let cast = try await Cast.start(.sqlite)
        let refused: [(bytes: [UInt8], type: String, words: [String])] = [
            (Self.png, "image/jpeg", ["image/jpeg", "PNG", "image/png"]),
            (Self.jpeg, "image/png", ["image/png", "JPEG", "image/jpeg"]),
            (Self.png, "application/pdf", ["application/pdf", "PNG"]),
            (Self.png, "text/plain", ["text/plain", "PNG"]),
            (Array("just words".utf8), "image/png", ["image/png", "not a PNG image"]),
            (Array("just words".utf8), "video/mp4", ["video/mp4", "not an MPEG-4"]),
            (Array("just words".utf8), "image/x-made-up", ["image/x-made-up"]),
            ([0x00, 0x01, 0xFE, 0x02], "text/plain", ["text/plain", "not UTF-8 text"]),
            (Array("<html>no svg here</html>".utf8), "image/svg+xml", ["image/svg+xml", "not an SVG"]),
        ]
        for (bytes, type, words) in refused {
            let answer = try await cast.upload(bytes, as: type, by: cast.alice)
            #expect(answer.status == 415 && answer.errorCode == "type-mismatch", "\(type): \(answer.status) \(answer.text)")
            for word in words { #expect(answer.text.contains(word), "\(type): \(answer.text) should name \(word)") }
        }
        let nothing = try cast.storedFiles()
        #expect(nothing == [], "\(nothing)")
        let malformed = try await cast.upload(Self.png, as: "png", by: cast.alice)
        #expect(malformed.status == 400 && malformed.errorCode == "malformed-request", "\(malformed.text)")
        let empty = try await cast.upload([], as: "image/png", by: cast.alice)
        #expect(empty.status == 400 && empty.errorCode == "empty-upload", "\(empty.status) \(empty.text)")

        // Bytes of no known format under a type the server does not know are kept as octet-stream; known bytes
        // declared as octet-stream take their own type; a type the bytes fit is kept as declared.
        let kept: [(bytes: [UInt8], type: String, stored: String)] = [
            ([0x00, 0x01, 0xFE, 0x02], "application/x-made-up", "application/octet-stream"),
            (Self.png, "application/octet-stream", "image/png"),
            (Array("%PDF-1.7\n".utf8) + [0xE2, 0xE3, 0xCF, 0xD3], "application/pdf", "application/pdf"),
            (Array(repeating: 0, count: 4) + Array("ftypM4A ".utf8) + Array(repeating: 0, count: 8), "audio/x-m4a", "audio/x-m4a"),
            (Array("OggS".utf8) + [0, 2], "audio/ogg", "audio/ogg"),
            (Array("ID3".utf8) + [4, 0, 0, 0, 0, 0, 0], "audio/mpeg", "audio/mpeg"),
            ([0x1A, 0x45, 0xDF, 0xA3] + Array("....webm".utf8), "video/webm", "video/webm"),
        ]
        for (bytes, type, stored) in kept {
            let answer = try await cast.upload(bytes, as: type, by: cast.alice)
            #expect(try answer.status == 201 && answer.json["mimeType"] as? String == stored, "\(type): \(answer.status) \(answer.text)")
        }
        await cast.running.stop()
    }

    /// The answer goes into an `MS:Image` as it is; the envelope travels through the server byte for byte, and its
    /// reference leads to the bytes.
    @Test(arguments: StoreBackend.allCases)
    func anImageMessageCarryingTheReturnedReferenceRoundTrips(backend: StoreBackend) async throws {
        let cast = try await Cast.start(backend)
        let uploaded = try await cast.upload(Self.png, as: "image/png", by: cast.alice)
        let reference = try uploaded.json
        let content = #"{"remoteURL":"\#(try #require(reference["remoteURL"] as? String))","mimeType":"\#(try #require(reference["mimeType"] as? String))","sizeBytes":\#(try #require(reference["sizeBytes"] as? Int)), "width":1,"height":1}"#
        let body = #"{"id":"img-1","objectName":"MS:Image","content":\#(content)}"#
        let sent = try await cast.running.request("POST", "/api/v1/conversations/team/messages", token: cast.alice, body: body)
        #expect(sent.status == 201, "\(sent.text)")
        let history = try await cast.running.request("GET", "/api/v1/conversations/team/messages", token: cast.bob)
        let stored = try #require(try await cast.running.server.store.message(id: "img-1"))
        #expect(history.text.contains(String(decoding: stored.envelopeBytes, as: UTF8.self)))
        let envelope = try Envelope(parsing: stored.envelopeBytes)
        #expect(envelope.content == Array(content.utf8), "the content's bytes, as sent")
        // bob's client decodes it with the built-in type and follows the reference.
        let image = try #require(cast.running.server.registry.decode(envelope).value(as: ImageMessage.self))
        #expect(image.mimeType == "image/png" && image.sizeBytes == Int64(Self.png.count))
        let back = try await cast.download(try #require(image.remoteURL), by: cast.bob)
        #expect(back.status == 200 && back.body == Self.png)
        await cast.running.stop()
    }

    /// A member's uploads meet a quota of files and of bytes; deleting one makes room again.
    @Test func aMembersUploadsMeetItsQuotaAndDeletingMakesRoom() async throws {
        var limits = ServerLimits(burst: 200, requestsPerSecond: 100)
        limits.maxUploadedFilesPerMember = 2
        limits.maxUploadedBytesPerMember = 1_000
        let cast = try await Cast.start(.sqlite, limits: limits, transport: .live)
        let first = try await cast.upload(Array(repeating: 0x61, count: 400), as: "text/plain", by: cast.alice)
        let second = try await cast.upload(Array(repeating: 0x62, count: 400), as: "text/plain", by: cast.alice)
        #expect(first.status == 201 && second.status == 201, "\(first.text) \(second.text)")
        // A third file, and (after one is deleted) bytes past the quota: refused, and nothing of them kept.
        let third = try await cast.upload(Array(repeating: 0x63, count: 10), as: "text/plain", by: cast.alice)
        #expect(third.status == 413 && third.errorCode == "quota-exceeded" && third.text.contains("2 files"), "\(third.text)")
        let sha = try #require(try first.json["sha256"] as? String)
        #expect(try await cast.running.request("DELETE", "/api/v1/conversations/team/media/\(sha)", token: cast.alice).status == 204)
        let big = try await cast.upload(Array(repeating: 0x64, count: 700), as: "text/plain", by: cast.alice, chunked: true)
        #expect(big.status == 413 && big.errorCode == "quota-exceeded", "\(big.text)")
        let fits = try await cast.upload(Array(repeating: 0x65, count: 500), as: "text/plain", by: cast.alice)
        #expect(fits.status == 201, "\(fits.text)")
        // Another member's quota is its own.
        #expect(try await cast.upload(Array(repeating: 0x66, count: 900), as: "text/plain", by: cast.bob).status == 201)
        let temporary = try FileManager.default.contentsOfDirectory(atPath: cast.running.server.configuration.mediaDirectory + "/tmp")
        #expect(temporary.isEmpty, "\(temporary)")
        await cast.running.stop()
    }

    /// The uploader deletes its upload; another member may not; the file then answers 410 in that conversation,
    /// its bytes go when no conversation has it, and the same bytes uploaded again are served again.
    @Test(arguments: StoreBackend.allCases)
    func theUploaderDeletesItsFileWhichThenAnswers410(backend: StoreBackend) async throws {
        let cast = try await Cast.start(backend)
        let uploaded = try await cast.upload(Self.png, as: "image/png", by: cast.alice)
        let path = try #require(try uploaded.json["remoteURL"] as? String)
        // An image message names it; deleting the file leaves the message as it was.
        let content = #"{"remoteURL":"\#(path)","mimeType":"image/png","sizeBytes":\#(Self.png.count)}"#
        #expect(try await cast.running.send(#"{"id":"img","objectName":"MS:Image","content":\#(content)}"#, to: "team", token: cast.alice).status == 201)
        let bobDeletes = try await cast.running.request("DELETE", path, token: cast.bob)
        #expect(bobDeletes.status == 403 && bobDeletes.errorCode == "not-yours", "\(bobDeletes.text)")
        let zoeDeletes = try await cast.running.request("DELETE", path, token: cast.zoe)
        #expect(zoeDeletes.status == 404, "\(zoeDeletes.text)")
        #expect(try await cast.running.request("DELETE", path, token: cast.alice).status == 204)
        let gone = try await cast.download(path, by: cast.bob)
        #expect(gone.status == 410 && gone.errorCode == "media-deleted" && gone.text.contains("deleted by its uploader"), "\(gone.text)")
        #expect(try cast.storedFiles().isEmpty, "no conversation has the file: its bytes are gone")
        #expect(try await cast.running.server.store.message(id: "img") != nil)
        #expect(try await cast.running.request("DELETE", path, token: cast.alice).status == 404)
        // Uploaded again, it is served again.
        #expect(try await cast.upload(Self.png, as: "image/png", by: cast.bob).status == 201)
        #expect(try await cast.download(path, by: cast.alice).status == 200)
        await cast.running.stop()
    }

    /// An upload that no stored message names is removed after the grace period; one a message names is kept.
    @Test func anUploadNoMessageNamesIsCollectedAfterTheGracePeriod() async throws {
        let cast = try await Cast.start(.sqlite)
        let named = try await cast.upload(Self.png, as: "image/png", by: cast.alice)
        let unnamed = try await cast.upload(Array("not named anywhere\n".utf8), as: "text/plain", by: cast.alice)
        let namedPath = try #require(try named.json["remoteURL"] as? String)
        let unnamedPath = try #require(try unnamed.json["remoteURL"] as? String)
        let content = #"{"remoteURL":"\#(namedPath)","mimeType":"image/png","sizeBytes":\#(Self.png.count)}"#
        #expect(try await cast.running.send(#"{"id":"img","objectName":"MS:Image","content":\#(content)}"#, to: "team", token: cast.alice).status == 201)
        // Within the grace period, nothing goes.
        let server = cast.running.server
        await MediaCollectionService(media: server.media, grace: .seconds(3600), logger: Logger(label: "test")).collectOnce()
        #expect(try await cast.download(unnamedPath, by: cast.bob).status == 200)
        // Past it (a grace of nothing), the unnamed upload goes and the named one stays.
        try await Task.sleep(for: .milliseconds(20))
        await MediaCollectionService(media: server.media, grace: .zero, logger: Logger(label: "test")).collectOnce()
        let collected = try await cast.download(unnamedPath, by: cast.bob)
        #expect(collected.status == 410 && collected.text.contains("no message named it"), "\(collected.text)")
        #expect(try await cast.download(namedPath, by: cast.bob).status == 200)
        #expect(try cast.storedFiles().count == 1)
        await cast.running.stop()
    }

    /// The collection removes only the uploads past the grace period (the same bytes uploaded again since stay and
    /// are served), and a message that names a file with escaped slashes (`\/`, as some encoders write) keeps it.
    @Test func theCollectionSparesFreshUploadsOfTheSameBytesAndReferencesWrittenWithEscapes() async throws {
        let cast = try await Cast.start(.sqlite)
        let media = cast.running.server.media
        let old = try await cast.upload(Array("the same bytes\n".utf8), as: "text/plain", by: cast.alice)
        let path = try #require(try old.json["remoteURL"] as? String)
        #expect(try await cast.upload(Array("the same bytes\n".utf8), as: "text/plain", by: cast.bob).status == 201)
        // A file named only with escaped slashes, uploaded before that cutoff too.
        let image = try await cast.upload(Self.png, as: "image/png", by: cast.alice)
        let imagePath = try #require(try image.json["remoteURL"] as? String)
        let escaped = imagePath.replacingOccurrences(of: "/", with: #"\/"#)
        let content = #"{"remoteURL":"\#(escaped)","mimeType":"image/png","sizeBytes":\#(Self.png.count)}"#
        #expect(try await cast.running.send(#"{"id":"img","objectName":"MS:Image","content":\#(content)}"#, to: "team", token: cast.alice).status == 201)
        // A cutoff after all of them takes both uploads of the text file, which no message names; not the image.
        try await Task.sleep(for: .milliseconds(20))
        _ = try await media.collectUnreferenced(uploadedBefore: Int64(Date().timeIntervalSince1970 * 1000))
        #expect(try await cast.download(path, by: cast.bob).status == 410)
        #expect(try await cast.download(imagePath, by: cast.bob).status == 200, "a reference with escaped slashes counts")
        // Again, with a cutoff between the two uploads of the same bytes: the later one stays, and is served.
        let again = try await cast.upload(Array("other bytes\n".utf8), as: "text/plain", by: cast.alice)
        let againPath = try #require(try again.json["remoteURL"] as? String)
        try await Task.sleep(for: .milliseconds(20))
        let between = Int64(Date().timeIntervalSince1970 * 1000)
        try await Task.sleep(for: .milliseconds(20))
        #expect(try await cast.upload(Array("other bytes\n".utf8), as: "text/plain", by: cast.bob).status == 201)
        #expect(try await media.collectUnreferenced(uploadedBefore: between) == 1)
        let served = try await cast.download(againPath, by: cast.alice)
        #expect(served.status == 200 && served.body == Array("other bytes\n".utf8), "\(served.status) \(served.text)")
        await cast.running.stop()
    }

    /// Uploads made at once cannot all pass the quota: it is checked where the upload is recorded.
    @Test func uploadsMadeAtOnceKeepToTheQuota() async throws {
        var limits = ServerLimits(burst: 200, requestsPerSecond: 100)
        limits.maxUploadedFilesPerMember = 2
        let cast = try await Cast.start(.sqlite, limits: limits)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<8 {
                group.addTask { try await cast.upload(Array("file \(index)\n".utf8), as: "text/plain", by: cast.alice).status }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses.filter { $0 == 201 }.count == 2 && statuses.filter { $0 == 413 }.count == 6, "\(statuses)")
        await cast.running.stop()
    }

    // MARK: Helpers

    static func bytes(_ hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    /// The SHA-256 of `bytes`, as coreutils' `sha256sum` gives it.
    static func sha256(_ bytes: [UInt8]) throws -> String {
        let file = try Fixtures.temporaryDirectory() + "/bytes"
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = [file]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return String(text.prefix(64))
    }

    static func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) & 0o777
    }
}
