import MissiveCore

// The body of each frame kind (``WorkerWire/Kind``), in one type per kind that both sides use: the host writes a
// request and reads its answers with the same type the worker reads the request and writes the answers with, so
// the two cannot disagree on a layout. `forbidden` and `signalled`, which the C handlers write, hold one Int32.

extension WorkerWire {
    /// `decode`, host to worker: what to compute besides the texts, then each message's objectName and content.
    struct DecodeRequest {
        var flags: DecodeFlags
        var items: [(objectName: String, content: ArraySlice<UInt8>)]

        /// Writes the frame for the messages `items` holds at `indices`.
        static func write(
            id: UInt64, flags: DecodeFlags, items: [(objectName: String, content: [UInt8])], indices: [Int], into writer: inout WireWriter
        ) {
            writer.beginFrame(.decode, id: id)
            writer.byte(flags.rawValue)
            writer.integer(UInt32(indices.count))
            for index in indices {
                writer.string(items[index].objectName)
                writer.run(items[index].content)
            }
            writer.endFrame()
        }

        static func read(_ reader: inout WireReader) throws(Malformed) -> DecodeRequest {
            let flags = DecodeFlags(rawValue: try reader.byte())
            let count = try reader.integer(UInt32.self)
            var items: [(objectName: String, content: ArraySlice<UInt8>)] = []
            // Each message takes at least 8 bytes, so a count larger than the frame could hold is a lie.
            items.reserveCapacity(Int(min(count, 1 << 16)))
            for _ in 0..<count { items.append((try reader.string(), try reader.run())) }
            return DecodeRequest(flags: flags, items: items)
        }
    }

    /// `answer`, worker to host: one message of a decode, by its position in the request; what the host reads of
    /// the decoded content, or the plugin's refusal.
    struct DecodeAnswer {
        var position: UInt32
        var result: Result<IsolatedParts, MissiveError>

        func write(id: UInt64, into writer: inout WireWriter) {
            writer.beginFrame(.answer, id: id)
            writer.integer(position)
            switch result {
            case .success(let parts):
                writer.byte(0)
                writer.string(parts.digest)
                writer.optionalString(parts.pushContent)
                writer.integer(UInt32(parts.searchableWords.count))
                for word in parts.searchableWords { writer.string(word) }
                if let media = parts.media {
                    writer.byte(1)
                    writer.optionalString(media.remoteURL)
                    writer.optionalString(media.localPath)
                    writer.string(media.mimeType)
                    writer.integer(media.sizeBytes ?? -1)
                } else {
                    writer.byte(0)
                }
                Self.writePart(parts.view, into: &writer)
                Self.writePart(parts.encoding, into: &writer)
            case .failure(let error):
                writer.byte(1)
                writer.error(error)
            }
            writer.endFrame()
        }

        /// Reads an answer about the plugin at `file`; an error without an objectName gets `objectName`, the message's.
        static func read(_ reader: inout WireReader, file: String, objectName: String) throws(Malformed) -> DecodeAnswer {
            let position = try reader.integer(UInt32.self)
            guard try reader.byte() == 0 else {
                var error = try reader.error(file: file)
                error.objectName = error.objectName ?? objectName
                return DecodeAnswer(position: position, result: .failure(error))
            }
            let digest = try reader.string()
            let push = try reader.optionalString()
            var words: [String] = []
            let count = try reader.integer(UInt32.self)
            words.reserveCapacity(Int(min(count, 4096)))
            for _ in 0..<count { words.append(try reader.string()) }
            var media: MediaReference?
            if try reader.byte() == 1 {
                let remote = try reader.optionalString(), local = try reader.optionalString(), mime = try reader.string()
                let size = try reader.integer(Int64.self)
                media = MediaReference(remoteURL: remote, localPath: local, mimeType: mime, sizeBytes: size >= 0 ? size : nil)
            }
            let view = try readPart(&reader, file: file, objectName: objectName)
            let encoding = try readPart(&reader, file: file, objectName: objectName)
            let parts = IsolatedParts(digest: digest, pushContent: push, searchableWords: words, media: media, view: view, encoding: encoding)
            return DecodeAnswer(position: position, result: .success(parts))
        }

        /// A part asked for or not: 0 not asked; 1 asked, and the type has none; 2 and the bytes; 3 and the failure.
        private static func writePart(_ part: Result<[UInt8]?, MissiveError>?, into writer: inout WireWriter) {
            switch part {
            case nil: writer.byte(0)
            case .success(nil)?: writer.byte(1)
            case .success(let bytes?)?:
                writer.byte(2)
                writer.run(bytes)
            case .failure(let error)?:
                writer.byte(3)
                writer.error(error)
            }
        }

        private static func readPart(_ reader: inout WireReader, file: String, objectName: String) throws(Malformed) -> Result<[UInt8]?, MissiveError>? {
            switch try reader.byte() {
            case 0: return nil
            case 1: return .success(nil)
            case 2: return .success(Array(try reader.run()))
            case 3:
                var error = try reader.error(file: file)
                error.objectName = error.objectName ?? objectName
                return .failure(error)
            default: throw Malformed(reason: "a part has a tag other than 0 to 3")
            }
        }
    }

    /// `done`, worker to host: the last answer of a decode has been sent. No body.
    static func writeDone(id: UInt64, into writer: inout WireWriter) {
        writer.beginFrame(.done, id: id)
        writer.endFrame()
    }

