import Foundation

/// The envelopes every decoder reads: the same messages as Missive JSON and as protobuf JSON (whose
/// content carries the `@type` that `google.protobuf.Any` needs).
///
/// The mix: the five sample plugin types (poll also sent as `MS:Custom`), four built-in types, 5% unknown
/// types and 1% malformed (half a malformed envelope line, half malformed content of a known type).
struct Corpus {
    /// What a line is, to check that every decoder agrees.
    enum Kind: Sendable {
        case known, unknown, malformedContent, malformedEnvelope
    }

    struct Line: Sendable {
        let missive: [UInt8]
        let peer: [UInt8]
        let kind: Kind
    }

    let lines: [Line]

    /// `distinct` different envelopes, generated from a fixed seed.
    init(distinct: Int = 10_000) {
        var random = SplitMix(seed: 2026)
        let words = ["lunch", "sushi", "pizza", "meeting", "deploy", "review", "coffee", "friday", "launch", "design",
                     "café", "déjà vu", "naïve", "日本", "🎉 party", "budget", "release", "ticket", "invoice", "travel"]
        func phrase() -> String {
            (0..<Int.random(in: 2...6, using: &random)).map { _ in words.randomElement(using: &random)! }.joined(separator: " ")
        }
        var lines: [Line] = []
        lines.reserveCapacity(distinct)
        for index in 0..<distinct {
            let roll = Int.random(in: 0..<100, using: &random)
            let header = #""id":"m\#(index)","conversationID":"c\#(index % 50)","senderID":"u\#(index % 17)","sentAt":\#(1_767_225_600_000 + index)"#
            func line(_ objectName: String, _ content: String, _ peerType: String?, kind: Kind = .known, extra: String = "") -> Line {
                let missive = "{\(header),\"objectName\":\"\(objectName)\",\"content\":\(content)\(extra)}"
                let peerContent = peerType.map { "{\"@type\":\"type.googleapis.com/missive.bench.\($0)\"," + content.dropFirst() } ?? content
                let peer = "{\(header),\"objectName\":\"\(objectName)\",\"content\":\(peerContent)\(extra)}"
                return Line(missive: Array(missive.utf8), peer: Array(peer.utf8), kind: kind)
            }
            let text = phrase().jsonQuoted
            switch roll {
            case 0:
                let broken = "{\(header),\"objectName\":\"demo:poll\",\"content\":{\"question\":\(text),"
                lines.append(Line(missive: Array(broken.utf8), peer: Array(broken.utf8), kind: .malformedEnvelope))
            case 1...5:
                lines.append(line("acme:order", #"{"orderID":"A-\#(index)","total":{"amount":"\#(index % 97).50","currency":"EUR"}}"#, "Unregistered",
                                  kind: .unknown, extra: #","persistence":3,"fallbackText":\#(text)"#))
            case 6:
                lines.append(line("demo:poll", #"{"question":\#(text),"options":"not an array"}"#, "Poll", kind: .malformedContent))
            default:
                switch roll % 10 {
                case 0: lines.append(line("demo:link", #"{"text":\#(text),"link":"https://example.com/\#(index)"}"#, "Link"))
                case 1: lines.append(line("demo:poll", #"{"question":\#(text),"options":["yes","no","maybe"]}"#, "Poll"))
                case 2: lines.append(line("MS:Custom", #"{"businessID":"poll","question":\#(text),"options":["a","b"]}"#, "Poll"))
                case 3: lines.append(line("demo:typing", #"{"userID":"u\#(index % 17)","isTyping":true}"#, "Typing"))
                case 4: lines.append(line("demo:sticker", #"{"pack":"cats","name":"wave","url":"https://s.example.com/\#(index).webp","mimeType":"image/webp","sizeBytes":\#(1000 + index)}"#, "Sticker"))
                case 5: lines.append(line("demo:rating", #"{"score":\#(1 + index % 5),"comment":\#(text)}"#, "Rating"))
                case 6: lines.append(line("MS:Text", #"{"content":\#(text)}"#, "Text"))
                case 7: lines.append(line("MS:Image", #"{"remoteURL":"https://example.com/\#(index).jpg","mimeType":"image/jpeg","sizeBytes":\#(index),"width":640,"height":480}"#, "Image"))
                case 8: lines.append(line("MS:Location", #"{"latitude":35.6595,"longitude":139.7005,"poi":\#(text)}"#, "Location"))
                default: lines.append(line("MS:Text", #"{"content":\#(text),"extra":"x"}"#, "Text"))
                }
            }
        }
        self.lines = lines
    }
}

extension String {
    /// The string as a JSON string literal.
    var jsonQuoted: String {
        String(decoding: try! JSONSerialization.data(withJSONObject: self, options: [.fragmentsAllowed, .withoutEscapingSlashes]), as: UTF8.self)
    }
}

/// A small seeded generator, so the corpus is the same on every run.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
