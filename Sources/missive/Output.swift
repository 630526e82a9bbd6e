import Foundation
import Missive

/// Writes text to standard output or standard error.
enum Console {
    static func out(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func out(bytes: [UInt8]) {
        FileHandle.standardOutput.write(Data(bytes + [0x0A]))
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data(("missive: " + text + "\n").utf8))
    }
}

extension JSONWriter {
    /// `{"name": "counted", "value": 3}`.
    mutating func persistence(_ flag: Persistence) {
        beginObject()
        key("name")
        string(flag.name)
        key("value")
        integer(flag.rawValue)
        endObject()
    }

    /// `{"file": ..., "objectName": ..., "code": ..., "reason": ...}`.
    mutating func rejection(_ error: MissiveError) {
        beginObject()
        key("file")
        string(error.file)
        key("objectName")
        string(error.objectName)
        key("code")
        string(error.code.description)
        key("reason")
        string(error.message)
        endObject()
    }

    /// `{"name", "version", "vendor", "abi", "file"}` of a plugin.
    mutating func plugin(_ info: PluginInfo) {
        beginObject()
        key("name")
        string(info.name)
        key("version")
        string(info.version)
        key("vendor")
        string(info.vendor)
        key("abi")
        string(info.abiVersion)
        key("file")
        string(info.path)
        endObject()
    }

    /// A media reference, or `null`.
    mutating func media(_ media: MediaReference?) {
        guard let media else { return null() }
        beginObject()
        key("remoteURL")
        string(media.remoteURL)
        key("localPath")
        string(media.localPath)
        key("mimeType")
        string(media.mimeType)
        key("sizeBytes")
        if let size = media.sizeBytes { integer(size) } else { null() }
        endObject()
    }
}