    /// `action` or `compose`, host to worker: a message action on a message, or a composer action, with its
    /// arguments as a JSON array.
    struct ActionRequest {
        /// What the action runs on.
        enum Target {
            /// A message of the type, with this content (`action`).
            case message(objectName: String, content: ArraySlice<UInt8>)
            /// Nothing: a composer action (`compose`).
            case composer
        }

        var target: Target
        var actionID: String
        var arguments: String

        func write(id: UInt64, into writer: inout WireWriter) {
            switch target {
            case .message(let objectName, let content):
                writer.beginFrame(.action, id: id)
                writer.string(objectName)
                writer.run(content)
            case .composer:
                writer.beginFrame(.compose, id: id)
            }
            writer.string(actionID)
            writer.string(arguments)
            writer.endFrame()
        }

        static func read(_ reader: inout WireReader, kind: Kind) throws(Malformed) -> ActionRequest {
            let target: Target = kind == .compose ? .composer : .message(objectName: try reader.string(), content: try reader.run())
            return ActionRequest(target: target, actionID: try reader.string(), arguments: try reader.string())
        }
    }

    /// `actionAnswer`, worker to host: what the action's function gave, or why it was not called.
    struct ActionAnswer {
        var result: Result<ActionFunctionOutput, MissiveError>

        func write(id: UInt64, into writer: inout WireWriter) {
            writer.beginFrame(.actionAnswer, id: id)
            switch result {
            case .success(let output):
                writer.byte(0)
                writer.integer(output.status)
                writer.run(output.bytes)
                writer.optionalString(output.reason)
            case .failure(let error):
                writer.byte(1)
                writer.error(error)
            }
            writer.endFrame()
        }

        static func read(_ reader: inout WireReader, file: String) throws(Malformed) -> ActionAnswer {
            guard try reader.byte() == 0 else { return ActionAnswer(result: .failure(try reader.error(file: file))) }
            let status = try reader.integer(Int32.self)
            let bytes = Array(try reader.run())
            return ActionAnswer(result: .success(ActionFunctionOutput((status, bytes, try reader.optionalString()))))
        }
    }

    /// `ready`, worker to host: the plugin loaded, with its actions (kind, objectName, id) and the loader's refusals
    /// of actions; or the loader's refusal of the plugin.
    struct ReadyFrame {
        struct Loaded {
            var actions: [(kind: ActionKind, objectName: String, id: String)]
            var rejections: [MissiveError]
        }

        var result: Result<Loaded, MissiveError>

        func write(into writer: inout WireWriter) {
            writer.beginFrame(.ready, id: 0)
            switch result {
            case .success(let loaded):
                writer.byte(1)
                writer.integer(UInt32(loaded.actions.count))
                for action in loaded.actions {
                    writer.byte(action.kind == .composer ? 1 : 0)
                    writer.string(action.objectName)
                    writer.string(action.id)
                }
                writer.integer(UInt32(loaded.rejections.count))
                for rejection in loaded.rejections { writer.error(rejection) }
            case .failure(let error):
                writer.byte(0)
                writer.error(error)
            }
            writer.endFrame()
        }

        static func read(_ reader: inout WireReader, file: String) throws(Malformed) -> ReadyFrame {
            guard try reader.byte() == 1 else { return ReadyFrame(result: .failure(try reader.error(file: file))) }
            var actions: [(kind: ActionKind, objectName: String, id: String)] = []
            for _ in 0..<(try reader.integer(UInt32.self)) {
                let kind: ActionKind = try reader.byte() == 1 ? .composer : .message
                actions.append((kind, try reader.string(), try reader.string()))
            }
            var rejections: [MissiveError] = []
            for _ in 0..<(try reader.integer(UInt32.self)) { rejections.append(try reader.error(file: file)) }
            return ReadyFrame(result: .success(Loaded(actions: actions, rejections: rejections)))
        }
    }

    /// `attempts`, worker to host, before `ready` and only with `--audit`: the paths outside its view the plugin tried
    /// to open while it loaded, and how many more were not kept.
    struct AttemptsFrame {
        var paths: [String]
        var notKept: Int

        /// The most paths a host keeps of one report.
        static let keptPaths = 64

        func write(into writer: inout WireWriter) {
            writer.beginFrame(.attempts, id: 0)
            writer.integer(UInt32(paths.count))
            for path in paths { writer.string(path) }
            writer.integer(UInt32(max(0, notKept)))
            writer.endFrame()
        }

        /// Reads the report, keeping at most ``keptPaths`` paths, each cleaned to one printable line; the others are
        /// counted as not kept.
        static func read(_ reader: inout WireReader) throws(Malformed) -> AttemptsFrame {
            var paths: [String] = []
            var skipped = 0
            for _ in 0..<(try reader.integer(UInt32.self)) {
                let path = try reader.string()
                if paths.count < keptPaths { paths.append(TextHygiene.line(path)) } else { skipped += 1 }
            }
            return AttemptsFrame(paths: paths, notKept: Int(try reader.integer(UInt32.self)) + skipped)
        }
    }
}

extension IsolatedParts {
    /// What a host reads of `content`, decoded in the worker: the texts, and the view and the type's encoding when
    /// `flags` ask for them (each its bytes, none, or the failure).
    init(_ content: PluginContent, flags: WorkerWire.DecodeFlags) {
        self.init(
            digest: content.digest, pushContent: content.pushContent, searchableWords: content.searchableWords, media: content.media,
            view: flags.contains(.view) ? Result { () throws(MissiveError) in try content.checkedView() } : nil,
            encoding: flags.contains(.encoding) ? Result { () throws(MissiveError) in try content.typeEncodedContent() } : nil)
    }
}
