import CMissivePlugin
import Foundation
import Missive

/// Level 2: content that carries more than the type knows.
enum ContentChecks {
    /// The member the check adds to every example: a name no type uses, with a nested value whose exact
    /// spelling (spaces, escapes, number form) must come back unchanged.
    static let extraMember = (key: "missiveCheckExtra", value: #"{"kept": [1.50, "\u00e9", null]}"#)

    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            id: "content.unknown-members", level: 2,
            summary: "Each example with an unknown member added, and with its container's key added (MS:Custom's businessID), "
                + "decodes to the same value, and an edit keeps the added member byte for byte.",
            requires: ["roundtrip.examples"]
        ) { context in
            context.withTypes { (types) throws(CheckFailure) in
                var problems: [String] = []
                for type in types {
                    for (example, content) in try type.decodedExamples() {
                        for (key, value) in addedMembers(for: type, in: context) {
                            if let problem = unknownMemberProblem(type, example: example, plain: content, key: key, value: value) {
                                problems.append("\(type.objectName) \(preview(example, limit: 40)) + '\(key)': \(problem)")
                            }
                        }
                    }
                }
                return outcome(expected: "unknown members ignored by decode and kept through an edit", problems: problems)
            }
        },
    ]

    /// The members added to a type's examples: the extra member, and the member its container dispatches on
    /// (`businessID` for MS:Custom types and for types without a container, as MS:Custom content of another
    /// type would carry it).
    static func addedMembers(for type: PluginType, in context: CheckContext) -> [(key: String, value: String)] {
        var members = [extraMember]
        if let container = type.container, let value = type.businessID {
            let declared = context.containers.first { $0.objectName == container }
            let key = declared?.key ?? "businessID"
            members.append((key, declared?.keyKind == .integer ? value : quoted(value)))
        } else {
            members.append(("businessID", quoted(type.businessID ?? "someOtherType")))
        }
        return members
    }

    /// Why content with the member `key: value` added is not handled losslessly, or `nil`.
    static func unknownMemberProblem(_ type: PluginType, example: [UInt8], plain: PluginContent, key: String, value: String) -> String? {
        guard let members = ContentMembers(example), members.first(key) == nil else { return nil }
        // Added at the front, where a container's key usually is, and with the example's own spelling kept.
        let added = Array("{\(quoted(key)):\(value)".utf8) + (members.members.isEmpty ? [] : [UInt8(ascii: ",")])
            + example.drop { $0 != UInt8(ascii: "{") }.dropFirst()
        let content: PluginContent
        switch type.decode(bytes: added) {
        case .failure(let error):
            return "refused (\(error.message)); a decoder must ignore members it does not know"
        case .success(let decoded): content = decoded
        }
        let plainEncoding: [UInt8], encoding: [UInt8]
        do {
            plainEncoding = try plain.typeEncodedContent()
            encoding = try content.typeEncodedContent()
        } catch {
            return error.message
        }
        // The added member may be kept by the type itself, but must not change what it understood.
        if removing(key, from: encoding) != plainEncoding {
            return "decodes to \(preview(encoding)) instead of \(preview(plainEncoding))"
        }
        // An edit that changes nothing must give back the added member exactly as written.
        let edited: [UInt8]
        do {
            edited = try ContentMembers.carryingOver(from: added, typeEncoding: encoding, into: encoding, objectName: type.objectName)
        } catch {
            return error.message
        }
        guard let result = ContentMembers(edited), let kept = result.members.first(where: { $0.key == key }) else {
            return "an edit lost it: \(preview(edited))"
        }
        if Array(edited[kept.valueRange]) != Array(value.utf8) {
            return "an edit changed it to \(preview(Array(edited[kept.valueRange])))"
        }
        if case .failure(let error) = type.decode(bytes: edited) { return "the edited content \(preview(edited)) does not decode: \(error.message)" }
        return nil
    }

    /// `bytes` without its top-level member `key`, if it is an object that has one.
    static func removing(_ key: String, from bytes: [UInt8]) -> [UInt8] {
        guard let members = ContentMembers(bytes), let member = members.first(key) else { return bytes }
        var start = member.keyRange.lowerBound, end = member.valueRange.upperBound
        // Take one comma with it: the one after, or else the one before.
        let space: Set<UInt8> = [0x20, 0x0A, 0x0D, 0x09]
        if let comma = bytes[end...].firstIndex(where: { !space.contains($0) }), bytes[comma] == UInt8(ascii: ",") {
            end = comma + 1
        } else if let comma = bytes[..<start].lastIndex(where: { !space.contains($0) }), bytes[comma] == UInt8(ascii: ",") {
            start = comma
        }
        return Array(bytes[..<start] + bytes[end...])
    }

    private static func quoted(_ text: String) -> String {
        String(decoding: MissiveJSONWriter.quoted(text), as: UTF8.self)
    }
}
